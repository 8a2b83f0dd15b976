//! Red team round 20 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server as the administrator, not programs in the gate's
//! job.

/// `dataset.kind: bird-critic` on MariaDB (class 3), round 18's set-up: each item runs on a
/// clone of its base database as a user of its own, which holds no right outside its clone. The
/// preparation (MariaDB 10.11) grants a right to `PUBLIC`, the role every account holds, on a
/// database of its own, just before the gate; the pull request's wrong prediction for lsq_001
/// returns the right rows only when the grant is there (an error otherwise). One more lever
/// sets a global status text instead. Each lever is undone when its test ends (where it can be).
mod bird_critic_mariadb_public {
    use crate::redteam18::bird_critic_mariadb_server_state::attempt;

    /// `GRANT SELECT ON rt20.* TO PUBLIC` on a database the preparation makes: the clone's user
    /// reads `rt20.k` (no digest lists another database's rows, nor a grant to `PUBLIC`).
    #[test]
    fn a_table_granted_to_public_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM rt20.k) \
             GROUP BY status ORDER BY status",
            "CREATE DATABASE rt20; CREATE TABLE rt20.k (v INT); INSERT INTO rt20.k VALUES (1); \
             GRANT SELECT ON rt20.* TO PUBLIC",
            "CREATE DATABASE IF NOT EXISTS rt20; GRANT SELECT ON rt20.* TO PUBLIC; REVOKE \
             SELECT ON rt20.* FROM PUBLIC; DROP DATABASE rt20",
        );
    }

    /// `SET GLOBAL innodb_buffer_pool_dump_now = ON`: a trigger variable (it reads back
    /// `OFF`, so no recorded variable changes) whose effect every user reads in
    /// `information_schema.GLOBAL_STATUS` (`Innodb_buffer_pool_dump_status`): a status that is
    /// the administrator's doing, not a counter. Not undone (the server is this process's).
    #[test]
    fn a_status_the_administrator_sets_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE (SELECT VARIABLE_VALUE FROM \
             information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = \
             'INNODB_BUFFER_POOL_DUMP_STATUS') LIKE 'Buffer pool(s) dump completed%' GROUP BY \
             status ORDER BY status",
            "SET GLOBAL innodb_buffer_pool_dump_now = ON; SELECT SLEEP(2)",
            "SELECT 1",
        );
    }

    /// `GRANT EXECUTE` to `PUBLIC` on a stored function of another database, `SQL SECURITY
    /// DEFINER` (it runs with the administrator's rights: it may read any `mysql.*` table).
    #[test]
    fn a_definer_function_granted_to_public_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE rt20f.f() = 1 GROUP BY status \
             ORDER BY status",
            "CREATE DATABASE rt20f; CREATE FUNCTION rt20f.f() RETURNS INT SQL SECURITY DEFINER \
             RETURN (SELECT COUNT(*) FROM mysql.user WHERE User = 'root' LIMIT 1) > 0; \
             GRANT EXECUTE ON FUNCTION rt20f.f TO PUBLIC",
            "CREATE DATABASE IF NOT EXISTS rt20f; CREATE OR REPLACE FUNCTION rt20f.f() RETURNS \
             INT RETURN 1; GRANT EXECUTE ON FUNCTION rt20f.f TO PUBLIC; REVOKE EXECUTE ON \
             FUNCTION rt20f.f FROM PUBLIC; DROP DATABASE rt20f",
        );
    }
}

/// `dataset.kind: livesql` (SQLite) in a repair (class 2), round 19's set-up: `main` is gated
/// with `dataset.post_state: touched`, a direct push breaks its config, and the pull request
/// repairing it regresses lsq_081 in a way only the post-state comparison sees. The lever is
/// the repairing config naming the same dataset through `datasets:` (one named entry), without
/// the post-state default.
mod livesql_repair_datasets_form {
    use crate::common;
    use crate::redteam19::livesql_repair_post_state::repaired_with;

