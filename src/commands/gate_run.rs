//! What `sqlgate eval` does after scoring: load and check the baseline, analyse the current
//! systems together with the leaderboard, apply the gate and render the report.

use crate::analysis::agreement::{Analysis, SystemRecords};
use crate::analysis::baseline::Baseline;
use crate::analysis::gate::{self, GateResult};
use crate::analysis::records::records;
use crate::input::config::Config;
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
    pub gate: GateResult,
    /// The full report.
    pub report: String,
    /// The report shortened to fit a GitHub comment.
    pub comment: String,
    /// Hidden marker identifying this config's comment.
    pub marker: String,
}

/// The hidden marker of a config's comment: one sticky comment per config file, named by its
/// path relative to the working directory (the repository root in Actions), or by its file name
/// when it lies elsewhere, so the marker is the same on every run and every checkout.
pub fn comment_marker(config: &Config) -> String {
    let absolute = std::path::absolute(&config.path).unwrap_or_else(|_| config.path.clone());
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

/// Loads the baseline (if configured and present), analyses, gates and renders.
pub fn gate_run(
    config: &Config,
    evaluation: &Evaluation,
    report_file: &str,
) -> Result<GateRun, InputError> {
    let baseline = load_baseline(config, evaluation)?;
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
    let gate = gate::evaluate(config, &current, baseline.as_ref());
    let marker = comment_marker(config);
    let template = match &config.report.template {
        Some(path) => crate::util::error::read_utf8(path)?,
        None => markdown::DEFAULT_TEMPLATE.to_string(),
    };
    let input = ReportInput {
        evaluation,
        analysis: &analysis,
        baseline_analysis: baseline_analysis.as_ref(),
        gate: &gate,
        gate_metric: config.gate_metric(),
        marker: &marker,
        baseline_commit: baseline.as_ref().and_then(|b| b.commit.as_deref()),
        report_file,
    };
    let template_path = config
        .report
        .template
        .clone()
        .unwrap_or_else(|| "templates/comment.md.j2".into());
    let (report, comment) = markdown::render(&input, &template)
        .map_err(|e| InputError::malformed(&template_path, "template", e.to_string()))?;
    Ok(GateRun {
        analysis,
        baseline_analysis,
        gate,
        report,
        comment,
        marker,
    })
}

fn load_baseline(config: &Config, evaluation: &Evaluation) -> Result<Option<Baseline>, InputError> {
    let Some(section) = &config.baseline else {
        return Ok(None);
    };
    if !section.path.exists() {
        return Ok(None);
    }
    let baseline = Baseline::load(&section.path)?;
    baseline.check_compatible(&section.path, config, evaluation)?;
    Ok(Some(baseline))
}
