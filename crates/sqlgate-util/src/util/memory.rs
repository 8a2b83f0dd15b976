//! The run's memory budget (`execution.max_memory`): one process-wide account, kept with atomics
//! only, that SQLite's heap and every query result an item holds are charged to, so the run's
//! memory stays under one figure however many workers score at once.
//!
//! SQLite's heap is charged by a counting allocator installed before SQLite starts
//! ([`install_sqlite_allocator`]), which also turns SQLite's own memory statistics off: those take
//! one global mutex on every allocation and free, which serialized every worker thread. SQLite's
//! heap may take at most half of the budget; an allocation past that (or over the budget) fails,
//! and SQLite reports "out of memory" for that statement alone. Each thread charges SQLite's heap
//! in steps of 256 KiB and allocates from that reserve, so workers do not contend on the shared
//! counters.
//!
//! Query results are charged by the executor as rows arrive. While an item is scored
//! ([`item_scope`]) the results it keeps stay charged until it is done; results kept for the whole
//! run (gold results shared across systems) are moved out of the item with [`retained`].

use rusqlite::ffi;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

/// The default `execution.max_memory`: 1 GiB.
pub const DEFAULT_MAX_MEMORY: usize = 1 << 30;

/// A memory account with a limit, charged and released from any thread without a lock.
#[derive(Debug)]
pub struct Budget {
    limit: AtomicUsize,
    used: AtomicUsize,
}

impl Budget {
    /// An empty account holding at most `limit` bytes.
    pub const fn new(limit: usize) -> Budget {
        Budget {
            limit: AtomicUsize::new(limit),
            used: AtomicUsize::new(0),
        }
    }

    /// Charges `bytes` if they fit under the limit; `false` (nothing charged) otherwise.
    pub fn try_charge(&self, bytes: usize) -> bool {
        let before = self.used.fetch_add(bytes, Ordering::Relaxed);
        if before.saturating_add(bytes) <= self.limit.load(Ordering::Relaxed) {
            return true;
        }
        self.used.fetch_sub(bytes, Ordering::Relaxed);
        false
    }

    /// Gives back `bytes` charged earlier.
    pub fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Bytes charged now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The limit in force.
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed)
    }

    /// Sets the limit (a run sets its `execution.max_memory` before any query runs).
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
    }
}

/// The process's budget: sqlgate scores one run per process, and this is that run's.
pub static PROCESS: Budget = Budget::new(DEFAULT_MAX_MEMORY);

