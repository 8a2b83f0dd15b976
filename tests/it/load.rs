//! `sqlgate load` on real PostgreSQL 15 and MariaDB 10.11 servers (tests/it/common/servers.rs):
//! SQLite databases in the Spider / BIRD layout are copied in both layouts, every value read
//! back equal to the SQLite file's, types mapped from the declared types and widened when the
//! values do not fit, names quoted (PostgreSQL folds plain names to lower case), row counts
//! checked across batches, a second load replaces the first, and the `shared` layout refuses
//! two db_ids with the same table.

use crate::common;

use common::servers::{self, Server};
use mysql::prelude::Queryable;
use rusqlite::Connection;
use sqlgate::engine::load::types::{ColumnType, Server as Kind};
use sqlgate::engine::load::{Layout, LoadError, LoadedDatabase};
use std::path::Path;

/// The loader with the source folder as the workspace (`sqlgate load` passes the config's).
fn load(
    kind: Kind,
    url: &str,
    layout: Layout,
    from: &Path,
) -> Result<Vec<LoadedDatabase>, LoadError> {
    let workspace = sqlgate::util::workspace::Workspace::detect(from).unwrap();
    sqlgate::engine::load::load(kind, url, layout, from, &workspace)
}

/// Values as both sides print them: integers and reals exactly, text as is, blobs as hex,
/// dates and timestamps as `YYYY-MM-DD[ HH:MM:SS]`.
fn sqlite_rows(path: &Path, table: &str) -> Vec<Vec<Option<String>>> {
    let conn = Connection::open(path).unwrap();
    let mut statement = conn
        .prepare(&format!("SELECT * FROM \"{table}\" ORDER BY rowid"))
        .unwrap();
    let columns = statement.column_count();
    let rows = statement
        .query_map([], |row| {
            Ok((0..columns)
                .map(|i| match row.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Null => None,
                    rusqlite::types::ValueRef::Integer(v) => Some(v.to_string()),
                    rusqlite::types::ValueRef::Real(v) => Some(format!("{v:?}")),
                    rusqlite::types::ValueRef::Text(t) => {
                        Some(String::from_utf8(t.to_vec()).unwrap())
                    }
                    rusqlite::types::ValueRef::Blob(b) => Some(hex(b)),
                })
                .collect())
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first fixture database: every kind of value and awkward names.
fn shop(folder: &Path) {
    std::fs::create_dir_all(folder.join("shop")).unwrap();
    let conn = Connection::open(folder.join("shop/shop.sqlite")).unwrap();
    conn.execute_batch(
        "CREATE TABLE \"Orders\" (\"OrderID\" INTEGER PRIMARY KEY, \"Free Meal Count (K-12)\" REAL,
             note TEXT, day DATE, at DATETIME, raw BLOB, mixed INTEGER, untyped, \"order\" VARCHAR(5));
         INSERT INTO \"Orders\" VALUES
             (1, 0.1, 'Zoë 😀 O''Brien \\ \"q\"', '2012-02-29', '2012-02-29 23:59:59', x'00ff10', 7, 3, 'a'),
             (2, 1e300, '', '1999-12-31', '2000-01-01 00:00:00', x'', 'n/a', 4, NULL),
             (3, -2.5, NULL, NULL, NULL, NULL, NULL, NULL, 'b'),
             (9223372036854775807, 3, 'x', '2020-01-01', '2020-01-01 10:00:00.5', x'01', -9223372036854775808, 5, 'c');
         CREATE TABLE months (\"Date\" DATE, value INTEGER);
         INSERT INTO months VALUES ('201201', 1), ('2012-13-01', 2);",
    )
    .unwrap();
}

/// The second fixture database: enough rows for several INSERT batches.
fn club(folder: &Path) {
    std::fs::create_dir_all(folder.join("club")).unwrap();
    let conn = Connection::open(folder.join("club/club.sqlite")).unwrap();
    conn.execute_batch(
        "CREATE TABLE members (id INTEGER, name TEXT, score REAL, joined DATE, a INT, b INT, c INT);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12000)
         INSERT INTO members SELECT i, 'member ' || i, i / 7.0, date('2000-01-01', '+' || i || ' days'), i % 3, i % 5, NULL FROM n;",
    )
    .unwrap();
}

fn fixture() -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    shop(folder.path());
    club(folder.path());
    folder
}

/// Every row of `table` on the PostgreSQL database, values printed like [`sqlite_rows`] (dates
/// and timestamps as PostgreSQL prints them).
fn postgres_rows(
    server: &Server,
    database: &str,
    table: &str,
    types: &[ColumnType],
) -> Vec<Vec<Option<String>>> {
    let mut client =
        postgres::Client::connect(&server.admin_url(database), postgres::NoTls).unwrap();
    let columns: Vec<String> = client
        .query(
            "SELECT column_name::text FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position",
            &[&table],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let selected: Vec<String> = columns
        .iter()
        .zip(types)
        .map(|(name, kind)| match kind {
            ColumnType::Date | ColumnType::Timestamp => format!("\"{name}\"::text"),
            _ => format!("\"{name}\""),
        })
        .collect();
    let sql = format!("SELECT {} FROM \"{table}\"", selected.join(", "));
    let rows = client.query(&sql, &[]).unwrap();
    let mut printed: Vec<Vec<Option<String>>> = rows
        .iter()
        .map(|row| {
            types
                .iter()
                .enumerate()
                .map(|(i, kind)| match kind {
                    ColumnType::Integer => row.get::<_, Option<i64>>(i).map(|v| v.to_string()),
                    ColumnType::Real => row.get::<_, Option<f64>>(i).map(|v| format!("{v:?}")),
                    ColumnType::Bytes => row.get::<_, Option<Vec<u8>>>(i).map(|b| hex(&b)),
                    _ => row.get::<_, Option<String>>(i),
                })
                .collect()
        })
        .collect();
    printed.sort();
    printed
}

#[test]
fn postgres_copies_every_value_in_both_layouts() {
    let server = servers::postgres();
    let folder = fixture();
    server.admin_sql("postgres", "CREATE DATABASE load_shared");
    let url = server.admin_url("load_shared");
    let loaded = load(Kind::Postgres, &url, Layout::Shared, folder.path()).unwrap();
    assert_eq!(loaded.len(), 2);
    let shop = loaded.iter().find(|d| d.db_id == "shop").unwrap();
    assert_eq!(shop.database, "load_shared");
    let orders = shop.tables.iter().find(|t| t.name == "orders").unwrap();
    let names: Vec<&str> = orders.columns.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "orderid",
            "Free Meal Count (K-12)",
            "note",
            "day",
            "at",
            "raw",
            "mixed",
            "untyped",
            "order"
        ]
    );
    let types: Vec<ColumnType> = orders.columns.iter().map(|(_, t)| *t).collect();
    use ColumnType::*;
    assert_eq!(
        types,
        [Integer, Real, Text, Date, Timestamp, Bytes, Text, Integer, Text]
    );
    assert_eq!(orders.rows, 4);
    let months = shop.tables.iter().find(|t| t.name == "months").unwrap();
    assert_eq!(
        months.columns[0],
        ("date".to_string(), Text),
        "invalid dates stay text"
    );

    // The declared types on the server, and the dates as PostgreSQL prints them.
    let dates = server.admin_sql(
        "load_shared",
        "SELECT day::text, at FROM orders ORDER BY orderid",
    );
    assert_eq!(dates, "2012-02-29\t2012-02-29 23:59:59\n1999-12-31\t2000-01-01 00:00:00\n\t\n2020-01-01\t2020-01-01 10:00:00.5\n");
    let declared = server.admin_sql(
        "load_shared",
        "SELECT data_type FROM information_schema.columns WHERE table_name = 'orders' ORDER BY ordinal_position",
    );
    assert_eq!(
        declared,
        "bigint\ndouble precision\ntext\ndate\ntimestamp without time zone\nbytea\ntext\nbigint\ntext\n"
    );

    let mut expected = sqlite_rows(&folder.path().join("shop/shop.sqlite"), "Orders");
    expected.sort();
    assert_eq!(
        postgres_rows(server, "load_shared", "orders", &types),
        expected
    );

    let members = loaded.iter().find(|d| d.db_id == "club").unwrap();
    assert_eq!(members.tables[0].rows, 12_000);
    let member_types = [Integer, Text, Real, Date, Integer, Integer, Integer];
    let members_actual = postgres_rows(server, "load_shared", "members", &member_types);
    let mut members_expected = sqlite_rows(&folder.path().join("club/club.sqlite"), "members");
    members_expected.sort();
    assert_eq!(members_actual, members_expected);

    // per_db_id: one database per db_id, named by it; a second load replaces the first.
    for _ in 0..2 {
        let loaded = load(Kind::Postgres, &url, Layout::PerDbId, folder.path()).unwrap();
        assert_eq!(loaded[0].database, "club");
        assert_eq!(loaded[1].database, "shop");
    }
    assert_eq!(
        server.admin_sql("club", "SELECT count(*) FROM members"),
        "12000\n"
    );
    assert_eq!(
        server.admin_sql("shop", "SELECT count(*), sum(value) FROM months"),
        "2\t3\n"
    );
}

#[test]
fn mariadb_copies_every_value_in_both_layouts() {
    let server = servers::mariadb();
    let folder = fixture();
    server.admin_sql("mysql", "CREATE DATABASE load_shared");
    let url = server.admin_url("load_shared");
    let loaded = load(Kind::Mysql, &url, Layout::Shared, folder.path()).unwrap();
    let shop = loaded.iter().find(|d| d.db_id == "shop").unwrap();
    let orders = shop.tables.iter().find(|t| t.name == "Orders").unwrap();
    assert_eq!(orders.columns[1].0, "Free Meal Count (K-12)");
    assert_eq!(orders.columns[0].0, "OrderID", "MySQL keeps names");

    let mut conn = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    // The binary protocol (a prepared statement) returns integers and doubles typed.
    let rows: Vec<mysql::Row> = conn
        .exec(
            "SELECT `OrderID`, `Free Meal Count (K-12)`, note, CAST(day AS CHAR), CAST(at AS CHAR), HEX(raw), mixed, untyped, `order` FROM `Orders`",
            (),
        )
        .unwrap();
    let mut actual: Vec<Vec<Option<String>>> = rows
        .into_iter()
        .map(|row| {
            let values: Vec<mysql::Value> = row.unwrap();
            values
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    mysql::Value::NULL => None,
                    mysql::Value::Int(v) => Some(v.to_string()),
                    mysql::Value::Double(v) => Some(format!("{v:?}")),
                    mysql::Value::Bytes(b) if i == 5 => {
                        Some(String::from_utf8(b).unwrap().to_lowercase())
                    }
                    mysql::Value::Bytes(b) => Some(String::from_utf8(b).unwrap()),
                    other => Some(format!("{other:?}")),
                })
                .collect()
        })
        .collect();
    let mut expected = sqlite_rows(&folder.path().join("shop/shop.sqlite"), "Orders");
    for row in &mut expected {
        // DATETIME(6) prints its microseconds.
        if let Some(at) = &mut row[4] {
            *at = match at.split_once('.') {
                Some((clock, fraction)) => format!("{clock}.{fraction:0<6}"),
                None => format!("{at}.000000"),
            };
        }
    }
    actual.sort();
    expected.sort();
    assert_eq!(actual, expected);

    let count: Option<u64> = conn
        .query_first("SELECT count(*) FROM members WHERE joined > '2020-01-01'")
        .unwrap();
    assert_eq!(count, Some(12_000 - 7305));

    let loaded = load(Kind::Mysql, &url, Layout::PerDbId, folder.path()).unwrap();
    assert_eq!(loaded[0].database, "club");
    assert_eq!(
        server.admin_sql("club", "SELECT count(*) FROM members"),
        "12000\n"
    );
}

