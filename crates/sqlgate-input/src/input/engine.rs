//! The config's `dataset.engine` section: which database engine runs the queries (SQLite files,
//! or a PostgreSQL / MySQL server whose URL an environment variable holds), how the server lays
//! out the benchmark's databases, whether a privileged role is tolerated, and the keys an engine
//! reads of its own (`options`).
//!
//! The kind is the engine's name as written ([`EngineName`]): the engines are listed in the
//! engine crate's registry, above this one, so the config is checked against them through
//! [`EngineCatalog`], which [`crate::input::config::Config::parse`] takes.
//!
//! The URL never appears in the config file: a committed file would publish the password, and a
//! pull request could point the run at a server of its choosing. `url_env` names the variable
//! instead, and the base commit's config decides which variable that is.

use serde::Deserialize;
use std::collections::BTreeMap;

/// `dataset.engine`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    /// The engine, by its name in the registry.
    #[serde(default)]
    pub kind: EngineName,
    /// The environment variable holding the server's URL (`postgresql://...`, `mysql://...`).
    #[serde(default)]
    pub url_env: Option<String>,
    /// The environment variable holding the URL of a role that may create databases and roles
    /// (`dataset.kind: bird-critic` on PostgreSQL: each item on a clone of its own).
    #[serde(default)]
    pub admin_url_env: Option<String>,
    /// One database holding every db_id's tables, or one database per db_id.
    #[serde(default)]
    pub layout: Option<Layout>,
    /// Run even when the role can write, run server programs or read server files.
    #[serde(default)]
    pub allow_privileged_role: Option<bool>,
    /// The keys an engine reads of its own (a file's path, a setting), as written: the engine's
    /// factory checks and reads them ([`EngineCatalog::check_keys`]); an engine that takes none
    /// refuses any.
    #[serde(default)]
    pub options: BTreeMap<String, serde_norway::Value>,
    /// Present only to refuse it with a clear message: a URL must not be written in the file.
    #[serde(default)]
    url: Option<serde::de::IgnoredAny>,
}

/// An engine's name as `dataset.engine.kind` writes it: lowercase letters, digits, `_` and `-`,
/// starting with a letter, so an error can quote it. Which names exist is the registry's to say
/// ([`EngineCatalog`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EngineName(String);

/// The longest engine name accepted.
const MAX_ENGINE_NAME_CHARS: usize = 32;

impl EngineName {
    /// The engine a config that names none runs on: SQLite on the benchmark's files.
    pub const DEFAULT: &'static str = "sqlite";

    /// The name as written in the config.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for EngineName {
    fn default() -> Self {
        EngineName(Self::DEFAULT.to_string())
    }
}

impl TryFrom<String> for EngineName {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        let valid = name.len() <= MAX_ENGINE_NAME_CHARS
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && (name.chars())
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        match valid {
            true => Ok(EngineName(name)),
            false => Err(format!(
                "not an engine's name (lowercase letters, digits, `_` and `-`, starting with a letter, at most {MAX_ENGINE_NAME_CHARS} characters)"
            )),
        }
    }
}

impl<'de> Deserialize<'de> for EngineName {
    /// Checked as the scalar is read, so the parse's error gives the line of the value.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = EngineName;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an engine's name (`dataset.engine.kind`)")
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<EngineName, E> {
                let name = EngineName::try_from(name.to_string()).map_err(E::custom)?;
                match PARSING_AGAINST.with(|known| unknown(&name, known.borrow().as_deref())) {
                    Some(message) => Err(E::custom(message)),
                    None => Ok(name),
                }
            }
        }
        deserializer.deserialize_str(Name)
    }
}

