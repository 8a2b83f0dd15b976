//! A test-only engine, registered under `cfg(test)`: it proves that adding an engine is this one
//! file and one line in [`crate::engine::registry::ENGINES`]. `kind: toy` runs every query on an
//! in-memory SQLite database that its own key `dataset.engine.options.script` (SQL text) builds,
//! the same database for every db_id, so it needs no file and no server.

use crate::engine::exec::{Engine, ExecError, Executor, Limits, ResultTable};
use crate::engine::load::types::Server;
use crate::engine::plugin::EngineFactory;
use crate::engine::server::data_digest::DataDigests;
use crate::engine::sqlite::Scratch;
use crate::input::config::{Config, EngineConfig};
use crate::input::dataset::Dataset;
use crate::sql::features::FeatureDialect;
use crate::util::error::InputError;
use std::path::Path;
use std::sync::Arc;

/// The toy engine's factory (`kind: toy`).
pub struct ToyFactory;

/// The one key of `dataset.engine.options` the toy engine reads.
const SCRIPT: &str = "script";

impl EngineFactory for ToyFactory {
    fn name(&self) -> &'static str {
        "toy"
    }

    fn dialect(&self) -> FeatureDialect {
        FeatureDialect::Sqlite
    }

    fn planner_breaks_ties(&self) -> bool {
        false
    }

    fn check_keys(&self, section: &EngineConfig) -> Result<(), String> {
        section.refuse_server_keys()?;
        if let Some(key) = section.options.keys().find(|key| *key != SCRIPT) {
            return Err(format!(
                "`dataset.engine.options.{key}`: engine `toy` reads `options.{SCRIPT}` only"
            ));
        }
        script(section).map(drop)
    }

    fn start(
        &self,
        config: &Config,
        _dataset: &Dataset,
        limits: &Limits,
        _threads: usize,
    ) -> Result<Option<Arc<dyn Engine>>, InputError> {
        let fail = |message: String| InputError::Config {
            path: config.path.clone(),
            message: format!("`dataset.engine.options.{SCRIPT}`: {message}"),
        };
        let script = script(&config.dataset.engine).map_err(fail)?;
        let image = database_image(script).map_err(|e| fail(e.to_string()))?;
        Ok(Some(Arc::new(ToyEngine {
            image,
            executor: Executor::new(*limits),
        })))
    }

    /// The data is the script, which the config's digest covers.
    fn data_digests(
        &self,
        _config: &Config,
        _dataset: &Dataset,
    ) -> Result<Option<DataDigests>, InputError> {
        Ok(None)
    }

    fn load_target(&self) -> Option<Server> {
        None
    }
}

/// The SQL text of `options.script`.
fn script(section: &EngineConfig) -> Result<&str, String> {
    match section.options.get(SCRIPT).map(|value| value.as_str()) {
        Some(Some(script)) => Ok(script),
        Some(None) => Err(format!(
            "`dataset.engine.options.{SCRIPT}` must be SQL text"
        )),
        None => Err(format!(
            "`dataset.engine.options.{SCRIPT}` is required with `dataset.engine.kind: toy`"
        )),
    }
}

/// The serialized database `script` builds.
fn database_image(script: &str) -> rusqlite::Result<Vec<u8>> {
    let mut conn = crate::util::sqlite::open_in_memory()?;
    conn.execute_batch(script)?;
    Ok(conn.serialize(rusqlite::MAIN_DB)?.to_vec())
}

/// The toy engine: a fresh locked-down copy of its database per query.
#[derive(Debug)]
struct ToyEngine {
    image: Vec<u8>,
    executor: Executor,
}

impl Engine for ToyEngine {
    fn run(
        &self,
        _db: &Path,
        sql: &str,
        _limits: &Limits,
        with_columns: bool,
        _most_rows: usize,
    ) -> Result<ResultTable, ExecError> {
        let scratch = Scratch::from_image(&self.image)?;
        let rows = scratch.run(&self.executor, sql)?;
        let columns = match with_columns {
            true => (scratch.column_names(sql)).map_err(|e| ExecError::Sql(e.to_string()))?,
            false => Vec::new(),
        };
        Ok(ResultTable { columns, rows })
    }

