//! Configs the tests write, where many tests need the same one with a different value.

use super::repo::example_folder;
use super::shared_spider;
use std::path::{Path, PathBuf};

/// Writes the config text `yaml` to `path` and returns the path.
pub fn write(path: PathBuf, yaml: &str) -> PathBuf {
    std::fs::write(&path, yaml).unwrap();
    path
}

/// A config scoring `metrics` of the four shared Spider systems and the gold itself on the whole
/// of Spider dev (skipping the items whose database the shared data lacks), written to
/// `dir/sqlgate.yml`; returns its path.
pub fn shared_systems(dir: &Path, metrics: &str) -> PathBuf {
    write(
        dir.join("sqlgate.yml"),
        &format!(
            "dataset:\n  gold: {spider}/dev_gold.sql\n  tables: {spider}/tables.json\n  databases: {spider}/database\n  skip_missing_databases: true\n\
             metrics: [{metrics}]\n\
             predictions:\n  - {{ path: '{spider}/predictions/*.txt' }}\n  - {{ name: gold, path: {spider}/dev_gold.sql }}\n",
            spider = shared_spider().display()
        ),
    )
}

/// A gated config `dir/NAME.yml` on the bundled example's databases: the gold file `gold`, the
/// `predictions` entries (YAML flow mappings), `metrics`, and the baseline and report in `dir`.
pub fn example_gate(
    dir: &Path,
    name: &str,
    gold: &Path,
    predictions: &str,
    metrics: &str,
) -> PathBuf {
    write(
        dir.join(format!("{name}.yml")),
        &format!(
            "dataset: {{ gold: {gold}, tables: {ex}/tables.json, databases: {ex}/database }}\n\
             predictions: [{predictions}]\n\
             metrics: [{metrics}]\n\
             baseline: {{ path: {dir}/baseline.json }}\n\
             report: {{ output: {dir}/report.md }}\n",
            gold = gold.display(),
            ex = example_folder().display(),
            dir = dir.display()
        ),
    )
}
