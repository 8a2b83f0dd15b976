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

/// What the role checks of one server expect.
struct Roles<'a> {
    /// The database the checks create and use.
    database: &'a str,
    /// The read-only role's user name.
    reader: &'a str,
    /// Text of the error a write by the reader gets.
    write_denied: &'a str,
    /// A read of the credential catalog the reader must not make.
    credentials: &'a str,
    /// Text of the error a wrong password gets.
    wrong_password: &'a str,
}

/// `roles.database` (already created) gets a table of two rows: the superuser counts them, the
/// reader sums them, and the reader's write, the reader's read of the credentials and a wrong
/// password are refused.
fn check_roles(server: &Server, roles: &Roles) {
    let database = roles.database;
    let create = "CREATE TABLE t (x integer); INSERT INTO t VALUES (1), (2);";
    server.admin_sql(database, create);
    let admin = server.tcp_sql(
        ADMIN,
        &server.admin_password,
        database,
        "SELECT count(*) FROM t",
    );
    assert_eq!(stdout(&admin), "2", "{admin:?}");
    let as_reader =
        |sql: &str| server.tcp_sql(roles.reader, &server.reader_password, database, sql);
    let reader = as_reader("SELECT sum(x) FROM t");
    assert_eq!(stdout(&reader), "3", "{reader:?}");
    let write = as_reader("INSERT INTO t VALUES (3)");
    assert!(!write.status.success());
    common::assert_contains(&common::stderr(&write), &[roles.write_denied]);
    let credentials = as_reader(roles.credentials);
    assert!(
        !credentials.status.success(),
        "the reader ran {}",
        roles.credentials
    );
    let wrong = server.tcp_sql(ADMIN, "wrong-password", database, "SELECT 1");
    assert!(!wrong.status.success());
    common::assert_contains(&common::stderr(&wrong), &[roles.wrong_password]);
}

#[test]
fn postgres_answers_with_roles_and_passwords() {
    let server = servers::postgres();
    let version = server.admin_sql("postgres", "SHOW server_version_num");
    assert!(version.trim().starts_with("15"), "{version}");
    server.admin_sql("postgres", "CREATE DATABASE harness_pg; ");
    let roles = Roles {
        database: "harness_pg",
        reader: READER,
        write_denied: "permission denied",
        credentials: "SELECT rolpassword FROM pg_authid",
        wrong_password: "password authentication failed",
    };
    check_roles(server, &roles);
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
    let reader = server.grant_reader(&["harness_my"]);
    let roles = Roles {
        database: "harness_my",
        reader: &reader,
        write_denied: "denied",
        credentials: "SELECT Password FROM mysql.user",
        wrong_password: "Access denied",
    };
    check_roles(server, &roles);
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
