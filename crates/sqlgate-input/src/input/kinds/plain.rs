//! The kinds that read a gold file of SQL and `db_id` (Spider's `SQL<TAB>db_id` lines, or a
//! Spider / BIRD JSON list) over `<db_id>/<db_id>.sqlite` files: every default of [`Kind`].

use super::Kind;

/// A plain kind: Spider 1.0 and its derivatives (`spider`), BIRD (`bird`), any other benchmark
/// in one of those formats (`generic`); the name only says which benchmark it is.
pub struct Plain(pub &'static str);

impl Kind for Plain {
    fn name(&self) -> &'static str {
        self.0
    }
}
