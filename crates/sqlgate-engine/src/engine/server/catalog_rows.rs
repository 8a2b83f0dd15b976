//! Every catalog row a state-changing prediction can read, recorded when items run on clones
//! (`dataset.engine.admin_url_env`). There a prediction is any SQL, so it reads every catalog
//! of its clone (a copy of the base database's) and every shared catalog, and each row a
//! preparation of the server sets is a way to hand it an answer: a comment
//! (`obj_description`), an empty schema, a sequence, a comment on the database
//! (`shobj_description`) (red team round 16), and every kind no list names. So no kind is
//! chosen: every catalog of `pg_catalog` that `PUBLIC` may read (what a clone's role reads) is
//! digested whole, row by row, built-in rows too (a comment changed on a built-in function is
//! a lever as well).
//!
//! The digests must agree between two loads of the same dump, which give other object ids, so
//! a row is written without them: an object id at or above the first one `initdb` leaves free
//! is written as the object it names (`pg_describe_object`, through the catalog's foreign keys
//! as `pg_get_catalog_foreign_keys` lists them, or its `classid` / `objid` pair), a catalog's
//! own id is left out, an expression tree's ids and `reg*` constants are masked (the structure
//! entry names those expressions by their definitions), and the names PostgreSQL derives from
//! an id (`pg_toast_<id>`, `RI_ConstraintTrigger_<id>`) lose it. What changes by itself
//! between two loads is left out: transaction ids, log positions, the planner's size
//! estimates (`relpages`, `reltuples`, `relallvisible`), a relation's file number and
//! `indcheckxmin`. The statistics `ANALYZE` gathers are not `PUBLIC`'s to read.

/// The first object id PostgreSQL gives after `initdb`.
const FIRST_USER_OID: u32 = 16384;

/// Columns that change between two loads of the same dump without anyone changing them.
const VOLATILE: &[(&str, &str)] = &[
    ("pg_class", "relpages"),
    ("pg_class", "reltuples"),
    ("pg_class", "relallvisible"),
    ("pg_class", "relfilenode"),
    ("pg_index", "indcheckxmin"),
];

/// Types whose values are counters of the server, not state anyone sets.
const COUNTER_TYPES: &str = "'xid'::regtype, 'xid8'::regtype, 'cid'::regtype, 'pg_lsn'::regtype";

/// A node tree's `reg*` or `oid` constants (an object id as bytes) and its object ids of user
/// objects (a number at or above [`FIRST_USER_OID`]), each masked.
const NODE_CONSTANT: &str = "(:consttype (?:26|24|2202|2203|2204|2205|2206|3734|3769|4089|4096|4191) [^{}]*?:constvalue [0-9]+ )\\[[^]]*\\]";
const NODE_ID: &str =
    "\\m([0-9]{6,}|1638[4-9]|1639[0-9]|16[4-9][0-9]{2}|1[7-9][0-9]{3}|[2-9][0-9]{4})\\M";

/// Names PostgreSQL derives from an object id.
const DERIVED_NAME: &str = "(pg_toast|RI_ConstraintTrigger_[ac])_[0-9]+";

/// One column of a catalog, as the catalogs describe it.
struct Column {
    name: String,
    type_name: String,
    /// The catalog an id in this column names, and whether the column holds several.
    target: Option<(String, bool)>,
}

/// The digest of every `PUBLIC`-readable catalog of the session's database (`shared` false) or
/// of the server's shared catalogs (`shared` true), one part per catalog (`catalog
/// <name>=<rows> rows <md5>`, sorted). Rows that name the run's own databases and roles
/// (`sqlgate_live_...`) are left out of the shared ones.
pub(crate) fn postgres_catalog_rows(
    client: &mut postgres::Client,
    shared: bool,
) -> Result<Vec<String>, postgres::Error> {
    let mut parts = Vec::new();
    for (catalog, columns) in catalog_columns(client, shared)? {
        let sql = catalog_digest_sql(&catalog, &columns);
        let row = client.query_one(&sql, &[])?;
        let (rows, digest): (i64, String) = (row.get(0), row.get(1));
        parts.push(format!("catalog {catalog}={rows} rows {digest}"));
    }
    Ok(parts)
}

