//! Checks claimed equivalences (an ESM+ match of two different queries) by execution: both
//! queries run on random databases that satisfy the schema's declared constraints only
//! ([`crate::suites::distill::sampler`]) and must give the same result under the comparison
//! profile on every one. A database on which the gold's own answer is undetermined (a tie at an
//! `ORDER BY ... LIMIT` cut or a MIN / MAX arg-row, [`crate::suites::ties`]) decides nothing; a
//! database on which the gold does not run (a time-out) is not counted. The first database that
//! separates them is shrunk into a [`Counterexample`].

use crate::engine::exec::Executor;
use crate::engine::profile::Profile;
use crate::engine::sqlite::Scratch;
use crate::suites::counterexample::{shrink, Counterexample};
use crate::suites::distill::sampler::Image;
use crate::suites::explain::Context;
use crate::suites::ties;

/// One claimed equivalence.
#[derive(Debug, Clone)]
pub struct Claim<'a> {
    /// The gold query, as written.
    pub gold: &'a str,
    /// The prediction claimed equivalent to it, as written.
    pub prediction: &'a str,
    /// Tables (lower-cased) the claim assumes non-empty (ESM+'s r9): databases where one is
    /// empty are not counted.
    pub nonempty: &'a [String],
}

/// How a claim fared.
#[derive(Debug, Clone, Default)]
pub struct Verification {
    /// Databases on which both queries ran and gave the same result.
    pub agreed: usize,
    /// Databases on which they differ but the gold's answer is undetermined (a tie).
    pub tied: usize,
    /// Databases not counted: a table the claim assumes non-empty is empty, or the gold fails.
    pub skipped: usize,
    /// The first database that separates them, when one does.
    pub contradiction: Option<Contradiction>,
}

/// A database that separates gold and prediction.
#[derive(Debug, Clone)]
pub enum Contradiction {
    /// Both ran and differ: the database shrunk while they still differ.
    Differs(Counterexample),
    /// The gold ran and the prediction failed.
    Fails {
        /// The database's name.
        database: String,
        /// The prediction's error.
        error: String,
    },
}

impl Contradiction {
    /// A plain-text rendering: the shrunk database with both results, or the error.
    pub fn to_text(&self) -> String {
        match self {
            Contradiction::Differs(counterexample) => counterexample.to_text(),
            Contradiction::Fails { database, error } => {
                format!("-- on {database} the gold runs and the prediction fails: {error}\n")
            }
        }
    }

    /// The JSON written in an item's details.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Contradiction::Differs(counterexample) => counterexample.to_json(),
            Contradiction::Fails { database, error } => {
                serde_json::json!({ "database": database, "prediction_error": error })
            }
        }
    }
}

/// The name of a generated database in reports.
pub fn image_name(image: &Image) -> String {
    format!(
        "generated database (seed {}, {} rows, {} empty tables)",
        image.seed,
        image.rows,
        image.empty_tables.len()
    )
}

/// Checks every claim (all of one schema) on every image; each image is loaded once. A claim
/// stops at its first contradiction.
pub fn verify(
    executor: &Executor,
    profile: &Profile,
    images: &[Image],
    claims: &[Claim<'_>],
) -> Vec<Verification> {
    let prepared: Vec<_> = claims
        .iter()
        .map(|c| {
            (
                profile.prepare_gold(c.gold),
                profile.prepare_prediction(c.prediction),
            )
        })
        .collect();
    let mut results = vec![Verification::default(); claims.len()];
    for image in images {
        let Ok(scratch) = Scratch::from_image(&image.bytes) else {
            continue;
        };
        for ((claim, (gold, prediction)), result) in claims.iter().zip(&prepared).zip(&mut results)
        {
            if result.contradiction.is_some() {
                continue;
            }
            if claim
                .nonempty
                .iter()
                .any(|t| image.empty_tables.contains(t))
            {
                result.skipped += 1;
                continue;
            }
            let Ok(gold_rows) = scratch.run(executor, &gold.sql) else {
                result.skipped += 1;
                continue;
            };
            let predicted = match scratch.run(executor, prediction) {
                Ok(rows) => rows,
                Err(e) => {
                    result.contradiction = Some(Contradiction::Fails {
                        database: image_name(image),
                        error: e.to_string(),
                    });
                    continue;
                }
            };
            if profile.same_result(&gold_rows, &predicted, gold.order_matters) {
                result.agreed += 1;
            } else if ties::undetermined_with(&gold.sql, &|sql| scratch.run(executor, sql).ok()) {
                result.tied += 1;
            } else {
                let shrunk = Scratch::from_image(&image.bytes).ok().and_then(|copy| {
                    shrink(
                        executor,
                        profile,
                        copy,
                        &image_name(image),
                        gold,
                        prediction,
                        &Context::default(),
                    )
                });
                result.contradiction = Some(match shrunk {
                    Some(counterexample) => Contradiction::Differs(counterexample),
                    None => Contradiction::Fails {
                        database: image_name(image),
                        error: "results differ, and the copy to shrink could not be made".into(),
                    },
                });
            }
        }
    }
    results
}
