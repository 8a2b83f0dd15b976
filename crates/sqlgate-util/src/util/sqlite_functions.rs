//! Bounded replacements for the SQLite built-ins whose one call can run for minutes.
//!
//! SQLite's `instr`, `replace`, two-argument `trim` / `ltrim` / `rtrim` and `unhex`, `LIKE` and
//! `GLOB`, and `json_patch` compare every position of one argument with every position (or
//! member) of another: on values near the 32 MiB cap a single call is quadratic and no progress
//! handler or interrupt reaches inside it (`instr(replace(hex(zeroblob(8000000)),'0','a'), ...)`
//! ran for minutes). Each is overridden on every guarded connection by a port of SQLite's own C
//! code, with the same results on every input: `instr` and `replace` search with a linear-time
//! substring search, the others poll `sqlite3_is_interrupted` (set by `util::watchdog` at the
//! deadline) as they go, and `json_patch` / `jsonb_patch` run SQLite's own code on a private
//! connection when their inputs are small enough to finish quickly, and are refused otherwise.

use crate::util::like::{self, Rules};
use crate::util::watchdog::{Budget, Stop};
use rusqlite::ffi;
use rusqlite::Connection;
use std::ffi::{c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Largest product of `json_patch`'s two input sizes in bytes it is run on (its merge compares
/// every member of one object with every member of the other).
pub const JSON_PATCH_BUDGET: u64 = 1 << 28;

type Implementation =
    unsafe extern "C" fn(*mut ffi::sqlite3_context, c_int, *mut *mut ffi::sqlite3_value);

/// The overrides: name, argument count, implementation, user data (trim sides, LIKE rules).
const OVERRIDES: [(&CStr, c_int, Implementation, usize); 11] = [
    (c"instr", 2, instr, 0),
    (c"replace", 3, replace, 0),
    (c"ltrim", 2, trim, 1),
    (c"rtrim", 2, trim, 2),
    (c"trim", 2, trim, 3),
    (c"unhex", 2, unhex, 0),
    (c"like", 2, like_or_glob, 0),
    (c"like", 3, like_or_glob, 0),
    (c"glob", 2, like_or_glob, 1),
    (c"json_patch", 2, json_patch, 0),
    (c"jsonb_patch", 2, json_patch, 1),
];

/// Registers the bounded functions on `conn`, in place of SQLite's.
pub fn install(conn: &Connection) -> rusqlite::Result<()> {
    let flags = ffi::SQLITE_UTF8 | ffi::SQLITE_DETERMINISTIC | ffi::SQLITE_INNOCUOUS;
    for (name, arguments, implementation, data) in OVERRIDES {
        let subtype = if name.to_bytes().ends_with(b"patch") {
            ffi::SQLITE_RESULT_SUBTYPE
        } else {
            0
        };
        // SAFETY: the handle is valid for the call; the name is a static C string and the user
        // data a plain integer that is never dereferenced.
        let rc = unsafe {
            ffi::sqlite3_create_function_v2(
                conn.handle(),
                name.as_ptr(),
                arguments,
                flags | subtype,
                data as *mut c_void,
                Some(implementation),
                None,
                None,
                None,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None));
        }
    }
    Ok(())
}

/// SQLite's `instr(haystack, needle)` on the bytes of both (text unless both are blobs): the
/// 1-based character (text) or byte (blob) position of the first match, 0 when absent.
pub fn instr_position(haystack: &[u8], needle: &[u8], is_text: bool) -> i64 {
    if needle.is_empty() {
        return 1;
    }
    let continuation = |b: u8| b & 0xc0 == 0x80;
    // SQLite steps through the haystack a character at a time (position 0 always), so a needle
    // starting inside a character can only match at position 0.
    let found = if is_text && continuation(needle[0]) {
        haystack.starts_with(needle).then_some(0)
    } else {
        memchr::memmem::find(haystack, needle)
    };
    match found {
        None => 0,
        Some(0) => 1,
        Some(at) if is_text => {
            1 + haystack[1..=at]
                .iter()
                .filter(|b| !continuation(**b))
                .count() as i64
        }
        Some(at) => 1 + at as i64,
    }
}

