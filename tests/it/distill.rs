//! Test-suite distillation on a small schema created here: departments, employees (with a
//! self-referencing manager), and a composite-key assignment table. Neighbor queries come from a
//! fixed list in the test, so these tests check distillation itself, not the neighbor generator.

use crate::common;

use rusqlite::Connection;
use sqlgate::engine::exec::{Executor, Limits};
use sqlgate::engine::profile::Profile;
use sqlgate::engine::value::Value;
use sqlgate::input::config::{CompareConfig, DatasetConfig, DatasetKind, DifficultySource};
use sqlgate::input::dataset::Dataset;
use sqlgate::sql::schema::Schema;
use sqlgate::suites::distill::report::{Reuse, SuiteReport};
use sqlgate::suites::distill::{distill, NeighborSource, Options};
use sqlgate::suites::neighbors::Conditions;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const DDL: &str = "
CREATE TABLE dept (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, budget REAL);
CREATE TABLE emp (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL,
  dept_id INTEGER NOT NULL REFERENCES dept(id), manager_id INTEGER REFERENCES emp(id));
CREATE TABLE assignment (
  emp_id INTEGER NOT NULL REFERENCES emp(id), project TEXT NOT NULL, hours INTEGER,
  PRIMARY KEY (emp_id, project));
INSERT INTO dept VALUES (1, 'Sales', 100.5), (2, 'Research', 250.0), (3, 'Legal', NULL);
INSERT INTO emp VALUES (1, 'Ann', 52, 1, NULL), (2, 'Bob', 35, 1, 1), (3, 'Cid', 25, 2, 1),
  (4, 'Dee', 45, 2, 3);
INSERT INTO assignment VALUES (1, 'alpha', 10), (2, 'alpha', 5), (2, 'beta', 7), (4, 'gamma', 3);
";

/// Gold `age > 30` and its neighbor `age >= 30` agree on the original database: nobody is 30.
const GOLD_AGE: &str = "SELECT name FROM emp WHERE age > 30";
const NEIGHBOR_AGE: &str = "SELECT name FROM emp WHERE age >= 30";
const GOLD_EXCEPT: &str = "SELECT id FROM dept EXCEPT SELECT dept_id FROM emp";
const GOLD_COUNT: &str = "SELECT count(*) FROM emp";
const GOLD_LATEST: &str = "SELECT age FROM emp ORDER BY age DESC LIMIT 1";
const GOLD_JOINLESS: &str = "SELECT count(*) FROM emp WHERE age > 40";
const GOLD_PROJECT: &str = "SELECT project, sum(hours) FROM assignment GROUP BY project";
/// Needs a department with more than 40 employees, beyond the test's 12 rows per table.
const GOLD_BIG_GROUP: &str = "SELECT dept_id FROM emp GROUP BY dept_id HAVING count(*) > 40";
/// Empty on the original database: no Marketing department, nobody aged 61.
const GOLD_WITNESS: &str = "SELECT T1.name FROM emp AS T1 JOIN dept AS T2 ON T1.dept_id = T2.id \
     WHERE T2.name = 'Marketing' AND T1.age = 61";
const GOLD_PER_DEPT: &str =
    "SELECT T1.name, count(*) FROM dept AS T1 JOIN emp AS T2 ON T1.id = T2.dept_id GROUP BY T1.id";

/// Neighbors per gold query, and the constants to plant.
struct FixedNeighbors {
    calls: AtomicUsize,
}

