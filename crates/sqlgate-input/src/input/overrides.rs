//! Reviewed gold overrides (`audit.overrides`): one JSON object per line naming an item by its
//! 0-based `index` (and, to catch a file written for another dataset, optionally its `db_id`),
//! with exactly one of
//!
//! - `"alternatives": ["SQL", ...]`: further golds; a prediction matching any gold counts,
//! - `"replace": "SQL"`: the gold is replaced,
//! - `"exclude": true`: the item is not scored,
//!
//! and a non-empty `"reason"`. The file decides verdicts, so a pull-request run reads it as the
//! base commit has it, like the config ([`crate::input::trusted::Snapshot::read`]); an
//! override naming an item the dataset lacks is an input error with the file and line.

use crate::input::config::Config;
use crate::input::dataset::Dataset;
use crate::input::trusted::{Snapshot, TrustedFile};
use crate::util::error::InputError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What an override does to its item's gold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Further golds: a prediction matching any gold is right.
    Alternatives(Vec<String>),
    /// The gold is replaced by this one.
    Replace(String),
    /// The item is not scored.
    Exclude,
}

impl Action {
    /// The action's name in reports.
    pub fn as_str(&self) -> &'static str {
        match self {
            Action::Alternatives(_) => "alternatives",
            Action::Replace(_) => "replaced",
            Action::Exclude => "excluded",
        }
    }
}

/// One reviewed override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// The item's index.
    pub index: usize,
    /// The item's database (as the dataset has it).
    pub db_id: String,
    /// What it does.
    pub action: Action,
    /// Why, as the reviewer wrote it (untrusted text: escaped wherever it is shown).
    pub reason: String,
    /// Its line in the file (1-based).
    pub line: usize,
}

/// The overrides of a run, by item index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoldOverrides {
    /// The file they came from (empty when none is configured).
    pub path: PathBuf,
    /// The overrides, by item index.
    pub items: BTreeMap<usize, Override>,
    /// Whether the pull request changes the file (its version was ignored: the base's was read).
    pub changed: bool,
}

/// One line as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    index: usize,
    #[serde(default)]
    db_id: Option<String>,
    #[serde(default)]
    alternatives: Option<Vec<String>>,
    #[serde(default)]
    replace: Option<String>,
    #[serde(default)]
    exclude: Option<bool>,
    reason: String,
}

impl GoldOverrides {
    /// The configured overrides (the trusted base's file in a pull-request run), checked
    /// against the dataset; none when `audit.overrides` is not set. A configured file that
    /// does not exist is an error.
    pub fn load(
        config: &Config,
        snapshot: &Snapshot,
        dataset: &Dataset,
    ) -> Result<GoldOverrides, InputError> {
        let Some(path) = &config.audit.overrides else {
            return Ok(GoldOverrides::default());
        };
        let TrustedFile { bytes, changed } = snapshot.read(path)?;
        let bytes = bytes.ok_or_else(|| {
            InputError::malformed(
                path,
                "file",
                "`audit.overrides` names a file that does not exist",
            )
        })?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| InputError::malformed(path, "file", format!("not UTF-8: {e}")))?;
        let mut overrides = GoldOverrides::parse(path, text, dataset)?;
        overrides.changed = changed;
        Ok(overrides)
    }

    /// Parses override lines from `path` against the dataset's items.
    pub fn parse(path: &Path, text: &str, dataset: &Dataset) -> Result<GoldOverrides, InputError> {
        let mut items = BTreeMap::new();
        for (number, raw) in text.lines().enumerate() {
            let line = number + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let fail =
                |message: String| InputError::malformed(path, format!("line {line}"), message);
            let parsed: Line = serde_json::from_str(raw).map_err(|e| fail(e.to_string()))?;
            let Some(item) = dataset.items.get(parsed.index) else {
                return Err(fail(format!(
                    "item {} is not in the dataset ({} items, indexes from 0)",
                    parsed.index,
                    dataset.items.len()
                )));
            };
            if let Some(db_id) = parsed.db_id.as_ref().filter(|d| **d != item.db_id) {
                return Err(fail(format!(
                    "item {} is on `{}`, not `{db_id}`",
                    parsed.index, item.db_id
                )));
            }
            if parsed.reason.trim().is_empty() {
                return Err(fail("`reason` must say why the gold is overridden".into()));
            }
            let action = action(&parsed).map_err(fail)?;
            if items.contains_key(&parsed.index) {
                return Err(fail(format!("item {} is overridden twice", parsed.index)));
            }
            items.insert(
                parsed.index,
                Override {
                    index: parsed.index,
                    db_id: item.db_id.clone(),
                    action,
                    reason: parsed.reason.trim().to_string(),
                    line,
                },
            );
        }
        Ok(GoldOverrides {
            path: path.to_path_buf(),
            items,
            changed: false,
        })
    }

    /// Applies replacements and exclusions to the dataset (alternatives are tried when
    /// scoring, see [`GoldOverrides::alternatives`]).
    pub fn apply(&self, dataset: &mut Dataset) {
        for entry in self.items.values() {
            let item = &mut dataset.items[entry.index];
            match &entry.action {
                Action::Replace(sql) => item.sql = sql.clone(),
                Action::Exclude => item.skipped = true,
                Action::Alternatives(_) => {}
            }
        }
    }

    /// The further golds of an item (none without an `alternatives` override).
    pub fn alternatives(&self, index: usize) -> &[String] {
        match self.items.get(&index).map(|o| &o.action) {
            Some(Action::Alternatives(golds)) => golds,
            _ => &[],
        }
    }

    /// The most alternatives any item has.
    pub fn most_alternatives(&self) -> usize {
        self.items
            .keys()
            .map(|index| self.alternatives(*index).len())
            .max()
            .unwrap_or(0)
    }

    /// The note of a pull-request run whose pull request changes the overrides file: its
    /// version was not read.
    pub fn ignored_change_note(&self) -> Option<String> {
        self.changed.then(|| {
            format!(
                "this pull request changes the gold overrides {}; the run used the base \
                 commit's version (merge the change first to use it)",
                self.path.display()
            )
        })
    }

    /// Whether the item is excluded.
    pub fn excluded(&self, index: usize) -> bool {
        self.items
            .get(&index)
            .is_some_and(|o| o.action == Action::Exclude)
    }

    /// Whether a reviewed override replaces the item's gold.
    pub fn replaced(&self, index: usize) -> bool {
        (self.items.get(&index)).is_some_and(|o| matches!(o.action, Action::Replace(_)))
    }
}

