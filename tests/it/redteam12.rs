//! Red team round 12 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1.

use super::redteam9::{control_fails, not_passed};

/// The trusted base read from a forged object store (classes 1 and 2). Round 11's fix makes git
/// ignore replace refs and grafts, but git still trusts the bytes of `.git/objects`: it never
/// checks, when it reads an object, that the content hashes to the object's id. A step of the
/// pull request's workflow that runs before the gate owns the checkout's `.git`, so it can write
/// a loose object file at the path of the base's config blob (or baseline blob, root tree,
/// commit) holding other content. `git cat-file blob <base>:sqlgate.yml` then returns that
/// content; the commit id, the refs, the index and the working tree are unchanged, and
/// `git status` lists nothing.
mod forged_objects {
    use super::super::redteam11::replaced_base::{loosened, regressed_baseline, WRONG};
    use crate::common;
    use common::repo::{self, commit_all, judged};
    use common::{git, rewrite_predictions, text};
    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};

    /// The loose object file of `oid` in the checkout `root`.
    fn loose(root: &Path, oid: &str) -> PathBuf {
        root.join(".git/objects").join(&oid[..2]).join(&oid[2..])
    }

    /// `git ARGS` in `root` with `input` on its standard input; its standard output, trimmed.
    fn git_with_input(root: &Path, args: &[&str], input: &[u8]) -> String {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "git {args:?} failed");
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    }

    /// Writes `content` as a new loose object of `kind` in `root`; its id.
    fn new_object(root: &Path, kind: &str, content: &[u8]) -> String {
        let args = ["hash-object", "-t", kind, "-w", "--stdin"];
        git_with_input(root, &args, content)
    }

    /// Overwrites the loose object file of `old` with that of `new`: every read of `old` now
    /// returns `new`'s content (a loose object file holds no id, only the compressed content).
    fn forge(root: &Path, old: &str, new: &str) {
        let target = loose(root, old);
        assert!(target.is_file(), "{old} is not a loose object here");
        std::fs::remove_file(&target).unwrap();
        std::fs::copy(loose(root, new), &target).unwrap();
        let status = git(root, &["status", "--porcelain", "--untracked-files=no"]);
        assert!(status.trim().is_empty(), "git lists a change: {status}");
    }

    /// Forges the base's blob at `path` to hold `content`, and checks git reads it so, with
    /// replace refs and grafts off (as sqlgate runs git since round 11).
    fn forge_blob(root: &Path, base: &str, path: &str, content: &str) {
        let old = git(root, &["rev-parse", &format!("{base}:{path}")]);
        let new = new_object(root, "blob", content.as_bytes());
        forge(root, &old, &new);
        let shown = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["cat-file", "blob", &format!("{base}:{path}")])
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_GRAFT_FILE", "/dev/null")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&shown.stdout).trim(),
            content.trim()
        );
    }

    /// A tree like `tree` (an id in `root`) but with its entry `name` naming the blob `blob`;
    /// the new tree's id (a genuine object: its content hashes to it).
    fn tree_with(root: &Path, tree: &str, name: &str, blob: &str) -> String {
        let listed = git(root, &["ls-tree", tree]);
        let edited: String = (listed.lines())
            .map(|line| match line.split_once('\t') {
                Some((meta, entry)) if entry == name => {
                    let mode = meta.split_whitespace().next().unwrap();
                    format!("{mode} blob {blob}\t{entry}\n")
                }
                _ => format!("{line}\n"),
            })
            .collect();
        assert_ne!(edited, format!("{listed}\n"), "{name} is not in the tree");
        git_with_input(root, &["mktree"], edited.as_bytes())
    }

    /// The example's gated `main` (the base): the folder and the base commit.
    fn regressing_pull_request() -> (tempfile::TempDir, String) {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        (dir, base)
    }

    /// Commits the regression (C3's first 20 items predicted as [`WRONG`]) on a new branch `pr`
    /// and runs the control, the same pull request with no lever yet, which must exit 1.
    fn regress(root: &Path, base: &str) {
        git(root, &["checkout", "-qb", "pr"]);
        rewrite_predictions(root, "C3", |i| i < 20, WRONG);
        commit_all(root, "wrong predictions");
        super::control_fails(&judged(root, base, &[]));
    }

    /// The judged run after the lever, asserted not to pass.
    fn judge_after_lever(root: &Path, base: &str) {
        let judged = judged(root, base, &[]);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }

    /// The base's config blob forged to the loosened gate.
    #[test]
    fn a_forged_base_config_blob_does_not_loosen_the_gate() {
        let (dir, base) = regressing_pull_request();
        let root = dir.path();
        regress(root, &base);
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        forge_blob(root, &base, "sqlgate.yml", &loosened(&config));
        judge_after_lever(root, &base);
    }

    /// As a checkout made by `actions/checkout` has it: every object of the base in one pack.
    /// The lever first takes the pack out and writes its objects back as loose objects
    /// (`git unpack-objects`), then forges one: a packed base is no protection.
    fn unpack(root: &Path) {
        let packs = root.join(".git/objects/pack");
        let away = root.join(".git/rt12-packs");
        std::fs::rename(&packs, &away).unwrap();
        std::fs::create_dir(&packs).unwrap();
        for entry in std::fs::read_dir(&away).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "pack") {
                git_with_input(
                    root,
                    &["unpack-objects", "-q"],
                    &std::fs::read(&path).unwrap(),
                );
            }
        }
    }

    /// The base's config blob forged in a checkout whose base objects are packed.
    #[test]
    fn a_forged_base_config_blob_of_a_packed_checkout_does_not_loosen_the_gate() {
        let (dir, base) = regressing_pull_request();
        let root = dir.path();
        git(root, &["repack", "-adq"]);
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        let old = git(root, &["rev-parse", &format!("{base}:sqlgate.yml")]);
        assert!(!loose(root, &old).exists(), "the base is not packed");
        regress(root, &base);
        unpack(root);
        forge_blob(root, &base, "sqlgate.yml", &loosened(&config));
        judge_after_lever(root, &base);
    }

    /// The base's baseline blob forged to one `sqlgate baseline update` recorded on the base
    /// commit with the pull request's wrong predictions (a valid `records_sha256`).
    #[test]
    fn a_forged_base_baseline_blob_does_not_hide_the_regression() {
        let (dir, base) = regressing_pull_request();
        let root = dir.path();
        let regressed = regressed_baseline(root);
        regress(root, &base);
        forge_blob(root, &base, "baseline.json", &regressed);
        judge_after_lever(root, &base);
    }

    /// The base's root tree forged to name a genuine blob of the loosened config: every blob
    /// read hashes to its id, so checking a blob against the id its tree lists is not enough.
    #[test]
    fn a_forged_base_tree_does_not_loosen_the_gate() {
        let (dir, base) = regressing_pull_request();
        let root = dir.path();
        regress(root, &base);
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        let blob = new_object(root, "blob", loosened(&config).as_bytes());
        let tree = git(root, &["rev-parse", &format!("{base}^{{tree}}")]);
        let forged = tree_with(root, &tree, "sqlgate.yml", &blob);
        forge(root, &tree, &forged);
        judge_after_lever(root, &base);
    }

    /// The base commit object forged to name a genuine tree holding the loosened config: the
    /// commit id (from the event payload) is right, the commit's content is not.
    #[test]
    fn a_forged_base_commit_does_not_loosen_the_gate() {
        let (dir, base) = regressing_pull_request();
        let root = dir.path();
        regress(root, &base);
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        let blob = new_object(root, "blob", loosened(&config).as_bytes());
        let tree = git(root, &["rev-parse", &format!("{base}^{{tree}}")]);
        let new_tree = tree_with(root, &tree, "sqlgate.yml", &blob);
        let commit = git(root, &["cat-file", "commit", &base]);
        let edited = commit.replacen(&format!("tree {}", &tree), &format!("tree {new_tree}"), 1);
        let forged = new_object(root, "commit", edited.as_bytes());
        forge(root, &base, &forged);
        judge_after_lever(root, &base);
    }
}

