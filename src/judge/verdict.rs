//! The verdict: built from the gate rules' findings, the one place that says whether the gate
//! passed, its headline, the step outputs' `reason` and the exit code. Its fields are private,
//! so nothing else can make a failed run pass.

use crate::analysis::comparison::Comparison;
use crate::judge::rules::macro_average::MacroGate;
use crate::judge::{DatasetVerdict, Findings, Note};
use std::process::ExitCode;

/// The gate's verdict on a run: why it failed (no failure: it passed), the notes, the judged
/// comparisons and the gains flagged for review.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Why the gate fails, one line each; the gate passed when there is none.
    failures: Vec<String>,
    /// What the reader should know, in the report's order.
    notes: Vec<String>,
    /// Per candidate system (every dataset's, over several), its judged cells.
    comparisons: Vec<Comparison>,
    /// Gains a reviewer should check before merging.
    flagged_gains: Vec<String>,
    /// The macro-average over several datasets (empty over one).
    macro_average: MacroGate,
    /// How many datasets it covers, when it covers several.
    datasets: Option<usize>,
}

/// The exit code of a run whose gate failed and is enforced.
const GATE_FAILED: u8 = 1;

impl Verdict {
    /// The verdict of a run over one dataset from its rules' findings (registry order) and the
    /// run's own notes: failures in rule order, notes section by section.
    pub(super) fn of_dataset(findings: Vec<Findings>, run_notes: Vec<Note>) -> Verdict {
        let mut notes = run_notes;
        let mut verdict = Verdict::empty(None);
        for found in findings {
            verdict.take(found, &mut notes);
        }
        notes.sort_by_key(|note| note.section);
        verdict.notes = notes.into_iter().map(|note| note.text).collect();
        verdict
    }

    /// The verdict of a run over several datasets: each dataset's failures (named by dataset),
    /// the notes of the datasets the baseline does not hold, every dataset's comparisons and
    /// flagged gains, then the dataset rules' findings.
    pub(super) fn of_datasets(datasets: &[DatasetVerdict<'_>], findings: Vec<Findings>) -> Verdict {
        let mut verdict = Verdict::empty(Some(datasets.len()));
        for dataset in datasets {
            verdict.take_dataset(dataset);
        }
        let mut notes = Vec::new();
        for found in findings {
            verdict.take(found, &mut notes);
        }
        notes.sort_by_key(|note| note.section);
        verdict
            .notes
            .extend(notes.into_iter().map(|note| note.text));
        verdict
    }

    /// A verdict with no findings yet.
    fn empty(datasets: Option<usize>) -> Verdict {
        Verdict {
            failures: Vec::new(),
            notes: Vec::new(),
            comparisons: Vec::new(),
            flagged_gains: Vec::new(),
            macro_average: MacroGate::default(),
            datasets,
        }
    }

    /// Adds one rule's findings (its notes to `notes`, sorted once all are in).
    fn take(&mut self, found: Findings, notes: &mut Vec<Note>) {
        self.failures.extend(found.failures);
        notes.extend(found.notes);
        self.flagged_gains.extend(found.flagged_gains);
        self.comparisons.extend(found.comparisons);
        if let Some(macro_average) = found.macro_average {
            self.macro_average = macro_average;
        }
    }

    /// Adds one dataset's verdict, its lines named by the dataset.
    fn take_dataset(&mut self, dataset: &DatasetVerdict<'_>) {
        let named = |line: &String| format!("dataset `{}`: {line}", dataset.name);
        let own = dataset.verdict;
        self.failures.extend(own.failures.iter().map(named));
        if !dataset.in_baseline {
            self.notes.extend(own.notes.iter().cloned());
        }
        self.comparisons.extend(own.comparisons.iter().cloned());
        self.flagged_gains
            .extend(own.flagged_gains.iter().map(named));
    }

    /// Whether the gate passed: no rule found a failure.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// Why the gate failed, one line each (empty when it passed).
    pub fn reasons(&self) -> &[String] {
        &self.failures
    }

    /// What the reader should know, in the report's order.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Per candidate system, its comparison with the baseline and its judged cells.
    pub fn comparisons(&self) -> &[Comparison] {
        &self.comparisons
    }

    /// The gains flagged for review (also among the notes): the `review` step outputs and the
    /// comment policy read them.
    pub fn flagged_gains(&self) -> &[String] {
        &self.flagged_gains
    }

    /// The macro-average over several datasets (no cell over one dataset).
    pub fn macro_average(&self) -> &MacroGate {
        &self.macro_average
    }

    /// One line that says the verdict and why: over one dataset the deciding cell (see
    /// [`Verdict::cells_headline`]), over several the first failure or how many datasets passed.
    pub fn headline(&self) -> String {
        match self.datasets {
            None => self.cells_headline(),
            Some(count) => super::headline::over_datasets(&self.failures, count),
        }
    }

    /// The headline told by the cells, e.g. `passed: ex 82.7 -> 81.9 (-0.8), 23 regressed / 15
    /// fixed, McNemar p = 0.51 >= 0.05: not significant`: the first failed cell, else the first
    /// failure, else the first cell; a run that compared nothing says why from its first note.
    /// Over several datasets, the JUnit macro-average suite's `verdict` property.
    pub fn cells_headline(&self) -> String {
        super::headline::of_cells(&self.failures, &self.notes, &self.comparisons)
    }

    /// The step output `reason`: the headline when the gate failed, empty when it passed.
    pub fn reason(&self) -> String {
        match self.passed() {
            true => String::new(),
            false => self.headline(),
        }
    }

    /// The exit code of the verdict: 1 when the gate failed and `enforced` (no
    /// `--no-fail-on-regression`), else 0.
    pub fn exit_code(&self, enforced: bool) -> ExitCode {
        match !self.passed() && enforced {
            true => ExitCode::from(GATE_FAILED),
            false => ExitCode::SUCCESS,
        }
    }
}
