//! Sharded runs over an Actions matrix: each shard writes its per-item JSONL behind a header
//! naming the run and ahead of a trailer holding the SHA-256 of everything before it; `merge`
//! refuses shards of other configs, predictions, datasets or versions, edited or truncated
//! shards, records with unknown outcomes or values out of range, and overlapping or missing
//! shards, then rebuilds the exact evaluation an unsharded run makes.

use crate::input::config::Config;
use crate::input::trusted::Snapshot;
use crate::metrics::{check_value, Details, Outcome, PartialCredit, Score, PARTIAL_CREDIT_KEYS};
use crate::score::evaluation::{fingerprint, prepare, Evaluation, ItemResult, Prepared, Shard};
use crate::score::stability::Reasons;
use crate::util::error::{read_utf8, InputError};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use std::io::Write;
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
    /// The trusted base commit the shard was scored against (a pull-request run), so a shard
    /// scored with the pull request's own config, or for another base, is never merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted_base: Option<String>,
    /// The `datasets` entry the shard scored, in a config with several datasets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// The Actions run that wrote the shard ([`actions_run`]), so `merge` takes only its own
    /// run's shards, never one cached, downloaded or left from another run; absent outside
    /// Actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// What the shard's run carries besides its records (cache digests, suite manifests, notes
    /// on sqlgate's state), so the merged evaluation records and reports what an unsharded run
    /// does.
    #[serde(default, flatten)]
    pub state: ShardState,
}

/// The parts of an [`Evaluation`] that are not per-item records.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardState {
    /// [`Evaluation::provider_cache`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_cache: Vec<String>,
    /// [`Evaluation::gold_cache`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gold_cache: Vec<String>,
    /// [`Evaluation::suite_manifests`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suite_manifests: Vec<String>,
    /// [`Evaluation::notes`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ShardState {
    /// Adds `other`'s entries that are not here yet, keeping first-seen order.
    fn absorb(&mut self, other: ShardState) {
        fn union(into: &mut Vec<String>, from: Vec<String>) {
            for entry in from {
                if !into.contains(&entry) {
                    into.push(entry);
                }
            }
        }
        union(&mut self.provider_cache, other.provider_cache);
        union(&mut self.gold_cache, other.gold_cache);
        union(&mut self.suite_manifests, other.suite_manifests);
        union(&mut self.notes, other.notes);
    }
}

#[derive(Serialize, Deserialize)]
struct HeaderLine {
    sqlgate_shard: ShardHeader,
}

/// The first line of a shard file (the per-pair JSONL lines follow it), which `merge` checks
/// against its own config, dataset and version.
pub fn shard_header(
    (config, snapshot): (&Config, &Snapshot),
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
            trusted_base: snapshot.base_commit.clone(),
            dataset: config.dataset_name.clone(),
            run: actions_run(),
            state: ShardState {
                provider_cache: evaluation.provider_cache.clone(),
                gold_cache: evaluation.gold_cache.clone(),
                suite_manifests: evaluation.suite_manifests.clone(),
                notes: evaluation.notes.clone(),
            },
        },
    };
    let header = serde_json::to_string(&header).expect("the header serializes");
    Ok(header + "\n")
}

/// The Actions run this process belongs to, `<GITHUB_REPOSITORY>/<GITHUB_RUN_ID>` (the same
/// for every job and re-run attempt of one workflow run); `None` outside Actions.
pub fn actions_run() -> Option<String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    Some(format!(
        "{}/{}",
        var("GITHUB_REPOSITORY")?,
        var("GITHUB_RUN_ID")?
    ))
}

/// The last line of a shard file: the SHA-256 of every byte before it.
#[derive(Serialize, Deserialize)]
struct TrailerLine {
    sqlgate_shard_sha256: String,
}

/// Passes writes on while hashing them.
struct Hashing<'a> {
    out: &'a mut dyn Write,
    hasher: Sha256,
}

