//! The gold audit (`sqlgate audit`): mechanical findings about each gold query, with the
//! evidence that shows them, on the item's database and its test suite. A finding says the
//! gold's answer is wrong, undetermined or fragile (a LIMIT cut on a tie, a grouped column
//! whose value is any row's, NULLs sorted differently by engines, numbers stored as text sorted
//! as text), that the dataset's own
//! dialects or result files disagree with it, or that most scored systems agree with each other
//! against it; it never decides which side is right (`suspect-gold` is for review).

mod groups;
mod meaning;
mod order;
pub mod self_check;
mod systems;

use crate::engine::exec::{ExecError, Executor};
use crate::engine::profile::{PreparedGold, Profile};
use crate::engine::value::Row;
use crate::input::dataset::{Dataset, GoldItem};
use crate::input::predictions::System;
use crate::suites::suite::Suite;
use rayon::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What a finding says about a gold query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The gold query fails on its database.
    GoldError,
    /// The gold query hits the time limit on its database.
    GoldTimeout,
    /// Rows tied on the sort key at the LIMIT cut (or several rows at a bare column's
    /// MIN / MAX): which rows the answer holds is undetermined.
    LimitTie,
    /// An ORDER BY without a total order where the comparison is ordered: tied rows that differ
    /// may come in either order.
    OrderTie,
    /// A sort key holds NULL: engines place NULL first or last.
    NullOrder,
    /// Numbers stored as text sorted as text (`'10'` before `'9'`).
    TextNumberSort,
    /// A selected column neither grouped nor aggregated holds several values in a group the
    /// answer shows: the engine returns any of them.
    BareColumn,
    /// No rows on the database and on every suite database.
    EmptyEverywhere,
    /// Another dialect's gold of the same item returns another result on the same data.
    DialectDisagreement,
    /// Spider 2.0: the gold SQL's result matches none of its gold result files.
    GoldResultMismatch,
    /// Most scored systems agree with each other and not with the gold (for review).
    SuspectGold,
    /// A state-changing kind's gold, judged as a prediction by the kind's metrics, fails its
    /// own checks.
    GoldSelfCheck,
}

impl Kind {
    /// The name outputs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::GoldError => "gold-error",
            Kind::GoldTimeout => "gold-timeout",
            Kind::LimitTie => "limit-tie",
            Kind::OrderTie => "order-tie",
            Kind::NullOrder => "null-order",
            Kind::TextNumberSort => "text-number-sort",
            Kind::BareColumn => "bare-column",
            Kind::EmptyEverywhere => "empty-everywhere",
            Kind::DialectDisagreement => "dialect-disagreement",
            Kind::GoldResultMismatch => "gold-result-mismatch",
            Kind::SuspectGold => "suspect-gold",
            Kind::GoldSelfCheck => "gold-self-check",
        }
    }
}

/// One finding about one gold item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The item's 0-based index in the gold file.
    pub index: usize,
    /// The item's database.
    pub db_id: String,
    /// What the finding says.
    pub kind: Kind,
    /// What shows it: the database, the rows, the values.
    pub evidence: String,
}

/// Another dialect's gold queries of the same items (BIRD ships SQLite, PostgreSQL and MySQL
/// golds), with the executor that runs them on the same data.
pub struct Dialect {
    /// The dialect's name, for the evidence (`postgresql`).
    pub name: String,
    /// Its gold SQL per item, aligned with the dataset's items.
    pub golds: Vec<String>,
    /// Runs them.
    pub executor: Executor,
    /// Whether its databases are named by db_id (a server) rather than by the dataset's files.
    pub by_db_id: bool,
}

/// What the audit reads.
pub struct Context<'a> {
    /// The benchmark.
    pub dataset: &'a Dataset,
    /// Runs the gold queries.
    pub executor: &'a Executor,
    /// How results are compared (whether order matters, equality).
    pub profile: &'a Profile,
    /// The test suite, when one is configured.
    pub suite: Option<&'a Suite>,
    /// The scored systems (for `suspect-gold`).
    pub systems: &'a [System],
    /// Other dialects' golds (for `dialect-disagreement`).
    pub dialects: &'a [Dialect],
}

