//! Baseline coverage: every baseline system this config's predictions could produce must be
//! measured (a renamed or deleted file under a glob would otherwise drop the system that
//! regressed), and a run that compared no system at all measured nothing: both fail the gate.

use crate::analysis::baseline::Baseline;
use crate::input::predictions::could_name;
use crate::judge::{Context, Findings, GateRule};

/// What of the baseline the run must cover.
pub struct Coverage;

impl GateRule for Coverage {
    fn judge(&self, context: &Context<'_>) -> Findings {
        let Some(baseline) = context.stored_baseline() else {
            return Findings::default();
        };
        let mut failures = unmeasured_systems(context, baseline);
        if failures.is_empty() && context.candidates().next().is_none() {
            failures.push(nothing_compared(baseline));
        }
        Findings {
            failures,
            ..Findings::default()
        }
    }
}

/// The baseline systems this config's predictions could produce but this run did not measure,
/// each named.
fn unmeasured_systems(context: &Context<'_>, baseline: &Baseline) -> Vec<String> {
    let measured = |name: &str| context.candidates().any(|s| s.name == name);
    let nameable = |name: &str| {
        context
            .predictions
            .iter()
            .any(|spec| could_name(spec, name))
    };
    baseline
        .systems
        .keys()
        .filter(|name| !measured(name) && nameable(name))
        .map(|name| {
            format!(
                "{name}: this baseline system was not measured (no predictions of that name in \
                 this run); every system of the baseline must be measured, so remove it from \
                 the baseline on the base branch first"
            )
        })
        .collect()
}

/// The failure of a run with no system to compare.
fn nothing_compared(baseline: &Baseline) -> String {
    format!(
        "no system was compared with the baseline (systems in the baseline: {}): the gate \
         measured nothing",
        baseline
            .systems
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    )
}
