//! Algorithm 1 of seed 000 for one schema: start from the original database (always in the
//! suite) and the already kept databases, then sample random databases and keep one only when it
//! distinguishes a neighbor query that no kept database distinguishes, or gives a gold query its
//! first non-empty result (seed 000, A.2). The first half of a run's candidates are natural
//! databases, then capped and free ones (see [`Generator::generate`]).
//!
//! Candidates are evaluated in parallel in fixed-size batches against the set of neighbors still
//! undistinguished when the batch starts, then accepted in candidate order, so the kept databases
//! depend only on the seed, never on the number of threads.

use super::generate::{Generator, Phase};
use super::query::Timed;
use crate::engine::profile::{PreparedGold, Profile};
use rayon::prelude::*;
use std::time::Duration;

/// Candidates evaluated together.
const BATCH: usize = 8;
/// Share of a run's candidates that are natural databases (sampled first), then
/// [`Phase::Capped`] ones; the rest come from the free generator, for what the others leave
/// undistinguished (see [`Generator::generate`]).
const NATURAL_SHARE: f64 = 0.5;
/// Share of a run's candidates in [`Phase::Capped`].
const CAPPED_SHARE: f64 = 0.3;

/// One distinct gold query of the schema and its neighbors.
#[derive(Debug, Clone)]
pub struct Target {
    /// The gold query as written in the dataset.
    pub gold: String,
    /// The prepared gold query.
    pub prepared: PreparedGold,
    /// Neighbor queries (as prepared predictions) that execute.
    pub neighbors: Vec<String>,
    /// Whether some suite database distinguishes each neighbor.
    pub distinguished: Vec<bool>,
    /// Whether the gold returns rows on some suite database.
    pub nonempty: bool,
    /// Whether the gold runs on the suite's reference database (original or first generated).
    pub runs: bool,
}

impl Target {
    fn pending(&self) -> Vec<usize> {
        (0..self.neighbors.len())
            .filter(|n| !self.distinguished[*n])
            .collect()
    }

    fn needs_work(&self) -> bool {
        self.runs && (!self.nonempty || self.distinguished.iter().any(|d| !d))
    }
}

/// What one database shows about the targets: per target, the neighbors it distinguishes and
/// whether the gold returned rows.
type Findings = Vec<(Vec<usize>, bool)>;

/// A database kept by distillation.
#[derive(Debug, Clone)]
pub struct Kept {
    /// The candidate number it was generated from.
    pub candidate: u64,
    /// Rows over all tables.
    pub rows: u64,
    /// The database file.
    pub bytes: Vec<u8>,
    /// Whether it is a natural database.
    pub natural: bool,
}

/// The shared, read-only context of one schema's distillation.
pub struct Context<'a> {
    /// Generates candidate databases.
    pub generator: Generator<'a>,
    /// The comparison profile (distinguish = different denotation under it).
    pub profile: &'a Profile,
    /// Limit per query.
    pub timeout: Duration,
    /// Seed of candidate `i` is derived from this and `i`.
    pub seed: u64,
}

impl Context<'_> {
    /// Candidate `index`'s seed.
    pub fn candidate_seed(&self, index: u64) -> u64 {
        let mut state = self.seed ^ 0x9E37_79B9_7F4A_7C15;
        state = state.wrapping_add(index.wrapping_mul(0xBF58_476D_1CE4_E5B9));
        state ^= state >> 31;
        state.wrapping_mul(0x94D0_49BB_1331_11EB)
    }

    /// Keeps, among `targets`' neighbors, only those that execute on `reference`.
    pub fn keep_executable(&self, reference: &Timed, targets: &mut [Target]) {
        for target in targets.iter_mut() {
            target.runs = reference.run(&target.prepared.sql, self.timeout).is_some();
            if !target.runs {
                target.neighbors.clear();
            }
            let timeout = self.timeout;
            target
                .neighbors
                .retain(|n| reference.run(n, timeout).is_some());
            target.distinguished = vec![false; target.neighbors.len()];
        }
    }

    /// What `conn` distinguishes among the still pending neighbors of `targets`.
    pub fn findings(&self, conn: &Timed, targets: &[Target]) -> Findings {
        targets
            .iter()
            .map(|target| {
                if !target.needs_work() {
                    return (Vec::new(), false);
                }
                let Some(gold) = conn.run(&target.prepared.sql, self.timeout) else {
                    return (Vec::new(), false);
                };
                let distinguished = target
                    .pending()
                    .into_iter()
                    .filter(|n| {
                        conn.run(&target.neighbors[*n], self.timeout)
                            .is_some_and(|rows| {
                                !self.profile.same_result(
                                    &gold,
                                    &rows,
                                    target.prepared.order_matters,
                                )
                            })
                    })
                    .collect();
                (distinguished, !gold.is_empty())
            })
            .collect()
    }

    /// Records `findings` into `targets`; true when they showed something new.
    pub fn absorb(targets: &mut [Target], findings: &Findings) -> bool {
        let mut new = false;
        for (target, (distinguished, nonempty)) in targets.iter_mut().zip(findings) {
            for n in distinguished {
                if !target.distinguished[*n] {
                    target.distinguished[*n] = true;
                    new = true;
                }
            }
            if *nonempty && !target.nonempty {
                target.nonempty = true;
                new = true;
            }
        }
        new
    }

    /// Samples candidates `first..end` until nothing is left to distinguish; returns the kept
    /// databases and the number of candidates examined.
    pub fn sample(&self, targets: &mut [Target], first: u64, end: u64) -> (Vec<Kept>, u64) {
        let mut kept = Vec::new();
        let mut next = first;
        let share = |s: f64| first + ((end - first) as f64 * s).round() as u64;
        let (natural_end, capped_end) = (share(NATURAL_SHARE), share(NATURAL_SHARE + CAPPED_SHARE));
        let phase = |candidate: u64| {
            if candidate < natural_end {
                Phase::Natural
            } else if candidate < capped_end {
                Phase::Capped
            } else {
                Phase::Free
            }
        };
        while next < end && targets.iter().any(Target::needs_work) {
            let limit = [natural_end, capped_end, end]
                .into_iter()
                .find(|e| next < *e)
                .unwrap_or(end);
            let batch_end = (next + BATCH as u64).min(limit);
            let snapshot: &[Target] = targets;
            let evaluated: Vec<Option<(Findings, Kept)>> = (next..batch_end)
                .into_par_iter()
                .map(|candidate| self.evaluate(candidate, phase(candidate), snapshot))
                .collect();
            for (findings, candidate) in evaluated.into_iter().flatten() {
                if Self::absorb(targets, &findings) {
                    kept.push(candidate);
                }
            }
            next = batch_end;
        }
        (kept, next)
    }

    /// Generates candidate `index` and returns its findings and file, when it shows anything.
    fn evaluate(&self, index: u64, phase: Phase, targets: &[Target]) -> Option<(Findings, Kept)> {
        let seed = self.candidate_seed(index);
        let mut conn = Timed::new(self.generator.generate(seed, phase).ok()?).ok()?;
        let findings = self.findings(&conn, targets);
        let useful = findings
            .iter()
            .zip(targets)
            .any(|((d, nonempty), t)| !d.is_empty() || (*nonempty && !t.nonempty));
        if !useful {
            return None;
        }
        let rows = self.generator.count_rows(conn.conn()).ok()?;
        let bytes = conn.conn_mut().serialize(rusqlite::MAIN_DB).ok()?.to_vec();
        let candidate = Kept {
            candidate: index,
            rows,
            bytes,
            natural: phase == Phase::Natural,
        };
        Some((findings, candidate))
    }
}
