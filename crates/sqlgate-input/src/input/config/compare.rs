//! The `compare` section: the comparison profile and, for the Spider 2.0 profiles, which
//! upstream `evaluate.py` they follow.

use serde::Deserialize;

/// Comparison section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "the `compare` section: a map such as `{ profile: spider-ts }`")]
pub struct CompareConfig {
    /// Comparison profile.
    #[serde(default)]
    pub profile: ProfileName,
    /// Relative and absolute tolerance for numbers (0 = exact).
    #[serde(default)]
    pub float_tolerance: f64,
    /// Keep DISTINCT in the spider-ts profile (the official `--keep_distinct`).
    #[serde(default)]
    pub keep_distinct: bool,
    /// Also try the prediction with the gold's values plugged into its value slots in every
    /// possible way (the official `--plug_value`): value prediction is not judged.
    #[serde(default)]
    pub plug_value: bool,
    /// Which upstream `evaluate.py` the spider2 profiles follow (docs/METRICS.md names each).
    #[serde(default)]
    pub version: Option<Spider2Version>,
}

/// The versions of Spider 2.0's `spider2-lite/evaluation_suite/evaluate.py` (xlang-ai/Spider2)
/// the spider2 profiles reproduce.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(expecting = "`compare.version`: `2025-11` (the current evaluate.py) or `2025-01`")]
pub enum Spider2Version {
    /// Commit 5fa8a517 of 2025-11-02, unchanged since: missing values count as 0.
    #[default]
    #[serde(rename = "2025-11")]
    Current,
    /// Commit 0c85cc21 of 2025-01-01: the version tests/data/spider2 was first checked against.
    #[serde(rename = "2025-01")]
    Jan2025,
}

impl Spider2Version {
    /// The name as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            Spider2Version::Current => "2025-11",
            Spider2Version::Jan2025 => "2025-01",
        }
    }
}

impl Default for CompareConfig {
    fn default() -> Self {
        CompareConfig {
            profile: ProfileName::SpiderTs,
            float_tolerance: 0.0,
            keep_distinct: false,
            plug_value: false,
            version: None,
        }
    }
}

/// Comparison profile names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[serde(expecting = "`compare.profile`: one of the profiles in docs/CONFIG.md")]
pub enum ProfileName {
    /// The official test-suite-sql-eval semantics.
    #[default]
    SpiderTs,
    /// BIRD's evaluation.py semantics.
    Bird,
    /// Bags, fixed column order, order per top-level ORDER BY.
    Strict,
    /// Spider 2.0's `compare_pandas_table`: every gold column equals some predicted column.
    Spider2,
    /// `spider2`, with `ignore_order` requiring one row permutation for all columns.
    Spider2Sound,
}

impl ProfileName {
    /// The name as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileName::SpiderTs => "spider-ts",
            ProfileName::Bird => "bird",
            ProfileName::Strict => "strict",
            ProfileName::Spider2 => "spider2",
            ProfileName::Spider2Sound => "spider2-sound",
        }
    }

    /// Whether this is one of the Spider 2.0 profiles.
    pub fn is_spider2(self) -> bool {
        matches!(self, ProfileName::Spider2 | ProfileName::Spider2Sound)
    }
}
