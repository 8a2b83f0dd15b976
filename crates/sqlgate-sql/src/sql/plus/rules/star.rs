//! Rule 10: `SELECT *` as the table's columns (`t.*` is expanded by the resolver).

use crate::sql::plus::form::{Expr, Select, Source};
use crate::sql::plus::rewrite::Rewriter;
use crate::sql::plus::Rule;

impl Rewriter<'_> {
    /// Rule 10: `SELECT *` over one table lists its columns.
    pub(in crate::sql::plus) fn star_columns(&mut self, select: &mut Select) {
        let [(_, Source::Table(table))] = select.from.as_slice() else {
            return;
        };
        if !select.items.contains(&Expr::Star) || !self.allow(Rule::StarColumns) {
            return;
        }
        let Some(columns) = self.facts.table_columns(table) else {
            return;
        };
        let expanded: Vec<Expr> = columns
            .iter()
            .map(|c| Expr::Column(table.clone(), c.clone()))
            .collect();
        select.items = std::mem::take(&mut select.items)
            .into_iter()
            .flat_map(|item| match item {
                Expr::Star => expanded.clone(),
                other => vec![other],
            })
            .collect();
        self.fire(Rule::StarColumns);
    }
}

#[cfg(test)]
mod tests {
    use crate::sql::plus::test_support::{differ, equivalent, facts, fires};
    use crate::sql::plus::Rule;

    #[test]
    fn rule_10_star_uses_the_schema_columns() {
        let (a, b) = ("SELECT * FROM owners", "SELECT owner_id, city FROM owners");
        fires(Rule::StarColumns, a, b);
        differ("SELECT * FROM owners", "SELECT owner_id FROM owners");
    }

    #[test]
    fn qualified_star_is_the_table_columns() {
        assert!(equivalent(
            "SELECT T2.*, T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id",
            "SELECT T2.owner_id, T2.city, T1.name FROM dogs AS T1 JOIN owners AS T2 ON T1.owner_id = T2.owner_id",
            &facts()
        ));
        fires(
            Rule::StarColumns,
            "SELECT owners.* FROM owners",
            "SELECT * FROM owners",
        );
    }
}
