//! The documented server workflow (docs/ACTION.md) run command for command on a test server,
//! on a throwaway repository holding a small benchmark (`shop`): what tests/server_trust.rs and
//! tests/server_levers.rs run a base commit's baseline update and a pull request's gate with.

use super::git;
use super::servers::{Kind, Server};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The tables of the test benchmark's one database, with their rows.
pub const SHOP: &[(&str, &str, &[&str])] = &[
    (
        "items",
        "id INTEGER, name TEXT, price REAL",
        &["1, 'pen', 2.5", "2, 'lamp', 30.0", "3, 'desk', 120.0"],
    ),
    (
        "customers",
        "id INTEGER, name TEXT",
        &["1, 'ada'", "2, 'bob'"],
    ),
    (
        "orders",
        "id INTEGER, customer_id INTEGER, item_id INTEGER",
        &["1, 1, 2", "2, 2, 3", "3, 1, 1"],
    ),
    (
        "stores",
        "id INTEGER, city TEXT",
        &["1, 'Oslo'", "2, 'Lima'"],
    ),
];

/// The tables a hostile pull request empties.
pub const EMPTIED: [&str; 3] = ["items", "customers", "orders"];

/// Gold questions with the base commit's (correct) predictions.
pub const GOLD: [&str; 6] = [
    "SELECT count(*) FROM items",
    "SELECT name FROM customers WHERE id = 1",
    "SELECT count(*) FROM orders",
    "SELECT city FROM stores WHERE id = 2",
    "SELECT name FROM items WHERE price > 5",
    "SELECT count(*) FROM customers",
];

/// The two predictions the pull request changes, and what it changes them to.
pub const CHANGED: [(usize, &str); 2] = [
    (1, "SELECT name FROM customers WHERE 1 = 0"),
    (4, "SELECT name FROM items WHERE 1 = 0"),
];

pub const TABLES_JSON: &str = r#"[{"db_id": "shop",
 "table_names_original": ["items", "customers", "orders", "stores"],
 "table_names": ["items", "customers", "orders", "stores"],
 "column_names_original": [[-1, "*"], [0, "id"], [0, "name"], [0, "price"], [1, "id"], [1, "name"],
   [2, "id"], [2, "customer_id"], [2, "item_id"], [3, "id"], [3, "city"]],
 "column_names": [[-1, "*"], [0, "id"], [0, "name"], [0, "price"], [1, "id"], [1, "name"],
   [2, "id"], [2, "customer_id"], [2, "item_id"], [3, "id"], [3, "city"]],
 "column_types": ["text", "number", "text", "number", "number", "text", "number", "number",
   "number", "number", "text"],
 "primary_keys": [], "foreign_keys": []}]"#;

/// The URL variables of a server's configs: the reader's (the gate) and the admin's (`load`).
pub fn url_variables(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Postgres => ("BIRD_PG_URL", "BIRD_PG_ADMIN_URL"),
        Kind::Mariadb => ("BIRD_MYSQL_URL", "BIRD_MYSQL_ADMIN_URL"),
    }
}

pub fn engine_kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Postgres => "postgresql",
        Kind::Mariadb => "mysql",
    }
}

/// A fresh database `name` on `server` (dropped first).
pub fn fresh_database(server: &Server, name: &str) {
    let system = match server.kind {
        Kind::Postgres => "postgres",
        Kind::Mariadb => "mysql",
    };
    server.admin_sql(
        system,
        &format!("DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name};"),
    );
}

/// Writes the SQLite file of `shop` at `path`, with `emptied` tables left without rows.
pub fn write_shop(path: &Path, emptied: &[&str]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(path);
    let db = rusqlite::Connection::open(path).unwrap();
    for (table, columns, rows) in SHOP {
        db.execute_batch(&format!("CREATE TABLE {table} ({columns});"))
            .unwrap();
        if !emptied.contains(table) {
            for row in *rows {
                db.execute_batch(&format!("INSERT INTO {table} VALUES ({row});"))
                    .unwrap();
            }
        }
    }
}

