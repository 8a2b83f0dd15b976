//! A table's digest from its parts (both servers), and the rows of one MariaDB / MySQL table
//! hashed on the server (`data_digest`'s MariaDB side): each row's injective text, a `FLOAT`
//! widened to a double and a system-versioned table read with its history, hashed with
//! SHA-256, sorted and hashed again.

/// One MySQL table's columns (name, type) and rows, hashed by the server.
pub(crate) struct Hashed {
    pub(crate) columns: Vec<(String, String)>,
    rows: i64,
    /// The digest of the rows' hashes in sorted order: the content.
    sorted: String,
    /// The same in the order a plain full scan returns the rows.
    pub(crate) scanned: String,
}

impl Hashed {
    /// The table's digest: its columns with their types, its row count and [`Hashed::sorted`].
    pub(crate) fn digest(&self) -> String {
        let quote = |name: &str| format!("`{}`", name.replace('`', "``"));
        let described: Vec<String> = (self.columns.iter())
            .map(|(name, kind)| format!("{} {kind}", quote(name)))
            .collect();
        table_digest(&described.join(", "), self.rows, &self.sorted)
    }
}

/// Hashes `schema.table` on `conn` (whose `group_concat_max_len` holds every row's hash): each
/// row's text is injective (each column `n` for NULL or `v` and the hex of its bytes, a `FLOAT`
/// as a double: [`exact`], joined by commas) and hashed with SHA-256.
pub(crate) fn mysql_hashed(
    conn: &mut mysql::Conn,
    schema: &str,
    table: &str,
) -> Result<Hashed, MysqlFailure> {
    use mysql::prelude::Queryable;
    let columns: Vec<(String, String)> = conn.exec(
        "SELECT column_name, column_type FROM information_schema.columns \
         WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
        (schema, table),
    )?;
    if columns.is_empty() {
        return Ok(Hashed {
            columns,
            rows: 0,
            sorted: String::new(),
            scanned: String::new(),
        });
    }
    let quote = |name: &str| format!("`{}`", name.replace('`', "``"));
    let source = format!(
        "{}.{}{}",
        quote(schema),
        quote(table),
        versions(conn, schema, table)?
    );
    let fields: Vec<String> = columns
        .iter()
        .map(|(name, column_type)| {
            format!(
                "IFNULL(CONCAT('v', HEX(CAST({} AS BINARY))), 'n')",
                exact(&quote(name), column_type)
            )
        })
        .collect();
    // The same hashes twice: sorted (the content), then as a plain full scan returns the
    // rows (`GROUP_CONCAT` without `ORDER BY` appends them in the order they are read).
    let sql = |order: &str| {
        format!(
            "SELECT n, LENGTH(g), SHA2(IFNULL(g, ''), 256) FROM (SELECT COUNT(*) n, \
             GROUP_CONCAT(h {order} SEPARATOR '') g FROM (SELECT SHA2(CONCAT_WS(',', {}), 256) h \
             FROM {source}) r) s",
            fields.join(", "),
        )
    };
    let mut hashed = Vec::new();
    for order in ["ORDER BY h", ""] {
        let (rows, length, rows_digest): (i64, Option<i64>, String) = conn
            .query_first(sql(order))?
            .unwrap_or((0, None, String::new()));
        if length.unwrap_or(0) != rows * 64 {
            return Err(MysqlFailure::Truncated(format!("{schema}.{table}")));
        }
        hashed.push((rows, rows_digest));
    }
    let (_, scanned) = hashed.pop().unwrap_or_default();
    let (rows, sorted) = hashed.pop().unwrap_or_default();
    Ok(Hashed {
        columns,
        rows,
        sorted,
        scanned,
    })
}

/// The clause that makes a MariaDB system-versioned table read its history rows too
/// (` FOR SYSTEM_TIME ALL`; none for any other table): a value changed and changed back leaves
/// the current rows as they were and history rows a gold reads with `FOR SYSTEM_TIME ALL` (red
/// team round 37). A base database holds no such table (the start-up check refuses one); an
/// item's preprocess may make one on its clone.
fn versions(
    conn: &mut mysql::Conn,
    schema: &str,
    table: &str,
) -> Result<&'static str, mysql::Error> {
    use mysql::prelude::Queryable;
    let kind: Option<String> = conn.exec_first(
        "SELECT table_type FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
        (schema, table),
    )?;
    Ok(match kind.as_deref() {
        Some("SYSTEM VERSIONED") => " FOR SYSTEM_TIME ALL",
        _ => "",
    })
}

/// A column's value as text that tells every two stored values apart: a `FLOAT` as a double
/// (as text a `FLOAT` has 6 significant digits, so 4.5 and 4.5000005 read the same while
/// `level > 4.5` tells them apart: red team round 36), any other as it is.
fn exact(column: &str, column_type: &str) -> String {
    match column_type.to_ascii_lowercase().starts_with("float") {
        true => format!("({column} + 0e0)"),
        false => column.to_string(),
    }
}

/// One table's digest from what the server computed.
pub(crate) fn table_digest(columns: &str, rows: i64, rows_digest: &str) -> String {
    crate::util::digest::content_hash([
        columns.as_bytes(),
        rows.to_string().as_bytes(),
        rows_digest.as_bytes(),
    ])
}

/// Why a MySQL digest failed.
pub(crate) enum MysqlFailure {
    Server(mysql::Error),
    Truncated(String),
}

impl MysqlFailure {
    /// What the failure says.
    pub(crate) fn into_text(self) -> String {
        match self {
            MysqlFailure::Server(e) => mysql_error(&e),
            MysqlFailure::Truncated(table) => format!(
                "`{table}`: the server cut the row hashes short (`group_concat_max_len`); the \
                 digest would cover only part of the table"
            ),
        }
    }
}

impl From<mysql::Error> for MysqlFailure {
    fn from(error: mysql::Error) -> Self {
        MysqlFailure::Server(error)
    }
}

/// A MariaDB / MySQL error as a digest failure names it.
pub(crate) fn mysql_error(error: &mysql::Error) -> String {
    match error {
        mysql::Error::MySqlError(e) => e.message.clone(),
        other => other.to_string(),
    }
}