#[test]
fn shared_layout_refuses_a_table_name_two_db_ids_share() {
    let folder = fixture();
    std::fs::create_dir_all(folder.path().join("other")).unwrap();
    Connection::open(folder.path().join("other/other.sqlite"))
        .unwrap()
        .execute_batch("CREATE TABLE MEMBERS (x INTEGER)")
        .unwrap();
    let server = servers::postgres();
    let error = load(
        Kind::Postgres,
        &server.admin_url("postgres"),
        Layout::Shared,
        folder.path(),
    )
    .unwrap_err();
    assert!(matches!(error, LoadError::Source { .. }), "{error}");
    let message = error.to_string();
    common::assert_contains(&message, &["`club`", "`other`", "per_db_id"]);
}

#[test]
fn connection_failures_say_why_without_the_url() {
    let folder = fixture();
    let server = servers::postgres();
    let wrong = server.url(servers::ADMIN, "not-the-password", "postgres");
    let error = load(Kind::Postgres, &wrong, Layout::Shared, folder.path())
        .unwrap_err()
        .to_string();
    common::assert_contains(&error, &["password authentication failed"]);
    assert!(!error.contains("not-the-password"), "{error}");

    let mariadb = servers::mariadb();
    let wrong = mariadb.url(servers::ADMIN, "not-the-password", "mysql");
    let error = load(Kind::Mysql, &wrong, Layout::Shared, folder.path())
        .unwrap_err()
        .to_string();
    common::assert_contains(&error, &["Access denied"]);
    assert!(!error.contains("not-the-password"), "{error}");

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let unreachable = format!("postgresql://u:secret-pw@127.0.0.1:{closed}/db");
    let error = load(Kind::Postgres, &unreachable, Layout::Shared, folder.path())
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("cannot connect"), "{error}");
    assert!(!error.contains("secret-pw"), "{error}");
}

