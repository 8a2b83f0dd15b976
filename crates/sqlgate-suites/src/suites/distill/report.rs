//! The suite report: databases kept per schema, rows and bytes, neighbors and undistinguished
//! neighbors per item (and which), items whose gold never returns rows, and time.

use super::store::Manifest;
use crate::input::dataset::Dataset;
use serde::Serialize;
use std::fmt::Write as _;

/// How a schema's suite was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reuse {
    /// Found in the cache with the same content hash: no work done.
    Cached,
    /// A cached suite of the same schema extended for new gold queries.
    Extended,
    /// Distilled from scratch.
    Fresh,
}

/// One schema's suite.
#[derive(Debug, Clone, Serialize)]
pub struct SchemaReport {
    /// The database id.
    pub db_id: String,
    /// How the suite was obtained.
    pub reuse: Reuse,
    /// Databases in the suite (original included).
    pub databases: usize,
    /// Random databases kept.
    pub kept: usize,
    /// Random candidates examined so far.
    pub examined: u64,
    /// Rows over all suite databases.
    pub rows: u64,
    /// Bytes over all suite databases.
    pub bytes: u64,
    /// Neighbors over all distinct gold queries.
    pub neighbors: usize,
    /// Neighbors no suite database distinguishes.
    pub undistinguished: usize,
    /// Seconds spent on this schema in this run.
    pub seconds: f64,
    /// Properties of natural databases that could not be learned because the schema has no
    /// original database (tables.json only); empty when it has one.
    pub not_learned: Vec<&'static str>,
    /// The manifest (per gold query details).
    #[serde(skip)]
    pub manifest: Manifest,
}

impl SchemaReport {
    /// The report of a schema's manifest.
    pub fn from_manifest(db_id: &str, manifest: Manifest, reuse: Reuse, seconds: f64) -> Self {
        let original = manifest.original.iter();
        SchemaReport {
            db_id: db_id.to_string(),
            reuse,
            databases: manifest.kept.len() + manifest.original.iter().count(),
            kept: manifest.kept.len(),
            examined: manifest.examined,
            rows: manifest.kept.iter().map(|k| k.rows).sum::<u64>()
                + original.clone().map(|o| o.rows).sum::<u64>(),
            bytes: manifest.kept.iter().map(|k| k.bytes).sum::<u64>()
                + original.map(|o| o.bytes).sum::<u64>(),
            neighbors: manifest.golds.iter().map(|g| g.neighbors).sum(),
            undistinguished: manifest.golds.iter().map(|g| g.undistinguished.len()).sum(),
            seconds,
            not_learned: if manifest.original.is_some() {
                Vec::new()
            } else {
                NOT_LEARNED.to_vec()
            },
            manifest,
        }
    }
}

/// What natural generated databases learn from the original database, and so cannot learn
/// without one: their columns then get no distinctness, no NULL, no original rows and values.
pub const NOT_LEARNED: [&str; 4] = [
    "columns whose values are all distinct",
    "NULL rates (no column gets NULL)",
    "whole rows of lookup-like tables (columns that go together)",
    "value formats and numeric ranges",
];

/// One dataset item's view of its suite.
#[derive(Debug, Clone, Serialize)]
pub struct ItemReport {
    /// Item index in the gold file.
    pub index: usize,
    /// Its database id.
    pub db_id: String,
    /// Neighbors of its gold query that execute.
    pub neighbors: usize,
    /// Those no suite database distinguishes.
    pub undistinguished: Vec<String>,
    /// Whether its gold returns rows on some suite database (seed 000, A.2).
    pub nonempty: bool,
    /// Whether its gold runs at all.
    pub runs: bool,
}

/// The whole suite.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteReport {
    /// Per schema, in db_id order.
    pub schemas: Vec<SchemaReport>,
    /// Per item, in gold order.
    pub items: Vec<ItemReport>,
    /// Wall-clock seconds of this run.
    pub seconds: f64,
}

