//! Every gold query must run on its database: a gold that fails is a defect of the benchmark
//! (or of its checkout), not a verdict on any prediction, and a baseline or a gate built over it
//! would measure less than it says. A run whose gold fails stops with an input error naming the
//! item, unless a reviewed override replaces or excludes that gold (an excluded item is never
//! run) or the config lists the item under `dataset.allow_failing_golds`, which keeps it as a
//! reported gold error, left out of every denominator. A gold that times out is not checked
//! here: the time limit is the config's, and the item stays a reported, unscored gold timeout.
//! Before scoring, the same holds for a gold Spider's parser cannot read under
//! `difficulty: spider-hardness` ([`settle_difficulty`]). `sqlgate audit` runs neither check:
//! finding failing golds is its job.

use crate::input::config::{Config, DatasetConfig, DifficultySource};
use crate::input::dataset::{Dataset, GoldItem};
use crate::input::overrides::GoldOverrides;
use crate::metrics::{Outcome, Score};
use crate::util::error::InputError;
use std::collections::BTreeMap;
use std::path::Path;

/// With `difficulty: spider-hardness`, labels each gold a reviewed override replaced by its
/// replacement, and fails on the first item whose gold has no hardness (Spider's parser cannot
/// read it) unless an override excludes it or `dataset.allow_failing_golds` lists it (such an
/// item stays unlabelled).
pub fn settle_difficulty(
    config: &DatasetConfig,
    dataset: &mut Dataset,
    overrides: &GoldOverrides,
) -> Result<(), InputError> {
    if config.difficulty != DifficultySource::SpiderHardness {
        return Ok(());
    }
    let Dataset {
        items, databases, ..
    } = dataset;
    for item in items.iter_mut() {
        let replaced = overrides.replaced(item.index);
        if (item.difficulty.is_some() && !replaced) || overrides.excluded(item.index) {
            continue;
        }
        item.difficulty =
            match crate::input::dataset::spider_hardness(&config.gold, item, databases)? {
                Ok(label) => Some(label),
                Err(_) if config.allow_failing_golds.contains(&item.index) => None,
                Err(error) => return Err(unparsed(&config.gold, item, &error, replaced)),
            };
    }
    Ok(())
}

/// The error of an item whose gold (or its reviewed replacement) has no hardness, with the ways
/// out.
fn unparsed(gold_path: &Path, item: &GoldItem, error: &str, replaced: bool) -> InputError {
    InputError::malformed(
        gold_path,
        location(item),
        format!(
            "`difficulty: spider-hardness` cannot parse the {}gold query ({error}). Replace or \
             exclude the gold with a reviewed override (`audit.overrides`), list the item in \
             `dataset.allow_failing_golds` (it is then left unlabelled), or label items another \
             way (`difficulty: field:NAME` or `none`)",
            if replaced { "override's " } else { "" }
        ),
    )
}

/// Where an item is in the gold file.
fn location(item: &GoldItem) -> String {
    format!("item {} (db `{}`)", item.index, item.db_id)
}

/// How many failing golds the error lists by index after the first, named in full.
const LISTED: usize = 20;

/// Fails the run when a gold query failed (under any metric, for any system) on an item the
/// config does not list in `dataset.allow_failing_golds`: the first such item is named with its
/// database, the start of its gold and the error, the others by index.
pub fn fail_on_gold_errors<'r>(
    config: &Config,
    dataset: &Dataset,
    results: impl IntoIterator<Item = (usize, &'r [Score])>,
) -> Result<(), InputError> {
    let allowed = &config.dataset.allow_failing_golds;
    let failing = unexplained_failures(results, allowed);
    let Some((&index, error)) = failing.iter().next() else {
        return Ok(());
    };
    let item = &dataset.items[index];
    let others: Vec<String> = (failing.keys().skip(1).take(LISTED))
        .map(usize::to_string)
        .collect();
    let more = match failing.len() - 1 {
        0 => String::new(),
        n if n > LISTED => format!(" (and {n} more: items {}, ...)", others.join(", ")),
        n => format!(" (and {n} more: items {})", others.join(", ")),
    };
    Err(InputError::malformed(
        &config.dataset.gold,
        format!("item {index} (db `{}`)", item.db_id),
        format!(
            "the gold query `{}` {}{more}. Fix the gold, replace or exclude it with a reviewed \
             override (`audit.overrides`), or list the item in `dataset.allow_failing_golds` to \
             report it as a gold error and leave it unscored",
            crate::util::scrub::scrub_cut(&one_line(&item.sql), 80),
            crate::util::scrub::scrub_cut(&what_failed(error), 300),
        ),
    ))
}

/// The items whose gold failed and that `allowed` does not list, each with the first error met.
fn unexplained_failures<'r>(
    results: impl IntoIterator<Item = (usize, &'r [Score])>,
    allowed: &[usize],
) -> BTreeMap<usize, &'r str> {
    let mut failing = BTreeMap::new();
    for (index, scores) in results {
        let gold_error = scores.iter().find(|s| s.outcome == Outcome::GoldError);
        if let Some(score) = gold_error.filter(|_| !allowed.contains(&index)) {
            let error = score.error.as_deref().unwrap_or("gold query failed");
            failing.entry(index).or_insert(error);
        }
    }
    failing
}

/// The gold text on one line.
fn one_line(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a gold error's text says happened, without the `gold query` the message already says
/// (`failed: no such column: x`, `does not parse: ...`, on a test-suite database `on
/// db_3.sqlite: failed: ...`).
fn what_failed(error: &str) -> String {
    match error.contains("gold query ") {
        true => error.replacen("gold query ", "", 1),
        false => format!("failed: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_says_what_failed_once() {
        assert_eq!(
            what_failed("gold query failed: no such column: x"),
            "failed: no such column: x"
        );
        assert_eq!(
            what_failed("gold query does not parse: unknown table"),
            "does not parse: unknown table"
        );
        assert_eq!(
            what_failed("on db_3.sqlite: gold query failed: no such table: t"),
            "on db_3.sqlite: failed: no such table: t"
        );
        assert_eq!(what_failed("result too large"), "failed: result too large");
    }
}