/// A config naming `engine` beside an empty gold file (the `load` command reads only
/// `dataset.engine`, but the config must be a valid one).
fn config_with(dir: &Path, engine: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("gold.sql"), "SELECT 1\tshop\n").unwrap();
    std::fs::write(dir.join("preds.txt"), "SELECT 1\n").unwrap();
    let config = format!(
        "dataset: {{ gold: gold.sql, difficulty: none, engine: {engine} }}\n\
         predictions: [{{ name: model, path: preds.txt }}]\nmetrics: [ex]\n"
    );
    let path = dir.join("sqlgate.yml");
    std::fs::write(&path, config).unwrap();
    path
}

fn run_load(config: &Path, from: &Path, url: Option<&str>) -> (Option<i32>, String) {
    let mut command = common::sqlgate_command(&[
        "load",
        "--config",
        config.to_str().unwrap(),
        "--from",
        from.to_str().unwrap(),
    ]);
    match url {
        Some(url) => command.env("LOAD_TEST_URL", url),
        None => command.env_remove("LOAD_TEST_URL"),
    };
    let output = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), text)
}

#[test]
fn the_load_command_copies_and_reports_bad_settings_by_key() {
    let folder = fixture();
    let dir = tempfile::tempdir().unwrap();
    let server = servers::mariadb();
    server.admin_sql("mysql", "CREATE DATABASE load_cli");
    let config = config_with(
        dir.path(),
        "{ kind: mysql, url_env: LOAD_TEST_URL, layout: shared }",
    );
    let url = server.admin_url("load_cli");

    let (code, text) = run_load(&config, folder.path(), Some(&url));
    assert_eq!(code, Some(0), "{text}");
    common::assert_contains(
        &text,
        &["club -> database `load_cli`: 1 tables, 12000 rows"],
    );
    common::assert_contains(
        &text,
        &["  members: 12000 rows (id BIGINT, name LONGTEXT, score DOUBLE, joined DATE"],
    );
    assert!(!text.contains(&server.admin_password), "{text}");
    assert_eq!(
        server.admin_sql("load_cli", "SELECT count(*) FROM `Orders`"),
        "4\n"
    );

    let (code, text) = run_load(&config, folder.path(), None);
    assert_eq!(code, Some(2), "{text}");
    common::assert_contains(
        &text,
        &["`dataset.engine.url_env`", "LOAD_TEST_URL", "not set"],
    );

    let wrong = server.url(servers::ADMIN, "wrong-pass-1234", "load_cli");
    let (code, text) = run_load(&config, folder.path(), Some(&wrong));
    assert_eq!(code, Some(2), "{text}");
    common::assert_contains(
        &text,
        &["`dataset.engine.url_env` (`LOAD_TEST_URL`): cannot connect"],
    );
    assert!(
        !text.contains("wrong-pass-1234") && !text.contains("127.0.0.1:"),
        "{text}"
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let unreachable = format!("mysql://u:pw-unreachable-99@127.0.0.1:{closed}/x");
    let (code, text) = run_load(&config, folder.path(), Some(&unreachable));
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("cannot connect") && !text.contains("pw-unreachable-99"),
        "{text}"
    );

    let (code, text) = run_load(&config, &dir.path().join("absent"), Some(&url));
    assert_eq!(code, Some(2), "{text}");
    common::assert_contains(&text, &["absent", "cannot read the folder"]);

    let sqlite = config_with(dir.path(), "{ kind: sqlite }");
    let text_of = std::fs::read_to_string(&sqlite).unwrap();
    let databases = format!("dataset: {{ databases: {}, ", folder.path().display());
    std::fs::write(&sqlite, text_of.replacen("dataset: { ", &databases, 1)).unwrap();
    let (code, text) = run_load(&sqlite, folder.path(), Some(&url));
    assert_eq!(code, Some(2), "{text}");
    common::assert_contains(&text, &["`dataset.engine.kind`"]);
}

