//! A run of `sqlgate action` that stops before its verdict (exit 2: a usage or input error, or an
//! internal error) still tells the pull request why: the reason replaces the sticky comment (so
//! an earlier "✅ passed" never stays), and goes to an `::error` line, the step summary, the
//! step outputs `exit-code`, `passed=false` and `reason`, and the `report` input's file, which the
//! fork-safe pair uploads and its `workflow_run` half posts.

use super::finish::report_comment;
use super::CommentMode;
use crate::ci::github::ActionsContext;
use crate::report::escape::markdown_message;
use std::path::{Path, PathBuf};

/// The exit code of a run that could not evaluate.
pub const EXIT_CANNOT_EVALUATE: u8 = 2;

/// The sticky comment of a run that could not evaluate the config at `config_path`: under the
/// same marker as that config's verdicts, the reason (escaped: it may quote the pull request's
/// files; paths, hashes and what it quotes as code spans, so they copy exactly) in a heading of
/// one line (a reason too long for it is cut at a clause and continues below) and what the red
/// check means.
pub fn failure_comment(marker: &str, reason: &str) -> String {
    let (line, rest) = crate::judge::headline::fit_line("could not evaluate: ", reason, "");
    let rest = rest.map_or_else(String::new, |rest| markdown_message(&rest) + "\n\n");
    format!(
        "{marker}\n## ⚠️ sqlgate {}\n\n{rest}\
         sqlgate stopped with exit code {EXIT_CANNOT_EVALUATE} (usage or input error) before \
         it could score this pull request, so there is no verdict and the check fails until the \
         cause above is fixed. Earlier results on this pull request no longer apply.\n",
        markdown_message(&line)
    )
}

/// Publishes the reason a run of `sqlgate action` on `config_path` stopped: `::error` line on
/// stdout, step summary, step outputs, the report file at `report` (the `report` input, or
/// [`report_path`]), and (unless
/// `mode` is `Never`) the sticky comment. Outside GitHub Actions it does nothing (the reason is
/// on stderr already). Every part is best effort: one that fails is said on stderr and the others
/// are still attempted.
pub fn publish_failure(config_path: &Path, reason: &str, mode: CommentMode, report: Option<&Path>) {
    let Some(actions) = ActionsContext::from_env() else {
        return;
    };
    let reason = crate::util::scrub::scrub(reason);
    println!("{}", crate::ci::annotations::error_command(&reason));
    let comment = failure_comment(&super::gate_run::marker_of_path(config_path), &reason);
    if let Err(error) = actions.write_step_summary(&comment) {
        crate::util::log::note(&format!("cannot write $GITHUB_STEP_SUMMARY: {error}"));
    }
    let report = match report {
        Some(given) => Report::Given(given.to_path_buf()),
        None => Report::Configured(report_path(config_path)),
    };
    let written = write_failure_report(config_path, &report, &comment);
    let report = report.path();
    if let Err(error) = &written {
        crate::util::log::note(&format!(
            "cannot write the report {}: {error}",
            report.display()
        ));
    }
    let mut outputs = vec![
        ("exit-code", EXIT_CANNOT_EVALUATE.to_string()),
        ("passed", "false".to_string()),
        ("reason", reason.clone()),
    ];
    if written.is_ok() {
        outputs.push(("report", report.display().to_string()));
    }
    if let Err(error) = actions.write_outputs(&outputs) {
        crate::util::log::note(&format!("cannot write $GITHUB_OUTPUT: {error}"));
    }
    if mode == CommentMode::Never {
        return;
    }
    report_comment(
        actions.upsert_comment(&super::gate_run::marker_of_path(config_path), &comment),
        &comment,
        Path::new("the step summary"),
    );
}

/// Where a run that could not evaluate writes its report.
enum Report {
    /// The Action's `report` input: the workflow's path, which may lie outside the workspace.
    Given(PathBuf),
    /// The config's `report.output` (its text may still parse) or the default
    /// `sqlgate-report.md` beside the config, under the workspace rule, so the report a workflow
    /// uploads always exists.
    Configured(PathBuf),
}

