//! Stage 6, judge: the gate. Each gate rule looks at what it needs of the run (the current
//! systems' records, their comparison with the baseline, the anchor, the baseline's age, the
//! config's `gate` section) through one [`Context`] and returns [`Findings`]: failures, notes,
//! gains to review, cells for the report. One [`Verdict`] built from every rule's findings is the
//! only place that says whether the gate passed, its headline, the step outputs' `reason` and the
//! exit code.
//!
//! Enters: the records and comparisons of [`crate::analysis`], the stored baseline and anchor,
//! the run's own notes. Leaves: a [`Verdict`]. May import every stage before it; must not import
//! report, ci or commands. Adding a gate rule is one new file in `rules/` and one line in
//! [`rules::RULES`] (or [`rules::DATASET_RULES`] for a rule over several datasets).

pub mod headline;
pub mod rules;
pub mod verdict;

#[cfg(test)]
mod tests;

use crate::analysis::agreement::SystemRecords;
use crate::analysis::baseline::Baseline;
use crate::analysis::comparison::Comparison;
use crate::analysis::freshness::Age;
use crate::input::config::{GateConfig, PredictionSpec};
use rules::macro_average::MacroGate;
use std::path::Path;
pub use verdict::Verdict;

/// A gate rule: one check of the run against the baseline, the anchor or the config's `gate`
/// section, which says what it found and leaves the verdict to [`Verdict`].
pub trait GateRule {
    /// What this rule finds in the run `context` describes.
    fn judge(&self, context: &Context<'_>) -> Findings;
}

/// A gate rule over the verdicts of several datasets (`datasets:`), run once after each
/// dataset's own rules.
pub trait DatasetRule {
    /// What this rule finds over the datasets `context` describes.
    fn judge(&self, context: &DatasetContext<'_>) -> Findings;
}

/// What a gate rule may look at in a run over one dataset.
pub struct Context<'a> {
    /// The `gate` section of the config that governs the run.
    pub gate: &'a GateConfig,
    /// The gated metric (`gate.metric`, else the reference).
    pub metric: &'a str,
    /// The config's prediction entries: a glob among them may name baseline systems.
    pub predictions: &'a [PredictionSpec],
    /// The systems this run measured, with their per-item records.
    pub current: &'a [SystemRecords],
    /// The stored baseline the run is compared with, or why there is none.
    pub baseline: Compared<'a>,
    /// Each current system's comparison with its baseline system, as measured (no cell failed
    /// yet: the cells rule judges them).
    pub comparisons: &'a [Comparison],
    /// The anchored baseline of the drift guard (`baseline.anchor`) and its path, when the drift
    /// guard is on.
    pub anchor: Option<(&'a Baseline, &'a Path)>,
    /// The stored baseline's age, when there is one.
    pub age: Option<&'a Age>,
    /// Whether the pull request's own config governs the run (the base has none that loads).
    pub own_config: bool,
    /// Items whose gold query is known to fail (`dataset.allow_failing_golds`): their gold
    /// errors are reported, and the gate does not fail on them.
    pub allowed_gold_errors: &'a [usize],
}

/// The stored baseline a run is compared with, or why it is compared with none.
pub enum Compared<'a> {
    /// The stored baseline.
    Baseline(&'a Baseline),
    /// No `baseline.path` is configured: the run is not gated.
    NotConfigured,
    /// A declared first run (`baseline.required: false`): no baseline at this path yet.
    FirstRun(&'a Path),
    /// A `datasets` entry the baseline holds no section for, with the note that says so.
    NotInBaseline(&'a str),
}

impl<'a> Context<'a> {
    /// The stored baseline, when there is one.
    pub fn stored_baseline(&self) -> Option<&'a Baseline> {
        match self.baseline {
            Compared::Baseline(baseline) => Some(baseline),
            _ => None,
        }
    }

    /// The systems this run measured (not the baseline's own leaderboard entries).
    pub fn candidates(&self) -> impl Iterator<Item = &'a SystemRecords> {
        self.current.iter().filter(|system| !system.from_baseline)
    }
}

/// What a dataset rule may look at in a run over several datasets.
pub struct DatasetContext<'a> {
    /// The `gate` section of the config naming the datasets.
    pub gate: &'a GateConfig,
    /// The gated metric.
    pub metric: &'a str,
    /// Each dataset's verdict, in config order.
    pub datasets: &'a [DatasetVerdict<'a>],
}

/// One dataset's verdict in a run over several.
pub struct DatasetVerdict<'a> {
    /// The `datasets` entry's name.
    pub name: &'a str,
    /// Its verdict, as its own rules gave it.
    pub verdict: &'a Verdict,
    /// Whether the baseline holds a section for it (else nothing was compared on it).
    pub in_baseline: bool,
}

/// What one gate rule found.
#[derive(Debug, Default)]
pub struct Findings {
    /// Why the gate fails, one line each: any failure fails the verdict.
    pub failures: Vec<String>,
    /// What the reader should know, each with its place among the report's notes.
    pub notes: Vec<Note>,
    /// Gains a reviewer should check before merging (the step output `review`).
    pub flagged_gains: Vec<String>,
    /// The judged comparisons with the baseline, for the report's cells.
    pub comparisons: Vec<Comparison>,
    /// The macro-average over several datasets, for the report's table.
    pub macro_average: Option<MacroGate>,
}

/// A note for the reader, with its place among the report's notes.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// Where it is listed.
    pub section: NoteSection,
    /// What it says.
    pub text: String,
}

impl Note {
    /// A note listed in `section`.
    pub fn new(section: NoteSection, text: impl Into<String>) -> Note {
        Note {
            section,
            text: text.into(),
        }
    }
}

/// Where a note stands among the report's notes: they are listed section by section in this
/// order, each section in the order its notes were given (rules in registry order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NoteSection {
    /// Whose config judged the pull request.
    Governance,
    /// What the comparisons with the baseline and the anchor found.
    Comparison,
    /// The trusted inputs the pull request changed, which the run did not use.
    Inputs,
    /// What a reviewer should check: the baseline's age, gains too large to trust.
    Review,
    /// What the evaluation itself says about its inputs.
    Run,
}

/// The verdict of a run over one dataset: every rule of [`rules::RULES`] on `context`, with the
/// run's own notes (whose config governs, ignored changes, the evaluation's notes).
pub fn judge(context: &Context<'_>, run_notes: Vec<Note>) -> Verdict {
    let findings = rules::RULES.iter().map(|rule| rule.judge(context));
    Verdict::of_dataset(findings.collect(), run_notes)
}

/// The verdict of a run over several datasets: every dataset's verdict, then every rule of
/// [`rules::DATASET_RULES`] over them.
pub fn judge_datasets(context: &DatasetContext<'_>) -> Verdict {
    let findings = rules::DATASET_RULES.iter().map(|rule| rule.judge(context));
    Verdict::of_datasets(context.datasets, findings.collect())
}