impl Write for Hashing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.out.write(buf)?;
        self.hasher.update(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Writes a shard file: `header` (from [`shard_header`]), one JSONL line per (system, item),
/// then the trailer with the SHA-256 of both, which `merge` checks.
pub fn write_shard(
    header: &str,
    evaluation: &Evaluation,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut hashing = Hashing {
        out,
        hasher: Sha256::new(),
    };
    hashing.write_all(header.as_bytes())?;
    crate::report::jsonl::write_jsonl(evaluation, &mut hashing)?;
    let trailer = TrailerLine {
        sqlgate_shard_sha256: crate::util::digest::hex(&hashing.hasher.finalize()),
    };
    serde_json::to_writer(&mut *out, &trailer)?;
    out.write_all(b"\n")
}

/// The content of a shard file without its trailer, once the trailer's digest matches it.
fn verified_body<'t>(path: &Path, text: &'t str) -> Result<&'t str, InputError> {
    let trimmed = text.strip_suffix('\n').unwrap_or(text);
    let start = trimmed.rfind('\n').map_or(0, |i| i + 1);
    let line = format!("line {}", text[..start].lines().count() + 1);
    let trailer: TrailerLine = serde_json::from_str(&trimmed[start..]).map_err(|_| {
        InputError::malformed(
            path,
            &line,
            "no digest trailer: the shard is truncated or was not written by this sqlgate; \
             score the shard again",
        )
    })?;
    let body = &text[..start];
    let actual = crate::util::digest::hex(&Sha256::digest(body.as_bytes()));
    if actual != trailer.sqlgate_shard_sha256 {
        return Err(InputError::malformed(
            path,
            &line,
            "the shard's content does not match its digest: it was edited after sqlgate \
             wrote it; score the shard again",
        ));
    }
    Ok(body)
}

/// The `datasets` entry a shard file names in its header (`None` for a one-dataset shard or a
/// file that is not a shard, which [`merge`] then refuses with its reason).
pub fn shard_dataset(path: &Path) -> Result<Option<String>, InputError> {
    let text = read_utf8(path)?;
    Ok(text
        .lines()
        .next()
        .and_then(|line| serde_json::from_str::<HeaderLine>(line).ok())
        .and_then(|header| header.sqlgate_shard.dataset))
}

