//! sqlgate's own state in a pull-request run, through the binary with a real git history (a
//! base commit holding a distilled suite, its gold-result cache and a baseline; a pull request
//! that makes C3 worse): every edit the pull request makes to that state either stops the run
//! with exit 2 naming the file, or leaves exactly the honest run's per-item verdicts; nothing
//! is written or deleted outside the repository, and a config pointing at `/dev/zero` is never
//! read.

use crate::common;
use common::repo::{self, sqlgate_in};
use common::text;

use common::{break_predictions, git};

use serde_json::Value as Json;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::time::Duration;

/// The example's config scored on TS over a distilled suite kept in the repository.
fn use_distilled_suite(repo: &Path) {
    let path = repo.join("sqlgate.yml");
    let config = std::fs::read_to_string(&path)
        .unwrap()
        .replace("metrics: [ex, esm]", "metrics: [ex, ts]")
        .replace("  metric: ex\n", "  metric: ts\n")
        .replace(
            "compare:",
            "suite: { kind: distilled, path: .sqlgate/suite }\ncompare:",
        );
    std::fs::write(path, config).unwrap();
}

/// The shared history: `repo` (base commit `base` with suite, gold results and baseline; the
/// `pr` branch checked out, C3 worse) and the honest pull-request run's verdicts.
struct History {
    dir: tempfile::TempDir,
    base: String,
    honest: Vec<Json>,
}

/// The spider-mini example copied to `<dir>/repo`, without its baseline, set to a distilled
/// suite.
fn distilled_example(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    common::copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini"),
        &repo,
    );
    std::fs::remove_file(repo.join("baseline.json")).unwrap();
    use_distilled_suite(&repo);
    repo
}

fn history() -> &'static History {
    static HISTORY: OnceLock<History> = OnceLock::new();
    HISTORY.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let repo = distilled_example(dir.path());
        repo::init_main(&repo, "example");
        repo::update_baseline(&repo);
        assert!(repo.join(".sqlgate/suite/gold-results.json").is_file());
        repo::commit_all(&repo, "baseline, suite and gold results");
        let base = repo::head(&repo);
        git(&repo, &["checkout", "-qb", "pr"]);
        break_predictions(&repo, "C3", 30);
        git(&repo, &["commit", "-qam", "worse predictions"]);
        let (run, honest) = pr_run(&repo, &base);
        common::assert_exit(&run, 1);
        History { dir, base, honest }
    })
}

/// A fresh copy of the history (repository and an `outside` folder beside it holding a
/// victim file), the pull request checked out.
pub(crate) fn checkout() -> (tempfile::TempDir, PathBuf, String) {
    let history = history();
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&history.dir.path().join("repo"), &dir.path().join("repo"));
    std::fs::create_dir(dir.path().join("outside")).unwrap();
    std::fs::write(dir.path().join("outside/victim.sqlite"), "victim").unwrap();
    let repo = dir.path().join("repo");
    (dir, repo, history.base.clone())
}

/// Merges `shards` in the pull request's tree, trusting `base`.
fn merge_trusting(repo: &Path, base: &str, shards: &[&str]) -> Output {
    let mut args = vec![
        "merge",
        "--config",
        "sqlgate.yml",
        "--comment",
        "never",
        "--trusted-base",
        base,
    ];
    args.extend(shards);
    sqlgate_in(repo, &args, &[])
}

/// Commits every change of the pull request's tree.
pub(crate) fn commit(repo: &Path, message: &str) {
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", message]);
}

/// The pull-request run (trusting `base`) and its per-item verdicts: per (system, item), the
/// metric values and outcomes.
pub(crate) fn pr_run(repo: &Path, base: &str) -> (Output, Vec<Json>) {
    let jsonl = repo.parent().unwrap().join("items.jsonl");
    let _ = std::fs::remove_file(&jsonl);
    let run = sqlgate_in(
        repo,
        &[
            &repo::EVAL[..],
            &["--jsonl", jsonl.to_str().unwrap(), "--trusted-base", base],
        ]
        .concat(),
        &[],
    );
    (run, verdicts(&jsonl))
}

fn verdicts(jsonl: &Path) -> Vec<Json> {
    if !jsonl.is_file() {
        return Vec::new();
    }
    common::read_jsonl(jsonl)
        .into_iter()
        .map(|l| serde_json::json!([l["system"], l["index"], l["metrics"], l["outcome"]]))
        .collect()
}

/// Runs the pull request and asserts the honest run's exit code and per-item verdicts; returns
/// the output.
pub(crate) fn assert_honest(repo: &Path, base: &str) -> String {
    let (run, verdicts) = pr_run(repo, base);
    let out = common::exited(&run, 1);
    common::assert_contains(&out, &["gate failed: C3 ts"]);
    assert!(verdicts == history().honest, "verdicts differ: {out}");
    out
}

