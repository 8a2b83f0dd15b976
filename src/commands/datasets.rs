//! What only a config with `datasets:` needs besides the one finish path
//! ([`super::runs::Runs`] holds its datasets, as it holds a `dataset:` config's one): the
//! outputs it refuses, the shards of each dataset in a merge, and the sectioned baseline.

use super::finish;
use super::Outputs;
use crate::analysis::baseline::Baseline;
use crate::analysis::datasets::sectioned_baseline;
use crate::input::config::{in_entry, Config};
use crate::input::trusted::Snapshot;
use crate::report::summary::{self, Summary};
use crate::score::evaluation::Evaluation;
use crate::util::error::InputError;
use crate::util::log::{in_actions, log_block};
use anyhow::Context;
use std::path::{Path, PathBuf};

/// Refuses, before any scoring, the outputs a run over several datasets does not write.
pub(super) fn check_outputs(config: &Config, outputs: &Outputs) -> anyhow::Result<()> {
    if !config.is_multi() {
        return Ok(());
    }
    anyhow::ensure!(
        outputs.scatter.is_none(),
        "config {}: `datasets`: `--scatter` is written for one dataset only; drop it, or run a \
         config with `dataset:`",
        config.path.display()
    );
    Ok(())
}

/// The shards of `shards` that scored this config's dataset, merged (see
/// [`crate::ci::shard::merge`]).
pub(super) fn merged(
    (one, snapshot): (&Config, &Snapshot),
    shards: &[PathBuf],
) -> Result<Evaluation, InputError> {
    let mut own = Vec::new();
    for path in shards {
        if crate::ci::shard::shard_dataset(path)?.as_deref() == Some(one.dataset_name()) {
            own.push(path.clone());
        }
    }
    crate::ci::shard::merge((one, snapshot), &own)
}

/// Refuses a shard file that scored none of the config's datasets (a one-dataset shard, or one
/// of a dataset the config does not name), naming the file.
pub(super) fn check_shards(config: &Config, shards: &[PathBuf]) -> Result<(), InputError> {
    for path in shards {
        let dataset = crate::ci::shard::shard_dataset(path)?;
        if !(config.datasets.iter()).any(|e| Some(&e.name) == dataset.as_ref()) {
            return Err(InputError::malformed(
                path,
                "line 1",
                format!(
                    "not a shard of a dataset of this config ({}): score it with \
                     `sqlgate eval --shard` on this config",
                    dataset.map_or("a one-dataset shard".into(), |n| format!("dataset `{n}`"))
                ),
            ));
        }
    }
    Ok(())
}

/// The systems a sectioned baseline holds, counted as a reader counts them: `2 systems × 2
/// datasets` when every dataset holds the same systems, else each dataset's count
/// (`spider: 2 systems, bird: 1 system`), never the sum of the two (which counts a system once
/// per dataset).
fn stored_systems(sections: &[(String, Baseline)]) -> String {
    let names = |baseline: &Baseline| baseline.systems.keys().cloned().collect::<Vec<_>>();
    let systems = |count: usize| match count {
        1 => "1 system".to_string(),
        n => format!("{n} systems"),
    };
    let first = sections.first().map(|(_, b)| names(b)).unwrap_or_default();
    if sections.iter().all(|(_, b)| names(b) == first) {
        return format!("{} × {} datasets", systems(first.len()), sections.len());
    }
    (sections.iter())
        .map(|(name, b)| format!("{name}: {}", systems(b.systems.len())))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Scores every dataset and writes their baselines as one file at `path` (one section per
/// dataset, see [`crate::analysis::datasets`]); prints each dataset's summary. Returns what it
/// stored, counted for what it counts (see [`stored_systems`]).
pub(super) fn write_sectioned_baseline(
    (config, snapshot): (&Config, &Snapshot),
    path: &Path,
    commit: &str,
) -> anyhow::Result<String> {
    let mut sections = Vec::new();
    for one in config.dataset_configs() {
        let evaluation = crate::score::evaluation::evaluate_for_baseline(&one, snapshot)
            .map_err(|e| in_entry(&one, e))?;
        let baseline = Baseline::from_evaluation(&one, &evaluation, commit.to_string())
            .map_err(|e| in_entry(&one, e))?;
        let summary = Summary::of(&evaluation);
        let human = summary::human(&evaluation, &summary);
        let text = format!("dataset `{}`:\n{human}", one.dataset_name());
        print!("{}", log_block(&text, in_actions()));
        sections.push((one.dataset_name().to_string(), baseline));
    }
    let systems = stored_systems(&sections);
    let text = serde_json::to_string_pretty(&sectioned_baseline(&sections))? + "\n";
    let markers = [crate::input::config::BASELINE_MARKER];
    finish::check_output(config, "baseline.path", path, &markers)?;
    crate::util::fs::write_atomically(path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(systems)
}
