//! Single SQL calls that run for minutes inside SQLite (quadratic `instr`, `replace`, `trim`,
//! `unhex`, `LIKE`, `GLOB`, `json_patch` on values near the 32 MiB cap; many huge values per
//! step) end at the deadline: each hostile query returns a timeout or an error within the timeout
//! plus a small margin, through the executor and through the binary with bounded memory. The
//! bounded replacements give SQLite's own answers: thousands of generated inputs are compared
//! with the built-ins of an unguarded connection.

use crate::common;

use common::{read_jsonl, shared_spider};
use rusqlite::types::Value;
use rusqlite::Connection;
use sqlgate::engine::exec::{ExecError, Executor, Limits};
use std::time::{Duration, Instant};

/// The wall-clock limit of the corpus.
const TIMEOUT: Duration = Duration::from_millis(1000);
/// What a query may take beyond its timeout (one step of at most a few 32 MiB values, the
/// watchdog's poll, a loaded machine).
const MARGIN: Duration = Duration::from_millis(1500);

/// `n` bytes of `a`.
fn run_of_a(n: u64) -> String {
    format!("replace(hex(zeroblob({})),'0','a')", n / 2)
}

/// Queries that each keep SQLite busy far beyond a second in one call or one step.
fn corpus() -> Vec<String> {
    let big = run_of_a(16_000_000);
    let needle = format!("({} || 'b')", run_of_a(4_000_000));
    let many_keys = "(SELECT json_group_object('k' || n, n) FROM (WITH RECURSIVE r(n) AS \
                     (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 400000) SELECT n FROM r))";
    let other_keys = many_keys.replace("'k' || n", "'j' || n");
    vec![
        format!(
            "SELECT instr(replace(hex(zeroblob(8000000)),'0','a'), replace(hex(zeroblob(4000000)),'0','a') || 'b')"
        ),
        format!("SELECT length(replace({big}, {needle}, 'x'))"),
        format!("SELECT length(ltrim({big}, {} || 'a'))", run_of_a(8_000_000).replace("'a')", "'b')")),
        format!("SELECT length(rtrim({big}, {} || 'a'))", run_of_a(8_000_000).replace("'a')", "'b')")),
        format!("SELECT length(unhex({big}, {} || 'a'))", run_of_a(8_000_000).replace("'a')", "'b')")),
        format!("SELECT {big} LIKE '%' || {} || 'b%'", run_of_a(49_000)),
        format!("SELECT {big} LIKE '%' || replace(hex(zeroblob(24000)), '0', '_') || 'b'"),
        format!("SELECT {big} GLOB '*' || {} || 'b*'", run_of_a(49_000)),
        format!("SELECT {big} LIKE '%' || replace(hex(zeroblob(12000)), '00', 'a%') || 'b'"),
        format!("SELECT {big} LIKE '%a' || replace(hex(zeroblob(24000)), '0', 'a') || 'b%' ESCAPE '!'"),
        format!("SELECT length(json_patch({many_keys}, {other_keys}))"),
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
         SELECT sum(length(hex(randomblob(8000000)))) FROM r"
            .into(),
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
         SELECT count(*) FROM r WHERE length(printf('%.*c', 30000000, 'x')) > 0"
            .into(),
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 100000) \
         SELECT length(group_concat(zeroblob(200), ',') OVER (ROWS BETWEEN 2000 PRECEDING AND CURRENT ROW)) FROM r"
            .into(),
        "WITH RECURSIVE r(s) AS (SELECT 'a' UNION ALL SELECT s || s FROM r WHERE length(s) < 20000000) \
         SELECT max(length(upper(r.s) || lower(r2.s) || quote(r3.s))) FROM r, r AS r2, r AS r3"
            .into(),
    ]
}

fn executor() -> Executor {
    Executor::new(Limits {
        timeout: TIMEOUT,
        max_rows: 1_000_000,
        max_bytes: 256 << 20,
    })
}

