//! The judge cache in a pull-request run, through the binary with a real git history and the
//! local OpenAI-compatible test server: a base commit whose baseline records the cache entries
//! its run wrote, and a pull request that breaks 10 of 20 predictions. Judge replies the pull
//! request commits (forged "correct" verdicts) are not used: the server is asked again and its
//! real "not equivalent" verdicts decide, and once merged they do not enter the next baseline
//! either. Symlinked cache folders put nothing outside.

use crate::common;
use common::repo::{self, sqlgate_in};
use common::text;

use common::git;

use common::openai::{Recorded, Reply, Server};
use serde_json::{json, Value as Json};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Items of the dataset (all on `concert_singer`), of which the pull request breaks half.
pub(crate) const ITEMS: usize = 20;
pub(crate) const BROKEN: usize = 10;
const WRONG: &str = "SELECT 'wrong' FROM singer";

fn verdict(correct: bool, category: Option<&str>) -> String {
    let object = json!({"correct": correct, "category": category, "explanation": "scripted"});
    format!("```json\n{object}\n```")
}

/// The judge: "not equivalent" for the broken predictions, "equivalent" otherwise; while
/// `lying` is set, "equivalent" for everything (what a pull request would commit).
pub(crate) fn start_judge(lying: Arc<AtomicBool>) -> Server {
    Server::start(move |request: &Recorded, _| {
        let prompt = request.body["messages"][1]["content"]
            .as_str()
            .unwrap_or_default();
        let reply = match (prompt.contains("'wrong'"), lying.load(Ordering::SeqCst)) {
            (false, _) => verdict(true, None),
            (true, false) => verdict(false, Some("incorrect_filtering_condition")),
            (true, true) => verdict(true, Some("different_output_structure")),
        };
        Reply::chat(&reply, 10, 2)
    })
}

/// A repository with 20 Spider items, system A predicting the gold, judged by `server`; the
/// base commit holds the baseline and the judge cache its run wrote; the `pr` branch breaks
/// 10 predictions. Returns (folder, base commit).
pub(crate) fn repository(server: &Server) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let spider = common::shared_spider();
    let dev: Vec<Json> =
        serde_json::from_str(&std::fs::read_to_string(spider.join("dev.json")).unwrap()).unwrap();
    let items: Vec<&Json> = dev
        .iter()
        .filter(|i| i["db_id"] == "concert_singer")
        .take(ITEMS)
        .collect();
    let gold: Vec<Json> = items
        .iter()
        .map(|i| json!({"db_id": i["db_id"], "question": i["question"], "query": i["query"]}))
        .collect();
    std::fs::write(repo.join("gold.json"), Json::Array(gold).to_string()).unwrap();
    let predictions = |broken: usize| -> String {
        items
            .iter()
            .enumerate()
            .map(|(id, item)| {
                let sql = if id < broken {
                    WRONG
                } else {
                    item["query"].as_str().unwrap()
                };
                json!({"id": id, "sql": sql}).to_string() + "\n"
            })
            .collect()
    };
    std::fs::write(repo.join("a.jsonl"), predictions(0)).unwrap();
    let config = format!(
        "dataset: {{ gold: gold.json, databases: '{}', difficulty: none }}\n\
         predictions:\n  - {{ name: A, path: a.jsonl, format: jsonl }}\n\
         metrics: [ex, flex]\nreference: ex\nbaseline: {{ path: baseline.json }}\n\
         gate: {{ metric: flex, max_drop_points: 0.0 }}\n\
         judge: {{ base_url: '{}', model: judge-model, timeout_ms: 5000, backoff_ms: 10 }}\n",
        spider.join("database").display(),
        server.base_url
    );
    std::fs::write(repo.join("sqlgate.yml"), config).unwrap();
    repo::init_main(&repo, "dataset and config");
    repo::update_baseline(&repo);
    assert_eq!(server.count(), ITEMS);
    repo::commit_all(&repo, "baseline and judge cache");
    let base = repo::head(&repo);
    git(&repo, &["checkout", "-qb", "pr"]);
    std::fs::write(repo.join("a.jsonl"), predictions(BROKEN)).unwrap();
    git(&repo, &["commit", "-qam", "worse predictions"]);
    (dir, base)
}

/// `eval` of the pull request (trusting `base` when given) with its per-item verdicts.
pub(crate) fn eval(repo: &Path, base: Option<&str>) -> (Output, Vec<Json>) {
    let jsonl = repo.parent().unwrap().join("items.jsonl");
    let mut args = [&repo::EVAL[..], &["--jsonl", jsonl.to_str().unwrap()]].concat();
    if let Some(base) = base {
        args.extend(["--trusted-base", base]);
    }
    let run = sqlgate_in(repo, &args, &[]);
    let verdicts = common::read_jsonl(&jsonl)
        .into_iter()
        .map(|l| json!([l["index"], l["metrics"], l["outcome"]]))
        .collect();
    (run, verdicts)
}