    fn column_names(
        &self,
        _db: &Path,
        sql: &str,
        _limits: &Limits,
    ) -> Result<Vec<String>, ExecError> {
        let scratch = Scratch::from_image(&self.image)?;
        (scratch.column_names(sql)).map_err(|e| ExecError::Sql(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::profile::Profile;
    use crate::engine::registry::{find, Engines};
    use crate::engine::value::Value;
    use crate::input::config::EngineName;

    const SCRIPT_SQL: &str = "CREATE TABLE pet(name TEXT, age INT); \
         INSERT INTO pet VALUES ('rex', 3), ('tom', 5), ('kit', 1);";

    /// A benchmark of two items on `db_id` `zoo`, with the config naming the toy engine with
    /// `engine` (a flow map) and `extra` lines.
    fn benchmark(dir: &Path, engine: &str, extra: &str) -> Result<Config, InputError> {
        let gold = r#"[{"question": "q0", "query": "SELECT name FROM pet WHERE age > 2", "db_id": "zoo"},
                       {"question": "q1", "query": "SELECT count(*) FROM pet", "db_id": "zoo"}]"#;
        std::fs::write(dir.join("gold.json"), gold).unwrap();
        std::fs::write(
            dir.join("model.sql"),
            "SELECT name FROM pet WHERE age >= 3\nSELECT count(*) FROM pet WHERE age > 1\n",
        )
        .unwrap();
        let yaml = format!(
            "dataset:\n  gold: gold.json\n  difficulty: none\n  engine: {engine}\n{extra}\
             predictions:\n  - {{name: model, path: model.sql}}\nmetrics: [ex]\n"
        );
        Config::parse(&yaml, &dir.join("sqlgate.yml"), &Engines)
    }

    fn toy_section() -> String {
        format!("{{kind: toy, options: {{script: \"{SCRIPT_SQL}\"}}}}")
    }

    #[test]
    fn the_registry_finds_it_by_name() {
        let name = EngineName::try_from("toy".to_string()).unwrap();
        assert_eq!(find(&name).map(|f| f.name()), Some("toy"));
        assert!(crate::input::config::EngineCatalog::names(&Engines).contains(&"toy"));
    }

    #[test]
    fn a_config_naming_it_loads_with_its_own_key() {
        let dir = tempfile::tempdir().unwrap();
        let config = benchmark(dir.path(), &toy_section(), "").unwrap();
        assert_eq!(config.dataset.engine.kind.as_str(), "toy");
        assert_eq!(script(&config.dataset.engine), Ok(SCRIPT_SQL));
    }

    #[test]
    fn its_keys_are_checked_when_the_config_loads() {
        let dir = tempfile::tempdir().unwrap();
        let toy = toy_section();
        let refused = [
            ("{kind: toy}", "", "`dataset.engine.options.script` is required"),
            ("{kind: toy, options: {script: 1}}", "", "must be SQL text"),
            (
                "{kind: toy, options: {script: x, path: y}}",
                "",
                "`dataset.engine.options.path`: engine `toy` reads `options.script` only",
            ),
            (
                "{kind: toy, url_env: X, options: {script: x}}",
                "",
                "`dataset.engine.url_env` applies to server engines only",
            ),
            (
                "{kind: toy, options: {script: x}}",
                "  databases: dbs\n",
                "`dataset.databases` is for the engines on files only; with `dataset.engine.kind: toy`",
            ),
            (
                "{kind: toi, options: {script: x}}",
                "",
                "dataset.engine.kind: unknown engine `toi`; the engines are `sqlite`, \
                 `postgresql`, `mysql`, `duckdb`, `toy` at line 4 column 18",
            ),
            (
                toy.as_str(),
                "audit: {dialects: [{name: pg, gold: gold.json, engine: {kind: pg}}]}\n",
                "audit.dialects[0].engine.kind: unknown engine `pg`; the engines are `sqlite`, \
                 `postgresql`, `mysql`, `duckdb`, `toy` at line 5 column",
            ),
        ];
        for (engine, extra, expected) in refused {
            let error = benchmark(dir.path(), engine, extra)
                .unwrap_err()
                .to_string();
            assert!(error.contains("sqlgate.yml"), "{engine}: {error}");
            assert!(error.contains(expected), "{engine}: {error}");
        }
    }

    #[test]
    fn an_evaluation_runs_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let config = benchmark(dir.path(), &toy_section(), "").unwrap();
        let dataset = Dataset::load(&config.dataset, &crate::engine::registry::Engines).unwrap();
        let systems = crate::input::predictions::load_systems(&config.predictions, &dataset);
        let system = systems.unwrap().remove(0);
        let limits = Limits::of(&config.execution);
        let executor = crate::engine::registry::executor(&config, &dataset, limits, 1).unwrap();
        let profile = Profile::new(&config.compare);
        let mut verdicts = Vec::new();
        for (item, prediction) in dataset.items.iter().zip(&system.predictions) {
            let db = dataset.database_path(item).unwrap();
            assert_eq!(db, Path::new("zoo"));
            let gold = profile.prepare_gold(&item.sql);
            let gold_rows = executor.run(db, &gold.sql).unwrap();
            let predicted = profile.prepare_prediction(prediction.as_deref().unwrap());
            let predicted_rows = executor.run(db, &predicted).unwrap();
            verdicts.push(profile.same_result(&gold_rows, &predicted_rows, gold.order_matters));
        }
        assert_eq!(verdicts, [true, false]);
        let count = executor.run(Path::new("zoo"), "SELECT count(*) FROM pet");
        assert_eq!(count.unwrap(), [vec![Value::Int(3)]]);
        let table = executor.run_table(Path::new("zoo"), "SELECT age AS years FROM pet");
        assert_eq!(table.unwrap().columns, ["years"]);
        let refused = executor.run(Path::new("zoo"), "DELETE FROM pet");
        assert!(matches!(
            refused,
            Err(ExecError::Denied(_) | ExecError::Sql(_))
        ));
        let digests = crate::engine::registry::data_digests(&config, &dataset);
        assert!(matches!(digests, Ok(None)));
    }
}
