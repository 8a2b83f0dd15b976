//! Idle server connections keyed by database name, at most `execution.threads` of them: a worker
//! takes one for the database it needs (or opens one), runs an item, and gives it back.
//!
//! Hand-written because the pools of the client crates (r2d2, `mysql::Pool`) hold one pool per
//! database URL, which with `layout: per_db_id` would keep `threads` connections open per db_id.

use std::collections::VecDeque;
use std::sync::Mutex;

/// Idle connections of type `C`, each with the database it is connected to.
pub struct Pool<C> {
    idle: Mutex<VecDeque<(String, C)>>,
    capacity: usize,
}

impl<C> std::fmt::Debug for Pool<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl<C> Pool<C> {
    /// A pool keeping at most `capacity` idle connections.
    pub fn new(capacity: usize) -> Self {
        Pool {
            idle: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
        }
    }

    /// An idle connection to `database`, if there is one.
    pub fn take(&self, database: &str) -> Option<C> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let position = idle.iter().position(|(name, _)| name == database)?;
        idle.remove(position).map(|(_, conn)| conn)
    }

    /// Gives a healthy connection back; the oldest idle one is closed when the pool is full.
    pub fn give_back(&self, database: &str, conn: C) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        idle.push_back((database.to_string(), conn));
        while idle.len() > self.capacity {
            idle.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_kept_per_database_up_to_the_capacity() {
        let pool = Pool::new(2);
        pool.give_back("a", 1);
        pool.give_back("b", 2);
        pool.give_back("a", 3);
        assert_eq!(pool.take("b"), Some(2));
        assert_eq!(pool.take("b"), None);
        assert_eq!(pool.take("a"), Some(3));
        assert_eq!(pool.take("a"), None);
    }
}
