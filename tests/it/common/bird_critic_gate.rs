//! The bird-critic gate on a server, shared by the PostgreSQL and MariaDB tests
//! (`livesql_pg_gate`, `livesql_my_gate` and the red teams built on them): one server's form of
//! the LiveSQLBench-style corpus (tests/data/livesql/postgres, .../mysql) written as a
//! bundled-style dataset, run through `sqlgate`, and a pull request on its gated subset judged
//! against its base.

use super::servers::Server;
use super::{self as common, repo};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The corpus' databases.
const DBS: [&str; 4] = ["shop", "school", "fleet", "clinic"];

/// The dataset's config, with `{engine}` for the engine kind: gated on `bird_critic_sound` (the
/// only profile a bird-critic gate may stand on, `judge::rules::sound_gate`), `bird_critic`
/// listed beside it so its verdicts are still checked.
const CONFIG: &str = "dataset:
  kind: bird-critic
  gold: items.jsonl
  difficulty: field:category
  engine: { kind: {engine}, url_env: TEST_DB_URL, admin_url_env: TEST_DB_ADMIN_URL, layout: per_db_id }
predictions:
  - { name: model, path: predictions/model.jsonl, format: livesql }
metrics: [bird_critic, bird_critic_sound]
reference: bird_critic_sound
execution: { timeout_ms: 30000, threads: 4, item_timeout_ms: 60000 }
baseline: { path: baseline.json }
gate:
  metric: bird_critic_sound
  max_drop_points: 0.0
  per_difficulty: { Management: 0.0, Query: 0.0 }
report: { output: sqlgate-report.md }
";

/// One server's form of the corpus in the gate.
pub struct GateCorpus {
    /// `dataset.engine.kind` in its config.
    pub engine: &'static str,
    /// The database its URLs name (`postgres`, `mysql`).
    pub url_database: &'static str,
    /// Its folder under tests/data/livesql.
    pub folder: &'static str,
    /// The suffix of its items and predictions files (`items_pg.jsonl`).
    pub suffix: &'static str,
}

/// The gated subset: shop's first ten Query items and twelve Management ones.
pub fn subset() -> Vec<String> {
    let query = (1..=10).map(|n| format!("lsq_{n:03}"));
    let management = (29..=40).map(|n| format!("lsq_{n:03}"));
    query.chain(management).collect()
}

/// The few Query items of shop that the server-state attempts gate (`redteam15::
/// bird_critic_server_state`, whose lever reaches the verdict through lsq_001's prediction):
/// a gate as short as one item's, the rest of the subset adding nothing but time.
pub fn query_items() -> Vec<String> {
    (1..=3).map(|n| format!("lsq_{n:03}")).collect()
}

impl GateCorpus {
    /// The corpus' folder.
    pub fn dir(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/livesql")
            .join(self.folder)
    }

    /// The dataset's config on this server, its URLs in `TEST_DB_URL` (the reader) and
    /// `TEST_DB_ADMIN_URL` (the administrator).
    pub fn config(&self) -> String {
        CONFIG.replace("{engine}", self.engine)
    }

    /// Writes a bundled-style dataset into `dir`: the corpus items in `ids` (all when `None`),
    /// the recorded model's predictions for them, and `config` (a first run, no baseline
    /// required, unless `gated`).
    pub fn write_dataset(&self, dir: &Path, ids: Option<&[String]>, gated: bool, config: &str) {
        let keep = |line: &&str| {
            let id: Value = serde_json::from_str(line).unwrap();
            ids.is_none_or(|ids| ids.iter().any(|i| id["instance_id"] == i.as_str()))
        };
        let files = [
            (format!("items_{}.jsonl", self.suffix), "items.jsonl"),
            (
                format!("predictions_{}.jsonl", self.suffix),
                "predictions/model.jsonl",
            ),
        ];
        for (from, to) in files {
            let text = std::fs::read_to_string(self.dir().join(from)).unwrap();
            let kept: Vec<&str> = text.lines().filter(keep).collect();
            std::fs::create_dir_all(dir.join(to).parent().unwrap()).unwrap();
            std::fs::write(dir.join(to), kept.join("\n") + "\n").unwrap();
        }
        let config = match gated {
            true => config.to_string(),
            false => config.replace(
                "path: baseline.json",
                "path: baseline.json, required: false",
            ),
        };
        std::fs::write(dir.join("sqlgate.yml"), config).unwrap();
    }

    /// `sqlgate ARGS` in `dir` with the server's URLs in the config's variables (the reader's
    /// granted on the dataset's databases only), to run.
    pub fn command_on(&self, server: &Server, dir: &Path, args: &[&str]) -> Command {
        let items = std::fs::read_to_string(dir.join("items.jsonl")).unwrap();
        let used: Vec<&str> = DBS
            .into_iter()
            .filter(|db| items.contains(&format!("\"db_id\": \"{db}\"")))
            .collect();
        let mut command: Command = common::sqlgate_command(args);
        command
            .current_dir(dir)
            .env_remove("GITHUB_SHA")
            .env(
                "TEST_DB_URL",
                server.reader_url_for(self.url_database, &used),
            )
            .env("TEST_DB_ADMIN_URL", server.admin_url(self.url_database));
        command
    }