thread_local! {
    /// Result bytes the item being scored on this thread keeps charged (`None`: no item).
    static HELD: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Releases, when dropped (also on a panic), what the item scope it closes still holds.
struct ScopeEnd {
    outer: Option<usize>,
}

impl Drop for ScopeEnd {
    fn drop(&mut self) {
        let held = HELD.replace(self.outer).unwrap_or(0);
        PROCESS.release(held);
        return_if_large(held);
    }
}

/// Results at least this large are handed back to the operating system once freed.
const LARGE: usize = 16 << 20;

/// After `freed` bytes of results were freed: when that was a large amount, asks the allocator to
/// hand free memory back to the system. Each worker thread allocates from its own arena, and an
/// arena keeps what it once held; without this, a run's resident memory could approach the budget
/// once per worker rather than once in all.
fn return_if_large(freed: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if freed >= LARGE {
        extern "C" {
            fn malloc_trim(pad: usize) -> c_int;
        }
        // SAFETY: glibc's malloc_trim only releases free memory of the allocator's arenas.
        unsafe {
            malloc_trim(0);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = (freed, LARGE);
}

/// Scores one item: results charged inside `score` stay charged until it returns, then are
/// released (they are dropped by then).
pub fn item_scope<T>(score: impl FnOnce() -> T) -> T {
    let _end = ScopeEnd {
        outer: HELD.replace(Some(0)),
    };
    score()
}

/// Runs `compute` (a result kept beyond the item) and returns what it left charged, now the
/// caller's to release; outside an item scope that is 0 (nothing stays charged there).
pub fn retained<T>(compute: impl FnOnce() -> T) -> (T, usize) {
    let before = HELD.get();
    let value = compute();
    let after = HELD.replace(before);
    let kept = after.unwrap_or(0).saturating_sub(before.unwrap_or(0));
    (value, kept)
}

/// Hands over `bytes` a finished result was charged: kept by the item being scored, or released
/// at once outside one.
pub fn hold(bytes: usize) {
    match HELD.get() {
        Some(held) => HELD.set(Some(held + bytes)),
        None => PROCESS.release(bytes),
    }
}

/// The step in which a growing result is charged, so that charging costs one atomic operation
/// per step rather than per row.
const CHARGE_STEP: usize = 64 << 10;

/// What one query's result is charged while its rows arrive; given back when dropped (the query
/// failed; drop the rows first) unless kept ([`Charge::keep`]).
#[derive(Debug, Default)]
pub struct Charge {
    charged: usize,
}

impl Charge {
    /// Makes sure `bytes` are charged, charging in steps; `false` when the budget cannot take them.
    pub fn cover(&mut self, bytes: usize) -> bool {
        if bytes <= self.charged {
            return true;
        }
        let step = (bytes - self.charged).max(CHARGE_STEP);
        if !PROCESS.try_charge(step) {
            return false;
        }
        self.charged += step;
        true
    }

    /// The query finished with a result of `bytes`: charges exactly that and hands it to the item
    /// being scored ([`hold`]).
    pub fn keep(mut self, bytes: usize) {
        let charged = std::mem::take(&mut self.charged);
        let spare = charged.saturating_sub(bytes);
        PROCESS.release(spare);
        hold(charged - spare);
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        PROCESS.release(self.charged);
        return_if_large(self.charged);
    }
}

/// Bytes in front of each SQLite allocation, holding its size (keeps 16-byte alignment).
const HEADER: usize = 16;

/// Whether SQLite runs on the counting allocator (false: it was started before it could be
/// installed, and runs with its own statistics and a hard heap limit instead).
static COUNTING: AtomicBool = AtomicBool::new(false);

/// Bytes charged for SQLite's heap now: allocated, or held in a thread's reserve (also charged to
/// [`PROCESS`]).
static SQLITE_HEAP: AtomicUsize = AtomicUsize::new(0);

/// Bytes a thread charges for SQLite at once: each thread allocates and frees from its own
/// reserve, so most of SQLite's allocations touch no counter another worker writes (two shared
/// atomic operations per allocation and per free kept the cores waiting on each other's caches).
/// A thread holds at most twice this unallocated.
const SQLITE_STEP: usize = 256 << 10;

/// One thread's reserve: bytes charged for SQLite (to the budget and to SQLite's heap) that it
/// has not allocated; given back when the thread ends.
struct Reserve(Cell<usize>);

impl Drop for Reserve {
    fn drop(&mut self) {
        release_shared(self.0.get());
    }
}

thread_local! {
    static RESERVE: Reserve = const { Reserve(Cell::new(0)) };
}

/// Charges an allocation of SQLite's from this thread's reserve, refilled from the shared
/// account in [`SQLITE_STEP`]s.
fn charge_sqlite(bytes: usize) -> bool {
    let from_reserve = RESERVE.try_with(|reserve| {
        let have = reserve.0.get();
        if have >= bytes {
            reserve.0.set(have - bytes);
            return true;
        }
        let missing = bytes - have;
        let step = missing.max(SQLITE_STEP);
        if charge_shared(step) {
            reserve.0.set(step - missing);
            return true;
        }
        if step > missing && charge_shared(missing) {
            reserve.0.set(0);
            return true;
        }
        false
    });
    from_reserve.unwrap_or_else(|_| charge_shared(bytes))
}

/// Gives back an allocation of SQLite's to this thread's reserve, returning what exceeds one
/// step once the reserve holds two.
fn release_sqlite(bytes: usize) {
    let into_reserve = RESERVE.try_with(|reserve| {
        let have = reserve.0.get() + bytes;
        if have > 2 * SQLITE_STEP {
            release_shared(have - SQLITE_STEP);
            reserve.0.set(SQLITE_STEP);
        } else {
            reserve.0.set(have);
        }
    });
    if into_reserve.is_err() {
        release_shared(bytes);
    }
}

/// Charges SQLite's heap: to the budget, and within half of it for SQLite, so that page caches,
/// sorters and temporary tables leave room for the results and the rest of the process.
fn charge_shared(bytes: usize) -> bool {
    let before = SQLITE_HEAP.fetch_add(bytes, Ordering::Relaxed);
    if before.saturating_add(bytes) <= PROCESS.limit() / 2 && PROCESS.try_charge(bytes) {
        return true;
    }
    SQLITE_HEAP.fetch_sub(bytes, Ordering::Relaxed);
    false
}

/// Gives back bytes charged with [`charge_shared`].
fn release_shared(bytes: usize) {
    SQLITE_HEAP.fetch_sub(bytes, Ordering::Relaxed);
    PROCESS.release(bytes);
}

/// SQLite's heap limit when the counting allocator could not be installed.
const FALLBACK_HEAP_LIMIT: i64 = 512 << 20;

/// Installs the counting allocator and turns SQLite's memory statistics off, once, before the
/// first connection. When SQLite was already started (a test opened a connection directly), it
/// falls back to SQLite's hard heap limit, which needs the statistics.
pub fn install_sqlite_allocator() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let methods = ffi::sqlite3_mem_methods {
            xMalloc: Some(sqlite_malloc),
            xFree: Some(sqlite_free),
            xRealloc: Some(sqlite_realloc),
            xSize: Some(sqlite_size),
            xRoundup: Some(sqlite_roundup),
            xInit: Some(sqlite_init),
            xShutdown: Some(sqlite_shutdown),
            pAppData: std::ptr::null_mut(),
        };
        // sqlite3_config is not thread-safe: another thread (a test opening a connection
        // directly) may be inside sqlite3_initialize, whose allocator set-up runs under SQLite's
        // main static mutex. Holding that mutex, the allocator is replaced only while SQLite has
        // never allocated (its memory statistics, on until now, count every allocation): a block
        // of the default allocator must never reach sqlite_free. Allocating a static mutex
        // initialises only the mutex subsystem.
        // SAFETY: the mutex is static (never freed) and entered / left on this thread; a null
        // mutex (a build without threads) is a no-op for enter and leave. sqlite3_config is
        // refused with SQLITE_MISUSE once SQLite is initialised; SQLite copies the methods,
        // which stay valid for the process.
        let installed = unsafe {
            let main = ffi::sqlite3_mutex_alloc(ffi::SQLITE_MUTEX_STATIC_MAIN);
            ffi::sqlite3_mutex_enter(main);
            let installed = ffi::sqlite3_memory_highwater(0) == 0
                && ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &methods) == ffi::SQLITE_OK
                && ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int) == ffi::SQLITE_OK;
            ffi::sqlite3_mutex_leave(main);
            installed
        };
        COUNTING.store(installed, Ordering::Relaxed);
        if !installed {
            // SAFETY: only stores the limit under SQLite's own mutex.
            unsafe {
                ffi::sqlite3_hard_heap_limit64(FALLBACK_HEAP_LIMIT);
            }
        }
    });
}

