//! Random databases for checking that two queries are equivalent on every database a schema
//! allows (ESM+'s `verify` and its soundness test): the distiller's generator, held to the
//! DECLARED constraints only. Keys are unique, declared NOT NULL columns (and PRIMARY KEY
//! columns) hold no NULL, foreign keys are NULL or name a parent row, tables may be empty, and
//! every other column may be NULL whatever the original data holds ([`NULL_RATE`]). Values
//! still come from the original data's formats and the queries' constants, so that conditions
//! meet rows; that restricts which databases are likely, not which are possible.

use super::constraints::Constraints;
use super::generate::{Generator, Phase};
use super::values::Planted;
use crate::engine::value::Value;
use crate::input::dataset::Database;
use crate::suites::neighbors::{conditions, constants, Conditions};
use crate::util::error::InputError;

/// Least share of NULLs in every nullable column (foreign keys included), whether or not the
/// original data has any: the schema allows them, so an equivalence must survive them.
pub const NULL_RATE: f64 = 0.2;

/// Most databases generated per database asked for, when few meet the non-empty tables asked for.
const ATTEMPTS_PER_IMAGE: usize = 20;

/// One generated database.
#[derive(Debug, Clone)]
pub struct Image {
    /// The seed it was generated from (its name in reports: "generated database, seed N").
    pub seed: u64,
    /// The database serialized (`sqlite3_serialize`), to load with
    /// [`crate::engine::sqlite::Scratch::from_image`].
    pub bytes: Vec<u8>,
    /// Its empty tables, lower-cased.
    pub empty_tables: Vec<String>,
    /// Rows over all tables.
    pub rows: u64,
}

/// Generates databases of one schema (from its SQLite file's DDL, or from tables.json when the
/// file is absent) that plant the constants of the given queries.
pub struct Sampler {
    constraints: Constraints,
    profiles: super::values::Profiles,
    planted: Planted,
}

impl Sampler {
    /// A sampler for `database` whose databases favour the constants of `queries`.
    pub fn new(database: &Database, queries: &[&str]) -> Result<Sampler, InputError> {
        let loaded = super::load(database)?;
        let mut profiles = loaded.profiles;
        for (table, columns) in loaded.constraints.tables.iter().zip(&mut profiles) {
            for (column, profile) in table.columns.iter().zip(columns) {
                if !column.not_null {
                    profile.null_rate = profile.null_rate.max(NULL_RATE);
                }
            }
        }
        let golds: Vec<(String, Vec<Value>, Conditions)> = queries
            .iter()
            .map(|q| (q.to_string(), constants(q), conditions(q)))
            .collect();
        let planted = Planted::new(&loaded.constraints, &golds);
        Ok(Sampler {
            constraints: loaded.constraints,
            profiles,
            planted,
        })
    }

    /// `count` databases with `rows` (inclusive bounds) rows per table, from seeds `seed`,
    /// `seed + 1`, ...; only those where every table of `nonempty` (lower-cased) holds rows are
    /// kept. Fewer when [`ATTEMPTS_PER_IMAGE`] times `count` seeds do not give enough.
    pub fn images(
        &self,
        seed: u64,
        count: usize,
        rows: (usize, usize),
        nonempty: &[String],
    ) -> rusqlite::Result<Vec<Image>> {
        let generator = Generator {
            constraints: &self.constraints,
            profiles: &self.profiles,
            originals: &[],
            planted: &self.planted,
            rows,
        };
        let mut images = Vec::with_capacity(count);
        for offset in 0..(count * ATTEMPTS_PER_IMAGE) as u64 {
            if images.len() == count {
                break;
            }
            let mut conn = generator.generate(seed.wrapping_add(offset), Phase::Free)?;
            let mut empty_tables = Vec::new();
            let mut total = 0;
            for table in &self.constraints.tables {
                let sql = format!(
                    "SELECT count(*) FROM \"{}\"",
                    table.name.replace('"', "\"\"")
                );
                let n: i64 = conn.query_row(&sql, [], |row| row.get(0))?;
                total += n as u64;
                if n == 0 {
                    empty_tables.push(table.name.to_lowercase());
                }
            }
            if nonempty.iter().any(|t| empty_tables.contains(t)) {
                continue;
            }
            images.push(Image {
                seed: seed.wrapping_add(offset),
                bytes: conn.serialize(rusqlite::MAIN_DB)?.to_vec(),
                empty_tables,
                rows: total,
            });
        }
        Ok(images)
    }
}
