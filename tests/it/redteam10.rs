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

/// The run's claim on a MariaDB server (round 9's fix) counts client connections: none but the
/// hold's open at the claim (`Threads_connected`), and every connection attempt since then
/// (`Connections`) one of sqlgate's. A replica's applier is no client connection: once the
/// preparation has made the benchmark's server a replica of a server the pull request's
/// workflow started (`CHANGE MASTER TO`, `START SLAVE`, before the run), the replica's SQL
/// thread runs what that other server logs, with no session on the benchmark's server. Its
/// watcher (on the other server) sees scoring start without a session either: three
/// connections to the benchmark server's port held half a second (`/proc/net/tcp`: the hold
/// and two workers in their sleeping predictions). It then creates a table holding the gold's
/// answer, and drops it while the wrong prediction reading it sleeps (the drop waits for the
/// reader's metadata lock, so it lands as that transaction ends, before the end-of-run
/// digests).
mod replica_applier {
    use crate::common;
    use crate::server_levers::GLOBALS;
    use crate::server_midrun::mid_run_predictions;
    use common::servers::{self, as_db_user, free_port, give_to_db_user, Server};
    use common::trust_flow::*;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Output};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// The pull request's wrong prediction for item 5 (`SELECT count(*) FROM customers`: 2): it
    /// reads a table the other server creates once scoring started (an error on the base's
    /// server) and sleeps 3.5 s (under the 5 s limit) while the drop waits.
    const WRONG: &str = "SELECT n FROM rt10_answer, (SELECT SLEEP(3.5)) s";

    /// A MariaDB server of the pull request's workflow with its binary log on: the primary.
    struct Primary {
        /// Its data folder, socket and log.
        folder: tempfile::TempDir,
        /// The `mariadbd` process (this test started it; killed on drop).
        process: Child,
        /// Its TCP port on 127.0.0.1.
        port: u16,
    }

    impl Primary {
        /// Initialises and starts the primary, with a user the replica connects as.
        fn start() -> Primary {
            let folder = tempfile::Builder::new()
                .prefix("rt10-primary-")
                .tempdir()
                .unwrap();
            give_to_db_user(folder.path()).unwrap();
            let data = folder.path().join("data");
            let installed = as_db_user(Path::new("mariadb-install-db"))
                .arg("--no-defaults")
                .arg(format!("--datadir={}", data.display()))
                .arg("--auth-root-authentication-method=normal")
                .output()
                .unwrap();
            assert!(installed.status.success(), "{}", text(&installed));
            let port = free_port().unwrap();
            let path = |name: &str| folder.path().join(name).display().to_string();
            let process = as_db_user(Path::new("/usr/sbin/mariadbd"))
                .arg("--no-defaults")
                .arg(format!("--datadir={}", data.display()))
                .arg(format!("--socket={}", path("sock")))
                .arg(format!("--port={port}"))
                .arg("--bind-address=127.0.0.1")
                .arg("--server-id=4242")
                .arg(format!("--log-bin={}", path("bin")))
                .arg(format!("--pid-file={}", path("pid")))
                .arg(format!("--log-error={}", path("err")))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let primary = Primary {
                folder,
                process,
                port,
            };
            let until = Instant::now() + Duration::from_secs(60);
            while !primary.client("SELECT 1").status.success() {
                assert!(Instant::now() < until, "the primary did not start");
                std::thread::sleep(Duration::from_millis(200));
            }
            primary.sql(
                "DROP USER IF EXISTS ''@'localhost'; \
                 CREATE USER 'rt10_repl'@'%' IDENTIFIED BY 'rt10'; \
                 CREATE USER 'rt10_repl'@'localhost' IDENTIFIED BY 'rt10'; \
                 GRANT REPLICATION SLAVE ON *.* TO 'rt10_repl'@'%', 'rt10_repl'@'localhost';",
            );
            primary
        }

        /// Runs `sql` as the primary's root over its socket.
        fn client(&self, sql: &str) -> Output {
            let socket: PathBuf = self.folder.path().join("sock");
            Command::new("mariadb")
                .arg("--no-defaults")
                .arg(format!("--socket={}", socket.display()))
                .args(["-uroot", "--batch", "--skip-column-names", "-e", sql])
                .output()
                .unwrap()
        }

        /// [`Primary::client`], asserting success; what it printed.
        fn sql(&self, sql: &str) -> String {
            let output = self.client(sql);
            assert!(
                output.status.success(),
                "the primary refused {sql}: {}",
                text(&output)
            );
            String::from_utf8(output.stdout).unwrap()
        }
    }

    impl Drop for Primary {
        fn drop(&mut self) {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }

    /// Makes `server` a replica of `primary` from the primary's current position, once
    /// `database` exists on the primary too (so later statements naming it apply).
    fn replicate(server: &Server, primary: &Primary, database: &str) {
        primary.sql(&format!("CREATE DATABASE IF NOT EXISTS {database};"));
        let status = primary.sql("SHOW MASTER STATUS");
        let mut fields = status.split('\t');
        let (file, position) = (fields.next().unwrap(), fields.next().unwrap());
        server.admin_sql(
            server.system_database(),
            &format!(
                "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {}, \
                 MASTER_USER = 'rt10_repl', MASTER_PASSWORD = 'rt10', \
                 MASTER_LOG_FILE = '{file}', MASTER_LOG_POS = {position}; START SLAVE;",
                primary.port
            ),
        );
        let until = Instant::now() + Duration::from_secs(30);
        while !running(server) {
            assert!(Instant::now() < until, "the replica did not start");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Whether both replication threads of `server` run (the SQL thread stops at an error).
    fn running(server: &Server) -> bool {
        let sql = "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
                   WHERE VARIABLE_NAME = 'SLAVE_RUNNING'";
        server.admin_sql(server.system_database(), sql).trim() == "ON"
    }

    /// Stops the replica and forgets its primary (the test server is shared).
    fn stop_replicating(server: &Server) {
        server.admin_sql(server.system_database(), "STOP SLAVE; RESET SLAVE ALL;");
    }

    /// The established TCP connections to `port` on this host (`/proc/net/tcp`, no session).
    fn connections_to(port: u16) -> usize {
        let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
        let local = format!(":{port:04X}");
        (table.lines().skip(1))
            .filter(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                fields.len() > 3 && fields[1].ends_with(&local) && fields[3] == "01"
            })
            .count()
    }

    /// Whether the watcher saw scoring start (three connections to `port` for half a second).
    fn wait_for_scoring(port: u16) -> bool {
        let until = Instant::now() + Duration::from_secs(30);
        let mut since: Option<Instant> = None;
        while Instant::now() < until {
            match (connections_to(port) >= 3, since) {
                (true, Some(at)) if at.elapsed() >= Duration::from_millis(500) => return true,
                (true, None) => since = Some(Instant::now()),
                (false, _) => since = None,
                _ => {}
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// The watcher on the primary: once scoring runs, the table holding the gold's answer; 2.5 s
    /// later (the wrong prediction reads it and sleeps) its drop. Whether it saw scoring.
    fn watcher(
        primary: Arc<Primary>,
        port: u16,
        database: String,
    ) -> std::thread::JoinHandle<bool> {
        std::thread::spawn(move || {
            let scoring = wait_for_scoring(port);
            primary.sql(&format!(
                "CREATE TABLE {database}.rt10_answer AS SELECT 2 AS n;"
            ));
            std::thread::sleep(Duration::from_millis(2500));
            primary.sql(&format!("DROP TABLE {database}.rt10_answer;"));
            scoring
        })
    }

    /// The gate's output on the pull request predicting item 5 as [`WRONG`] (items 0 and 3
    /// right but slow), with, when `pull`, the benchmark's server a replica of `primary` during
    /// the gate and the primary's watcher; and whether the watcher saw scoring.
    fn judge(primary: &Arc<Primary>, database: &str, pull: bool) -> (Output, Option<bool>) {
        let server = servers::mariadb();
        let dir = recorded_repository(server, database, &GOLD);
        let root = dir.path();
        let mut predictions = mid_run_predictions(server.kind);
        predictions[5] = WRONG;
        let run = Run::pull_request(server, database, hostile_predictions(root, &predictions));
        let mut watching = None;
        let judged = run.workflow_with(root, || {
            if pull {
                replicate(server, primary, database);
                watching = Some(watcher(primary.clone(), server.port, database.to_string()));
            }
        });
        let seen = watching.map(|w| w.join().unwrap());
        if pull {
            let applied = running(server);
            stop_replicating(server);
            assert!(applied, "the replica stopped during the run");
        }
        (judged, seen)
    }

    #[test]
    fn a_replica_applier_changing_the_server_mid_run_does_not_pass() {
        let _alone = GLOBALS.write().unwrap_or_else(|e| e.into_inner());
        let primary = Arc::new(Primary::start());
        let (control, _) = judge(&primary, "rt10_replica_c", false);
        super::super::redteam9::control_fails(&control);
        let (judged, seen) = judge(&primary, "rt10_replica", true);
        // Before the fix the watcher saw scoring and the run passed; now a replicating server is
        // refused at the claim, before scoring (exit 2, naming the replication status).
        if judged.status.code() == Some(0) {
            assert_eq!(seen, Some(true), "the watcher did not see scoring");
        }
        let tables = servers::mariadb().admin_sql(
            "rt10_replica",
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'rt10_answer'",
        );
        assert_eq!(tables.trim(), "0", "the table was not dropped");
        super::super::redteam9::not_passed(&judged);
    }
}
