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
//! Timing here: both queries run once to warm up (that run also decides correctness), then the
//! prediction and the gold alternate on the same cached connection, `rves.repetitions` times
//! (default 10; the official count is 100). The official script opens a new connection for every
//! run, so its times include connecting. The spread of the ratios (their coefficient of
//! variation) is reported per item as the timing noise.

use super::soft_f1::python_sum;
use super::{
    gold_and_prediction, gold_failure, prediction_failure, Details, Env, Metric, Outcome, Score,
};
use crate::engine::exec::ExecError;
use crate::input::dataset::GoldItem;
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
    /// Timed runs of each query.
    pub repetitions: usize,
    /// Coefficient of variation of the measured ratios: the run-to-run noise.
    pub spread: f64,
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
    let n = ratios.len() as f64;
    let mean = ratios.iter().sum::<f64>() / n;
    let std = (ratios.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    let kept: Vec<f64> = ratios
        .iter()
        .copied()
        .filter(|&x| x < mean + 3.0 * std && x > mean - 3.0 * std)
        .collect();
    if kept.is_empty() {
        return (None, 0.0);
    }
    let ratio = python_sum(&kept) / kept.len() as f64;
    let reward = match ratio {
        0.0 => 0.0,
        r if r >= 2.0 => 1.25,
        r if r >= 1.0 => 1.0,
        r if r >= 0.5 => 0.75,
        r if r >= 0.25 => 0.5,
        _ => 0.25,
    };
    (Some(ratio), reward)
}

impl Metric for RewardVes {
    fn name(&self) -> &'static str {
        "rves"
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
        let timed = |sql: &str| -> Result<f64, ExecError> {
            let started = Instant::now();
            env.executor.run(run.db, sql)?;
            Ok(started.elapsed().as_secs_f64().max(1e-9))
        };
        if let Err(e) = timed(gold_sql) {
            return gold_failure(&e);
        }
        let mut ratios = Vec::with_capacity(env.rves_repetitions);
        for _ in 0..env.rves_repetitions {
            let predicted_time = match timed(&sql) {
                Ok(time) => time,
                Err(e) => return prediction_failure(e),
            };
            match timed(gold_sql) {
                Ok(gold_time) => ratios.push(gold_time / predicted_time),
                Err(e) => return gold_failure(&e),
            }
        }
        let (time_ratio, reward) = official_reward(&ratios);
        let n = ratios.len() as f64;
        let mean = ratios.iter().sum::<f64>() / n;
        let std = (ratios.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        Score {
            value: Some(reward.sqrt()),
            outcome: Outcome::Match,
            error: None,
            details: Some(Details::Timing(Timing {
                reward,
                time_ratio,
                repetitions: ratios.len(),
                spread: std / mean,
            })),
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
