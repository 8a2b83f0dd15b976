//! The client deadline: one thread that runs a query's cancel action when its deadline passes
//! (PostgreSQL's cancel request, MySQL's `KILL QUERY` from another connection), so a query ends
//! even when the server's own timeout does not fire (a statement the timeout does not cover, a
//! server that ignores it, a stalled network).

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

type Action = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    pending: BTreeMap<(Instant, u64), Action>,
    next_id: u64,
    /// The action being run, if any: its query's guard waits for it, so a cancel never reaches
    /// the next query on the same connection.
    running: Option<(Instant, u64)>,
}

/// Runs cancel actions at their deadlines on one background thread.
#[derive(Clone)]
pub struct Watchdog {
    shared: Arc<(Mutex<State>, Condvar)>,
}

impl std::fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watchdog")
    }
}

/// A registered deadline; dropping it (the query ended) withdraws the action, or waits for it
/// to finish when it is running.
pub struct Armed {
    shared: Arc<(Mutex<State>, Condvar)>,
    key: (Instant, u64),
}

impl Drop for Armed {
    fn drop(&mut self) {
        let (state, wake) = &*self.shared;
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        state.pending.remove(&self.key);
        while state.running == Some(self.key) {
            state = wake.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Watchdog {
    /// Starts the watchdog thread; it lives as long as the process (one per server engine).
    pub fn start() -> Self {
        let shared = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let worker = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("sqlgate-watchdog".into())
            .spawn(move || watch(&worker))
            .expect("the watchdog thread starts");
        Watchdog { shared }
    }

    /// Runs `action` at `deadline` unless the returned guard is dropped first.
    pub fn arm(&self, deadline: Instant, action: impl FnOnce() + Send + 'static) -> Armed {
        let (state, wake) = &*self.shared;
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        state.next_id += 1;
        let key = (deadline, state.next_id);
        state.pending.insert(key, Box::new(action));
        wake.notify_all();
        Armed {
            shared: Arc::clone(&self.shared),
            key,
        }
    }
}

fn watch(shared: &(Mutex<State>, Condvar)) {
    let (state, wake) = shared;
    let mut guard = state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let now = Instant::now();
        let due = guard.pending.first_key_value().map(|(key, _)| *key);
        match due {
            Some(key) if key.0 <= now => {
                let action = guard.pending.remove(&key).expect("the due entry");
                guard.running = Some(key);
                drop(guard);
                action();
                guard = state.lock().unwrap_or_else(|e| e.into_inner());
                guard.running = None;
                wake.notify_all();
            }
            Some(key) => {
                guard = wake
                    .wait_timeout(guard, key.0 - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            None => guard = wake.wait(guard).unwrap_or_else(|e| e.into_inner()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn due_actions_run_and_withdrawn_ones_do_not() {
        let watchdog = Watchdog::start();
        let fired = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&fired);
        let _due = watchdog.arm(Instant::now() + Duration::from_millis(20), move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        let counter = Arc::clone(&fired);
        let withdrawn = watchdog.arm(Instant::now() + Duration::from_millis(40), move || {
            counter.fetch_add(10, Ordering::SeqCst);
        });
        drop(withdrawn);
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(fired.load(Ordering::SeqCst), 1);
    }
}