/// Each `PUBLIC`-readable catalog (the shared ones or the database's) with its readable
/// columns, those holding counters or estimates left out.
fn catalog_columns(
    client: &mut postgres::Client,
    shared: bool,
) -> Result<Vec<(String, Vec<Column>)>, postgres::Error> {
    let rows = client.query(
        &format!(
            "SELECT c.relname::text, a.attname::text, a.atttypid::regtype::text, \
             k.pktable::text, coalesce(k.is_array, false) \
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid \
             LEFT JOIN LATERAL (SELECT f.pktable, f.is_array \
               FROM pg_catalog.pg_get_catalog_foreign_keys() f WHERE f.fktable = c.oid \
               AND f.fkcols = ARRAY[a.attname::text] LIMIT 1) k ON true \
             WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relkind = 'r' \
             AND c.relisshared = $1 AND a.attnum > 0 AND NOT a.attisdropped \
             AND pg_catalog.has_column_privilege('public', c.oid, a.attnum, 'SELECT') \
             AND a.atttypid NOT IN ({COUNTER_TYPES}) ORDER BY c.relname, a.attnum"
        ),
        &[&shared],
    )?;
    let mut catalogs: Vec<(String, Vec<Column>)> = Vec::new();
    for row in rows {
        let catalog: String = row.get(0);
        let name: String = row.get(1);
        if VOLATILE.contains(&(catalog.as_str(), name.as_str())) {
            continue;
        }
        let target = row
            .get::<_, Option<String>>(3)
            .map(|table| (table, row.get(4)));
        let column = Column {
            name,
            type_name: row.get(2),
            target,
        };
        match catalogs.last_mut() {
            Some((last, columns)) if *last == catalog => columns.push(column),
            _ => catalogs.push((catalog, vec![column])),
        }
    }
    Ok(catalogs)
}

/// The query giving a catalog's row count and the MD5 of its rows, each written as
/// [`column_text`] writes its columns, sorted; rows naming the run's own objects left out.
fn catalog_digest_sql(catalog: &str, columns: &[Column]) -> String {
    let has = |name: &str| columns.iter().any(|c| c.name == name);
    let texts: Vec<String> = columns
        .iter()
        .filter_map(|column| column_text(column, &has))
        .collect();
    let named: Vec<String> = columns
        .iter()
        .filter(|column| names_object(column))
        .filter_map(|column| column_text(column, &has))
        .map(|text| format!("coalesce({text}, '') ~ '^(role|database) sqlgate_live_'"))
        .chain(has("datname").then(|| "datname::text LIKE 'sqlgate\\_live\\_%'".to_string()))
        .collect();
    let ours = match named.is_empty() {
        true => "false".to_string(),
        false => named.join(" OR "),
    };
    format!(
        "SELECT count(*), md5(coalesce(string_agg(r, E'\\n' ORDER BY r), '')) FROM (\
         SELECT regexp_replace(concat_ws('|', {}), '{DERIVED_NAME}', '\\1_N', 'g') AS r \
         FROM pg_catalog.{} WHERE NOT ({ours})) t",
        texts.join(", "),
        quote_ident(catalog)
    )
}

/// Whether a column holds an id that [`column_text`] writes as the object it names.
fn names_object(column: &Column) -> bool {
    column.target.is_some() || matches!(column.name.as_str(), "objoid" | "objid" | "refobjid")
}

/// The text of one column of a row, without the object ids that differ between two loads of
/// the same dump; `None` for a catalog's own id (the row's other columns say what it is).
fn column_text(column: &Column, has: &dyn Fn(&str) -> bool) -> Option<String> {
    let name = quote_ident(&column.name);
    let text = match (column.name.as_str(), &column.target) {
        ("oid", _) => return None,
        ("objoid" | "objid", _) if has("classoid") || has("classid") => {
            let class = if has("classoid") {
                "classoid"
            } else {
                "classid"
            };
            let sub = if has("objsubid") { "objsubid" } else { "0" };
            let elsewhere = if has("dbid") {
                "dbid NOT IN (0, (SELECT d.oid FROM pg_catalog.pg_database d \
                 WHERE d.datname = current_database()))"
            } else {
                "false"
            };
            format!(
                "CASE WHEN {elsewhere} THEN 'an object of another database' \
                 ELSE {} END",
                described(class, &name, sub)
            )
        }
        ("refobjid", _) if has("refclassid") => {
            let sub = if has("refobjsubid") {
                "refobjsubid"
            } else {
                "0"
            };
            described("refclassid", &name, sub)
        }
        (_, Some((target, false))) => described(&format!("'{target}'::regclass"), &name, "0"),
        (_, Some((target, true))) => format!(
            "(SELECT string_agg({}, ',' ORDER BY o) FROM unnest({name}::oid[]) \
             WITH ORDINALITY u(e, o))",
            described(&format!("'{target}'::regclass"), "e", "0")
        ),
        _ if column.type_name == "pg_node_tree" => format!(
            "regexp_replace(regexp_replace({name}::text, '{NODE_CONSTANT}', '\\1[N]', 'g'), \
             '{NODE_ID}', 'N', 'g')"
        ),
        _ => format!("{name}::text"),
    };
    Some(text)
}

/// An id (`id`, of the class `class`, sub-object `sub`) as its number when `initdb` made it,
/// as the object it names otherwise.
fn described(class: &str, id: &str, sub: &str) -> String {
    format!(
        "CASE WHEN {id}::oid >= {FIRST_USER_OID} THEN coalesce(\
         pg_catalog.pg_describe_object({class}, {id}::oid, {sub}), 'a missing object') \
         ELSE {id}::text END"
    )
}

/// `name` as a quoted identifier.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
