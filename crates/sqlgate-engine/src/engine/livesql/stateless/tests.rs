//! The whitelist's cases: what it admits and what it refuses, with the reason named.

use super::{refusal, Engine};

fn texts(sqls: &[&str]) -> Vec<String> {
    sqls.iter().map(|s| s.to_string()).collect()
}

fn judged(engine: Engine, sqls: &[&str]) -> bool {
    refusal(&texts(sqls), engine).is_none()
}

#[test]
fn a_staging_table_filled_with_literals_is_judged_on_every_engine() {
    let staging = [
        "DROP TABLE IF EXISTS staging_prices",
        "CREATE TABLE staging_prices (product_id INTEGER PRIMARY KEY, new_price REAL NOT NULL DEFAULT 0, noted TIMESTAMP DEFAULT CURRENT_TIMESTAMP)",
        "CREATE INDEX staging_by_price ON staging_prices (new_price)",
        "INSERT INTO staging_prices VALUES (1, 41.0, '2024-01-01'), (4, -25.5, NULL); INSERT INTO staging_prices (product_id) VALUES (9)",
    ];
    for engine in [Engine::Sqlite, Engine::Postgres, Engine::Mysql] {
        assert!(
            judged(engine, &staging),
            "{engine:?}: {:?}",
            refusal(&texts(&staging), engine)
        );
    }
    assert!(judged(
        Engine::Postgres,
        &["CREATE TABLE s (id SERIAL PRIMARY KEY, tags TEXT[], at TIMESTAMPTZ DEFAULT now())"]
    ));
    assert!(judged(
        Engine::Mysql,
        &["CREATE TABLE s (id INT AUTO_INCREMENT PRIMARY KEY, KEY (id)) ENGINE=InnoDB"]
    ));
    assert!(judged(
        Engine::Sqlite,
        &["CREATE TABLE s (id INTEGER PRIMARY KEY AUTOINCREMENT, x WHATEVER)"]
    ));
    assert!(judged(Engine::Sqlite, &[]));
    assert!(judged(Engine::Postgres, &["CREATE TABLE t (a TIMESTAMPTZ DEFAULT CURRENT_TIMESTAMP(3), b TIMESTAMPTZ DEFAULT now())"]));
    assert!(judged(
        Engine::Mysql,
        &["CREATE TABLE t (a INT)", "INSERT INTO t VALUES (NOW(3))"]
    ));
    assert!(judged(
        Engine::Mysql,
        &["CREATE TABLE a (at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6))\r\n\t-- a note\n"]
    ));
    assert!(judged(
        Engine::Postgres,
        &["CREATE TYPE stock_state AS ENUM ('out', 'low', 'ok')"]
    ));
    assert!(judged(
        Engine::Postgres,
        &["CREATE DOMAIN stock_level AS integer CONSTRAINT stock_floor CHECK (VALUE >= 0)"]
    ));
    assert!(judged(
        Engine::Postgres,
        &[
            "CREATE TABLE t (a INT, d DATE)",
            "INSERT INTO T VALUES (1, DATE '2024-01-01')"
        ]
    ));
    assert!(judged(
        Engine::Postgres,
        &[
            "CREATE VIEW low AS SELECT * FROM products WHERE stock < 5",
            "CREATE FUNCTION low_stock() RETURNS integer LANGUAGE sql IMMUTABLE RETURN 4",
            "CREATE SEQUENCE ticket",
        ]
    ));
}

