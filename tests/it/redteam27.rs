//! Red team round 27 (issue 44): round 26's fixes (the gate rule `judge::rules::sound_gate`,
//! `livesql_sound`'s gold twin), the DuckDB worker process, and classes 1, 2 and 4 again.
//! Every test asserts the SECURE outcome and runs its control (the same regressing pull request
//! without the lever, which must exit 1, or the same query without the lever, which must run):
//! a failing test is a win. Report: `/work/notes/redteam27.md`.

/// The state-changing SQLite kind, `livesql_sound`'s gold twin (round 26's fix of win B): every
/// gold statement a test case runs reads the twin, but only when the runner sees it marked
/// (`helpers.py`: `_GoldText`, kept by `remove_*` and re-made by the sound `ex_base`). A test
/// case that runs its gold through `execute_queries` as the corpus's `lsq_155`-`lsq_157` do,
/// after a plain string method (`[s.strip() for s in sol_sqls]`: any `str` method returns a plain
/// `str`), sends it to the prediction's copy. The post-state check of a Query item whose
/// prediction wrote (`post::query_state`) runs BEFORE the test cases, on the state the
/// prediction's first run left; the test case then runs the prediction a second time on the same
/// copy. The set-up: `examples/livesql-mini`, `lsq_061` (`ORDER BY gpa DESC, name`, order counts)
/// given such a test case, gated on `livesql_sound`. The lever, three statements before the
/// wrong `SELECT name, gpa FROM students ORDER BY name`:
/// `UPDATE students SET gpa = 0 WHERE (SELECT min(rowid) FROM enrolments) > 1` (a no-op on the
/// first run) and `REPLACE INTO enrolments SELECT * FROM enrolments WHERE rowid = (SELECT
/// min(rowid) FROM enrolments)` (the same row under a new hidden rowid, which `query_state`'s
/// `SELECT *` does not see), so the second run levels every gpa and the unmarked gold agrees.
mod livesql_sound_unmarked_gold_on_the_second_run {
    use crate::common;
    use crate::livesql_post::example_with;
    use serde_json::json;

    /// `lsq_155`'s test case with the gold's text stripped first.
    pub(super) const STRIPPED: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    sol_sqls = [sql.strip() for sql in sol_sqls]\n    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not (err or to or err2 or to2)\n    assert preprocess_results(pred_res) == preprocess_results(sol_res)\n    return 1\n";

    /// The wrong answer: the name's order.
    pub(super) const WRONG: &str = "SELECT name, gpa FROM students ORDER BY name";

    /// The lever before [`WRONG`].
    pub(super) const LEVER: [&str; 2] = [
        "UPDATE students SET gpa = 0 WHERE (SELECT min(rowid) FROM enrolments) > 1",
        "REPLACE INTO enrolments SELECT * FROM enrolments WHERE rowid = (SELECT min(rowid) FROM enrolments)",
    ];

    /// `sqlgate eval` of the example gated on `livesql_sound` against a baseline made with
    /// `lsq_061` given `test`, `lsq_061` predicted as `prediction`.
    pub(super) fn gate(test: &str, prediction: &[&str]) -> (Option<i32>, String) {
        let dir = example_with("lsq_061", json!({ "test_cases": [test] }));
        let root = dir.path();
        let config = root.join("sqlgate.yml");
        std::fs::remove_file(root.join("baseline.json")).unwrap();
        let update = common::sqlgate(&["baseline", "update", "--config", common::arg(&config)]);
        common::assert_exit(&update, 0);
        let path = root.join("predictions/model.jsonl");
        let line = json!({"instance_id": "lsq_061", "pred_sqls": prediction}).to_string();
        let lines: Vec<String> = (std::fs::read_to_string(&path).unwrap().lines())
            .map(|l| match l.contains("\"lsq_061\"") {
                true => line.clone(),
                false => l.to_string(),
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let output = common::eval(&config, &["--comment", "never"]);
        (output.status.code(), common::text(&output))
    }

    #[test]
    fn control_a_wrong_order_fails_the_gate() {
        let (code, said) = gate(STRIPPED, &[WRONG]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_second_run_that_levels_the_unmarked_golds_column_does_not_pass() {
        let (code, said) = gate(STRIPPED, &[LEVER[0], LEVER[1], WRONG]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed by changing what its unmarked gold reads on its second run: {said}"
        );
    }
}

/// The same lever as [`livesql_sound_unmarked_gold_on_the_second_run`] under the corpus's own
/// `lsq_155` test case (the gold passed to `execute_queries` as given, so marked): the twin must
/// answer it whatever the prediction's second run did.
mod livesql_sound_marked_gold_on_the_second_run {
    use super::livesql_sound_unmarked_gold_on_the_second_run::{gate, LEVER, WRONG};

    const MARKED: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not (err or to or err2 or to2)\n    assert preprocess_results(pred_res) == preprocess_results(sol_res)\n    return 1\n";

    #[test]
    fn control_a_wrong_order_fails_the_gate() {
        let (code, said) = gate(MARKED, &[WRONG]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_second_run_that_levels_the_golds_column_does_not_pass() {
        let (code, said) = gate(MARKED, &[LEVER[0], LEVER[1], WRONG]);
        assert_ne!(code, Some(0), "a wrong prediction passed: {said}");
    }
}
