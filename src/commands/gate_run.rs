//! What `sqlgate eval` does after scoring: load and check the baseline, analyse the current
//! systems together with the leaderboard, apply the gate and render the report.

use crate::analysis::agreement::{Analysis, SystemRecords};
use crate::analysis::baseline::Baseline;
use crate::analysis::comparison::compare_all;
use crate::analysis::records::records;
use crate::input::config::Config;
use crate::input::trusted::{Settled, Snapshot};
use crate::judge::{Compared, Note, NoteSection, Verdict};
use crate::report::markdown::{self, ReportInput};
use crate::report::summary::Summary;
use crate::score::evaluation::Evaluation;
use crate::util::error::InputError;
use sha2::{Digest, Sha256};

/// Analyses, gate verdict and report of one run.
pub struct GateRun {
    /// Current systems plus baseline-only leaderboard entries.
    pub analysis: Analysis,
    /// The baseline systems on their own (for deltas), when there is a baseline.
    pub baseline_analysis: Option<Analysis>,
    /// The verdict.
    pub verdict: Verdict,
    /// The full report.
    pub report: String,
    /// The report shortened to fit a GitHub comment.
    pub comment: String,
    /// Hidden marker identifying this config's comment.
    pub marker: String,
    /// Commit the baseline was made from, when known.
    pub baseline_commit: Option<String>,
    /// Per system, the cells of the gold's SQL features.
    pub features: crate::analysis::features::FeatureTable,
    /// A `datasets` entry the baseline holds no section for: nothing was compared on it.
    pub not_in_baseline: bool,
    /// What the benchmark the pull request proposes would change, when it changes it.
    pub benchmark_change: Option<crate::evidence::proposed::BenchmarkChange>,
}

/// The hidden marker of a config's comment: one sticky comment per config file, named by its
/// path relative to the working directory (the repository root in Actions), or by its file name
/// when it lies elsewhere, so the marker is the same on every run and every checkout.
pub fn comment_marker(config: &Config) -> String {
    marker_of_path(&config.path)
}

/// The marker [`comment_marker`] gives the config at `config_path`; also for a run that stops
/// before its config loads, so its warning replaces the comment of that config's last verdict.
pub fn marker_of_path(config_path: &std::path::Path) -> String {
    let absolute = std::path::absolute(config_path).unwrap_or_else(|_| config_path.to_path_buf());
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            absolute
                .strip_prefix(cwd)
                .ok()
                .map(std::path::Path::to_path_buf)
        })
        .or_else(|| absolute.file_name().map(std::path::PathBuf::from))
        .unwrap_or(absolute);
    let digest = Sha256::digest(relative.to_string_lossy().as_bytes());
    format!(
        "<!-- sqlgate:{} -->",
        crate::util::digest::hex(&digest[..6])
    )
}

/// The page of this Actions run, where the shipped workflows upload the full report as the
/// `sqlgate-report` artifact: `$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID`
/// when all three are set and well-formed (a malformed one links nowhere rather than anywhere).
fn run_url() -> Option<String> {
    let var = |name: &str| std::env::var(name).ok();
    let url = format!(
        "{}/{}/actions/runs/{}",
        var("GITHUB_SERVER_URL")?,
        var("GITHUB_REPOSITORY")?,
        var("GITHUB_RUN_ID")?
    );
    let shape = regex::Regex::new(
        r"^https://[A-Za-z0-9.-]+(:[0-9]+)?/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/actions/runs/[0-9]+$",
    )
    .ok()?;
    shape.is_match(&url).then_some(url)
}

