//! Red team round 10 (issue 44): pull requests run as GitHub Actions runs `sqlgate action` on a
//! `pull_request` event, each turning a regressing change green if it can. Every test asserts
//! the SECURE outcome, so a failing test is a win for the attacker, and each runs its control
//! (the same regressing pull request without the lever), which must exit 1.

/// The run's claim on the server (round 9's fix, `engine/server/exclusive.rs`): once the data
/// are held no other session may be connected, and when scoring ends the sessions PostgreSQL
/// counts as established since the claim (`sum(pg_stat_database.sessions)`) must equal those
/// sqlgate opened. The sum is over counters a superuser can reset: `pg_stat_reset()` sets the
/// *current* database's counters to zero. The preparation leaves a side database whose counter
/// reads exactly the number of sessions the watcher will open on the benchmark's database (2:
/// the lever and its undo); the watcher waits for scoring without a session (the backends'
/// process titles, which `ps` or `docker top` shows), polls from the side database, and resets
/// the side database's counters before it undoes the lever, so the sum comes out as sqlgate
/// expects. Dropping the side database (its row leaves the sum) does the same, from a session
/// on the system database (one more to balance: the side database starts at 3).
mod stats_reset {
    use crate::common;
    use crate::server_levers::GLOBALS;
    use crate::server_midrun::mid_run_predictions;
    use common::servers::{self, Server, READER};
    use common::trust_flow::*;
    use std::time::{Duration, Instant};

    /// The side database whose session counter the watcher erases.
    const SIDE: &str = "rt10_side";

    /// The pull request's wrong prediction for item 5 (`SELECT count(*) FROM customers`: 2): it
    /// reads a view the watcher creates once scoring started (an error on the base's server),
    /// and sleeps while the watcher undoes it.
    const WRONG: &str = "SELECT n FROM rt10_answer, (SELECT pg_sleep(2)) s";

    /// The lever, run as the superuser on the benchmark's database; it prints the view's OID.
    const APPLY: &str = "CREATE VIEW public.rt10_answer AS SELECT 2::bigint AS n; \
                         SELECT 'public.rt10_answer'::regclass::oid;";

    /// Its undo.
    const UNDO: &str = "DROP VIEW public.rt10_answer;";

    /// How the watcher takes its own sessions out of the server's sum once it is done polling.
    #[derive(Clone, Copy, Debug)]
    enum Eraser {
        /// `pg_stat_reset()` in the side database (the side database starts at 2 sessions).
        Reset,
        /// `DROP DATABASE` of the side database from the system database (it starts at 3).
        Drop,
    }

    impl Eraser {
        /// The side database's session counter when the run starts: the sessions the
        /// watcher opens outside it (and that the server keeps counting).
        fn side_sessions(self) -> usize {
            match self {
                Eraser::Reset => 2,
                Eraser::Drop => 3,
            }
        }

        /// Erases the side database's count.
        fn erase(self, server: &Server) {
            match self {
                Eraser::Reset => {
                    server.admin_sql(SIDE, "SELECT pg_stat_reset();");
                }
                Eraser::Drop => {
                    server.admin_sql(server.system_database(), &format!("DROP DATABASE {SIDE};"));
                }
            }
        }
    }

    /// How long the watcher waits for what it watches for.
    const WATCH: Duration = Duration::from_secs(90);

