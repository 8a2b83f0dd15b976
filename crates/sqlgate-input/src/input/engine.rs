//! The config's `dataset.engine` section: which database engine runs the queries (SQLite files,
//! or a PostgreSQL / MySQL server whose URL an environment variable holds), how the server lays
//! out the benchmark's databases, and whether a privileged role is tolerated.
//!
//! The URL never appears in the config file: a committed file would publish the password, and a
//! pull request could point the run at a server of its choosing. `url_env` names the variable
//! instead, and the base commit's config decides which variable that is.

use serde::Deserialize;

/// `dataset.engine`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    /// The engine.
    #[serde(default)]
    pub kind: EngineKind,
    /// The environment variable holding the server's URL (`postgresql://...`, `mysql://...`).
    #[serde(default)]
    pub url_env: Option<String>,
    /// One database holding every db_id's tables, or one database per db_id.
    #[serde(default)]
    pub layout: Option<Layout>,
    /// Run even when the role can write, run server programs or read server files.
    #[serde(default)]
    pub allow_privileged_role: Option<bool>,
    /// Present only to refuse it with a clear message: a URL must not be written in the file.
    #[serde(default)]
    url: Option<serde::de::IgnoredAny>,
}

/// Engine kinds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// SQLite files under `dataset.databases` (sqlgate's own locked-down executor).
    #[default]
    Sqlite,
    /// A PostgreSQL server.
    Postgresql,
    /// A MySQL or MariaDB server.
    Mysql,
    /// DuckDB files under `dataset.databases` (`<db_id>/<db_id>.duckdb`, opened read-only).
    Duckdb,
}

impl EngineKind {
    /// The name as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Sqlite => "sqlite",
            EngineKind::Postgresql => "postgresql",
            EngineKind::Mysql => "mysql",
            EngineKind::Duckdb => "duckdb",
        }
    }
}

/// Where a server keeps each db_id's tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// BIRD's set-up: the URL's database holds every db_id's tables (names unique across them).
    #[default]
    Shared,
    /// One database per db_id, named by it, on the URL's server.
    PerDbId,
}

impl Layout {
    /// The name as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Shared => "shared",
            Layout::PerDbId => "per_db_id",
        }
    }
}

/// The longest environment variable name accepted in `url_env`.
const MAX_ENV_NAME_CHARS: usize = 128;

impl EngineConfig {
    /// Whether queries run on a server rather than on files (SQLite's or DuckDB's).
    pub fn is_server(&self) -> bool {
        !matches!(self.kind, EngineKind::Sqlite | EngineKind::Duckdb)
    }

    /// The configured layout (shared when unset).
    pub fn layout(&self) -> Layout {
        self.layout.unwrap_or_default()
    }

    /// Whether a privileged role is tolerated (`false` when unset).
    pub fn allows_privileged_role(&self) -> bool {
        self.allow_privileged_role.unwrap_or(false)
    }

    /// Checks the section alone; the error names the key.
    pub fn check(&self) -> Result<(), String> {
        if self.url.is_some() {
            return Err("`dataset.engine.url` is refused: a server URL must not be written in the config file (it would be committed with its password, and a pull request could change it); put it in an environment variable and name that variable in `dataset.engine.url_env`".into());
        }
        if !self.is_server() {
            let server_keys = [
                ("url_env", self.url_env.is_some()),
                ("layout", self.layout.is_some()),
                (
                    "allow_privileged_role",
                    self.allow_privileged_role.is_some(),
                ),
            ];
            return match server_keys.iter().find(|(_, set)| *set) {
                Some((key, _)) => Err(format!(
                    "`dataset.engine.{key}` applies to server engines only (`dataset.engine.kind: postgresql` or `mysql`), not to `{}`",
                    self.kind.as_str()
                )),
                None => Ok(()),
            };
        }
        let Some(name) = &self.url_env else {
            return Err(format!(
                "`dataset.engine.url_env` is required with `dataset.engine.kind: {}`: the name of the environment variable holding the server's URL",
                self.kind.as_str()
            ));
        };
        check_env_name(name)
    }
}

/// An environment variable name: letters, digits and `_`, not starting with a digit. Anything
/// else (a URL, most likely) is refused without being echoed.
fn check_env_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_ENV_NAME_CHARS
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        return Ok(());
    }
    if name.contains("://") || name.contains('@') {
        return Err("`dataset.engine.url_env` must name an environment variable, not hold a URL: a URL written in the config file is refused (it would be committed with its password); put it in an environment variable and name that variable here".into());
    }
    Err(format!(
        "`dataset.engine.url_env` must be an environment variable name (letters, digits and `_`, at most {MAX_ENV_NAME_CHARS} characters, not starting with a digit)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<EngineConfig, String> {
        let config: EngineConfig = serde_norway::from_str(yaml).map_err(|e| e.to_string())?;
        config.check().map(|()| config)
    }

    #[test]
    fn default_is_sqlite() {
        let config = parse("{}").unwrap();
        assert_eq!(config.kind, EngineKind::Sqlite);
        assert!(!config.is_server());
    }

    #[test]
    fn server_needs_an_environment_variable_name() {
        let config = parse("{kind: postgresql, url_env: BIRD_PG_URL, layout: per_db_id}").unwrap();
        assert_eq!(config.layout(), Layout::PerDbId);
        assert!(!config.allows_privileged_role());
        let error = parse("{kind: mysql}").unwrap_err();
        assert!(
            error.contains("`dataset.engine.url_env` is required"),
            "{error}"
        );
        let error = parse("{kind: mysql, url_env: '1X'}").unwrap_err();
        assert!(error.contains("environment variable name"), "{error}");
    }

    #[test]
    fn a_url_in_the_file_is_refused_without_echoing_it() {
        for yaml in [
            "{kind: postgresql, url_env: 'postgresql://u:hunter22@h/db'}",
            "{kind: postgresql, url: 'postgresql://u:hunter22@h/db'}",
        ] {
            let error = parse(yaml).unwrap_err();
            assert!(error.contains("refused"), "{error}");
            assert!(!error.contains("hunter22"), "{error}");
        }
    }

    #[test]
    fn server_keys_are_refused_on_sqlite() {
        let error = parse("{layout: shared}").unwrap_err();
        assert!(error.contains("`dataset.engine.layout`"), "{error}");
        let error = parse("{kind: sqlite, allow_privileged_role: true}").unwrap_err();
        assert!(error.contains("allow_privileged_role"), "{error}");
    }

    #[test]
    fn unknown_values_name_the_key() {
        let error = parse("{kind: oracle}").unwrap_err();
        assert!(error.contains("oracle"), "{error}");
        let error = parse("{kind: postgresql, url_env: X, layout: sharded}").unwrap_err();
        assert!(error.contains("sharded"), "{error}");
    }
}
