//! What a pull request is judged on, on a real server (tests/it/common/servers.rs): the server's
//! data are a trusted input and the role is contained by its privileges.
//!
//! - docs/ACTION.md's server workflow, read from the document and run command for command:
//!   the base commit loads its data and records the baseline with a digest per table; a pull
//!   request that empties three tables of the SQLite file it ships and turns two predictions
//!   into `... WHERE 1 = 0` does not pass (it is judged on the base commit's data), and when the
//!   pull request's own data reach the server anyway the run exits 2 naming the tables;
//! - every kind of privilege beyond reading is refused at start-up on both servers, and accepted
//!   with `allow_privileged_role: true` from the trusted config;
//! - `sqlgate load` refuses a symlink out of the workspace;
//! - no password or URL in any output.

use crate::common;
use common::repo;
use common::text;

use common::git;
use common::servers::{self, Kind, Server};
use common::trust_flow::*;
use std::process::{Command, Output};

/// The scenario through the documented workflow on `server`.
fn check_documented_workflow(server: &'static Server, database: &str) {
    fresh_database(server, database);
    let dir = repository(server.kind);
    let root = dir.path();
    let push = Run::push(server, database, root);
    let recorded = push.workflow(root);
    common::assert_exit(&recorded, 0);
    let baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("baseline.json")).unwrap())
            .unwrap();
    let digests = baseline["data_digests"]
        .as_object()
        .expect("data digests recorded");
    for (table, _, _) in SHOP {
        assert!(
            digests.keys().any(|k| k.ends_with(&format!(".{table}"))),
            "{table} has no digest: {digests:?}"
        );
    }
    git(root, &["add", "baseline.json"]);
    git(root, &["commit", "-qm", "baseline"]);
    let base = repo::head(root);

    git(root, &["checkout", "-qb", "hostile"]);
    write_shop(&root.join("bird/dev_databases/shop/shop.sqlite"), &EMPTIED);
    let mut predictions: Vec<String> = GOLD.iter().map(|s| s.to_string()).collect();
    for (index, changed) in CHANGED {
        predictions[index] = changed.to_string();
    }
    std::fs::write(root.join("preds/model.txt"), predictions.join("\n") + "\n").unwrap();
    git(
        root,
        &[
            "commit",
            "-qam",
            "empty three tables, two predictions WHERE 1 = 0",
        ],
    );

    let pull_request = Run::pull_request(server, database, base);
    let judged = pull_request.workflow(root);
    common::assert_exit(&judged, 1);

    // Had the pull request's own file reached the server (the old documented step, loading
    // from the checkout), the gate would refuse to judge, naming the emptied tables.
    let mut own_load = pull_request.command(root, Command::new("sh"));
    own_load.args([
        "-c",
        "sqlgate load --config sqlgate-load.yml --from bird/dev_databases",
    ]);
    let loaded = own_load.output().unwrap();
    common::assert_exit(&loaded, 0);
    let steps = documented_workflow();
    let gate = steps
        .iter()
        .find_map(|(_, step)| match step {
            Step::Gate(inputs) => Some(inputs),
            Step::Commands(_) => None,
        })
        .unwrap();
    let mut action = pull_request.command(root, Command::new(env!("CARGO_BIN_EXE_sqlgate")));
    action.arg("action");
    for (key, value) in gate {
        action.env(format!("INPUT_{}", key.to_uppercase()), value);
    }
    let refused = action.output().unwrap();
    let all = common::exited(&refused, 2);
    for table in EMPTIED {
        assert!(
            all.contains(&format!(".{table}` has other content")),
            "{table}: {all}"
        );
    }
    assert!(!all.contains(".stores`"), "{all}");
    assert_no_secret(server, &refused);
}

#[test]
fn postgres_documented_workflow_judges_a_pull_request_on_the_base_data() {
    check_documented_workflow(servers::postgres(), "trust_flow");
}

#[test]
fn mariadb_documented_workflow_judges_a_pull_request_on_the_base_data() {
    check_documented_workflow(servers::mariadb(), "trust_flow");
}

