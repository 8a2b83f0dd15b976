//! The test server harness itself (tests/it/common/servers.rs): real PostgreSQL 15 and MariaDB
//! 10.11 start as an unprivileged user, answer over TCP with the superuser's and the read-only
//! role's passwords, refuse a wrong password, refuse the read-only role's writes and its reads
//! of the credential catalogs, a server owned
//! by a test is stopped and its folder removed when it is dropped, and the shared server of a
//! test process that panics is stopped and removed when the process ends.

use crate::common;

use common::servers::{self, Kind, Server, ADMIN, READER};
use std::net::TcpStream;

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

#[test]
fn postgres_answers_with_roles_and_passwords() {
    let server = servers::postgres();
    let version = server.admin_sql("postgres", "SHOW server_version_num");
    assert!(version.trim().starts_with("15"), "{version}");
    server.admin_sql("postgres", "CREATE DATABASE harness_pg; ");
    server.admin_sql(
        "harness_pg",
        "CREATE TABLE t (x integer); INSERT INTO t VALUES (1), (2);",
    );

    let admin = server.tcp_sql(
        ADMIN,
        &server.admin_password,
        "harness_pg",
        "SELECT count(*) FROM t",
    );
    assert_eq!(stdout(&admin), "2", "{admin:?}");
    let reader = server.tcp_sql(
        READER,
        &server.reader_password,
        "harness_pg",
        "SELECT sum(x) FROM t",
    );
    assert_eq!(stdout(&reader), "3", "{reader:?}");

    let write = server.tcp_sql(
        READER,
        &server.reader_password,
        "harness_pg",
        "INSERT INTO t VALUES (3)",
    );
    assert!(!write.status.success());
    assert!(
        String::from_utf8_lossy(&write.stderr).contains("permission denied"),
        "{write:?}"
    );
    let verifiers = server.tcp_sql(
        READER,
        &server.reader_password,
        "harness_pg",
        "SELECT rolpassword FROM pg_authid",
    );
    assert!(!verifiers.status.success(), "the reader reads pg_authid");
    let wrong = server.tcp_sql(ADMIN, "wrong-password", "harness_pg", "SELECT 1");
    assert!(!wrong.status.success());
    common::assert_contains(&common::stderr(&wrong), &["password authentication failed"]);

    let owner = server.admin_sql(
        "postgres",
        "SELECT pg_catalog.pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'harness_pg'",
    );
    assert_eq!(owner.trim(), ADMIN);
}

#[test]
fn mariadb_answers_with_roles_and_passwords() {
    let server = servers::mariadb();
    let version = server.admin_sql("mysql", "SELECT VERSION()");
    assert!(version.starts_with("10.11."), "{version}");
    server.admin_sql("mysql", "CREATE DATABASE harness_my");
    server.admin_sql(
        "harness_my",
        "CREATE TABLE t (x integer); INSERT INTO t VALUES (1), (2);",
    );
    let reader_user = server.grant_reader(&["harness_my"]);

    let admin = server.tcp_sql(
        ADMIN,
        &server.admin_password,
        "harness_my",
        "SELECT count(*) FROM t",
    );
    assert_eq!(stdout(&admin), "2", "{admin:?}");
    let reader = server.tcp_sql(
        &reader_user,
        &server.reader_password,
        "harness_my",
        "SELECT sum(x) FROM t",
    );
    assert_eq!(stdout(&reader), "3", "{reader:?}");

    let write = server.tcp_sql(
        &reader_user,
        &server.reader_password,
        "harness_my",
        "INSERT INTO t VALUES (3)",
    );
    assert!(!write.status.success());
    assert!(
        String::from_utf8_lossy(&write.stderr).contains("denied"),
        "{write:?}"
    );
    let hashes = server.tcp_sql(
        &reader_user,
        &server.reader_password,
        "harness_my",
        "SELECT Password FROM mysql.user",
    );
    assert!(!hashes.status.success(), "the reader reads mysql.user");
    let wrong = server.tcp_sql(ADMIN, "wrong-password", "harness_my", "SELECT 1");
    assert!(!wrong.status.success());
    common::assert_contains(&common::stderr(&wrong), &["Access denied"]);
}

#[test]
fn servers_run_unprivileged_and_stop_on_drop() {
    for kind in [Kind::Postgres, Kind::Mariadb] {
        let server = Server::start(kind);
        let port = server.port;
        let user = match kind {
            Kind::Postgres => server.admin_sql("postgres", "SELECT 1"),
            Kind::Mariadb => server.admin_sql("mysql", "SELECT 1"),
        };
        assert_eq!(user.trim(), "1");
        let folder = server.folder().to_path_buf();
        let owner = std::fs::metadata(folder.join("data")).map(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid()
        });
        assert_ne!(
            owner.expect("data folder"),
            0,
            "{kind:?} data must not belong to root"
        );
        assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());
        drop(server);
        assert!(!folder.exists(), "{kind:?} folder left behind");
        assert!(
            TcpStream::connect(("127.0.0.1", port)).is_err(),
            "{kind:?} still listens"
        );
    }
}

/// Set in the child run of [`a_panicking_test_leaves_no_server_behind`].
const PANIC_PROBE: &str = "SQLGATE_SERVERS_PANIC_PROBE";

#[test]
fn a_panicking_test_leaves_no_server_behind() {
    if let Some(report) = std::env::var_os(PANIC_PROBE) {
        let server = servers::postgres();
        let line = format!("{}\n{}", server.folder().display(), server.port);
        std::fs::write(report, line).unwrap();
        panic!("the probe panics while its shared server runs");
    }
    let report = tempfile::NamedTempFile::new().unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "servers::a_panicking_test_leaves_no_server_behind",
            "--exact",
        ])
        .env(PANIC_PROBE, report.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the probe must fail");
    let written = std::fs::read_to_string(report.path()).unwrap();
    let (folder, port) = written.split_once('\n').unwrap();
    let port: u16 = port.parse().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::path::Path::new(folder).exists() || TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the panicking process left its server behind ({folder}, port {port})"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
