//! A directory suite is part of the benchmark (red team re-run #5): a pull request that moves a
//! suite database or a whole db_id folder out of the suite, or changes a suite under a folder
//! whose name git would quote, changes the dataset and is refused (exit 2). git lists what the
//! pull request changed with `--no-renames -z`, so a moved file is a deletion at its old path and
//! a non-ASCII name is listed as it is. Each test has its control (the same pull request without
//! the change exits 1, the regression seen).

use crate::common;
use crate::repair::{judge_pr, ts_config};

use common::git;

/// `main` gated on `ts` over a *directory* suite `suite/<db_id>/`: each database's original,
/// and for `concert_singer` a variant with one singer fewer. Then a pull request whose C3
/// answers `SELECT count(*) FROM singer` (item 0) with the constant `SELECT 6`: right on the
/// original, wrong on the variant. When `hide` is set, the pull request also `git mv`s the
/// variant out of the suite folder. Returns the base commit.
fn directory_suite_pull_request(root: &std::path::Path, hide: bool) -> String {
    suite_pull_request(root, "suite", false, |root| {
        if hide {
            move_out(root, "suite/concert_singer/concert_singer_1.sqlite");
        }
    })
}

/// `git mv`s the repository path `from` into `attic/` (keeping its name).
fn move_out(root: &std::path::Path, from: &str) {
    std::fs::create_dir_all(root.join("attic")).unwrap();
    let name = from.rsplit('/').next().unwrap();
    git(root, &["mv", from, &format!("attic/{name}")]);
}

/// [`directory_suite_pull_request`] with the suite in `folder`, the base config with
/// `dataset.skip_missing_databases` when `skip_missing`, and `change` made by the pull request
/// before it commits.
fn suite_pull_request(
    root: &std::path::Path,
    folder: &str,
    skip_missing: bool,
    change: impl FnOnce(&std::path::Path),
) -> String {
    use common::repo;
    let example = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    let mut config = ts_config(&example, &format!("{{ kind: directory, path: {folder} }}"));
    if skip_missing {
        config = config.replace(
            "  databases: database\n",
            "  databases: database\n  skip_missing_databases: true\n",
        );
    }
    std::fs::write(root.join("sqlgate.yml"), config).unwrap();
    for db_id in ["concert_singer", "pets_1", "poker_player", "singer"] {
        let suite = root.join(folder).join(db_id);
        std::fs::create_dir_all(&suite).unwrap();
        let original = root.join(format!("database/{db_id}/{db_id}.sqlite"));
        std::fs::copy(&original, suite.join(format!("{db_id}.sqlite"))).unwrap();
    }
    let singers = root.join(folder).join("concert_singer");
    let variant = singers.join("concert_singer_1.sqlite");
    std::fs::copy(singers.join("concert_singer.sqlite"), &variant).unwrap();
    rusqlite::Connection::open(&variant)
        .unwrap()
        .execute_batch(
            "PRAGMA foreign_keys = OFF; \
             DELETE FROM singer WHERE rowid = (SELECT max(rowid) FROM singer)",
        )
        .unwrap();
    let base = repo::gated_main(root);
    git(root, &["checkout", "-qb", "pr"]);
    let predictions = root.join("predictions/C3.txt");
    let text = std::fs::read_to_string(&predictions).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    assert_eq!(first.trim(), "SELECT COUNT(*) FROM singer;");
    std::fs::write(&predictions, format!("SELECT 6\n{rest}")).unwrap();
    change(root);
    repo::commit_all(root, "a constant for a count");
    base
}

/// A directory suite is a dataset file a pull request may not change
/// (`trust::dataset_changes`), and no digest of it is kept in the baseline (the dataset digest
/// covers the gold, tables.json and the databases only). The change list is `git diff
/// --name-only <base> --`, which detects renames and prints only the *new* path: a suite
/// database moved out of the suite folder is not listed under it. Item 0 is then tested on the
/// original database alone, where the constant is right: the regression is not seen.
#[test]
fn a_suite_database_moved_out_of_the_suite_is_a_dataset_change() {
    let dir = common::repo::example(false);
    let root = dir.path();
    let base = directory_suite_pull_request(root, true);
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(2), "the regressing pull request passed: {out}");
    common::assert_contains(&out, &["dataset"]);
}

/// The control: the same pull request with the suite left whole exits 1.
#[test]
fn control_the_whole_directory_suite_shows_the_regression() {
    let dir = common::repo::example(false);
    let root = dir.path();
    let base = directory_suite_pull_request(root, false);
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(1), "{out}");
}

/// The same rename, of a whole db_id folder of the suite, under a base config with
/// `dataset.skip_missing_databases`: `Suite` finds no folder for `concert_singer`, which that
/// setting allows, so every `concert_singer` item's `ts` is "skipped" and left out of the
/// comparison (`comparison::unmeasured`), whatever its prediction.
#[test]
fn a_suite_folder_moved_out_is_a_dataset_change() {
    let dir = common::repo::example(false);
    let root = dir.path();
    let base = suite_pull_request(root, "suite", true, |root| {
        move_out(root, "suite/concert_singer")
    });
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(2), "the regressing pull request passed: {out}");
    common::assert_contains(&out, &["dataset"]);
}

/// The control: the same pull request (same base config) with the suite left whole exits 1.
#[test]
fn control_a_suite_folder_left_in_place_shows_the_regression() {
    let dir = common::repo::example(false);
    let root = dir.path();
    let base = suite_pull_request(root, "suite", true, |_| ());
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(1), "{out}");
}

/// The base's suite folder has a non-ASCII name (`suite-été`). git prints such paths quoted
/// (`"suite-\\303\\251t\\303\\251/..."`, `core.quotePath`) in the `git diff --name-only` that
/// `TrustedBase::list_changed` reads, so `files_under` never matches them to the folder: the pull
/// request *overwrites* the suite's variant database with the original (no rename needed), and
/// the constant is right on every database of the suite.
#[test]
fn a_suite_under_a_non_ascii_folder_is_watched_like_any_other() {
    let dir = common::repo::example(false);
    let root = dir.path();
    let base = suite_pull_request(root, "suite-été", false, |root| {
        let singers = root.join("suite-été/concert_singer");
        std::fs::copy(
            singers.join("concert_singer.sqlite"),
            singers.join("concert_singer_1.sqlite"),
        )
        .unwrap();
    });
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(2), "the regressing pull request passed: {out}");
    common::assert_contains(&out, &["dataset"]);
}

/// The control: the same pull request with the non-ASCII suite left untouched exits 1.
#[test]
fn control_a_non_ascii_suite_left_untouched_shows_the_regression() {
    let dir = common::repo::example(false);
    let root = dir.path();
    let base = suite_pull_request(root, "suite-été", false, |_| ());
    let (code, out) = judge_pr(root, &base);
    assert_eq!(code, Some(1), "{out}");
}