/// Asserts the `outside` folder holds only the untouched victim file.
fn assert_outside_untouched(dir: &Path) {
    let files = common::snapshot(&dir.join("outside"));
    assert_eq!(
        files,
        vec![(dir.join("outside/victim.sqlite"), b"victim".to_vec())]
    );
}

#[test]
fn suite_databases_rewritten_at_the_same_size_stop_the_run_naming_the_file() {
    let (_dir, repo, base) = checkout();
    let folder = repo.join(".sqlgate/suite/singer");
    let mut kept: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("_r0"))
        .collect();
    kept.sort();
    for path in &kept {
        let size = std::fs::metadata(path).unwrap().len();
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.execute("UPDATE singer SET Net_Worth_Millions = 1.0", [])
            .unwrap();
        drop(conn);
        assert_eq!(std::fs::metadata(path).unwrap().len(), size);
    }
    commit(&repo, "rewritten suite databases");
    let name = kept[0].file_name().unwrap().to_string_lossy().into_owned();
    let (run, _) = pr_run(&repo, &base);
    let out = common::exited(&run, 2);
    assert!(
        out.contains(&format!(
            "singer/{name}: suite: does not match the base commit's manifest"
        )),
        "{out}"
    );
    let local = sqlgate_in(&repo, &repo::EVAL, &[]);
    let out = common::exited(&local, 2);
    common::assert_contains(
        &out,
        &[&format!("{name}: suite: does not match its manifest")],
    );
}

#[test]
fn emptied_or_forged_gold_results_are_not_used() {
    let (_dir, repo, base) = checkout();
    let cache = repo.join(".sqlgate/suite/gold-results.json");
    std::fs::write(&cache, "{}").unwrap();
    commit(&repo, "emptied gold results");
    let out = assert_honest(&repo, &base);
    assert!(
        out.contains(
            "this pull request changes the distilled suite (.sqlgate/suite/gold-results.json)"
        ),
        "{out}"
    );
    // Valid keys (they are content hashes anyone can compute), but every gold returns nothing.
    git(
        &repo,
        &[
            "checkout",
            "-q",
            &base,
            "--",
            ".sqlgate/suite/gold-results.json",
        ],
    );
    let entries: serde_json::Map<String, Json> =
        serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
    assert!(entries.len() > 500, "{}", entries.len());
    let forged: serde_json::Map<String, Json> = entries
        .into_iter()
        .map(|(key, _)| (key, Json::Array(Vec::new())))
        .collect();
    std::fs::write(&cache, Json::Object(forged).to_string()).unwrap();
    commit(&repo, "forged gold results");
    assert_honest(&repo, &base);
}

/// `change` made to `main`'s gold cache and committed there (merged, or pushed, before any
/// `baseline update`), then merged into the pull request; returns that commit, the base.
fn gold_cache_changed_on_main(repo: &Path, change: impl FnOnce(&Path)) -> String {
    git(repo, &["checkout", "-qf", "main"]);
    change(&repo.join(".sqlgate/suite/gold-results.json"));
    commit(repo, "gold results changed on the base branch");
    let base = repo::head(repo);
    git(repo, &["checkout", "-qf", "pr"]);
    git(repo, &["merge", "-q", "--no-edit", "main"]);
    base
}

/// A gold cache forged on the base branch itself, so the base commit's copy is the forged one:
/// every entry the run needs is there under its right key, but with rows (and, under a key no
/// gold has, an entry) the base's baseline never recorded (`gold_cache`). The pull request's
/// golds are executed again and it is judged as on the honest base, with a note naming the
/// untrusted entries.
#[test]
fn gold_results_forged_on_the_base_branch_are_executed_again() {
    let (_dir, repo, _) = checkout();
    let mut needed = 0;
    let base = gold_cache_changed_on_main(&repo, |cache| {
        let entries: serde_json::Map<String, Json> =
            serde_json::from_str(&std::fs::read_to_string(cache).unwrap()).unwrap();
        needed = entries.len();
        let mut forged: serde_json::Map<String, Json> = entries
            .into_iter()
            .map(|(key, _)| (key, serde_json::json!([[{"t": "wrong"}]])))
            .collect();
        forged.insert("0".repeat(64), serde_json::json!([[{"i": 1}]]));
        std::fs::write(cache, Json::Object(forged).to_string()).unwrap();
    });
    let out = assert_honest(&repo, &base);
    assert!(
        out.contains(&format!(
            "{needed} entries of ./.sqlgate/suite/gold-results.json are not recorded by the \
             baseline this run trusts"
        )),
        "{out}"
    );
}

