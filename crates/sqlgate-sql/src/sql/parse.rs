//! The official Spider parser (`process_sql.get_sql`), reproduced: the same global alias scan,
//! the same column resolution against the FROM tables, the same acceptance and the same failures
//! (SELECT aliases, comma joins, LEFT JOIN and `a=b` without spaces are rejected, as the published
//! exact-match numbers assume). Trailing tokens after a complete query are ignored, as there.

use super::ir::*;
use super::tokens::tokenize;
use super::SqlError;
use crate::sql::schema::Schema;
use std::collections::HashMap;

/// Nesting depth beyond which a query is rejected instead of recursing further.
const MAX_DEPTH: usize = 64;

const CLAUSE_KEYWORDS: [&str; 9] = [
    "select",
    "from",
    "where",
    "group",
    "order",
    "limit",
    "intersect",
    "union",
    "except",
];
const JOIN_KEYWORDS: [&str; 3] = ["join", "on", "as"];

/// Parses `query` against `schema` into the Spider structure.
pub fn parse_spider(query: &str, schema: &Schema) -> Result<Sql, SqlError> {
    let tokens = tokenize(query)?;
    let aliases = tables_with_alias(schema, &tokens)?;
    let parser = Parser {
        tokens: &tokens,
        aliases,
        schema,
    };
    parser.sql(0, 0).map(|(_, sql)| sql)
}

fn fail<T>(message: impl Into<String>) -> Result<T, SqlError> {
    Err(SqlError(message.into()))
}

/// `scan_alias` plus every table mapped to itself; an alias named like a table is an error.
fn tables_with_alias(
    schema: &Schema,
    tokens: &[String],
) -> Result<HashMap<String, String>, SqlError> {
    let mut aliases = HashMap::new();
    for (index, token) in tokens.iter().enumerate() {
        if token != "as" {
            continue;
        }
        let Some(alias) = tokens.get(index + 1) else {
            return fail("AS at the end of the query");
        };
        // Python's toks[-1] when AS is the first token.
        let target = if index == 0 {
            tokens.last()
        } else {
            tokens.get(index - 1)
        };
        aliases.insert(alias.clone(), target.cloned().unwrap_or_default());
    }
    for (table, _) in schema.tables() {
        if aliases.contains_key(table) {
            return fail(format!("alias {table} has the same name as a table"));
        }
        aliases.insert(table.clone(), table.clone());
    }
    Ok(aliases)
}

/// Python's `float(token)` (underscores allowed between digits).
fn python_float(token: &str) -> Option<f64> {
    let text = token.trim();
    let bytes = text.as_bytes();
    let mut cleaned = String::with_capacity(text.len());
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let between_digits = i > 0
                && bytes[i - 1].is_ascii_digit()
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !between_digits {
                return None;
            }
        } else {
            cleaned.push(b as char);
        }
    }
    let lower = cleaned.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    let named = matches!(unsigned, "inf" | "infinity" | "nan");
    let numeric = !unsigned.is_empty()
        && unsigned
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-'));
    if !(named || numeric) {
        return None;
    }
    cleaned.parse().ok()
}

/// Python's `int(token)`.
fn python_int(token: &str) -> Option<i64> {
    let text = token.trim();
    if text.contains('_') {
        python_float(text)?;
    }
    text.replace('_', "").parse().ok()
}

struct Parser<'a> {
    tokens: &'a [String],
    aliases: HashMap<String, String>,
    schema: &'a Schema,
}

type Parsed<T> = Result<(usize, T), SqlError>;