    /// Runs [`GateCorpus::command_on`].
    pub fn sqlgate_on(&self, server: &Server, dir: &Path, args: &[&str]) -> Output {
        self.command_on(server, dir, args).output().unwrap()
    }

    /// `sqlgate eval` of `dir`'s config writing the per-item lines: exit 0 asserted, the lines.
    pub fn eval_items(&self, server: &Server, dir: &Path) -> Vec<Value> {
        let args = [&repo::EVAL[..], &["--jsonl", "items.out.jsonl"]].concat();
        let output = self.sqlgate_on(server, dir, &args);
        common::assert_exit(&output, 0);
        common::read_jsonl(&dir.join("items.out.jsonl"))
    }

    /// The subset on `main` with a baseline made there, and a pull-request branch `pr` from
    /// that commit; the folder and the base commit.
    pub fn gated_subset(&self, server: &Server) -> (tempfile::TempDir, String) {
        self.gated(server, &subset(), &self.config())
    }

    /// [`GateCorpus::gated_subset`] of the items `ids` under `config`.
    fn gated(&self, server: &Server, ids: &[String], config: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        self.write_dataset(dir.path(), Some(ids), true, config);
        repo::init_main(dir.path(), "dataset");
        let made = self.sqlgate_on(
            server,
            dir.path(),
            &["baseline", "update", "--config", "sqlgate.yml"],
        );
        common::assert_exit(&made, 0);
        repo::commit_all(dir.path(), "baseline");
        let base = repo::head(dir.path());
        common::git(dir.path(), &["checkout", "-qb", "pr"]);
        (dir, base)
    }

    /// The pull request `change` makes on the gated subset, judged against its base after
    /// `meanwhile` ran on the server: exit code, all it said with the comment, and
    /// `summary.json`.
    pub fn judged_change(
        &self,
        server: &Server,
        change: impl FnOnce(&Path),
        meanwhile: impl FnOnce(),
    ) -> (Option<i32>, String, Value) {
        self.judged(self.gated_subset(server), server, change, meanwhile)
    }

    /// [`GateCorpus::judged_change`] on [`query_items`] alone, gated on them as a whole (the
    /// config's per-category rules dropped: a category with no item would fail every run).
    pub fn judged_query_change(
        &self,
        server: &Server,
        change: impl FnOnce(&Path),
        meanwhile: impl FnOnce(),
    ) -> (Option<i32>, String, Value) {
        let config =
            (self.config()).replace("  per_difficulty: { Management: 0.0, Query: 0.0 }\n", "");
        let gated = self.gated(server, &query_items(), &config);
        self.judged(gated, server, change, meanwhile)
    }

    /// The pull request `change` makes on the `gated` dataset (its folder and base commit).
    fn judged(
        &self,
        (dir, base): (tempfile::TempDir, String),
        server: &Server,
        change: impl FnOnce(&Path),
        meanwhile: impl FnOnce(),
    ) -> (Option<i32>, String, Value) {
        change(dir.path());
        repo::commit_all(dir.path(), "the pull request");
        meanwhile();
        let args = [
            &repo::EVAL[..],
            &["--trusted-base", &base, "--summary", "summary.json"],
        ]
        .concat();
        let run = self.sqlgate_on(server, dir.path(), &args);
        let comment =
            std::fs::read_to_string(dir.path().join("sqlgate-report.md")).unwrap_or_default();
        let summary = std::fs::read(dir.path().join("summary.json")).unwrap_or_default();
        let said = format!("{}\n{comment}", common::text(&run));
        let summary = serde_json::from_slice(&summary).unwrap_or(Value::Null);
        (run.status.code(), said, summary)
    }
}

/// The items whose `bird_critic_sound` verdict may differ from `bird_critic`'s in a corpus:
/// `lsq_017` (a lever) and `lsq_018` (PostgreSQL's TEMP quirk), measured in
/// `livesql_server_sound` (`DIFFERING_PG`, `DIFFERING_MY`).
const DIFFERING: [&str; 2] = ["lsq_017", "lsq_018"];

/// The `bird_critic` outcome of each per-item line of the dataset in `dir`, by instance id;
/// `bird_critic_sound`'s is asserted the same on every line but [`DIFFERING`]'s.
pub fn outcomes(dir: &Path, lines: &[Value]) -> Vec<(String, String)> {
    let items = common::read_jsonl(&dir.join("items.jsonl"));
    (items.iter())
        .map(|item| item["instance_id"].as_str().unwrap().to_string())
        .zip(lines)
        .map(|(id, line)| {
            let outcome = &line["outcome"];
            if !DIFFERING.contains(&id.as_str()) {
                assert_eq!(outcome["bird_critic"], outcome["bird_critic_sound"], "{id}");
            }
            (id, outcome["bird_critic"].as_str().unwrap().into())
        })
        .collect()
}

/// Gives `instance_id` the predicted `statements` in the dataset in `root`.
pub fn predict(root: &Path, instance_id: &str, statements: &[&str]) {
    let path = root.join("predictions/model.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| match line.contains(&format!("\"{instance_id}\"")) {
            true => json!({"instance_id": instance_id, "pred_sqls": statements}).to_string(),
            false => line.to_string(),
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}
