//! The config a pull-request run is judged with, through the life of a repository: a repository
//! can always reach green through a pull request, and no pull request can use that path to skip
//! the gate.
//!
//! - The base commit's config loads (judged by its text alone: a folder it names that the pull
//!   request deleted is a change to the benchmark, refused, never a reason to run the pull
//!   request's config): it judges the pull request, and a pull request that changes the config
//!   must leave it loading (else no later pull request could be gated).
//! - The base has no config there (the pull request introduces sqlgate) or one that does not load
//!   (a direct push, a sqlgate upgrade): the pull request's own config runs, but the verdict is
//!   still the base's to give: the baseline stored on the base is compared with the gate
//!   settings that baseline recorded, whatever the pull request's `gate` section says, on every
//!   dataset that baseline holds, with the overrides and suites it recorded
//!   ([`super::repair`]). Only when the base has no baseline either is nothing compared: the
//!   scores are shown with a note.

use super::base::TrustedBase;
use super::base_benchmark::judge_on_base_benchmark;
use super::dataset_changes::{refuse_dataset_changes, refuse_suite_changes};
use super::Settlement;
use crate::analysis::baseline::Baseline;
use crate::input::config::{BaselineConfig, Config, GateConfig};
use crate::input::trusted::Settled;
use crate::util::error::InputError;
use std::path::{Path, PathBuf};

/// The config of a pull-request run whose base is `base` (see the module documentation).
/// `reference` is the baseline ref, when the baseline is stored on one.
pub fn settle(
    path: &Path,
    base: &TrustedBase,
    reference: Option<&str>,
) -> Result<Settlement, InputError> {
    let Some(text) = base.read(path)? else {
        return proposed_over_base(path, (base, reference), None);
    };
    match parse_base(path, &text) {
        Ok(config) => {
            let mut settlement = settle_base(path, base, config)?;
            if let Some(proposed) = check_proposed_config(path, base)? {
                take_prediction_formats(&mut settlement, &proposed);
            }
            Ok(settlement)
        }
        Err(broken) => proposed_over_base(path, (base, reference), Some((&broken, &text))),
    }
}

/// The base commit's config text at `path`, parsed: an error when it does not parse or
/// validate (a pull request may then repair it). The text alone decides, never the working tree.
fn parse_base(path: &Path, text: &[u8]) -> Result<Config, InputError> {
    let text = std::str::from_utf8(text)
        .map_err(|e| InputError::malformed(path, "base commit", format!("not UTF-8: {e}")))?;
    Config::parse(text, path, &crate::engine::registry::Engines)
}

/// The base's config (`config`, parsed from its text) governing the run: a directory suite the
/// pull request changes is refused, dataset files it changes are read as the base has them
/// (the proposed ones must load), then the config is checked against the working tree, and a
/// changed config noted. A folder or file it names that the pull request deleted, moved or
/// replaced is a change to the benchmark, and any other working-tree error is an error of this
/// run, never a reason to run the pull request's config.
fn settle_base(path: &Path, base: &TrustedBase, config: Config) -> Result<Settlement, InputError> {
    refuse_suite_changes(&config, base)?;
    let (config, base_benchmark) = judge_on_base_benchmark(config, base)?;
    let mut settlement = Settlement::new(config, Settled::Base);
    if base.changes(path)? {
        (settlement.ignored_changes).push(format!("config {}", path.display()));
    }
    let changes_benchmark = base_benchmark
        .proposed
        .iter()
        .filter(|p| p.proposed.is_some());
    for proposed in changes_benchmark {
        settlement.notes.push(benchmark_note(proposed));
    }
    settlement.base_benchmark = base_benchmark;
    Ok(settlement)
}

/// What the report says of a dataset whose benchmark the pull request changes.
fn benchmark_note(proposed: &crate::input::trusted::ProposedBenchmark) -> String {
    let dataset = match &proposed.dataset {
        Some(name) => format!("dataset `{name}`'s benchmark"),
        None => "the benchmark".to_string(),
    };
    format!(
        "this pull request changes {dataset} ({}): its predictions are scored on the base \
         commit's benchmark, and \"Proposed benchmark\" shows what the change would do to the \
         base's own predictions",
        proposed.changed.join(", ")
    )
}

/// How many commits of a baseline ref are searched for a baseline made at an ancestor of the
/// base: a pull request whose base is that many merges behind is asked to merge the base in.
const REF_DEPTH: usize = 200;