/// SQLite's `replace(text, pattern, replacement)` for a non-empty pattern: every
/// non-overlapping occurrence, left to right (a linear-time search); `TooBig` past `limit`
/// bytes.
pub fn replaced(
    text: &[u8],
    pattern: &[u8],
    replacement: &[u8],
    limit: usize,
    budget: &mut Budget,
) -> Result<Vec<u8>, Stop> {
    let mut out = Vec::with_capacity(text.len());
    let mut copied = 0;
    for at in memchr::memmem::find_iter(text, pattern) {
        budget.spend(1)?;
        out.extend_from_slice(&text[copied..at]);
        out.extend_from_slice(replacement);
        copied = at + pattern.len();
        if out.len() > limit {
            return Err(Stop::TooBig);
        }
    }
    out.extend_from_slice(&text[copied..]);
    if out.len() > limit {
        return Err(Stop::TooBig);
    }
    Ok(out)
}

/// SQLite's two-argument trim: strips characters of `set` (split as SQLite splits UTF-8, up to
/// its first NUL) from the left (`sides & 1`) and right (`sides & 2`) of `text`, trying the set's
/// characters in order at each step. Returns the kept byte range.
pub fn trimmed(
    text: &[u8],
    set: &[u8],
    sides: usize,
    budget: &mut Budget,
) -> Result<std::ops::Range<usize>, Stop> {
    let mut first_index: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::new();
    for (index, char) in like::chars(until_nul(set)).enumerate() {
        budget.spend(1)?;
        first_index.entry(char).or_insert(index);
    }
    let mut lengths: Vec<usize> = first_index.keys().map(|c| c.len()).collect();
    lengths.sort_unstable();
    lengths.dedup();
    // The length of the set character SQLite's loop takes first among those at `range`'s edge.
    let pick = |range: std::ops::Range<usize>, from_left: bool| {
        lengths
            .iter()
            .filter(|&&len| len <= range.len())
            .filter_map(|&len| {
                let edge = if from_left {
                    &text[range.start..range.start + len]
                } else {
                    &text[range.end - len..range.end]
                };
                first_index.get(edge).map(|&index| (index, len))
            })
            .min()
            .map(|(_, len)| len)
    };
    let (mut start, mut end) = (0, text.len());
    if sides & 1 != 0 {
        while start < end {
            budget.spend(lengths.len() as u32)?;
            let Some(len) = pick(start..end, true) else {
                break;
            };
            start += len;
        }
    }
    if sides & 2 != 0 {
        while start < end {
            budget.spend(lengths.len() as u32)?;
            let Some(len) = pick(start..end, false) else {
                break;
            };
            end -= len;
        }
    }
    Ok(start..end)
}

/// SQLite's `unhex(text, ignored)`: hex digit pairs decoded, characters of `ignored` skipped
/// between pairs, `None` (NULL) on anything else; `text` ends at its first NUL.
pub fn unhexed(text: &[u8], ignored: &[u8], budget: &mut Budget) -> Result<Option<Vec<u8>>, Stop> {
    let text = until_nul(text);
    let mut skippable = std::collections::HashSet::new();
    let mut at = 0;
    while at < ignored.len() {
        budget.spend(1)?;
        skippable.insert(like::read_char(ignored, &mut at));
    }
    let digit = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut at = 0;
    while at < text.len() {
        budget.spend(1)?;
        if digit(text.get(at)).is_none() {
            if !skippable.contains(&like::read_char(text, &mut at)) {
                return Ok(None);
            }
            continue;
        }
        let (Some(high), Some(low)) = (digit(text.get(at)), digit(text.get(at + 1))) else {
            return Ok(None);
        };
        out.push((high << 4 | low) as u8);
        at += 2;
    }
    Ok(Some(out))
}