thread_local! {
    /// The names of the engines the config parsed on this thread may name, for the length of
    /// one parse ([`parsing_against`]): serde hands a deserializer no value, and a name checked
    /// as its scalar is read gets the parse's error with its line.
    static PARSING_AGAINST: std::cell::RefCell<Option<Vec<&'static str>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `parse` with `engines`' names as the only ones an [`EngineName`] read on this thread may
/// take (any well-formed name outside it), restoring what was there after.
pub(crate) fn parsing_against<T>(engines: &dyn EngineCatalog, parse: impl FnOnce() -> T) -> T {
    /// Puts the names that were in force back, however the parse ends.
    struct Restore(Option<Vec<&'static str>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            PARSING_AGAINST.with(|known| *known.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(PARSING_AGAINST.with(|known| known.replace(Some(engines.names()))));
    parse()
}

/// Why `name` is refused when the engines are `known`: `None` when it is one of them (or no list
/// is in force).
fn unknown(name: &EngineName, known: Option<&[&'static str]>) -> Option<String> {
    let known = known.filter(|known| !known.contains(&name.as_str()))?;
    Some(refusal(name, known))
}

/// The refusal of `name`, listing the engines there are (`known`).
fn refusal(name: &EngineName, known: &[&'static str]) -> String {
    let listed: Vec<String> = known.iter().map(|name| format!("`{name}`")).collect();
    format!(
        "unknown engine `{name}`; the engines are {}",
        listed.join(", ")
    )
}

impl std::fmt::Display for EngineName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The engines a config may name, answered by the registry that lists them
/// (`engine::registry::Engines`, in the engine crate above this one): the config is read below
/// the engines, so its checks ask through this trait.
pub trait EngineCatalog {
    /// Every engine's name, in the registry's order (an unknown kind's error lists them).
    fn names(&self) -> Vec<&'static str>;
    /// Whether the engine named `name` runs SQLite on the benchmark's files
    /// (`dataset.databases`), which the test suites, ESM, ESM+ and the Spider 2.0 layout need;
    /// `None` when no engine has that name.
    fn reads_sqlite_files(&self, name: &EngineName) -> Option<bool>;
    /// Checks the keys of `section` for the engine it names (known: [`Self::reads_sqlite_files`]
    /// answered), the error naming the key.
    fn check_keys(&self, section: &EngineConfig) -> Result<(), String>;
    /// The files the engine named `name` reads under `dataset.databases` when it is an engine of
    /// its own on files (not SQLite's, not a server's); `None` otherwise.
    fn database_files(&self, name: &EngineName) -> Option<DatabaseFiles>;
}

/// The database files an engine of its own reads (`<dataset.databases>/<db_id>/<db_id>.<extension>`,
/// one per db_id), as its factory describes them: the dataset loader finds and checks them, the
/// dataset fingerprint covers them, and the schema comes from `dataset.tables`.
#[derive(Debug, Clone, Copy)]
pub struct DatabaseFiles {
    /// The files' extension, without the dot (`duckdb`).
    pub extension: &'static str,
    /// Checks a file before the engine opens it (its first bytes: not empty, not a Git LFS
    /// pointer, the format's magic), the error saying what the file is instead.
    pub check: fn(&std::path::Path) -> Result<(), String>,
    /// Suffixes of the files beside a database the engine would read with it (DuckDB's
    /// `FILE.wal`, which it replays even read-only): refused, as SQLite's `-wal` and `-journal`.
    pub side_files: &'static [&'static str],
}

/// The error of an engine `name` no engine of `engines` has, at `key`, listing those there are.
pub fn unknown_engine(key: &str, name: &EngineName, engines: &dyn EngineCatalog) -> String {
    format!("`{key}`: {}", refusal(name, &engines.names()))
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
    /// The configured layout (shared when unset).
    pub fn layout(&self) -> Layout {
        self.layout.unwrap_or_default()
    }

    /// Whether a privileged role is tolerated (`false` when unset).
    pub fn allows_privileged_role(&self) -> bool {
        self.allow_privileged_role.unwrap_or(false)
    }

    /// Checks what holds whatever the engine: no URL in the file. The keys of the engine named
    /// are its factory's to check ([`EngineCatalog::check_keys`]).
    pub fn check(&self) -> Result<(), String> {
        if self.url.is_some() {
            return Err("`dataset.engine.url` is refused: a server URL must not be written in the config file (it would be committed with its password, and a pull request could change it); put it in an environment variable and name that variable in `dataset.engine.url_env`".into());
        }
        Ok(())
    }

    /// For an engine on files: refuses the server keys (`url_env`, `layout`,
    /// `allow_privileged_role`), naming the first one set.
    pub fn refuse_server_keys(&self) -> Result<(), String> {
        let server_keys = [
            ("url_env", self.url_env.is_some()),
            ("admin_url_env", self.admin_url_env.is_some()),
            ("layout", self.layout.is_some()),
            (
                "allow_privileged_role",
                self.allow_privileged_role.is_some(),
            ),
        ];
        match server_keys.iter().find(|(_, set)| *set) {
            Some((key, _)) => Err(format!(
                "`dataset.engine.{key}` applies to server engines only (`dataset.engine.kind: postgresql` or `mysql`), not to `{}`",
                self.kind
            )),
            None => Ok(()),
        }
    }

    /// For a server engine: `url_env` must name an environment variable.
    pub fn require_url_env(&self) -> Result<(), String> {
        let Some(name) = &self.url_env else {
            return Err(format!(
                "`dataset.engine.url_env` is required with `dataset.engine.kind: {}`: the name of the environment variable holding the server's URL",
                self.kind
            ));
        };
        check_env_name("url_env", name)?;
        match &self.admin_url_env {
            Some(admin) => check_env_name("admin_url_env", admin),
            None => Ok(()),
        }
    }

    /// For an engine that reads no key of its own: refuses `options`, naming the first key.
    pub fn refuse_options(&self) -> Result<(), String> {
        match self.options.keys().next() {
            Some(key) => Err(format!(
                "`dataset.engine.options.{}`: engine `{}` takes no options",
                crate::util::log::log_value(key),
                self.kind
            )),
            None => Ok(()),
        }
    }
}

/// An environment variable name: letters, digits and `_`, not starting with a digit. Anything
/// else (a URL, most likely) is refused without being echoed.
fn check_env_name(key: &str, name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_ENV_NAME_CHARS
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        return Ok(());
    }
    if name.contains("://") || name.contains('@') {
        return Err(format!("`dataset.engine.{key}` must name an environment variable, not hold a URL: a URL written in the config file is refused (it would be committed with its password); put it in an environment variable and name that variable here"));
    }
    Err(format!(
        "`dataset.engine.{key}` must be an environment variable name (letters, digits and `_`, at most {MAX_ENV_NAME_CHARS} characters, not starting with a digit)"
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
        assert_eq!(config.kind.as_str(), "sqlite");
        assert_eq!(config.kind, EngineName::default());
        assert!(config.options.is_empty());
    }

    #[test]
    fn the_kind_is_any_engine_name_and_its_options_are_kept_as_written() {
        let config = parse("{kind: duck-db2, options: {path: data/x.db, threads: 2}}").unwrap();
        assert_eq!(config.kind.as_str(), "duck-db2");
        assert_eq!(config.options["path"].as_str(), Some("data/x.db"));
        assert_eq!(config.options["threads"].as_u64(), Some(2));
        let error = config.refuse_options().unwrap_err();
        assert_eq!(
            error,
            "`dataset.engine.options.path`: engine `duck-db2` takes no options"
        );
    }

    #[test]
    fn a_kind_that_is_no_name_is_refused_with_its_line() {
        for yaml in [
            "kind: Oracle",
            "kind: '9i'",
            "kind: 'a b'",
            "kind: \"::error::x\"",
        ] {
            let error = parse(&format!("url_env: X\n{yaml}")).unwrap_err();
            assert!(error.starts_with("kind: not an engine's name"), "{error}");
            assert!(error.contains("at line 2 column 7"), "{error}");
        }
        let long = format!("kind: {}", "a".repeat(MAX_ENGINE_NAME_CHARS + 1));
        assert!(parse(&long).is_err());
    }

    #[test]
    fn a_server_needs_an_environment_variable_name() {
        let config = parse("{kind: postgresql, url_env: BIRD_PG_URL, layout: per_db_id}").unwrap();
        assert_eq!(config.layout(), Layout::PerDbId);
        assert!(!config.allows_privileged_role());
        assert_eq!(config.require_url_env(), Ok(()));
        let error = parse("{kind: mysql}")
            .unwrap()
            .require_url_env()
            .unwrap_err();
        assert!(
            error
                .contains("`dataset.engine.url_env` is required with `dataset.engine.kind: mysql`"),
            "{error}"
        );
        let error = (parse("{kind: mysql, url_env: '1X'}").unwrap())
            .require_url_env()
            .unwrap_err();
        assert!(error.contains("environment variable name"), "{error}");
    }

    #[test]
    fn a_url_in_the_file_is_refused_without_echoing_it() {
        let error = parse("{kind: postgresql, url: 'postgresql://u:hunter22@h/db'}").unwrap_err();
        assert!(error.contains("refused"), "{error}");
        assert!(!error.contains("hunter22"), "{error}");
        let named = parse("{kind: postgresql, url_env: 'postgresql://u:hunter22@h/db'}").unwrap();
        let error = named.require_url_env().unwrap_err();
        assert!(error.contains("refused"), "{error}");
        assert!(!error.contains("hunter22"), "{error}");
    }

    #[test]
    fn server_keys_are_refused_on_files() {
        let error = parse("{layout: shared}").unwrap().refuse_server_keys();
        assert!(error.unwrap_err().contains("`dataset.engine.layout`"));
        let config = parse("{kind: sqlite, allow_privileged_role: true}").unwrap();
        let error = config.refuse_server_keys().unwrap_err();
        assert!(error.contains("allow_privileged_role"), "{error}");
        assert!(error.ends_with("not to `sqlite`"), "{error}");
    }

    #[test]
    fn unknown_values_name_the_key() {
        let error = parse("{kind: postgresql, url_env: X, layout: sharded}").unwrap_err();
        assert!(error.contains("sharded"), "{error}");
        let error = parse("{kind: sqlite, urll: X}").unwrap_err();
        assert!(error.contains("urll"), "{error}");
    }
}
