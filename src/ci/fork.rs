//! The `workflow_run` half of the fork-safe pair (`sqlgate comment --from-workflow-run`): it runs
//! with a token that may comment, on a report a fork's unprivileged run produced. So nothing in
//! the artifact is trusted: the pull request is found through the API from the run's head commit
//! and repository, the marker is computed here, the verdict is the run's conclusion as the event
//! states it, and the report is shown verbatim inside a code block nothing in it can leave.

use crate::report::escape::{markdown_code_block, markdown_inline};
use crate::util::log::normalize_line_endings;
use serde_json::Value as Json;

/// Most bytes of the artifact's report that are read.
pub const MAX_REPORT_BYTES: u64 = 1 << 20;
/// Longest comment body posted (GitHub's limit is 65,536 characters).
const MAX_BODY_CHARS: usize = 60_000;

/// What the `workflow_run` event says about the run whose report is posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowRun {
    /// `owner/repo` of the base repository (where the comment goes).
    pub repository: String,
    /// The commit the report run tested.
    pub head_sha: String,
    /// `owner/repo` the head commit came from (a fork, or the base repository).
    pub head_repository: String,
    /// Owner of the head repository.
    pub head_owner: String,
    /// Branch of the head commit.
    pub head_branch: String,
    /// The report run's page, named in the comment's trusted header.
    pub html_url: String,
    /// The report workflow's id, which names the sticky comment's marker.
    pub workflow_id: u64,
    /// How the report run ended (`success`, `failure`, `cancelled`, ...).
    pub conclusion: String,
}

/// The verdict the comment states first: the report run's conclusion as GitHub recorded it,
/// never anything the run wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunVerdict {
    /// The run concluded `success`: the gate passed.
    Passed,
    /// The run concluded `failure`: the gate failed, or sqlgate stopped before a verdict.
    Failed,
    /// Any other conclusion (`cancelled`, `timed_out`, `startup_failure`, ...): no verdict.
    CouldNotRun,
}

impl RunVerdict {
    /// The verdict of a run's conclusion; an unknown conclusion is no verdict, never a pass.
    pub fn of(conclusion: &str) -> RunVerdict {
        match conclusion {
            "success" => RunVerdict::Passed,
            "failure" => RunVerdict::Failed,
            _ => RunVerdict::CouldNotRun,
        }
    }

    /// The comment's heading.
    fn heading(self) -> &'static str {
        match self {
            RunVerdict::Passed => "✅ sqlgate passed",
            RunVerdict::Failed => "❌ sqlgate failed",
            RunVerdict::CouldNotRun => "⚠️ sqlgate could not run",
        }
    }

    /// What the conclusion means for the pull request.
    fn meaning(self) -> &'static str {
        match self {
            RunVerdict::Passed => "the gate passed",
            RunVerdict::Failed => {
                "the gate found a regression, or sqlgate stopped before reaching a verdict"
            }
            RunVerdict::CouldNotRun => "the run did not finish, so there is no verdict",
        }
    }
}

