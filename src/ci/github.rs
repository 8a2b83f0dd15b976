//! GitHub integration: the Actions context (event payload, token, API URL), one sticky PR
//! comment per config found by a hidden marker and updated in place (octocrab), and the step
//! summary and step outputs.

use octocrab::models::CommentId;
use std::io::Write as _;
use std::path::PathBuf;

/// What a run inside GitHub Actions knows about where it runs.
#[derive(Debug, Clone)]
pub struct ActionsContext {
    /// `owner/repo`.
    pub repository: Option<String>,
    /// The pull request number, from the event payload.
    pub pull_request: Option<u64>,
    /// The API token (`SQLGATE_GITHUB_TOKEN` or `GITHUB_TOKEN`).
    pub token: Option<String>,
    /// `GITHUB_API_URL` (GitHub Enterprise, or a local test server).
    pub api_url: String,
    /// `$GITHUB_OUTPUT`.
    pub output_file: Option<PathBuf>,
    /// `$GITHUB_STEP_SUMMARY`.
    pub summary_file: Option<PathBuf>,
    /// `SQLGATE_COMMENT_AUTHOR`: the login of a GitHub App's bot (`my-app[bot]`) whose token
    /// cannot name itself; without it such a token is taken for `github-actions[bot]`.
    pub comment_author: Option<String>,
}

/// The login of the Actions `GITHUB_TOKEN`, which cannot read `GET /user`.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// What happened to the PR comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommentOutcome {
    /// A new comment was created.
    Created(u64),
    /// The existing comment with the marker was updated.
    Updated(u64),
    /// Nothing was posted, and why.
    NotPosted(String),
}

impl ActionsContext {
    /// Reads the context from the environment; `None` outside GitHub Actions (and `act`).
    pub fn from_env() -> Option<ActionsContext> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        if var("GITHUB_ACTIONS").as_deref() != Some("true") && var("GITHUB_EVENT_PATH").is_none() {
            return None;
        }
        Some(ActionsContext {
            repository: var("GITHUB_REPOSITORY"),
            pull_request: var("GITHUB_EVENT_PATH")
                .and_then(|p| pull_request_number(&PathBuf::from(p))),
            token: var("SQLGATE_GITHUB_TOKEN").or_else(|| var("GITHUB_TOKEN")),
            api_url: var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into()),
            output_file: var("GITHUB_OUTPUT").map(PathBuf::from),
            summary_file: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            comment_author: var("SQLGATE_COMMENT_AUTHOR"),
        })
    }

    /// Appends `key=value` lines to `$GITHUB_OUTPUT`.
    pub fn write_outputs(&self, outputs: &[(&str, String)]) -> std::io::Result<()> {
        let Some(path) = &self.output_file else {
            return Ok(());
        };
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        for (key, value) in outputs {
            writeln!(file, "{key}={}", value.replace(['\n', '\r'], " "))?;
        }
        Ok(())
    }

    /// Appends the report to `$GITHUB_STEP_SUMMARY`.
    pub fn write_step_summary(&self, markdown: &str) -> std::io::Result<()> {
        let Some(path) = &self.summary_file else {
            return Ok(());
        };
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        writeln!(file, "{markdown}")
    }

    /// Creates or updates the comment carrying `marker` on the pull request. Only a comment the
    /// token's own identity wrote is updated (see [`own_login`]): a person, or another bot, who
    /// copies the marker into a comment of their own cannot make sqlgate edit (or fail to edit) it.
    pub fn upsert_comment(&self, marker: &str, body: &str) -> CommentOutcome {
        self.post(marker, body, true)
    }

    /// Updates the comment carrying `marker` when an earlier run posted one (same rule as
    /// [`Self::upsert_comment`]); creates none. A comment policy that does not post this run
    /// uses it, so the pull request never shows a stale verdict.
    pub fn update_comment(&self, marker: &str, body: &str) -> CommentOutcome {
        self.post(marker, body, false)
    }

    fn post(&self, marker: &str, body: &str, create: bool) -> CommentOutcome {
        let Some(token) = &self.token else {
            return CommentOutcome::NotPosted(
                "no token (fork pull requests and `act` runs have none)".into(),
            );
        };
        let Some((owner, repo)) = self.repository.as_deref().and_then(|r| r.split_once('/')) else {
            return CommentOutcome::NotPosted("GITHUB_REPOSITORY is not set".into());
        };
        let Some(number) = self.pull_request else {
            return CommentOutcome::NotPosted("the event is not a pull request".into());
        };
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => {
                return CommentOutcome::NotPosted(format!("cannot start the HTTP runtime: {e}"))
            }
        };
        let target = Target {
            owner,
            repo,
            number,
            author: self.comment_author.as_deref(),
        };
        runtime
            .block_on(upsert(
                &self.api_url,
                token,
                &target,
                (marker, body),
                create,
            ))
            .unwrap_or_else(|e| {
                CommentOutcome::NotPosted(format!("the GitHub API refused: {}", describe(&e)))
            })
    }
}