/// A database whose keys the copy declares: an INTEGER PRIMARY KEY, a UNIQUE column, a plain
/// index, an expression index (not copied), a composite primary key, foreign keys (one naming
/// no parent columns, two with rows whose parent is missing), a NULL in a primary key, and a
/// primary key SQLite holds (`1` and `'1'` differ in an untyped column) that the server's text
/// column cannot.
fn school(folder: &Path) {
    std::fs::create_dir_all(folder.join("school")).unwrap();
    let conn = Connection::open(folder.join("school/school.sqlite")).unwrap();
    conn.execute_batch(
        "PRAGMA foreign_keys = OFF;
         CREATE TABLE teachers (id INTEGER PRIMARY KEY, email TEXT UNIQUE, name TEXT, dept INTEGER);
         CREATE INDEX teachers_dept ON teachers (dept);
         CREATE INDEX teachers_lower ON teachers (lower(name));
         CREATE TABLE classes (teacher INTEGER, room TEXT, code TEXT, PRIMARY KEY (teacher, room),
             FOREIGN KEY (teacher) REFERENCES teachers (id));
         CREATE TABLE marks (student TEXT PRIMARY KEY, class_teacher INTEGER REFERENCES teachers, score REAL);
         CREATE TABLE tags (tag PRIMARY KEY, n INTEGER);
         INSERT INTO teachers VALUES (1, 'a@x', 'Ann', 10), (2, 'b@x', 'Bob', 20), (3, NULL, 'Cy', 10);
         INSERT INTO classes VALUES (1, 'R1', 'c1'), (1, 'R2', 'c2'), (9, 'R9', 'no such teacher');
         INSERT INTO marks VALUES ('s1', 1, 1.5), (NULL, 2, 2.5), ('s3', 77, 3.5);
         INSERT INTO tags VALUES (1, 1), ('1', 2);",
    )
    .unwrap();
}

