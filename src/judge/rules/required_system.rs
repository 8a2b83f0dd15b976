//! A test-only example of adding a gate rule (one file, one line in [`super::RULES`]): the
//! baseline system [`REQUIRED`] must be measured whenever the baseline holds it.

use crate::judge::{Context, Findings, GateRule};

/// The name of the system this example rule requires.
pub const REQUIRED: &str = "toy-required";

/// Fails when the baseline holds [`REQUIRED`] and this run did not measure it.
pub struct RequiredSystem;

impl GateRule for RequiredSystem {
    fn judge(&self, context: &Context<'_>) -> Findings {
        let held = context
            .stored_baseline()
            .is_some_and(|baseline| baseline.systems.contains_key(REQUIRED));
        let measured = context.candidates().any(|system| system.name == REQUIRED);
        let failures = match held && !measured {
            true => vec![format!("{REQUIRED}: the example rule requires this system")],
            false => Vec::new(),
        };
        Findings {
            failures,
            ..Findings::default()
        }
    }
}
