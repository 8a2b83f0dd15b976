//! The config's `execution` and `suite.distill` sections and their bounds: each number must lie
//! in a range that can neither exhaust the runner nor make every query fail (a `max_rows: 0`
//! would fail every gold query). The messages name the key and the allowed range.

use serde::Deserialize;

/// The longest `execution.timeout_ms`: one hour.
const MAX_TIMEOUT_MS: u64 = 3_600_000;
/// The largest `execution.max_rows`.
const MAX_ROWS: usize = 100_000_000;
/// The smallest and largest `execution.max_result_bytes`: 1 KiB and 4 GiB.
const RESULT_BYTES: (usize, usize) = (1 << 10, 4 << 30);
/// The smallest and largest `execution.max_memory`: 64 MiB and 1 TiB.
const MEMORY_BYTES: (usize, usize) = (64 << 20, 1 << 40);
/// The smallest and largest `execution.max_copy_bytes`: 1 MiB and 1 TiB.
const COPY_BYTES: (u64, u64) = (1 << 20, 1 << 40);
/// The shortest and longest `execution.item_timeout_ms`: one second and one hour.
const ITEM_TIMEOUT_MS: (u64, u64) = (1_000, 3_600_000);
/// The smallest and largest `execution.max_steps`: 10^6 and 10^13.
const STEPS: (u64, u64) = (1_000_000, 10_000_000_000_000);
/// The largest `suite.distill.max_random_dbs`.
const MAX_RANDOM_DBS: u64 = 100_000;
/// The largest `suite.distill.rows` bound: generated tables stay small, as in the paper.
const MAX_GENERATED_ROWS: usize = 10_000;

/// `suite.distill`: how a distilled suite is generated (seed 000, Algorithm 1).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "the `suite.distill` section: a map (docs/CONFIG.md)")]
pub struct DistillConfig {
    /// Seed of every random choice; the same seed gives byte-identical suites.
    #[serde(default = "default_distill_seed")]
    pub seed: u64,
    /// Random databases sampled per schema (the paper: 1000).
    #[serde(default = "default_max_random_dbs")]
    pub max_random_dbs: u64,
    /// Inclusive bounds `[min, max]` on the rows of each generated table.
    #[serde(default = "default_rows")]
    pub rows: [usize; 2],
}

impl Default for DistillConfig {
    fn default() -> Self {
        DistillConfig {
            seed: default_distill_seed(),
            max_random_dbs: default_max_random_dbs(),
            rows: default_rows(),
        }
    }
}

fn default_distill_seed() -> u64 {
    7
}

fn default_max_random_dbs() -> u64 {
    1000
}

fn default_rows() -> [usize; 2] {
    [0, 30]
}

/// Execution section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "the `execution` section: a map such as `{ timeout_ms: 5000 }`")]
pub struct ExecutionConfig {
    /// Wall-clock limit per query, enforced inside SQLite.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Worker threads: `auto` or a number.
    #[serde(default)]
    pub threads: Threads,
    /// A result with more rows than this is an error.
    #[serde(default = "default_max_rows")]
    pub max_rows: usize,
    /// A result larger than this many bytes is an error.
    #[serde(default = "default_max_result_bytes")]
    pub max_result_bytes: usize,
    /// The run's memory budget, shared by all workers: SQLite's heap and the results items hold.
    #[serde(default = "default_max_memory")]
    pub max_memory: usize,
    /// State-changing items (`dataset.kind: livesql`, `bird-critic`): the most bytes an item's
    /// private copy of its database may grow to; a prediction that writes past it fails.
    #[serde(default = "default_max_copy_bytes")]
    pub max_copy_bytes: u64,
    /// State-changing items: the most SQLite virtual-machine steps an item may take over all
    /// its statements and test cases, a deadline that is the same on every machine.
    #[serde(default = "default_max_steps")]
    pub max_steps: u64,
    /// State-changing items: the wall-clock time an item may take over all its statements and
    /// test cases, after which it is stopped as the official wrapper kills it (a timeout);
    /// absent, the evaluator's own (180 s for SQLite, 300 s on a server). A nightly run can
    /// give a never-ending prediction less; an item that would end between the two fails.
    #[serde(default)]
    pub item_timeout_ms: Option<u64>,
}

impl Default for ExecutionConfig {
    fn default() -> Self {
        ExecutionConfig {
            timeout_ms: default_timeout_ms(),
            threads: Threads::Auto,
            max_rows: default_max_rows(),
            max_result_bytes: default_max_result_bytes(),
            max_memory: default_max_memory(),
            max_copy_bytes: default_max_copy_bytes(),
            max_steps: default_max_steps(),
            item_timeout_ms: None,
        }
    }
}