/// The keys the copy reports for the school database, table by table.
fn check_reported_keys(loaded: &[sqlgate::engine::load::LoadedDatabase], lower: bool) {
    let tables = &loaded[0].tables;
    let find = |name: &str| {
        let name = if lower {
            name.to_lowercase()
        } else {
            name.to_string()
        };
        tables.iter().find(|t| t.name == name).unwrap()
    };
    let teachers = find("teachers");
    assert_eq!(
        teachers.keys,
        ["PRIMARY KEY (id)", "UNIQUE (email)", "INDEX (dept)"]
    );
    assert!(teachers.skipped.is_empty(), "{:?}", teachers.skipped);
    assert_eq!(
        find("classes").keys,
        [
            "PRIMARY KEY (teacher, room)",
            "FOREIGN KEY (teacher) REFERENCES teachers (id)"
        ]
    );
    assert_eq!(
        find("marks").keys,
        [
            "INDEX (student) (the primary key has NULLs)",
            "FOREIGN KEY (class_teacher) REFERENCES teachers (id)"
        ]
    );
    let tags = find("tags");
    assert_eq!(tags.keys, ["INDEX (tag)"]);
    assert_eq!(tags.skipped.len(), 1);
    assert!(
        tags.skipped[0].starts_with("PRIMARY KEY (tag): ")
            && tags.skipped[0].ends_with("; INDEX (tag) instead"),
        "{:?}",
        tags.skipped
    );
    let rows: Vec<u64> = ["teachers", "classes", "marks", "tags"]
        .iter()
        .map(|t| find(t).rows)
        .collect();
    assert_eq!(
        rows,
        [3, 3, 3, 2],
        "every row copied, the key-breaking ones too"
    );
}