/// Joins shard files into the evaluation an unsharded run of `config` produces.
/// The shards are the run's own: the trust stage refused committed ones
/// (`trust::refuse_committed_shards`).
pub fn merge(
    (config, snapshot): (&Config, &Snapshot),
    paths: &[PathBuf],
) -> Result<Evaluation, InputError> {
    let Prepared {
        metrics,
        dataset,
        systems,
        overrides,
    } = prepare(config, snapshot)?;
    let metrics: Vec<String> = metrics.iter().map(|m| m.name().to_string()).collect();
    let expected = ShardHeader {
        shard: 0,
        of: 0,
        fingerprint: fingerprint(config, &systems)?,
        dataset_sha256: dataset.sha256.clone(),
        sqlgate_version: env!("CARGO_PKG_VERSION").to_string(),
        trusted_base: snapshot.base_commit.clone(),
        dataset: config.dataset_name.clone(),
        run: actions_run(),
        state: ShardState::default(),
    };
    let mut state = ShardState::default();
    let items = dataset.items.len();
    let mut slots: Vec<Option<PairScores>> = vec![None; systems.len() * items];
    let mut seen_shards: Vec<usize> = Vec::new();
    let mut count = None;
    for path in paths {
        let text = read_utf8(path)?;
        let header = read_header(path, text.lines().next(), &expected)?;
        let lines = verified_body(path, &text)?.lines().skip(1);
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
        state.absorb(header.state);
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
    state.provider_cache.sort();
    state.gold_cache.sort();
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
            let (scores, unstable) = scores.ok_or_else(|| InputError::Config {
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
                faulted: false,
                unstable,
            })
        })
        .collect::<Result<_, InputError>>()?;
    Ok(Evaluation {
        dataset,
        systems,
        metrics,
        results,
        executor: None,
        provider_cache: state.provider_cache,
        gold_cache: state.gold_cache,
        data_digests: None,
        suite_manifests: state.suite_manifests,
        notes: state.notes,
        timing: Default::default(),
        overrides,
        gold_ms: Default::default(),
        suite_digests: crate::score::suite_digest::of(config)?,
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
    if header.dataset != expected.dataset {
        let name = |d: &Option<String>| {
            d.as_deref()
                .map_or("(one dataset)".into(), |n| format!("`{n}`"))
        };
        return Err(fail(format!(
            "scored the dataset {}, this merge is of {}",
            name(&header.dataset),
            name(&expected.dataset)
        )));
    }
    if header.dataset_sha256 != expected.dataset_sha256 {
        return Err(fail("scored another dataset".into()));
    }
    if header.fingerprint != expected.fingerprint {
        return Err(fail("scored another config or other predictions".into()));
    }
    if header.trusted_base != expected.trusted_base {
        return Err(fail(format!(
            "scored against the trusted base {}, this merge trusts {}: score every shard with \
             the same `--trusted-base`",
            header.trusted_base.as_deref().unwrap_or("(none)"),
            expected.trusted_base.as_deref().unwrap_or("(none)")
        )));
    }
    if header.run != expected.run {
        let run = |r: &Option<String>| r.clone().unwrap_or_else(|| "no Actions run".into());
        return Err(fail(format!(
            "written by {}, this merge runs in {}: merge only the shards the `eval --shard` \
             jobs of this run wrote",
            run(&header.run),
            run(&expected.run)
        )));
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
/// One (system, item)'s scores as a shard line holds them, and why its verdict is unstable.
type PairScores = (Vec<Score>, Reasons);

fn read_record(
    record: &Json,
    systems: &[crate::input::predictions::System],
    items: usize,
    metrics: &[String],
) -> Result<(usize, PairScores), String> {
    let name = record["system"].as_str().ok_or("no `system`")?;
    let system = systems
        .iter()
        .position(|s| s.name == name)
        .ok_or_else(|| format!("unknown system `{name}`"))?;
    let index = record["index"]
        .as_u64()
        .filter(|&i| i < items as u64)
        .ok_or_else(|| {
            format!(
                "`index` {} is not an item of the dataset ({items} items)",
                record["index"]
            )
        })? as usize;
    let scores = metrics
        .iter()
        .map(|metric| {
            let outcome_name = record["outcome"][metric]
                .as_str()
                .ok_or_else(|| format!("no outcome for `{metric}`"))?;
            let outcome = Outcome::parse(outcome_name)
                .ok_or_else(|| format!("unknown outcome `{outcome_name}` for `{metric}`"))?;
            let error = record["error"][metric].as_str().map(str::to_string);
            let in_range = |value: f64| check_value(metric, value);
            let (value, details) = match &record["metrics"][metric] {
                Json::Object(_) => {
                    let credit = PartialCredit::from_json(&record["metrics"][metric])
                        .ok_or_else(|| format!("unreadable value object of `{metric}`"))?;
                    for sub in PARTIAL_CREDIT_KEYS {
                        credit.get(sub).map(in_range).transpose()?;
                    }
                    (credit.get("ex"), Some(Details::new(credit)))
                }
                Json::Number(number) => {
                    let value = number.as_f64().ok_or("unreadable number")?;
                    in_range(value)?;
                    (Some(value), components(record, metric)?)
                }
                Json::Null if !outcome.is_scored() => (None, components(record, metric)?),
                Json::Null => {
                    return Err(format!(
                        "`{metric}` is `null` but its outcome `{outcome_name}` says it was scored"
                    ))
                }
                other => return Err(format!("`{metric}` is {other}, not a number")),
            };
            Ok(Score {
                value,
                outcome,
                error,
                details,
            })
        })
        .collect::<Result<Vec<Score>, String>>()?;
    let unstable = match &record["unstable"] {
        Json::Null => Reasons::NONE,
        Json::String(names) => Reasons::parse(names)
            .ok_or_else(|| format!("unknown `unstable` reason in `{names}`"))?,
        other => return Err(format!("`unstable` is {other}, not a reason's name")),
    };
    Ok((system * items + index, (scores, unstable)))
}

/// A record's `<metric>_components`, when it has them, read by the metric that wrote them.
fn components(record: &Json, metric: &str) -> Result<Option<Details>, String> {
    let Some(json) = record.get(format!("{metric}_components")) else {
        return Ok(None);
    };
    let reader = crate::metrics::build(metric)?;
    match reader.read_details(json) {
        Some(details) => Ok(Some(details)),
        None => Err(format!("unreadable `{metric}_components`")),
    }
}