/// The stored baseline at `path`: on `base`'s tree, or with a baseline ref, the newest version
/// on it made at an ancestor of `base` (an error naming the ref when it has versions but none
/// made there).
pub fn stored_bytes(
    base: &TrustedBase,
    reference: Option<&str>,
    path: &Path,
) -> Result<Option<Vec<u8>>, InputError> {
    let Some(reference) = reference else {
        return base.read(path);
    };
    let mut count = 0;
    for commit in base.commits_on(reference, REF_DEPTH)? {
        let Some(bytes) = base.read_at(&commit, path)? else {
            continue;
        };
        count += 1;
        let made_at = crate::analysis::datasets::recorded(path, &bytes)
            .ok()
            .and_then(|b| b.commit);
        if made_at.is_some_and(|commit| base.has_ancestor(&commit)) {
            return Ok(Some(bytes));
        }
    }
    if count == 0 {
        return Ok(None);
    }
    Err(InputError::malformed(
        path,
        "baseline ref",
        format!(
            "none of the {count} newest baselines on `{reference}` was made at an ancestor of \
             the base commit {}: merge the base branch into this one, or run the baseline \
             workflow on the base branch",
            short(base)
        ),
    ))
}

/// A pull request that changes (or deletes) the config must leave one that loads: once merged,
/// a config that does not load would stop every later pull request. The pull request's config,
/// when it changed it.
fn check_proposed_config(path: &Path, base: &TrustedBase) -> Result<Option<Config>, InputError> {
    if !base.changes(path)? {
        return Ok(None);
    }
    load_proposed(path, base)
        .map(Some)
        .map_err(|error| proposed_error(path, &error))
}

/// The pull request's own config file, parsed: a regular file of the repository, never read
/// through a link (a committed symlink could point at a secret outside the workspace, whose
/// text a YAML error would quote, or at an endless device).
pub(super) fn load_proposed(path: &Path, base: &TrustedBase) -> Result<Config, InputError> {
    let refuse = |why: &str| InputError::Config {
        path: path.to_path_buf(),
        message: format!(
            "{why}: a pull request's config is read only as a regular file of the repository"
        ),
    };
    let metadata = std::fs::symlink_metadata(path).map_err(|e| InputError::read(path, e))?;
    if metadata.file_type().is_symlink() {
        return Err(refuse("the config is a symbolic link"));
    }
    if !metadata.is_file() {
        return Err(refuse("the config is not a regular file"));
    }
    let real = path.canonicalize().map_err(|e| InputError::read(path, e))?;
    let root = base
        .root
        .canonicalize()
        .map_err(|e| InputError::read(&base.root, e))?;
    if !real.starts_with(&root) {
        return Err(refuse(
            "the config lies outside the repository (a folder on its path is a link)",
        ));
    }
    Config::load(path, &crate::engine::registry::Engines)
}

/// The `format` of a prediction file is how the pull request's own file is read: it is taken
/// from the pull request's config for every entry with the same name and path, so the file and
/// its format change in one pull request. For most kinds any format can hold any predictions,
/// so it decides nothing about the verdict; but a kind may bind the format to what its
/// prediction text means (`dataset.kind: spider2-dbt` reads only `format: spider2-dbt`, whose
/// text names a checked answer file). So a format is taken only when the base config's kind
/// still accepts the settled config ([`crate::input::kinds::check`]); otherwise the base's
/// format stays. Either way the reader gets a note.
fn take_prediction_formats(settlement: &mut Settlement, proposed: &Config) {
    for change in proposed_formats(&settlement.config, proposed) {
        let mut candidate = settlement.config.clone();
        change.apply(&mut candidate);
        let note = match kind_accepts(&candidate) {
            Ok(()) => {
                settlement.config = candidate;
                change.taken_note()
            }
            Err(why) => change.refused_note(&why),
        };
        settlement.notes.push(note);
    }
}

/// One prediction entry whose format the pull request's config changes.
struct FormatChange {
    /// The `datasets` entry holding it (`None`: the config's own `predictions`).
    dataset: Option<usize>,
    /// Its position in that list.
    index: usize,
    /// Its path, for the note.
    path: String,
    /// The format the pull request's config gives it.
    format: crate::input::config::PredictionFormat,
}

impl FormatChange {
    /// `config` with this entry read in the proposed format.
    fn apply(&self, config: &mut Config) {
        let specs = match self.dataset {
            Some(entry) => &mut config.datasets[entry].predictions,
            None => &mut config.predictions,
        };
        specs[self.index].format = self.format;
    }

    /// The note of a format taken.
    fn taken_note(&self) -> String {
        format!(
            "{} is read as `format: {}`, as this pull request's config says (the rest of its \
             config applies once merged)",
            self.path,
            self.format.as_str()
        )
    }