#[test]
fn each_hostile_query_ends_at_its_deadline_through_the_executor() {
    let db = shared_spider().join("database/singer/singer.sqlite");
    let executor = executor();
    for sql in corpus() {
        let started = Instant::now();
        let result = executor.run(&db, &sql);
        let took = started.elapsed();
        eprintln!(
            "{:>6} ms  {:?}  {}",
            took.as_millis(),
            result.as_ref().err(),
            &sql[..sql.len().min(90)]
        );
        assert!(took < TIMEOUT + MARGIN, "{sql}: took {took:?}");
        // A bounded function may finish before the deadline on a quiet machine: then the query
        // has an answer, which is fine; what it may never do is outlive the deadline.
        assert!(
            matches!(
                result,
                Ok(_) | Err(ExecError::Timeout(_) | ExecError::Sql(_) | ExecError::TooLarge(_))
            ),
            "{sql}: {result:?}"
        );
    }
}

#[test]
fn the_hostile_corpus_ends_in_time_with_bounded_memory_through_the_binary() {
    let work = tempfile::tempdir().unwrap();
    let databases = work.path().join("database/singer");
    std::fs::create_dir_all(&databases).unwrap();
    std::fs::copy(
        shared_spider().join("database/singer/singer.sqlite"),
        databases.join("singer.sqlite"),
    )
    .unwrap();
    let cases = corpus();
    let count = (
        "SELECT count(*) FROM singer".to_string(),
        "singer".to_string(),
    );
    common::write_items(work.path(), &vec![count; cases.len()], &cases);
    let config = work.path().join("sqlgate.yml");
    std::fs::write(
        &config,
        format!(
            "dataset: {{ gold: gold.sql, databases: database, difficulty: none }}\n\
             predictions: [{{ name: hostile, path: pred.txt }}]\nmetrics: [ex]\n\
             execution: {{ timeout_ms: {}, threads: 1 }}\n",
            TIMEOUT.as_millis()
        ),
    )
    .unwrap();
    let jsonl = work.path().join("items.jsonl");
    let mut command = common::eval_command(&config, &["--jsonl", common::arg(&jsonl)]);
    command.env_remove("SQLGATE_WORKSPACE");
    let started = Instant::now();
    let output = command.output().unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let budget = (TIMEOUT + MARGIN) * cases.len() as u32 + Duration::from_secs(10);
    assert!(took < budget, "{} queries took {took:?}", cases.len());
    let items = read_jsonl(&jsonl);
    assert_eq!(items.len(), cases.len());
    for (item, sql) in items.iter().zip(&cases) {
        let outcome = item["outcome"]["ex"].as_str().unwrap();
        assert!(
            matches!(outcome, "pred_error" | "pred_timeout" | "mismatch"),
            "{sql}: {item}"
        );
    }
    let peak_kib = peak_rss_of_children_kib();
    eprintln!(
        "hostile SQL corpus: {} queries in {:.1} s, peak RSS {} MiB",
        cases.len(),
        took.as_secs_f64(),
        peak_kib / 1024
    );
    assert!(peak_kib < 1536 * 1024, "peak RSS {peak_kib} KiB");
}

/// The largest peak resident size of a waited-for child of this process (Linux `ru_maxrss`).
fn peak_rss_of_children_kib() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc_rusage>::zeroed();
    // SAFETY: getrusage writes one struct rusage, which `libc_rusage` lays out.
    unsafe { getrusage(-1, usage.as_mut_ptr()) };
    unsafe { usage.assume_init() }.ru_maxrss as u64
}

#[repr(C)]
struct libc_rusage {
    ru_utime: [i64; 2],
    ru_stime: [i64; 2],
    ru_maxrss: i64,
    rest: [i64; 13],
}

extern "C" {
    fn getrusage(who: i32, usage: *mut libc_rusage) -> i32;
}

/// Text drawn from characters that exercise every rule: wildcards of both matchers, set
/// syntax, escapes, case pairs, multi-byte, invalid and truncated UTF-8, NUL.
fn random_text(rng: &mut fastrand::Rng, max_len: usize) -> Vec<u8> {
    const PIECES: [&[u8]; 22] = [
        b"a",
        b"A",
        b"b",
        b"%",
        b"_",
        b"*",
        b"?",
        b"[",
        b"]",
        b"^",
        b"-",
        b"!",
        b"\\",
        b"z",
        "é".as_bytes(),
        "É".as_bytes(),
        "€".as_bytes(),
        b"\xc3",
        b"\x80",
        b"\xff",
        b"\0",
        b" ",
    ];
    let len = rng.usize(0..=max_len);
    (0..len)
        .flat_map(|_| PIECES[rng.usize(0..PIECES.len())].iter().copied())
        .collect()
}