/// The bytes before the first NUL (what SQLite's C-string loops see).
pub fn until_nul(bytes: &[u8]) -> &[u8] {
    memchr::memchr(0, bytes).map_or(bytes, |end| &bytes[..end])
}

/// The bytes of an argument as text (`None`: SQL NULL).
///
/// # Safety
/// `value` must be a valid protected value of the running call.
unsafe fn text_of<'a>(value: *mut ffi::sqlite3_value) -> Option<&'a [u8]> {
    unsafe {
        let text = ffi::sqlite3_value_text(value);
        if text.is_null() {
            return None;
        }
        let len = ffi::sqlite3_value_bytes(value).max(0) as usize;
        Some(std::slice::from_raw_parts(text, len))
    }
}

/// The bytes of a blob argument (empty for a zero-length blob).
///
/// # Safety
/// `value` must be a valid protected blob value of the running call.
unsafe fn blob_of<'a>(value: *mut ffi::sqlite3_value) -> &'a [u8] {
    unsafe {
        let blob = ffi::sqlite3_value_blob(value) as *const u8;
        let len = ffi::sqlite3_value_bytes(value).max(0) as usize;
        if blob.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(blob, len)
        }
    }
}

/// The arguments of a call as a slice.
///
/// # Safety
/// `argv` must hold `argc` values, as SQLite passes them.
unsafe fn arguments<'a>(
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) -> &'a [*mut ffi::sqlite3_value] {
    unsafe { std::slice::from_raw_parts(argv, argc.max(0) as usize) }
}

/// Runs one call's body, turning a panic into an SQL error instead of unwinding into SQLite.
///
/// # Safety
/// `ctx` must be the context of the running call.
unsafe fn guarded_call(ctx: *mut ffi::sqlite3_context, body: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(body)).is_err() {
        unsafe {
            ffi::sqlite3_result_error(
                ctx,
                c"internal error in a bounded SQL function".as_ptr(),
                -1,
            )
        };
    }
}

/// Reports a [`Stop`] as SQLite would: `interrupted` or `string or blob too big`.
///
/// # Safety
/// `ctx` must be the context of the running call.
unsafe fn report(ctx: *mut ffi::sqlite3_context, stop: Stop) {
    unsafe {
        match stop {
            Stop::Interrupted => ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_INTERRUPT),
            Stop::TooBig => ffi::sqlite3_result_error_toobig(ctx),
        }
    }
}

/// Sets a text (or blob) result, copied.
///
/// # Safety
/// `ctx` must be the context of the running call.
unsafe fn result_bytes(ctx: *mut ffi::sqlite3_context, bytes: &[u8], blob: bool) {
    unsafe {
        let len = bytes.len() as u64;
        if blob {
            ffi::sqlite3_result_blob64(ctx, bytes.as_ptr().cast(), len, ffi::SQLITE_TRANSIENT());
        } else {
            ffi::sqlite3_result_text64(
                ctx,
                bytes.as_ptr().cast(),
                len,
                ffi::SQLITE_TRANSIENT(),
                ffi::SQLITE_UTF8 as u8,
            );
        }
    }
}

/// The running call's connection limit `limit`.
///
/// # Safety
/// `ctx` must be the context of the running call.
unsafe fn limit_of(ctx: *mut ffi::sqlite3_context, limit: c_int) -> usize {
    unsafe { ffi::sqlite3_limit(ffi::sqlite3_context_db_handle(ctx), limit, -1).max(0) as usize }
}

/// Whether the running call's connection has been interrupted.
///
/// # Safety
/// `ctx` must be the context of the running call, alive while the closure is used.
unsafe fn interrupted(ctx: *mut ffi::sqlite3_context) -> impl Fn() -> bool {
    let db = unsafe { ffi::sqlite3_context_db_handle(ctx) };
    // SAFETY: the connection outlives the call that polls it.
    move || unsafe { ffi::sqlite3_is_interrupted(db) != 0 }
}