    /// Whether a backend of the run's reader on `database` is executing a `FETCH` (a scoring
    /// query: scoring has started, so the claim was made), read from the processes' titles,
    /// without a session.
    fn scoring(database: &str) -> bool {
        let title = format!("postgres: {READER} {database} ");
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        entries.flatten().any(|entry| {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline);
            cmdline.starts_with(&title) && cmdline.contains("FETCH")
        })
    }

    /// Polls `what` until it holds, at most [`WATCH`]; whether it did.
    fn wait(mut what: impl FnMut() -> bool, every: Duration) -> bool {
        let until = Instant::now() + WATCH;
        while Instant::now() < until {
            if what() {
                return true;
            }
            std::thread::sleep(every);
        }
        false
    }

    /// The side database, fresh, with its session counter at `sessions`.
    fn prepare_side(server: &Server, sessions: usize) {
        server.recreate_database(SIDE, "");
        server.admin_sql(SIDE, "SELECT pg_stat_reset();");
        for _ in 0..sessions {
            server.admin_sql(SIDE, "SELECT 1;");
        }
    }

    /// What the watcher did: whether it saw the wrong prediction run before undoing the view.
    #[derive(Debug, PartialEq)]
    struct Watched {
        applied: bool,
        undone_after_the_wrong_prediction: bool,
    }

    /// The preparation's watcher: once scoring runs it creates the view (one session on the
    /// benchmark's database); it polls from the side database until the wrong prediction
    /// sleeps, resets the side database's counters, and drops the view (a second session).
    fn watcher(
        server: &'static Server,
        database: String,
        eraser: Eraser,
    ) -> std::thread::JoinHandle<Watched> {
        std::thread::spawn(move || {
            let applied = wait(|| scoring(&database), Duration::from_millis(2));
            let view = server.admin_sql(&database, APPLY);
            let view = view.trim();
            // A scoring query runs as a cursor's FETCH, so its text is not in
            // `pg_stat_activity`: the wrong prediction is the sleeping backend that holds a
            // lock on the view (`pg_locks` lists every database's).
            let sleeping = format!(
                "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) \
                 WHERE l.relation = {view} AND l.database = \
                 (SELECT oid FROM pg_database WHERE datname = '{database}') \
                 AND a.wait_event = 'PgSleep'"
            );
            let seen = wait(
                || server.admin_sql(SIDE, &sleeping).trim() != "0",
                Duration::from_millis(20),
            );
            eraser.erase(server);
            server.admin_sql(&database, UNDO);
            Watched {
                applied,
                undone_after_the_wrong_prediction: seen,
            }
        })
    }

    /// The gate's output on the pull request predicting item 5 as [`WRONG`] (items 0 and 3
    /// right but slow), with the watcher erasing its sessions by `eraser` started just before
    /// the gate when `pull`.
    fn judge(
        database: &str,
        (eraser, pull): (Eraser, bool),
    ) -> (std::process::Output, Option<Watched>) {
        let server = servers::postgres();
        let dir = recorded_repository(server, database, &GOLD);
        let root = dir.path();
        let mut predictions = mid_run_predictions(server.kind);
        predictions[5] = WRONG;
        let run = Run::pull_request(server, database, hostile_predictions(root, &predictions));
        let mut watching = None;
        let judged = run.workflow_with(root, || {
            prepare_side(server, eraser.side_sessions());
            watching = pull.then(|| watcher(server, database.to_string(), eraser));
        });
        (judged, watching.map(|w| w.join().unwrap()))
    }

    /// The control exits 1; whether the pull request with the watcher erasing by `eraser`
    /// still does not pass (printing it when it does).
    fn check(database: &str, eraser: Eraser) -> bool {
        let (control, _) = judge(&format!("{database}_c"), (eraser, false));
        super::super::redteam9::control_fails(&control);
        let (judged, watched) = judge(database, (eraser, true));
        let acted = Watched {
            applied: true,
            undone_after_the_wrong_prediction: true,
        };
        assert_eq!(watched, Some(acted), "{}", text(&judged));
        let views = servers::postgres().admin_sql(
            database,
            "SELECT count(*) FROM pg_class WHERE relname = 'rt10_answer'",
        );
        assert_eq!(views.trim(), "0", "the view was not dropped");
        let held = judged.status.code() != Some(0);
        if !held {
            eprintln!(
                "{eraser:?}: the regressing pull request passed: {}",
                text(&judged)
            );
        }
        held
    }

    #[test]
    fn a_session_count_erased_on_another_database_does_not_hide_the_watcher() {
        let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
        let passed: Vec<Eraser> = [(Eraser::Reset, "rt10_reset"), (Eraser::Drop, "rt10_drop")]
            .into_iter()
            .filter(|(eraser, database)| !check(database, *eraser))
            .map(|(eraser, _)| eraser)
            .collect();
        assert!(
            passed.is_empty(),
            "regressing pull requests passed: {passed:?}"
        );
    }
}