/// Worker thread count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Threads {
    /// One per available core.
    #[default]
    Auto,
    /// Exactly this many.
    Count(usize),
}

impl<'de> Deserialize<'de> for Threads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Count(usize),
            Word(String),
        }
        match Raw::deserialize(d)? {
            Raw::Count(0) => Err(serde::de::Error::custom("threads must be at least 1")),
            Raw::Count(n) => Ok(Threads::Count(n)),
            Raw::Word(w) if w == "auto" => Ok(Threads::Auto),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "threads must be `auto` or a positive number, not `{w}`"
            ))),
        }
    }
}

fn default_timeout_ms() -> u64 {
    30_000
}

fn default_max_rows() -> usize {
    1_000_000
}

fn default_max_result_bytes() -> usize {
    256 << 20
}

fn default_max_memory() -> usize {
    crate::util::memory::DEFAULT_MAX_MEMORY
}

fn default_max_copy_bytes() -> u64 {
    1 << 30
}

fn default_max_steps() -> u64 {
    1_000_000_000
}

impl ExecutionConfig {
    /// Checks the timeout, row, result-size, memory, copy-size, step and item-timeout bounds; the error names the key and the
    /// range.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_TIMEOUT_MS).contains(&self.timeout_ms) {
            return Err(format!(
                "`execution.timeout_ms` must be between 1 and {MAX_TIMEOUT_MS} (one hour), not {}",
                self.timeout_ms
            ));
        }
        if !(1..=MAX_ROWS).contains(&self.max_rows) {
            return Err(format!(
                "`execution.max_rows` must be between 1 and {MAX_ROWS}, not {}",
                self.max_rows
            ));
        }
        let (min_bytes, max_bytes) = RESULT_BYTES;
        if !(min_bytes..=max_bytes).contains(&self.max_result_bytes) {
            return Err(format!(
                "`execution.max_result_bytes` must be between {min_bytes} (1 KiB) and \
                 {max_bytes} (4 GiB), not {}",
                self.max_result_bytes
            ));
        }
        let (min_memory, max_memory) = MEMORY_BYTES;
        if !(min_memory..=max_memory).contains(&self.max_memory) {
            return Err(format!(
                "`execution.max_memory` must be between {min_memory} (64 MiB) and \
                 {max_memory} (1 TiB), not {}",
                self.max_memory
            ));
        }
        let (min_copy, max_copy) = COPY_BYTES;
        if !(min_copy..=max_copy).contains(&self.max_copy_bytes) {
            return Err(format!(
                "`execution.max_copy_bytes` must be between {min_copy} (1 MiB) and \
                 {max_copy} (1 TiB), not {}",
                self.max_copy_bytes
            ));
        }
        let (min_steps, max_steps) = STEPS;
        if !(min_steps..=max_steps).contains(&self.max_steps) {
            return Err(format!(
                "`execution.max_steps` must be between {min_steps} and {max_steps}, not {}",
                self.max_steps
            ));
        }
        self.check_item_timeout()
    }

    /// The wall-clock deadline of a state-changing item: `item_timeout_ms` when given, else the
    /// evaluator's own `default`.
    pub fn item_deadline(&self, default: std::time::Duration) -> std::time::Duration {
        (self.item_timeout_ms).map_or(default, std::time::Duration::from_millis)
    }

    /// Checks `item_timeout_ms`, when given, against [`ITEM_TIMEOUT_MS`].
    fn check_item_timeout(&self) -> Result<(), String> {
        let (shortest, longest) = ITEM_TIMEOUT_MS;
        match self.item_timeout_ms {
            Some(ms) if !(shortest..=longest).contains(&ms) => Err(format!(
                "`execution.item_timeout_ms` must be between {shortest} (one second) and \
                 {longest} (one hour), not {ms}"
            )),
            _ => Ok(()),
        }
    }
}

impl DistillConfig {
    /// Checks the number of random databases and the row range; the error names the key.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_RANDOM_DBS).contains(&self.max_random_dbs) {
            return Err(format!(
                "`suite.distill.max_random_dbs` must be between 1 and {MAX_RANDOM_DBS}, not {}",
                self.max_random_dbs
            ));
        }
        let [min_rows, max_rows] = self.rows;
        if min_rows > max_rows || max_rows > MAX_GENERATED_ROWS {
            return Err(format!(
                "`suite.distill.rows` must be `[min, max]` with min <= max <= \
                 {MAX_GENERATED_ROWS}, not [{min_rows}, {max_rows}]"
            ));
        }
        Ok(())
    }
}
