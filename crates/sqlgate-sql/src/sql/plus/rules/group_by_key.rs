//! Rule 5: a GROUP BY holding a key drops the columns the key determines.

use crate::sql::plus::form::{inner_only, Expr, Select, Source};
use crate::sql::plus::rewrite::{join_classes, Rewriter};
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// Rule 5: a GROUP BY holding a key column of a table (inner joins only, the table once in
    /// FROM) drops that table's other columns: the key determines them. A column equated by ON
    /// with a key column keys that table too.
    pub(in crate::sql::plus) fn group_by_key(&mut self, select: &mut Select) {
        if select.group_by.len() < 2 || !inner_only(&select.from) || !self.allow(Rule::GroupByKey) {
            return;
        }
        let classes = join_classes(&select.on, self.facts);
        let occurs_once = |table: &String| {
            let source = Source::Table(table.clone());
            select.from.iter().filter(|(_, s)| *s == source).count() == 1
        };
        let keyed_by = |expr: &Expr| -> Vec<String> {
            let mut tables: Vec<String> = equal_columns(expr, &classes)
                .into_iter()
                .filter(|column| self.is_key_column(column))
                .filter_map(|column| match column {
                    Expr::Column(t, _) if occurs_once(&t) => Some(t),
                    _ => None,
                })
                .collect();
            tables.dedup();
            tables
        };
        let keyed: Vec<Vec<String>> = select.group_by.iter().map(keyed_by).collect();
        let all_keyed: Vec<&String> = keyed.iter().flatten().collect();
        let mut kept = Vec::new();
        let mut kept_keys: Vec<&String> = Vec::new();
        for (expr, keys) in select.group_by.iter().zip(&keyed) {
            let keep = if keys.is_empty() {
                !matches!(expr, Expr::Column(t, _) if all_keyed.contains(&t))
            } else {
                !keys.iter().all(|t| kept_keys.contains(&t))
            };
            if keep {
                kept.push(expr.clone());
                kept_keys.extend(keys);
            }
        }
        if kept.len() != select.group_by.len() {
            select.group_by = kept;
            self.fire(Rule::GroupByKey);
        }
    }
}

/// `expr` and every column an inner join's ON equates with it (through `classes`).
fn equal_columns(expr: &Expr, classes: &[(Expr, Expr)]) -> Vec<Expr> {
    let representative = classes
        .iter()
        .find(|(column, _)| column == expr)
        .map_or(expr, |(_, r)| r);
    let mut columns = vec![expr.clone(), representative.clone()];
    columns.extend(
        classes
            .iter()
            .filter(|(_, r)| r == representative)
            .map(|(column, _)| column.clone()),
    );
    columns.sort();
    columns.dedup();
    columns
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::only_when_verified;
    use crate::sql::plus::Rule;

    #[test]
    fn rule_5_group_by_key() {
        let a = "SELECT count(*) FROM dogs GROUP BY dog_id, name";
        let b = "SELECT count(*) FROM dogs GROUP BY dog_id";
        only_when_verified(Rule::GroupByKey, a, b);
    }

    #[test]
    fn rule_5_a_column_joined_to_a_key_keys_its_table() {
        let a = "SELECT count(*) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id GROUP BY T1.owner_id, T2.city";
        let b = "SELECT count(*) FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id GROUP BY T1.owner_id";
        only_when_verified(Rule::GroupByKey, a, b);
    }
}