impl NeighborSource for FixedNeighbors {
    fn neighbors(&self, gold: &str, _schema: &Schema, _seed: u64) -> Vec<String> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let list: &[&str] = match gold {
            GOLD_AGE => &[
                NEIGHBOR_AGE,
                "SELECT name FROM emp WHERE age < 30",
                "SELECT name FROM emp WHERE age > 31",
                "SELECT name FROM emp WHERE age > 29",
                "SELECT name FROM emp",
            ],
            GOLD_EXCEPT => &["SELECT id FROM dept", "SELECT dept_id FROM emp"],
            GOLD_COUNT => &[
                "SELECT count(*) FROM dept",
                "SELECT count(manager_id) FROM emp",
            ],
            GOLD_LATEST => &[
                "SELECT age FROM emp ORDER BY age ASC LIMIT 1",
                "SELECT age FROM emp ORDER BY age DESC",
            ],
            GOLD_JOINLESS => &[
                "SELECT count(*) FROM emp WHERE age >= 40",
                "SELECT count(*) FROM emp WHERE age > 41",
            ],
            "SELECT count(*) FROM player WHERE age > 20" => &[
                "SELECT count(*) FROM player WHERE age >= 20",
                "SELECT count(*) FROM player WHERE age > 21",
                "SELECT count(*) FROM player",
                "SELECT count(*) FROM team",
                "SELECT count(*) FROM player WHERE age < 20",
            ],
            GOLD_PROJECT => &[
                "SELECT project, max(hours) FROM assignment GROUP BY project",
                "SELECT project, sum(hours) FROM assignment GROUP BY emp_id",
            ],
            GOLD_BIG_GROUP => &[
                "SELECT dept_id FROM emp GROUP BY dept_id HAVING count(*) > 41",
                "SELECT dept_id FROM emp GROUP BY dept_id HAVING count(*) >= 40",
                "SELECT dept_id FROM emp GROUP BY dept_id HAVING count(*) <> 40",
            ],
            GOLD_PER_DEPT => &[
                // Equivalent: the join makes T1.id and T2.dept_id equal; emp.name is NOT NULL;
                // every group has a row.
                "SELECT T1.name, count(*) FROM dept AS T1 JOIN emp AS T2 ON T1.id = T2.dept_id GROUP BY T2.dept_id",
                "SELECT T1.name, count(T2.name) FROM dept AS T1 JOIN emp AS T2 ON T1.id = T2.dept_id GROUP BY T1.id",
                "SELECT T1.name, count(*) FROM dept AS T1 JOIN emp AS T2 ON T1.id = T2.dept_id GROUP BY T1.id HAVING count(*) >= 1",
                // Real neighbors.
                "SELECT T1.name, count(*) FROM dept AS T1 JOIN emp AS T2 ON T1.id = T2.dept_id GROUP BY T2.age",
                "SELECT T1.name, count(T2.manager_id) FROM dept AS T1 JOIN emp AS T2 ON T1.id = T2.dept_id GROUP BY T1.id",
            ],
            _ => &[],
        };
        list.iter().map(|s| s.to_string()).collect()
    }

    fn constants(&self, gold: &str) -> Vec<Value> {
        gold.split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .map(Value::Int)
            .collect()
    }

    fn conditions(&self, gold: &str) -> Conditions {
        sqlgate::suites::neighbors::conditions(gold)
    }
}

fn source() -> FixedNeighbors {
    FixedNeighbors {
        calls: AtomicUsize::new(0),
    }
}

/// A dataset folder with the `company` database and the given gold queries.
pub(crate) fn dataset(work: &Path, golds: &[&str]) -> Dataset {
    let folder = work.join("database/company");
    if !folder.exists() {
        std::fs::create_dir_all(&folder).unwrap();
        let conn = Connection::open(folder.join("company.sqlite")).unwrap();
        conn.execute_batch(DDL).unwrap();
    }
    let gold: String = golds.iter().map(|g| format!("{g}\tcompany\n")).collect();
    std::fs::write(work.join("gold.sql"), gold).unwrap();
    Dataset::load(
        &DatasetConfig {
            kind: DatasetKind::default(),
            gold: work.join("gold.sql"),
            databases: Some(work.join("database")),
            difficulty: DifficultySource::None,
            ..Default::default()
        },
        &sqlgate::engine::registry::Engines,
    )
    .unwrap()
}

/// Rows per table: at least one, because `ORDER BY age DESC LIMIT 1` and `max(age)` differ on
/// an empty table (no row against one NULL row) and are equivalent only on non-empty ones.
fn options(max_random_dbs: u64) -> Options {
    Options {
        seed: 7,
        max_random_dbs,
        rows: (1, 12),
        timeout: Duration::from_secs(2),
        trust: Default::default(),
    }
}

fn profile() -> Profile {
    Profile::new(&CompareConfig::default())
}

fn run(work: &Path, golds: &[&str], suite: &Path, source: &FixedNeighbors) -> SuiteReport {
    distill(
        &dataset(work, golds),
        &profile(),
        &options(200),
        suite,
        source,
    )
    .unwrap()
}

const ALL: [&str; 6] = [
    GOLD_AGE,
    GOLD_EXCEPT,
    GOLD_COUNT,
    GOLD_LATEST,
    GOLD_JOINLESS,
    GOLD_PROJECT,
];