/// An argument as SQL: text (possibly invalid UTF-8, through a blob cast), a blob, or a number.
fn argument(rng: &mut fastrand::Rng, max_len: usize) -> Value {
    match rng.usize(0..10) {
        0 => Value::Blob(random_text(rng, max_len)),
        1 => Value::Integer(rng.i64(-20..200)),
        2 => Value::Real(rng.f64() * 10.0 - 5.0),
        3 => Value::Null,
        _ => Value::Blob(random_text(rng, max_len)),
    }
}

/// One function call, texts passed as `CAST(? AS TEXT)` so invalid UTF-8 reaches the function.
fn call_sql(function: &str, args: &[Value]) -> String {
    let placeholders: Vec<String> = args
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Blob(_) if i % 2 == 0 || function != "instr" => {
                format!("CAST(?{} AS TEXT)", i + 1)
            }
            _ => format!("?{}", i + 1),
        })
        .collect();
    format!("SELECT {function}({})", placeholders.join(", "))
}

fn answer(conn: &Connection, sql: &str, args: &[Value]) -> Result<Value, String> {
    conn.query_row(sql, rusqlite::params_from_iter(args), |row| {
        row.get::<_, Value>(0)
    })
    .map_err(|e| e.to_string())
}

#[test]
fn the_bounded_functions_give_sqlites_answers() {
    let builtin = Connection::open_in_memory().unwrap();
    let bounded = sqlgate::util::sqlite::guard(Connection::open_in_memory().unwrap()).unwrap();
    let mut rng = fastrand::Rng::with_seed(24);
    let functions: [(&str, usize); 10] = [
        ("like", 2),
        ("like", 3),
        ("glob", 2),
        ("instr", 2),
        ("replace", 3),
        ("trim", 2),
        ("ltrim", 2),
        ("rtrim", 2),
        ("unhex", 2),
        ("json_patch", 2),
    ];
    let mut compared = 0;
    for _ in 0..4000 {
        for (function, arity) in functions {
            let args: Vec<Value> = (0..arity)
                .map(|i| {
                    if function == "like" && i == 2 && rng.usize(0..10) < 7 {
                        Value::Text(["!", "%", "_", "é", "a"][rng.usize(0..5)].into())
                    } else if function == "unhex" && i == 0 && rng.bool() {
                        Value::Text(
                            "0a1B 2c-3D"
                                .chars()
                                .filter(|_| rng.usize(0..10) < 8)
                                .collect(),
                        )
                    } else if function == "json_patch" {
                        Value::Text(
                            [
                                "{\"a\":1,\"b\":{\"c\":2}}",
                                "{\"a\":null,\"d\":[1]}",
                                "[1,2]",
                                "{\"b\":{\"c\":null,\"e\":3}}",
                                "nope",
                                "{}",
                            ][rng.usize(0..6)]
                            .into(),
                        )
                    } else {
                        argument(&mut rng, 12)
                    }
                })
                .collect();
            let sql = call_sql(function, &args);
            let expected = answer(&builtin, &sql, &args);
            let got = answer(&bounded.conn, &sql, &args);
            assert_eq!(got, expected, "{sql} with {args:?}");
            compared += 1;
        }
    }
    assert_eq!(compared, 40_000);
    let subtype = "SELECT json_array(json_patch('{\"a\":1}', '{\"b\":2}'))";
    assert_eq!(
        answer(&bounded.conn, subtype, &[]),
        answer(&builtin, subtype, &[])
    );
    let big = "json_object('a', hex(zeroblob(10000)))";
    let refused = answer(
        &bounded.conn,
        &format!("SELECT json_patch({big}, {big})"),
        &[],
    );
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("json_patch inputs too large")),
        "{refused:?}"
    );
}
