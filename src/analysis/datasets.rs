//! Several datasets in one run (`datasets:`): the baseline file holding one baseline per
//! dataset (the macro-average gate over them is the judge's, `crate::judge::rules::macro_average`).
//!
//! The baseline of a config with `datasets:` is `{"sqlgate_version", "commit", "created_unix",
//! "datasets": {"<name>": <a one-dataset baseline>, ...}}`: each section is checked exactly as a
//! one-dataset baseline file (records digest, records, compatibility, ancestry).

use crate::analysis::baseline::Baseline;
use crate::input::config::BASELINE_SECTIONS as SECTIONS;
use crate::util::error::InputError;
use serde_json::{json, Value as Json};
use std::path::Path;

/// The baseline a file holds for what a repairing pull request reads of it (its commit and
/// recorded gate): a one-dataset file, or the first section of a file with several.
pub fn recorded(path: &Path, bytes: &[u8]) -> Result<Baseline, InputError> {
    let value = parse_json(path, bytes)?;
    match value.get(SECTIONS).and_then(Json::as_object) {
        Some(sections) => {
            let first = sections.values().next().ok_or_else(|| {
                InputError::malformed(path, SECTIONS, "the baseline holds no dataset")
            })?;
            Baseline::parse(
                path,
                &serde_json::to_vec(first).expect("JSON values serialize"),
            )
        }
        None => Baseline::parse(path, bytes),
    }
}

/// Every baseline a file holds with its dataset's name: one unnamed baseline in a one-dataset
/// file, else one per section in file order.
pub fn sections(path: &Path, bytes: &[u8]) -> Result<Vec<(Option<String>, Baseline)>, InputError> {
    let value = parse_json(path, bytes)?;
    let Some(sections) = value.get(SECTIONS).and_then(Json::as_object) else {
        return Ok(vec![(None, Baseline::parse(path, bytes)?)]);
    };
    (sections.iter())
        .map(|(name, section)| {
            let bytes = serde_json::to_vec(section).expect("JSON values serialize");
            Ok((Some(name.clone()), Baseline::parse(path, &bytes)?))
        })
        .collect()
}

/// The baseline file of a config with `datasets:`, from one baseline per dataset (config order).
pub fn sectioned_baseline(sections: &[(String, Baseline)]) -> Json {
    let first = sections.first().map(|(_, b)| b);
    let mut map = serde_json::Map::new();
    for (name, baseline) in sections {
        map.insert(
            name.clone(),
            serde_json::to_value(baseline).expect("baselines serialize"),
        );
    }
    json!({
        "sqlgate_version": env!("CARGO_PKG_VERSION"),
        "commit": first.and_then(|b| b.commit.clone()),
        "created_unix": first.and_then(|b| b.created_unix),
        SECTIONS: map,
    })
}

fn parse_json(path: &Path, bytes: &[u8]) -> Result<Json, InputError> {
    serde_json::from_slice(bytes)
        .map_err(|e| InputError::malformed(path, format!("line {}", e.line()), e.to_string()))
}
