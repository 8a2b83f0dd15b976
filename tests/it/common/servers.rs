//! Real, throwaway database servers for the tests: PostgreSQL 15 and MariaDB 10.11 from Debian's
//! packages, each started in its own temporary folder on a free loopback port, as the
//! unprivileged user `sqlgate-db` when the tests run as root (both servers refuse root). No mocks.
//! Before the first server of a test process starts, `.ci/install-servers` runs: it installs the
//! packages and creates the user when they are absent (as root; elsewhere it says what is
//! missing) and only checks, in well under a second, when they are there. So `cargo test` needs
//! no set-up step on a fresh machine.
//!
//! [`postgres`] and [`mariadb`] lend each test a server of that kind for the whole test: sqlgate
//! needs the server to itself while it runs (any other session connected to it fails the run,
//! docs/SECURITY.md), so two tests never share one at once. A test's first call takes an idle
//! server of the kind (or starts one), every later call on the test's thread returns the same
//! one, and the server goes back to the idle ones when the test's thread ends; so a test
//! process starts about as many servers of a kind as tests run at once, and a test's helper
//! threads use the server the test passes them. Since no two tests hold a server at once, tests
//! on different servers may create databases of the same names (the db_ids `shop`, `club`,
//! `zoo` of the `per_db_id` layout) side by side. A guardian shell owns each server: it starts
//! it, and when its standard input closes
//! (the [`Server`] is dropped, or the test process ends in any way, panics and aborts included,
//! since statics are never dropped) it stops the server and removes the folder.
//!
//! Each server has a superuser (`sqlgate_admin`) and a read-only role (`sqlgate_reader`), both
//! with random passwords, reached over TCP on 127.0.0.1. The reader holds exactly what
//! docs/SECURITY.md tells a deployer to grant, which sqlgate's start-up check accepts: on
//! PostgreSQL `SELECT` on each table the superuser creates (default privileges set in
//! `template1`, so every database created later inherits them), on MariaDB `SELECT` on the
//! run's benchmark databases only, as a user of their own ([`Server::grant_reader`]), never
//! `pg_read_all_data` or `SELECT ON *.*`.
//!
//! [`postgres_tls`] and [`mariadb_tls`] start servers that also accept TLS, with a throwaway CA
//! and a server certificate for `IP:127.0.0.1` only (made by the `openssl` command in the
//! server's folder): [`Server::ca_file`] verifies it, [`Server::wrong_ca_file`] (another CA)
//! does not, and the host name `localhost` does not match it.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// The unprivileged system user the servers run as when the tests run as root.
pub const DB_USER: &str = "sqlgate-db";
/// The superuser's name on both servers.
pub const ADMIN: &str = "sqlgate_admin";
/// The read-only role's name on both servers.
pub const READER: &str = "sqlgate_reader";

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
const START_TIMEOUT: Duration = Duration::from_secs(60);
const START_ATTEMPTS: usize = 3;

/// Which server a [`Server`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// PostgreSQL 15.
    Postgres,
    /// MariaDB 10.11 (MySQL's protocol and dialect).
    Mariadb,
}

/// One running server; dropping it stops the server and removes its folder.
pub struct Server {
    /// Which server this is.
    pub kind: Kind,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
    /// The superuser's password.
    pub admin_password: String,
    /// The read-only role's password.
    pub reader_password: String,
    folder: PathBuf,
    tls: bool,
    guardian: Child,
    guardian_input: Option<ChildStdin>,
}

/// The PostgreSQL server lent to the calling test.
pub fn postgres() -> &'static Server {
    lent(Kind::Postgres, false)
}

/// The MariaDB server lent to the calling test.
pub fn mariadb() -> &'static Server {
    lent(Kind::Mariadb, false)
}

/// The PostgreSQL server with TLS lent to the calling test.
pub fn postgres_tls() -> &'static Server {
    lent(Kind::Postgres, true)
}

/// The MariaDB server with TLS lent to the calling test.
pub fn mariadb_tls() -> &'static Server {
    lent(Kind::Mariadb, true)
}