/// A dataset file changed in the working tree behind git's index (class 1): a step of the pull
/// request's workflow marks the gold file `skip-worktree` in the checkout's index and rewrites
/// the gold of the items the pull request regresses to a query with no row, as its wrong one. `git diff <base>`
/// then lists no change (git takes the index's word for the working tree), so the trust stage
/// sees no benchmark change and the run reads the working tree's gold.
mod hidden_from_the_index {
    use super::super::redteam11::replaced_base::WRONG;
    use crate::common;
    use common::repo::{self, commit_all, judged};
    use common::{git, rewrite_predictions, text};

    /// The rewritten gold of the regressed items (all of `concert_singer`): no row, as the wrong
    /// prediction, and a query Spider's hardness classifier parses.
    const EMPTY: &str = "SELECT name FROM singer WHERE singer_id = -1";

    #[test]
    fn a_gold_file_changed_behind_skip_worktree_is_a_benchmark_change() {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
        rewrite_predictions(root, "C3", |i| i < 20, WRONG);
        commit_all(root, "wrong predictions");
        super::control_fails(&judged(root, &base, &[]));
        let gold = root.join("dev_gold.sql");
        let rewritten: String = (std::fs::read_to_string(&gold).unwrap().lines())
            .enumerate()
            .map(|(i, line)| match (i < 20, line.split_once('\t')) {
                (true, Some((_, db_id))) => format!("{EMPTY}\t{db_id}\n"),
                _ => format!("{line}\n"),
            })
            .collect();
        git(root, &["update-index", "--skip-worktree", "dev_gold.sql"]);
        std::fs::write(&gold, rewritten).unwrap();
        let listed = git(root, &["diff", "--name-only", &base, "--", "dev_gold.sql"]);
        assert!(listed.is_empty(), "git lists the change: {listed}");
        let judged = judged(root, &base, &[]);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}

/// A role's existence read through a cast (class 3): roles are the server's, not the
/// benchmark database's, so no data or structure digest covers them, and the catalog check
/// refuses the words that name them (`regrole`, `to_regrole`, `has_*_privilege`,
/// `pg_has_role`, `current_user`...). PostgreSQL's `aclitem` input (`'r=r/r'::aclitem`) looks
/// up the role names it holds and fails when one does not exist. The preparation creates a
/// role; the wrong prediction for item 5 (`SELECT count(*) FROM customers`: 2) counts the
/// customers only when that cast succeeds (an error otherwise).
mod role_probe {
    use crate::common;
    use common::servers;
    use common::trust_flow::*;

