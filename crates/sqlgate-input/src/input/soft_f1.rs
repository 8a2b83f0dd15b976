//! The `soft_f1` section: which published version of BIRD mini-dev's
//! `evaluation/evaluation_f1.py` the `soft_f1` metric reproduces (docs/METRICS.md has the
//! upstream table).

use serde::Deserialize;

/// The `soft_f1` section of the config.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "the `soft_f1` section: a map such as `{ version: 2025-06 }` (docs/CONFIG.md)")]
pub struct SoftF1Config {
    /// The version of the official script reproduced (default: the current one).
    #[serde(default)]
    pub version: SoftF1Version,
}

/// A version of `evaluation_f1.py`, named by the month of the upstream commit that made it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(expecting = "`soft_f1.version`: `2025-06` (current, the default) or `2024-10`")]
pub enum SoftF1Version {
    /// bird-bench/mini_dev 47f116d (2024-10-25): duplicates dropped through `set()`, rows
    /// paired in CPython's set iteration order.
    #[serde(rename = "2024-10")]
    Set2024,
    /// bird-bench/mini_dev bee73fe (2025-06-27), current: duplicates dropped with
    /// `dict.fromkeys`, rows paired in the order the queries return them.
    #[default]
    #[serde(rename = "2025-06")]
    Ordered2025,
}

impl SoftF1Version {
    /// The name used in the config and stored in baselines.
    pub fn name(self) -> &'static str {
        match self {
            SoftF1Version::Set2024 => "2024-10",
            SoftF1Version::Ordered2025 => "2025-06",
        }
    }
}