unsafe extern "C" fn instr(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    unsafe {
        guarded_call(ctx, || {
            let args = arguments(argc, argv);
            let blob = |v| ffi::sqlite3_value_type(v) == ffi::SQLITE_BLOB;
            let null = |v| ffi::sqlite3_value_type(v) == ffi::SQLITE_NULL;
            if null(args[0]) || null(args[1]) {
                return;
            }
            let is_text = !(blob(args[0]) && blob(args[1]));
            let bytes = |v| {
                if blob(v) {
                    Some(blob_of(v))
                } else {
                    text_of(v)
                }
            };
            let (Some(haystack), Some(needle)) = (bytes(args[0]), bytes(args[1])) else {
                ffi::sqlite3_result_error_nomem(ctx);
                return;
            };
            ffi::sqlite3_result_int64(ctx, instr_position(haystack, needle, is_text));
        })
    }
}

unsafe extern "C" fn replace(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    unsafe {
        guarded_call(ctx, || {
            let args = arguments(argc, argv);
            let Some(text) = text_of(args[0]) else { return };
            let Some(pattern) = text_of(args[1]) else {
                return;
            };
            if pattern.first().is_none_or(|b| *b == 0) {
                result_bytes(ctx, text, false);
                return;
            }
            let Some(replacement) = text_of(args[2]) else {
                return;
            };
            let limit = limit_of(ctx, ffi::SQLITE_LIMIT_LENGTH);
            let stop = interrupted(ctx);
            match replaced(text, pattern, replacement, limit, &mut Budget::new(&stop)) {
                Ok(out) => result_bytes(ctx, &out, false),
                Err(stop) => report(ctx, stop),
            }
        })
    }
}

unsafe extern "C" fn trim(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    unsafe {
        guarded_call(ctx, || {
            let args = arguments(argc, argv);
            if ffi::sqlite3_value_type(args[0]) == ffi::SQLITE_NULL {
                return;
            }
            let Some(text) = text_of(args[0]) else { return };
            let Some(set) = text_of(args[1]) else { return };
            let sides = ffi::sqlite3_user_data(ctx) as usize;
            let stop = interrupted(ctx);
            match trimmed(text, set, sides, &mut Budget::new(&stop)) {
                Ok(kept) => result_bytes(ctx, &text[kept], false),
                Err(stop) => report(ctx, stop),
            }
        })
    }
}

unsafe extern "C" fn unhex(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    unsafe {
        guarded_call(ctx, || {
            let args = arguments(argc, argv);
            let (Some(text), Some(ignored)) = (text_of(args[0]), text_of(args[1])) else {
                return;
            };
            let stop = interrupted(ctx);
            match unhexed(text, ignored, &mut Budget::new(&stop)) {
                Ok(Some(bytes)) => result_bytes(ctx, &bytes, true),
                Ok(None) => {}
                Err(stop) => report(ctx, stop),
            }
        })
    }
}

unsafe extern "C" fn like_or_glob(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    unsafe {
        guarded_call(ctx, || {
            let args = arguments(argc, argv);
            let glob = ffi::sqlite3_user_data(ctx) as usize == 1;
            let pattern_bytes = ffi::sqlite3_value_bytes(args[0]).max(0) as usize;
            if pattern_bytes > limit_of(ctx, ffi::SQLITE_LIMIT_LIKE_PATTERN_LENGTH) {
                ffi::sqlite3_result_error(ctx, c"LIKE or GLOB pattern too complex".as_ptr(), -1);
                return;
            }
            let mut rules = if glob { Rules::GLOB } else { Rules::LIKE };
            if argc == 3 {
                let Some(escape) = text_of(args[2]) else {
                    return;
                };
                let escape = until_nul(escape);
                if like::chars(escape).nth(1).is_some() || escape.is_empty() {
                    ffi::sqlite3_result_error(
                        ctx,
                        c"ESCAPE expression must be a single character".as_ptr(),
                        -1,
                    );
                    return;
                }
                rules = rules.with_escape(like::read_char(escape, &mut 0));
            }
            let (Some(pattern), Some(text)) = (text_of(args[0]), text_of(args[1])) else {
                return;
            };
            let stop = interrupted(ctx);
            match like::matches(
                until_nul(pattern),
                until_nul(text),
                &rules,
                &mut Budget::new(&stop),
            ) {
                Ok(matched) => ffi::sqlite3_result_int(ctx, matched as c_int),
                Err(stop) => report(ctx, stop),
            }
        })
    }
}