impl Report {
    /// The file's path.
    fn path(&self) -> &Path {
        match self {
            Report::Given(path) | Report::Configured(path) => path,
        }
    }
}

/// The config's `report.output` when its file is a regular file (never a link, which could
/// lead out of the workspace or to an endless device) whose bounded text still parses, else
/// `sqlgate-report.md` beside it.
fn report_path(config_path: &Path) -> PathBuf {
    let regular = std::fs::symlink_metadata(config_path).is_ok_and(|m| m.is_file());
    let parsed = (regular.then(|| crate::util::error::read_utf8(config_path).ok()))
        .flatten()
        .and_then(|text| {
            crate::input::config::Config::parse(
                &text,
                config_path,
                &crate::engine::registry::Engines,
            )
            .ok()
        });
    match parsed {
        Some(config) => config.report_path(),
        None => crate::input::config::folder_of(config_path).join("sqlgate-report.md"),
    }
}

/// Writes `comment` to `report`: never in `.git`, never over a file sqlgate did not write, and
/// inside the workspace of the config's folder unless the workflow gave the path.
fn write_failure_report(config_path: &Path, report: &Report, comment: &str) -> anyhow::Result<()> {
    let workspace =
        crate::util::workspace::Workspace::detect(crate::input::config::folder_of(config_path))
            .map_err(anyhow::Error::msg)?;
    let markers = [crate::input::config::REPORT_MARKER];
    let checked = match report {
        Report::Given(path) => workspace.user_output_file("report", path, &markers),
        Report::Configured(path) => workspace.output_file("report.output", path, &markers),
    };
    checked.map_err(anyhow::Error::msg)?;
    crate::util::fs::write_file_atomically(report.path(), |out| {
        std::io::Write::write_all(out, comment.as_bytes())
    })?;
    Ok(())
}

/// The message of a panic payload (a `&str` or `String`), for the reason of a run that panicked.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    format!("internal error (please report it): {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_escaped_under_the_marker() {
        let comment = failure_comment("<!-- sqlgate:abc -->", "bad `x` <img> @team\n# h");
        assert!(comment.starts_with("<!-- sqlgate:abc -->\n## ⚠️ sqlgate could not evaluate: "));
        let heading = comment.lines().nth(1).unwrap();
        assert!(
            heading.ends_with("bad `x` &lt;img&gt; `@team` &#35; h"),
            "{heading}"
        );
        assert!(
            !comment.contains("<img>") && !comment.contains(" @team") && !comment.contains("\n# h")
        );
    }

    #[test]
    fn a_long_reason_keeps_the_heading_to_one_line_and_continues_below() {
        let reason = "config sqlgate.yml: this pull request's version of the config does not \
                      load: unknown field `max_drop_point`, expected one of `metric`, \
                      `max_drop_points` at line 18 column 3";
        let comment = failure_comment("<!-- sqlgate:abc -->", reason);
        let lines: Vec<&str> = comment.lines().collect();
        assert_eq!(
            lines[1],
            "## ⚠️ sqlgate could not evaluate: config sqlgate.yml"
        );
        assert_eq!(
            lines[3],
            "this pull request's version of the config does not load: unknown field \
             `max_drop_point`, expected one of `metric`, `max_drop_points` at line 18 column 3"
        );
    }

    #[test]
    fn a_panic_becomes_an_internal_error_reason() {
        let payload = std::panic::catch_unwind(|| panic!("index {} out of range", 7)).unwrap_err();
        assert_eq!(
            panic_message(payload.as_ref()),
            "internal error (please report it): index 7 out of range"
        );
        let payload = std::panic::catch_unwind(|| std::panic::panic_any(3_u8)).unwrap_err();
        assert_eq!(
            panic_message(payload.as_ref()),
            "internal error (please report it): no message"
        );
    }
}
