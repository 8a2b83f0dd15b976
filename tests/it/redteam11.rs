//! Red team round 11 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1.

use super::redteam9::{control_fails, not_passed};

/// The trusted base read through git (classes 1 and 2): the trust stage reads the base
/// commit's config and baseline with `git cat-file` / `git ls-tree` in the checkout, and git
/// honours the checkout's replace refs (`refs/replace/*`) unless told not to. A step of the
/// pull request's workflow that runs before the gate (its preparation) writes a loosened
/// config as a blob and replaces the base's config blob with it (`git replace <old> <new>`):
/// every read of `<base>:sqlgate.yml` then returns the loosened gate, while the commit, the
/// tree and the pull request's own files are unchanged.
pub(crate) mod replaced_base {
    use crate::common;
    use common::repo::{self, commit_all, judged};
    use common::{git, rewrite_predictions, text};
    use std::path::Path;

    /// The pull request's wrong prediction for the items it regresses (no row).
    pub(crate) const WRONG: &str = "SELECT 1 WHERE 1 = 0";

    /// The base's config with its gate loosened: any drop allowed, no per-difficulty or
    /// significance rule.
    pub(crate) fn loosened(config: &str) -> String {
        let gate = config.find("gate:").expect("the example has a gate");
        let report = config.find("report:").expect("the example has a report");
        format!(
            "{}gate:\n  metric: ex\n  max_drop_points: 100.0\n{}",
            &config[..gate],
            &config[report..]
        )
    }

    /// Makes every read of `<base>:<path>` in the checkout `root` return `content` (a replace
    /// ref from the base's blob to a new one), as a step of the pull request's workflow can.
    fn replace_blob(root: &Path, base: &str, path: &str, content: &str) {
        let forged = root.join(".git/rt11-forged");
        std::fs::write(&forged, content).unwrap();
        let new = git(root, &["hash-object", "-w", forged.to_str().unwrap()]);
        let old = git(root, &["rev-parse", &format!("{base}:{path}")]);
        git(root, &["replace", old.trim(), new.trim()]);
        let shown = git(root, &["show", &format!("{base}:{path}")]);
        assert_eq!(shown.trim(), content.trim(), "the replace ref is not read");
        let status = git(root, &["status", "--porcelain", "--untracked-files=no"]);
        assert!(status.trim().is_empty(), "git lists a change: {status}");
    }

    /// The baseline the example's config records on the base commit with C3's first 20 items
    /// predicted as [`WRONG`] (written in the working tree, then put back).
    pub(crate) fn regressed_baseline(root: &Path) -> String {
        rewrite_predictions(root, "C3", |i| i < 20, WRONG);
        repo::update_baseline(root);
        let regressed = std::fs::read_to_string(root.join("baseline.json")).unwrap();
        git(root, &["checkout", "--", "."]);
        regressed
    }

    /// A replace ref from the base's baseline blob to one recorded with the pull request's
    /// wrong predictions, on the base commit itself: the regression is the baseline's.
    #[test]
    fn a_replaced_base_baseline_blob_does_not_hide_the_regression() {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        let regressed = regressed_baseline(root);
        git(root, &["checkout", "-qb", "pr"]);
        rewrite_predictions(root, "C3", |i| i < 20, WRONG);
        commit_all(root, "wrong predictions");
        let control = judged(root, &base, &[]);
        super::control_fails(&control);
        replace_blob(root, &base, "baseline.json", &regressed);
        let judged = judged(root, &base, &[]);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }

    /// A replace ref from the base's config blob to text that does not parse: the base's
    /// config "does not load", so the pull request's own config runs (the repair path), with
    /// its gate loosened and its baseline somewhere the base has none.
    #[test]
    fn a_base_config_broken_through_a_replace_ref_is_no_repair() {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
        rewrite_predictions(root, "C3", |i| i < 20, WRONG);
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        let own = loosened(&config).replace("baseline.json", "own-baseline.json");
        std::fs::write(root.join("sqlgate.yml"), own).unwrap();
        commit_all(root, "wrong predictions, a config of its own");
        let control = judged(root, &base, &[]);
        super::control_fails(&control);
        replace_blob(root, &base, "sqlgate.yml", "dataset: [unclosed\n");
        let judged = judged(root, &base, &[]);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }

    #[test]
    fn a_replaced_base_config_blob_does_not_loosen_the_gate() {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
        rewrite_predictions(root, "C3", |i| i < 20, WRONG);
        commit_all(root, "wrong predictions");
        let control = judged(root, &base, &[]);
        super::control_fails(&control);
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        replace_blob(root, &base, "sqlgate.yml", &loosened(&config));
        let judged = judged(root, &base, &[]);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}

/// Server state read through a query held in a string (class 3): the catalog check
/// (`engine/server/catalog.rs`) refuses a prediction whose *words* name the server's
/// catalogs, but words inside string literals are not words, and PostgreSQL's `ts_stat(text)`
/// runs the query its argument holds. The preparation comments on a benchmark table (a
/// comment is no row, so no data digest sees it); the wrong prediction counts the words of
/// the user-made comments, read from `pg_catalog.pg_description` inside `ts_stat`'s string.
mod string_query {
    use crate::common;
    use common::servers;
    use common::trust_flow::*;

    /// The pull request's wrong prediction for item 5 (`SELECT count(*) FROM customers`: 2):
    /// the number of distinct words of the comments made after `initdb` (0 on the base's
    /// server, 2 once the preparation commented).
    const WRONG: &str = "SELECT count(*) FROM ts_stat('SELECT to_tsvector(''simple'', \
         description) FROM pg_catalog.pg_description WHERE objoid >= 16384')";

    /// The lever: a comment of two words on a benchmark table.
    const COMMENT: &str = "COMMENT ON TABLE customers IS 'two words';";

    /// The gate's output on the pull request predicting item 5 as [`WRONG`], with `prepare`
    /// run as the superuser on the benchmark's database just before the gate.
    fn judge(database: &str, prepare: &str) -> std::process::Output {
        let server = servers::postgres();
        let dir = recorded_repository(server, database, &GOLD);
        let root = dir.path();
        let mut predictions = GOLD.to_vec();
        predictions[5] = WRONG;
        let base = hostile_predictions(root, &predictions);
        let run = Run::pull_request(server, database, base);
        run.workflow_with(root, || {
            if !prepare.is_empty() {
                server.admin_sql(database, prepare);
            }
        })
    }

    #[test]
    fn a_catalog_read_inside_a_string_query_does_not_pass() {
        let control = judge("rt11_tsstat_c", "");
        super::control_fails(&control);
        let judged = judge("rt11_tsstat_l", COMMENT);
        eprintln!("{}", text(&judged));
        super::not_passed(&judged);
    }
}