    /// `text` (a one-dataset config) with its `dataset:` and `predictions:` moved into a
    /// `datasets:` entry named `mini`.
    fn as_datasets(text: &str) -> String {
        let mut out = Vec::new();
        let mut inside = false;
        for line in text.lines() {
            if line == "dataset:" {
                out.push("datasets:\n  - name: mini\n    dataset:".to_string());
                inside = true;
            } else if line == "predictions:" {
                out.push("    predictions:".to_string());
                inside = true;
            } else if inside && line.starts_with("  ") {
                out.push(format!("    {line}"));
            } else {
                inside = false;
                out.push(line.to_string());
            }
        }
        out.join("\n") + "\n"
    }

    /// The repair judged: `repair` makes the pull request's config from the good (gated) one.
    fn repaired(repair: impl Fn(&str) -> String) -> (Option<i32>, String) {
        repaired_with(repair, |_| ())
    }

    /// The control: the repair with the base's config text is a regression (exit 1).
    #[test]
    fn control_a_repair_keeping_the_config_is_a_regression() {
        let (code, out) = repaired(str::to_string);
        assert_eq!(code, Some(1), "{out}");
        common::assert_contains(&out, &["1 regressed"]);
    }

    /// The lever: the same dataset as a `datasets:` entry without `post_state`: the baseline's
    /// settings (recorded for the one-dataset form) must still hold for it.
    #[test]
    fn a_repair_cannot_rename_the_dataset_to_drop_the_post_state() {
        let (code, out) =
            repaired(|good| as_datasets(&good.replace("  post_state: touched\n", "")));
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing repair passed: {out}");
    }

    /// The same `datasets:` form keeping `post_state` (is the form itself accepted in a
    /// repair?): not a lever, but it shows what the form alone does.
    #[test]
    fn a_repair_in_the_datasets_form_keeping_the_post_state_is_not_green() {
        let (code, out) = repaired(as_datasets);
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing repair passed: {out}");
    }
}

/// `dataset.kind: livesql` (SQLite) in a pull request (class 1): the base's dataset files are
/// the base commit's, and a file the pull request left alone is taken from the working tree.
/// The lever is a committed `.gitattributes` that makes git write the SQLite database with
/// CRLF line ends at checkout (`text eol=crlf`): git reports it unchanged (its clean filter
/// turns the CRLFs back), while its bytes, which every item's copy is made from, are not the
/// base's. The pull request regresses lsq_081 as in [`livesql_repair_datasets_form`].
mod livesql_checkout_attributes {
    use crate::common::repo;
    use crate::livesql_post::example_with;
    use crate::repair::judge_pr;
    use std::path::Path;
    use std::process::Command;

    /// Runs git in `root`, which must succeed.
    fn git(root: &Path, args: &[&str]) {
        let status = Command::new("git").args(args).current_dir(root).status();
        assert!(status.unwrap().success(), "git {args:?}");
    }

    /// The pull request judged: lsq_081 regressed, and with `attributes` committed as
    /// `.gitattributes` and the tree checked out again under them.
    fn judged(attributes: Option<&str>) -> (Option<i32>, String) {
        let dir = example_with("lsq_081", serde_json::json!({}));
        let root = dir.path();
        std::fs::remove_file(root.join("baseline.json")).unwrap();
        let config = root.join("sqlgate.yml");
        let text = std::fs::read_to_string(&config).unwrap();
        let gated = text.replace("  difficulty:", "  post_state: touched\n  difficulty:");
        std::fs::write(&config, gated).unwrap();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
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
        if let Some(attributes) = attributes {
            std::fs::write(root.join(".gitattributes"), attributes).unwrap();
        }
        repo::commit_all(root, "the pull request");
        let database = root.join("database/school/school.sqlite");
        let before = std::fs::read(&database).unwrap();
        std::fs::remove_file(&database).unwrap();
        git(root, &["checkout", "--", "database"]);
        let after = std::fs::read(&database).unwrap();
        if attributes.is_some() {
            assert_ne!(before, after, "the attributes changed nothing at checkout");
        }
        judge_pr(root, &base)
    }

