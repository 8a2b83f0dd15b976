//! What a pull request that repairs a base config that does not load may choose, and what it
//! may not: it may fix the config's text, but what is compared stays the base's. The base's
//! baseline names the datasets that must run (each under its name), the reviewed gold overrides
//! and the directory suite each dataset is scored with; where the base's config names no
//! readable baseline, a baseline the base holds elsewhere still may not be moved out of reach.

use super::base::TrustedBase;
use super::Settlement;
use crate::analysis::baseline::{Baseline, RecordedInputs};
use crate::input::audit::AuditConfig;
use crate::input::config::{Config, PredictionSpec, SuiteConfig, SuiteKind, BASELINE_MARKER};
use crate::util::error::InputError;
use crate::util::workspace::resolve;
use std::path::Path;

/// Holds the repairing config to the base's baseline file (`bytes`, from `path`): every dataset
/// the baseline holds must be run under its name, and each dataset reads the overrides,
/// directory suite and prediction files its baseline section recorded, or (a baseline of an
/// older sqlgate records none) those the base's config text (`base_text`) names; with neither,
/// the repair is refused. What the pull request's config said instead is noted for the report.
pub fn govern(
    settlement: &mut Settlement,
    (path, bytes): (&Path, &[u8]),
    base_text: Option<&[u8]>,
) -> Result<(), InputError> {
    let sections = crate::analysis::datasets::sections(path, bytes)?;
    refuse_missing_datasets(&settlement.config, path, &sections)?;
    refuse_privileged_role(&settlement.config)?;
    let named = base_text.and_then(super::base_text::inputs_by_dataset);
    for (name, recorded) in &sections {
        let recorded_inputs = (recorded.inputs.as_ref()).filter(|i| i.predictions.is_some());
        let inputs = match (recorded_inputs, named.as_ref().and_then(|n| n.get(name))) {
            (Some(inputs), _) => (inputs, "the base's baseline recorded"),
            (None, Some(inputs)) => (inputs, "the base's config names"),
            (None, None) => return Err(unrecorded(&settlement.config, path, name.as_deref())),
        };
        let notes = apply_recorded(&mut settlement.config, name.as_deref(), inputs);
        settlement.notes.extend(notes);
    }
    Ok(())
}

/// The refusal of a repair over a baseline of an older sqlgate whose base config text does not
/// name what dataset `name` read either: nothing says which files it was scored with.
fn unrecorded(config: &Config, path: &Path, name: Option<&str>) -> InputError {
    let shown = name.unwrap_or(crate::input::config::DEFAULT_DATASET_NAME);
    InputError::Config {
        path: config.path.clone(),
        message: format!(
            "the base commit's config does not load, its baseline {} (from an older sqlgate) \
             does not record which overrides, suite and prediction files dataset `{shown}` was \
             scored with, and the base's config text does not name them either; a pull request \
             cannot choose them: repair the config on the base branch",
            path.display()
        ),
    }
}

/// A repairing config may not lift the rule against a privileged server role
/// (`dataset.engine.allow_privileged_role: true`): only the base's config may, and no base config
/// loads (red team round 33); the error names the dataset.
fn refuse_privileged_role(config: &Config) -> Result<(), InputError> {
    let lifted = (config.dataset_configs().into_iter())
        .find(|one| one.dataset.engine.allows_privileged_role());
    match lifted {
        None => Ok(()),
        Some(one) => Err(InputError::Config {
            path: config.path.clone(),
            message: format!(
                "the base commit's config does not load, and the pull request's config sets \
                 `dataset.engine.allow_privileged_role: true` (dataset `{}`): a repair cannot \
                 lift the rule against a privileged server role; repair the config on the base \
                 branch",
                one.dataset_name()
            ),
        }),
    }
}