impl WorkflowRun {
    /// Reads and checks the event: a `workflow_run` of a `pull_request` run that finished
    /// (`skipped` runs measured nothing and are not commented), in the repository this job runs
    /// for, with a 40-hex head commit.
    pub fn from_event(event_name: &str, payload: &Json, repository: &str) -> Result<Self, String> {
        if event_name != "workflow_run" {
            return Err(format!(
                "`--from-workflow-run` needs a workflow_run event, not `{event_name}`"
            ));
        }
        let text = |pointer: &str| {
            payload
                .pointer(pointer)
                .and_then(Json::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("the event payload has no `{pointer}`"))
        };
        let event = text("/workflow_run/event")?;
        if event != "pull_request" {
            return Err(format!(
                "the workflow run was triggered by `{event}`, not `pull_request`: nothing to post"
            ));
        }
        let conclusion = text("/workflow_run/conclusion")?;
        if conclusion == "skipped" {
            return Err("the workflow run was skipped: nothing to post".into());
        }
        let head_sha = text("/workflow_run/head_sha")?;
        if head_sha.len() != 40 || !head_sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "the event's `/workflow_run/head_sha` is not a commit: `{}`",
                crate::util::log::log_value(&head_sha)
            ));
        }
        let base = text("/repository/full_name")?;
        if base != repository {
            return Err(format!(
                "the event's repository `{base}` is not GITHUB_REPOSITORY `{repository}`"
            ));
        }
        Ok(WorkflowRun {
            repository: base,
            head_sha,
            head_repository: text("/workflow_run/head_repository/full_name")?,
            head_owner: text("/workflow_run/head_repository/owner/login")?,
            head_branch: text("/workflow_run/head_branch")?,
            html_url: text("/workflow_run/html_url")?,
            workflow_id: payload
                .pointer("/workflow_run/workflow_id")
                .and_then(Json::as_u64)
                .ok_or("the event payload has no `/workflow_run/workflow_id`")?,
            conclusion,
        })
    }

    /// The hidden marker of this workflow's sticky comment: computed here, never read from the
    /// report.
    pub fn marker(&self) -> String {
        format!("<!-- sqlgate:workflow-run-{} -->", self.workflow_id)
    }

    /// Whether a pull request (as the API lists it) is the one this run tested: its head is this
    /// run's head commit from this run's head repository, and it targets this repository.
    pub fn tested(&self, pull: &Json) -> bool {
        let field = |pointer: &str| pull.pointer(pointer).and_then(Json::as_str);
        field("/head/sha") == Some(self.head_sha.as_str())
            && field("/head/repo/full_name") == Some(self.head_repository.as_str())
            && field("/base/repo/full_name") == Some(self.repository.as_str())
    }

    /// The comment body: a trusted header written from the event alone (the verdict of the run's
    /// conclusion first, then the run and its commit), then the run's report, if it uploaded one,
    /// verbatim in a folded code block, cut to fit one comment.
    pub fn body(&self, report: Option<&str>) -> String {
        let verdict = RunVerdict::of(&self.conclusion);
        let run = match link_target(&self.html_url) {
            Some(url) => format!("[The report run]({url})"),
            None => "The report run".to_string(),
        };
        let header = format!(
            "{marker}\n## {heading}\n\n{run} on commit `{sha}` concluded **{conclusion}**: \
             {meaning}. This verdict is GitHub's record of the run, read by the `workflow_run` \
             job, not anything the run wrote.\n\n",
            marker = self.marker(),
            heading = verdict.heading(),
            sha = &self.head_sha[..12],
            conclusion = markdown_inline(&self.conclusion),
            meaning = verdict.meaning(),
        );
        let Some(report) = report else {
            return header + "The run uploaded no report.\n";
        };
        let budget = MAX_BODY_CHARS - header.chars().count() - 200;
        format!(
            "{header}The report below was written by the pull request's own run and is shown \
             verbatim, as untrusted text.\n\n<details><summary>The report the run uploaded\
             </summary>\n\n{}\n\n</details>\n",
            fenced_report(report, budget)
        )
    }
}

/// `url` when it can stand as a link target as it is: an `https://` address of letters,
/// digits and `/.:_-` only (the run pages GitHub names); `None` otherwise.
fn link_target(url: &str) -> Option<&str> {
    let plain = url
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/.:_-".contains(&b));
    (url.starts_with("https://") && plain).then_some(url)
}

/// The report as a code block of at most `budget` characters: HTML comments (markers among
/// them) removed, cut at a line with a note when it is longer.
fn fenced_report(report: &str, budget: usize) -> String {
    let text = strip_html_comments(&normalize_line_endings(report));
    let mut keep = text.chars().count();
    loop {
        let cut = cut_at_line(&text, keep);
        let mut block = markdown_code_block(cut, "text");
        if cut.len() < text.len() {
            block.push_str("\n\n*(report truncated to fit one comment)*");
        }
        match block.chars().count().checked_sub(budget) {
            Some(over) if over > 0 => keep = keep.saturating_sub(over),
            _ => return block,
        }
    }
}

