//! Whether a preprocess can leave state on its session (red team rounds 41 to 47). Under the
//! sound profiles the preprocess runs on a session of its own, and the prediction and the checks
//! on new ones, so whatever the preprocess left on its session (a temporary object, a variable, a
//! setting, a trigger of its session) the official flow has and the sound flow does not. Round
//! 47 showed that no check of that state's effect is enough: a prediction can remove the state
//! first, so that both flows pass it. So an item with a preprocess whose checks run on new
//! sessions is judged only when every preprocess statement is of a kind that leaves nothing on its
//! session, read from the parsed statement ([`refusal`]):
//! - a `CREATE TABLE` of columns of built-in types, with literal (or clock) defaults, keys and
//!   references, not temporary, not in a temporary schema, not made from a query, a template, a
//!   parent table, not partitioned nor a partition;
//! - a `CREATE INDEX` on plain columns, not partial, not in a temporary schema;
//! - a `CREATE VIEW`, `CREATE FUNCTION`, `CREATE PROCEDURE`, `CREATE SEQUENCE` or `CREATE TYPE`, not
//!   temporary (nor materialized): made, they run nothing, and whoever reads them later runs
//!   them on that reader's session, the same in both flows;
//! - a `DROP TABLE` of base tables (the preprocess's session starts with no temporary one);
//! - an `ANALYZE` of a table the preprocess made (whose indexes are on plain columns);
//! - an `INSERT` of literal rows into a table an earlier `CREATE TABLE` of the same preprocess
//!   made (no `IF NOT EXISTS`), so no trigger, rule, default or check of the database's runs,
//!   with no `ON CONFLICT` / `ON DUPLICATE KEY`, `IGNORE`, `RETURNING`, placeholder or variable.
//!
//! A preprocess statement that fails at run time makes the item not judged as well (the sound
//! judges check it), so a table the preprocess says it made is one it made. What such a
//! preprocess still leaves is its session's counters (the last insert id, change counts), which
//! the gold-effect comparison covers for the gold and a test case's own query reads on its new
//! session: a documented limit (docs/SECURITY.md). A text the parser's lexer and the server's may
//! read otherwise is refused (whitespace outside ASCII, control characters, MariaDB's executable
//! comments: red team round 48; a backslash on the servers, whose settings decide whether it
//! escapes).

use crate::input::livesql::LiveItem;
use sqlparser::ast::{
    ArrayElemTypeDef, ColumnDef, ColumnOption, CreateIndex, CreateTable, DataType, Expr,
    FunctionArg, FunctionArgExpr, FunctionArguments, Ident, IndexColumn, Insert, ObjectName,
    ObjectNamePart, ObjectType, SequenceOptions, SetExpr, Statement, TableConstraint, TableObject,
    UnaryOperator, Value,
};
use sqlparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;
use std::collections::BTreeSet;

/// The engine a preprocess runs on: its lexer and grammar, and what a type name may be there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// SQLite: any type name (no user types).
    Sqlite,
    /// PostgreSQL: only built-in types (a domain's check runs on insert).
    Postgres,
    /// MariaDB / MySQL: any type name (no user types); executable comments refused.
    Mysql,
}

impl Engine {
    /// The parser's dialect for this engine's lexer.
    fn dialect(self) -> Box<dyn Dialect> {
        match self {
            Engine::Sqlite => Box::new(SQLiteDialect {}),
            Engine::Postgres => Box::new(PostgreSqlDialect {}),
            Engine::Mysql => Box::new(MySqlDialect {}),
        }
    }
}

/// Whether an item's prediction or checks run on new sessions after a preprocess on `engine`
/// (on SQLite the prediction always does; on a server, an item with test cases), so that what
/// the preprocess leaves on its session could decide them: the official flow keeps that state
/// for the prediction and the checks, the sound flow has none of it (red team rounds 46 and 47:
/// a temporary view shadowing a table, a variable a test compares with, a temporary trigger, a
/// view's check option, `sql_safe_updates`; a wrong query right only without a shadowing view).
pub fn preprocess_bound(item: &LiveItem, engine: Engine) -> bool {
    let apart = engine == Engine::Sqlite || !item.test_cases.is_empty();
    !item.preprocess_sql.is_empty() && apart
}

