//! Red team round 28 (issue 44): round 27's fixes of `livesql_sound`'s twin (a gold rebuilt by a
//! string operation keeps its mark, or goes to the twin when its statements are the gold's
//! alone) and the new `bird_critic_sound` on SQLite. Every test asserts the SECURE outcome and
//! runs its control (the same regressing pull request without the lever, which must exit 1): a
//! failing test is a win. Report: `/work/notes/redteam28.md`.

/// `sqlgate eval` of `examples/livesql-mini` (its config passed through `edit`), `lsq_061` given
/// `fields`, against a baseline made so, `lsq_061` then predicted as `prediction`.
fn gate_example(
    fields: serde_json::Value,
    edit: impl Fn(&str) -> String,
    prediction: &[&str],
) -> (Option<i32>, String) {
    use crate::common;
    let dir = crate::livesql_post::example_with("lsq_061", fields);
    let root = dir.path();
    let config = root.join("sqlgate.yml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, edit(&text)).unwrap();
    std::fs::remove_file(root.join("baseline.json")).unwrap();
    let update = common::sqlgate(&["baseline", "update", "--config", common::arg(&config)]);
    common::assert_exit(&update, 0);
    let path = root.join("predictions/model.jsonl");
    let line = serde_json::json!({"instance_id": "lsq_061", "pred_sqls": prediction}).to_string();
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

/// The gold of `lsq_061` (order counts).
const GOLD: &str = "SELECT name, gpa FROM students ORDER BY gpa DESC, name";

/// The wrong answer: the name's order.
const WRONG: &str = "SELECT name, gpa FROM students ORDER BY name";

/// A TEMP view over the gold's table levelling every gpa, so the gold's order is the name's.
const VIEW: &str =
    "CREATE TEMP VIEW IF NOT EXISTS students AS SELECT name, 0 AS gpa FROM main.students";

/// Class: `livesql_sound`'s twin (round 27 win A's fix, `routing.rs::GoldTexts::is_gold`). An
/// unmarked request goes to the twin only when its statements are all the gold's AND one at
/// least is not also the prediction's. `str.join` makes a plain `str` (`helpers.py` says so), so
/// a test case that normalises the gold's whitespace (`" ".join(s.split())`) before
/// `execute_queries` sends an unmarked gold. The set-up: `examples/livesql-mini`, `lsq_061`
/// given such a test case (the corpus's `lsq_155` shape), gated on `livesql_sound`. The lever:
/// the prediction repeats the gold's statement itself (in the middle, its result unused), so the
/// gold's request is "also the prediction's" and runs on the prediction's copy, on the very
/// connection where the prediction's run in the test case just made a TEMP view levelling the
/// gold's column; the wrong last statement then agrees with the gold.
mod livesql_sound_joined_gold_the_prediction_repeats {
    use super::{gate_example, GOLD, VIEW, WRONG};
    use serde_json::json;

    /// `lsq_155`'s test case with the gold's whitespace normalised by `str.join` first.
    pub(super) const JOINED: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    sol_sqls = [\" \".join(sql.split()) for sql in sol_sqls]\n    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not (err or to or err2 or to2)\n    assert preprocess_results(pred_res) == preprocess_results(sol_res)\n    return 1\n";

    fn gate(prediction: &[&str]) -> (Option<i32>, String) {
        gate_example(
            json!({ "test_cases": [JOINED] }),
            |text| text.to_string(),
            prediction,
        )
    }

    #[test]
    fn control_the_gold_passes_a_wrong_order_and_the_view_alone_fail() {
        let (code, said) = gate(&[GOLD]);
        assert_eq!(code, Some(0), "{said}");
        let (code, said) = gate(&[WRONG]);
        assert_eq!(code, Some(1), "{said}");
        let (code, said) = gate(&[VIEW, WRONG]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_prediction_repeating_the_gold_does_not_keep_the_joined_gold_on_its_copy() {
        let (code, said) = gate(&[VIEW, GOLD, WRONG]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed by repeating the gold's statement: {said}"
        );
    }

    #[test]
    fn a_prediction_repeating_the_gold_in_lower_case_does_not_pass_either() {
        let gold = GOLD.to_lowercase().replace(", ", ",  ");
        let (code, said) = gate(&[VIEW, &gold, WRONG]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed by repeating the gold's words: {said}"
        );
    }
}

/// Class: `bird_critic_sound` on SQLite (`sound.rs::judge_bird_critic`: `livesql_sound` with
/// `conditions=` for every test). The same lever as
/// [`livesql_sound_joined_gold_the_prediction_repeats`]: the example as a bird-critic dataset
/// listing both profiles, gated on `bird_critic_sound`, `lsq_061` given a BIRD-Critic-shaped
/// test case (`conditions` in its signature) that joins the gold's words before running it; and
/// the lever of [`livesql_sound_gold_wrapped_in_a_plain_template`] (the gold formatted into a
/// plain template, the prediction not repeating it).
mod bird_critic_sound_joined_gold_the_prediction_repeats {
    use super::{gate_example, GOLD, VIEW, WRONG};
    use serde_json::json;

    const JOINED: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):\n    sol_sqls = [\" \".join(sql.split()) for sql in sol_sqls]\n    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not (err or to or err2 or to2)\n    assert preprocess_results(pred_res) == preprocess_results(sol_res)\n    return 1\n";

    fn gate(prediction: &[&str]) -> (Option<i32>, String) {
        gate_with(JOINED, prediction)
    }

    fn gate_with(test: &str, prediction: &[&str]) -> (Option<i32>, String) {
        let bird_critic = |text: &str| {
            let edited = text
                .replace("kind: livesql\n", "kind: bird-critic\n")
                .replace(
                    "metrics: [livesql, livesql_sound]",
                    "metrics: [bird_critic, bird_critic_sound]",
                )
                .replace(
                    "reference: livesql_sound\n",
                    "reference: bird_critic_sound\n",
                )
                .replace("  metric: livesql_sound", "  metric: bird_critic_sound");
            assert_ne!(edited, text);
            edited
        };
        gate_example(json!({ "test_cases": [test] }), bird_critic, prediction)
    }

    #[test]
    fn control_the_gold_passes_a_wrong_order_and_the_view_alone_fail() {
        let (code, said) = gate(&[GOLD]);
        assert_eq!(code, Some(0), "{said}");
        let (code, said) = gate(&[WRONG]);
        assert_eq!(code, Some(1), "{said}");
        let (code, said) = gate(&[VIEW, WRONG]);
        assert_eq!(code, Some(1), "{said}");
    }

    /// The gold as a derived table, built with `str.format` on a plain template (the lever of
    /// [`super::livesql_sound_gold_wrapped_in_a_plain_template`]).
    const FORMAT: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):\n    sol_sqls = [\"SELECT * FROM ({}) AS gold\".format(sql) for sql in sol_sqls]\n    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not (err or to or err2 or to2)\n    assert preprocess_results(pred_res) == preprocess_results(sol_res)\n    return 1\n";

    #[test]
    fn a_gold_formatted_into_a_template_does_not_pass_a_bird_critic_sound_gate() {
        let (code, said) = gate_with(FORMAT, &[WRONG]);
        assert_eq!(code, Some(1), "control: {said}");
        let (code, said) = gate_with(FORMAT, &[VIEW, WRONG]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed bird_critic_sound: its view answered the formatted gold: {said}"
        );
    }

    #[test]
    fn a_prediction_repeating_the_gold_does_not_pass_a_bird_critic_sound_gate() {
        let (code, said) = gate(&[VIEW, GOLD, WRONG]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed bird_critic_sound by repeating the gold: {said}"
        );
    }
}

/// Class: `livesql_sound`'s twin (round 27 win A's fix). `_GoldText` keeps its mark through the
/// gold's OWN string methods and `%`, but a gold placed INTO another text by `str.format` on a
/// plain template or by an f-string with words around it is a plain `str` whose words are no
/// longer the gold's, so `GoldTexts::is_gold` sends it to the prediction's copy. The set-up:
/// `lsq_061` given a test case that wraps its gold in a subquery before `execute_queries` (a
/// common shape: the gold as a derived table, `SELECT * FROM (<gold>)`), gated on
/// `livesql_sound`. The lever: round 26's TEMP view levelling the gold's column, made again by
/// the prediction's run inside the test case on the same connection, then the wrong order. The
/// prediction need not repeat the gold.
mod livesql_sound_gold_wrapped_in_a_plain_template {
    use super::{gate_example, GOLD, VIEW, WRONG};
    use serde_json::json;

    /// The gold as a derived table, built with `str.format` on a plain template.
    const FORMAT: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    sol_sqls = [\"SELECT * FROM ({}) AS gold\".format(sql) for sql in sol_sqls]\n    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not (err or to or err2 or to2)\n    assert preprocess_results(pred_res) == preprocess_results(sol_res)\n    return 1\n";

    /// The same with an f-string.
    const FSTRING: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    sol_sqls = [f\"SELECT * FROM ({sql}) AS gold\" for sql in sol_sqls]\n    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not (err or to or err2 or to2)\n    assert preprocess_results(pred_res) == preprocess_results(sol_res)\n    return 1\n";

    fn gate(test: &str, prediction: &[&str]) -> (Option<i32>, String) {
        gate_example(
            json!({ "test_cases": [test] }),
            |text| text.to_string(),
            prediction,
        )
    }

    #[test]
    fn control_the_gold_passes_and_a_wrong_order_fails() {
        for test in [FORMAT, FSTRING] {
            let (code, said) = gate(test, &[GOLD]);
            assert_eq!(code, Some(0), "{said}");
            let (code, said) = gate(test, &[WRONG]);
            assert_eq!(code, Some(1), "{said}");
        }
    }

    #[test]
    fn a_gold_formatted_into_a_template_does_not_read_the_predictions_view() {
        let (code, said) = gate(FORMAT, &[VIEW, WRONG]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed: its view answered the formatted gold: {said}"
        );
    }

    #[test]
    fn a_gold_in_an_f_string_does_not_read_the_predictions_view() {
        let (code, said) = gate(FSTRING, &[VIEW, WRONG]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed: its view answered the f-string gold: {said}"
        );
    }
}

/// Class: `livesql_sound`'s twin, the other half of round 27 win A's fix (contained probe). A
/// gold rebuilt by an operation the mark does not survive (`re.sub` dropping a trailing `;`, a
/// `"".join` of its characters), without the prediction repeating it, must still read the twin
/// (`GoldTexts::is_gold`: the gold's words alone). The set-up: `lsq_061` given such a test case,
/// gated on `livesql_sound`; the lever: the TEMP view before the wrong order.
mod livesql_sound_gold_rebuilt_by_re_sub {
    use super::{gate_example, GOLD, VIEW, WRONG};
    use serde_json::json;

    const RE_SUB: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    import re\n    sol_sqls = [re.sub(r';\\s*$', '', ''.join(list(sql))) for sql in sol_sqls]\n    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n    assert not (err or to or err2 or to2)\n    assert preprocess_results(pred_res) == preprocess_results(sol_res)\n    return 1\n";

    fn gate(prediction: &[&str]) -> (Option<i32>, String) {
        gate_example(
            json!({ "test_cases": [RE_SUB] }),
            |text| text.to_string(),
            prediction,
        )
    }

    #[test]
    fn control_the_gold_passes_and_a_wrong_order_fails() {
        let (code, said) = gate(&[GOLD]);
        assert_eq!(code, Some(0), "{said}");
        let (code, said) = gate(&[WRONG]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_rebuilt_gold_reads_the_twin_not_the_predictions_view() {
        let (code, said) = gate(&[VIEW, WRONG]);
        assert_eq!(code, Some(1), "{said}");
    }
}

/// Class: `livesql_sound`'s exact unchanged check (`post.rs::query_state`, round 27's fix) and
/// a state marker it might miss: `ANALYZE` writes `sqlite_stat1`, an internal `sqlite_` table
/// that `table_names` leaves out. The set-up: `lsq_061` as shipped (a Query item without test
/// cases), gated on `livesql_sound`. The lever: `ANALYZE` before the gold; the secure outcome is
/// that the Query item whose prediction left the database changed fails (exit 1: the baseline
/// passed it), so the statistics table cannot serve as an unseen mark between runs.
mod livesql_sound_analyze_marker {
    use super::{gate_example, GOLD};
    use serde_json::json;

    fn gate(prediction: &[&str]) -> (Option<i32>, String) {
        gate_example(json!({}), |text| text.to_string(), prediction)
    }

    #[test]
    fn control_the_gold_passes() {
        let (code, said) = gate(&[GOLD]);
        assert_eq!(code, Some(0), "{said}");
    }

    #[test]
    fn statistics_left_by_analyze_are_a_change() {
        let (code, said) = gate(&["ANALYZE", GOLD]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn statistics_of_one_table_are_a_change() {
        let (code, said) = gate(&["ANALYZE main.enrolments", GOLD]);
        assert_eq!(code, Some(1), "{said}");
    }
}