/// Servers no test holds, by kind and TLS; they live as long as the test process.
static IDLE: Mutex<Vec<(Kind, bool, &'static Server)>> = Mutex::new(Vec::new());

/// The servers lent to one test's thread, given back to [`IDLE`] when the thread ends.
#[derive(Default)]
struct Lent(Vec<(Kind, bool, &'static Server)>);

impl Drop for Lent {
    fn drop(&mut self) {
        let mut idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner);
        idle.append(&mut self.0);
    }
}

thread_local! {
    static LENT: std::cell::RefCell<Lent> = std::cell::RefCell::default();
}

/// The server of `kind` (with TLS when `tls`) lent to the calling thread: the one it already
/// holds, an idle one, or a new one.
fn lent(kind: Kind, tls: bool) -> &'static Server {
    LENT.with(|lent| {
        let mut lent = lent.borrow_mut();
        let same = |(k, t, _): &&(Kind, bool, &'static Server)| *k == kind && *t == tls;
        if let Some((_, _, server)) = lent.0.iter().find(same) {
            return *server;
        }
        let idle = {
            let mut idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner);
            let position = idle.iter().position(|entry| same(&entry));
            position.map(|position| idle.swap_remove(position).2)
        };
        let server = match idle {
            Some(server) => {
                server.end_other_sessions();
                server
            }
            None => Box::leak(Box::new(Server::start_with(kind, tls))),
        };
        lent.0.push((kind, tls, server));
        server
    })
}

impl Server {
    /// Starts a new server of `kind` owned by the caller (stopped on drop); most tests share
    /// [`postgres`] or [`mariadb`] instead.
    pub fn start(kind: Kind) -> Server {
        Server::start_with(kind, false)
    }

    /// Starts a new server of `kind`, accepting TLS with a throwaway certificate when `tls`.
    pub fn start_with(kind: Kind, tls: bool) -> Server {
        if let Err(failure) = installed() {
            panic!("the database servers are not installed: {failure}");
        }
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS {
            match Server::try_start(kind, tls) {
                Ok(server) => return server,
                Err(failure) => failures.push(failure),
            }
        }
        panic!(
            "could not start {kind:?} ({START_ATTEMPTS} attempts):\n{}",
            failures.join("\n---\n")
        );
    }

    /// The server's temporary folder (data, socket, log), removed when the server stops.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The CA file that signed the server's certificate (a server started with TLS).
    pub fn ca_file(&self) -> PathBuf {
        assert!(self.tls, "the server was started without TLS");
        self.folder.join("tls/ca.pem")
    }

    /// A CA file that did not sign the server's certificate.
    pub fn wrong_ca_file(&self) -> PathBuf {
        assert!(self.tls, "the server was started without TLS");
        self.folder.join("tls/wrong-ca.pem")
    }

    /// The server's own database, which the superuser reaches when no other exists yet.
    pub fn system_database(&self) -> &'static str {
        match self.kind {
            Kind::Postgres => "postgres",
            Kind::Mariadb => "mysql",
        }
    }

    /// Drops `database` if it exists and creates it afresh as the superuser, then runs `ddl` in it.
    pub fn recreate_database(&self, database: &str, ddl: &str) {
        self.admin_sql(
            self.system_database(),
            &format!("DROP DATABASE IF EXISTS {database}; CREATE DATABASE {database};"),
        );
        if !ddl.is_empty() {
            self.admin_sql(database, ddl);
        }
    }

    /// The superuser's URL for `database`.
    pub fn admin_url(&self, database: &str) -> String {
        self.url(ADMIN, &self.admin_password, database)
    }

    /// The read-only role's URL for `database`, which it may read (see [`Server::grant_reader`]).
    pub fn reader_url(&self, database: &str) -> String {
        self.reader_url_for(database, &[database])
    }

    /// The read-only role's URL on `url_database` for a run that reads `databases`.
    pub fn reader_url_for(&self, url_database: &str, databases: &[&str]) -> String {
        let reader = self.grant_reader(databases);
        self.url(&reader, &self.reader_password, url_database)
    }

    /// The read-only role for a run that reads `databases`, as SECURITY.md's deployment makes
    /// it. On PostgreSQL the one reader, to which default privileges grant `SELECT` table by
    /// table. On MariaDB a user of its own for these databases (`sqlgate_reader_<names>`,
    /// created on first use with the reader's password) holding `SELECT` on each of them
    /// (which need not exist yet) and nothing else: sqlgate refuses a user holding privileges on
    /// a database its run does not use, and the tests share one server. Never on the server's
    /// own `mysql` schema (its `user` table holds password hashes).
    pub fn grant_reader(&self, databases: &[&str]) -> String {
        let databases: Vec<&str> = databases
            .iter()
            .copied()
            .filter(|d| !d.is_empty() && *d != "mysql")
            .collect();
        if self.kind == Kind::Postgres || databases.is_empty() {
            return READER.to_string();
        }
        let name = format!("{READER}_{}", databases.join("_"));
        let grants: String = databases
            .iter()
            .map(|d| {
                format!(
                    "GRANT SELECT, LOCK TABLES ON `{}`.* TO '{name}'@'%';",
                    d.replace('`', "``")
                )
            })
            .collect();
        self.admin_sql(
            "mysql",
            &format!(
                "CREATE USER IF NOT EXISTS '{name}'@'%' IDENTIFIED BY '{}'; {grants}",
                self.reader_password
            ),
        );
        name
    }

    /// Ends every client session a previous test left on the server (a client it spawned, a
    /// session sqlgate abandoned) and waits until they are gone, so that the next test's runs
    /// have the server to themselves.
    pub fn end_other_sessions(&self) {
        let (others, end) = match self.kind {
            Kind::Postgres => (
                "SELECT pid FROM pg_stat_activity \
                 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
                "SELECT pg_terminate_backend({id});",
            ),
            Kind::Mariadb => (
                "SELECT id FROM information_schema.processlist \
                 WHERE id <> CONNECTION_ID() AND command <> 'Daemon'",
                "KILL {id};",
            ),
        };
        let until = Instant::now() + START_TIMEOUT;
        loop {
            let listed = self.admin_sql(self.system_database(), others);
            if listed.trim().is_empty() {
                return;
            }
            assert!(
                Instant::now() < until,
                "sessions left on the server: {listed}"
            );
            for id in listed.split_whitespace() {
                // A session that ended meanwhile is no longer there to end.
                let _ = self.client(self.system_database(), &end.replace("{id}", id));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A URL for `user` with `password` on `database` (for tests of wrong credentials).
    pub fn url(&self, user: &str, password: &str, database: &str) -> String {
        let scheme = match self.kind {
            Kind::Postgres => "postgresql",
            Kind::Mariadb => "mysql",
        };
        format!(
            "{scheme}://{user}:{password}@127.0.0.1:{}/{database}",
            self.port
        )
    }

    /// Runs `sql` (one or more statements) as the superuser on `database` through the server's
    /// own command-line client over its socket, panicking with the client's message on failure;
    /// returns what the client printed (tab-separated rows, no header).
    pub fn admin_sql(&self, database: &str, sql: &str) -> String {
        let output = self.client(database, sql);
        assert!(
            output.status.success(),
            "{:?} rejected {sql:?}: {}",
            self.kind,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("the client prints UTF-8")
    }

    /// Runs `sql` on `database` as `user` with `password` over TCP (what a URL reaches), through
    /// the server's command-line client; returns its output, success or not.
    pub fn tcp_sql(&self, user: &str, password: &str, database: &str, sql: &str) -> Output {
        let mut command = match self.kind {
            Kind::Postgres => {
                let mut command = Command::new(Path::new(PG_BIN).join("psql"));
                command
                    .args(["-v", "ON_ERROR_STOP=1", "-X", "-q", "-A", "-t", "-F", "\t"])
                    .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
                    .args(["-U", user, "-d", database, "-w"])
                    .env("PGPASSWORD", password);
                command
            }
            Kind::Mariadb => {
                let mut command = Command::new("mariadb");
                command
                    .arg("--no-defaults")
                    .args(["-h", "127.0.0.1", "-P", &self.port.to_string(), "-u", user])
                    .args(["--batch", "--skip-column-names", "--protocol=TCP"])
                    .arg(format!("--database={database}"))
                    .env("MYSQL_PWD", password);
                command
            }
        };
        run_with_input(&mut command, sql)
    }

    /// Runs `sql` as the superuser on `database` as [`Server::admin_sql`] does; returns the
    /// client's output, success or not.
    pub fn client(&self, database: &str, sql: &str) -> Output {
        let socket = self.folder.join("socket");
        let mut command = match self.kind {
            Kind::Postgres => {
                let mut command = Command::new(Path::new(PG_BIN).join("psql"));
                command
                    .arg("--no-psqlrc")
                    .args(["-v", "ON_ERROR_STOP=1", "-X", "-q", "-A", "-t", "-F", "\t"])
                    .arg("-h")
                    .arg(&socket)
                    .args(["-p", &self.port.to_string(), "-U", ADMIN, "-d", database]);
                command
            }
            Kind::Mariadb => {
                let mut command = Command::new("mariadb");
                command
                    .arg("--no-defaults")
                    .arg(format!("--socket={}", socket.join("mysql.sock").display()))
                    .args(["-u", "root", "--batch", "--skip-column-names"])
                    .arg(format!("--database={database}"));
                command
            }
        };
        run_with_input(&mut command, sql)
    }

    fn try_start(kind: Kind, tls: bool) -> Result<Server, String> {
        let folder = tempfile::Builder::new()
            .prefix("sqlgate-servers-")
            .tempdir()
            .map_err(|error| format!("temporary folder: {error}"))?
            .keep();
        let port = free_port()?;
        let admin_password = random_password();
        let reader_password = random_password();
        let start = || -> Result<Child, String> {
            std::fs::create_dir(folder.join("socket")).map_err(|error| error.to_string())?;
            std::fs::create_dir(folder.join("tmp")).map_err(|error| error.to_string())?;
            if tls {
                make_certificates(&folder.join("tls"))?;
            }
            give_to_db_user(&folder)?;
            initialise(kind, &folder, &admin_password)?;
            spawn_guardian(kind, &folder, port, tls)
        };
        let mut guardian = match start() {
            Ok(guardian) => guardian,
            Err(failure) => {
                let _ = std::fs::remove_dir_all(&folder);
                return Err(failure);
            }
        };
        let guardian_input = guardian.stdin.take();
        let server = Server {
            kind,
            port,
            admin_password,
            reader_password,
            folder,
            tls,
            guardian,
            guardian_input,
        };
        server.wait_until_ready()?;
        server.create_roles();
        Ok(server)
    }

    fn wait_until_ready(&self) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        let database = match self.kind {
            Kind::Postgres => "postgres",
            Kind::Mariadb => "mysql",
        };
        loop {
            let output = self.client(database, "SELECT 1");
            if output.status.success() {
                return Ok(());
            }
            if Instant::now() > deadline || !self.server_alive() {
                let log =
                    std::fs::read_to_string(self.folder.join("server.log")).unwrap_or_default();
                return Err(format!(
                    "{:?} on port {} not ready after {START_TIMEOUT:?}: {}\nserver log:\n{log}",
                    self.kind,
                    self.port,
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether the server process the guardian started still runs (not exited, not a zombie).
    fn server_alive(&self) -> bool {
        let Ok(pid) = std::fs::read_to_string(self.folder.join("server.pid")) else {
            return true;
        };
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
        let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
        matches!(state, Some(Some(state)) if state != 'Z')
    }

    fn create_roles(&self) {
        match self.kind {
            Kind::Postgres => {
                self.admin_sql(
                    "postgres",
                    &format!(
                        "CREATE ROLE {READER} LOGIN PASSWORD '{}';",
                        self.reader_password
                    ),
                );
                let default_select = format!(
                    "ALTER DEFAULT PRIVILEGES FOR ROLE {ADMIN} GRANT SELECT ON TABLES TO {READER}; \
                     ALTER DEFAULT PRIVILEGES FOR ROLE {ADMIN} GRANT SELECT ON SEQUENCES TO {READER};"
                );
                for database in ["template1", "postgres"] {
                    self.admin_sql(database, &default_select);
                }
            }
            Kind::Mariadb => {
                self.admin_sql(
                    "mysql",
                    &format!(
                        "CREATE USER '{ADMIN}'@'%' IDENTIFIED BY '{}';\n\
                         GRANT ALL PRIVILEGES ON *.* TO '{ADMIN}'@'%' WITH GRANT OPTION;\n\
                         CREATE USER '{READER}'@'%' IDENTIFIED BY '{}';",
                        self.admin_password, self.reader_password
                    ),
                );
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.guardian_input.take());
        let _ = self.guardian.wait();
    }
}

/// Runs `command` with `input` on its standard input and collects its output.
fn run_with_input(command: &mut Command, input: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("{:?} runs: {error}", command.get_program()));
    let written = child
        .stdin
        .take()
        .expect("piped")
        .write_all(input.as_bytes());
    // A client that gives up before reading (the server not accepting connections yet) closes
    // its input: its exit status and output say why, and readiness polling retries.
    if let Err(error) = written {
        assert_eq!(
            error.kind(),
            std::io::ErrorKind::BrokenPipe,
            "the client reads its input: {error}"
        );
    }
    child.wait_with_output().expect("the client ends")
}

/// A port on 127.0.0.1 that was free a moment ago (a clash with another process is retried).
pub(crate) fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|error| format!("free port: {error}"))?;
    let port = listener
        .local_addr()
        .map_err(|error| format!("free port: {error}"))?
        .port();
    Ok(port)
}

fn random_password() -> String {
    (0..24).map(|_| fastrand::alphanumeric()).collect()
}

/// Runs `.ci/install-servers` once per test process (the packages and the user the servers run
/// as, installed or created when absent); its error output when it fails.
fn installed() -> &'static Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/install-servers");
        let output = Command::new("bash")
            .arg(&script)
            .stdin(Stdio::null())
            .output()
            .map_err(|error| format!("cannot run {}: {error}", script.display()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} stopped with {}:\n{}{}",
                script.display(),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    })
}

fn running_as_root() -> bool {
    let output = Command::new("id").arg("-u").output().expect("`id` runs");
    String::from_utf8_lossy(&output.stdout).trim() == "0"
}

/// Gives `folder` to [`DB_USER`] when the tests run as root (the servers refuse root).
pub(crate) fn give_to_db_user(folder: &Path) -> Result<(), String> {
    if !running_as_root() {
        return Ok(());
    }
    let status = Command::new("chown")
        .arg("-R")
        .arg(format!("{DB_USER}:{DB_USER}"))
        .arg(folder)
        .status()
        .map_err(|error| format!("chown: {error}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "cannot give {} to the user {DB_USER} (.ci/install-servers creates it)",
            folder.display()
        ))
    }
}

/// `program` run as [`DB_USER`] when the tests run as root, as the current user otherwise.
pub(crate) fn as_db_user(program: &Path) -> Command {
    if running_as_root() {
        let mut command = Command::new("setpriv");
        command
            .arg(format!("--reuid={DB_USER}"))
            .arg(format!("--regid={DB_USER}"))
            .arg("--clear-groups")
            .arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// Creates the server's data folder: PostgreSQL's `initdb` with the superuser's password, or
/// MariaDB's `mariadb-install-db` (its `root` reaches the server only over the socket).
fn initialise(kind: Kind, folder: &Path, admin_password: &str) -> Result<(), String> {
    let mut command = match kind {
        Kind::Postgres => {
            let password_file = folder.join("password");
            std::fs::write(&password_file, admin_password).map_err(|error| error.to_string())?;
            give_to_db_user(folder)?;
            let mut command = as_db_user(&Path::new(PG_BIN).join("initdb"));
            command
                .arg("-D")
                .arg(folder.join("data"))
                .args([
                    "-U",
                    ADMIN,
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                ])
                .arg(format!("--pwfile={}", password_file.display()))
                .args(["--no-sync", "-E", "UTF8", "--locale=C.UTF-8"]);
            command
        }
        Kind::Mariadb => {
            let mut command = as_db_user(Path::new("/usr/bin/mariadb-install-db"));
            command
                .arg("--no-defaults")
                .arg(format!("--datadir={}", folder.join("data").display()))
                .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
            command
        }
    };
    let output = command
        .output()
        .map_err(|error| format!("{kind:?} initialisation: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{kind:?} initialisation failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// A throwaway CA (`ca.pem`), a server key and certificate for `IP:127.0.0.1` signed by it
/// (`server.key`, `server.pem`), and an unrelated CA (`wrong-ca.pem`), in `dir`.
fn make_certificates(dir: &Path) -> Result<(), String> {
    std::fs::create_dir(dir).map_err(|error| error.to_string())?;
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    let ca_extensions = [
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ];
    for (name, subject) in [
        ("ca", "/CN=sqlgate test CA"),
        ("wrong-ca", "/CN=another CA"),
    ] {
        run_openssl(
            openssl(
                dir,
                &["req", "-x509", "-nodes", "-days", "2", "-subj", subject],
            )
            .args(ec)
            .args(ca_extensions)
            .args([
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.pem"),
            ]),
        )?;
    }
    run_openssl(
        openssl(dir, &["req", "-nodes", "-subj", "/CN=127.0.0.1"])
            .args(ec)
            .args(["-keyout", "server.key", "-out", "server.csr"]),
    )?;
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1
basicConstraints=CA:FALSE
         keyUsage=digitalSignature
extendedKeyUsage=serverAuth
",
    )
    .map_err(|error| error.to_string())?;
    run_openssl(&mut openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.pem",
        ],
    ))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .map_err(|error| error.to_string())
}

fn openssl(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("openssl");
    command.current_dir(dir).args(args);
    command
}

fn run_openssl(command: &mut Command) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|error| format!("openssl: {error}"))?;
    match output.status.success() {
        true => Ok(()),
        false => Err(format!(
            "openssl {:?} failed: {}",
            command.get_args().collect::<Vec<_>>(),
            String::from_utf8_lossy(&output.stderr)
        )),
    }
}

/// The server's command line: loopback only, its socket in the folder, durability off (the
/// data are throwaway) for fast loads; TLS with the folder's certificate when `tls`.
fn server_command(kind: Kind, folder: &Path, port: u16, tls: bool) -> Command {
    let mut command = plain_server_command(kind, folder, port);
    let certificates = folder.join("tls");
    let file = |name: &str| certificates.join(name).display().to_string();
    if tls {
        match kind {
            Kind::Postgres => command.args([
                "-c".to_string(),
                "ssl=on".to_string(),
                "-c".to_string(),
                format!("ssl_cert_file={}", file("server.pem")),
                "-c".to_string(),
                format!("ssl_key_file={}", file("server.key")),
            ]),
            Kind::Mariadb => command.args([
                format!("--ssl-ca={}", file("ca.pem")),
                format!("--ssl-cert={}", file("server.pem")),
                format!("--ssl-key={}", file("server.key")),
            ]),
        };
    }
    command
}

fn plain_server_command(kind: Kind, folder: &Path, port: u16) -> Command {
    let socket = folder.join("socket");
    match kind {
        Kind::Postgres => {
            let mut command = as_db_user(&Path::new(PG_BIN).join("postgres"));
            command
                .arg("-D")
                .arg(folder.join("data"))
                .args(["-p", &port.to_string(), "-k"])
                .arg(&socket)
                .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
                .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
                // Statistics stay what a test's lever made them: autovacuum's own ANALYZE, on a
                // loaded machine, undid a lever before the run and made its test flaky.
                .args(["-c", "autovacuum=off"]);
            command
        }
        Kind::Mariadb => {
            let mut command = as_db_user(Path::new("/usr/sbin/mariadbd"));
            command
                .arg("--no-defaults")
                .arg(format!("--datadir={}", folder.join("data").display()))
                .arg(format!("--socket={}", socket.join("mysql.sock").display()))
                // Its own temporary folder: a MariaDB server removes every `#sql*` file of its
                // temporary folder when it starts, so one in the shared `/tmp` would delete the
                // temporary tables of the servers already running (other tests' ones).
                .arg(format!("--tmpdir={}", folder.join("tmp").display()))
                .arg(format!(
                    "--pid-file={}",
                    folder.join("mariadb.pid").display()
                ))
                .arg(format!("--port={port}"))
                .args(["--bind-address=127.0.0.1", "--skip-name-resolve"])
                .args(["--character-set-server=utf8mb4"])
                .args(["--collation-server=utf8mb4_general_ci"])
                .args([
                    "--innodb-buffer-pool-size=64M",
                    "--innodb-flush-log-at-trx-commit=0",
                ])
                .args(["--innodb-doublewrite=0", "--skip-log-bin"]);
            command
        }
    }
}

/// Starts the guardian shell: it runs the server (output to `server.log`), waits for its own
/// standard input to close, then stops the server (PostgreSQL's fast shutdown, MariaDB's normal
/// one: both end open sessions), waits for it and removes the folder. The signal is sent again
/// each second until the server is gone: a server the shell started in the background begins
/// with `SIGINT` ignored, so one sent before PostgreSQL set its handler (a start-up attempt
/// given up under load, dropped at once) was lost, and the guardian, and the test dropping it,
/// waited forever (the `clone_catalogs` hang).
fn spawn_guardian(kind: Kind, folder: &Path, port: u16, tls: bool) -> Result<Child, String> {
    const GUARDIAN: &str = r#"folder=$1; signal=$2; shift 2
"$@" > "$folder/server.log" 2>&1 &
server=$!
echo "$server" > "$folder/server.pid"
read -r _
while kill "-$signal" "$server" 2> /dev/null; do sleep 1; done
wait "$server"
rm -rf "$folder""#;
    let server = server_command(kind, folder, port, tls);
    let signal = match kind {
        Kind::Postgres => "INT",
        Kind::Mariadb => "TERM",
    };
    Command::new("sh")
        .args(["-c", GUARDIAN, "guardian"])
        .arg(folder)
        .arg(signal)
        .arg(server.get_program())
        .args(server.get_args())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("the guardian shell: {error}"))
}