/// PostgreSQL's built-in type names, as the parser renders them (lower case, without their
/// length, precision or array brackets): each a keyword or a type of `pg_catalog`, which comes
/// first on the search path (a database whose search path names it is refused at start), so no
/// domain or type of the database's, or of the preprocess's, stands for it. A name the parser
/// knows from another dialect (`STRING`, `INT64`, `DATETIME`) is none of them: PostgreSQL looks
/// it up and may find a domain whose check runs on insert (red team round 50).
const POSTGRES_BUILT_IN: [&str; 62] = [
    "smallint",
    "integer",
    "int",
    "int2",
    "int4",
    "int8",
    "bigint",
    "real",
    "float",
    "float4",
    "float8",
    "double precision",
    "numeric",
    "decimal",
    "boolean",
    "bool",
    "text",
    "varchar",
    "character varying",
    "char varying",
    "char",
    "character",
    "bpchar",
    "date",
    "time",
    "timetz",
    "time with time zone",
    "time without time zone",
    "timestamp",
    "timestamptz",
    "timestamp with time zone",
    "timestamp without time zone",
    "interval",
    "bytea",
    "json",
    "jsonb",
    "uuid",
    "money",
    "inet",
    "cidr",
    "macaddr",
    "macaddr8",
    "xml",
    "bit",
    "varbit",
    "bit varying",
    "tsvector",
    "tsquery",
    "point",
    "line",
    "lseg",
    "box",
    "path",
    "polygon",
    "circle",
    "serial",
    "serial2",
    "serial4",
    "serial8",
    "smallserial",
    "bigserial",
    "oid",
];

/// Clock functions a default or a row may call: built in, reading no session state that a
/// whitelisted preprocess can set.
const CLOCKS: [&str; 6] = [
    "current_timestamp",
    "current_date",
    "current_time",
    "localtimestamp",
    "localtime",
    "now",
];

/// Why the preprocess `sqls` may leave state on its session on `engine` (its first statement
/// outside the whitelist, by number), `None` when every statement is of a kind that leaves
/// nothing there.
pub fn refusal(sqls: &[String], engine: Engine) -> Option<String> {
    let dialect = engine.dialect();
    let mut made = Made {
        engine,
        tables: BTreeSet::new(),
    };
    for (i, sql) in sqls.iter().enumerate() {
        if let Err(why) = statements_leave_nothing(sql, engine, dialect.as_ref(), &mut made) {
            return Some(format!("preprocess statement {} {why}", i + 1));
        }
    }
    None
}

/// The tables the preprocess made so far (by `CREATE TABLE` without `IF NOT EXISTS`, not dropped
/// since), by their names as `engine` resolves them.
struct Made {
    /// How the engine folds a name's case.
    engine: Engine,
    /// Each made table's name, part by part ([`Made::key`]).
    tables: BTreeSet<Vec<String>>,
}

impl Made {
    /// A name as the engine resolves it, part by part (so a quoted part holding a dot, `"a.b"`,
    /// is not the name `a.b`: red team round 50), each part's quotes taken off: PostgreSQL
    /// folds an unquoted part's ASCII letters to lower case (`É` stays: round 49); the others
    /// keep the case as written (MariaDB's table names are case-sensitive, and a name spelt
    /// otherwise on SQLite is refused, never matched).
    fn key(&self, name: &ObjectName) -> Vec<String> {
        let part = |part: &ObjectNamePart| match part.as_ident() {
            Some(ident) if self.engine == Engine::Postgres && ident.quote_style.is_none() => {
                ident.value.to_ascii_lowercase()
            }
            Some(ident) => ident.value.clone(),
            None => part.to_string(),
        };
        name.0.iter().map(part).collect()
    }

    /// Records the table `name` as made, when it is unqualified and, on PostgreSQL, not named
    /// like a catalog (`pg_...`: `pg_catalog` comes first on the search path, so an `INSERT`
    /// into that name reaches the catalog, not the table made) or another database's (a
    /// qualifier may name the base database; red team round 53): an `INSERT` into any other
    /// name is refused.
    fn add(&mut self, name: &ObjectName) {
        let key = self.key(name);
        let catalog_like = self.engine == Engine::Postgres
            && key
                .iter()
                .any(|part| part.to_ascii_lowercase().starts_with("pg_"));
        if key.len() == 1 && !catalog_like {
            self.tables.insert(key);
        }
    }