    /// The note of a format the base config's kind refuses (`why`).
    fn refused_note(&self, why: &str) -> String {
        format!(
            "{} is read as the base commit's config says, not as `format: {}` as this pull \
             request's config says: the base's dataset refuses that format ({why})",
            self.path,
            self.format.as_str()
        )
    }
}

/// The format changes the pull request's config (`proposed`) makes to `config`'s prediction
/// entries: same name and path, another format; for the config's own list and each `datasets`
/// entry's (matched by name).
fn proposed_formats(config: &Config, proposed: &Config) -> Vec<FormatChange> {
    let mut changes = format_changes(None, &config.predictions, &proposed.predictions);
    for (position, entry) in config.datasets.iter().enumerate() {
        if let Some(theirs) = proposed.datasets.iter().find(|e| e.name == entry.name) {
            let found = format_changes(Some(position), &entry.predictions, &theirs.predictions);
            changes.extend(found);
        }
    }
    changes
}

/// [`proposed_formats`] for one list of systems (the config's, or a `datasets` entry's).
fn format_changes(
    dataset: Option<usize>,
    specs: &[crate::input::config::PredictionSpec],
    proposed: &[crate::input::config::PredictionSpec],
) -> Vec<FormatChange> {
    let differs = |spec: &crate::input::config::PredictionSpec| {
        let theirs = (proposed.iter()).find(|p| p.path == spec.path && p.name == spec.name)?;
        (theirs.format != spec.format).then_some(theirs.format)
    };
    (specs.iter().enumerate())
        .filter_map(|(index, spec)| {
            differs(spec).map(|format| FormatChange {
                dataset,
                index,
                path: spec.path.clone(),
                format,
            })
        })
        .collect()
}

/// Whether every dataset of `config` still passes its kind's checks, as [`Config::parse`] runs
/// them; else the refusal, naming the key.
fn kind_accepts(config: &Config) -> Result<(), String> {
    (config.dataset_configs().iter())
        .try_for_each(|one| crate::input::kinds::check(one, &crate::engine::registry::Engines))
}

/// The error of a pull request's config that does not load, naming the file and what is wrong.
fn proposed_error(path: &Path, error: &InputError) -> InputError {
    InputError::Config {
        path: path.to_path_buf(),
        message: format!(
            "this pull request's version of the config does not load, and once merged no pull \
             request could be gated; fix it in this pull request: {error}"
        ),
    }
}

/// The pull request's own config, for a base without one (`broken` is `None`) or with one that
/// does not load (`broken`: why, and the base's text): judged against the base's baseline with
/// the gate settings it recorded.
fn proposed_over_base(
    path: &Path,
    (base, reference): (&TrustedBase, Option<&str>),
    broken: Option<(&InputError, &[u8])>,
) -> Result<Settlement, InputError> {
    let config = load_proposed(path, base).map_err(|error| match base.changes(path) {
        Ok(false) => InputError::Config {
            path: path.to_path_buf(),
            message: format!(
                "the config does not load, on the base commit {} as in this pull request; \
                 repair it in a pull request (judged with the gate its baseline recorded): \
                 {error}",
                short(base)
            ),
        },
        _ => proposed_error(path, &error),
    })?;
    let base_text = broken.map(|(_, text)| text);
    let base_state = match broken {
        Some((error, _)) => format!(
            "the base commit {}'s {} does not load ({error})",
            short(base),
            path.display()
        ),
        None => format!("the base commit {} has no {}", short(base), path.display()),
    };
    let base_section = base_text.and_then(|text| base_baseline_section(path, text));
    let named_by_base = base_section.is_some();
    let stored = stored_baseline(&config, (base, reference), base_section)?;
    let mut settlement = Settlement::new(config, Settled::Tree);
    // A base without a config that loads but with baselines (its config deleted or broken by
    // a direct push) is still gated: the pull request must compare with the newest of them.
    let Some((section, baseline, bytes)) = stored else {
        refuse_hidden_baseline(&settlement.config, (base, reference))?;
        introduce(&mut settlement, &base_state);
        return Ok(settlement);
    };
    if !named_by_base {
        refuse_older_baseline(&settlement.config, (base, reference), &section.path)?;
    }
    super::repair::govern(&mut settlement, (&section.path, &bytes), base_text)?;
    refuse_dataset_changes(&settlement.config, base)?;
    settlement.config.gate = recorded_gate(&baseline);
    let recorded = if baseline.gate.is_some() {
        "the gate settings that baseline recorded"
    } else {
        "the strictest gate (that baseline, from an older sqlgate, recorded no gate settings)"
    };
    settlement.settled = Settled::Proposed {
        note: format!(
            "{base_state}: this pull request's config ran, compared with the base's baseline {} \
             under {recorded}; its own `gate` section applies once merged",
            section.path.display()
        ),
    };
    settlement.config.baseline = Some(section);
    Ok(settlement)
}