/// A pull-request run on a server whose base baseline records no digests (`older: false`) or
/// the digests of an older sqlgate, without structure entries (`older: true`; one without
/// settings or order entries is as old, see the unit tests of `data_digest`), is refused,
/// saying why; outside a pull request the run goes on with a note.
fn check_baseline_without_digests(server: &'static Server, database: &str, older: bool) {
    let dir = recorded_repository(server, database, &GOLD);
    let root = dir.path();
    let path = root.join("baseline.json");
    let mut baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    match older {
        true => baseline["data_digests"]
            .as_object_mut()
            .unwrap()
            .retain(|key, _| !key.ends_with(":structure")),
        false => drop(baseline.as_object_mut().unwrap().remove("data_digests")),
    }
    let expected = match older {
        true => "records data digests of an older sqlgate",
        false => "records no data digests",
    };
    std::fs::write(&path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();
    git(root, &["add", "baseline.json"]);
    git(root, &["commit", "-qm", "a baseline of an older sqlgate"]);
    let run = Run::pull_request(server, database, repo::head(root));
    let refused = run.workflow(root);
    let all = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{all}");
    assert!(all.contains(expected), "{all}");
    let mut eval = run.command(root, Command::new(env!("CARGO_BIN_EXE_sqlgate")));
    eval.args(["eval", "--config", "sqlgate.yml", "--comment", "never"])
        .env_remove("GITHUB_EVENT_NAME");
    let noted = eval.output().unwrap();
    let all = text(&noted);
    assert_eq!(noted.status.code(), Some(0), "{all}");
    assert!(
        all.contains(expected) && all.contains("sqlgate baseline update"),
        "{all}"
    );
}

#[test]
fn postgres_pull_request_needs_a_baseline_with_digests() {
    check_baseline_without_digests(servers::postgres(), "trust_nodigest", false);
}

#[test]
fn mariadb_pull_request_needs_a_baseline_with_digests() {
    check_baseline_without_digests(servers::mariadb(), "trust_nodigest", false);
}

#[test]
fn postgres_pull_request_needs_digests_of_this_sqlgate() {
    check_baseline_without_digests(servers::postgres(), "trust_olddigest", true);
}

#[test]
fn mariadb_pull_request_needs_digests_of_this_sqlgate() {
    check_baseline_without_digests(servers::mariadb(), "trust_olddigest", true);
}

/// `sqlgate load` refuses a `--from` folder or a database file that a symlink leads out of the
/// workspace, before connecting, naming the path.
#[test]
fn load_refuses_a_symlink_out_of_the_workspace() {
    let server = servers::postgres();
    let outside = tempfile::tempdir().unwrap();
    write_shop(&outside.path().join("shop/shop.sqlite"), &[]);
    let dir = repository(Kind::Postgres);
    let root = dir.path();
    let folder = root.join("bird/dev_databases");
    let linked_file = root.join("linked_file");
    std::fs::create_dir_all(linked_file.join("shop")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("shop/shop.sqlite"),
        linked_file.join("shop/shop.sqlite"),
    )
    .unwrap();
    let linked_folder = root.join("linked_folder");
    std::fs::create_dir(&linked_folder).unwrap();
    std::os::unix::fs::symlink(outside.path().join("shop"), linked_folder.join("shop")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linked_root")).unwrap();
    assert!(folder.exists());
    let run = Run {
        server,
        database: "trust_symlink",
        event: Event::Push,
        base: String::new(),
    };
    for from in ["linked_file", "linked_folder", "linked_root"] {
        let mut load = run.command(root, Command::new(env!("CARGO_BIN_EXE_sqlgate")));
        load.args(["load", "--config", "sqlgate-load.yml", "--from", from]);
        let output = load.output().unwrap();
        let all = text(&output);
        assert_eq!(output.status.code(), Some(2), "{from}: {all}");
        assert!(all.contains("outside the workspace"), "{from}: {all}");
        assert!(all.contains(from), "{from}: {all}");
        assert_no_secret(server, &output);
    }
}

/// The database every role test reads: `shop` loaded by the admin, readable by every role,
/// made once per server.
fn roles_database(server: &'static Server) -> &'static str {
    // Each test has a server of its own, lent to it for the test: the ports set up so far.
    static READY: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut ready = READY.lock().unwrap_or_else(|e| e.into_inner());
    if !ready.contains(&server.port) {
        ready.push(server.port);
        fresh_database(server, "trust_roles");
        let ddl: String = SHOP
            .iter()
            .map(|(table, columns, rows)| {
                let columns = columns.replace("REAL", "double precision");
                let values: Vec<String> = rows.iter().map(|r| format!("({r})")).collect();
                format!(
                    "CREATE TABLE {table} ({columns}); INSERT INTO {table} VALUES {};\n",
                    values.join(", ")
                )
            })
            .collect();
        server.admin_sql("trust_roles", &ddl);
        // A serial column's sequence, which the documented grant (`SELECT ON ALL TABLES`)
        // does not cover, and one in another schema; on MariaDB another database.
        let more = match server.kind {
            Kind::Postgres => {
                "CREATE SCHEMA elsewhere; CREATE TABLE elsewhere.notes (x integer); \
                 CREATE TABLE tickets (id serial PRIMARY KEY, note text); \
                 CREATE SEQUENCE elsewhere.answers;"
            }
            Kind::Mariadb => {
                "DROP DATABASE IF EXISTS trust_answers; CREATE DATABASE trust_answers; \
                 CREATE TABLE trust_answers.t (x integer);"
            }
        };
        server.admin_sql("trust_roles", more);
    }
    "trust_roles"
}

/// A new login role `name` (each test binary has its own servers) that reads the role test
/// database and holds what `grants` gives it; its URL and password.
fn role_url(server: &'static Server, name: &str, grants: &str) -> (String, String) {
    let database = roles_database(server);
    let password = format!("Pw{}9x", name.chars().rev().collect::<String>());
    // Concurrent grants of one role (`pg_signal_backend` to two roles) fail on PostgreSQL
    // with "tuple concurrently updated": the tests create their roles one at a time.
    static CREATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = CREATING.lock().unwrap_or_else(|e| e.into_inner());
    match server.kind {
        Kind::Postgres => {
            server.admin_sql(
                database,
                &format!(
                    "CREATE ROLE {name} LOGIN PASSWORD '{password}';\n\
                     GRANT SELECT ON ALL TABLES IN SCHEMA public TO {name};\n{grants}"
                ),
            );
        }
        Kind::Mariadb => {
            server.admin_sql(
                "mysql",
                &format!(
                    "CREATE USER '{name}'@'%' IDENTIFIED BY '{password}';\n\
                     GRANT SELECT, LOCK TABLES ON {database}.* TO '{name}'@'%';\n{grants}"
                ),
            );
        }
    }
    (server.url(name, &password, database), password)
}

/// One run at a time on the role tests' shared database: a run refuses to start while a
/// session of a role that can write the tables (another test's privileged role) is connected
/// to its database.
static ON_SHARED_DATABASE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `sqlgate eval` of the role test benchmark as `url`, with `allow_privileged_role` as given
/// (the config is the trusted one: no pull request here).
fn eval_as(server: &Server, url: &str, allow: bool) -> Output {
    let _alone = ON_SHARED_DATABASE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let gold: String = GOLD.iter().map(|sql| format!("{sql}\tshop\n")).collect();
    std::fs::write(root.join("gold.sql"), gold).unwrap();
    std::fs::write(root.join("tables.json"), TABLES_JSON).unwrap();
    std::fs::write(root.join("model.txt"), GOLD.join("\n") + "\n").unwrap();
    std::fs::write(
        root.join("sqlgate.yml"),
        format!(
            "dataset: {{ gold: gold.sql, tables: tables.json, difficulty: none, \
             engine: {{ kind: {}, url_env: ROLE_URL, allow_privileged_role: {allow} }} }}\n\
             predictions: [{{ name: model, path: model.txt }}]\nmetrics: [ex]\n\
             compare: {{ profile: bird }}\nexecution: {{ timeout_ms: 5000, threads: 1 }}\n",
            engine_kind(server.kind)
        ),
    )
    .unwrap();
    common::sqlgate_command(&repo::EVAL)
        .current_dir(root)
        .env("ROLE_URL", url)
        .output()
        .unwrap()
}

/// A role holding `grants` is refused at start-up (exit 2, the message containing `expected`
/// and no secret) and runs with `allow_privileged_role: true`, warning with the same reason.
fn check_refused(server: &'static Server, name: &str, grants: &str, expected: &str) {
    let (url, password) = role_url(server, name, grants);
    let refused = eval_as(server, &url, false);
    let all = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{name}: {all}");
    assert!(all.contains("is privileged"), "{name}: {all}");
    assert!(
        all.contains(expected),
        "{name}: expected `{expected}` in {all}"
    );
    assert!(!all.contains(&password), "{name}: {all}");
    assert_no_secret(server, &refused);
    let allowed = eval_as(server, &url, true);
    let all = text(&allowed);
    assert_eq!(allowed.status.code(), Some(0), "{name}: {all}");
    assert!(all.contains(expected), "{name}: {all}");
    assert!(!all.contains(&password), "{name}: {all}");
}

#[test]
fn the_documented_read_only_roles_are_accepted() {
    for server in [servers::postgres(), servers::mariadb()] {
        let (url, _) = role_url(server, "trust_plain", "");
        let output = eval_as(server, &url, false);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{:?}: {}",
            server.kind,
            text(&output)
        );
        assert!(!text(&output).contains("privileged"), "{}", text(&output));
    }
}

/// One test per kind of privilege: `(test, server, role, grants, what the refusal names)`.
macro_rules! refused {
    ($($test:ident: $server:ident, $role:literal, $grants:literal, $expected:literal;)*) => {$(
        #[test]
        fn $test() {
            check_refused(servers::$server(), $role, $grants, $expected);
        }
    )*};
}

refused! {
    postgres_superuser_is_refused: postgres, "trust_super", "ALTER ROLE trust_super SUPERUSER;", "is a superuser";
    postgres_signalling_other_backends_is_refused: postgres, "trust_signal", "GRANT pg_signal_backend TO trust_signal;", "pg_signal_backend";
    postgres_membership_is_checked_transitively: postgres, "trust_nested", "DROP ROLE IF EXISTS trust_group; CREATE ROLE trust_group; GRANT pg_signal_backend TO trust_group; GRANT trust_group TO trust_nested;", "pg_signal_backend";
    postgres_another_login_role_is_refused: postgres, "trust_other", "GRANT sqlgate_reader TO trust_other;", "login role `sqlgate_reader`";
    postgres_reading_all_data_is_refused: postgres, "trust_readall", "GRANT pg_read_all_data TO trust_readall;", "pg_read_all_data";
    postgres_reading_pg_authid_is_refused: postgres, "trust_authid", "GRANT SELECT ON pg_authid TO trust_authid;", "pg_catalog.pg_authid";
    postgres_writing_outside_the_search_path_is_refused: postgres, "trust_write", "GRANT USAGE ON SCHEMA elsewhere TO trust_write; GRANT INSERT ON elsewhere.notes TO trust_write;", "elsewhere.notes";
    postgres_column_writes_are_refused: postgres, "trust_column", "GRANT UPDATE (name) ON customers TO trust_column;", "public.customers";
    postgres_writing_all_data_is_refused: postgres, "trust_writeall", "GRANT pg_write_all_data TO trust_writeall;", "pg_write_all_data";
    postgres_create_on_the_database_is_refused: postgres, "trust_createdb_priv", "GRANT CREATE ON DATABASE trust_roles TO trust_createdb_priv;", "can CREATE in these databases: trust_roles";
    postgres_create_on_a_schema_is_refused: postgres, "trust_schema", "GRANT CREATE ON SCHEMA public TO trust_schema;", "can CREATE in these schemas: public";
    postgres_createrole_is_refused: postgres, "trust_createrole", "ALTER ROLE trust_createrole CREATEROLE;", "CREATEROLE";
    postgres_createdb_is_refused: postgres, "trust_createdb", "ALTER ROLE trust_createdb CREATEDB;", "CREATEDB";
    postgres_reading_server_files_is_refused: postgres, "trust_files", "GRANT pg_read_server_files TO trust_files;", "pg_read_server_files";
    postgres_running_server_programs_is_refused: postgres, "trust_program", "GRANT pg_execute_server_program TO trust_program;", "pg_execute_server_program";
    postgres_execute_on_pg_read_file_is_refused: postgres, "trust_readfile", "GRANT EXECUTE ON FUNCTION pg_read_file(text) TO trust_readfile;", "pg_read_file";
    postgres_monitoring_is_refused: postgres, "trust_monitor", "GRANT pg_monitor TO trust_monitor;", "pg_monitor";
    mariadb_global_select_is_refused: mariadb, "trust_global", "GRANT SELECT ON *.* TO 'trust_global'@'%';", "SELECT ON *.*";
    mariadb_reading_mysql_user_is_refused: mariadb, "trust_users", "GRANT SELECT ON mysql.user TO 'trust_users'@'%';", "mysql.user";
    mariadb_writing_a_database_is_refused: mariadb, "trust_insert", "GRANT INSERT ON trust_roles.* TO 'trust_insert'@'%';", "INSERT ON `trust_roles`.*";
    mariadb_writing_another_database_is_refused: mariadb, "trust_elsewhere", "GRANT DELETE ON other_db.* TO 'trust_elsewhere'@'%';", "DELETE ON `other_db`.*";
    mariadb_ddl_is_refused: mariadb, "trust_ddl", "GRANT CREATE, DROP ON trust_roles.* TO 'trust_ddl'@'%';", "CREATE, DROP";
    mariadb_file_is_refused: mariadb, "trust_file", "GRANT FILE ON *.* TO 'trust_file'@'%';", "FILE ON *.*";
    mariadb_process_is_refused: mariadb, "trust_process", "GRANT PROCESS ON *.* TO 'trust_process'@'%';", "PROCESS ON *.*";
    mariadb_super_is_refused: mariadb, "trust_superm", "GRANT SUPER ON *.* TO 'trust_superm'@'%';", "SUPER";
    mariadb_connection_admin_is_refused: mariadb, "trust_conn", "GRANT CONNECTION ADMIN ON *.* TO 'trust_conn'@'%';", "CONNECTION ADMIN";
    mariadb_shutdown_and_reload_are_refused: mariadb, "trust_shutdown", "GRANT SHUTDOWN, RELOAD ON *.* TO 'trust_shutdown'@'%';", "RELOAD, SHUTDOWN";
    postgres_using_a_sequence_is_refused: postgres, "trust_seq", "GRANT USAGE ON SEQUENCE tickets_id_seq TO trust_seq;", "may use these sequences (USAGE, UPDATE: `nextval` or `setval` move them): public.tickets_id_seq";
    postgres_using_a_sequence_in_another_schema_is_refused: postgres, "trust_sequse", "GRANT USAGE ON SCHEMA elsewhere TO trust_sequse; GRANT USAGE ON SEQUENCE elsewhere.answers TO trust_sequse;", "elsewhere.answers";
    mariadb_reading_another_database_is_refused: mariadb, "trust_otherdb", "GRANT SELECT ON trust_answers.* TO 'trust_otherdb'@'%';", "holds privileges on databases the run does not use: `trust_answers`";
    mariadb_reading_another_databases_column_is_refused: mariadb, "trust_othercol", "GRANT SELECT (x) ON trust_answers.t TO 'trust_othercol'@'%';", "`trust_answers`";
    mariadb_a_pattern_reaching_another_database_is_refused: mariadb, "trust_otherpat", "GRANT SELECT ON `trust\\_answer%`.* TO 'trust_otherpat'@'%';", "`trust_answers`";
    mariadb_a_role_reading_another_database_is_refused: mariadb, "trust_otherrole", "DROP ROLE IF EXISTS trust_answers_role; CREATE ROLE trust_answers_role; GRANT SELECT ON trust_answers.t TO trust_answers_role; GRANT trust_answers_role TO 'trust_otherrole'@'%';", "the user's role `trust_answers_role` holds privileges on databases the run does not use: `trust_answers`";
    mariadb_create_user_is_refused: mariadb, "trust_cuser", "GRANT CREATE USER ON *.* TO 'trust_cuser'@'%';", "CREATE USER";
    mariadb_grant_option_is_refused: mariadb, "trust_grantopt", "GRANT SELECT ON trust_roles.* TO 'trust_grantopt'@'%' WITH GRANT OPTION;", "GRANT OPTION";
    mariadb_role_grants_are_checked_transitively: mariadb, "trust_rolem", "DROP ROLE IF EXISTS trust_inner; DROP ROLE IF EXISTS trust_outer; CREATE ROLE trust_inner; GRANT UPDATE ON trust_roles.* TO trust_inner; CREATE ROLE trust_outer; GRANT trust_inner TO trust_outer; GRANT trust_outer TO 'trust_rolem'@'%';", "UPDATE ON `trust_roles`.*";
}
