//! BIRD's Reward-based Valid Efficiency Score as `evaluation/evaluation_ves.py` of
//! bird-bench/mini_dev computes it.
//!
//! Official: a wrong (by BIRD's set equality, here the configured profile), failed or timed-out
//! prediction earns 0. A right one is timed against the gold `iterate_num` times (100); the
//! ratios gold time / prediction time lose their outliers (`clean_abnormal`: only ratios strictly
//! within 3 population standard deviations of the mean stay), their mean is the time ratio, and
//! the reward is 1.25 (ratio >= 2), 1 (>= 1), 0.75 (>= 0.5), 0.5 (>= 0.25) or 0.25. R-VES is the
//! mean of `sqrt(reward)` times 100; this metric's value is `sqrt(reward)`, so its mean times 100
//! is R-VES. When every ratio is equal nothing survives outlier removal and the official code
//! divides by zero, which its error handler scores 0; [`official_reward`] does the same.
//!
//! Timing here: both queries run once to warm up (that run also decides correctness), then they
//! are timed on the same cached connection, `rves.repetitions` repetitions (default 10; the
//! official count is 100). The official script opens a new connection for every run, so its times
//! include connecting. The spread of the ratios (their coefficient of variation) is reported per
//! item as the timing noise.
//!
//! Order (`rves.order`): `official` times the prediction then the gold in every repetition, as
//! `evaluation_ves.py` does; the second query of a pair tends to be the faster, so equal queries
//! get ratios below 1 and the reward 0.75. `abba` (the default) times gold, prediction, prediction,
//! gold: each repetition's ratio is its gold time sum over its prediction time sum, which cancels
//! a linear drift and the position effect (each query runs once after itself and once after the
//! other). Its time ratio is the geometric mean of the ratios (outliers removed on their
//! logarithms by the official 3-standard-deviation rule), so swapping gold and prediction inverts
//! it, where the official arithmetic mean favours whichever is the numerator; and a ratio within
//! its noise of 1 (its [`EQUAL_SPEED_CONFIDENCE`] Student's t interval holds 1) counts as equal speed (reward 1, the
//! official bucket of ratio 1), so timing noise does not decide items that sit on the ladder's
//! step between 1 and 0.75. The official buckets are kept.

use super::soft_f1::python_sum;
use super::{
    gold_and_prediction, gold_failure, prediction_failure, Detail, Details, Env, Metric, Outcome,
    Score,
};
use crate::engine::exec::ExecError;
use crate::input::config::{Config, RvesOrder};
use crate::input::dataset::GoldItem;
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::time::Instant;

/// The `rves` metric.
pub struct RewardVes;

/// One item's R-VES timing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// The reward (0, 0.25, 0.5, 0.75, 1 or 1.25).
    pub reward: f64,
    /// The official time ratio after outlier removal; `None` when no ratio survived.
    pub time_ratio: Option<f64>,
    /// Timed repetitions (each gives one ratio).
    pub repetitions: usize,
    /// Coefficient of variation of the measured ratios: the run-to-run noise.
    pub spread: f64,
}

impl Detail for Timing {
    fn to_json(&self) -> serde_json::Value {
        Timing::to_json(self)
    }
}

impl Timing {
    /// The JSON written to `rves_components`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "reward": self.reward,
            "time_ratio": self.time_ratio,
            "repetitions": self.repetitions,
            "ratio_spread": self.spread,
        })
    }

    /// Reads what [`Timing::to_json`] wrote.
    pub fn from_json(json: &serde_json::Value) -> Option<Timing> {
        Some(Timing {
            reward: json.get("reward")?.as_f64()?,
            time_ratio: json.get("time_ratio")?.as_f64(),
            repetitions: json.get("repetitions")?.as_u64()? as usize,
            spread: json.get("ratio_spread")?.as_f64()?,
        })
    }
}

/// The official `clean_abnormal`, mean and reward ladder on ratios gold time / prediction time:
/// (time ratio, reward); (`None`, 0) when outlier removal leaves nothing.
pub fn official_reward(ratios: &[f64]) -> (Option<f64>, f64) {
    let (mean, std) = mean_and_std(ratios);
    let kept: Vec<f64> = ratios
        .iter()
        .copied()
        .filter(|&x| x < mean + 3.0 * std && x > mean - 3.0 * std)
        .collect();
    if kept.is_empty() {
        return (None, 0.0);
    }
    let ratio = python_sum(&kept) / kept.len() as f64;
    (Some(ratio), official_bucket(ratio))
}