/// The first `chars` characters of `text`, back to the last line break when cut inside a line.
fn cut_at_line(text: &str, chars: usize) -> &str {
    let Some((end, _)) = text.char_indices().nth(chars) else {
        return text;
    };
    let cut = &text[..end];
    cut.rfind('\n').map_or(cut, |newline| &cut[..newline])
}

/// `text` without `<!-- ... -->` comments (an unclosed one runs to the end).
fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        rest = match rest[start..].find("-->") {
            Some(end) => &rest[start + end + 3..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// The open pull request `run` tested, found through the API: by head branch first, then by the
/// head commit; `None` when it was closed or pushed to since. Several candidates are an error.
pub fn find_pull_request(
    api_url: &str,
    token: &str,
    run: &WorkflowRun,
) -> Result<Option<u64>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the HTTP runtime: {e}"))?;
    runtime.block_on(async {
        let client = octocrab::Octocrab::builder()
            .base_uri(api_url)
            .and_then(|b| b.personal_token(token.to_string()).build())
            .map_err(|e| format!("cannot build the GitHub client: {e}"))?;
        let head = format!("{}:{}", run.head_owner, run.head_branch);
        let by_branch = (
            format!("/repos/{}/pulls", run.repository),
            vec![
                ("state", "open"),
                ("head", head.as_str()),
                ("per_page", "100"),
            ],
        );
        let by_commit = (
            format!("/repos/{}/commits/{}/pulls", run.repository, run.head_sha),
            vec![],
        );
        for (route, query) in [by_branch, by_commit] {
            let pulls: Json = client
                .get(route, Some(&query))
                .await
                .map_err(|e| format!("the GitHub API refused the pull request lookup: {e}"))?;
            let numbers: Vec<u64> = pulls
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| run.tested(p))
                .filter_map(|p| p["number"].as_u64())
                .collect();
            match numbers.as_slice() {
                [] => continue,
                [number] => return Ok(Some(*number)),
                many => {
                    return Err(format!(
                        "several open pull requests have head {}: {many:?}",
                        run.head_sha
                    ))
                }
            }
        }
        Ok(None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(conclusion: &str) -> WorkflowRun {
        WorkflowRun {
            repository: "acme/model".into(),
            head_sha: "1".repeat(40),
            head_repository: "forker/model".into(),
            head_owner: "forker".into(),
            head_branch: "feature".into(),
            html_url: "https://github.com/acme/model/actions/runs/5".into(),
            workflow_id: 42,
            conclusion: conclusion.into(),
        }
    }

    #[test]
    fn the_header_states_the_conclusion_first() {
        for (conclusion, heading) in [
            ("success", "## ✅ sqlgate passed\n"),
            ("failure", "## ❌ sqlgate failed\n"),
            ("cancelled", "## ⚠️ sqlgate could not run\n"),
            ("something_new", "## ⚠️ sqlgate could not run\n"),
        ] {
            let body = run(conclusion).body(Some("## ✅ sqlgate passed"));
            let second_line = body.lines().nth(1).unwrap();
            assert_eq!(format!("{second_line}\n"), heading);
        }
        assert!(run("failure")
            .body(None)
            .ends_with("The run uploaded no report.\n"));
    }

    #[test]
    fn long_reports_are_cut_at_a_line_with_a_note() {
        let body = run("failure").body(Some(&"a line\n".repeat(20_000)));
        assert!(body.chars().count() <= MAX_BODY_CHARS, "{}", body.len());
        assert!(body.contains("a line\n```\n\n*(report truncated to fit one comment)*"));
        let ticks = "`".repeat(70_000);
        let body = run("failure").body(Some(&ticks));
        assert!(body.chars().count() <= MAX_BODY_CHARS, "{}", body.len());
    }

    #[test]
    fn only_plain_https_addresses_are_linked() {
        assert!(link_target("https://github.com/a/b/actions/runs/5").is_some());
        assert!(link_target("https://x.example/a)b").is_none());
        assert!(link_target("javascript:alert(1)").is_none());
    }
}