/// Loads the baseline (if configured and present, from the trusted `snapshot`), analyses, gates
/// and renders.
pub fn gate_run(
    (config, snapshot): (&Config, &Snapshot),
    evaluation: &Evaluation,
    report_file: &str,
) -> Result<GateRun, InputError> {
    let (baseline, baseline_changed, not_in_baseline) =
        load_baseline((config, snapshot), evaluation)?;
    let age =
        (baseline.as_ref()).map(|stored| crate::analysis::freshness::Age::of(snapshot, stored));
    if let Some((stored, age)) = baseline.as_ref().zip(age.as_ref()) {
        write_baseline_outputs(stored, age.days);
    }
    let (template, template_changed) = load_template(config, snapshot)?;
    let difficulties = Summary::of(evaluation).difficulties;
    let current: Vec<SystemRecords> = records(evaluation)
        .into_iter()
        .map(|(name, items)| SystemRecords {
            name,
            from_baseline: false,
            items,
        })
        .collect();
    let baseline_systems: Vec<SystemRecords> = baseline
        .iter()
        .flat_map(|b| &b.systems)
        .map(|(name, items)| SystemRecords {
            name: name.clone(),
            from_baseline: true,
            items: items.clone(),
        })
        .collect();
    let leaderboard: Vec<SystemRecords> = current
        .iter()
        .cloned()
        .chain(
            baseline_systems
                .iter()
                .filter(|b| !current.iter().any(|c| c.name == b.name))
                .cloned(),
        )
        .collect();
    let reference = config.reference_metric();
    let analysis = Analysis::new(&leaderboard, &evaluation.metrics, reference, &difficulties);
    let baseline_analysis = baseline
        .as_ref()
        .map(|b| Analysis::new(&baseline_systems, &b.metrics, reference, &difficulties));
    let item_features = crate::analysis::features::item_features(config, &evaluation.dataset);
    let comparisons = (baseline.as_ref()).map_or_else(Vec::new, |stored| {
        let metric = config.gate_metric();
        let tie_breaker = crate::score::stability::TieBreaker::of(&config.dataset.engine.kind);
        compare_all(
            &config.gate,
            (metric, tie_breaker),
            &current,
            stored,
            &item_features,
        )
    });
    let features = crate::analysis::features::analyse(
        config,
        &current,
        baseline.as_ref(),
        &item_features,
        &evaluation.metrics,
    );
    let anchor = load_anchor((config, snapshot), evaluation)?;
    let context = crate::judge::Context {
        gate: &config.gate,
        metric: config.gate_metric(),
        predictions: &config.predictions,
        current: &current,
        baseline: compared(config, baseline.as_ref(), not_in_baseline.as_deref()),
        comparisons: &comparisons,
        anchor: anchor.as_ref().map(|(stored, path)| (stored, *path)),
        age: age.as_ref(),
        own_config: matches!(snapshot.settled, Settled::Proposed { .. }),
        allowed_gold_errors: &config.dataset.allow_failing_golds,
    };
    let changed = (baseline_changed, template_changed);
    let notes = run_notes((config, snapshot), evaluation, changed, baseline.as_ref());
    let verdict = crate::judge::judge(&context, notes);
    let marker = comment_marker(config);
    let run_page = run_url();
    let executor = match &evaluation.executor {
        Some(executor) => executor.clone(),
        None => crate::engine::registry::executor(
            config,
            &evaluation.dataset,
            crate::engine::exec::Limits::of(&config.execution),
            1,
        )?,
    };
    let profile = crate::engine::profile::Profile::new(&config.compare);
    let mut evidence = crate::evidence::gather(
        evaluation,
        &verdict,
        baseline.as_ref(),
        (&executor, &profile),
    );
    evidence.benchmark_change = crate::evidence::proposed::gather(config, snapshot)?;
    let input = ReportInput {
        evaluation,
        analysis: &analysis,
        baseline_analysis: baseline_analysis.as_ref(),
        verdict: &verdict,
        gate_metric: config.gate_metric(),
        marker: &marker,
        baseline: baseline.as_ref(),
        run_url: run_page.as_deref(),
        report_file,
        evidence: &evidence,
        features: Some(&features),
    };
    let template_path = config
        .report
        .template
        .clone()
        .unwrap_or_else(|| "templates/comment.md.j2".into());
    let (report, comment) =
        markdown::render(&input, &template).map_err(|e| template_error(&template_path, &e))?;
    check_proposed_template(config, snapshot, &input)?;
    Ok(GateRun {
        analysis,
        baseline_analysis,
        verdict,
        report,
        comment,
        marker,
        baseline_commit: baseline.and_then(|b| b.commit),
        features,
        not_in_baseline: not_in_baseline.is_some(),
        benchmark_change: evidence.benchmark_change.clone(),
    })
}

/// The stored baseline, read as the trusted base has it in a pull-request run; `None` only when
/// no baseline is configured, a first run is declared or (the note says so) the baseline holds
/// no section for this `datasets` entry. The flag says whether the pull request changed the
/// file (its version is ignored).
fn load_baseline(
    (config, snapshot): (&Config, &Snapshot),
    evaluation: &Evaluation,
) -> Result<(Option<Baseline>, bool, Option<String>), InputError> {
    let Some(section) = &config.baseline else {
        return Ok((None, false, None));
    };
    let crate::input::trusted::TrustedFile { bytes, changed } = snapshot.read(&section.path)?;
    let Some(bytes) = bytes else {
        if section.required {
            return Err(InputError::Config {
                path: config.path.clone(),
                message: format!(
                    "`baseline.path`: {} does not exist{}, so the gate would compare nothing; \
                     create it with `sqlgate baseline update` on the default branch, or declare \
                     a first run with `baseline: {{ required: false }}`",
                    section.path.display(),
                    if snapshot.is_pull_request() {
                        " on the base commit"
                    } else {
                        ""
                    }
                ),
            });
        }
        return Ok((None, changed, None));
    };
    let Some(bytes) = config.baseline_section(&section.path, bytes)? else {
        let note = format!(
            "dataset `{}` is not in the baseline {}: nothing compared for it (a new dataset is \
             compared once `sqlgate baseline update` has stored it)",
            config.dataset_name(),
            section.path.display()
        );
        return Ok((None, changed, Some(note)));
    };
    let baseline = Baseline::parse(&section.path, &bytes)?;
    baseline.check_compatible(&section.path, config, evaluation)?;
    check_ancestry(&baseline, snapshot, &section.path, &config.path)?;
    Ok((Some(baseline), changed, None))
}

