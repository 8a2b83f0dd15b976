//! A pull request judged with its own config (the base has none that loads) must measure every
//! system of the base's baseline: it could otherwise drop the system that regressed.

use crate::judge::{Context, Findings, GateRule};

/// Every baseline system measured, when the pull request's own config governs.
pub struct OwnConfigMeasuresBaseline;

impl GateRule for OwnConfigMeasuresBaseline {
    fn judge(&self, context: &Context<'_>) -> Findings {
        let Some(baseline) = context.stored_baseline().filter(|_| context.own_config) else {
            return Findings::default();
        };
        let measured = |name: &str| context.current.iter().any(|s| s.name == name);
        let failures = (baseline.systems.keys())
            .filter(|name| !measured(name))
            .map(|name| {
                format!(
                    "{name}: this baseline system was not measured; a pull request judged with \
                     its own config must measure every system of the base's baseline"
                )
            })
            .collect();
        Findings {
            failures,
            ..Findings::default()
        }
    }
}