/// Whether SQLite's heap holds more than half of its share (a quarter of the budget): cached
/// connections should close rather than more open.
pub fn sqlite_heap_is_high() -> bool {
    SQLITE_HEAP.load(Ordering::Relaxed) > PROCESS.limit() / 4
}

/// Whether SQLite's heap is charged to [`PROCESS`] (the counting allocator is in place).
pub fn sqlite_is_counted() -> bool {
    COUNTING.load(Ordering::Relaxed)
}

fn layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, HEADER).ok()
}

unsafe extern "C" fn sqlite_malloc(n: c_int) -> *mut c_void {
    let Some(layout) = usize::try_from(n).ok().and_then(layout) else {
        return std::ptr::null_mut();
    };
    if !charge_sqlite(layout.size()) {
        return std::ptr::null_mut();
    }
    // SAFETY: the layout has a non-zero size (HEADER at least).
    let base = unsafe { System.alloc(layout) };
    if base.is_null() {
        release_sqlite(layout.size());
        return std::ptr::null_mut();
    }
    // SAFETY: base is 16-aligned and at least HEADER bytes long.
    unsafe {
        base.cast::<usize>().write(n as usize);
        base.add(HEADER).cast()
    }
}

/// The size stored in front of an allocation of [`sqlite_malloc`].
///
/// # Safety
/// `p` must come from [`sqlite_malloc`] or [`sqlite_realloc`] and not be freed.
unsafe fn stored_size(p: *mut c_void) -> usize {
    // SAFETY: per the contract, HEADER bytes in front of p hold the size.
    unsafe { p.cast::<u8>().sub(HEADER).cast::<usize>().read() }
}

