//! A directory suite reached in ways git's list of changed files does not name (red team re-run
//! #6): through a link the base itself commits, or in a submodule the pull request moves under
//! `.gitmodules` `ignore = all`; also a suite file rewritten by checkout attributes. The baseline
//! keeps the SHA-256 of every suite file (`suite_digests`), so a run on another suite stops (exit
//! 2, naming the files), and git lists moved submodules whatever `.gitmodules` says. Each test
//! has its control (the same pull request without the lever exits 1).

use crate::common;
use crate::repair::{lever_and_control, ts_config};
use crate::suite_trust::{answer_the_count_with_a_constant, lay_out_suite, overwrite_the_variant};

use common::git;
use std::path::Path;

/// `main` gated on `ts` over a *directory* suite that the base's config names through a
/// symlink the base itself commits (`suitelink -> suite`, a layout the maintainers chose): each
/// database's original, and for `concert_singer` a variant with one singer fewer. Then a pull
/// request whose C3 answers `SELECT count(*) FROM singer` (item 0) with the constant `SELECT 6`
/// (right on the original, wrong on the variant), and `change` made before it commits. Returns
/// the base commit.
fn linked_suite_pull_request(root: &Path, change: impl FnOnce(&Path)) -> String {
    suite_pull_request(root, "suitelink", change)
}

/// [`linked_suite_pull_request`] with the base's config naming the suite as `named`
/// (`suitelink`: through the symlink, `suite`: the folder itself).
fn suite_pull_request(root: &Path, named: &str, change: impl FnOnce(&Path)) -> String {
    use common::repo;
    let example = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    let config = ts_config(&example, &format!("{{ kind: directory, path: {named} }}"));
    std::fs::write(root.join("sqlgate.yml"), config).unwrap();
    lay_out_suite(root, &root.join("suite"));
    std::os::unix::fs::symlink("suite", root.join("suitelink")).unwrap();
    let base = repo::gated_main(root);
    git(root, &["checkout", "-qb", "pr"]);
    answer_the_count_with_a_constant(root);
    change(root);
    repo::commit_all(root, "a constant for a count");
    base
}

/// The pull request overwrites the suite's variant through its real folder `suite/`: git lists
/// `suite/concert_singer/concert_singer_1.sqlite`, which is not under `suitelink`, the path the
/// base's config names, but the suite's file digests differ from the baseline's. The control:
/// the suite untouched exits 1.
#[test]
fn a_suite_changed_behind_the_bases_own_link_is_refused() {
    lever_and_control(true, |root, lever| {
        linked_suite_pull_request(root, |root| {
            if lever {
                overwrite_the_variant(root, "suite")
            }
        })
    });
}

/// The pull request commits a `.gitattributes` (`text eol=crlf` on the suite's variant) and
/// changes no suite byte in git: a fresh checkout (as `actions/checkout` makes) writes the
/// variant with every LF byte turned into CRLF. git's listing of changes (`git diff <base>`,
/// run with no working-tree attributes) trusts the index's fresh stat and does not list it.
/// The control: the same pull request without the attributes exits 1.
#[test]
fn a_suite_database_rewritten_by_checkout_attributes() {
    let variant = "suite/concert_singer/concert_singer_1.sqlite";
    lever_and_control(false, |root, lever| {
        let base = suite_pull_request(root, "suite", |root| {
            if lever {
                let attributes = format!("{variant} text eol=crlf\n");
                std::fs::write(root.join(".gitattributes"), attributes).unwrap();
            }
        });
        std::fs::remove_file(root.join(variant)).unwrap();
        git(root, &["checkout", "--", variant]);
        base
    });
}

/// `main` gated on `ts` over a directory suite kept in a git submodule at `suite` (its own
/// repository `suite-src`, beside the checkout): each database's original, and for
/// `concert_singer` a variant with one singer fewer. Then a pull request whose C3 answers item 0
/// with `SELECT 6`, and, when `lever`, moves the submodule to a commit whose variant is the
/// original and commits a `.gitmodules` with `ignore = all` for it. Returns the base commit.
fn submodule_suite_pull_request(root: &Path, source: &Path, lever: bool) -> String {
    use common::repo;
    let example = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
    let config = ts_config(&example, "{ kind: directory, path: suite }");
    std::fs::write(root.join("sqlgate.yml"), config).unwrap();
    lay_out_suite(root, source);
    repo::init_main(source, "the suite");
    git(root, &["init", "-q", "-b", "main"]);
    let url = source.to_str().unwrap();
    git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            url,
            "suite",
        ],
    );
    repo::commit_all(root, "example");
    let base = repo::commit_baseline(root, "baseline");
    git(root, &["checkout", "-qb", "pr"]);
    answer_the_count_with_a_constant(root);
    if lever {
        overwrite_the_variant(root, "suite");
        git(
            &root.join("suite"),
            &["commit", "-qam", "one variant fewer"],
        );
        git(
            root,
            &[
                "config",
                "-f",
                ".gitmodules",
                "submodule.suite.ignore",
                "all",
            ],
        );
        git(root, &["add", ".gitmodules", "suite"]);
    }
    repo::commit_all(root, "a constant for a count");
    base
}

/// A submodule the pull request's `.gitmodules` marks `ignore = all` and whose recorded commit it
/// moved (the suite's variant replaced by the original): git lists it anyway
/// (`--ignore-submodules=none`), and the suite's file digests differ from the baseline's. The
/// control: the submodule left at the base's commit exits 1.
#[test]
fn a_suite_submodule_moved_under_gitmodules_ignore_all_is_refused() {
    let sources = [(); 2].map(|()| tempfile::tempdir().unwrap());
    lever_and_control(true, |root, lever| {
        submodule_suite_pull_request(root, sources[usize::from(lever)].path(), lever)
    });
}