    /// Forgets every made table a `DROP TABLE name` may have dropped: any whose last part holds
    /// the dropped one's in any case (a table of that name may be made again as a view, through
    /// which an `INSERT` reaches the database's own tables).
    fn drop(&mut self, name: &ObjectName) {
        let last = |key: &[String]| key.last().map(|p| p.to_lowercase()).unwrap_or_default();
        let dropped = last(&self.key(name));
        self.tables.retain(|key| !last(key).contains(&dropped));
    }

    /// Whether `name` is a table the preprocess made.
    fn holds(&self, name: &ObjectName) -> bool {
        self.tables.contains(&self.key(name))
    }
}

/// `Ok` when every statement of `sql` leaves nothing on its session; the tables made added to
/// `made`.
fn statements_leave_nothing(
    sql: &str,
    engine: Engine,
    dialect: &dyn Dialect,
    made: &mut Made,
) -> Result<(), String> {
    if engine == Engine::Mysql && has_executable_comment(sql) {
        return Err("holds an executable comment (`/*!` or `/*M!`)".into());
    }
    if engine != Engine::Sqlite && sql.contains('\\') {
        return Err(
            "holds a backslash, an escape or not as the server's settings say \
                    (`NO_BACKSLASH_ESCAPES`, `standard_conforming_strings`)"
                .into(),
        );
    }
    if let Some(odd) = sql.chars().find(|c| lexed_otherwise(*c)) {
        return Err(format!(
            "holds the character U+{:04X}, which the parser and the server may read otherwise",
            odd as u32
        ));
    }
    let statements = Parser::parse_sql(dialect, sql)
        .map_err(|e| format!("does not parse as a whitelisted statement ({e})"))?;
    for statement in &statements {
        leaves_nothing(statement, engine, made)?;
    }
    Ok(())
}

/// Whether the parser's lexer and a server's may read `c` otherwise: whitespace outside ASCII
/// (the parser ends a MariaDB `--` comment's dashes with it, MariaDB reads it as part of a name:
/// red team round 48) and control characters but tab, line feed and carriage return.
fn lexed_otherwise(c: char) -> bool {
    let odd_space = c.is_whitespace() && !c.is_ascii();
    let odd_control = c.is_control() && !matches!(c, '\t' | '\n' | '\r');
    odd_space || odd_control
}

/// Whether `sql` holds a comment MariaDB or MySQL runs (`/*!...*/`, `/*M!...*/`), wherever it
/// is: the parser reads the first as text and the second as a comment, and the server may run
/// either otherwise (a version the parser does not check).
fn has_executable_comment(sql: &str) -> bool {
    let lower = sql.to_lowercase();
    lower.contains("/*!") || lower.contains("/*m!")
}

/// `Ok` when `statement` is of a whitelisted kind; `made` gains the table it makes.
fn leaves_nothing(statement: &Statement, engine: Engine, made: &mut Made) -> Result<(), String> {
    match statement {
        Statement::CreateTable(table) => {
            plain_table(table, engine)?;
            if !table.if_not_exists {
                made.add(&table.name);
            }
            Ok(())
        }
        Statement::CreateIndex(index) => plain_index(index),
        Statement::CreateView(view) => {
            let temporary = view.temporary || temporary_schema(&view.name);
            let runs = view.materialized || view.to.is_some();
            match (temporary, runs) {
                (false, false) => Ok(()),
                (true, _) => Err("makes a temporary view".into()),
                (_, true) => Err("makes a materialized view, whose query runs now".into()),
            }
        }
        Statement::Analyze(analyze) => match &analyze.table_name {
            Some(name) if made.holds(name) => Ok(()),
            _ => Err(
                "analyzes a table the preprocess did not make (its indexes' expressions run)"
                    .into(),
            ),
        },
        Statement::CreateFunction(function) => stored(
            function.temporary || temporary_schema(&function.name),
            "function",
        ),
        Statement::CreateProcedure { name, .. } => stored(temporary_schema(name), "procedure"),
        Statement::CreateType { name, .. } => stored(temporary_schema(name), "type"),
        Statement::CreateDomain(domain) => stored(temporary_schema(&domain.name), "domain"),
        Statement::CreateSequence {
            temporary,
            name,
            sequence_options,
            ..
        } if uncached(sequence_options) => stored(*temporary || temporary_schema(name), "sequence"),
        Statement::Insert(insert) => literal_insert(insert, made, engine),
        Statement::Drop {
            object_type: ObjectType::Table,
            temporary: false,
            names,
            ..
        } if !names.iter().any(temporary_schema) => {
            names.iter().for_each(|name| made.drop(name));
            Ok(())
        }
        other => Err(format!(
            "is not of a kind that leaves nothing on its session (`CREATE TABLE`, `CREATE INDEX`, \
             `CREATE VIEW`, `CREATE FUNCTION`, `CREATE PROCEDURE`, `CREATE SEQUENCE`, `CREATE \
             TYPE`, `CREATE DOMAIN`, `DROP \
             TABLE`, `INSERT` of literal rows, `ANALYZE` of a table it made): `{}`",
            first_words(other)
        )),
    }
}