/// The anchored baseline of the drift guard (`baseline.anchor`, read as the trusted base has
/// it), when `gate.max_drift_points` is set; a configured anchor that does not exist is an
/// input error naming how to make one.
fn load_anchor<'a>(
    (config, snapshot): (&'a Config, &Snapshot),
    evaluation: &Evaluation,
) -> Result<Option<(Baseline, &'a std::path::Path)>, InputError> {
    let anchor = config.baseline.as_ref().and_then(|b| b.anchor.as_deref());
    let (Some(path), Some(_)) = (anchor, config.gate.max_drift_points) else {
        return Ok(None);
    };
    let Some(bytes) = snapshot.read(path)?.bytes else {
        return Err(InputError::Config {
            path: config.path.clone(),
            message: format!(
                "`baseline.anchor`: {} does not exist; pin one at a reviewed point by copying \
                 the baseline (`cp {} {}`) and committing it",
                path.display(),
                config.baseline.as_ref().map_or(path, |b| &b.path).display(),
                path.display()
            ),
        });
    };
    let anchor = Baseline::parse(path, &bytes)?;
    anchor.check_compatible(path, config, evaluation)?;
    check_ancestry(&anchor, snapshot, path, &config.path)?;
    Ok(Some((anchor, path)))
}

/// In a pull-request run the baseline must have been made at the base commit or one of its
/// ancestors: one made elsewhere (on the PR branch, say) measures nothing the base has agreed to.
/// The message names the likely cause (a squash or rebase merge rewrites the commit the baseline
/// records) and the command that fixes it. Nothing to check outside a pull request.
fn check_ancestry(
    baseline: &Baseline,
    snapshot: &Snapshot,
    path: &std::path::Path,
    config_path: &std::path::Path,
) -> Result<(), InputError> {
    let Some(base_commit) = &snapshot.base_commit else {
        return Ok(());
    };
    let short = crate::input::config::short_commit;
    let fix = format!(
        "fix: on the base branch run `sqlgate baseline update --config {}` and commit the \
         baseline (`.github/workflows/sqlgate-baseline.yml` does this after every merge)",
        config_path.display()
    );
    match &baseline.commit {
        Some(commit) if snapshot.is_ancestor(commit) => Ok(()),
        Some(commit) => Err(InputError::malformed(
            path,
            "commit",
            format!(
                "the baseline was made at {}, which is not an ancestor of the base commit {}: \
                 the branch it was made on was squash- or rebase-merged (which rewrites its \
                 commits), or it was made on another branch; {fix}",
                short(commit),
                short(base_commit)
            ),
        )),
        None => Err(InputError::malformed(
            path,
            "commit",
            format!(
                "the baseline records no commit (it was made outside a git checkout or before \
                 the first commit), so it cannot be checked against the base commit; {fix}"
            ),
        )),
    }
}

/// The report template (the trusted base's in a pull-request run), or the built-in one; the flag
/// says whether the pull request changed it. A pull request judged with its own config uses the
/// built-in template when the base has none at that path (its own renders once merged).
fn load_template(config: &Config, snapshot: &Snapshot) -> Result<(String, bool), InputError> {
    let Some(path) = &config.report.template else {
        return Ok((markdown::DEFAULT_TEMPLATE.to_string(), false));
    };
    let crate::input::trusted::TrustedFile { bytes, changed } = snapshot.read(path)?;
    if bytes.is_none() && matches!(snapshot.settled, Settled::Proposed { .. }) {
        return Ok((markdown::DEFAULT_TEMPLATE.to_string(), changed));
    }
    let bytes = bytes.ok_or_else(|| InputError::Config {
        path: config.path.clone(),
        message: format!("`report.template`: {} does not exist", path.display()),
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|e| InputError::malformed(path, "template", format!("not UTF-8: {e}")))?;
    Ok((text, changed))
}

/// A template error naming the file and, when minijinja knows it, the line.
fn template_error(path: &std::path::Path, error: &minijinja::Error) -> InputError {
    let location = error
        .line()
        .map_or_else(|| "template".to_string(), |line| format!("line {line}"));
    InputError::malformed(path, location, format!("{error:#}"))
}

/// In a pull-request run judged with the base's config, the template the pull request proposes
/// (its config's, as changed in its tree, which the trust stage read) must render this very
/// report: once merged, a template that does not would stop every later pull request.
fn check_proposed_template(
    config: &Config,
    snapshot: &Snapshot,
    input: &ReportInput<'_>,
) -> Result<(), InputError> {
    let Some((path, text)) = &snapshot.proposed_template else {
        return Ok(());
    };
    markdown::render(input, text)
        .map(drop)
        .map_err(|e| template_error(path, &e))
        .map_err(|e| InputError::Config {
            path: config.path.clone(),
            message: format!(
                "this pull request's report template does not render, and once merged no pull \
                 request could be gated; fix it in this pull request: {e}"
            ),
        })
}

/// The baseline the judge compares with, or why there is none.
fn compared<'a>(
    config: &'a Config,
    baseline: Option<&'a Baseline>,
    not_in_baseline: Option<&'a str>,
) -> Compared<'a> {
    match (baseline, not_in_baseline, &config.baseline) {
        (Some(stored), _, _) => Compared::Baseline(stored),
        (None, Some(note), _) => Compared::NotInBaseline(note),
        (None, None, Some(section)) => Compared::FirstRun(&section.path),
        (None, None, None) => Compared::NotConfigured,
    }
}