fn suite_files(suite: &Path) -> Vec<PathBuf> {
    databases_in(suite, "company")
}

/// The database files the distilled suite in `suite` keeps for `db_id`, where they lie
/// (`Suite::directory` reads run-private copies, gone with the suite), by name.
fn databases_in(suite: &Path, db_id: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(suite.join(db_id))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "sqlite"))
        .collect();
    files.sort();
    files
}

/// TS as the metric computes it: the same denotation on every suite database.
fn ts_correct(databases: &[PathBuf], gold: &str, prediction: &str) -> bool {
    let executor = Executor::new(Limits {
        timeout: Duration::from_secs(5),
        max_rows: 100_000,
        max_bytes: 1 << 26,
    });
    let profile = profile();
    let gold = profile.prepare_gold(gold);
    let prediction = profile.prepare_prediction(prediction);
    databases.iter().all(|db| {
        let expected = executor.run(db, &gold.sql).unwrap();
        match executor.run(db, &prediction) {
            Ok(rows) => profile.same_result(&expected, &rows, gold.order_matters),
            Err(_) => false,
        }
    })
}

#[test]
fn a_neighbor_the_original_cannot_separate_is_caught_and_true_rewrites_pass() {
    let work = tempfile::tempdir().unwrap();
    let suite = work.path().join("suite");
    let report = run(work.path(), &ALL, &suite, &source());
    let databases = suite_files(&suite);
    let original = work.path().join("database/company/company.sqlite");
    assert!(ts_correct(&[original], GOLD_AGE, NEIGHBOR_AGE));
    assert!(databases.len() > 1, "{databases:?}");
    assert!(!ts_correct(&databases, GOLD_AGE, NEIGHBOR_AGE));
    let (neighbors, undistinguished) = report.neighbor_totals();
    assert_eq!(neighbors, 15);
    assert_eq!(undistinguished, 0, "{}", report.to_text());
    assert!(report.empty_items().is_empty(), "{}", report.to_text());

    // Seed 000, Figure 8 rows 2-5, on this schema: each rewrite is equivalent under its
    // constraints (unique ids, NOT NULL keys, foreign keys), so it must pass TS.
    let rewrites = [
        (
            GOLD_EXCEPT,
            "SELECT id FROM dept WHERE id NOT IN (SELECT dept_id FROM emp)",
        ),
        (GOLD_COUNT, "SELECT count(name) FROM emp"),
        (GOLD_LATEST, "SELECT max(age) FROM emp"),
        (
            GOLD_JOINLESS,
            "SELECT count(*) FROM emp AS T1 JOIN dept AS T2 ON T1.dept_id = T2.id WHERE T1.age > 40",
        ),
    ];
    for (gold, rewrite) in rewrites {
        assert!(ts_correct(&databases, gold, rewrite), "{rewrite}");
    }
}

#[test]
fn every_kept_database_satisfies_every_declared_constraint() {
    let work = tempfile::tempdir().unwrap();
    let suite = work.path().join("suite");
    run(work.path(), &ALL, &suite, &source());
    let databases = suite_files(&suite);
    assert!(databases.len() > 1);
    let zero = |conn: &Connection, sql: &str| {
        let count: i64 = conn.query_row(sql, [], |r| r.get(0)).unwrap();
        assert_eq!(count, 0, "{sql}");
    };
    for db in databases {
        let conn = Connection::open(&db).unwrap();
        let violations: i64 = conn
            .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(violations, 0, "{}", db.display());
        let integrity: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(integrity, "ok");
        for (table, key) in [
            ("dept", "id"),
            ("dept", "name"),
            ("emp", "id"),
            ("assignment", "emp_id, project"),
        ] {
            zero(
                &conn,
                &format!("SELECT count(*) FROM (SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) > 1)"),
            );
        }
        for (table, column) in [
            ("dept", "id"),
            ("dept", "name"),
            ("emp", "id"),
            ("emp", "name"),
            ("emp", "age"),
            ("emp", "dept_id"),
            ("assignment", "emp_id"),
            ("assignment", "project"),
        ] {
            zero(
                &conn,
                &format!("SELECT count(*) FROM {table} WHERE {column} IS NULL"),
            );
        }
        zero(
            &conn,
            "SELECT count(*) FROM emp WHERE manager_id IS NOT NULL AND manager_id NOT IN (SELECT id FROM emp)",
        );
        zero(
            &conn,
            "SELECT count(*) FROM emp WHERE typeof(id) != 'integer' OR typeof(age) != 'integer'",
        );
    }
}