/// Systems needed before `suspect-gold` is considered: a majority of two says little.
pub const SUSPECT_MIN_SYSTEMS: usize = 3;

impl<'a> Context<'a> {
    /// An audit on the items' own databases only, without suite, systems or dialects: the quick
    /// one a gated run shows beside regressed items and test-suite flips.
    pub fn own_databases(
        dataset: &'a Dataset,
        executor: &'a Executor,
        profile: &'a Profile,
    ) -> Context<'a> {
        Context {
            dataset,
            executor,
            profile,
            suite: None,
            systems: &[],
            dialects: &[],
        }
    }

    /// The findings of the given items, in item order, then kind order.
    pub fn audit(&self, items: &[usize]) -> Vec<Finding> {
        let mut found: Vec<Finding> = items
            .par_iter()
            .flat_map_iter(|&index| self.audit_item(&self.dataset.items[index]))
            .collect();
        found.sort_by_key(|f| (f.index, f.kind));
        found
    }

    /// The findings of every item.
    pub fn audit_all(&self) -> Vec<Finding> {
        let items: Vec<usize> = (0..self.dataset.items.len()).collect();
        self.audit(&items)
    }

    /// The findings of one item, on its database then its suite's; on its suite alone when its
    /// database is absent (Spider's wta_1 ships as a schema only), where the checks of other
    /// dialects and of Spider 2.0 result files, which need the item's own data, are left out;
    /// none when it has neither, or when the item is a kind's own task (`GoldItem::task`: no
    /// gold query to audit; a gold that changes the database, which a read-only run cannot
    /// check: [`self_check`] judges those).
    pub fn audit_item(&self, item: &GoldItem) -> Vec<Finding> {
        if item.task.is_some() {
            return Vec::new();
        }
        let original = self.dataset.database_path(item);
        let databases = self.databases(item, original);
        let Some(db) = databases.first().map(PathBuf::as_path) else {
            return Vec::new();
        };
        let finding = |kind: Kind, evidence: String| Finding {
            index: item.index,
            db_id: item.db_id.clone(),
            kind,
            evidence,
        };
        if let Some(gold) = &item.spider2 {
            return (original.and_then(|db| systems::spider2_mismatch(self, item, gold, db)))
                .map(|evidence| finding(Kind::GoldResultMismatch, evidence))
                .into_iter()
                .collect();
        }
        let prepared = self.profile.prepare_gold(&item.sql);
        let rows = match self.executor.run(db, &prepared.sql) {
            Ok(rows) => rows,
            Err(error) => {
                let kind = match error {
                    ExecError::Timeout(_) => Kind::GoldTimeout,
                    _ => Kind::GoldError,
                };
                return vec![finding(kind, format!("on {}: {error}", shown_db(db)))];
            }
        };
        let mut found: Vec<Finding> = order::findings(self, &prepared, &databases)
            .into_iter()
            .map(|(kind, evidence)| finding(kind, evidence))
            .collect();
        if let Some(evidence) = groups::bare_column(self, &prepared, &databases) {
            found.push(finding(Kind::BareColumn, evidence));
        }
        if let Some(evidence) = self.empty_everywhere(&prepared, &rows, &databases, original) {
            found.push(finding(Kind::EmptyEverywhere, evidence));
        }
        if let Some(db) = original {
            found.extend(
                self.dialect_disagreements(item, db, &prepared, &rows)
                    .into_iter()
                    .map(|evidence| finding(Kind::DialectDisagreement, evidence)),
            );
        }
        if let Some(evidence) = systems::suspect_gold(self, item, &prepared, &databases) {
            found.push(finding(Kind::SuspectGold, evidence));
        }
        found
    }

    /// The item's database (when present), then its suite databases.
    fn databases(&self, item: &GoldItem, original: Option<&Path>) -> Vec<PathBuf> {
        original
            .map(Path::to_path_buf)
            .into_iter()
            .chain(
                self.suite
                    .map(|s| s.databases(&item.db_id).to_vec())
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|p| Some(p.as_path()) != original),
            )
            .collect()
    }

    /// Evidence when the gold returns no rows on its database and on every suite database (a
    /// suite database where it fails counts as no evidence of rows either way: it is skipped).
    fn empty_everywhere(
        &self,
        prepared: &PreparedGold,
        rows: &[Row],
        databases: &[PathBuf],
        original: Option<&Path>,
    ) -> Option<String> {
        if !rows.is_empty() {
            return None;
        }
        let mut checked = 1;
        for db in &databases[1..] {
            match self.executor.run(db, &prepared.sql) {
                Ok(rows) if !rows.is_empty() => return None,
                Ok(_) => checked += 1,
                Err(_) => {}
            }
        }
        Some(match original {
            None => {
                format!("no rows on any of its {checked} suite databases (no database of its own)")
            }
            Some(_) if checked == 1 => {
                format!("no rows on {} (no suite database)", shown_db(&databases[0]))
            }
            Some(_) => format!(
                "no rows on {} and on its {} suite databases",
                shown_db(&databases[0]),
                checked - 1
            ),
        })
    }

    /// Evidence per dialect whose gold of this item returns another result than the item's
    /// gold on the same data (or fails where it runs), the values compared by meaning
    /// ([`meaning`]: a server's date equals SQLite's text of it).
    fn dialect_disagreements(
        &self,
        item: &GoldItem,
        db: &Path,
        prepared: &PreparedGold,
        rows: &[Row],
    ) -> Vec<String> {
        let mut found = Vec::new();
        let meant = match self.dialects.is_empty() {
            true => return found,
            false => meaning::rows(rows),
        };
        for dialect in self.dialects {
            let Some(sql) = dialect.golds.get(item.index) else {
                continue;
            };
            let own_db = if dialect.by_db_id {
                PathBuf::from(&item.db_id)
            } else {
                db.to_path_buf()
            };
            match dialect.executor.run(&own_db, sql) {
                Ok(theirs)
                    if self.profile.same_result(
                        &meant,
                        &meaning::rows(&theirs),
                        prepared.order_matters,
                    ) => {}
                Ok(theirs) => found.push(format!(
                    "the {} gold returns {} on the same data, this gold {}",
                    dialect.name,
                    rows_shown(&theirs),
                    rows_shown(rows)
                )),
                Err(error) => found.push(format!(
                    "the {} gold fails on the same data: {error}",
                    dialect.name
                )),
            }
        }
        found
    }
}

/// A database as evidence names it: its file name, or the db_id on a server.
pub(crate) fn shown_db(db: &Path) -> String {
    db.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| db.display().to_string())
}

/// Rows as evidence shows them: the count and up to three rows.
pub(crate) fn rows_shown(rows: &[Row]) -> String {
    let shown: Vec<String> = rows.iter().take(3).map(|r| row_shown(r)).collect();
    let more = if rows.len() > 3 { ", ..." } else { "" };
    match rows.len() {
        0 => "no rows".to_string(),
        1 => format!("1 row [{}]", shown.join(", ")),
        n => format!("{n} rows [{}{more}]", shown.join(", ")),
    }
}

/// One row as evidence shows it: `(a, 'b', NULL)`, values cut after 40 characters.
pub(crate) fn row_shown(row: &[crate::engine::value::Value]) -> String {
    let values: Vec<String> = row
        .iter()
        .map(|v| {
            let text = crate::suites::domain::shown(v);
            match text.char_indices().nth(40) {
                Some((at, _)) => format!("{}...", &text[..at]),
                None => text,
            }
        })
        .collect();
    format!("({})", values.join(", "))
}

#[cfg(test)]
mod tests;
