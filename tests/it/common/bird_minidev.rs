//! BIRD mini-dev on live servers: the 500 items ship in SQLite, PostgreSQL and MySQL dialects
//! with `dev_tables.json` but without databases, so the databases are generated from
//! `dev_tables.json` (seeded, by the distillation generator: `sqlgate::suites::distill::
//! synthesize`), written as SQLite files and copied into a server with `sqlgate load`'s code.

use sqlgate::sql::schema::TableEntry;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The shared BIRD mini-dev folder, beside the repository.
pub fn folder() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/bird/mini_dev");
    assert!(
        path.join("dev_tables.json").is_file(),
        "the shared BIRD mini-dev data must be at {}",
        path.display()
    );
    path
}

/// The seed of the generated databases.
pub const SEED: u64 = 26;
/// Rows per generated table (inclusive bounds).
pub const ROWS: (usize, usize) = (20, 60);
/// Candidate databases per schema; the one where the most SQLite golds return rows is kept.
pub const CANDIDATES: u64 = 64;

/// What the generation gave per db_id: (golds returning rows on SQLite, golds).
pub type Coverage = BTreeMap<String, (usize, usize)>;

/// Writes one generated SQLite database per mini-dev db_id below `out`
/// (`<db_id>/<db_id>.sqlite`) and returns how many SQLite golds return rows on each.
pub fn generate(out: &Path) -> Coverage {
    let base = folder();
    let tables: Vec<TableEntry> =
        serde_json::from_str(&std::fs::read_to_string(base.join("dev_tables.json")).unwrap())
            .unwrap();
    let items: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(base.join("mini_dev_sqlite.json")).unwrap())
            .unwrap();
    let mut golds: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for item in &items {
        golds
            .entry(item["db_id"].as_str().unwrap().to_string())
            .or_default()
            .push(item["SQL"].as_str().unwrap().to_string());
    }
    let mut coverage = Coverage::new();
    for (db_id, queries) in &golds {
        let entry = tables.iter().find(|t| &t.db_id == db_id).unwrap();
        let made = sqlgate::suites::distill::synthesize::synthesize(
            entry,
            queries,
            &sqlgate::suites::distill::source::GeneratedNeighbors,
            SEED,
            ROWS,
            CANDIDATES,
        )
        .unwrap();
        let path = out.join(db_id).join(format!("{db_id}.sqlite"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &made.bytes).unwrap();
        coverage.insert(db_id.clone(), (made.golds_with_rows, made.golds));
    }
    coverage
}

/// A digest of the generated databases below `out`: every schema entry and every table's rows
/// in storage order. Recorded official verdicts on them (tests/data/bird/servers/) hold only
/// while it is unchanged, so the generation must give the same databases on every run.
pub fn content_digest(out: &Path) -> String {
    let mut db_ids: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    db_ids.sort();
    let mut parts: Vec<Vec<u8>> = Vec::new();
    for db_id in db_ids {
        let conn = rusqlite::Connection::open_with_flags(
            out.join(&db_id).join(format!("{db_id}.sqlite")),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        parts.push(db_id.into_bytes());
        parts.extend(database_parts(&conn));
    }
    sqlgate::util::digest::content_hash(parts.iter().map(Vec::as_slice))
}

/// One SQLite database's schema entries and rows, as text.
fn database_parts(conn: &rusqlite::Connection) -> Vec<Vec<u8>> {
    let mut statement = conn
        .prepare("SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
        .unwrap();
    let entries: Vec<(String, String, String)> = statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut parts = Vec::new();
    for (kind, name, sql) in entries {
        parts.push(sql.into_bytes());
        if kind != "table" {
            continue;
        }
        let mut rows = conn
            .prepare(&format!("SELECT * FROM \"{}\"", name.replace('"', "\"\"")))
            .unwrap();
        let columns = rows.column_count();
        let mut cursor = rows.query([]).unwrap();
        while let Some(row) = cursor.next().unwrap() {
            let values: Vec<String> = (0..columns)
                .map(|i| format!("{:?}", row.get_ref(i).unwrap()))
                .collect();
            parts.push(values.join("\u{1f}").into_bytes());
        }
    }
    parts
}
