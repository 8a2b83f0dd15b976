//! The verdict: built from the gate rules' findings, the one place that says whether the gate
//! passed, its headline, the step outputs' `reason` and the exit code. Its fields are private,
//! so nothing else can make a failed run pass.

use crate::analysis::comparison::Comparison;
use crate::judge::headline::{Gate, Headline};
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
    /// Over several datasets, the dataset of each comparison (the same order).
    comparison_datasets: Vec<String>,
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
            comparison_datasets: Vec::new(),
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
        (self.comparison_datasets).extend(own.comparisons.iter().map(|_| dataset.name.to_string()));
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

    /// The headline: one line of at most [`super::headline::HEADLINE_CHARS`] characters that
    /// says the verdict and its signal (the deciding cell, a gain flagged for review, over
    /// several datasets the largest change or the first failure), e.g. `passed: ex 82.7 -> 81.9
    /// (-0.8), 23 regressed / 15 fixed`; the report's heading.
    pub fn headline(&self) -> String {
        self.told().line
    }

    /// What the headline leaves out, shown right below it: why the deciding cell passed or
    /// failed (`McNemar p = 0.51 >= 0.05: not significant (allowed drop 0.0)`), the flagged
    /// gains, or the rest of a reason too long for the line.
    pub fn headline_detail(&self) -> Vec<String> {
        self.told().detail
    }

    /// The headline and its detail as one line: stdout's `gate ...` line, the `::error`
    /// annotation, JUnit's `verdict` property.
    pub fn statement(&self) -> String {
        self.told().full
    }

    /// The reasons the report lists under the headline: those the headline does not state.
    pub fn reasons_below(&self) -> Vec<String> {
        let stated = self.told().stated;
        (self.failures.iter())
            .filter(|r| !stated.contains(r))
            .cloned()
            .collect()
    }

    /// The notes the report lists under the headline: those the headline does not state.
    pub fn notes_below(&self) -> Vec<String> {
        let stated = self.told().stated;
        (self.notes.iter())
            .filter(|n| !stated.contains(n))
            .cloned()
            .collect()
    }

    /// The headline over one dataset told by its cells (over several, of every dataset's
    /// cells), as one line: the JUnit macro-average suite's `verdict` property.
    pub fn cells_headline(&self) -> String {
        super::headline::of_cells(&self.gate()).full
    }

    /// The step output `reason`: the verdict's [`Verdict::statement`] when the gate failed or a
    /// gain is flagged for review, empty when it plainly passed.
    pub fn reason(&self) -> String {
        match self.passed() && self.flagged_gains.is_empty() {
            true => String::new(),
            false => self.statement(),
        }
    }

    /// Whether the gate passed with a gain flagged for review (the report's heading says so).
    pub fn passed_with_review(&self) -> bool {
        self.passed() && !self.flagged_gains.is_empty()
    }

    /// The headline the verdict tells.
    fn told(&self) -> Headline {
        match self.datasets {
            None => super::headline::of_cells(&self.gate()),
            Some(count) => {
                super::headline::over_datasets(&self.gate(), &self.comparison_datasets, count)
            }
        }
    }

    /// What the headline reads.
    fn gate(&self) -> Gate<'_> {
        Gate {
            failures: &self.failures,
            notes: &self.notes,
            comparisons: &self.comparisons,
            flagged_gains: &self.flagged_gains,
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
