//! Red team round 21 (issue 44): pull requests run as `sqlgate` runs them on a `pull_request`
//! event, each turning a regressing change green if it can. Every test asserts the SECURE
//! outcome, so a failing test is a win for the attacker, and each runs its control (the same
//! regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server as the administrator, not programs in the gate's
//! job.

/// `dataset.kind: bird-critic` on PostgreSQL (class 3), round 17's set-up: the preparation
/// leaves the server with every setting's value, `reset_val` and configuration file as the
/// baseline saw them, but a setting's `source` (which `pg_settings` shows every role) changed:
/// `ALTER SYSTEM SET` of the default value, a reload, then `ALTER SYSTEM RESET` without one.
mod bird_critic_pg_setting_source {
    use crate::redteam15::bird_critic_server_state::attempt_with as attempt;

    /// `vacuum_cost_limit` (no session pins it) set to its default from
    /// `postgresql.auto.conf`, then the file restored: the value is the same, its source is
    /// `configuration file` instead of `default`.
    #[test]
    fn a_settings_source_left_by_a_reload_does_not_pass() {
        attempt(
            |_| {
                "SELECT status, count(id) AS n FROM orders WHERE (SELECT source FROM pg_settings \
                 WHERE name = 'vacuum_cost_limit') = 'configuration file' GROUP BY status \
                 ORDER BY status"
                    .to_string()
            },
            (
                "postgres",
                "ALTER SYSTEM SET vacuum_cost_limit = 200; SELECT pg_reload_conf(); \
                 SELECT pg_sleep(1); ALTER SYSTEM RESET vacuum_cost_limit",
            ),
            "ALTER SYSTEM RESET vacuum_cost_limit; SELECT pg_reload_conf(); SELECT pg_sleep(1)",
        );
    }

    /// The same with a setting that needs a restart (`max_connections`): after the reload
    /// `pending_restart` is true, and stays so once the file is restored (it is computed at a
    /// reload), while `reset_val` never moved.
    #[test]
    fn a_pending_restart_left_by_a_reload_does_not_pass() {
        attempt(
            |_| {
                "SELECT status, count(id) AS n FROM orders WHERE (SELECT pending_restart FROM \
                 pg_settings WHERE name = 'max_connections') GROUP BY status ORDER BY status"
                    .to_string()
            },
            (
                "postgres",
                "ALTER SYSTEM SET max_connections = 7; SELECT pg_reload_conf(); \
                 SELECT pg_sleep(1); ALTER SYSTEM RESET max_connections",
            ),
            "ALTER SYSTEM RESET max_connections; SELECT pg_reload_conf(); SELECT pg_sleep(1)",
        );
    }
}

/// `dataset.kind: bird-critic` on MariaDB (class 3), round 18's set-up: a global variable set
/// to the value it already has (so `server:clone`, which records each global value, is
/// unchanged) changes where MariaDB says the value comes from, which every user reads
/// (`information_schema.SYSTEM_VARIABLES.GLOBAL_VALUE_ORIGIN`: `COMPILE-TIME` becomes `SQL`).
mod bird_critic_mariadb_variable_origin {
    use crate::redteam18::bird_critic_mariadb_server_state::attempt;

    /// `SET GLOBAL max_sp_recursion_depth = 0` (its default). Not undone: no statement gives
    /// the origin back short of a restart, and the server is this process's.
    #[test]
    fn a_variables_origin_set_to_its_own_value_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE (SELECT GLOBAL_VALUE_ORIGIN FROM \
             information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME = \
             'MAX_SP_RECURSION_DEPTH') = 'SQL' GROUP BY status ORDER BY status",
            "SET GLOBAL max_sp_recursion_depth = 0",
            "SELECT 1",
        );
    }
}

/// `dataset.kind: bird-critic` on MariaDB (class 3), round 18's set-up: the replica position
/// `server:clone` leaves out as moving by itself (`gtid_slave_pos`), which on a server that
/// replicates from nothing moves only when the administrator sets it.
mod bird_critic_mariadb_replica_position {
    use crate::redteam18::bird_critic_mariadb_server_state::attempt;

    /// `SET GLOBAL gtid_slave_pos`: every user reads `@@gtid_slave_pos`.
    #[test]
    fn a_replica_position_the_administrator_sets_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE @@global.gtid_slave_pos = \
             '0-1-4242' GROUP BY status ORDER BY status",
            "SET GLOBAL gtid_slave_pos = '0-1-4242'",
            "SET GLOBAL gtid_slave_pos = ''",
        );
    }
}

/// `dataset.kind: livesql` (SQLite) in a repair (class 2), round 19's set-up: a direct push
/// breaks `main`'s config and the pull request repairing it regresses lsq_081 (only the
/// post-state comparison sees it). The levers are gate keys of the repairing config that leave
/// the item out of the gate,
mod livesql_repair_leaving_the_item_out {
    use crate::common;
    use crate::redteam19::livesql_repair_post_state::repaired_with;
    use std::path::Path;

