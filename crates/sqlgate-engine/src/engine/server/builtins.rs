//! How a PostgreSQL server computes, made part of what a run is judged on. A superuser can
//! change a built-in in place (`CREATE OR REPLACE FUNCTION pg_catalog.upper(text)`, `CREATE OR
//! REPLACE AGGREGATE pg_catalog.max(bigint)`, `ALTER TEXT SEARCH CONFIGURATION english ...`):
//! the object keeps its OID below `FirstNormalObjectId`, so no check of what was created after
//! `initdb` sees it, and every session of the database computes differently. [`postgres_parts`]
//! hashes the built-in rows of the catalogs that say how a value is computed, compared, cast,
//! converted, sorted, aggregated or parsed, one digest per catalog, recorded in the settings
//! entry (`builtins pg_proc=<digest>; ...`), so such an edit is a change of the data, named by
//! its catalog.
//!
//! The rows are hashed by sqlgate, not by the server: the query reads catalog columns only and
//! calls no function a preparation could have replaced (no `md5` made to return the recorded
//! value), the values arrive in the binary protocol and are hashed as their bytes, and the rows
//! made after `initdb` (OID 16384 and up: a loaded table's row type differs between two loads,
//! and the start-up check refuses the user-defined objects that matter) are left out by sqlgate,
//! not by a `WHERE` the server evaluates. Access privileges (`aclitem`) are left out.

use postgres::types::{FromSql, Type};

/// The catalogs hashed, each by its built-in rows. The first column of each is the row's object
/// (its `oid`, or the function, configuration or type it belongs to).
const CATALOGS: &[&str] = &[
    "pg_proc",
    "pg_aggregate",
    "pg_operator",
    "pg_cast",
    "pg_type",
    "pg_range",
    "pg_collation",
    "pg_conversion",
    "pg_language",
    "pg_opclass",
    "pg_opfamily",
    "pg_amop",
    "pg_amproc",
    "pg_ts_config",
    "pg_ts_config_map",
    "pg_ts_dict",
    "pg_ts_parser",
    "pg_ts_template",
];

/// The first object id PostgreSQL gives after `initdb`.
const FIRST_USER_OID: u32 = 16384;

/// The type OIDs of `aclitem` and `aclitem[]` (grants, which have no binary form).
const ACL_TYPES: [u32; 2] = [1033, 1034];

/// The OID of the `pg_catalog` schema (fixed by `initdb`).
const PG_CATALOG: u32 = 11;

/// A column's value as the server sent it (binary), whatever its type.
struct Raw(Vec<u8>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// One settings-entry part per catalog of [`CATALOGS`]: `builtins <catalog>=<digest>`.
pub fn postgres_parts(client: &mut postgres::Client) -> Result<Vec<String>, postgres::Error> {
    CATALOGS
        .iter()
        .map(|catalog| {
            Ok(format!(
                "builtins {catalog}={}",
                catalog_digest(client, catalog)?
            ))
        })
        .collect()
}

/// SHA-256 over the sorted hashes of `catalog`'s built-in rows.
fn catalog_digest(client: &mut postgres::Client, catalog: &str) -> Result<String, postgres::Error> {
    let columns: Vec<String> = client
        .query(
            "SELECT a.attname, a.atttypid FROM pg_catalog.pg_attribute a \
             WHERE a.attrelid = (SELECT c.oid FROM pg_catalog.pg_class c \
               WHERE c.relname = $1 AND c.relnamespace = $2) \
             AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
            &[&catalog, &PG_CATALOG],
        )?
        .iter()
        .filter(|row| !ACL_TYPES.contains(&row.get::<_, u32>(1)))
        .map(|row| row.get(0))
        .collect();
    let quoted: Vec<String> = columns.iter().map(|c| format!("\"{c}\"")).collect();
    let rows = client.query(
        &format!("SELECT {} FROM pg_catalog.{catalog}", quoted.join(", ")),
        &[],
    )?;
    let mut hashes = Vec::new();
    for row in &rows {
        let values: Vec<Option<Raw>> = (0..columns.len())
            .map(|i| row.try_get(i))
            .collect::<Result<_, _>>()?;
        if !built_in(values.first()) {
            continue;
        }
        let mut parts: Vec<&[u8]> = Vec::new();
        for (name, value) in columns.iter().zip(&values) {
            parts.push(name.as_bytes());
            match value {
                Some(Raw(bytes)) => parts.extend([b"v".as_slice(), bytes]),
                None => parts.push(b"n"),
            }
        }
        hashes.push(crate::util::digest::content_hash(parts));
    }
    hashes.sort();
    Ok(crate::util::digest::content_hash(
        hashes.iter().map(String::as_bytes),
    ))
}

/// Whether a row whose first column is `key` (an object id, big-endian) was made by `initdb`.
fn built_in(key: Option<&Option<Raw>>) -> bool {
    match key {
        Some(Some(Raw(bytes))) => match <[u8; 4]>::try_from(bytes.as_slice()) {
            Ok(oid) => u32::from_be_bytes(oid) < FIRST_USER_OID,
            Err(_) => true,
        },
        _ => true,
    }
}