/// A repository with the benchmark, its gate config and its load config on `main`.
pub fn repository(kind: Kind) -> tempfile::TempDir {
    repository_with(kind, &GOLD)
}

/// A repository with the benchmark asking `gold` (each predicted right), its gate config and
/// its load config on `main`.
pub fn repository_with(kind: Kind, gold: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (reader, admin) = url_variables(kind);
    write_shop(&root.join("bird/dev_databases/shop/shop.sqlite"), &[]);
    let questions: String = gold.iter().map(|sql| format!("{sql}\tshop\n")).collect();
    std::fs::write(root.join("gold.sql"), questions).unwrap();
    std::fs::write(root.join("tables.json"), TABLES_JSON).unwrap();
    std::fs::create_dir(root.join("preds")).unwrap();
    std::fs::write(root.join("preds/model.txt"), gold.join("\n") + "\n").unwrap();
    let config = |variable: &str| {
        format!(
            "dataset: {{ gold: gold.sql, tables: tables.json, difficulty: none, \
             engine: {{ kind: {}, url_env: {variable} }} }}\n\
             predictions: [{{ name: model, path: preds/model.txt }}]\n\
             metrics: [ex]\ncompare: {{ profile: bird }}\n\
             execution: {{ timeout_ms: 5000, threads: 2 }}\n\
             baseline: {{ path: baseline.json }}\n\
             gate: {{ max_drop_points: 0 }}\n",
            engine_kind(kind)
        )
    };
    std::fs::write(root.join("sqlgate.yml"), config(reader)).unwrap();
    std::fs::write(root.join("sqlgate-load.yml"), config(admin)).unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "benchmark"]);
    dir
}

/// A repository asking `gold` ([`repository_with`]) on `main`, whose baseline a push run of the
/// workflow recorded (left uncommitted) on the fresh database `database` of `server`; the push
/// run must pass.
pub fn recorded_repository(
    server: &'static Server,
    database: &str,
    gold: &[&str],
) -> tempfile::TempDir {
    recorded_repository_with(server, database, gold, &|_| {})
}

/// [`recorded_repository`] on a benchmark `setup` changes (committed) before the baseline is
/// recorded.
pub fn recorded_repository_with(
    server: &'static Server,
    database: &str,
    gold: &[&str],
    setup: &dyn Fn(&Path),
) -> tempfile::TempDir {
    fresh_database(server, database);
    let dir = repository_with(server.kind, gold);
    let root = dir.path();
    setup(root);
    git(root, &["commit", "-q", "--allow-empty", "-am", "set up"]);
    let push = Run::push(server, database, root);
    let recorded = push.workflow(root);
    assert!(recorded.status.success(), "{}", text(&recorded));
    dir
}

/// The baseline the push run wrote in `root`, as JSON.
pub fn recorded_baseline(root: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(root.join("baseline.json")).unwrap()).unwrap()
}

/// Commits the recorded baseline on `main`, then, on the branch `hostile`, the pull request's
/// `predictions`; returns the base commit (the one with the baseline).
pub fn hostile_predictions(root: &Path, predictions: &[&str]) -> String {
    git(root, &["add", "baseline.json"]);
    git(root, &["commit", "-qm", "baseline"]);
    let base = git(root, &["rev-parse", "HEAD"]);
    git(root, &["checkout", "-qb", "hostile"]);
    std::fs::write(root.join("preds/model.txt"), predictions.join("\n") + "\n").unwrap();
    git(root, &["commit", "-qam", "a wrong prediction"]);
    base
}

/// One step of the documented workflow.
#[derive(Debug)]
pub enum Step {
    /// The `sqlgate` and `git worktree` lines of a `run:` script.
    Commands(Vec<String>),
    /// The Action running the gate, with its `with:` inputs.
    Gate(Vec<(String, String)>),
}

/// Which event a run of the workflow is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Push,
    PullRequest,
}