unsafe extern "C" fn sqlite_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: SQLite frees only what its allocator returned.
    let size = unsafe { stored_size(p) };
    let layout = layout(size).expect("the layout was valid when allocated");
    // SAFETY: the block was allocated with this layout at p - HEADER.
    unsafe { System.dealloc(p.cast::<u8>().sub(HEADER), layout) };
    release_sqlite(layout.size());
}

unsafe extern "C" fn sqlite_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    // SAFETY: SQLite passes a live allocation of this allocator (never null).
    let old_size = unsafe { stored_size(p) };
    let (Some(old), Some(new)) = (layout(old_size), usize::try_from(n).ok().and_then(layout))
    else {
        return std::ptr::null_mut();
    };
    let growth = new.size().saturating_sub(old.size());
    if !charge_sqlite(growth) {
        return std::ptr::null_mut();
    }
    // SAFETY: the block was allocated with `old` at p - HEADER; the new size is non-zero.
    let base = unsafe { System.realloc(p.cast::<u8>().sub(HEADER), old, new.size()) };
    if base.is_null() {
        release_sqlite(growth);
        return std::ptr::null_mut();
    }
    release_sqlite(old.size().saturating_sub(new.size()));
    // SAFETY: base is 16-aligned and at least HEADER bytes long.
    unsafe {
        base.cast::<usize>().write(n as usize);
        base.add(HEADER).cast()
    }
}

unsafe extern "C" fn sqlite_size(p: *mut c_void) -> c_int {
    if p.is_null() {
        return 0;
    }
    // SAFETY: SQLite asks only about its own live allocations.
    unsafe { stored_size(p) as c_int }
}

unsafe extern "C" fn sqlite_roundup(n: c_int) -> c_int {
    n.saturating_add(7) & !7
}

unsafe extern "C" fn sqlite_init(_: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn sqlite_shutdown(_: *mut c_void) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_refuses_what_would_exceed_it_and_takes_it_back_when_released() {
        let budget = Budget::new(100);
        assert!(budget.try_charge(60));
        assert!(!budget.try_charge(41));
        assert_eq!(budget.used(), 60);
        assert!(budget.try_charge(40));
        budget.release(100);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn an_item_scope_keeps_held_results_until_it_ends_and_retained_moves_them_out() {
        assert!(PROCESS.try_charge(1300));
        let kept = item_scope(|| {
            hold(1000);
            let ((), kept) = retained(|| hold(300));
            assert_eq!(HELD.get(), Some(1000));
            kept
        });
        assert_eq!(kept, 300);
        assert_eq!(HELD.get(), None);
        PROCESS.release(kept);
        assert_eq!(retained(|| hold(0)).1, 0);
    }
}