/// An octocrab error with GitHub's status and message, or its cause chain, cut and scrubbed
/// of credentials (error bodies are never printed whole).
fn describe(error: &octocrab::Error) -> String {
    crate::util::scrub::scrub_cut(&describe_whole(error), 300)
}

fn describe_whole(error: &octocrab::Error) -> String {
    if let octocrab::Error::GitHub { source, .. } = error {
        return format!("{} {}", source.status_code, source.message);
    }
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(inner) = cause {
        text.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    text
}

/// The PR number of a `pull_request`, `pull_request_target` or `issue_comment` payload.
fn pull_request_number(event_path: &std::path::Path) -> Option<u64> {
    let payload: serde_json::Value =
        serde_json::from_slice(&crate::util::error::read_bytes(event_path).ok()?).ok()?;
    payload["pull_request"]["number"].as_u64().or_else(|| {
        payload["issue"]["pull_request"]
            .is_object()
            .then(|| payload["issue"]["number"].as_u64())
            .flatten()
    })
}

/// Where the sticky comment goes, and who may have written it.
struct Target<'a> {
    owner: &'a str,
    repo: &'a str,
    number: u64,
    /// `SQLGATE_COMMENT_AUTHOR`, for a token that cannot name itself.
    author: Option<&'a str>,
}

/// The login whose comments sqlgate may update: the token's own user when `GET /user` answers
/// (a personal or user-to-server token); otherwise (an installation token: the Actions
/// `GITHUB_TOKEN` or a GitHub App's) `configured`, else [`ACTIONS_BOT`].
async fn own_login(
    client: &octocrab::Octocrab,
    configured: Option<&str>,
) -> Result<String, octocrab::Error> {
    let user: Result<serde_json::Value, _> = client.get("/user", None::<&()>).await;
    match user {
        Ok(user) => match user["login"].as_str() {
            Some(login) => Ok(login.to_string()),
            None => Ok(configured.unwrap_or(ACTIONS_BOT).to_string()),
        },
        Err(octocrab::Error::GitHub { source, .. })
            if matches!(source.status_code.as_u16(), 401 | 403 | 404) =>
        {
            Ok(configured.unwrap_or(ACTIONS_BOT).to_string())
        }
        Err(error) => Err(error),
    }
}

async fn upsert(
    api_url: &str,
    token: &str,
    target: &Target<'_>,
    (marker, body): (&str, &str),
    create: bool,
) -> Result<CommentOutcome, octocrab::Error> {
    let client = octocrab::Octocrab::builder()
        .base_uri(api_url)?
        .personal_token(token.to_string())
        .build()?;
    let login = own_login(&client, target.author).await?;
    let (owner, repo) = (target.owner, target.repo);
    let issues = client.issues(owner, repo);
    let mut page_number = 1u32;
    loop {
        let page = issues
            .list_comments(target.number)
            .per_page(100)
            .page(page_number)
            .send()
            .await?;
        let found = page.items.iter().find(|c| {
            c.user.login.eq_ignore_ascii_case(&login)
                && c.body.as_deref().is_some_and(|b| b.starts_with(marker))
        });
        if let Some(comment) = found {
            let id: CommentId = comment.id;
            let route = format!("/repos/{owner}/{repo}/issues/comments/{id}");
            let _: octocrab::models::issues::Comment = client
                .patch(route, Some(&serde_json::json!({ "body": body })))
                .await?;
            return Ok(CommentOutcome::Updated(id.into_inner()));
        }
        if page.next.is_none() || page.items.is_empty() {
            break;
        }
        page_number += 1;
    }
    if !create {
        return Ok(CommentOutcome::NotPosted(
            "the comment policy posts none this run and no earlier comment exists".into(),
        ));
    }
    let created = issues.create_comment(target.number, body).await?;
    Ok(CommentOutcome::Created(created.id.into_inner()))
}
