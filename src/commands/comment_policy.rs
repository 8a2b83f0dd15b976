//! When a run posts its sticky PR comment: the `--comment` option or the Action input `comment`
//! (`true`, `false`, or a policy), else the config's `comment` policy. A policy that does not
//! post still updates an existing comment, so an earlier verdict is never left standing.

use super::CommentMode;
use crate::input::config::Config;
use crate::input::policy::CommentPolicy;
use crate::judge::Verdict;

/// What the publishing step does with the comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Posting {
    /// Create or update it.
    Post,
    /// Update the comment an earlier run posted; create none.
    UpdateOnly,
    /// Leave the pull request alone.
    Skip,
}

/// The Action input `comment`: `true` (the config decides), `false`, or a policy name.
pub fn action_input_mode() -> anyhow::Result<CommentMode> {
    let value = super::action_input("COMMENT").map(|v| v.trim().to_ascii_lowercase());
    Ok(match value.as_deref() {
        None | Some("true") => CommentMode::Auto,
        Some("false") => CommentMode::Never,
        Some(name) => match CommentPolicy::parse(name) {
            Some(policy) => mode_of(policy),
            None => anyhow::bail!(
                "Action input `comment` must be `true`, `false`, `always`, `on-change` or \
                 `on-failure`, not `{name}`"
            ),
        },
    })
}

fn mode_of(policy: CommentPolicy) -> CommentMode {
    match policy {
        CommentPolicy::Always => CommentMode::Always,
        CommentPolicy::OnChange => CommentMode::OnChange,
        CommentPolicy::OnFailure => CommentMode::OnFailure,
    }
}

/// The policy in force: the mode's own, else the config's.
fn policy(mode: CommentMode, config: &Config) -> Option<CommentPolicy> {
    match mode {
        CommentMode::Never => None,
        CommentMode::Auto => Some(config.comment),
        CommentMode::Always => Some(CommentPolicy::Always),
        CommentMode::OnChange => Some(CommentPolicy::OnChange),
        CommentMode::OnFailure => Some(CommentPolicy::OnFailure),
    }
}

/// What to do with the comment of a run whose verdict is `verdict` (a gain flagged for review
/// counts as a change).
pub fn posting(mode: CommentMode, config: &Config, verdict: &Verdict) -> Posting {
    let flagged = !verdict.flagged_gains().is_empty();
    let post = match policy(mode, config) {
        None => return Posting::Skip,
        Some(CommentPolicy::Always) => true,
        Some(CommentPolicy::OnFailure) => !verdict.passed(),
        Some(CommentPolicy::OnChange) => !verdict.passed() || flagged || changed(verdict),
    };
    if post {
        Posting::Post
    } else {
        Posting::UpdateOnly
    }
}

/// Whether the run differs from the baseline: nothing was compared (no baseline, a first run),
/// or some compared item regressed or was fixed, or some gated cell moved.
fn changed(verdict: &Verdict) -> bool {
    verdict.comparisons().is_empty()
        || verdict.comparisons().iter().any(|c| {
            !c.regressed.is_empty()
                || !c.fixed.is_empty()
                || c.cells.iter().any(|cell| cell.shown_delta() != 0.0)
        })
}
