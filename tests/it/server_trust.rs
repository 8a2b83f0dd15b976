//! What a pull request is judged on, on a real server (tests/it/common/servers.rs): the server's
//! data are a trusted input and the role is contained by its privileges.
//!
//! - docs/ACTION.md's server workflow, read from the document and run command for command:
//!   the base commit loads its data and records the baseline with a digest per table; a pull
//!   request that empties three tables of the SQLite file it ships and turns two predictions
//!   into `... WHERE 1 = 0` does not pass (it is judged on the base commit's data), and when the
//!   pull request's own data reach the server anyway the run exits 2 naming the tables;
//! - every kind of privilege beyond reading is refused at start-up on both servers, and accepted
//!   with `allow_privileged_role: true` from the trusted config;
//! - `sqlgate load` refuses a symlink out of the workspace;
//! - no password or URL in any output.

use crate::common;
use common::repo;
use common::text;

use common::git;
use common::servers::{self, Kind, Server};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The tables of the test benchmark's one database, with their rows.
const SHOP: &[(&str, &str, &[&str])] = &[
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
const EMPTIED: [&str; 3] = ["items", "customers", "orders"];

/// Gold questions with the base commit's (correct) predictions.
const GOLD: [&str; 6] = [
    "SELECT count(*) FROM items",
    "SELECT name FROM customers WHERE id = 1",
    "SELECT count(*) FROM orders",
    "SELECT city FROM stores WHERE id = 2",
    "SELECT name FROM items WHERE price > 5",
    "SELECT count(*) FROM customers",
];

/// The two predictions the pull request changes, and what it changes them to.
const CHANGED: [(usize, &str); 2] = [
    (1, "SELECT name FROM customers WHERE 1 = 0"),
    (4, "SELECT name FROM items WHERE 1 = 0"),
];

const TABLES_JSON: &str = r#"[{"db_id": "shop",
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
fn url_variables(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Postgres => ("BIRD_PG_URL", "BIRD_PG_ADMIN_URL"),
        Kind::Mariadb => ("BIRD_MYSQL_URL", "BIRD_MYSQL_ADMIN_URL"),
    }
}

fn engine_kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Postgres => "postgresql",
        Kind::Mariadb => "mysql",
    }
}

/// A fresh database `name` on `server` (dropped first).
fn fresh_database(server: &Server, name: &str) {
    server.recreate_database(name, "");
}

/// Writes the SQLite file of `shop` at `path`, with `emptied` tables left without rows.
fn write_shop(path: &Path, emptied: &[&str]) {
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
fn repository(kind: Kind) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (reader, admin) = url_variables(kind);
    write_shop(&root.join("bird/dev_databases/shop/shop.sqlite"), &[]);
    let gold: String = GOLD.iter().map(|sql| format!("{sql}\tshop\n")).collect();
    std::fs::write(root.join("gold.sql"), gold).unwrap();
    std::fs::write(root.join("tables.json"), TABLES_JSON).unwrap();
    std::fs::create_dir(root.join("preds")).unwrap();
    std::fs::write(root.join("preds/model.txt"), GOLD.join("\n") + "\n").unwrap();
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
    repo::init_main(root, "benchmark");
    dir
}

/// One step of the documented workflow.
#[derive(Debug)]
enum Step {
    /// The `sqlgate` and `git worktree` lines of a `run:` script.
    Commands(Vec<String>),
    /// The Action running the gate, with its `with:` inputs.
    Gate(Vec<(String, String)>),
}

/// Which event a run of the workflow is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Push,
    PullRequest,
}

/// docs/ACTION.md's server workflow: the YAML block after `<!-- sqlgate:server-workflow -->`,
/// its one job's steps with the event each runs on (`None`: every event). Steps that only set
/// up the runner (checkout, the role's SQL, which the test servers' harness grants) carry no
/// sqlgate command and are left out.
fn documented_workflow() -> Vec<(Option<Event>, Step)> {
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
struct Run<'a> {
    server: &'a Server,
    database: &'a str,
    event: Event,
    base: String,
}