/// The repair path chosen by the pull request (class 2): on a `pull_request` event the
/// workflow file is the pull request's, so it picks the Action's `config` input. A config path
/// the base commit does not hold is "the base has no config": the pull request's own config
/// runs, held to the base's newest baseline, its recorded datasets, overrides, prediction files
/// and gate. What the baseline does not record stays the pull request's to choose: the
/// execution limits and `dataset.allow_failing_golds`. With `execution.max_rows: 1` every gold
/// returning several rows fails, and listing those items as allowed gold failures leaves them
/// unscored instead of failing the gate, so their regressions are compared with nothing.
mod chosen_repair {
    use crate::common;
    use common::repo::{self, commit_all, sqlgate_in};
    use common::{git, rewrite_predictions, text};
    use std::path::Path;

    /// The pull request's wrong prediction for the items it regresses (no row).
    const WRONG: &str = "SELECT 1 WHERE 1 = 0";

    /// The example's items whose gold returns more than one row.
    fn several_rows(root: &Path) -> Vec<usize> {
        let gold = std::fs::read_to_string(root.join("dev_gold.sql")).unwrap();
        (gold.lines().enumerate())
            .filter(|(_, line)| {
                let (sql, db) = line.split_once('\t').unwrap();
                let file = root.join(format!("database/{db}/{db}.sqlite"));
                let conn = rusqlite::Connection::open(file).unwrap();
                let mut statement = conn.prepare(sql).unwrap();
                let mut rows = statement.query([]).unwrap();
                let two = rows.next().unwrap().is_some() && rows.next().unwrap().is_some();
                two
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The pull request judged as its job judges it, with the Action's `config` input `config`.
    fn judged(root: &Path, base: &str, config: &str) -> std::process::Output {
        let args = ["eval", "--config", config, "--comment", "never"];
        sqlgate_in(root, &[&args[..], &["--trusted-base", base]].concat(), &[])
    }

    #[test]
    fn a_config_path_the_base_lacks_chooses_no_gold_failures() {
        let dir = repo::example(true);
        let root = dir.path();
        let base = repo::gated_main(root);
        git(root, &["checkout", "-qb", "pr"]);
        let regressed = several_rows(root);
        let chosen: Vec<usize> = regressed.iter().copied().take(24).collect();
        rewrite_predictions(root, "C3", |i| chosen.contains(&i), WRONG);
        let config = std::fs::read_to_string(root.join("sqlgate.yml")).unwrap();
        let listed: Vec<String> = regressed.iter().map(usize::to_string).collect();
        let repair = config
            .replace(
                "  difficulty: spider-hardness\n",
                &format!(
                    "  difficulty: spider-hardness\n  allow_failing_golds: [{}]\n",
                    listed.join(", ")
                ),
            )
            .replace(
                "execution: { timeout_ms: 30000, threads: auto }",
                "execution: { timeout_ms: 30000, threads: auto, max_rows: 1 }",
            );
        assert_ne!(repair, config);
        std::fs::write(root.join("repair.yml"), repair).unwrap();
        std::fs::write(root.join("plain.yml"), config).unwrap();
        commit_all(root, "wrong predictions, a config of its own");
        let control = judged(root, &base, "sqlgate.yml");
        super::super::redteam9::control_fails(&control);
        let plain = judged(root, &base, "plain.yml");
        super::super::redteam9::control_fails(&plain);
        let judged = judged(root, &base, "repair.yml");
        eprintln!("{}", text(&judged));
        super::super::redteam9::not_passed(&judged);
    }
}
