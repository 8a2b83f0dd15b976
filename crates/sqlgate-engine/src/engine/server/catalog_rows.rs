//! Every catalog row a state-changing prediction can read, recorded when items run on clones
//! (`dataset.engine.admin_url_env`). There a prediction is any SQL, so it reads every catalog
//! of its clone (a copy of the base database's) and every shared catalog, and each row a
//! preparation of the server sets is a way to hand it an answer: a comment
//! (`obj_description`), an empty schema, a sequence, a comment on the database
//! (`shobj_description`) (red team round 16), a row of `information_schema.sql_features`, an
//! object made again under a new id, a table rewritten under a new file number (round 17), and
//! every kind no list names. So no kind is chosen: every table of `pg_catalog` and
//! `information_schema` that `PUBLIC` may read (what a clone's role reads) is digested whole,
//! row by row and column by column, built-in rows too (a comment changed on a built-in
//! function is a lever as well), object ids and file numbers included (a prediction reads
//! them: `'t'::regclass::oid`).
//!
//! So the base data must be loaded the same way on a fresh server for every run (as the
//! workflow does, docs/ACTION.md): the same statements in the same order give the same ids;
//! a reload on a server that made other objects before, or a parallel restore, gives others,
//! and the run is refused as a changed benchmark. Left out is only what changes by itself
//! between two such loads: transaction ids, log positions and the planner's size estimates
//! (`relpages`, `reltuples`, `relallvisible`, which autovacuum rewrites). The statistics
//! `ANALYZE` gathers are not `PUBLIC`'s to read.

/// The first object id PostgreSQL gives after `initdb`: an id below it names a built-in
/// object, never one of the run's.
const FIRST_USER_OID: u32 = 16384;

/// Columns that change between two loads of the same data without anyone changing them.
const VOLATILE: &[(&str, &str)] = &[
    ("pg_class", "relpages"),
    ("pg_class", "reltuples"),
    ("pg_class", "relallvisible"),
];

/// Types whose values are counters of the server, not state anyone sets.
const COUNTER_TYPES: &str = "'xid'::regtype, 'xid8'::regtype, 'cid'::regtype, 'pg_lsn'::regtype";

/// One column of a catalog, as the catalogs describe it.
struct Column {
    name: String,
    /// The catalog an id in this column names (a single id, not an array).
    target: Option<String>,
}

/// The digest of every `PUBLIC`-readable table of `pg_catalog` and `information_schema` in the
/// session's database (`shared` false), or of the server's shared catalogs (`shared` true),
/// one part per table (`catalog <schema>.<name>=<rows> rows <md5>`, sorted). Rows of the
/// shared catalogs that name the run's own databases and roles (`sqlgate_live_...`) are left
/// out; a base database holds none of them.
pub(crate) fn postgres_catalog_rows(
    client: &mut postgres::Client,
    shared: bool,
) -> Result<Vec<String>, postgres::Error> {
    let mut parts = Vec::new();
    for (catalog, columns) in catalog_columns(client, shared)? {
        let row = client.query_one(&catalog_digest_sql(&catalog, &columns, shared), &[])?;
        let (rows, digest): (i64, String) = (row.get(0), row.get(1));
        parts.push(format!("catalog {catalog}={rows} rows {digest}"));
    }
    Ok(parts)
}

/// Each `PUBLIC`-readable table of the system schemas (the shared ones or the database's, by
/// its quoted `schema.name`) with its readable columns, counters and estimates left out.
fn catalog_columns(
    client: &mut postgres::Client,
    shared: bool,
) -> Result<Vec<(String, Vec<Column>)>, postgres::Error> {
    let rows = client.query(
        &format!(
            "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.relname::text, \
             a.attname::text, k.pktable::text \
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid \
             LEFT JOIN LATERAL (SELECT f.pktable FROM pg_catalog.pg_get_catalog_foreign_keys() f \
               WHERE f.fktable = c.oid AND NOT f.is_array \
               AND f.fkcols = ARRAY[a.attname::text] LIMIT 1) k ON true \
             WHERE n.nspname IN ('pg_catalog', 'information_schema') AND c.relkind = 'r' \
             AND c.relisshared = $1 AND a.attnum > 0 AND NOT a.attisdropped \
             AND pg_catalog.has_column_privilege('public', c.oid, a.attnum, 'SELECT') \
             AND a.atttypid NOT IN ({COUNTER_TYPES}) ORDER BY 1, a.attnum"
        ),
        &[&shared],
    )?;
    let mut catalogs: Vec<(String, Vec<Column>)> = Vec::new();
    for row in rows {
        let (catalog, table, name): (String, String, String) = (row.get(0), row.get(1), row.get(2));
        if VOLATILE.contains(&(table.as_str(), name.as_str())) {
            continue;
        }
        let column = Column {
            name,
            target: row.get(3),
        };
        match catalogs.last_mut() {
            Some((last, columns)) if *last == catalog => columns.push(column),
            _ => catalogs.push((catalog, vec![column])),
        }
    }
    Ok(catalogs)
}

/// The query giving a table's row count and the MD5 of its rows (each column's text, `|`
/// between them), sorted; in a shared catalog (`shared`), rows naming the run's own objects
/// left out ([`run_own`]).
fn catalog_digest_sql(catalog: &str, columns: &[Column], shared: bool) -> String {
    let texts: Vec<String> = columns
        .iter()
        .map(|column| format!("{}::text", quote_ident(&column.name)))
        .collect();
    let ours = match shared {
        true => run_own(columns),
        false => "false".to_string(),
    };
    format!(
        "SELECT count(*), md5(coalesce(string_agg(r, E'\\n' ORDER BY r), '')) FROM (\
         SELECT concat_ws('|', {}) AS r FROM {catalog} WHERE NOT ({ours})) t",
        texts.join(", ")
    )
}

/// The condition of a row that names one of the run's own databases or roles
/// (`sqlgate_live_...`: a template, a clone, their roles), which the run makes and drops: by
/// a database's name, or by an id the catalog's foreign keys (or its `classid` / `objid`
/// pairs) say names a user-made object, written as that object.
fn run_own(columns: &[Column]) -> String {
    let has = |name: &str| columns.iter().any(|c| c.name == name);
    let class_of = |id: &str| match id {
        "refobjid" if has("refclassid") => Some("refclassid"),
        "objoid" | "objid" if has("classoid") => Some("classoid"),
        "objoid" | "objid" if has("classid") => Some("classid"),
        _ => None,
    };
    let named: Vec<String> = columns
        .iter()
        .filter_map(|column| {
            let id = quote_ident(&column.name);
            let class = match (&column.target, class_of(&column.name)) {
                (Some(target), _) => format!("'{target}'::regclass"),
                (None, Some(class)) => class.to_string(),
                (None, None) => return None,
            };
            Some(format!(
                "({id}::oid >= {FIRST_USER_OID} AND coalesce(pg_catalog.pg_describe_object(\
                 {class}, {id}::oid, 0), '') ~ '^(role|database) sqlgate_live_')"
            ))
        })
        .chain(has("datname").then(|| "datname::text LIKE 'sqlgate\\_live\\_%'".to_string()))
        .collect();
    match named.is_empty() {
        true => "false".to_string(),
        false => named.join(" OR "),
    }
}

/// `name` as a quoted identifier.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
