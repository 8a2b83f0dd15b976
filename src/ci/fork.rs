//! The `workflow_run` half of the fork-safe pair (`sqlgate comment --from-workflow-run`): it runs
//! with a token that may comment, on a report a fork's unprivileged run produced. So nothing in
//! the artifact is trusted: the pull request is found through the API from the run's head commit
//! and repository, the marker is computed here, and the report is re-escaped as inert text.

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
}

impl WorkflowRun {
    /// Reads and checks the event: a `workflow_run` of a `pull_request` run that concluded with
    /// `success` or `failure` (a failed gate is what must be commented; a cancelled or skipped
    /// run is not), in the repository this job runs for.
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
        if !matches!(conclusion.as_str(), "success" | "failure") {
            return Err(format!(
                "the workflow run concluded `{conclusion}`, so its report is not posted"
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
            head_sha: text("/workflow_run/head_sha")?,
            head_repository: text("/workflow_run/head_repository/full_name")?,
            head_owner: text("/workflow_run/head_repository/owner/login")?,
            head_branch: text("/workflow_run/head_branch")?,
            html_url: text("/workflow_run/html_url")?,
            workflow_id: payload
                .pointer("/workflow_run/workflow_id")
                .and_then(Json::as_u64)
                .ok_or("the event payload has no `/workflow_run/workflow_id`")?,
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

    /// The comment body: a trusted header naming the run and its commit, then the report as
    /// inert text.
    pub fn body(&self, report: &str) -> String {
        let header = format!(
            "{}\n**sqlgate report** of [the fork's run]({}) on `{}` (posted by the \
             `workflow_run` job; its text is shown escaped)\n\n",
            self.marker(),
            self.html_url,
            &self.head_sha[..self.head_sha.len().min(12)]
        );
        header + &inert(report, MAX_BODY_CHARS)
    }
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
        let by_branch = format!(
            "/repos/{}/pulls?state=open&head={}:{}&per_page=100",
            run.repository, run.head_owner, run.head_branch
        );
        let by_commit = format!("/repos/{}/commits/{}/pulls", run.repository, run.head_sha);
        for route in [by_branch, by_commit] {
            let pulls: Json = client
                .get(route, None::<&()>)
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

/// `report` as text nothing in which is interpreted: HTML comments (markers included) removed,
/// `&` and `<` escaped, mentions broken, link and image syntax escaped, outside code fences;
/// inside a fence, backticks and tildes replaced by look-alikes so that no line can close it
/// early, and a fence left open closed; cut to `limit` characters with a note.
pub fn inert(report: &str, limit: usize) -> String {
    let without_comments = strip_html_comments(report);
    let mut out = String::new();
    let mut fence: Option<char> = None;
    let mut truncated = false;
    for line in without_comments.lines() {
        if out.len() + line.len() * 8 + 8 > limit {
            truncated = true;
            break;
        }
        let trimmed = line.trim();
        match fence {
            Some(mark) if trimmed.len() >= 3 && trimmed.chars().all(|c| c == mark) => {
                fence = None;
                out.push_str(&mark.to_string().repeat(3));
            }
            Some(_) => out.push_str(&line.replace('`', "\u{2018}").replace('~', "\u{223C}")),
            None => match ['`', '~']
                .into_iter()
                .find(|m| trimmed.starts_with(&m.to_string().repeat(3)))
            {
                Some(mark) => {
                    fence = Some(mark);
                    let info: String = trimmed
                        .trim_start_matches(mark)
                        .chars()
                        .filter(char::is_ascii_alphanumeric)
                        .take(20)
                        .collect();
                    out.push_str(&format!("{}{info}", mark.to_string().repeat(3)));
                }
                None => out.push_str(&escape_line(line)),
            },
        }
        out.push('\n');
    }
    if let Some(mark) = fence {
        out.push_str(&format!("{}\n", mark.to_string().repeat(3)));
    }
    if truncated {
        out.push_str("\n*(report truncated)*\n");
    }
    out
}

/// One line outside code: `<` escaped, `@` followed by a zero-width space, `[`, `]` and `!`
/// escaped so that no link, image or reference definition forms.
fn escape_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' if out.trim().is_empty() => out.push('>'),
            '>' => out.push_str("&gt;"),
            '@' => out.push_str("@\u{200B}"),
            '[' | ']' | '!' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_markdown_becomes_inert_text() {
        let hostile = "<!-- sqlgate:abc -->\n@octocat <img src=x onerror=alert(1)>\n\
                       ![pixel](https://evil.example/p.png) [x]: https://evil.example\n\
                       ```sql\nSELECT 1 -- ``` breaks?\n```\n<script>alert(1)</script>\n```\nopen";
        let text = inert(hostile, 10_000);
        assert!(!text.contains("<!--"), "{text}");
        assert!(
            !text.contains("<img") && !text.contains("<script"),
            "{text}"
        );
        assert!(text.contains("@\u{200B}octocat"), "{text}");
        assert!(text.contains("\\!\\[pixel\\](https"), "{text}");
        assert!(
            text.contains("SELECT 1 -- \u{2018}\u{2018}\u{2018} breaks?"),
            "{text}"
        );
        assert!(text.contains("&lt;script&gt;"), "{text}");
        assert_eq!(text.matches("```").count() % 2, 0, "{text}");
    }

    #[test]
    fn long_reports_are_cut_with_a_note() {
        let text = inert(&"a line\n".repeat(10_000), 1_000);
        assert!(text.chars().count() < 1_100 && text.ends_with("*(report truncated)*\n"));
    }
}