/// The base branch's gold cache replaced by a symbolic link to a forged copy: the base commit's
/// blob is the link's target name, never read as the cache, so every gold is executed again.
#[test]
fn gold_results_linked_on_the_base_branch_are_not_read() {
    let (_dir, repo, _) = checkout();
    let base = gold_cache_changed_on_main(&repo, |cache| {
        let forged = cache.with_file_name("forged.json");
        std::fs::write(&forged, "{}").unwrap();
        std::fs::remove_file(cache).unwrap();
        symlink("forged.json", cache).unwrap();
    });
    let out = assert_honest(&repo, &base);
    common::assert_contains(
        &out,
        &["the base commit's .sqlgate/suite/gold-results.json is not a regular file"],
    );
}

#[test]
fn a_trimmed_manifest_and_an_added_database_are_not_used() {
    let (_dir, repo, base) = checkout();
    let manifest = repo.join(".sqlgate/suite/concert_singer/manifest.json");
    let mut document: Json =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    let kept = document["kept"].as_array_mut().unwrap();
    assert!(kept.len() > 3);
    kept.truncate(1);
    // Another key makes a run that trusted this manifest extend it (and delete the databases it
    // no longer lists) instead of reusing the suite.
    document["key"] = Json::String("0".repeat(64));
    std::fs::write(&manifest, document.to_string()).unwrap();
    let folder = repo.join(".sqlgate/suite/singer");
    let added = folder.join("singer_r999999.sqlite");
    std::fs::copy(folder.join("singer.sqlite"), &added).unwrap();
    let conn = rusqlite::Connection::open(&added).unwrap();
    conn.execute("UPDATE singer SET Name = 'forged'", [])
        .unwrap();
    drop(conn);
    commit(&repo, "a trimmed manifest and one more suite database");
    let out = assert_honest(&repo, &base);
    common::assert_contains(
        &out,
        &[
            ".sqlgate/suite/concert_singer/manifest.json",
            ".sqlgate/suite/singer/singer_r999999.sqlite",
            "the run did not use them",
        ],
    );
}

#[test]
fn a_symlinked_schema_folder_stops_the_run_and_nothing_outside_changes() {
    let (dir, repo, base) = checkout();
    let folder = repo.join(".sqlgate/suite/singer");
    std::fs::remove_dir_all(&folder).unwrap();
    symlink("../../../outside", &folder).unwrap();
    commit(&repo, "suite folder pointing outside");
    let (run, _) = pr_run(&repo, &base);
    let out = common::exited(&run, 2);
    common::assert_contains(&out, &[".sqlgate/suite/singer: state: is a symlink"]);
    assert_outside_untouched(dir.path());
    let local = sqlgate_in(&repo, &repo::EVAL, &[]);
    common::assert_exit(&local, 2);
    assert_outside_untouched(dir.path());
}

#[test]
fn a_rebuilt_suite_deletes_only_its_own_regular_files() {
    let (dir, repo, base) = checkout();
    let folder = repo.join(".sqlgate/suite/singer");
    std::fs::remove_file(folder.join("manifest.json")).unwrap();
    symlink(
        "../../../../outside/victim.sqlite",
        folder.join("singer_r123456.sqlite"),
    )
    .unwrap();
    std::fs::write(folder.join("stale.sqlite"), "stale").unwrap();
    // Without a trusted base the folder's own (now absent) manifest is what counts: rebuilt.
    let local = sqlgate_in(&repo, &repo::EVAL, &[]);
    let out = common::exited(&local, 1);
    common::assert_contains(&out, &["distilling the test suite of `singer`"]);
    assert_outside_untouched(dir.path());
    assert!(!folder.join("stale.sqlite").exists());
    assert!(std::fs::symlink_metadata(folder.join("singer_r123456.sqlite")).is_ok());
    commit(&repo, "a symlinked database in the suite folder");
    assert_honest(&repo, &base);
    assert_outside_untouched(dir.path());
}

#[test]
fn a_config_pointing_at_dev_zero_is_never_read() {
    let (_dir, repo, base) = checkout();
    std::fs::remove_file(repo.join("sqlgate.yml")).unwrap();
    symlink("/dev/zero", repo.join("sqlgate.yml")).unwrap();
    commit(&repo, "config replaced by /dev/zero");
    let jsonl = repo.parent().unwrap().join("items.jsonl");
    let mut command = common::sqlgate_command(
        &[
            &repo::EVAL[..],
            &["--jsonl", jsonl.to_str().unwrap(), "--trusted-base", &base],
        ]
        .concat(),
    );
    command.current_dir(&repo).env_remove("GITHUB_SHA");
    let (run, peak) = common::measure::run_measured(command, Duration::from_secs(120));
    let out = text(&run);
    // Once merged, that config would stop every later pull request, so this one fails, naming
    // the file, without reading the device.
    assert_eq!(run.status.code(), Some(2), "{out}");
    common::assert_contains(
        &out,
        &[
            "this pull request's version of the config does not load",
            "the config is a symbolic link",
        ],
    );
    assert!(peak < 400 * 1024, "peak RSS {peak} KiB: {out}");
}

