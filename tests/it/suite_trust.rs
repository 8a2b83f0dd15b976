//! A directory suite is part of the benchmark (red team re-run #5): a pull request that moves a
//! suite database or a whole db_id folder out of the suite, or changes a suite under a folder
//! whose name git would quote, changes the dataset and is refused (exit 2). git lists what the
//! pull request changed with `--no-renames -z`, so a moved file is a deletion at its old path and
//! a non-ASCII name is listed as it is. Each test has its control (the same pull request without
//! the change exits 1, the regression seen).

use crate::common;
use crate::repair::{lever_and_control, ts_config};

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
    lay_out_suite(root, &root.join(folder));
    let base = repo::gated_main(root);
    git(root, &["checkout", "-qb", "pr"]);
    answer_the_count_with_a_constant(root);
    change(root);
    repo::commit_all(root, "a constant for a count");
    base
}

/// The example's four databases copied into `suite` (`<suite>/<db_id>/<db_id>.sqlite`), and for
/// `concert_singer` a variant with one singer fewer (`concert_singer_1.sqlite`): 6 singers on
/// the original, 5 on the variant.
pub(crate) fn lay_out_suite(root: &std::path::Path, suite: &std::path::Path) {
    for db_id in ["concert_singer", "pets_1", "poker_player", "singer"] {
        let folder = suite.join(db_id);
        std::fs::create_dir_all(&folder).unwrap();
        let original = root.join(format!("database/{db_id}/{db_id}.sqlite"));
        std::fs::copy(&original, folder.join(format!("{db_id}.sqlite"))).unwrap();
    }
    let singers = suite.join("concert_singer");
    let variant = singers.join("concert_singer_1.sqlite");
    std::fs::copy(singers.join("concert_singer.sqlite"), &variant).unwrap();
    rusqlite::Connection::open(&variant)
        .unwrap()
        .execute_batch(
            "PRAGMA foreign_keys = OFF; \
             DELETE FROM singer WHERE rowid = (SELECT max(rowid) FROM singer)",
        )
        .unwrap();
}

/// The suite's `concert_singer` variant overwritten with its original (`suite` is the suite's
/// folder): the lever that makes a constant answer right on every database of the suite.
pub(crate) fn overwrite_the_variant(root: &std::path::Path, suite: &str) {
    let singers = root.join(suite).join("concert_singer");
    std::fs::copy(
        singers.join("concert_singer.sqlite"),
        singers.join("concert_singer_1.sqlite"),
    )
    .unwrap();
}

/// C3 answers item 0 (`SELECT COUNT(*) FROM singer`) with the constant `SELECT 6`: right on the
/// original database, wrong on the suite's variant.
pub(crate) fn answer_the_count_with_a_constant(root: &std::path::Path) {
    let predictions = root.join("predictions/C3.txt");
    let text = std::fs::read_to_string(&predictions).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    assert_eq!(first.trim(), "SELECT COUNT(*) FROM singer;");
    std::fs::write(&predictions, format!("SELECT 6\n{rest}")).unwrap();
}

/// [`suite_pull_request`] with `change` as its lever: refused as a change to the dataset, and
/// without the lever the regression is seen.
fn check_dataset_change(folder: &str, skip_missing: bool, change: impl Fn(&std::path::Path)) {
    let out = lever_and_control(true, |root, lever| {
        suite_pull_request(root, folder, skip_missing, |root| {
            if lever {
                change(root)
            }
        })
    });
    common::assert_contains(&out, &["dataset"]);
}

/// A suite database moved out of the suite folder is a dataset change: git lists it at its old
/// path (`--no-renames`), where the base's suite is. The control: the suite left whole exits 1.
#[test]
fn a_suite_database_moved_out_of_the_suite_is_a_dataset_change() {
    let out = lever_and_control(true, directory_suite_pull_request);
    common::assert_contains(&out, &["dataset"]);
}

/// The same move, of a whole db_id folder of the suite, under a base config with
/// `dataset.skip_missing_databases` (which would let the suite lack the folder and leave its
/// items out): a dataset change, listed at the folder's old path. The control: the same pull
/// request (same base config) with the suite left whole exits 1.
#[test]
fn a_suite_folder_moved_out_is_a_dataset_change() {
    check_dataset_change("suite", true, |root| move_out(root, "suite/concert_singer"));
}

/// A suite under a folder with a non-ASCII name (`suite-été`), whose paths git would quote
/// (`core.quotePath`), is watched as any other: git lists changes with `-z`, names as they are,
/// so overwriting the suite's variant with the original is a dataset change. The control: the
/// suite left untouched exits 1.
#[test]
fn a_suite_under_a_non_ascii_folder_is_watched_like_any_other() {
    check_dataset_change("suite-été", false, |root| {
        overwrite_the_variant(root, "suite-été")
    });
}