/// [`super::repair::refuse_hidden_baseline`] on the base commit, or on the tip of the baseline
/// ref when the baseline is stored on one.
fn refuse_hidden_baseline(
    config: &Config,
    (base, reference): (&TrustedBase, Option<&str>),
) -> Result<(), InputError> {
    match history_tip(base, reference)? {
        Some(commit) => super::repair::refuse_hidden_baseline(config, base, &commit),
        None => Ok(()),
    }
}

/// [`super::repair::refuse_older_baseline`] on the base commit, or on the tip of the baseline
/// ref when the baseline is stored on one.
fn refuse_older_baseline(
    config: &Config,
    (base, reference): (&TrustedBase, Option<&str>),
    chosen: &Path,
) -> Result<(), InputError> {
    match history_tip(base, reference)? {
        Some(commit) => super::repair::refuse_older_baseline(config, (base, &commit), chosen),
        None => Ok(()),
    }
}

/// The commit whose tree holds the baselines: the base's, or the baseline ref's newest.
fn history_tip(base: &TrustedBase, reference: Option<&str>) -> Result<Option<String>, InputError> {
    Ok(match reference {
        Some(reference) => base.commits_on(reference, 1)?.into_iter().next(),
        None => Some(base.commit.clone()),
    })
}

/// A pull request that introduces the gate: nothing to compare with, so no baseline is required
/// and the drift guard is off; the scores are shown with a note.
fn introduce(settlement: &mut Settlement, base_state: &str) {
    let config = &mut settlement.config;
    if let Some(section) = &mut config.baseline {
        section.required = false;
        section.anchor = None;
    }
    config.gate.max_drift_points = None;
    settlement.settled = Settled::Proposed {
        note: format!(
            "this pull request introduces the gate: {base_state} and no baseline, so nothing \
             was compared; its scores are shown, and once it is merged the baseline workflow \
             stores them for the next pull requests to be compared with"
        ),
    };
}

/// The `baseline` section of the base's config `text` at `path`, read as plain YAML (its text
/// may fail the config's checks and still name the baseline): paths resolved against the
/// config's folder as the config resolves them.
fn base_baseline_section(path: &Path, text: &[u8]) -> Option<(PathBuf, Option<PathBuf>)> {
    let yaml = serde_norway::from_slice::<serde_norway::Value>(text).ok()?;
    let folder = crate::input::config::folder_of(path);
    let named = |key: &str| {
        (yaml["baseline"][key].as_str()).map(|p| crate::util::workspace::resolve(folder, p))
    };
    named("path").map(|file| (file, named("anchor")))
}

/// The baseline stored on the base commit: at the path the base's config names when it names
/// one (a pull request cannot move it away), else where the pull request's config says; `None`
/// when the base holds no file at either.
fn stored_baseline(
    config: &Config,
    (base, reference): (&TrustedBase, Option<&str>),
    base_section: Option<(PathBuf, Option<PathBuf>)>,
) -> Result<Option<(BaselineConfig, Baseline, Vec<u8>)>, InputError> {
    let proposed = config
        .baseline
        .as_ref()
        .map(|b| (b.path.clone(), b.anchor.clone()));
    for (path, anchor) in base_section.into_iter().chain(proposed) {
        if let Some(bytes) = stored_bytes(base, reference, &path)? {
            let baseline = crate::analysis::datasets::recorded(&path, &bytes)?;
            let anchor = anchor.or_else(|| config.baseline.as_ref()?.anchor.clone());
            let section = BaselineConfig {
                path,
                required: true,
                anchor,
            };
            return Ok(Some((section, baseline, bytes)));
        }
    }
    Ok(None)
}

/// The gate a repairing pull request is judged with: the one the baseline recorded, else the
/// strictest (no drop, no regressed item, on the baseline's first metric, its reference unless
/// the config said otherwise).
fn recorded_gate(baseline: &Baseline) -> GateConfig {
    baseline.gate.clone().unwrap_or_else(|| GateConfig {
        metric: baseline.metrics.first().cloned(),
        ..GateConfig::default()
    })
}

fn short(base: &TrustedBase) -> &str {
    crate::input::config::short_commit(&base.commit)
}
