//! A database's schema as EvalBench's SQLite driver reads it after a `ddl` item (`get_metadata`:
//! SQLAlchemy 2.0's `MetaData.reflect`): each table of the main schema (not `sqlite_*`, not
//! views) with its columns in order, each column's name and the text of the SQLAlchemy type its
//! declared type reflects to (`str(column.type)`). A reflection error leaves it empty, as
//! EvalBench's `except: pass` does; the one SQLite can raise is a foreign key to a table that is
//! not there.

use rusqlite::Connection;
use std::collections::BTreeMap;

/// Table name to its columns, each `(name, type text)`.
pub type Schema = BTreeMap<String, Vec<(String, String)>>;

/// The schema of `conn`'s main database; an SQLite error while reading it is returned.
pub fn metadata(conn: &Connection) -> rusqlite::Result<Schema> {
    let mut names = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite~_%' ESCAPE '~' ORDER BY name",
    )?;
    let tables: Vec<String> = names
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut schema = Schema::new();
    for table in &tables {
        if refers_to_a_missing_table(conn, table, &tables)? {
            return Ok(Schema::new());
        }
        schema.insert(table.clone(), columns(conn, table)?);
    }
    Ok(schema)
}

/// SQLAlchemy reflects the tables a foreign key names, and fails when one is absent.
fn refers_to_a_missing_table(
    conn: &Connection,
    table: &str,
    tables: &[String],
) -> rusqlite::Result<bool> {
    let mut keys = conn.prepare("SELECT \"table\" FROM pragma_foreign_key_list(?1)")?;
    let referred: Vec<String> = keys
        .query_map([table], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(referred
        .iter()
        .any(|r| !tables.iter().any(|t| t.eq_ignore_ascii_case(r))))
}

/// The table's columns as SQLAlchemy's `get_columns` lists them (`table_xinfo`, hidden columns
/// of virtual tables left out, generated columns' `GENERATED` / `ALWAYS` words dropped).
fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<(String, String)>> {
    let mut info = conn.prepare("SELECT name, type, hidden FROM pragma_table_xinfo(?1)")?;
    let rows = info.query_map([table], |row| {
        let (name, declared, hidden): (String, String, i64) =
            (row.get(0)?, row.get(1)?, row.get(2)?);
        Ok((name, declared, hidden))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (name, declared, hidden) = row?;
        if hidden == 1 {
            continue;
        }
        let mut declared = declared.to_uppercase();
        if hidden != 0 {
            declared = declared
                .replace("GENERATED", "")
                .replace("ALWAYS", "")
                .trim()
                .to_string();
        }
        out.push((name, sqlalchemy_type(&declared)));
    }
    Ok(out)
}

/// How a type renders its reflected arguments.
#[derive(Clone, Copy)]
enum Family {
    /// No argument is shown (`INTEGER`, `FLOAT`, `DATE`, ...).
    Plain,
    /// `String(length, collation)`: `X(n)`, `X(n) COLLATE "c"`; more arguments are refused.
    Text,
    /// `Numeric(precision, scale, ...)`: `X(p)`, `X(p, s)` for up to four arguments.
    Numeric,
}

/// SQLAlchemy 2.0's SQLite `ischema_names`, each with the type text and family.
const ISCHEMA: [(&str, &str, Family); 25] = [
    ("BIGINT", "BIGINT", Family::Plain),
    ("BLOB", "BLOB", Family::Plain),
    ("BOOL", "BOOLEAN", Family::Plain),
    ("BOOLEAN", "BOOLEAN", Family::Plain),
    ("CHAR", "CHAR", Family::Text),
    ("DATE", "DATE", Family::Plain),
    ("DATE_CHAR", "DATE", Family::Plain),
    ("DATETIME", "DATETIME", Family::Plain),
    ("DATETIME_CHAR", "DATETIME", Family::Plain),
    ("DOUBLE", "DOUBLE", Family::Plain),
    ("DECIMAL", "DECIMAL", Family::Numeric),
    ("FLOAT", "FLOAT", Family::Plain),
    ("INT", "INTEGER", Family::Plain),
    ("INTEGER", "INTEGER", Family::Plain),
    ("JSON", "JSON", Family::Plain),
    ("NUMERIC", "NUMERIC", Family::Numeric),
    ("REAL", "REAL", Family::Plain),
    ("SMALLINT", "SMALLINT", Family::Plain),
    ("TEXT", "TEXT", Family::Text),
    ("TIME", "TIME", Family::Plain),
    ("TIME_CHAR", "TIME", Family::Plain),
    ("TIMESTAMP", "TIMESTAMP", Family::Plain),
    ("VARCHAR", "VARCHAR", Family::Text),
    ("NVARCHAR", "NVARCHAR", Family::Text),
    ("NCHAR", "NCHAR", Family::Text),
];

/// `str()` of the SQLAlchemy type an upper-cased declared type reflects to
/// (`_resolve_type_affinity`): the leading words and the first parenthesis, the words looked up
/// in `ischema_names`, else SQLite's affinity rules on them; the digit runs of the parenthesis
/// are the type's arguments.
pub fn sqlalchemy_type(declared: &str) -> String {
    let words_end = declared
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == ' '))
        .map_or(declared.len(), |(at, _)| at);
    let words = &declared[..words_end];
    let rest = &declared[words_end..];
    let args = match words.is_empty() {
        true => Some(Vec::new()),
        false => parenthesis(rest).map(digit_runs),
    };
    let (name, family) = resolve(words);
    let Some(name) = name else {
        return "NULL".into();
    };
    render(name, family, args.as_deref())
}

