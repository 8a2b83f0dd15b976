//! Every gate rule, one file each, and the two registries that list them. The order of a
//! registry is the order of the verdict's failures; notes go by their section
//! ([`super::NoteSection`]).

pub mod baseline_age;
pub mod cells;
pub mod coverage;
pub mod drift;
pub mod macro_average;
pub mod own_config;
pub mod sound_gate;
pub mod suspicious_gains;

#[cfg(test)]
pub mod required_system;

use super::{DatasetRule, GateRule};

/// The rules of a run over one dataset, in the order their failures are listed.
pub const RULES: &[&dyn GateRule] = &[
    &sound_gate::SoundGate,
    &cells::Cells,
    &coverage::Coverage,
    &own_config::OwnConfigMeasuresBaseline,
    &drift::Drift,
    &baseline_age::BaselineAge,
    &suspicious_gains::SuspiciousGains,
    #[cfg(test)]
    &required_system::RequiredSystem,
];

/// The rules over the verdicts of several datasets (`datasets:`), run after each dataset's own.
pub const DATASET_RULES: &[&dyn DatasetRule] = &[&macro_average::MacroAverage];