/// The one action a line asks for.
fn action(line: &Line) -> Result<Action, String> {
    let mut actions = Vec::new();
    if let Some(golds) = &line.alternatives {
        if golds.is_empty() || golds.iter().any(|g| g.trim().is_empty()) {
            return Err("`alternatives` must list one gold SQL or more, none empty".into());
        }
        actions.push(Action::Alternatives(golds.clone()));
    }
    if let Some(sql) = &line.replace {
        if sql.trim().is_empty() {
            return Err("`replace` must be a gold SQL".into());
        }
        actions.push(Action::Replace(sql.clone()));
    }
    match line.exclude {
        Some(true) => actions.push(Action::Exclude),
        Some(false) => return Err("`exclude` is `true` or absent".into()),
        None => {}
    }
    match actions.len() {
        1 => Ok(actions.remove(0)),
        0 => Err("give one of `alternatives`, `replace` or `exclude`".into()),
        _ => Err("give only one of `alternatives`, `replace` or `exclude`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::dataset::GoldItem;

    fn dataset() -> Dataset {
        let item = |index: usize| GoldItem {
            index,
            db_id: "concert_singer".into(),
            sql: "SELECT 1".into(),
            question: None,
            evidence: None,
            difficulty: None,
            skipped: false,
            spider2: None,
            task: None,
        };
        Dataset {
            items: vec![item(0), item(1), item(2)],
            databases: BTreeMap::new(),
            sha256: String::new(),
            digests: Default::default(),
            copies: None,
        }
    }

    fn parse(text: &str) -> Result<GoldOverrides, String> {
        GoldOverrides::parse(Path::new("overrides.jsonl"), text, &dataset())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn each_action_is_read_and_applied() {
        let overrides = parse(
            "{\"index\": 0, \"alternatives\": [\"SELECT 2\"], \"reason\": \"tie at the cut\"}\n\n\
             {\"index\": 1, \"db_id\": \"concert_singer\", \"replace\": \"SELECT 3\", \"reason\": \"typo\"}\n\
             {\"index\": 2, \"exclude\": true, \"reason\": \"ambiguous question\"}\n",
        )
        .unwrap();
        assert_eq!(overrides.alternatives(0), ["SELECT 2".to_string()]);
        assert_eq!(overrides.items[&1].line, 3);
        assert_eq!(overrides.items[&2].db_id, "concert_singer");
        assert!(!overrides.changed && overrides.ignored_change_note().is_none());
        assert!(overrides.excluded(2));
        let mut dataset = dataset();
        overrides.apply(&mut dataset);
        assert_eq!(dataset.items[1].sql, "SELECT 3");
        assert!(dataset.items[2].skipped);
        assert_eq!(dataset.items[0].sql, "SELECT 1");
    }

    #[test]
    fn bad_lines_name_the_file_and_line() {
        let cases = [
            ("{\"index\": 3, \"exclude\": true, \"reason\": \"x\"}", "line 1", "item 3 is not in the dataset (3 items"),
            ("\n{\"index\": 0, \"exclude\": true, \"reason\": \" \"}", "line 2", "`reason` must say why"),
            ("{\"index\": 0, \"reason\": \"x\"}", "line 1", "give one of"),
            ("{\"index\": 0, \"exclude\": true, \"replace\": \"SELECT 1\", \"reason\": \"x\"}", "line 1", "only one of"),
            ("{\"index\": 0, \"db_id\": \"world_1\", \"exclude\": true, \"reason\": \"x\"}", "line 1", "is on `concert_singer`, not `world_1`"),
            ("{\"index\": 0, \"exclude\": true, \"reason\": \"x\"}\n{\"index\": 0, \"exclude\": true, \"reason\": \"y\"}", "line 2", "overridden twice"),
            ("{\"index\": 0, \"excluded\": true, \"reason\": \"x\"}", "line 1", "unknown field"),
        ];
        for (text, line, message) in cases {
            let error = parse(text).unwrap_err();
            assert!(error.contains("overrides.jsonl"), "{error}");
            assert!(error.contains(line), "{error}");
            assert!(error.contains(message), "{error}");
        }
    }
}