impl SuiteReport {
    /// Joins the schema reports with the dataset's items.
    pub fn new(dataset: &Dataset, schemas: Vec<SchemaReport>, seconds: f64) -> Self {
        let items = dataset
            .items
            .iter()
            .filter_map(|item| {
                let schema = schemas.iter().find(|s| s.db_id == item.db_id)?;
                let record = schema.manifest.golds.iter().find(|g| g.gold == item.sql)?;
                Some(ItemReport {
                    index: item.index,
                    db_id: item.db_id.clone(),
                    neighbors: record.neighbors,
                    undistinguished: record.undistinguished.clone(),
                    nonempty: record.nonempty,
                    runs: record.runs,
                })
            })
            .collect();
        SuiteReport {
            schemas,
            items,
            seconds,
        }
    }

    /// Neighbors over all items, and those left undistinguished.
    pub fn neighbor_totals(&self) -> (usize, usize) {
        self.items.iter().fold((0, 0), |(all, left), item| {
            (all + item.neighbors, left + item.undistinguished.len())
        })
    }

    /// Neighbors and undistinguished neighbors over the items whose schema has an original
    /// database (the figure seed 000 Table 4 reports for Spider, whose databases all exist).
    pub fn neighbor_totals_with_original(&self) -> (usize, usize) {
        let with_original = |db_id: &str| {
            self.schemas
                .iter()
                .any(|s| s.db_id == db_id && s.manifest.original.is_some())
        };
        self.items
            .iter()
            .filter(|item| with_original(&item.db_id))
            .fold((0, 0), |(all, left), item| {
                (all + item.neighbors, left + item.undistinguished.len())
            })
    }

    /// Items whose gold returns no rows on any suite database, or does not run.
    pub fn empty_items(&self) -> Vec<&ItemReport> {
        self.items
            .iter()
            .filter(|i| !i.nonempty || !i.runs)
            .collect()
    }

    /// The report as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("the suite report serialises")
    }

    /// A plain-text summary for the terminal.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "{:<30} {:>6} {:>5} {:>8} {:>8} {:>10} {:>9} {:>8} {:>7}",
            "schema",
            "reuse",
            "dbs",
            "examined",
            "rows",
            "bytes",
            "neighbors",
            "undist.",
            "seconds"
        );
        for s in &self.schemas {
            let _ = writeln!(
                text,
                "{:<30} {:>6} {:>5} {:>8} {:>8} {:>10} {:>9} {:>8} {:>7.1}",
                s.db_id,
                format!("{:?}", s.reuse).to_lowercase(),
                s.databases,
                s.examined,
                s.rows,
                s.bytes,
                s.neighbors,
                s.undistinguished,
                s.seconds
            );
        }
        let (all, left) = self.neighbor_totals();
        let databases: usize = self.schemas.iter().map(|s| s.databases).sum();
        let bytes: u64 = self.schemas.iter().map(|s| s.bytes).sum();
        let share = percent(left, all);
        let _ = writeln!(
            text,
            "total: {databases} databases, {bytes} bytes ({:.1} MB); items {}; neighbors {all}, \
             undistinguished {left} ({share:.2} %); {:.1} s",
            bytes as f64 / 1e6,
            self.items.len(),
            self.seconds
        );
        let (all, left) = self.neighbor_totals_with_original();
        let _ = writeln!(
            text,
            "items with an original database: neighbors {all}, undistinguished {left} ({:.2} %)",
            percent(left, all)
        );
        for s in self.schemas.iter().filter(|s| !s.not_learned.is_empty()) {
            let _ = writeln!(
                text,
                "{}: no original database (tables.json only), so natural databases could not \
                 learn: {}",
                s.db_id,
                s.not_learned.join("; ")
            );
        }
        let empty = self.empty_items();
        if empty.is_empty() {
            let _ = writeln!(
                text,
                "every item's gold returns rows on some suite database (seed 000 A.2)"
            );
        } else {
            let indexes: Vec<String> = empty.iter().map(|i| i.index.to_string()).collect();
            let _ = writeln!(
                text,
                "items whose gold returns no rows on any suite database (seed 000 A.2): {}",
                indexes.join(", ")
            );
        }
        text
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}