    /// The role the preparation creates (dropped again after the run: roles are the server's).
    const ROLE: &str = "rt12_lever_role";

    /// The pull request's wrong predictions for item 5: the role read by the `aclitem` cast,
    /// and by `aclcontains`, whose arguments are an `aclitem[]` and an `aclitem` the literals
    /// are cast to without the type's name being written.
    const WRONG: [&str; 2] = [
        "SELECT count(*) FROM customers \
         WHERE 'rt12_lever_role=r/rt12_lever_role'::aclitem IS NOT NULL",
        "SELECT count(*) FROM customers \
         WHERE aclcontains('{rt12_lever_role=r/rt12_lever_role}', \
         'rt12_lever_role=r/rt12_lever_role')",
    ];

    /// The gate's output on the pull request predicting item 5 as `wrong`, the role created
    /// just before the gate when `lever`.
    fn judge(database: &str, wrong: &str, lever: bool) -> std::process::Output {
        let server = servers::postgres();
        server.admin_sql("postgres", &format!("DROP ROLE IF EXISTS {ROLE}"));
        let dir = recorded_repository(server, database, &GOLD);
        let root = dir.path();
        let mut predictions = GOLD.to_vec();
        predictions[5] = wrong;
        let base = hostile_predictions(root, &predictions);
        let run = Run::pull_request(server, database, base);
        let judged = run.workflow_with(root, || {
            if lever {
                server.admin_sql("postgres", &format!("CREATE ROLE {ROLE}"));
            }
        });
        server.admin_sql("postgres", &format!("DROP ROLE IF EXISTS {ROLE}"));
        judged
    }

    #[test]
    fn a_role_made_by_the_preparation_and_probed_by_a_cast_does_not_pass() {
        let mut passed = Vec::new();
        for (n, wrong) in WRONG.iter().enumerate() {
            let control = judge(&format!("rt12_role_c{n}"), wrong, false);
            super::control_fails(&control);
            let judged = judge(&format!("rt12_role_l{n}"), wrong, true);
            eprintln!("{wrong}\n{}", text(&judged));
            if judged.status.code() == Some(0) {
                passed.push(*wrong);
            }
        }
        assert!(
            passed.is_empty(),
            "regressing pull requests passed: {passed:?}"
        );
    }
}