#[test]
fn postgres_gets_the_keys_and_indexes_of_the_sqlite_files() {
    let server = servers::postgres();
    let folder = tempfile::tempdir().unwrap();
    school(folder.path());
    server.admin_sql("postgres", "CREATE DATABASE load_keys");
    let url = server.admin_url("load_keys");
    for _ in 0..2 {
        let loaded = load(Kind::Postgres, &url, Layout::Shared, folder.path()).unwrap();
        check_reported_keys(&loaded, true);
    }
    let constraints = server.admin_sql(
        "load_keys",
        "SELECT conrelid::regclass::text, contype, convalidated FROM pg_constraint
         WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2",
    );
    assert_eq!(
        constraints,
        "classes\tf\tf\nclasses\tp\tt\nmarks\tf\tf\nteachers\tp\tt\n"
    );
    let indexes = server.admin_sql(
        "load_keys",
        "SELECT tablename, count(*) FROM pg_indexes WHERE schemaname = 'public'
         GROUP BY tablename ORDER BY tablename",
    );
    assert_eq!(indexes, "classes\t1\nmarks\t1\ntags\t1\nteachers\t3\n");
    let unique = server.admin_sql(
        "load_keys",
        "SELECT indexdef LIKE 'CREATE UNIQUE%' FROM pg_indexes
         WHERE tablename = 'teachers' AND indexdef LIKE '%(email)' ",
    );
    assert_eq!(unique, "t\n");
    assert_eq!(
        server.admin_sql("load_keys", "SELECT count(*) FROM tags WHERE tag = '1'"),
        "2\n"
    );
}

#[test]
fn mariadb_gets_the_keys_and_indexes_of_the_sqlite_files() {
    let server = servers::mariadb();
    let folder = tempfile::tempdir().unwrap();
    school(folder.path());
    server.admin_sql("mysql", "CREATE DATABASE load_keys");
    let url = server.admin_url("load_keys");
    for _ in 0..2 {
        let loaded = load(Kind::Mysql, &url, Layout::Shared, folder.path()).unwrap();
        check_reported_keys(&loaded, false);
    }
    let indexes = server.admin_sql(
        "load_keys",
        "SELECT TABLE_NAME, INDEX_NAME = 'PRIMARY', NON_UNIQUE, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX)
         FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'load_keys'
         GROUP BY TABLE_NAME, INDEX_NAME ORDER BY TABLE_NAME, INDEX_NAME = 'PRIMARY' DESC, NON_UNIQUE, 4",
    );
    assert_eq!(
        indexes,
        "classes\t1\t0\tteacher,room\nmarks\t0\t1\tclass_teacher\nmarks\t0\t1\tstudent\n\
         tags\t0\t1\ttag\nteachers\t1\t0\tid\nteachers\t0\t0\temail\nteachers\t0\t1\tdept\n"
    );
    let foreign = server.admin_sql(
        "load_keys",
        "SELECT TABLE_NAME, REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS
         WHERE CONSTRAINT_SCHEMA = 'load_keys' ORDER BY 1",
    );
    assert_eq!(foreign, "classes\tteachers\nmarks\tteachers\n");
    assert_eq!(
        server.admin_sql("load_keys", "SELECT count(*) FROM tags WHERE tag = '1'"),
        "2\n"
    );
}