#[test]
fn a_committed_shard_or_one_scored_without_the_base_is_not_merged() {
    let (dir, repo, base) = checkout();
    let artifact = dir.path().join("artifact.jsonl");
    let untrusted = dir.path().join("untrusted.jsonl");
    let (artifact, untrusted) = (artifact.to_str().unwrap(), untrusted.to_str().unwrap());
    let shard = |name: &str, trusted: bool| {
        let mut args = vec![
            "eval",
            "--config",
            "sqlgate.yml",
            "--shard",
            "1/1",
            "--jsonl",
            name,
        ];
        if trusted {
            args.extend(["--trusted-base", base.as_str()]);
        }
        let run = sqlgate_in(&repo, &args, &[]);
        common::assert_exit(&run, 0);
    };
    let merge = |name: &str| merge_trusting(&repo, &base, &[name]);
    shard(artifact, true);
    let merged = merge(artifact);
    common::assert_exit(&merged, 1);
    shard(untrusted, false);
    let refused = merge(untrusted);
    let out = common::exited(&refused, 2);
    common::assert_contains(&out, &["scored against the trusted base (none)"]);
    shard("committed.jsonl", true);
    commit(&repo, "a shard of our own");
    let refused = merge("committed.jsonl");
    let out = common::exited(&refused, 2);
    common::assert_contains(
        &out,
        &["committed.jsonl: shard: is a file of the pull request's tree"],
    );
}

#[test]
fn a_suite_database_the_pull_request_deletes_is_distilled_again_and_said() {
    let (_dir, repo, base) = checkout();
    let folder = repo.join(".sqlgate/suite/poker_player");
    // The first generated database the suite kept (which candidates it keeps depends on the
    // generator's version).
    let mut generated: Vec<std::path::PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("poker_player_r"))
        })
        .collect();
    generated.sort();
    let deleted = generated
        .first()
        .expect("the suite keeps a generated database");
    std::fs::remove_file(deleted).unwrap();
    commit(&repo, "one suite database fewer");
    let out = assert_honest(&repo, &base);
    common::assert_contains(
        &out,
        &["the base commit holds no complete distilled suite for `poker_player`"],
    );
    assert!(deleted.is_file());
}

#[test]
fn a_suite_cached_outside_git_is_reused_only_when_the_base_recorded_its_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let repo = distilled_example(dir.path());
    std::fs::write(repo.join(".gitignore"), ".sqlgate/\n").unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(&repo, "example, suite kept out of git (actions/cache)");
    repo::update_baseline(&repo);
    commit(&repo, "baseline");
    let base = repo::head(&repo);
    git(&repo, &["checkout", "-qb", "pr"]);
    break_predictions(&repo, "C3", 30);
    commit(&repo, "worse predictions");

    let out = assert_honest(&repo, &base);
    assert!(!out.contains("distilling"), "{out}");

    let manifest = repo.join(".sqlgate/suite/concert_singer/manifest.json");
    let mut document: Json =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    document["kept"].as_array_mut().unwrap().truncate(1);
    document["key"] = Json::String("0".repeat(64));
    std::fs::write(&manifest, document.to_string()).unwrap();
    let out = assert_honest(&repo, &base);
    assert!(
        out.contains("distilling the test suite of `concert_singer`")
            && out
                .contains("the base commit holds no complete distilled suite for `concert_singer`")
            && !out.contains("distilling the test suite of `singer`"),
        "{out}"
    );
}

#[test]
fn a_merged_sharded_run_reports_the_shards_state_notes() {
    let (dir, repo, base) = checkout();
    std::fs::write(repo.join(".sqlgate/suite/gold-results.json"), "{}").unwrap();
    commit(&repo, "emptied gold results");
    let shards: Vec<String> = (1..=2)
        .map(|i| {
            let path = dir.path().join(format!("shard{i}.jsonl"));
            let path = path.to_str().unwrap().to_string();
            let run = sqlgate_in(
                &repo,
                &[
                    "eval",
                    "--config",
                    "sqlgate.yml",
                    "--shard",
                    &format!("{i}/2"),
                    "--jsonl",
                    &path,
                    "--trusted-base",
                    &base,
                ],
                &[],
            );
            common::assert_exit(&run, 0);
            path
        })
        .collect();
    let shards: Vec<&str> = shards.iter().map(String::as_str).collect();
    let merged = merge_trusting(&repo, &base, &shards);
    let out = common::exited(&merged, 1);
    let note = "this pull request changes the distilled suite (.sqlgate/suite/gold-results.json)";
    assert_eq!(out.matches(note).count(), 1, "{out}");
}