/// The words' type: the `ischema_names` entry, else the affinity rules (`None`: `NullType`).
fn resolve(words: &str) -> (Option<&'static str>, Family) {
    if let Some((_, name, family)) = ISCHEMA.iter().find(|(key, _, _)| *key == words) {
        return (Some(name), *family);
    }
    if words.contains("INT") {
        (Some("INTEGER"), Family::Plain)
    } else if ["CHAR", "CLOB", "TEXT"].iter().any(|w| words.contains(w)) {
        (Some("TEXT"), Family::Text)
    } else if words.contains("BLOB") || words.is_empty() {
        (None, Family::Plain)
    } else if ["REAL", "FLOA", "DOUB"].iter().any(|w| words.contains(w)) {
        (Some("REAL"), Family::Plain)
    } else {
        (Some("NUMERIC"), Family::Numeric)
    }
}

/// The text of `(...)` at the start of `rest` up to the first `)` (the regex `(\(.*?\))?`, `.`
/// not crossing a newline).
fn parenthesis(rest: &str) -> Option<&str> {
    let inner = rest.strip_prefix('(')?;
    let end = inner.find(')')?;
    (!inner[..end].contains('\n')).then_some(&inner[..end])
}

/// Python's `int()` of each `\d+` run, as decimal text.
fn digit_runs(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|run| !run.is_empty())
        .map(|run| {
            let trimmed = run.trim_start_matches('0');
            if trimmed.is_empty() { "0" } else { trimmed }.to_string()
        })
        .collect()
}

fn render(name: &str, family: Family, args: Option<&[String]>) -> String {
    match (family, args.unwrap_or_default()) {
        (Family::Text, [length]) => format!("{name}({length})"),
        (Family::Text, [length, collation]) => format!("{name}({length}) COLLATE \"{collation}\""),
        (Family::Numeric, [precision]) => format!("{name}({precision})"),
        (Family::Numeric, [precision, scale, ..]) if args.is_some_and(|a| a.len() <= 4) => {
            format!("{name}({precision}, {scale})")
        }
        _ => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_types_render_as_sqlalchemy_renders_them() {
        for (declared, expected) in [
            ("INT", "INTEGER"),
            ("NVARCHAR (50)", "TEXT(50)"),
            ("NUMERIC( 10 , 2 )", "NUMERIC(10, 2)"),
            ("VARCHAR(1E3)", "VARCHAR(1) COLLATE \"3\""),
            ("FLOATING POINT", "INTEGER"),
            ("", "NULL"),
            ("MONEY", "NUMERIC"),
        ] {
            assert_eq!(sqlalchemy_type(declared), expected, "{declared}");
        }
    }
}