fn contents(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let relative = path.strip_prefix(root).unwrap().to_path_buf();
                files.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[test]
fn same_seed_gives_byte_identical_suites_and_a_cache_hit_does_no_work() {
    let work = tempfile::tempdir().unwrap();
    let (first, second) = (work.path().join("a"), work.path().join("b"));
    run(work.path(), &ALL, &first, &source());
    run(work.path(), &ALL, &second, &source());
    assert_eq!(contents(&first), contents(&second));

    let before = contents(&first);
    let modified = std::fs::metadata(first.join("company/manifest.json"))
        .unwrap()
        .modified()
        .unwrap();
    let again = source();
    let report = run(work.path(), &ALL, &first, &again);
    assert_eq!(again.calls.load(Ordering::Relaxed), 0);
    assert!(report.schemas.iter().all(|s| s.reuse == Reuse::Cached));
    assert_eq!(contents(&first), before);
    let modified_again = std::fs::metadata(first.join("company/manifest.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(modified, modified_again);
}

#[test]
fn a_new_gold_query_reuses_the_kept_databases_first() {
    let work = tempfile::tempdir().unwrap();
    let suite = work.path().join("suite");
    let first = run(work.path(), &ALL[..3], &suite, &source());
    let kept_before = contents(&suite);
    let report = run(work.path(), &ALL, &suite, &source());
    let schema = &report.schemas[0];
    assert_eq!(schema.reuse, Reuse::Extended);
    assert!(schema.examined >= first.schemas[0].examined);
    for (path, bytes) in kept_before
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "sqlite"))
    {
        assert_eq!(
            std::fs::read(suite.join(path)).unwrap(),
            *bytes,
            "{}",
            path.display()
        );
    }
    let (_, undistinguished) = report.neighbor_totals();
    assert_eq!(undistinguished, 0, "{}", report.to_text());
    assert!(!ts_correct(&suite_files(&suite), GOLD_AGE, NEIGHBOR_AGE));
}

#[test]
fn a_schema_known_only_from_tables_json_gets_generated_databases_that_keep_its_keys() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("database")).unwrap();
    let tables = serde_json::json!([{
        "db_id": "league",
        "table_names_original": ["team", "player"],
        "column_names_original": [[-1, "*"], [0, "team_id"], [0, "city"], [1, "player_id"], [1, "team_id"], [1, "age"]],
        "column_types": ["text", "number", "text", "number", "number", "number"],
        "primary_keys": [1, 3],
        "foreign_keys": [[4, 1]]
    }]);
    std::fs::write(work.path().join("tables.json"), tables.to_string()).unwrap();
    std::fs::write(
        work.path().join("gold.sql"),
        "SELECT count(*) FROM player WHERE age > 20\tleague\n",
    )
    .unwrap();
    let dataset = Dataset::load(
        &DatasetConfig {
            kind: DatasetKind::default(),
            gold: work.path().join("gold.sql"),
            tables: Some(work.path().join("tables.json")),
            databases: Some(work.path().join("database")),
            difficulty: DifficultySource::None,
            skip_missing_databases: true,
            ..Default::default()
        },
        &sqlgate::engine::registry::Engines,
    )
    .unwrap();
    let suite = work.path().join("suite");
    let report = distill(&dataset, &profile(), &options(100), &suite, &source()).unwrap();
    assert_eq!(report.neighbor_totals(), (5, 0), "{}", report.to_text());
    let databases = databases_in(&suite, "league");
    assert!(!databases.is_empty());
    assert!(databases.iter().all(|d| d
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("league_r")));
    for db in databases {
        let conn = Connection::open(&db).unwrap();
        for sql in [
            "SELECT count(*) FROM (SELECT team_id FROM team GROUP BY team_id HAVING count(*) > 1)",
            "SELECT count(*) FROM team WHERE team_id IS NULL",
            "SELECT count(*) FROM player WHERE team_id IS NOT NULL AND team_id NOT IN (SELECT team_id FROM team)",
        ] {
            let count: i64 = conn.query_row(sql, [], |r| r.get(0)).unwrap();
            assert_eq!(count, 0, "{sql} on {}", db.display());
        }
    }
}

