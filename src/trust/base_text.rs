//! What the base commit's config text says each dataset read (its reviewed overrides, directory
//! suite and prediction entries), read as plain YAML: a config that fails sqlgate's checks (an
//! unknown key after an upgrade) still names them. A repair over a baseline of an older sqlgate,
//! which does not record them, is held to these.

use crate::analysis::baseline::RecordedInputs;
use crate::input::config::PredictionSpec;
use serde_norway::Value;
use std::collections::BTreeMap;

/// Each dataset's inputs as the base's config text names them, by dataset name (`None`: the
/// one-dataset config); `None` when the text is not YAML of a config's shape.
pub fn inputs_by_dataset(text: &[u8]) -> Option<BTreeMap<Option<String>, RecordedInputs>> {
    let yaml: Value = serde_norway::from_slice(text).ok()?;
    let Some(entries) = yaml.get("datasets") else {
        return Some(BTreeMap::from([(None, inputs(&yaml, &yaml)?)]));
    };
    (entries.as_sequence()?.iter())
        .map(|entry| {
            let name = entry.get("name")?.as_str()?.to_string();
            Some((Some(name), inputs(entry, &yaml)?))
        })
        .collect()
}

/// The inputs of one dataset: `own` is its section (the whole config with `dataset:`), `shared`
/// the whole config (the top-level suite applies where the entry names none).
fn inputs(own: &Value, shared: &Value) -> Option<RecordedInputs> {
    let suite = own.get("suite").or_else(|| shared.get("suite"));
    let directory = suite.and_then(|s| s.get("kind")).and_then(Value::as_str) == Some("directory");
    let predictions = match own.get("predictions") {
        Some(list) => serde_norway::from_value::<Vec<PredictionSpec>>(list.clone()).ok()?,
        None => Vec::new(),
    };
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
    Some(RecordedInputs {
        overrides: text(own.get("audit").and_then(|a| a.get("overrides"))),
        suite: text(suite.and_then(|s| s.get("path"))).filter(|_| directory),
        predictions: Some(predictions),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_that_fails_its_checks_still_names_what_each_dataset_read() {
        let text = b"datasets:\n  - name: a\n    dataset: { gold: a/gold.sql }\n    \
                     predictions: [{ name: C3, path: a/p.txt }]\n    \
                     audit: { overrides: a/o.jsonl }\n  - name: b\n    \
                     dataset: { gold: b/gold.sql }\n    predictions: [{ path: b/p.txt }]\n\
                     suite: { kind: directory, path: suites/ts }\n\
                     gate: { max_drop_point: 0 }\n";
        let inputs = inputs_by_dataset(text).unwrap();
        let a = &inputs[&Some("a".to_string())];
        assert_eq!(a.overrides.as_deref(), Some("a/o.jsonl"));
        assert_eq!(a.suite.as_deref(), Some("suites/ts"));
        let systems = a.predictions.as_ref().unwrap();
        assert_eq!(
            (systems[0].name.as_deref(), systems[0].path.as_str()),
            (Some("C3"), "a/p.txt")
        );
        assert_eq!(inputs[&Some("b".to_string())].overrides, None);
        assert!(inputs_by_dataset(b": [ not yaml").is_none());
    }
}
