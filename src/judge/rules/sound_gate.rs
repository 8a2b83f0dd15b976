//! A gate on an official profile that has a sound one (`evalbench` beside `evalbench_sound`,
//! `livesql` beside `livesql_sound`) fails: the official order runs the gold on what the
//! prediction left (its writes, a `COMMIT`, a temporary view or trigger named after the gold's
//! table), so a prediction can choose its gold's answer (red team rounds 25 and 26). The rule
//! reads the gated metric of the config the run is judged with, so a repair judged with the
//! gate its baseline recorded fails the same way.

use crate::judge::{Context, Findings, GateRule};

/// The gated metric is never an official profile whose sound one exists.
pub struct SoundGate;

impl GateRule for SoundGate {
    fn judge(&self, context: &Context<'_>) -> Findings {
        let gated = context.metric;
        let Some(sound) = crate::metrics::sound_profile_for(gated) else {
            return Findings::default();
        };
        let failure = format!(
            "`gate.metric`: `{gated}` runs the prediction before its gold on the same database, \
             so a prediction can choose the gold's answer (a write, a `COMMIT`, a temporary view \
             or trigger named after the gold's table); gate on `{sound}`, which keeps the gold \
             from what the prediction did, and keep `{gated}` as a reported figure. A pull \
             request that repairs the config is judged with the gate its baseline recorded: when \
             that is `{gated}`, record a new baseline gated on `{sound}` on the base branch"
        );
        Findings {
            failures: vec![failure],
            ..Findings::default()
        }
    }
}
