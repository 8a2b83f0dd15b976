//! Red team round 19 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server as the administrator, not programs in the gate's
//! job.

/// `dataset.kind: bird-critic` on MariaDB (class 3): each item runs on a clone of its base
/// database as a user of its own. The preparation changes a server variable with a GLOBAL scope
/// only (so neither `server:clone`, which holds the variables a session inherits, nor the
/// structure's recorded variables hold it) just before the gate; the pull request's wrong
/// prediction for lsq_001 (a match on the base) returns the right rows only when the change is
/// there (0 rows otherwise). Each lever is undone when its test ends.
mod bird_critic_mariadb_global_only {
    use crate::redteam18::bird_critic_mariadb_server_state::attempt;

    /// `SET GLOBAL innodb_default_row_format` (GLOBAL scope only): the run builds each template
    /// and clone by replaying the base's `SHOW CREATE TABLE`, which names no row format when the
    /// base's tables took the default, so the clone's tables take the new one, while the base
    /// (and so every data digest and the `<db>:clone` entry, read from the base) is unchanged.
    /// The clone's `information_schema.TABLES.ROW_FORMAT` then reads `Compact`.
    #[test]
    fn a_global_default_row_format_the_clones_tables_take_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE (SELECT ROW_FORMAT FROM \
             information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = \
             'orders') = 'Compact' GROUP BY status ORDER BY status",
            "SET GLOBAL innodb_default_row_format = 'compact'",
            "SET GLOBAL innodb_default_row_format = 'dynamic'",
        );
    }

    /// A variable with a GLOBAL scope only, read by the prediction itself (`@@GLOBAL.`, or
    /// `information_schema.GLOBAL_VARIABLES`, which every user reads): `server:clone` keeps only
    /// the variables a session inherits.
    #[test]
    fn a_global_only_variable_the_clone_reads_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE (SELECT VARIABLE_VALUE FROM \
             information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = \
             'MAX_PREPARED_STMT_COUNT') = '16381' GROUP BY status ORDER BY status",
            "SET GLOBAL max_prepared_stmt_count = 16381",
            "SET GLOBAL max_prepared_stmt_count = 16382",
        );
    }

    /// A named key cache, made by setting a structured variable (`SET GLOBAL
    /// rt19.key_buffer_size`): `information_schema.KEY_CACHES`, which every user reads, lists
    /// it; no variable a session inherits changes.
    #[test]
    fn a_named_key_cache_the_clone_lists_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM \
             information_schema.KEY_CACHES WHERE KEY_CACHE_NAME = 'rt19') GROUP BY status \
             ORDER BY status",
            "SET GLOBAL rt19.key_buffer_size = 1048576",
            "SET GLOBAL rt19.key_buffer_size = 0",
        );
    }
}

/// `dataset.kind: livesql` (SQLite) in a repair (class 2): `main` is gated with
/// `dataset.post_state: touched` (every item's post-state compared with the gold's, the sound
/// profile's), then a direct push breaks its config; the pull request repairing it regresses
/// lsq_081 (`UPDATE students SET grade = 13, gpa = 0 WHERE grade = 12` for the gold's `UPDATE
/// students SET grade = 13 WHERE grade = 12`: the item's test case, which reads `id, grade`,
/// passes; the moved students' `gpa` is lost), which only the post-state comparison sees. The lever
/// is the repairing config leaving `dataset.post_state` out.
pub(crate) mod livesql_repair_post_state {
    use crate::common::{self, repo};
    use crate::livesql_post::example_with;
    use crate::repair::judge_pr;

    /// The base's gated config, with the default post-state comparison.
    pub(crate) fn gated(text: &str) -> String {
        text.replace("  difficulty:", "  post_state: touched\n  difficulty:")
    }

    /// The repair judged: `repair` makes the pull request's config from the good (gated) one.
    fn repaired(repair: impl Fn(&str) -> String) -> (Option<i32>, String) {
        repaired_with(repair, |_| ())
    }