/// docs/ACTION.md's server workflow: the YAML block after `<!-- sqlgate:server-workflow -->`,
/// its one job's steps with the event each runs on (`None`: every event). Steps that only set
/// up the runner (checkout, the role's SQL, which the test servers' harness grants) carry no
/// sqlgate command and are left out.
pub fn documented_workflow() -> Vec<(Option<Event>, Step)> {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ACTION.md"))
        .unwrap();
    let after = doc
        .split_once("<!-- sqlgate:server-workflow -->")
        .expect("ACTION.md marks its server workflow")
        .1;
    let block = after
        .split_once("```yaml\n")
        .unwrap()
        .1
        .split_once("```")
        .unwrap()
        .0;
    let workflow: serde_norway::Value = serde_norway::from_str(block).unwrap();
    let jobs = workflow["jobs"].as_mapping().unwrap();
    assert_eq!(jobs.len(), 1, "one job serves pushes and pull requests");
    let steps = jobs.values().next().unwrap()["steps"]
        .as_sequence()
        .unwrap();
    let mut found = Vec::new();
    for step in steps {
        let event =
            step["if"]
                .as_str()
                .map(|condition| match condition.contains("'pull_request'") {
                    true => Event::PullRequest,
                    false => Event::Push,
                });
        if let Some(script) = step["run"].as_str() {
            let commands: Vec<String> = script
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("sqlgate ") || l.starts_with("git worktree "))
                .map(str::to_string)
                .collect();
            if !commands.is_empty() {
                found.push((event, Step::Commands(commands)));
            }
        }
        let uses = step["uses"].as_str().unwrap_or_default();
        let inputs = step["with"].as_mapping();
        let install_only = inputs.is_some_and(|w| w.get("install-only").is_some());
        if uses.contains("/sqlgate@") && !install_only {
            let inputs = inputs
                .unwrap()
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().unwrap().to_string(),
                        v.as_str().unwrap().to_string(),
                    )
                })
                .collect();
            found.push((event, Step::Gate(inputs)));
        }
    }
    found
}

/// What a run of the workflow needs to know about the server and the commit.
pub struct Run<'a> {
    /// The server the workflow's URLs reach.
    pub server: &'a Server,
    /// The database of the URLs.
    pub database: &'a str,
    /// The event the run is for.
    pub event: Event,
    /// The base commit (`BASE_SHA`).
    pub base: String,
}

impl<'a> Run<'a> {
    /// The push run of `root`'s HEAD (its own base), as the workflow records a baseline.
    pub fn push(server: &'a Server, database: &'a str, root: &Path) -> Self {
        let base = git(root, &["rev-parse", "HEAD"]);
        Run {
            server,
            database,
            event: Event::Push,
            base,
        }
    }

    /// The pull-request run against the base commit `base`.
    pub fn pull_request(server: &'a Server, database: &'a str, base: String) -> Self {
        Run {
            server,
            database,
            event: Event::PullRequest,
            base,
        }
    }