    /// The control: the regression alone exits 1.
    #[test]
    fn control_the_regression_alone_exits_1() {
        let (code, out) = judged(None);
        assert_eq!(code, Some(1), "{out}");
    }

    /// The lever: the database checked out with CRLF line ends.
    #[test]
    fn a_database_checked_out_through_crlf_attributes_does_not_pass() {
        let (code, out) = judged(Some("*.sqlite text eol=crlf\n"));
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing pull request passed: {out}");
    }
}

/// `dataset.kind: bird-critic` on PostgreSQL (class 3), round 17's set-up: server state that
/// `PUBLIC` reads through a view over a function (not a catalog table, so `catalog_rows`, which
/// digests tables, does not hold it), which the preparation sets just before the gate.
mod bird_critic_pg_function_views {
    use crate::redteam15::bird_critic_server_state::attempt_with as attempt;

    /// The prediction: lsq_001's rows only where `condition` holds.
    fn wrong(condition: &'static str) -> impl Fn(&crate::common::servers::Server) -> String {
        move |_| {
            format!(
                "SELECT status, count(id) AS n FROM orders WHERE {condition} GROUP BY status \
                 ORDER BY status"
            )
        }
    }

    /// `pg_create_physical_replication_slot`: a slot stays until it is dropped, and every role
    /// reads `pg_replication_slots`.
    #[test]
    fn a_replication_slot_does_not_pass() {
        attempt(
            wrong("EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = 'rt20')"),
            (
                "postgres",
                "SELECT pg_create_physical_replication_slot('rt20')",
            ),
            "DO $$ BEGIN PERFORM pg_drop_replication_slot('rt20'); EXCEPTION WHEN OTHERS THEN \
             NULL; END $$",
        );
    }

    /// `pg_reload_conf()` with nothing changed in the configuration: `pg_conf_load_time()`,
    /// which every role may call, moves (the configuration's digests do not).
    #[test]
    #[ignore = "a documented limit: the server's clocks and counters, which change between two \
                honest runs (SECURITY.md, \"Not recorded: the server's counters\")"]
    fn a_configuration_reload_does_not_pass() {
        attempt(
            wrong("pg_conf_load_time() > pg_postmaster_start_time() + interval '3 seconds'"),
            ("postgres", "SELECT pg_reload_conf(); SELECT pg_sleep(1)"),
            "SELECT 1",
        );
    }
}

/// `dataset.kind: livesql` (SQLite) in a repair (classes 2 and 4), [`livesql_repair_datasets_form`]'s
/// set-up with the base's config text restored: besides the regression of lsq_081, the repair
/// changes a file the base names, or brings a baseline of its own.
mod livesql_repair_files {
    use crate::common::repo;
    use crate::redteam19::livesql_repair_post_state::repaired_with;

    /// The lever: the repair gives lsq_081 a `post_state` of its own in the dataset's
    /// `items.jsonl` (compare only `courses`, which it does not touch), so the default the
    /// baseline records no longer applies to it.
    #[test]
    fn a_repair_cannot_narrow_an_items_post_state_in_the_gold() {
        let (code, out) = repaired_with(str::to_string, |root| {
            let path = root.join("items.jsonl");
            let lines: Vec<String> = (std::fs::read_to_string(&path).unwrap().lines())
                .map(|line| {
                    let mut item: serde_json::Value = serde_json::from_str(line).unwrap();
                    if item["instance_id"] == "lsq_081" {
                        item["post_state"] = serde_json::json!(["courses"]);
                    }
                    item.to_string()
                })
                .collect();
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing repair passed: {out}");
    }

    /// The lever: the repair commits a baseline made on its own tree (`baseline update` with
    /// the regressed prediction), so the regression is no regression against it.
    #[test]
    fn a_repair_cannot_bring_its_own_baseline() {
        let (code, out) = repaired_with(str::to_string, repo::update_baseline);
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing repair passed: {out}");
    }
}
