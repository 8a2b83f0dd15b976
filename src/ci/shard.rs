//! Sharded runs over an Actions matrix: each shard writes its per-item JSONL behind a header
//! naming the run; `merge` refuses shards of other configs, predictions, datasets or versions,
//! and overlapping or missing shards, then rebuilds the exact evaluation an unsharded run makes.

use crate::input::config::Config;
use crate::metrics::{Details, Outcome, PartialCredit, Score};
use crate::score::evaluation::{fingerprint, prepare, Evaluation, ItemResult, Prepared, Shard};
use crate::util::error::{read_utf8, InputError};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// The first line of a shard file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardHeader {
    /// 1-based shard number.
    pub shard: usize,
    /// Number of shards.
    pub of: usize,
    /// Config and predictions fingerprint.
    pub fingerprint: String,
    /// Dataset fingerprint.
    pub dataset_sha256: String,
    /// sqlgate version.
    pub sqlgate_version: String,
}

#[derive(Serialize, Deserialize)]
struct HeaderLine {
    sqlgate_shard: ShardHeader,
}

/// The first line of a shard file (the per-pair JSONL lines follow it), which `merge` checks
/// against its own config, dataset and version.
pub fn shard_header(
    config: &Config,
    evaluation: &Evaluation,
    shard: Shard,
) -> Result<String, InputError> {
    let header = HeaderLine {
        sqlgate_shard: ShardHeader {
            shard: shard.index + 1,
            of: shard.count,
            fingerprint: fingerprint(config, &evaluation.systems)?,
            dataset_sha256: evaluation.dataset.sha256.clone(),
            sqlgate_version: env!("CARGO_PKG_VERSION").to_string(),
        },
    };
    let header = serde_json::to_string(&header).expect("the header serializes");
    Ok(header + "\n")
}

/// Joins shard files into the evaluation an unsharded run of `config` produces.
pub fn merge(config: &Config, paths: &[PathBuf]) -> Result<Evaluation, InputError> {
    let Prepared {
        metrics,
        dataset,
        systems,
    } = prepare(config)?;
    let metrics: Vec<String> = metrics.iter().map(|m| m.name().to_string()).collect();
    let expected = ShardHeader {
        shard: 0,
        of: 0,
        fingerprint: fingerprint(config, &systems)?,
        dataset_sha256: dataset.sha256.clone(),
        sqlgate_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let items = dataset.items.len();
    let mut slots: Vec<Option<Vec<Score>>> = vec![None; systems.len() * items];
    let mut seen_shards: Vec<usize> = Vec::new();
    let mut count = None;
    for path in paths {
        let text = read_utf8(path)?;
        let mut lines = text.lines();
        let header = read_header(path, lines.next(), &expected)?;
        if *count.get_or_insert(header.of) != header.of {
            return Err(InputError::malformed(
                path,
                "line 1",
                format!(
                    "shard of {} but other shards are of {}",
                    header.of,
                    count.unwrap_or(0)
                ),
            ));
        }
        if seen_shards.contains(&header.shard) {
            return Err(InputError::malformed(
                path,
                "line 1",
                format!("shard {}/{} is given twice", header.shard, header.of),
            ));
        }
        seen_shards.push(header.shard);
        for (number, line) in lines.enumerate() {
            let location = format!("line {}", number + 2);
            let record: Json = serde_json::from_str(line)
                .map_err(|e| InputError::malformed(path, &location, e.to_string()))?;
            let (slot, scores) = read_record(&record, &systems, items, &metrics)
                .map_err(|message| InputError::malformed(path, &location, message))?;
            if slots[slot].replace(scores).is_some() {
                return Err(InputError::malformed(
                    path,
                    &location,
                    "this (system, item) is already in another shard: the shards overlap",
                ));
            }
        }
    }
    let count = count.unwrap_or(0);
    let missing: Vec<usize> = (1..=count).filter(|s| !seen_shards.contains(s)).collect();
    if paths.is_empty() || !missing.is_empty() {
        return Err(InputError::Config {
            path: config.path.clone(),
            message: format!("merge: shards {missing:?} of {count} are missing"),
        });
    }
    let results = slots
        .into_iter()
        .enumerate()
        .map(|(pair, scores)| {
            let (system, index) = (pair / items, pair % items);
            let scores = scores.ok_or_else(|| InputError::Config {
                path: config.path.clone(),
                message: format!(
                    "merge: no shard scored system `{}` on item {index}",
                    systems[system].name
                ),
            })?;
            Ok(ItemResult {
                system,
                index,
                scores,
            })
        })
        .collect::<Result<_, InputError>>()?;
    Ok(Evaluation {
        dataset,
        systems,
        metrics,
        results,
    })
}

fn read_header(
    path: &Path,
    line: Option<&str>,
    expected: &ShardHeader,
) -> Result<ShardHeader, InputError> {
    let fail = |message: String| InputError::malformed(path, "line 1", message);
    let header = line
        .and_then(|l| serde_json::from_str::<HeaderLine>(l).ok())
        .ok_or_else(|| fail("not a sqlgate shard (no header line)".into()))?
        .sqlgate_shard;
    if header.sqlgate_version != expected.sqlgate_version {
        return Err(fail(format!(
            "written by sqlgate {}, this is {}",
            header.sqlgate_version, expected.sqlgate_version
        )));
    }
    if header.dataset_sha256 != expected.dataset_sha256 {
        return Err(fail("scored another dataset".into()));
    }
    if header.fingerprint != expected.fingerprint {
        return Err(fail("scored another config or other predictions".into()));
    }
    if header.of == 0 || !(1..=header.of).contains(&header.shard) {
        return Err(fail(format!(
            "invalid shard {}/{}",
            header.shard, header.of
        )));
    }
    Ok(header)
}

/// A JSONL record back into its slot (system * items + index) and scores.
fn read_record(
    record: &Json,
    systems: &[crate::input::predictions::System],
    items: usize,
    metrics: &[String],
) -> Result<(usize, Vec<Score>), String> {
    let name = record["system"].as_str().ok_or("no `system`")?;
    let system = systems
        .iter()
        .position(|s| s.name == name)
        .ok_or_else(|| format!("unknown system `{name}`"))?;
    let index = record["index"]
        .as_u64()
        .map(|i| i as usize)
        .filter(|&i| i < items)
        .ok_or("`index` is not a gold item")?;
    let scores = metrics
        .iter()
        .map(|metric| {
            let outcome_name = record["outcome"][metric]
                .as_str()
                .ok_or_else(|| format!("no outcome for `{metric}`"))?;
            let outcome = Outcome::parse(outcome_name)
                .ok_or_else(|| format!("unknown outcome `{outcome_name}`"))?;
            let error = record["error"][metric].as_str().map(str::to_string);
            let value = &record["metrics"][metric];
            if value.is_object() {
                let credit = PartialCredit::from_json(value)
                    .ok_or_else(|| format!("unreadable value object of `{metric}`"))?;
                return Ok(Score {
                    value: credit.get("ex"),
                    outcome,
                    error,
                    details: Some(Details::PartialCredit(credit)),
                });
            }
            Ok(Score {
                value: value.as_f64(),
                outcome,
                error,
                details: match record.get(format!("{metric}_components")) {
                    Some(json) => Some(
                        Details::from_json(json)
                            .ok_or_else(|| format!("unreadable `{metric}_components`"))?,
                    ),
                    None => None,
                },
            })
        })
        .collect::<Result<Vec<Score>, String>>()?;
    Ok((system * items + index, scores))
}