impl<'a> Parser<'a> {
    fn token(&self, index: usize) -> Result<&'a str, SqlError> {
        self.tokens
            .get(index)
            .map(String::as_str)
            .ok_or_else(|| SqlError("unexpected end of query".into()))
    }

    fn is(&self, index: usize, expected: &str) -> bool {
        self.tokens.get(index).is_some_and(|t| t == expected)
    }

    fn expect(&self, index: usize, expected: &str) -> Result<(), SqlError> {
        match self.token(index)? {
            token if token == expected => Ok(()),
            token => fail(format!("expected `{expected}`, found `{token}`")),
        }
    }

    fn alias(&self, name: &str) -> Result<&str, SqlError> {
        self.aliases
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| SqlError(format!("unknown table or alias `{name}`")))
    }

    fn column_id(&self, table: &str, column: &str) -> Option<String> {
        let columns = self.schema.columns(table)?;
        columns
            .iter()
            .any(|c| c == column)
            .then(|| format!("__{table}.{column}__"))
    }

    fn col(&self, index: usize, default_tables: &[String]) -> Parsed<String> {
        let token = self.token(index)?;
        if token == "*" {
            return Ok((index + 1, "__all__".into()));
        }
        if token.contains('.') {
            let parts: Vec<&str> = token.split('.').collect();
            let [alias, column] = parts[..] else {
                return fail(format!("bad column `{token}`"));
            };
            let table = self.alias(alias)?;
            return match self.column_id(table, column) {
                Some(id) => Ok((index + 1, id)),
                None => fail(format!("unknown column `{token}`")),
            };
        }
        if default_tables.is_empty() {
            return fail(format!("column `{token}` outside any FROM"));
        }
        for alias in default_tables {
            let table = self.alias(alias)?;
            if let Some(id) = self.column_id(table, token) {
                return Ok((index + 1, id));
            }
        }
        fail(format!("unknown column `{token}`"))
    }

    fn col_unit(&self, start: usize, default_tables: &[String]) -> Parsed<ColUnit> {
        let mut index = start;
        let block = self.is(index, "(");
        if block {
            index += 1;
        }
        if let Some(agg) = Agg::from_token(self.token(index)?) {
            index += 1;
            self.expect(index, "(")?;
            index += 1;
            let distinct = self.is(index, "distinct");
            if distinct {
                index += 1;
            }
            let (next, col) = self.col(index, default_tables)?;
            self.expect(next, ")")?;
            return Ok((next + 1, ColUnit { agg, col, distinct }));
        }
        let distinct = self.is(index, "distinct");
        if distinct {
            index += 1;
        }
        let (mut index, col) = self.col(index, default_tables)?;
        if block {
            self.expect(index, ")")?;
            index += 1;
        }
        Ok((
            index,
            ColUnit {
                agg: Agg::None,
                col,
                distinct,
            },
        ))
    }

    fn val_unit(&self, start: usize, default_tables: &[String]) -> Parsed<ValUnit> {
        let mut index = start;
        let block = self.is(index, "(");
        if block {
            index += 1;
        }
        let (next, left) = self.col_unit(index, default_tables)?;
        index = next;
        let mut unit = ValUnit {
            op: UnitOp::None,
            left,
            right: None,
        };
        if let Some(op) = self.tokens.get(index).and_then(|t| UnitOp::from_token(t)) {
            let (next, right) = self.col_unit(index + 1, default_tables)?;
            index = next;
            unit.op = op;
            unit.right = Some(right);
        }
        if block {
            self.expect(index, ")")?;
            index += 1;
        }
        Ok((index, unit))
    }

    /// Returns the next index, the table id and the table name.
    fn table_unit(&self, index: usize) -> Parsed<(String, String)> {
        let key = self.alias(self.token(index)?)?.to_string();
        let next = if self.is(index + 1, "as") {
            index + 3
        } else {
            index + 1
        };
        let id = if key == "*" {
            "__all__".to_string()
        } else if self.schema.has_table(&key) {
            format!("__{key}__")
        } else {
            match key.split_once('.') {
                Some((table, column)) if self.column_id(table, column).is_some() => {
                    format!("__{key}__")
                }
                _ => return fail(format!("`{key}` is not a table")),
            }
        };
        Ok((next, (id, key)))
    }

    fn value(&self, start: usize, default_tables: &[String], depth: usize) -> Parsed<Operand> {
        let mut index = start;
        let block = self.is(index, "(");
        if block {
            index += 1;
        }
        let token = self.token(index)?;
        let value = if token == "select" {
            let (next, sql) = self.sql(index, depth + 1)?;
            index = next;
            Operand::Sql(Box::new(sql))
        } else if token.contains('"') {
            index += 1;
            Operand::Text(token.to_string())
        } else if let Some(number) = python_float(token) {
            index += 1;
            Operand::Number(number)
        } else {
            let mut end = index;
            while let Some(t) = self.tokens.get(end) {
                let t = t.as_str();
                if t == ","
                    || t == ")"
                    || t == "and"
                    || CLAUSE_KEYWORDS.contains(&t)
                    || JOIN_KEYWORDS.contains(&t)
                {
                    break;
                }
                end += 1;
            }
            let slice = Parser {
                tokens: &self.tokens[start..end],
                aliases: self.aliases.clone(),
                schema: self.schema,
            };
            let (_, column) = slice.col_unit(0, default_tables)?;
            index = end;
            Operand::Column(column)
        };
        if block {
            self.expect(index, ")")?;
            index += 1;
        }
        Ok((index, value))
    }

    fn condition(
        &self,
        start: usize,
        default_tables: &[String],
        depth: usize,
    ) -> Parsed<Condition> {
        let mut index = start;
        let mut condition = Condition::default();
        while index < self.tokens.len() {
            let (next, val_unit) = self.val_unit(index, default_tables)?;
            index = next;
            let not = self.token(index)? == "not";
            if not {
                index += 1;
            }
            let Some(op) = self.tokens.get(index).and_then(|t| WhereOp::from_token(t)) else {
                return fail(format!("expected a condition operator at token {index}"));
            };
            index += 1;
            let (next, val1) = self.value(index, default_tables, depth)?;
            index = next;
            let mut val2 = None;
            if op == WhereOp::Between {
                self.expect(index, "and")?;
                let (next, second) = self.value(index + 1, default_tables, depth)?;
                index = next;
                val2 = Some(second);
            }
            condition.units.push(CondUnit {
                not,
                op,
                val_unit,
                val1: Some(val1),
                val2,
            });
            let Some(token) = self.tokens.get(index).map(String::as_str) else {
                break;
            };
            if CLAUSE_KEYWORDS.contains(&token)
                || JOIN_KEYWORDS.contains(&token)
                || token == ")"
                || token == ";"
            {
                break;
            }
            match token {
                "and" => condition.connectives.push(Connective::And),
                "or" => condition.connectives.push(Connective::Or),
                // The official parser reads on without a connective and then fails downstream.
                other => return fail(format!("expected AND/OR before `{other}`")),
            }
            index += 1;
        }
        Ok((index, condition))
    }

    fn select(
        &self,
        start: usize,
        default_tables: &[String],
    ) -> Parsed<(bool, Vec<(Agg, ValUnit)>)> {
        self.expect(start, "select")?;
        let mut index = start + 1;
        let distinct = self.is(index, "distinct");
        if distinct {
            index += 1;
        }
        let mut items = Vec::new();
        while let Some(token) = self.tokens.get(index) {
            if CLAUSE_KEYWORDS.contains(&token.as_str()) {
                break;
            }
            let agg = Agg::from_token(token).unwrap_or(Agg::None);
            if agg != Agg::None || token == "none" {
                index += 1;
            }
            let (next, val_unit) = self.val_unit(index, default_tables)?;
            index = next;
            items.push((agg, val_unit));
            if self.is(index, ",") {
                index += 1;
            }
        }
        Ok((index, (distinct, items)))
    }

    /// Returns the index after FROM, the FROM structure and the default tables.
    fn from(&self, start: usize, depth: usize) -> Parsed<(From, Vec<String>)> {
        let Some(position) = self.tokens[start.min(self.tokens.len())..]
            .iter()
            .position(|t| t == "from")
        else {
            return fail("no FROM");
        };
        let mut index = start + position + 1;
        let mut from = From::default();
        let mut default_tables = Vec::new();
        while index < self.tokens.len() {
            let block = self.is(index, "(");
            if block {
                index += 1;
            }
            if self.token(index)? == "select" {
                let (next, sql) = self.sql(index, depth + 1)?;
                index = next;
                from.table_units.push(TableUnit::Sql(Box::new(sql)));
            } else {
                if self.is(index, "join") {
                    index += 1;
                }
                let (next, (id, name)) = self.table_unit(index)?;
                index = next;
                from.table_units.push(TableUnit::Table(id));
                default_tables.push(name);
            }
            if self.is(index, "on") {
                let (next, conds) = self.condition(index + 1, &default_tables, depth)?;
                index = next;
                if !from.conds.is_empty() {
                    from.conds.connectives.push(Connective::And);
                }
                from.conds.units.extend(conds.units);
                from.conds.connectives.extend(conds.connectives);
            }
            if block {
                self.expect(index, ")")?;
                index += 1;
            }
            if let Some(token) = self.tokens.get(index) {
                if CLAUSE_KEYWORDS.contains(&token.as_str()) || token == ")" || token == ";" {
                    break;
                }
            }
        }
        Ok((index, (from, default_tables)))
    }

    fn clause_condition(
        &self,
        index: usize,
        keyword: &str,
        tables: &[String],
        depth: usize,
    ) -> Parsed<Condition> {
        if !self.is(index, keyword) {
            return Ok((index, Condition::default()));
        }
        self.condition(index + 1, tables, depth)
    }

    fn ends_clause(&self, index: usize) -> bool {
        self.tokens
            .get(index)
            .is_none_or(|t| CLAUSE_KEYWORDS.contains(&t.as_str()) || t == ")" || t == ";")
    }

    fn group_by(&self, start: usize, default_tables: &[String]) -> Parsed<Vec<ColUnit>> {
        if !self.is(start, "group") {
            return Ok((start, Vec::new()));
        }
        self.expect(start + 1, "by")?;
        let mut index = start + 2;
        let mut units = Vec::new();
        while !self.ends_clause(index) {
            let (next, unit) = self.col_unit(index, default_tables)?;
            index = next;
            units.push(unit);
            if !self.is(index, ",") {
                break;
            }
            index += 1;
        }
        Ok((index, units))
    }

    fn order_by(
        &self,
        start: usize,
        default_tables: &[String],
    ) -> Parsed<Option<(OrderDir, Vec<ValUnit>)>> {
        if !self.is(start, "order") {
            return Ok((start, None));
        }
        self.expect(start + 1, "by")?;
        let mut index = start + 2;
        let mut direction = OrderDir::Asc;
        let mut units = Vec::new();
        while !self.ends_clause(index) {
            let (next, unit) = self.val_unit(index, default_tables)?;
            index = next;
            units.push(unit);
            match self.tokens.get(index).map(String::as_str) {
                Some("asc") => {
                    direction = OrderDir::Asc;
                    index += 1;
                }
                Some("desc") => {
                    direction = OrderDir::Desc;
                    index += 1;
                }
                _ => {}
            }
            if !self.is(index, ",") {
                break;
            }
            index += 1;
        }
        Ok((index, Some((direction, units))))
    }

    fn limit(&self, index: usize) -> Parsed<Option<i64>> {
        if !self.is(index, "limit") {
            return Ok((index, None));
        }
        let token = self.token(index + 1)?;
        match python_int(token) {
            Some(value) => Ok((index + 2, Some(value))),
            None => fail(format!("LIMIT `{token}` is not an integer")),
        }
    }

    fn skip_semicolons(&self, mut index: usize) -> usize {
        while self.is(index, ";") {
            index += 1;
        }
        index
    }

    fn sql(&self, start: usize, depth: usize) -> Parsed<Sql> {
        if depth > MAX_DEPTH {
            return fail("query nested too deeply");
        }
        let block = self.is(start, "(");
        let select_start = if block { start + 1 } else { start };
        let (from_end, (from, tables)) = self.from(start, depth)?;
        let (_, (select_distinct, select)) = self.select(select_start, &tables)?;
        let (index, where_) = self.clause_condition(from_end, "where", &tables, depth)?;
        let (index, group_by) = self.group_by(index, &tables)?;
        let (index, having) = self.clause_condition(index, "having", &tables, depth)?;
        let (index, order_by) = self.order_by(index, &tables)?;
        let (index, limit) = self.limit(index)?;
        let mut index = self.skip_semicolons(index);
        if block {
            self.expect(index, ")")?;
            index += 1;
        }
        index = self.skip_semicolons(index);
        let mut sql = Sql {
            select_distinct,
            select,
            from,
            where_,
            group_by,
            having,
            order_by,
            limit,
            ..Sql::default()
        };
        if let Some(op) = self.tokens.get(index).cloned() {
            if matches!(op.as_str(), "intersect" | "union" | "except") {
                let (next, continuation) = self.sql(index + 1, depth + 1)?;
                index = next;
                let slot = match op.as_str() {
                    "intersect" => &mut sql.intersect,
                    "union" => &mut sql.union,
                    _ => &mut sql.except,
                };
                *slot = Some(Box::new(continuation));
            }
        }
        Ok((index, sql))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Schema {
        Schema::new(vec![
            (
                "singer".into(),
                vec![
                    "singer_id".into(),
                    "name".into(),
                    "age".into(),
                    "country".into(),
                ],
            ),
            (
                "concert".into(),
                vec!["concert_id".into(), "singer_id".into(), "year".into()],
            ),
        ])
    }

    fn parse(query: &str) -> Result<Sql, SqlError> {
        parse_spider(query, &schema())
    }

    fn col(agg: Agg, col: &str, distinct: bool) -> ColUnit {
        ColUnit {
            agg,
            col: col.into(),
            distinct,
        }
    }

    #[test]
    fn aliases_and_joins_resolve_to_column_ids() {
        let sql = parse(
            "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.singer_id",
        )
        .unwrap();
        assert_eq!(
            sql.select[0].1.left,
            col(Agg::None, "__singer.name__", false)
        );
        assert_eq!(
            sql.from.table_units,
            [
                TableUnit::Table("__singer__".into()),
                TableUnit::Table("__concert__".into())
            ]
        );
        assert_eq!(
            sql.from.conds.units[0].val1,
            Some(Operand::Column(col(
                Agg::None,
                "__concert.singer_id__",
                false
            )))
        );
    }

    #[test]
    fn aggregates_distinct_and_values() {
        let sql = parse("SELECT count(DISTINCT country) FROM singer WHERE age BETWEEN 20 AND 30 AND name = \"Bob\"").unwrap();
        assert_eq!(
            sql.select,
            [(
                Agg::Count,
                ValUnit {
                    op: UnitOp::None,
                    left: col(Agg::None, "__singer.country__", true),
                    right: None
                }
            )]
        );
        assert_eq!(sql.where_.units[0].op, WhereOp::Between);
        assert_eq!(sql.where_.units[0].val2, Some(Operand::Number(30.0)));
        assert_eq!(
            sql.where_.units[1].val1,
            Some(Operand::Text("\"Bob\"".into()))
        );
        assert_eq!(sql.where_.connectives, [Connective::And]);
    }

    #[test]
    fn nested_queries_and_set_operations() {
        let sql = parse("SELECT name FROM singer WHERE singer_id NOT IN (SELECT singer_id FROM concert) UNION SELECT name FROM singer").unwrap();
        assert!(sql.where_.units[0].not);
        assert!(matches!(sql.where_.units[0].val1, Some(Operand::Sql(_))));
        assert!(sql.union.is_some());
        let from_sub = parse("SELECT count(*) FROM (SELECT * FROM singer)").unwrap();
        assert!(matches!(from_sub.from.table_units[0], TableUnit::Sql(_)));
    }

    #[test]
    fn order_limit_and_spaced_operators() {
        let sql =
            parse("SELECT name FROM singer WHERE age > = 20 ORDER BY age DESC LIMIT 3").unwrap();
        assert_eq!(sql.where_.units[0].op, WhereOp::Ge);
        assert_eq!(sql.order_by.as_ref().unwrap().0, OrderDir::Desc);
        assert_eq!(sql.limit, Some(3));
    }

    #[test]
    fn what_the_official_parser_rejects_is_rejected() {
        for query in [
            "SELECT name AS n FROM singer",
            "SELECT name FROM singer, concert",
            "SELECT name FROM singer LEFT JOIN concert ON singer.singer_id = concert.singer_id",
            "SELECT name FROM singer WHERE age=20",
            "SELECT nonexistent FROM singer",
            "SELECT name FROM singer LIMIT 1.5",
            "garbage",
            "",
            "SELECT name FROM singer WHERE name = 'unterminated",
        ] {
            assert!(parse(query).is_err(), "{query}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let query = "SELECT name FROM singer WHERE age IN (".repeat(5000);
        assert!(parse(&query).is_err());
        let parens = "(".repeat(200_000);
        assert!(parse(&parens).is_err());
    }
}