#[test]
fn eval_with_a_distilled_suite_distills_first_and_says_so() {
    let work = tempfile::tempdir().unwrap();
    dataset(work.path(), &[GOLD_AGE]);
    std::fs::write(work.path().join("preds.txt"), format!("{NEIGHBOR_AGE}\n")).unwrap();
    let config = work.path().join("sqlgate.yml");
    std::fs::write(
        &config,
        "dataset: { gold: gold.sql, databases: database, difficulty: none }\n\
         suite: { kind: distilled, path: suite, distill: { seed: 7, max_random_dbs: 50, rows: [1, 12] } }\n\
         predictions: [{ name: m, path: preds.txt }]\nmetrics: [ex, ts]\n",
    )
    .unwrap();
    let jsonl = work.path().join("out.jsonl");
    let run = || {
        common::eval(
            &config,
            &[
                "--jsonl",
                common::arg(&jsonl),
                "--comment",
                "never",
                "--no-fail-on-regression",
            ],
        )
    };
    let first = run();
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(0), "{stderr}");
    common::assert_contains(&stderr, &["distilling the test suite of `company`"]);
    let results = common::read_jsonl(&jsonl);
    assert_eq!(results[0]["metrics"]["ex"], 1);
    assert_eq!(results[0]["metrics"]["ts"], 0);
    assert!(work.path().join("suite/gold-results.json").is_file());

    let second = run();
    assert!(!String::from_utf8_lossy(&second.stderr).contains("distilling"));
    assert_eq!(common::read_jsonl(&jsonl), results);
}

#[test]
fn bad_distill_settings_are_named() {
    let work = tempfile::tempdir().unwrap();
    dataset(work.path(), &[GOLD_AGE]);
    std::fs::write(work.path().join("preds.txt"), "SELECT 1\n").unwrap();
    let config = work.path().join("sqlgate.yml");
    for (suite, expected) in [
        (
            "{ kind: distilled, path: s, distill: { rows: [5, 2] } }",
            "suite.distill.rows",
        ),
        (
            "{ kind: distilled, path: s, distill: { seeds: 3 } }",
            "seeds",
        ),
        ("{ kind: distilled }", "suite.path"),
    ] {
        std::fs::write(
            &config,
            format!("dataset: {{ gold: gold.sql, databases: database }}\nsuite: {suite}\npredictions: [{{ path: preds.txt }}]\n"),
        )
        .unwrap();
        let output = common::sqlgate(&["distill", "--config", config.to_str().unwrap()]);
        common::assert_exit(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        common::assert_contains(&stderr, &[expected]);
    }
    std::fs::write(
        &config,
        "dataset: { gold: gold.sql, databases: database }\npredictions: [{ path: preds.txt }]\n",
    )
    .unwrap();
    let output = common::sqlgate(&["distill", "--config", config.to_str().unwrap()]);
    common::assert_exit(&output, 2);
    common::assert_contains(&common::stderr(&output), &["needs `suite.kind: distilled`"]);
}

#[test]
fn golds_that_need_rows_the_original_lacks_return_rows_on_the_suite() {
    let work = tempfile::tempdir().unwrap();
    let suite = work.path().join("suite");
    let golds = [GOLD_WITNESS, GOLD_BIG_GROUP];
    let report = run(work.path(), &golds, &suite, &source());
    let original = work.path().join("database/company/company.sqlite");
    let executor = Executor::new(Limits {
        timeout: Duration::from_secs(5),
        max_rows: 100_000,
        max_bytes: 1 << 26,
    });
    for gold in golds {
        assert!(executor.run(&original, gold).unwrap().is_empty(), "{gold}");
    }
    // Seed 000 A.2: each gold returns rows on some suite database.
    assert!(report.empty_items().is_empty(), "{}", report.to_text());
    // The HAVING threshold's neighbors need groups of exactly 39, 40 and 41 rows.
    assert_eq!(report.neighbor_totals(), (3, 0), "{}", report.to_text());
    assert!(!ts_correct(
        &suite_files(&suite),
        GOLD_BIG_GROUP,
        "SELECT dept_id FROM emp GROUP BY dept_id HAVING count(*) >= 40"
    ));
}

#[test]
fn provably_equivalent_neighbors_are_not_counted() {
    let work = tempfile::tempdir().unwrap();
    let suite = work.path().join("suite");
    let report = run(work.path(), &[GOLD_PER_DEPT], &suite, &source());
    assert_eq!(report.items[0].neighbors, 2, "{}", report.to_text());
    assert_eq!(report.neighbor_totals(), (2, 0), "{}", report.to_text());
}
