//! Red team round 16 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1. The threat model is
//! SECURITY.md's "What the workflow must do": the pull request controls its tree and the SQL the
//! workflow's preparation runs on the server, not programs in the gate's job.

/// State of a base database (or of the server) the round 15 fix does not record, under
/// `dataset.kind: bird-critic` on PostgreSQL (class 3): each item runs on a clone of its base
/// database, which copies every object and catalog row of it, as a role with no catalog
/// refusal. The structure entry records functions, views, triggers, rules, policies, types,
/// operators, casts, extensions, indexes, constraints and defaults; `server:structure` records
/// roles, memberships, databases by name, tablespaces and settings. The preparation adds
/// something else (a comment on a table, an empty schema, a sequence, a comment on the
/// database), and the pull request's wrong prediction for lsq_001 (a match on the base) returns
/// the right rows only when it is there: 0 rows otherwise. Each lever is undone when its test
/// ends.
mod bird_critic_unrecorded_state {
    use crate::redteam15::bird_critic_server_state::attempt;

    #[test]
    fn a_comment_on_a_base_table_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE obj_description('orders'::regclass, \
             'pg_class') = 'rt16' GROUP BY status ORDER BY status",
            ("shop", "COMMENT ON TABLE orders IS 'rt16'"),
            "COMMENT ON TABLE orders IS NULL",
        );
    }

    /// An empty schema in the base database (`pg_namespace`, copied into every clone).
    #[test]
    fn an_empty_schema_in_the_base_database_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE EXISTS (SELECT 1 FROM \
             pg_namespace WHERE nspname = 'rt16_flag') GROUP BY status ORDER BY status",
            ("shop", "CREATE SCHEMA rt16_flag"),
            "DROP SCHEMA IF EXISTS rt16_flag",
        );
    }

    /// A sequence in the base database, read by its state (a relation, not a table: no row
    /// digest, no structure line).
    #[test]
    fn a_sequence_in_the_base_database_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE (SELECT last_value FROM \
             rt16_seq) = 42 GROUP BY status ORDER BY status",
            (
                "shop",
                "CREATE SEQUENCE rt16_seq; SELECT setval('rt16_seq', 42)",
            ),
            "DROP SEQUENCE IF EXISTS rt16_seq",
        );
    }

    /// A comment on the base database (`pg_shdescription`, a shared catalog every role reads),
    /// read with `shobj_description`.
    #[test]
    fn a_comment_on_the_base_database_does_not_pass() {
        attempt(
            "SELECT status, count(id) AS n FROM orders WHERE shobj_description((SELECT oid \
             FROM pg_database WHERE datname = 'shop'), 'pg_database') = 'rt16' GROUP BY status \
             ORDER BY status",
            ("postgres", "COMMENT ON DATABASE shop IS 'rt16'"),
            "COMMENT ON DATABASE shop IS NULL",
        );
    }
}

/// Files of the pull request's tree that the base config names, made unreadable in new ways
/// (class 1): a symbolic link that loops at `tables.json`, and the other system's prediction
/// file (`predictions/RESDSQL.txt`) deleted. Either could make the base's config fail to load,
/// and a base config that does not load must not let the pull request's own config run. The
/// pull request regresses C3 on 30 items and loosens its own config's gate; the secure outcome
/// is the base's config judging it (exit 1), or a refusal (exit 2).
mod unreadable_named_files {
    use crate::redteam15::written_paths::attempt;

    #[test]
    fn a_looping_symbolic_link_at_the_tables_file_does_not_run_the_pull_requests_config() {
        attempt(|root| {
            std::fs::remove_file(root.join("tables.json")).unwrap();
            std::os::unix::fs::symlink("tables.json", root.join("tables.json")).unwrap();
        });
    }

    #[test]
    fn the_other_systems_prediction_file_deleted_does_not_run_the_pull_requests_config() {
        attempt(|root| {
            std::fs::remove_file(root.join("predictions/RESDSQL.txt")).unwrap();
        });
    }
}

/// A base whose config a direct push deleted (class 2: what the base holds governs, whatever
/// the pull request's config names): the pull request restores the config without the system
/// it regresses (C3's `predictions` entry dropped), so the run has no C3 to compare with the
/// baseline's. The baseline records C3; a system the baseline has and the run lacks must not
/// pass.
mod restored_config_without_a_system {
    use crate::repair::restored_config;

    #[test]
    fn a_restored_config_without_the_regressed_system_does_not_pass() {
        let (code, out) = restored_config(str::to_string);
        assert_eq!(code, Some(1), "control: {out}");
        let (code, out) = restored_config(|good| {
            good.replace("  - { name: C3, path: predictions/C3.txt }\n", "")
                .replace("reference: ex\n", "")
        });
        eprintln!("{out}");
        assert_ne!(code, Some(0), "the regressing pull request passed: {out}");
    }
}