/// Asserts the run failed the gate on flex with the judge's real verdicts: half the items wrong.
pub(crate) fn assert_real_verdicts(run: &Output, verdicts: &[Json]) -> String {
    let out = text(run);
    assert_eq!(run.status.code(), Some(1), "{out}");
    common::assert_contains(&out, &["gate failed: flex 100.0 -> 50.0"]);
    let wrong = verdicts.iter().filter(|v| v[1]["flex"] == 0).count();
    assert_eq!(wrong, BROKEN, "{out}");
    out
}

#[test]
fn forged_judge_replies_committed_by_a_pull_request_are_asked_again() {
    let lying = Arc::new(AtomicBool::new(false));
    let server = start_judge(lying.clone());
    let (dir, base) = repository(&server);
    let repo = dir.path().join("repo");

    let before = server.count();
    let (run, honest) = eval(&repo, Some(&base));
    assert_real_verdicts(&run, &honest);
    assert_eq!(
        server.count() - before,
        BROKEN,
        "the base's entries are used"
    );
    git(&repo, &["clean", "-fdq"]);

    // The pull request's own run, against a judge that says "correct" to everything; it
    // commits the replies.
    lying.store(true, Ordering::SeqCst);
    let (forging, _) = eval(&repo, None);
    common::assert_exit(&forging, 0);
    lying.store(false, Ordering::SeqCst);
    git(&repo, &["add", "-A"]);
    git(
        &repo,
        &[
            "commit",
            "-qm",
            "judge replies that say every prediction is right",
        ],
    );
    let (untrusted, _) = eval(&repo, None);
    assert_eq!(
        untrusted.status.code(),
        Some(0),
        "without a trusted base the forged replies pass: {}",
        text(&untrusted)
    );

    let before = server.count();
    let (run, verdicts) = eval(&repo, Some(&base));
    let out = assert_real_verdicts(&run, &verdicts);
    assert_eq!(verdicts, honest, "{out}");
    assert_eq!(server.count() - before, BROKEN, "{out}");
    assert!(
        out.contains(&format!(
            "{BROKEN} judge cache entries were not written by a base-branch run"
        )) && out.contains("this pull request changes the judge cache (.sqlgate/cache/judge/"),
        "{out}"
    );

    // Merged as it is, the forged replies still do not enter the next baseline: `baseline
    // update` uses no cache entry (red team round 41), so every item is asked again.
    git(&repo, &["reset", "-q", "--hard"]);
    git(&repo, &["clean", "-fdq"]);
    git(&repo, &["checkout", "-q", "main"]);
    git(&repo, &["merge", "-q", "pr"]);
    let before = server.count();
    let update = sqlgate_in(
        &repo,
        &["baseline", "update", "--config", "sqlgate.yml"],
        &[],
    );
    let out = text(&update);
    assert!(update.status.success(), "{out}");
    assert_eq!(server.count() - before, ITEMS, "{out}");
    let flex = out
        .lines()
        .find(|l| l.trim_start().starts_with("flex "))
        .unwrap_or_default();
    assert!(flex.contains(" 50.0 (20)"), "{out}");
}

#[test]
fn symlinked_judge_cache_folders_put_nothing_outside() {
    let server = start_judge(Arc::new(AtomicBool::new(false)));
    let (dir, base) = repository(&server);
    let repo = dir.path().join("repo");
    let (_, honest) = eval(&repo, Some(&base));
    git(&repo, &["clean", "-fdq"]);
    let outside = dir.path().join("outside");
    let cache = repo.join(".sqlgate/cache/judge");
    std::fs::remove_dir_all(&cache).unwrap();
    std::fs::create_dir_all(&cache).unwrap();
    for byte in 0..=255u8 {
        let name = format!("{byte:02x}");
        std::fs::create_dir_all(outside.join(&name)).unwrap();
        symlink(format!("../../../../outside/{name}"), cache.join(&name)).unwrap();
    }
    repo::commit_all(&repo, "cache folders pointing outside");
    let before = server.count();
    let (run, verdicts) = eval(&repo, Some(&base));
    let out = assert_real_verdicts(&run, &verdicts);
    assert_eq!(verdicts, honest, "{out}");
    assert_eq!(
        server.count() - before,
        ITEMS,
        "nothing read through a symlink: {out}"
    );
    assert!(common::snapshot(&outside).is_empty(), "{out}");
    assert_one_counted_line(&out);
    let (run, _) = eval(&repo, None);
    let out = common::exited(&run, 1);
    assert!(common::snapshot(&outside).is_empty());
    assert_one_counted_line(&out);
}

/// Panics unless `out`'s stderr notes report the cache entries the run could not read, and
/// those it could not write, in one line each, counting every item and naming the symlinked
/// folder (the gate's verdict lines on stdout may repeat the notes).
fn assert_one_counted_line(out: &str) {
    for (failure, count) in [("read", ITEMS), ("written", ITEMS)] {
        let lines: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("sqlgate: "))
            .filter(|l| l.contains(&format!("cache entries could not be {failure}")))
            .collect();
        assert_eq!(lines.len(), 1, "{out}");
        assert!(
            lines[0].starts_with(&format!("sqlgate: {count} judge cache entries")),
            "{out}"
        );
        assert!(lines[0].contains("is a symlink"), "{out}");
    }
    assert!(!out.contains("cache entry not used"), "{out}");
}