thread_local! {
    /// A connection without the overrides, where `json_patch` runs SQLite's own code.
    static PRISTINE: std::cell::RefCell<Option<Connection>> = const { std::cell::RefCell::new(None) };
}

/// The subtype SQLite gives JSON text results.
const JSON_SUBTYPE: u32 = b'J' as u32;

unsafe extern "C" fn json_patch(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
) {
    unsafe {
        guarded_call(ctx, || {
            let args = arguments(argc, argv);
            let jsonb = ffi::sqlite3_user_data(ctx) as usize == 1;
            let size = |v| ffi::sqlite3_value_bytes(v).max(0) as u64;
            if size(args[0]).saturating_mul(size(args[1])) > JSON_PATCH_BUDGET {
                ffi::sqlite3_result_error(
                    ctx,
                    c"json_patch inputs too large: sqlgate refuses merges whose size product exceeds 2^28 bytes (SQLite merges in quadratic time)".as_ptr(),
                    -1,
                );
                return;
            }
            let sql = if jsonb {
                c"SELECT jsonb_patch(?1, ?2)"
            } else {
                c"SELECT json_patch(?1, ?2)"
            };
            PRISTINE.with(|pristine| {
                let mut pristine = pristine.borrow_mut();
                if pristine.is_none() {
                    *pristine = Connection::open_in_memory().ok();
                }
                match pristine.as_ref() {
                    Some(conn) => run_pristine(ctx, conn, sql, args, !jsonb),
                    None => ffi::sqlite3_result_error_nomem(ctx),
                }
            });
        })
    }
}

/// Runs `sql` on `conn` with the call's two arguments bound and returns its one value (with the
/// JSON subtype on text when `json_text`), or its error.
///
/// # Safety
/// `ctx` and `args` must be those of the running call.
unsafe fn run_pristine(
    ctx: *mut ffi::sqlite3_context,
    conn: &Connection,
    sql: &CStr,
    args: &[*mut ffi::sqlite3_value],
    json_text: bool,
) {
    unsafe {
        let db = conn.handle();
        let mut statement = std::ptr::null_mut();
        if ffi::sqlite3_prepare_v2(db, sql.as_ptr(), -1, &mut statement, std::ptr::null_mut())
            != ffi::SQLITE_OK
        {
            ffi::sqlite3_result_error(ctx, ffi::sqlite3_errmsg(db), -1);
            return;
        }
        ffi::sqlite3_bind_value(statement, 1, args[0]);
        ffi::sqlite3_bind_value(statement, 2, args[1]);
        if ffi::sqlite3_step(statement) == ffi::SQLITE_ROW {
            ffi::sqlite3_result_value(ctx, ffi::sqlite3_column_value(statement, 0));
            if json_text && ffi::sqlite3_column_type(statement, 0) == ffi::SQLITE_TEXT {
                ffi::sqlite3_result_subtype(ctx, JSON_SUBTYPE);
            }
        } else {
            ffi::sqlite3_result_error(ctx, ffi::sqlite3_errmsg(db), -1);
        }
        ffi::sqlite3_finalize(statement);
    }
}