/// A dataset the base's baseline holds and the repairing config does not run (dropped or
/// renamed) would leave its regressions compared with nothing: an error naming it.
fn refuse_missing_datasets(
    config: &Config,
    path: &Path,
    sections: &[(Option<String>, Baseline)],
) -> Result<(), InputError> {
    if !config.is_multi() {
        return Ok(());
    }
    let missing: Vec<&str> = (sections.iter())
        .filter_map(|(name, _)| name.as_deref())
        .filter(|name| !config.datasets.iter().any(|entry| entry.name == *name))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(InputError::Config {
        path: config.path.clone(),
        message: format!(
            "the base commit's config does not load, and its baseline {} holds dataset(s) {} \
             that this pull request's config does not run; a pull request that repairs the \
             config must run every dataset of the base's baseline under its name (drop or \
             rename one once the repair is merged)",
            path.display(),
            missing
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// Sets the overrides, directory suite and prediction entries of dataset `name` (`None`: the
/// one-dataset config) to `inputs`, which `source` names for the notes (the base's baseline, or
/// the base's config text). The notes say what the pull request's config named instead.
fn apply_recorded(
    config: &mut Config,
    name: Option<&str>,
    (inputs, source): (&RecordedInputs, &str),
) -> Vec<String> {
    let base_dir = config.base_dir.clone();
    let shown = name.unwrap_or(crate::input::config::DEFAULT_DATASET_NAME);
    let mut notes = Vec::new();
    let Some((audit, suite, predictions)) = dataset_inputs(config, name) else {
        return notes;
    };
    let overrides = (inputs.overrides.as_deref()).map(|p| resolve(&base_dir, p));
    if audit.overrides != overrides {
        notes.push(format!(
            "dataset `{shown}`: gold overrides {} as {source}; this pull request's \
             `audit.overrides` applies once merged",
            describe(overrides.as_deref())
        ));
        audit.overrides = overrides;
    }
    if let (Some(folder), SuiteKind::Directory) = (&inputs.suite, suite.kind) {
        let folder = resolve(&base_dir, folder);
        if suite.path.as_deref() != Some(folder.as_path()) {
            notes.push(format!(
                "dataset `{shown}`: suite {} as {source}; this pull request's `suite.path` \
                 applies once merged",
                folder.display()
            ));
            suite.path = Some(folder);
        }
    }
    if let Some(recorded) = &inputs.predictions {
        let governed = recorded_predictions(recorded, predictions, &base_dir);
        if governed != *predictions {
            notes.push(format!(
                "dataset `{shown}`: its systems read from the prediction files as {source}; \
                 this pull request's `predictions` apply once merged"
            ));
            *predictions = governed;
        }
    }
    notes
}

/// The `predictions` entries a baseline recorded (paths relative to `base_dir`), each read in
/// the `format` and `extract` mode of the pull request's entry with the same name and path (how
/// its own file is read decides nothing, as for a base config that loads).
fn recorded_predictions(
    recorded: &[PredictionSpec],
    proposed: &[PredictionSpec],
    base_dir: &Path,
) -> Vec<PredictionSpec> {
    (recorded.iter())
        .map(|spec| {
            let path = resolve(base_dir, &spec.path).to_string_lossy().into_owned();
            let theirs = (proposed.iter()).find(|p| p.path == path && p.name == spec.name);
            PredictionSpec {
                format: theirs.map_or(spec.format, |t| t.format),
                extract: theirs.map_or(spec.extract, |t| t.extract),
                path,
                ..spec.clone()
            }
        })
        .collect()
}

/// The audit and suite sections and the systems dataset `name` is scored with, made its own in
/// a `datasets` entry; `None` when the config has no such entry.
fn dataset_inputs<'a>(config: &'a mut Config, name: Option<&str>) -> Option<DatasetInputs<'a>> {
    let Some(name) = name else {
        return Some((
            &mut config.audit,
            &mut config.suite,
            &mut config.predictions,
        ));
    };
    let shared_suite = config.suite.clone();
    let entry = config
        .datasets
        .iter_mut()
        .find(|entry| entry.name == name)?;
    let audit = entry.audit.get_or_insert_with(AuditConfig::default);
    let suite = entry.suite.get_or_insert(shared_suite);
    Some((audit, suite, &mut entry.predictions))
}

/// What [`dataset_inputs`] hands out: one dataset's audit, suite and prediction entries.
type DatasetInputs<'a> = (
    &'a mut AuditConfig,
    &'a mut SuiteConfig,
    &'a mut Vec<PredictionSpec>,
);

/// A path for a note, or "none".
fn describe(path: Option<&Path>) -> String {
    path.map_or_else(|| "none".into(), |p| p.display().to_string())
}

/// How many files holding baselines an error lists.
const LISTED: usize = 8;

/// A repairing config that names no baseline the base holds (the base's config text names none
/// that can be read), while the base does hold baselines: the pull request moved the gate's
/// baseline out of its reach, so the run is refused naming them. `commit` is the base commit,
/// or the tip of the baseline ref.
pub fn refuse_hidden_baseline(
    config: &Config,
    base: &TrustedBase,
    commit: &str,
) -> Result<(), InputError> {
    let held: Vec<String> = (held_baselines(base, commit)?.into_iter())
        .map(|held| held.name)
        .take(LISTED)
        .collect();
    if held.is_empty() {
        return Ok(());
    }
    Err(InputError::Config {
        path: config.path.clone(),
        message: format!(
            "the base commit has no config that loads and names a baseline this run could read, \
             but the base holds {}; a pull request that repairs or restores the config must \
             keep `baseline.path` naming its baseline (move it once the pull request is merged)",
            held.join(", ")
        ),
    })
}

/// A repairing config whose base config text names no baseline must compare with the newest
/// baseline the base holds (the one the baseline workflow refreshes; an anchor is an older one
/// pinned on purpose, and any other is older still): `chosen`, the one it names, otherwise the
/// run is refused naming the newest.
pub fn refuse_older_baseline(
    config: &Config,
    (base, commit): (&TrustedBase, &str),
    chosen: &Path,
) -> Result<(), InputError> {
    let held = held_baselines(base, commit)?;
    let newest = (held.iter())
        .reduce(|newest, other| match newer(base, other, newest) {
            true => other,
            false => newest,
        })
        .map(|held| &held.name);
    match (newest, base.repo_path(chosen)?) {
        (Some(newest), Some(chosen_name)) if *newest != chosen_name => Err(InputError::Config {
            path: config.path.clone(),
            message: format!(
                "the base commit's config does not load and names no baseline this run could \
                 read; this pull request's config names {chosen_name}, but the newest baseline \
                 the base holds is {newest}: a pull request that repairs the config must \
                 compare with it (keep `baseline.path: {newest}`)"
            ),
        }),
        _ => Ok(()),
    }
}

/// A stored baseline the base holds.
struct Held {
    /// Its repository path.
    name: String,
    /// When it was made: its `created_unix`, else its commit's date; `None` when neither is known.
    made: Option<i64>,
    /// The commit it was made at, when it records one.
    commit: Option<String>,
}

/// Whether `one` was made after `other`: later, or in the same second at a commit descending
/// from `other`'s.
fn newer(base: &TrustedBase, one: &Held, other: &Held) -> bool {
    match (one.made, other.made) {
        (Some(a), Some(b)) if a != b => a > b,
        (Some(_), None) => true,
        (None, Some(_)) => false,
        _ => match (&one.commit, &other.commit) {
            (Some(a), Some(b)) => a != b && base.descends(a, b),
            _ => false,
        },
    }
}

/// The files at `commit` that are stored baselines.
fn held_baselines(base: &TrustedBase, commit: &str) -> Result<Vec<Held>, InputError> {
    let files = base.files_holding(commit, BASELINE_MARKER)?;
    Ok((files.into_iter())
        .filter_map(|name| {
            let bytes = base.read_named(commit, &name).ok()??;
            let stored =
                crate::analysis::datasets::recorded(&base.root.join(&name), &bytes).ok()?;
            let made =
                (stored.created_unix).or_else(|| base.commit_time(stored.commit.as_deref()?));
            Some(Held {
                name,
                made,
                commit: stored.commit,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `datasets:` config whose entry `a` names a directory suite and `b`'s overrides.
    fn repairing_config() -> Config {
        let text = "datasets:\n  - name: a\n    dataset: { gold: a/gold.sql, databases: a/db }\n    \
                    predictions: [{ path: a/p.txt }]\n    suite: { kind: directory, path: weak }\n    \
                    audit: { overrides: b/overrides.jsonl }\nmetrics: [ex]\n";
        Config::parse(
            text,
            Path::new("/repo/sqlgate.yml"),
            &crate::engine::registry::Engines,
        )
        .unwrap()
    }

    #[test]
    fn a_dataset_is_scored_with_the_suite_and_overrides_its_baseline_recorded() {
        let mut config = repairing_config();
        let recorded = RecordedInputs {
            overrides: None,
            suite: Some("suites/full".into()),
            predictions: None,
        };
        let notes = apply_recorded(&mut config, Some("a"), (&recorded, "recorded"));
        let entry = &config.datasets[0];
        let audit = entry.audit.as_ref().unwrap();
        assert_eq!(audit.overrides, None);
        let suite = entry.suite.as_ref().unwrap();
        assert_eq!(suite.path.as_deref(), Some(Path::new("/repo/suites/full")));
        assert_eq!(notes.len(), 2, "{notes:?}");
    }
}