#[test]
fn state_on_the_session_or_code_that_runs_is_refused() {
    let refused: &[(Engine, &[&str])] = &[
        (Engine::Sqlite, &["CREATE TEMP TABLE t (a INT)"]),
        (Engine::Sqlite, &["CREATE TABLE temp.t (a INT)"]),
        (Engine::Sqlite, &["CREATE TABLE temp .t (a INT)"]),
        (Engine::Postgres, &["CREATE TABLE pg_temp.t (a INT)"]),
        (Engine::Sqlite, &["CREATE TEMP VIEW products AS SELECT 1"]),
        (Engine::Mysql, &["DROP TEMPORARY TABLE IF EXISTS t"]),
        (
            Engine::Postgres,
            &["CREATE MATERIALIZED VIEW m AS SELECT set_config('my.v', '1', false)"],
        ),
        (
            Engine::Postgres,
            &["CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql RETURN 1"],
        ),
        (Engine::Postgres, &["CREATE TEMP SEQUENCE s"]),
        (Engine::Postgres, &["ANALYZE products"]),
        (
            Engine::Postgres,
            &["CREATE TABLE p PARTITION OF products FOR VALUES IN (1)"],
        ),
        (
            Engine::Postgres,
            &["CREATE TABLE b (s int) PARTITION BY RANGE (s)"],
        ),
        (
            Engine::Postgres,
            &[
                "CREATE TABLE \"public.staging\" (a INT)",
                "INSERT INTO public.staging VALUES (1)",
            ],
        ),
        (
            Engine::Postgres,
            &[
                "CREATE DOMAIN string AS text CHECK (VALUE <> '')",
                "CREATE TABLE t (a STRING)",
            ],
        ),
        (
            Engine::Postgres,
            &[
                "CREATE TABLE t (a TEXT)",
                "INSERT INTO t VALUES (STRING 'x')",
            ],
        ),
        (
            Engine::Postgres,
            &[
                "CREATE TABLE t (a TEXT)",
                "INSERT INTO t VALUES (serial '1')",
            ],
        ),
        (
            Engine::Postgres,
            &["CREATE TABLE t (a TEXT)", "INSERT INTO t VALUES (now(3))"],
        ),
        (
            Engine::Postgres,
            &["CREATE TABLE t (a TEXT DEFAULT now(0))"],
        ),
        (
            Engine::Postgres,
            &["CREATE TABLE \"é\" (a INT)", "INSERT INTO É VALUES (1)"],
        ),
        (
            Engine::Mysql,
            &[
                "CREATE TABLE t (a INT, b INT)",
                "INSERT INTO t VALUES (1, 2 --\u{a0}x, @v := 1\n)",
            ],
        ),
        (Engine::Sqlite, &["CREATE TABLE t (a INT)\u{b}"]),
        (
            Engine::Mysql,
            &[
                "CREATE TABLE t (a TEXT, b TEXT)",
                "INSERT INTO t VALUES ('a\\', @v := 1, ', 'x')",
            ],
        ),
        (
            Engine::Postgres,
            &[
                "CREATE TABLE t (a INT)",
                "DROP TABLE T",
                "CREATE VIEW T AS SELECT * FROM products",
                "INSERT INTO t VALUES (1)",
            ],
        ),
        (
            Engine::Postgres,
            &["CREATE TABLE \"Foo\" (a INT)", "INSERT INTO foo VALUES (1)"],
        ),
        (
            Engine::Postgres,
            &[
                "CREATE TABLE t (a INT)",
                "INSERT INTO t VALUES (my_domain '1')",
            ],
        ),
        (
            Engine::Mysql,
            &["CREATE PROCEDURE p() BEGIN SET @low = 5; END", "CALL p()"],
        ),
        (
            Engine::Sqlite,
            &[
                "CREATE TABLE t (a INT)",
                "DROP TABLE t",
                "INSERT INTO t VALUES (1)",
            ],
        ),
        (Engine::Mysql, &["SET @v = 1"]),
        (Engine::Mysql, &["SET SESSION sql_safe_updates = 1"]),
        (Engine::Postgres, &["SET my.v = '1'"]),
        (Engine::Postgres, &["SELECT set_config('my.v', '1', false)"]),
        (
            Engine::Postgres,
            &["CREATE TABLE t (a INT DEFAULT set_config('my.v', '1', false)::int)"],
        ),
        (Engine::Postgres, &["CREATE TABLE t (a INT CHECK (a > 0))"]),
        (Engine::Postgres, &["CREATE TABLE t (a my_domain)"]),
        (Engine::Postgres, &["CREATE TABLE t AS SELECT 1 AS a"]),
        (
            Engine::Mysql,
            &["CREATE TABLE t (a INT)", "INSERT INTO t VALUES (@v)"],
        ),
        (
            Engine::Sqlite,
            &[
                "CREATE TABLE t (a INT)",
                "INSERT INTO t VALUES (last_insert_rowid())",
            ],
        ),
        (
            Engine::Sqlite,
            &["CREATE TABLE t (a INT)", "INSERT INTO t SELECT 1"],
        ),
        (
            Engine::Mysql,
            &[
                "CREATE TABLE t (a INT)",
                "INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = LAST_INSERT_ID(a)",
            ],
        ),
        (Engine::Sqlite, &["INSERT INTO products VALUES (1)"]),
        (
            Engine::Mysql,
            &[
                "CREATE TABLE IF NOT EXISTS products (a INT)",
                "INSERT INTO products VALUES (1)",
            ],
        ),
        (
            Engine::Mysql,
            &["CREATE TABLE t (a INT) /*!99999 ; SET @v = 1 */"],
        ),
        (
            Engine::Mysql,
            &["CREATE TABLE t (a INT) /*M! ; SET @v = 1 */"],
        ),
        (Engine::Postgres, &["CREATE INDEX i ON t ((a + 1))"]),
    ];
    for &(engine, sqls) in refused {
        assert!(!judged(engine, sqls), "{engine:?} judged {sqls:?}");
    }
}

#[test]
fn the_refusal_names_the_statement() {
    let why = refusal(
        &texts(&["CREATE TABLE t (a INT)", "DROP VIEW IF EXISTS v"]),
        Engine::Sqlite,
    );
    let why = why.expect("a DROP is refused");
    assert!(why.starts_with("preprocess statement 2 "), "{why}");
    assert!(why.contains("DROP VIEW"), "{why}");
}