    /// Every variable the workflow's `env:` sets, with this server's URLs and the base commit,
    /// plus the GitHub variables the runner sets; sqlgate on PATH; the checkout as workspace.
    pub fn command(&self, root: &Path, mut command: Command) -> Command {
        let (reader, admin) = url_variables(self.server.kind);
        let binary = PathBuf::from(env!("CARGO_BIN_EXE_sqlgate"));
        let path = format!(
            "{}:{}",
            binary.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        command
            .current_dir(root)
            .env_remove("SQLGATE_WORKSPACE")
            .env("PATH", path)
            .env("GITHUB_WORKSPACE", root)
            .env("BASE_SHA", &self.base)
            .env(reader, self.server.reader_url(self.database))
            .env(admin, self.server.admin_url(self.database));
        for variable in ["GITHUB_ACTIONS", "GITHUB_TOKEN", "SQLGATE_GITHUB_TOKEN"] {
            command.env_remove(variable);
        }
        match self.event {
            Event::Push => {
                command
                    .env("GITHUB_EVENT_NAME", "push")
                    .env("GITHUB_SHA", git(root, &["rev-parse", "HEAD"]));
            }
            Event::PullRequest => {
                // In the repository's own `.git` (outside its tree): beside the temporary folder
                // it would be one file for every test of this binary, and a test running at the
                // same time would give this one its base commit.
                let payload = root.join(".git/sqlgate-event.json");
                let event = serde_json::json!({"pull_request": {"base": {"sha": self.base}}});
                std::fs::write(&payload, event.to_string()).unwrap();
                command
                    .env("GITHUB_EVENT_NAME", "pull_request")
                    .env("GITHUB_EVENT_PATH", payload)
                    .env_remove("GITHUB_SHA");
            }
        }
        command
    }

    /// Runs the workflow's steps for this event in the checkout `root`: every command must
    /// succeed but the last, whose output (the baseline update or the gate) is returned.
    pub fn workflow(&self, root: &Path) -> Output {
        self.workflow_with(root, || ())
    }

    /// [`Run::workflow`], with `before_gate` run just before the gate's step (what a script of
    /// the workflow that prepares the server could do).
    pub fn workflow_with(&self, root: &Path, before_gate: impl FnOnce()) -> Output {
        let mut before_gate = Some(before_gate);
        let steps: Vec<Step> = documented_workflow()
            .into_iter()
            .filter(|(event, _)| event.is_none_or(|e| e == self.event))
            .map(|(_, step)| step)
            .collect();
        let mut outputs = Vec::new();
        for step in &steps {
            match step {
                Step::Commands(lines) => {
                    for line in lines {
                        let mut shell = Command::new("sh");
                        shell.args(["-c", line]);
                        outputs.push((line.clone(), self.command(root, shell).output().unwrap()));
                    }
                }
                Step::Gate(inputs) => {
                    if let Some(prepare) = before_gate.take() {
                        prepare();
                    }
                    let mut action =
                        self.command(root, Command::new(env!("CARGO_BIN_EXE_sqlgate")));
                    action.arg("action");
                    for (key, value) in inputs {
                        action.env(format!("INPUT_{}", key.to_uppercase()), value);
                    }
                    outputs.push(("sqlgate action".into(), action.output().unwrap()));
                }
            }
        }
        let (_, last) = outputs.pop().expect("the workflow runs sqlgate");
        for (line, output) in &outputs {
            assert!(output.status.success(), "`{line}`: {}", text(output));
            assert_no_secret(self.server, output);
        }
        assert_no_secret(self.server, &last);
        last
    }
}

/// What the server tests print of a command: the one output helper of `common`.
pub use super::text;

/// No password and no server URL in what sqlgate printed.
pub fn assert_no_secret(server: &Server, output: &Output) {
    let all = text(output);
    for secret in [&server.admin_password, &server.reader_password] {
        assert!(
            !all.contains(secret.as_str()),
            "a password was printed: {all}"
        );
    }
    for scheme in ["postgresql://", "mysql://"] {
        assert!(!all.contains(scheme), "a URL was printed: {all}");
    }
}

/// Sets a MariaDB global for the time of a test and restores it, panic or not.
pub struct Global {
    server: &'static Server,
    restore: String,
}

impl Global {
    /// Sets `name` to `value`, remembering the value to restore.
    pub fn set(server: &'static Server, name: &str, value: &str) -> Global {
        let old = server.admin_sql("mysql", &format!("SELECT @@GLOBAL.{name}"));
        server.admin_sql("mysql", &format!("SET GLOBAL {name} = {value}"));
        let old = old.trim();
        let restore = match old.parse::<f64>() {
            Ok(_) => format!("SET GLOBAL {name} = {old}"),
            Err(_) => format!("SET GLOBAL {name} = '{old}'"),
        };
        Global { server, restore }
    }
}

impl Drop for Global {
    fn drop(&mut self) {
        self.server.admin_sql("mysql", &self.restore);
    }
}