/// `Ok` for an object stored in the database (a function, a procedure, a sequence), which runs
/// nothing when it is made; an error naming the `kind` of a temporary one.
fn stored(temporary: bool, kind: &str) -> Result<(), String> {
    match temporary {
        true => Err(format!("makes a temporary {kind}")),
        false => Ok(()),
    }
}

/// The statement's first three words, to name it in a message (here and on PostgreSQL's fast
/// path).
pub(super) fn first_words(statement: &Statement) -> String {
    let text = statement.to_string();
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `Ok` when `table` makes a base table from its columns alone.
fn plain_table(table: &CreateTable, engine: Engine) -> Result<(), String> {
    let partitioned =
        table.partition_of.is_some() || table.partition_by.is_some() || table.for_values.is_some();
    let refused = [
        (
            table.temporary || table.global.is_some(),
            "a temporary table",
        ),
        (table.query.is_some(), "a table from a query"),
        (
            table.like.is_some() || table.clone.is_some(),
            "a table copied from another",
        ),
        (table.inherits.is_some(), "a table with a parent"),
        (
            partitioned,
            "a partitioned table or a partition (its key and bounds are expressions PostgreSQL \
             runs: red team round 49)",
        ),
        (table.on_commit.is_some(), "a table with `ON COMMIT`"),
        (table.or_replace, "`CREATE OR REPLACE`"),
        (
            temporary_schema(&table.name),
            "a table in a temporary schema",
        ),
    ];
    if let Some((_, what)) = refused.iter().find(|(refused, _)| *refused) {
        return Err(format!("makes {what}"));
    }
    for column in &table.columns {
        plain_column(column, engine)?;
    }
    table.constraints.iter().try_for_each(plain_constraint)
}

/// Whether `name` is in SQLite's `temp` schema or a PostgreSQL `pg_temp` one.
fn temporary_schema(name: &ObjectName) -> bool {
    let qualifiers = &name.0[..name.0.len().saturating_sub(1)];
    qualifiers.iter().any(|part| {
        let schema = part.as_ident().map(|i| i.value.to_lowercase());
        schema.is_some_and(|s| s == "temp" || s == "temporary" || s.starts_with("pg_temp"))
    })
}

/// Whether a sequence's options leave no values cached on the session that takes them: no
/// `CACHE` but `CACHE 1` (PostgreSQL hands each session its own cache, so the preprocess's
/// session holds values another session skips: red team round 52).
fn uncached(options: &[SequenceOptions]) -> bool {
    options.iter().all(|option| match option {
        SequenceOptions::Cache(Expr::Value(v)) => v.value == Value::Number("1".into(), false),
        SequenceOptions::Cache(_) => false,
        _ => true,
    })
}

/// `Ok` when `column` is of a built-in type with options that run nothing.
fn plain_column(column: &ColumnDef, engine: Engine) -> Result<(), String> {
    if engine == Engine::Postgres && !built_in_type(&column.data_type) {
        return Err(format!(
            "makes column `{}` of type `{}`, not a built-in one",
            column.name, column.data_type
        ));
    }
    for option in &column.options {
        if !plain_column_option(&option.option, engine) {
            return Err(format!(
                "gives column `{}` the option `{}`, which runs an expression",
                column.name, option.option
            ));
        }
    }
    Ok(())
}

/// Whether `data_type` is a PostgreSQL built-in type ([`POSTGRES_BUILT_IN`]), arrays of them
/// included.
fn built_in_type(data_type: &DataType) -> bool {
    match data_type {
        DataType::Array(element) => match element {
            ArrayElemTypeDef::AngleBracket(inner)
            | ArrayElemTypeDef::SquareBracket(inner, _)
            | ArrayElemTypeDef::Parenthesis(inner)
            | ArrayElemTypeDef::Qualified(inner, _) => built_in_type(inner),
            ArrayElemTypeDef::None => false,
        },
        other => POSTGRES_BUILT_IN.contains(&base_name(other).as_str()),
    }
}

/// A type's name as the parser renders it, in lower case, without its length, precision or
/// array brackets, its words single-spaced (`CHARACTER VARYING(20)`: `character varying`).
fn base_name(data_type: &DataType) -> String {
    let text = data_type.to_string().to_ascii_lowercase();
    let head = text.split(['(', '[']).next().unwrap_or_default();
    head.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a typed literal's type (`DATE '...'`) is built in on `engine`: on PostgreSQL one of
/// [`POSTGRES_BUILT_IN`] but the `serial` names, which are no types outside a column's
/// definition (a domain of that name would be found).
fn built_in_value_type(data_type: &DataType, engine: Engine) -> bool {
    let serial = base_name(data_type).contains("serial");
    engine != Engine::Postgres || (built_in_type(data_type) && !serial)
}

/// Whether a column option runs nothing on insert (a literal or clock default, a key, a
/// reference, a collation, a comment, an identity without an expression).
fn plain_column_option(option: &ColumnOption, engine: Engine) -> bool {
    match option {
        ColumnOption::Null
        | ColumnOption::NotNull
        | ColumnOption::PrimaryKey(_)
        | ColumnOption::Unique(_)
        | ColumnOption::ForeignKey(_)
        | ColumnOption::CharacterSet(_)
        | ColumnOption::Collation(_)
        | ColumnOption::Comment(_)
        | ColumnOption::Identity(_) => true,
        ColumnOption::Default(value) => literal(value, engine),
        ColumnOption::Generated {
            generation_expr,
            sequence_options,
            ..
        } => generation_expr.is_none() && uncached(sequence_options.as_deref().unwrap_or(&[])),
        ColumnOption::DialectSpecific(tokens) => tokens.iter().all(auto_increment),
        _ => false,
    }
}

/// Whether `token` is the `AUTO_INCREMENT` (MariaDB / MySQL) or `AUTOINCREMENT` (SQLite) word.
fn auto_increment(token: &Token) -> bool {
    matches!(token, Token::Word(word)
        if ["auto_increment", "autoincrement"].contains(&word.value.to_lowercase().as_str()))
}

/// `Ok` when a table constraint is a key or a reference on plain columns (no `CHECK`, which
/// runs an expression on insert, no exclusion constraint).
fn plain_constraint(constraint: &TableConstraint) -> Result<(), String> {
    let columns = match constraint {
        TableConstraint::PrimaryKey(key) => &key.columns,
        TableConstraint::Unique(key) => &key.columns,
        TableConstraint::Index(index) => &index.columns,
        TableConstraint::ForeignKey(_) => return Ok(()),
        other => return Err(format!("has the constraint `{other}`")),
    };
    plain_columns(columns)
}

/// `Ok` when every indexed column is a plain column, with no operator class of its own.
fn plain_columns(columns: &[IndexColumn]) -> Result<(), String> {
    for column in columns {
        let plain = matches!(column.column.expr, Expr::Identifier(_));
        if !plain || column.operator_class.is_some() {
            return Err(format!("indexes `{column}`, not a plain column"));
        }
    }
    Ok(())
}

/// `Ok` when `index` is on plain columns, whole (not partial), outside a temporary schema.
fn plain_index(index: &CreateIndex) -> Result<(), String> {
    let in_temporary =
        (index.name.as_ref()).is_some_and(temporary_schema) || temporary_schema(&index.table_name);
    if in_temporary {
        return Err("makes an index in a temporary schema".into());
    }
    if index.predicate.is_some() {
        return Err("makes a partial index, whose predicate runs on insert".into());
    }
    plain_columns(&index.columns)
}

/// `Ok` when `insert` puts literal rows into a table of `made`, and nothing more.
fn literal_insert(insert: &Insert, made: &Made, engine: Engine) -> Result<(), String> {
    let TableObject::TableName(name) = &insert.table else {
        return Err("inserts into a table function".into());
    };
    if !made.holds(name) {
        return Err(format!(
            "inserts into `{name}`, not a table an earlier statement of the preprocess made \
             (the database's own table may have triggers, rules or defaults that run)"
        ));
    }
    let extras = [
        (
            insert.or.is_some() || insert.replace_into,
            "`OR` / `REPLACE`",
        ),
        (insert.ignore, "`IGNORE`"),
        (insert.on.is_some(), "`ON CONFLICT` / `ON DUPLICATE KEY`"),
        (
            insert.returning.is_some() || insert.output.is_some(),
            "`RETURNING`",
        ),
        (!insert.assignments.is_empty(), "`SET` assignments"),
        (insert.priority.is_some(), "a priority"),
        (insert.insert_alias.is_some(), "a row alias"),
        (!insert.optimizer_hints.is_empty(), "optimizer hints"),
        (
            insert.partitioned.is_some() || insert.overwrite,
            "partitions",
        ),
    ];
    if let Some((_, what)) = extras.iter().find(|(has, _)| *has) {
        return Err(format!("inserts with {what}"));
    }
    literal_rows(insert, engine)
}

/// `Ok` when the insert's source is `VALUES` of literal rows alone.
fn literal_rows(insert: &Insert, engine: Engine) -> Result<(), String> {
    let Some(source) = &insert.source else {
        return Err("inserts no `VALUES`".into());
    };
    let bare = source.with.is_none()
        && source.order_by.is_none()
        && source.limit_clause.is_none()
        && source.fetch.is_none()
        && source.locks.is_empty();
    let SetExpr::Values(values) = source.body.as_ref() else {
        return Err("inserts the rows of a query, not `VALUES`".into());
    };
    if !bare {
        return Err("inserts `VALUES` with query clauses".into());
    }
    let rows = values.rows.iter().flat_map(|row| row.iter());
    match rows.into_iter().find(|value| !literal(value, engine)) {
        Some(value) => Err(format!("inserts `{value}`, not a literal")),
        None => Ok(()),
    }
}

/// Whether `expr` is a literal (not a placeholder), a signed number, a typed string (of a
/// built-in type on PostgreSQL), or a call of a built-in clock ([`CLOCKS`]) with no argument but
/// a precision.
fn literal(expr: &Expr, engine: Engine) -> bool {
    match expr {
        Expr::Value(value) => !matches!(value.value, Value::Placeholder(_)),
        Expr::TypedString(typed) => built_in_value_type(&typed.data_type, engine),
        Expr::Nested(inner) => literal(inner, engine),
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => matches!(expr.as_ref(), Expr::Value(v) if matches!(v.value, Value::Number(..))),
        Expr::Function(function) => {
            let precision_at_most = match &function.args {
                FunctionArguments::None => true,
                FunctionArguments::List(list) => match list.args.as_slice() {
                    [] => true,
                    [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] => {
                        matches!(v.value, Value::Number(..))
                    }
                    _ => false,
                },
                FunctionArguments::Subquery(_) => false,
            };
            let bare = function.over.is_none() && function.filter.is_none();
            let looked_up =
                engine == Engine::Postgres && function.name.to_string().eq_ignore_ascii_case("now");
            let called_plainly = !looked_up || no_arguments(&function.args);
            precision_at_most && bare && called_plainly && clock(&function.name)
        }
        Expr::Identifier(ident) => clock_ident(ident),
        _ => false,
    }
}

/// Whether a call passes no argument (`now()`: PostgreSQL's own takes none, so `now(3)` is
/// looked up on the search path and finds a function of the database's or the preprocess's:
/// red team round 51; the keyword clocks take a precision without any lookup).
fn no_arguments(arguments: &FunctionArguments) -> bool {
    match arguments {
        FunctionArguments::None => true,
        FunctionArguments::List(list) => list.args.is_empty(),
        FunctionArguments::Subquery(_) => false,
    }
}

/// Whether `name` is one unqualified clock function of [`CLOCKS`].
fn clock(name: &ObjectName) -> bool {
    match name.0.as_slice() {
        [part] => part.as_ident().is_some_and(clock_ident),
        _ => false,
    }
}

/// Whether `ident` names a clock of [`CLOCKS`] unquoted.
fn clock_ident(ident: &Ident) -> bool {
    ident.quote_style.is_none() && CLOCKS.contains(&ident.value.to_lowercase().as_str())
}

#[cfg(test)]
mod tests;