/// The official reward ladder on a time ratio.
fn official_bucket(ratio: f64) -> f64 {
    match ratio {
        0.0 => 0.0,
        r if r >= 2.0 => 1.25,
        r if r >= 1.0 => 1.0,
        r if r >= 0.5 => 0.75,
        r if r >= 0.25 => 0.5,
        _ => 0.25,
    }
}

/// Mean and population standard deviation.
fn mean_and_std(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let std = (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    (mean, std)
}

/// Two-sided confidence of the interval of the mean log ratio: a time ratio whose interval holds 1
/// counts as equal speed.
pub const EQUAL_SPEED_CONFIDENCE: f64 = 0.99;

/// Half the width of the [`EQUAL_SPEED_CONFIDENCE`] interval of the mean of `values` (Student's
/// t); 0 when one value gives no estimate of the noise.
fn confidence_half_width(values: &[f64]) -> f64 {
    let k = values.len() as f64;
    let (_, std) = mean_and_std(values);
    let degrees = k - 1.0;
    match StudentsT::new(0.0, 1.0, degrees) {
        Ok(t) if std > 0.0 => {
            let critical = t.inverse_cdf(0.5 + EQUAL_SPEED_CONFIDENCE / 2.0);
            critical * std * (k / degrees).sqrt() / k.sqrt()
        }
        _ => 0.0,
    }
}

/// The `abba` estimator: (geometric mean of the ratios after outlier removal on their logarithms,
/// reward on the official ladder, 1 when that mean is within its noise of 1).
pub fn abba_reward(ratios: &[f64]) -> (Option<f64>, f64) {
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let (mean, std) = mean_and_std(&logs);
    let within = |x: &f64| (x - mean).abs() < 3.0 * std;
    let mut kept: Vec<f64> = logs.iter().copied().filter(within).collect();
    if kept.is_empty() {
        kept = logs;
    }
    let (log_ratio, _) = mean_and_std(&kept);
    let ratio = log_ratio.exp();
    let reward = if log_ratio.abs() <= confidence_half_width(&kept) {
        1.0
    } else {
        official_bucket(ratio)
    };
    (Some(ratio), reward)
}

/// Which query a timed run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// The gold query.
    Gold,
    /// The predicted query.
    Prediction,
}

/// The timed runs of one repetition, in the order they run.
pub fn repetition_runs(order: RvesOrder) -> &'static [Query] {
    match order {
        RvesOrder::Abba => &[
            Query::Gold,
            Query::Prediction,
            Query::Prediction,
            Query::Gold,
        ],
        RvesOrder::Official => &[Query::Prediction, Query::Gold],
    }
}

/// Times `repetitions` repetitions in `order` through `time` (seconds of one run of a query; the
/// seam tests inject timings through) and gives one ratio per repetition: its gold time over its
/// prediction time, each summed over the repetition's runs. The first failure stops it, with the
/// query that failed.
pub fn timed_ratios<E>(
    order: RvesOrder,
    repetitions: usize,
    mut time: impl FnMut(Query) -> Result<f64, E>,
) -> Result<Vec<f64>, (Query, E)> {
    let mut ratios = Vec::with_capacity(repetitions);
    for _ in 0..repetitions {
        let (mut gold, mut predicted) = (0.0, 0.0);
        for &query in repetition_runs(order) {
            let seconds = time(query).map_err(|e| (query, e))?;
            match query {
                Query::Gold => gold += seconds,
                Query::Prediction => predicted += seconds,
            }
        }
        ratios.push(gold / predicted);
    }
    Ok(ratios)
}

/// The timing `order`'s estimator reads from the ratios (at least one).
pub fn estimate(order: RvesOrder, ratios: &[f64]) -> Timing {
    let (time_ratio, reward) = match order {
        RvesOrder::Abba => abba_reward(ratios),
        RvesOrder::Official => official_reward(ratios),
    };
    let (mean, std) = mean_and_std(ratios);
    Timing {
        reward,
        time_ratio,
        repetitions: ratios.len(),
        spread: std / mean,
    }
}

impl Metric for RewardVes {
    fn read_details(&self, json: &serde_json::Value) -> Option<Details> {
        Timing::from_json(json).map(Details::new)
    }

