//! What the kinds whose items are statement lists run on a copy (`livesql`, `bird-critic`,
//! `evalbench`) share: their items read from one file of the gold, and the config rules of a
//! kind whose golds are not SELECTs (no Spider hardness, no suite, no gold audit, no `compare`
//! knob, predictions as statement lists).

use crate::input::config::{Config, DatasetConfig, DifficultySource, PredictionFormat, SuiteKind};
use crate::input::dataset::GoldItem;
use crate::util::error::InputError;
use std::path::Path;

/// The items of `config.gold`, parsed by `parse` and made gold items by `item`, in file order,
/// with the file's bytes (the gold digest covers them).
pub fn load<T>(
    config: &DatasetConfig,
    parse: impl Fn(&Path, &str) -> Result<Vec<T>, InputError>,
    item: fn((usize, T)) -> GoldItem,
) -> Result<(Vec<GoldItem>, Vec<u8>), InputError> {
    let bytes = crate::util::error::read_bytes(&config.gold)?;
    let text = crate::util::error::utf8_or_line_error(&config.gold, &bytes)?;
    let items = parse(&config.gold, text)?;
    Ok((items.into_iter().enumerate().map(item).collect(), bytes))
}

/// A statement kind's config rules, in the words of its messages.
pub struct Rules<'a> {
    /// What `dataset.kind` writes.
    pub name: &'a str,
    /// The metrics it allows.
    pub metrics: &'a [&'a str],
    /// The item field a cell per value comes from, and what a cell is (`category`, "a cell per
    /// category").
    pub cells: (&'a str, &'a str),
    /// What a prediction line holds.
    pub prediction_line: &'a str,
    /// Why the gold audit's read-only keys do not apply to its golds.
    pub audit: &'a str,
    /// What decides instead of `compare`'s knobs.
    pub decides: &'a str,
}

/// Checks `config` against a statement kind's `rules`; the error names the key.
pub fn check(config: &Config, rules: &Rules<'_>) -> Result<(), String> {
    let name = rules.name;
    if config.dataset.difficulty == DifficultySource::SpiderHardness {
        let (field, cell) = rules.cells;
        return Err(format!("`dataset.kind: {name}` items are not parsed for Spider hardness: set `dataset.difficulty: field:{field}` ({cell}) or `none`"));
    }
    if let Some(other) = (config.metrics.iter()).find(|m| !rules.metrics.contains(&m.as_str())) {
        let allowed = rules.metrics.join("`, `");
        return Err(format!(
            "`metrics`: `{other}` is not available for `dataset.kind: {name}` (only `{allowed}`)"
        ));
    }
    if let Some(spec) = (config.predictions.iter()).find(|p| p.format != PredictionFormat::Livesql)
    {
        return Err(format!(
            "`predictions`: `{}` needs `format: livesql` with `dataset.kind: {name}` ({})",
            spec.path, rules.prediction_line
        ));
    }
    if config.suite.kind != SuiteKind::Original {
        return Err(format!("`suite`: `dataset.kind: {name}` runs on each item's own database only (`suite.kind: original`)"));
    }
    if config.audit.overrides.is_some() || !config.audit.dialects.is_empty() {
        return Err(format!(
            "`audit.overrides` and `audit.dialects` do not apply to `dataset.kind: {name}`: {}",
            rules.audit
        ));
    }
    let compare = &config.compare;
    if compare.float_tolerance != 0.0 || compare.keep_distinct || compare.plug_value {
        return Err(format!("`compare.float_tolerance`, `keep_distinct` and `plug_value` do not apply to `dataset.kind: {name}` ({})", rules.decides));
    }
    Ok(())
}