    /// lsq_081's 0-based index in the example's `items.jsonl`.
    fn index(root: &Path) -> usize {
        let items = std::fs::read_to_string(root.join("items.jsonl")).unwrap();
        items
            .lines()
            .position(|l| l.contains("\"lsq_081\""))
            .unwrap()
    }

    /// The control: the repair with the base's config text is a regression (exit 1).
    #[test]
    fn control_the_repair_alone_is_a_regression() {
        let (code, out) = repaired_with(str::to_string, |_| ());
        assert_eq!(code, Some(1), "{out}");
        common::assert_contains(&out, &["1 regressed"]);
    }

    /// `dataset.post_state` narrowed from `touched` to a table lsq_081 does not change
    /// (`[courses]`): the comparison is kept in form, emptied in effect.
    #[test]
    fn a_repair_cannot_narrow_the_post_state_to_an_untouched_table() {
        let (code, out) = repaired_with(
            |good| good.replace("  post_state: touched\n", "  post_state: [courses]\n"),
            |_| (),
        );
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing repair passed: {out}");
    }

    /// `gate.accept` naming lsq_081 (a known regression, left out of every cell).
    #[test]
    fn a_repair_cannot_accept_its_own_regression() {
        let (code, out) = repaired_with(str::to_string, |root| {
            let path = root.join("sqlgate.yml");
            let text = std::fs::read_to_string(&path).unwrap();
            let accept = format!(
                "  accept: [{{ items: [{}], reason: \"flaky\" }}]\n  per_difficulty:",
                index(root)
            );
            std::fs::write(&path, text.replacen("  per_difficulty:", &accept, 1)).unwrap();
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing repair passed: {out}");
    }
}

/// Spider in a repair (class 2): a direct push breaks `main`'s config and the pull request
/// repairing it breaks C3's first 30 predictions (`SELECT 'wrong'`). The lever: the repairing
/// config adds `audit.overrides` with a file of its own giving each of those items the wrong
/// prediction as an alternative gold (a prediction matching any gold is right).
mod spider_repair_alternatives {
    use crate::common::{self, repo};
    use crate::repair::lever_and_control;

    #[test]
    fn a_repair_cannot_add_its_wrong_predictions_as_alternative_golds() {
        let out = lever_and_control(false, |root, lever| {
            let config = root.join("sqlgate.yml");
            let good = std::fs::read_to_string(&config).unwrap();
            repo::gated_main(root);
            let broken = good.replace("max_drop_points: 0.0", "max_drop_point: 0.0");
            std::fs::write(&config, broken).unwrap();
            let base = repo::commit_base(root, "a direct push that breaks the config", "pr");
            match lever {
                true => {
                    let lines: String = (0..30)
                        .map(|index| {
                            let line = serde_json::json!({"index": index,
                                "alternatives": ["SELECT 'wrong'"], "reason": "either is fine"});
                            format!("{line}\n")
                        })
                        .collect();
                    std::fs::write(root.join("overrides.jsonl"), lines).unwrap();
                    let with = good + "audit: { overrides: overrides.jsonl }\n";
                    std::fs::write(&config, with).unwrap();
                }
                false => std::fs::write(&config, good).unwrap(),
            }
            common::break_predictions(root, "C3", 30);
            repo::commit_all(root, "the repair");
            base
        });
        eprintln!("{out}");
    }
}

/// Paths the base config names, replaced in the pull request's tree by a symlink (class 1),
/// round 15's set-up (`written_paths`): C3 regressed on 30 items and the pull request's config
/// loosened; the base's config must judge it (exit 1) or refuse (exit 2), never the pull
/// request's.
mod written_paths_links {
    use crate::redteam15::written_paths::attempt;

    /// `baseline.json` a symlink to `/dev/zero` (an endless read, if followed).
    #[test]
    fn the_baseline_a_symlink_to_dev_zero_does_not_run_the_pull_requests_config() {
        attempt(|root| {
            std::fs::remove_file(root.join("baseline.json")).unwrap();
            std::os::unix::fs::symlink("/dev/zero", root.join("baseline.json")).unwrap();
        });
    }

    /// The gold file the base names a symlink to an identical copy elsewhere in the tree.
    #[test]
    fn the_gold_a_symlink_to_a_copy_does_not_run_the_pull_requests_config() {
        attempt(|root| {
            std::fs::copy(root.join("dev_gold.sql"), root.join("gold-copy.sql")).unwrap();
            std::fs::remove_file(root.join("dev_gold.sql")).unwrap();
            std::os::unix::fs::symlink("gold-copy.sql", root.join("dev_gold.sql")).unwrap();
        });
    }
}

/// A forged shard (class 4) merged in a pull-request run (`merge --trusted-base`, outside
/// Actions: no run to name, so the committed-file check is the one guard): the pull request
/// regresses C3 on 30 items and brings a shard whose header is its own run's and whose records
/// are the base's (the good predictions' scores), the trailer's digest recomputed. Committed in
/// the tree, the shard is refused; the lever commits it inside a git submodule, whose files the
/// superproject's `git ls-files` does not list.
pub(crate) mod shard_in_a_submodule {
    use crate::common::{self, git, repo};
    use std::path::Path;

    /// `sqlgate eval --shard 1/1` of `root` against `base`, its shard's text.
    fn shard_of(root: &Path, base: &str, out: &Path) -> String {
        let args = [
            "eval",
            "--config",
            "sqlgate.yml",
            "--trusted-base",
            base,
            "--comment",
            "never",
            "--shard",
            "1/1",
            "--jsonl",
            out.to_str().unwrap(),
        ];
        let run = repo::sqlgate_in(root, &args, &[]);
        assert!(run.status.code().is_some(), "{run:?}");
        std::fs::read_to_string(out).unwrap()
    }

    /// The header of `pr`'s shard over the records of `good`'s, with a fresh trailer.
    fn forged(pr: &str, good: &str, scratch: &Path) -> String {
        let header = pr.lines().next().unwrap();
        let lines: Vec<&str> = good.lines().collect();
        let body = std::iter::once(header)
            .chain(lines[1..lines.len() - 1].iter().copied())
            .map(|l| format!("{l}\n"))
            .collect::<String>();
        let file = scratch.join("body");
        std::fs::write(&file, &body).unwrap();
        let trailer = serde_json::json!({"sqlgate_shard_sha256": crate::livesql_pg::sha256(&file)});
        format!("{body}{trailer}\n")
    }

    /// The merge of the pull request's forged shard, placed by `place` (which commits it).
    pub(crate) fn merged(place: impl Fn(&Path, &str)) -> (Option<i32>, String) {
        merged_with(|root, forged, _| place(root, forged))
    }

    /// [`merged`], `place` given the forged shard and the pull request's own.
    fn merged_with(place: impl Fn(&Path, &str, &str)) -> (Option<i32>, String) {
        let dir = repo::example(false);
        let root = dir.path();
        let base = repo::gated_main(root);
        let scratch = tempfile::tempdir().unwrap();
        let good = shard_of(root, &base, &scratch.path().join("good.jsonl"));
        git(root, &["checkout", "-qb", "pr"]);
        common::break_predictions(root, "C3", 30);
        repo::commit_all(root, "the pull request");
        let pr = shard_of(root, &base, &scratch.path().join("pr.jsonl"));
        place(root, &forged(&pr, &good, scratch.path()), &pr);
        let args = [
            "merge",
            "--config",
            "sqlgate.yml",
            "--trusted-base",
            &base,
            "--comment",
            "never",
            "shards/1.jsonl",
        ];
        let run = repo::sqlgate_in(root, &args, &[]);
        (run.status.code(), common::text(&run))
    }

    /// The control: the pull request's own shard, written by the run (not committed), is the
    /// regression (exit 1).
    #[test]
    fn control_the_pull_requests_own_shard_exits_1() {
        let (code, out) = merged_with(|root, _, own| {
            std::fs::create_dir(root.join("shards")).unwrap();
            std::fs::write(root.join("shards/1.jsonl"), own).unwrap();
        });
        assert_eq!(code, Some(1), "{out}");
    }

    /// The forged shard committed in the tree is refused.
    #[test]
    fn control_a_committed_forged_shard_is_refused() {
        let (code, out) = merged(|root, shard| {
            std::fs::create_dir(root.join("shards")).unwrap();
            std::fs::write(root.join("shards/1.jsonl"), shard).unwrap();
            repo::commit_all(root, "a shard");
        });
        assert_eq!(code, Some(2), "{out}");
        common::assert_contains(&out, &["never committed"]);
    }

    /// The lever: the same shard committed in a submodule at `shards`.
    #[test]
    fn a_forged_shard_in_a_submodule_is_refused() {
        let inner = tempfile::tempdir().unwrap();
        let (code, out) = merged(|root, shard| {
            let sub = inner.path();
            std::fs::write(sub.join("1.jsonl"), shard).unwrap();
            repo::init_main(sub, "the shard");
            let url = sub.to_str().unwrap();
            git(
                root,
                &[
                    "-c",
                    "protocol.file.allow=always",
                    "submodule",
                    "add",
                    "-q",
                    url,
                    "shards",
                ],
            );
            repo::commit_all(root, "a submodule");
            assert!(root.join("shards/1.jsonl").is_file());
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the forged shard merged: {out}");
    }
}