    fn name(&self) -> &'static str {
        "rves"
    }

    // No continuous score: the reward is 0 on every prediction its own comparison rejects; it
    // measures speed, not partial correctness.

    /// Timed runs per item, and the order and estimator that read them.
    fn settings(&self, config: &Config) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("rves_repetitions", config.rves.repetitions.into()),
            ("rves_order", format!("{:?}", config.rves.order).into()),
        ]
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        let (run, prediction) = match gold_and_prediction(env, item, prediction) {
            Ok(pair) => pair,
            Err(unscored) => return unscored,
        };
        let sql = env.profile.prepare_prediction(prediction);
        let gold_sql = &run.gold.prepared.sql;
        let predicted = match env.executor.run(run.db, &sql) {
            Ok(rows) => rows,
            Err(e) => return prediction_failure(e),
        };
        let order_matters = run.gold.prepared.order_matters;
        if !env
            .profile
            .same_result(run.rows(), &predicted, order_matters)
        {
            return Score::binary(false);
        }
        let timed = |query: Query| -> Result<f64, ExecError> {
            let timed_sql = match query {
                Query::Gold => gold_sql.as_str(),
                Query::Prediction => sql.as_str(),
            };
            let started = Instant::now();
            env.executor.run(run.db, timed_sql)?;
            Ok(started.elapsed().as_secs_f64().max(1e-9))
        };
        if let Err(e) = timed(Query::Gold) {
            return gold_failure(&e);
        }
        let ratios = match timed_ratios(env.rves_order, env.rves_repetitions, timed) {
            Ok(ratios) => ratios,
            Err((Query::Gold, e)) => return gold_failure(&e),
            Err((Query::Prediction, e)) => return prediction_failure(e),
        };
        let timing = estimate(env.rves_order, &ratios);
        Score {
            value: Some(timing.reward.sqrt()),
            outcome: Outcome::Match,
            error: None,
            details: Some(Details::new(timing)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tests/data/bird/ves_rewards.json: the official functions' time ratio and reward for each
    /// list of ratios (how it was made: tests/data/bird/README.md).
    #[test]
    fn rewards_equal_the_official_function() {
        let cases: Vec<serde_json::Value> =
            serde_json::from_str(include_str!("../../tests/data/bird/ves_rewards.json")).unwrap();
        assert!(cases.len() > 50);
        for case in cases {
            let ratios: Vec<f64> = case["ratios"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_f64().unwrap())
                .collect();
            let (ratio, reward) = official_reward(&ratios);
            assert_eq!(reward, case["reward"].as_f64().unwrap(), "{ratios:?}");
            match (ratio, case["time_ratio"].as_f64()) {
                (Some(ours), Some(official)) => {
                    assert!(
                        (ours - official).abs() <= 1e-12 * official.abs(),
                        "{ratios:?}"
                    )
                }
                (None, None) => {}
                other => panic!("{other:?} for {ratios:?}"),
            }
        }
    }
}

#[cfg(test)]
mod order_tests {
    use super::*;
    use Query::{Gold, Prediction};

    /// Runs `timed_ratios` on `times` in call order, returning the queries it asked for too.
    fn replay(order: RvesOrder, repetitions: usize, times: &[f64]) -> (Vec<Query>, Vec<f64>) {
        let mut asked = Vec::new();
        let mut next = times.iter();
        let ratios = timed_ratios(order, repetitions, |query| {
            asked.push(query);
            next.next().copied().ok_or("no time left")
        })
        .unwrap();
        (asked, ratios)
    }

    #[test]
    fn abba_times_gold_prediction_prediction_gold_and_sums_each_repetition() {
        let times = [1.0, 2.0, 4.0, 3.0, 5.0, 5.0, 5.0, 5.0];
        let (asked, ratios) = replay(RvesOrder::Abba, 2, &times);
        assert_eq!(
            asked,
            [Gold, Prediction, Prediction, Gold, Gold, Prediction, Prediction, Gold]
        );
        assert_eq!(ratios, [4.0 / 6.0, 1.0]);
    }

    #[test]
    fn official_times_prediction_then_gold() {
        let (asked, ratios) = replay(RvesOrder::Official, 2, &[2.0, 1.0, 4.0, 3.0]);
        assert_eq!(asked, [Prediction, Gold, Prediction, Gold]);
        assert_eq!(ratios, [0.5, 0.75]);
    }

    #[test]
    fn abba_cancels_a_linear_drift_and_a_position_effect() {
        let drift: Vec<f64> = (0..12).map(|t| 1.0 + 0.125 * t as f64).collect();
        assert_eq!(replay(RvesOrder::Abba, 3, &drift).1, [1.0; 3]);
        assert_eq!(
            replay(RvesOrder::Official, 3, &drift[..6]).1,
            [1.125, 1.375 / 1.25, 1.625 / 1.5]
        );
        let second_faster: Vec<f64> = (0..12).map(|t| [1.0, 0.875][t % 2]).collect();
        assert_eq!(replay(RvesOrder::Abba, 3, &second_faster).1, [1.0; 3]);
        assert_eq!(
            replay(RvesOrder::Official, 3, &second_faster[..6]).1,
            [0.875; 3]
        );
    }

    #[test]
    fn a_failed_run_stops_the_timing_naming_its_query() {
        let mut runs = 0;
        let failed = timed_ratios(RvesOrder::Abba, 3, |query| {
            runs += 1;
            if runs == 3 {
                Err(format!("{query:?} failed"))
            } else {
                Ok(1.0)
            }
        });
        assert_eq!(failed, Err((Prediction, "Prediction failed".to_string())));
        assert_eq!(runs, 3);
    }

    #[test]
    fn abba_reward_is_the_geometric_mean_with_equal_speed_within_its_noise() {
        assert_eq!(abba_reward(&[1.0; 5]), (Some(1.0), 1.0));
        assert_eq!(official_reward(&[1.0; 5]), (None, 0.0));
        assert_eq!(abba_reward(&[2.0, 0.5]), (Some(1.0), 1.0));
        assert_eq!(abba_reward(&[4.0; 3]), (Some(4.0), 1.25));
        let noisy_equal = [0.9, 1.05, 0.97, 1.02, 0.95];
        assert_eq!(abba_reward(&noisy_equal).1, 1.0);
        assert_eq!(official_reward(&noisy_equal), (Some(0.978), 0.75));
        let slower = [0.8, 0.82, 0.79, 0.81];
        let (ratio, reward) = abba_reward(&slower);
        assert_eq!(reward, 0.75);
        let geometric = (slower.iter().map(|r: &f64| r.ln()).sum::<f64>() / 4.0).exp();
        assert!((ratio.unwrap() - geometric).abs() < 1e-15);
        assert_eq!(confidence_half_width(&[0.3]), 0.0);
        let swapped: Vec<f64> = slower.iter().map(|r| 1.0 / r).collect();
        let inverse = abba_reward(&swapped).0.unwrap();
        assert!((inverse * ratio.unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn abba_drops_an_outlier_by_the_three_standard_deviation_rule_on_logarithms() {
        let mut ratios = vec![1.0; 12];
        ratios.push(50.0);
        assert_eq!(abba_reward(&ratios), (Some(1.0), 1.0));
    }

    /// A deterministic noise source in [-1, 1) (a 64-bit linear congruential generator).
    fn noise(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// One item's gold against itself: every run of either query takes `base` seconds, plus 5 %
    /// uniform noise, a slow linear drift and the second run of each pair 10 % faster.
    fn gold_against_itself(order: RvesOrder, base: f64, state: &mut u64) -> Timing {
        let mut run = 0;
        let ratios = timed_ratios(order, 10, |_| {
            let position = if run % 2 == 1 { 0.9 } else { 1.0 };
            let drift = 1.0 + 0.002 * run as f64;
            run += 1;
            Ok::<f64, ()>(base * position * drift * (1.0 + 0.05 * noise(state)))
        })
        .unwrap();
        estimate(order, &ratios)
    }

    #[test]
    fn gold_against_itself_scores_100_per_item_in_abba_order_and_less_in_the_official() {
        let mut state = 29;
        let bases = (0..200).map(|i| 1e-4 * (1 + i % 17) as f64);
        let items: Vec<(Timing, Timing)> = bases
            .map(|base| {
                let abba = gold_against_itself(RvesOrder::Abba, base, &mut state);
                let official = gold_against_itself(RvesOrder::Official, base, &mut state);
                (abba, official)
            })
            .collect();
        for (abba, _) in &items {
            assert_eq!(abba.reward, 1.0, "{abba:?}");
            assert_eq!(abba.repetitions, 10);
            assert!(abba.spread > 0.0 && abba.spread < 0.1, "{abba:?}");
        }
        let official: f64 = items.iter().map(|(_, o)| o.reward.sqrt()).sum::<f64>() / 2.0;
        assert!(official < 90.0, "official order R-VES {official}");
    }
}