    /// [`repaired`], with `extra` changing the pull request's tree last, before its commit.
    pub(crate) fn repaired_with(
        repair: impl Fn(&str) -> String,
        extra: impl Fn(&std::path::Path),
    ) -> (Option<i32>, String) {
        let dir = example_with("lsq_081", serde_json::json!({}));
        let root = dir.path();
        std::fs::remove_file(root.join("baseline.json")).unwrap();
        let config = root.join("sqlgate.yml");
        let good = gated(&std::fs::read_to_string(&config).unwrap());
        std::fs::write(&config, &good).unwrap();
        repo::gated_main(root);
        let broken = good.replace("max_drop_points: 0.0", "max_drop_point: 0.0");
        std::fs::write(&config, broken).unwrap();
        let base = repo::commit_base(root, "a direct push that breaks the config", "pr");
        std::fs::write(&config, repair(&good)).unwrap();
        let path = root.join("predictions/model.jsonl");
        let every_row = serde_json::json!(
            {"instance_id": "lsq_081", "pred_sqls": ["UPDATE students SET grade = 13, gpa = 0 WHERE grade = 12"]}
        );
        let lines: Vec<String> = (std::fs::read_to_string(&path).unwrap().lines())
            .map(|line| match line.contains("\"lsq_081\"") {
                true => every_row.to_string(),
                false => line.to_string(),
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        extra(root);
        repo::commit_all(root, "the repair");
        judge_pr(root, &base)
    }

    /// The control: the repair with the base's config text is a regression (exit 1).
    #[test]
    fn control_a_repair_keeping_the_post_state_default_is_a_regression() {
        let (code, out) = repaired(str::to_string);
        assert_eq!(code, Some(1), "{out}");
        common::assert_contains(&out, &["1 regressed"]);
    }

    /// The lever: the repairing config drops `dataset.post_state`, so lsq_081 is judged on its
    /// returned rows alone and the regression would pass, unless the baseline's settings (or
    /// the items' digest) hold the comparison the base was scored with.
    #[test]
    fn a_repair_cannot_drop_the_post_state_comparison() {
        let (code, out) = repaired(|good| good.replace("  post_state: touched\n", ""));
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing repair passed: {out}");
    }

    /// The lever: the repairing config scores the official profile alone (`livesql`, which
    /// compares no post-state) and gates on it, unless the baseline's gate and metrics hold.
    #[test]
    fn a_repair_cannot_gate_on_the_official_profile_alone() {
        let (code, out) = repaired(|good| {
            good.replace("metrics: [livesql, livesql_sound]", "metrics: [livesql]")
                .replace("  post_state: touched\n", "")
                .replace("reference: livesql_sound", "reference: livesql")
                .replace("  metric: livesql_sound", "  metric: livesql")
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing repair passed: {out}");
    }
}

/// `dataset.kind: bird-critic` on PostgreSQL (class 3), round 17's set-up: a setting the
/// preparation gives every new session that no built-in variable names (a custom placeholder,
/// `rt19.flag`), read by the prediction with `current_setting('rt19.flag', true)`.
mod bird_critic_pg_custom_settings {
    use crate::redteam15::bird_critic_server_state::attempt_with as attempt;

    /// The prediction: lsq_001's rows only where the placeholder `name` reads `on`.
    fn wrong(name: &str) -> impl Fn(&crate::common::servers::Server) -> String + '_ {
        move |_| {
            format!(
                "SELECT status, count(id) AS n FROM orders WHERE current_setting('{name}', true) \
                 = 'on' GROUP BY status ORDER BY status"
            )
        }
    }

    /// `ALTER SYSTEM SET rt19.flag` (after a `SET` that makes the placeholder known to the
    /// session: PostgreSQL 15 refuses an unknown one) and a reload: every new session starts
    /// with it.
    #[test]
    fn a_custom_setting_in_the_server_configuration_does_not_pass() {
        attempt(
            wrong("rt19.flag"),
            (
                "postgres",
                "SET rt19.flag = 'x'; ALTER SYSTEM SET rt19.flag = 'on'; SELECT pg_reload_conf(); \
                 SELECT pg_sleep(1)",
            ),
            "SET rt19.flag = 'x'; ALTER SYSTEM RESET rt19.flag; SELECT \
             pg_reload_conf(); SELECT pg_sleep(1)",
        );
    }

    /// `ALTER ROLE ALL SET rt19.flag`: every role's sessions start with it, the clone's too.
    #[test]
    fn a_custom_setting_for_every_role_does_not_pass() {
        attempt(
            wrong("rt19.role_flag"),
            ("postgres", "ALTER ROLE ALL SET rt19.role_flag = 'on'"),
            "ALTER ROLE ALL RESET rt19.role_flag",
        );
    }
}
