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
mod replaced_base {
    use crate::common;
    use common::repo::{self, commit_all, judged};
    use common::{git, rewrite_predictions, text};

    /// The pull request's wrong prediction for the items it regresses (no row).
    const WRONG: &str = "SELECT 1 WHERE 1 = 0";

    /// The base's config with its gate loosened: any drop allowed, no per-difficulty or
    /// significance rule.
    fn loosened(config: &str) -> String {
        let gate = config.find("gate:").expect("the example has a gate");
        let report = config.find("report:").expect("the example has a report");
        format!(
            "{}gate:\n  metric: ex\n  max_drop_points: 100.0\n{}",
            &config[..gate],
            &config[report..]
        )
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
        let forged = root.join(".git/rt11-loosened.yml");
        std::fs::write(&forged, loosened(&config)).unwrap();
        let new = git(root, &["hash-object", "-w", forged.to_str().unwrap()]);
        let old = git(root, &["rev-parse", &format!("{base}:sqlgate.yml")]);
        git(root, &["replace", old.trim(), new.trim()]);
        let shown = git(root, &["show", &format!("{base}:sqlgate.yml")]);
        assert!(shown.contains("max_drop_points: 100.0"), "{shown}");
        let status = git(root, &["status", "--porcelain", "--untracked-files=no"]);
        assert!(status.trim().is_empty(), "git lists a change: {status}");
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