impl Run<'_> {
    /// Every variable the workflow's `env:` sets, with this server's URLs and the base commit,
    /// plus the GitHub variables the runner sets; sqlgate on PATH; the checkout as workspace.
    fn command(&self, root: &Path, mut command: Command) -> Command {
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
                    .env("GITHUB_SHA", repo::head(root));
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
    fn workflow(&self, root: &Path) -> Output {
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

/// No password and no server URL in what sqlgate printed.
fn assert_no_secret(server: &Server, output: &Output) {
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

/// The issue's scenario through the documented workflow on `server`.
fn check_documented_workflow(server: &'static Server, database: &str) {
    fresh_database(server, database);
    let dir = repository(server.kind);
    let root = dir.path();
    let main = repo::head(root);
    let push = Run {
        server,
        database,
        event: Event::Push,
        base: main.clone(),
    };
    let recorded = push.workflow(root);
    common::assert_exit(&recorded, 0);
    let baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("baseline.json")).unwrap())
            .unwrap();
    let digests = baseline["data_digests"]
        .as_object()
        .expect("data digests recorded");
    for (table, _, _) in SHOP {
        assert!(
            digests.keys().any(|k| k.ends_with(&format!(".{table}"))),
            "{table} has no digest: {digests:?}"
        );
    }
    git(root, &["add", "baseline.json"]);
    git(root, &["commit", "-qm", "baseline"]);
    let base = repo::head(root);

    git(root, &["checkout", "-qb", "hostile"]);
    write_shop(&root.join("bird/dev_databases/shop/shop.sqlite"), &EMPTIED);
    let mut predictions: Vec<String> = GOLD.iter().map(|s| s.to_string()).collect();
    for (index, changed) in CHANGED {
        predictions[index] = changed.to_string();
    }
    std::fs::write(root.join("preds/model.txt"), predictions.join("\n") + "\n").unwrap();
    git(
        root,
        &[
            "commit",
            "-qam",
            "empty three tables, two predictions WHERE 1 = 0",
        ],
    );

    let pull_request = Run {
        server,
        database,
        event: Event::PullRequest,
        base,
    };
    let judged = pull_request.workflow(root);
    common::assert_exit(&judged, 1);

    // Had the pull request's own file reached the server (the old documented step, loading
    // from the checkout), the gate would refuse to judge, naming the emptied tables.
    let mut own_load = pull_request.command(root, Command::new("sh"));
    own_load.args([
        "-c",
        "sqlgate load --config sqlgate-load.yml --from bird/dev_databases",
    ]);
    let loaded = own_load.output().unwrap();
    common::assert_exit(&loaded, 0);
    let steps = documented_workflow();
    let gate = steps
        .iter()
        .find_map(|(_, step)| match step {
            Step::Gate(inputs) => Some(inputs),
            Step::Commands(_) => None,
        })
        .unwrap();
    let mut action = pull_request.command(root, Command::new(env!("CARGO_BIN_EXE_sqlgate")));
    action.arg("action");
    for (key, value) in gate {
        action.env(format!("INPUT_{}", key.to_uppercase()), value);
    }
    let refused = action.output().unwrap();
    let all = common::exited(&refused, 2);
    for table in EMPTIED {
        assert!(
            all.contains(&format!(".{table}` has other content")),
            "{table}: {all}"
        );
    }
    assert!(!all.contains(".stores`"), "{all}");
    assert_no_secret(server, &refused);
}

#[test]
fn postgres_documented_workflow_judges_a_pull_request_on_the_base_data() {
    check_documented_workflow(servers::postgres(), "trust_flow");
}

#[test]
fn mariadb_documented_workflow_judges_a_pull_request_on_the_base_data() {
    check_documented_workflow(servers::mariadb(), "trust_flow");
}

/// A pull-request run on a server whose base baseline records no digests is refused, saying
/// why; outside a pull request the run goes on with a note.
fn check_baseline_without_digests(server: &'static Server, database: &str) {
    fresh_database(server, database);
    let dir = repository(server.kind);
    let root = dir.path();
    let push = Run {
        server,
        database,
        event: Event::Push,
        base: repo::head(root),
    };
    assert!(push.workflow(root).status.success());
    let path = root.join("baseline.json");
    let mut baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    baseline.as_object_mut().unwrap().remove("data_digests");
    std::fs::write(&path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();
    git(root, &["add", "baseline.json"]);
    git(root, &["commit", "-qm", "a baseline of an older sqlgate"]);
    let run = Run {
        server,
        database,
        event: Event::PullRequest,
        base: repo::head(root),
    };
    let refused = run.workflow(root);
    let all = common::exited(&refused, 2);
    common::assert_contains(&all, &["records no data digests"]);
    let mut eval = run.command(root, Command::new(env!("CARGO_BIN_EXE_sqlgate")));
    eval.args(["eval", "--config", "sqlgate.yml", "--comment", "never"])
        .env_remove("GITHUB_EVENT_NAME");
    let noted = eval.output().unwrap();
    let all = common::exited(&noted, 0);
    common::assert_contains(&all, &["records no digests of the server's data"]);
}

#[test]
fn postgres_pull_request_needs_a_baseline_with_digests() {
    check_baseline_without_digests(servers::postgres(), "trust_nodigest");
}

#[test]
fn mariadb_pull_request_needs_a_baseline_with_digests() {
    check_baseline_without_digests(servers::mariadb(), "trust_nodigest");
}

/// `sqlgate load` refuses a `--from` folder or a database file that a symlink leads out of the
/// workspace, before connecting, naming the path.
#[test]
fn load_refuses_a_symlink_out_of_the_workspace() {
    let server = servers::postgres();
    let outside = tempfile::tempdir().unwrap();
    write_shop(&outside.path().join("shop/shop.sqlite"), &[]);
    let dir = repository(Kind::Postgres);
    let root = dir.path();
    let folder = root.join("bird/dev_databases");
    let linked_file = root.join("linked_file");
    std::fs::create_dir_all(linked_file.join("shop")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("shop/shop.sqlite"),
        linked_file.join("shop/shop.sqlite"),
    )
    .unwrap();
    let linked_folder = root.join("linked_folder");
    std::fs::create_dir(&linked_folder).unwrap();
    std::os::unix::fs::symlink(outside.path().join("shop"), linked_folder.join("shop")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linked_root")).unwrap();
    assert!(folder.exists());
    let run = Run {
        server,
        database: "trust_symlink",
        event: Event::Push,
        base: String::new(),
    };
    for from in ["linked_file", "linked_folder", "linked_root"] {
        let mut load = run.command(root, Command::new(env!("CARGO_BIN_EXE_sqlgate")));
        load.args(["load", "--config", "sqlgate-load.yml", "--from", from]);
        let output = load.output().unwrap();
        let all = text(&output);
        assert_eq!(output.status.code(), Some(2), "{from}: {all}");
        assert!(all.contains("outside the workspace"), "{from}: {all}");
        assert!(all.contains(from), "{from}: {all}");
        assert_no_secret(server, &output);
    }
}

/// The database every role test reads: `shop` loaded by the admin, readable by every role.
fn roles_database(server: &'static Server) -> &'static str {
    static POSTGRES: OnceLock<()> = OnceLock::new();
    static MARIADB: OnceLock<()> = OnceLock::new();
    let once = match server.kind {
        Kind::Postgres => &POSTGRES,
        Kind::Mariadb => &MARIADB,
    };
    once.get_or_init(|| {
        fresh_database(server, "trust_roles");
        let ddl: String = SHOP
            .iter()
            .map(|(table, columns, rows)| {
                let columns = columns.replace("REAL", "double precision");
                let values: Vec<String> = rows.iter().map(|r| format!("({r})")).collect();
                format!(
                    "CREATE TABLE {table} ({columns}); INSERT INTO {table} VALUES {};\n",
                    values.join(", ")
                )
            })
            .collect();
        server.admin_sql("trust_roles", &ddl);
        if server.kind == Kind::Postgres {
            server.admin_sql(
                "trust_roles",
                "CREATE SCHEMA elsewhere; CREATE TABLE elsewhere.notes (x integer);",
            );
        }
    });
    "trust_roles"
}

/// A new login role `name` (each test binary has its own servers) that reads the role test
/// database and holds what `grants` gives it; its URL and password.
fn role_url(server: &'static Server, name: &str, grants: &str) -> (String, String) {
    let database = roles_database(server);
    let password = format!("Pw{}9x", name.chars().rev().collect::<String>());
    // Concurrent grants of one role (`pg_signal_backend` to two roles) fail on PostgreSQL
    // with "tuple concurrently updated": the tests create their roles one at a time.
    static CREATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = CREATING.lock().unwrap_or_else(|e| e.into_inner());
    match server.kind {
        Kind::Postgres => {
            server.admin_sql(
                database,
                &format!(
                    "CREATE ROLE {name} LOGIN PASSWORD '{password}';\n\
                     GRANT SELECT ON ALL TABLES IN SCHEMA public TO {name};\n{grants}"
                ),
            );
        }
        Kind::Mariadb => {
            server.admin_sql(
                "mysql",
                &format!(
                    "CREATE USER '{name}'@'%' IDENTIFIED BY '{password}';\n\
                     GRANT SELECT ON {database}.* TO '{name}'@'%';\n{grants}"
                ),
            );
        }
    }
    (server.url(name, &password, database), password)
}

/// `sqlgate eval` of the role test benchmark as `url`, with `allow_privileged_role` as given
/// (the config is the trusted one: no pull request here).
fn eval_as(server: &Server, url: &str, allow: bool) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let gold: String = GOLD.iter().map(|sql| format!("{sql}\tshop\n")).collect();
    std::fs::write(root.join("gold.sql"), gold).unwrap();
    std::fs::write(root.join("tables.json"), TABLES_JSON).unwrap();
    std::fs::write(root.join("model.txt"), GOLD.join("\n") + "\n").unwrap();
    std::fs::write(
        root.join("sqlgate.yml"),
        format!(
            "dataset: {{ gold: gold.sql, tables: tables.json, difficulty: none, \
             engine: {{ kind: {}, url_env: ROLE_URL, allow_privileged_role: {allow} }} }}\n\
             predictions: [{{ name: model, path: model.txt }}]\nmetrics: [ex]\n\
             compare: {{ profile: bird }}\nexecution: {{ timeout_ms: 5000, threads: 1 }}\n",
            engine_kind(server.kind)
        ),
    )
    .unwrap();
    common::sqlgate_command(&repo::EVAL)
        .current_dir(root)
        .env("ROLE_URL", url)
        .output()
        .unwrap()
}

/// A role holding `grants` is refused at start-up (exit 2, the message containing `expected`
/// and no secret) and runs with `allow_privileged_role: true`, warning with the same reason.
fn check_refused(server: &'static Server, name: &str, grants: &str, expected: &str) {
    let (url, password) = role_url(server, name, grants);
    let refused = eval_as(server, &url, false);
    let all = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{name}: {all}");
    assert!(all.contains("is privileged"), "{name}: {all}");
    assert!(
        all.contains(expected),
        "{name}: expected `{expected}` in {all}"
    );
    assert!(!all.contains(&password), "{name}: {all}");
    assert_no_secret(server, &refused);
    let allowed = eval_as(server, &url, true);
    let all = text(&allowed);
    assert_eq!(allowed.status.code(), Some(0), "{name}: {all}");
    assert!(all.contains(expected), "{name}: {all}");
    assert!(!all.contains(&password), "{name}: {all}");
}

#[test]
fn the_documented_read_only_roles_are_accepted() {
    for server in [servers::postgres(), servers::mariadb()] {
        let (url, _) = role_url(server, "trust_plain", "");
        let output = eval_as(server, &url, false);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{:?}: {}",
            server.kind,
            text(&output)
        );
        assert!(!text(&output).contains("privileged"), "{}", text(&output));
    }
}

/// One test per kind of privilege: `(test, server, role, grants, what the refusal names)`.
macro_rules! refused {
    ($($test:ident: $server:ident, $role:literal, $grants:literal, $expected:literal;)*) => {$(
        #[test]
        fn $test() {
            check_refused(servers::$server(), $role, $grants, $expected);
        }
    )*};
}

refused! {
    postgres_superuser_is_refused: postgres, "trust_super", "ALTER ROLE trust_super SUPERUSER;", "is a superuser";
    postgres_signalling_other_backends_is_refused: postgres, "trust_signal", "GRANT pg_signal_backend TO trust_signal;", "pg_signal_backend";
    postgres_membership_is_checked_transitively: postgres, "trust_nested", "DROP ROLE IF EXISTS trust_group; CREATE ROLE trust_group; GRANT pg_signal_backend TO trust_group; GRANT trust_group TO trust_nested;", "pg_signal_backend";
    postgres_another_login_role_is_refused: postgres, "trust_other", "GRANT sqlgate_reader TO trust_other;", "login role `sqlgate_reader`";
    postgres_reading_all_data_is_refused: postgres, "trust_readall", "GRANT pg_read_all_data TO trust_readall;", "pg_read_all_data";
    postgres_reading_pg_authid_is_refused: postgres, "trust_authid", "GRANT SELECT ON pg_authid TO trust_authid;", "pg_catalog.pg_authid";
    postgres_writing_outside_the_search_path_is_refused: postgres, "trust_write", "GRANT USAGE ON SCHEMA elsewhere TO trust_write; GRANT INSERT ON elsewhere.notes TO trust_write;", "elsewhere.notes";
    postgres_column_writes_are_refused: postgres, "trust_column", "GRANT UPDATE (name) ON customers TO trust_column;", "public.customers";
    postgres_writing_all_data_is_refused: postgres, "trust_writeall", "GRANT pg_write_all_data TO trust_writeall;", "pg_write_all_data";
    postgres_create_on_the_database_is_refused: postgres, "trust_createdb_priv", "GRANT CREATE ON DATABASE trust_roles TO trust_createdb_priv;", "can CREATE in these databases: trust_roles";
    postgres_create_on_a_schema_is_refused: postgres, "trust_schema", "GRANT CREATE ON SCHEMA public TO trust_schema;", "can CREATE in these schemas: public";
    postgres_createrole_is_refused: postgres, "trust_createrole", "ALTER ROLE trust_createrole CREATEROLE;", "CREATEROLE";
    postgres_createdb_is_refused: postgres, "trust_createdb", "ALTER ROLE trust_createdb CREATEDB;", "CREATEDB";
    postgres_reading_server_files_is_refused: postgres, "trust_files", "GRANT pg_read_server_files TO trust_files;", "pg_read_server_files";
    postgres_running_server_programs_is_refused: postgres, "trust_program", "GRANT pg_execute_server_program TO trust_program;", "pg_execute_server_program";
    postgres_execute_on_pg_read_file_is_refused: postgres, "trust_readfile", "GRANT EXECUTE ON FUNCTION pg_read_file(text) TO trust_readfile;", "pg_read_file";
    postgres_monitoring_is_refused: postgres, "trust_monitor", "GRANT pg_monitor TO trust_monitor;", "pg_monitor";
    mariadb_global_select_is_refused: mariadb, "trust_global", "GRANT SELECT ON *.* TO 'trust_global'@'%';", "SELECT ON *.*";
    mariadb_reading_mysql_user_is_refused: mariadb, "trust_users", "GRANT SELECT ON mysql.user TO 'trust_users'@'%';", "mysql.user";
    mariadb_writing_a_database_is_refused: mariadb, "trust_insert", "GRANT INSERT ON trust_roles.* TO 'trust_insert'@'%';", "INSERT ON `trust_roles`.*";
    mariadb_writing_another_database_is_refused: mariadb, "trust_elsewhere", "GRANT DELETE ON other_db.* TO 'trust_elsewhere'@'%';", "DELETE ON `other_db`.*";
    mariadb_ddl_is_refused: mariadb, "trust_ddl", "GRANT CREATE, DROP ON trust_roles.* TO 'trust_ddl'@'%';", "CREATE, DROP";
    mariadb_file_is_refused: mariadb, "trust_file", "GRANT FILE ON *.* TO 'trust_file'@'%';", "FILE ON *.*";
    mariadb_process_is_refused: mariadb, "trust_process", "GRANT PROCESS ON *.* TO 'trust_process'@'%';", "PROCESS ON *.*";
    mariadb_super_is_refused: mariadb, "trust_superm", "GRANT SUPER ON *.* TO 'trust_superm'@'%';", "SUPER";
    mariadb_connection_admin_is_refused: mariadb, "trust_conn", "GRANT CONNECTION ADMIN ON *.* TO 'trust_conn'@'%';", "CONNECTION ADMIN";
    mariadb_shutdown_and_reload_are_refused: mariadb, "trust_shutdown", "GRANT SHUTDOWN, RELOAD ON *.* TO 'trust_shutdown'@'%';", "RELOAD, SHUTDOWN";
    mariadb_create_user_is_refused: mariadb, "trust_cuser", "GRANT CREATE USER ON *.* TO 'trust_cuser'@'%';", "CREATE USER";
    mariadb_grant_option_is_refused: mariadb, "trust_grantopt", "GRANT SELECT ON trust_roles.* TO 'trust_grantopt'@'%' WITH GRANT OPTION;", "GRANT OPTION";
    mariadb_role_grants_are_checked_transitively: mariadb, "trust_rolem", "DROP ROLE IF EXISTS trust_inner; DROP ROLE IF EXISTS trust_outer; CREATE ROLE trust_inner; GRANT UPDATE ON trust_roles.* TO trust_inner; CREATE ROLE trust_outer; GRANT trust_inner TO trust_outer; GRANT trust_outer TO 'trust_rolem'@'%';", "UPDATE ON `trust_roles`.*";
}
