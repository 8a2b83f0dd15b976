//! The time budget of an item whose gold is slow (issue 45): the trusted baseline records each
//! gold's measured time ([`GoldTimes`]), and an item whose gold took more than
//! [`TIMING_SHARE`] of `execution.timeout_ms` there runs every query of its scoring (its gold,
//! its prediction, its test suite) under [`BUDGET_FACTOR`] times that time, at most
//! [`CEILING_FACTOR`] times the configured limit. Such a gold no longer sits at its deadline,
//! where its verdict (and the prediction's) would depend on the machine's load.
//!
//! Only the trusted baseline sets a budget (the base commit's in a pull-request run, read
//! through the trust snapshot), never the pull request's files, and the ceiling bounds the run:
//! no item's queries take more than [`CEILING_FACTOR`] times the configured limit each.

use crate::input::config::Config;
use crate::input::trusted::Snapshot;
use crate::score::stability::TIMING_SHARE;
use crate::util::error::InputError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// Each gold's measured time in milliseconds, by item index (gold order): what a run records in
/// its baseline, for the budgets of later runs.
pub type GoldTimes = BTreeMap<usize, u64>;

/// A slow gold's item runs under this many times the gold's recorded time, so that the gold sits
/// at a quarter of its budget, far from [`TIMING_SHARE`].
pub const BUDGET_FACTOR: u32 = 4;

/// No item's budget exceeds this many times `execution.timeout_ms`: the run stays bounded
/// whatever the baseline recorded.
pub const CEILING_FACTOR: u32 = 10;

/// The budget of an item whose gold took `gold` in the trusted baseline's run, under the run's
/// time limit `timeout`: `None` when the gold ran well inside the limit (at most
/// [`TIMING_SHARE`] of it), else `BUDGET_FACTOR × gold`, at least `timeout` and at most
/// `CEILING_FACTOR × timeout`.
pub fn budget(gold: Duration, timeout: Duration) -> Option<Duration> {
    if gold <= timeout.mul_f64(TIMING_SHARE) {
        return None;
    }
    Some((gold * BUDGET_FACTOR).clamp(timeout, timeout * CEILING_FACTOR))
}

/// The budgets of a run by item index: from the gold times the trusted baseline recorded (the
/// base commit's in a pull-request run; the baseline being replaced in `baseline update`), under
/// the run's time limit `timeout`; none without a baseline or gold times.
pub fn budgets(
    (config, snapshot): (&Config, &Snapshot),
    timeout: Duration,
) -> Result<BTreeMap<usize, Duration>, InputError> {
    let recorded = recorded(config, snapshot)?;
    Ok(recorded
        .into_iter()
        .filter_map(|(index, ms)| Some((index, budget(Duration::from_millis(ms), timeout)?)))
        .collect())
}

/// The gold times the trusted baseline records (empty without a baseline, or in one written
/// before they were).
fn recorded(config: &Config, snapshot: &Snapshot) -> Result<GoldTimes, InputError> {
    #[derive(Deserialize)]
    struct Recorded {
        #[serde(default)]
        gold_ms: GoldTimes,
    }
    let Some(section) = &config.baseline else {
        return Ok(GoldTimes::new());
    };
    let Some(bytes) = snapshot.read(&section.path)?.bytes else {
        return Ok(GoldTimes::new());
    };
    let Some(bytes) = config.baseline_section(&section.path, bytes)? else {
        return Ok(GoldTimes::new());
    };
    let recorded: Recorded = serde_json::from_slice(&bytes)
        .map_err(|e| InputError::malformed(&section.path, "gold_ms", e.to_string()))?;
    Ok(recorded.gold_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_gold_past_the_timing_share_earns_a_budget_bounded_by_the_ceiling() {
        let timeout = Duration::from_millis(1000);
        let ms = Duration::from_millis;
        assert_eq!(budget(ms(500), timeout), None);
        assert_eq!(budget(ms(501), timeout), Some(ms(2004)));
        assert_eq!(budget(ms(1500), timeout), Some(ms(6000)));
        assert_eq!(budget(ms(60_000), timeout), Some(ms(10_000)));
    }
}