/// The run's own notes for the verdict: whose config governs, the trusted inputs the pull
/// request changed (`changed`: the baseline, the template) and the run did not use, what the
/// evaluation says, and a baseline without a records digest.
fn run_notes(
    (config, snapshot): (&Config, &Snapshot),
    evaluation: &Evaluation,
    changed: (bool, bool),
    baseline: Option<&Baseline>,
) -> Vec<Note> {
    let mut notes = Vec::new();
    if let Settled::Proposed { note } = &snapshot.settled {
        notes.push(Note::new(NoteSection::Governance, note.clone()));
    }
    let inputs = (ignored_changes((config, snapshot), changed).into_iter())
        .chain(evaluation.overrides.ignored_change_note())
        .chain(snapshot.notes.iter().cloned());
    notes.extend(inputs.map(|text| Note::new(NoteSection::Inputs, text)));
    let run = (evaluation.notes.iter().cloned()).chain(missing_digest_note(config, baseline));
    notes.extend(run.map(|text| Note::new(NoteSection::Run, text)));
    notes
}

/// Tells the reader which trusted inputs the pull request changed (`changed`: the baseline, the
/// template, besides the config's own list): the run used the base commit's versions, so a
/// maintainer who wants the new ones merges them first.
fn ignored_changes(
    (config, snapshot): (&Config, &Snapshot),
    (baseline_changed, template_changed): (bool, bool),
) -> Vec<String> {
    let mut changed = snapshot.ignored_changes.clone();
    if let (true, Some(section)) = (baseline_changed, &config.baseline) {
        changed.push(format!("baseline {}", section.path.display()));
    }
    if let (true, Some(path)) = (template_changed, &config.report.template) {
        changed.push(format!("template {}", path.display()));
    }
    (changed.into_iter())
        .map(|what| {
            format!(
                "this pull request changes the {what}; the gate used the base commit's version \
                 (merge the change first to use it)"
            )
        })
        .collect()
}

/// The note on a baseline that carries no records digest (written by an older sqlgate).
fn missing_digest_note(config: &Config, baseline: Option<&Baseline>) -> Option<String> {
    let section = config.baseline.as_ref()?;
    baseline.filter(|b| b.records_sha256.is_none())?;
    Some(format!(
        "the baseline {} carries no records digest (written by an older sqlgate), so a hand edit \
         would go unnoticed; regenerate it with `sqlgate baseline update`",
        section.path.display()
    ))
}

/// In GitHub Actions, the step outputs naming the baseline a run compares with:
/// `baseline-commit` (empty when it records none) and `baseline-age-days` (one decimal, as the
/// comment shows it; empty when unknown). Written as soon as the baseline is read, so every later
/// exit (passed, failed, or stopped with exit 2) carries them; best effort, since `publish`
/// writes the other outputs to the same file and fails the run when it cannot.
fn write_baseline_outputs(baseline: &crate::analysis::baseline::Baseline, age_days: Option<f64>) {
    let Some(actions) = crate::ci::github::ActionsContext::from_env() else {
        return;
    };
    let outputs = [
        (
            "baseline-commit",
            baseline.commit.clone().unwrap_or_default(),
        ),
        (
            "baseline-age-days",
            age_days.map_or(String::new(), |days| format!("{days:.1}")),
        ),
    ];
    if let Err(error) = actions.write_outputs(&outputs) {
        crate::util::log::note(&format!("cannot write $GITHUB_OUTPUT: {error}"));
    }
}
