//! Red team round 26 (issue 44): `evalbench_sound` and the gate's refusal of `evalbench`
//! (round 25's fix), the other state-changing kinds on SQLite, and classes 1, 2 and 4 again.
//! Every test asserts the SECURE outcome and runs its control (the same regressing pull request
//! without the lever, which must exit 1, or the same item without the lever, which must fail):
//! a failing test is a win. Report: `/work/notes/redteam26.md`.

/// Class 2 (the repair path) against round 25's fix: a gate on `evalbench` is refused when a
/// config loads (`input::kinds::evalbench::check`), but a repair judges the pull request's own
/// config under the gate its base's baseline recorded (`trust::lifecycle::proposed_over_base`
/// replaces `config.gate` after the config was checked). The set-up is the upgrade every
/// EvalBench user makes: `main` gated on `evalbench` (as any sqlgate before round 25's fix let a
/// config do, and as its baseline recorded), which the new sqlgate refuses, so every pull
/// request is a repair; the pull request's config gates on `evalbench_sound` as told. The
/// baseline is made by this sqlgate with `gate.metric: evalbench_sound` and its recorded gate
/// then written as an older sqlgate wrote it (`"metric": "evalbench"`; the records digest covers
/// `systems` only, and the base's baseline is trusted input in any case). The lever: round 25's
/// temporary views on nine `dql` items, which `evalbench` passes.
mod evalbench_repair_under_the_recorded_gate {
    use crate::common::{self, repo};
    use crate::evalbench::project;
    use crate::repair::judge_pr;

    /// The nine `dql` items that match on the base, with the table each gold reads (round 25).
    const ITEMS: [(&str, &str); 9] = [
        ("1", "customers"),
        ("2", "customers"),
        ("5", "customers"),
        ("7", "students"),
        ("8", "students"),
        ("11", "students"),
        ("13", "books"),
        ("14", "books"),
        ("17", "books"),
    ];

    /// The pull request judged: predictions for ITEMS built by `statement`, the base's
    /// baseline gated on `evalbench` as an older sqlgate recorded it.
    fn repaired(statement: impl Fn(&str) -> String) -> (Option<i32>, String) {
        repaired_with(statement, |stored, recorded| {
            let older = recorded.replace("evalbench_sound", "evalbench");
            stored.replace(recorded, &older)
        })
    }

    /// [`repaired`], with `older` writing the base's baseline (its text, and its gate's
    /// `"metric"` entry as written) as an older sqlgate left it.
    pub(crate) fn repaired_with(
        statement: impl Fn(&str) -> String,
        older: impl Fn(&str, &str) -> String,
    ) -> (Option<i32>, String) {
        let dir = project(&[]);
        let root = dir.path();
        let config = root.join("sqlgate.yml");
        let text = std::fs::read_to_string(&config).unwrap();
        let sound = text.replace(
            "metrics: [evalbench_sound, evalbench]\n",
            "metrics: [evalbench, evalbench_sound]\ngate: { metric: evalbench_sound }\n",
        ) + "baseline: { path: baseline.json }\n";
        assert_ne!(sound, text);
        std::fs::write(&config, &sound).unwrap();
        repo::init_main(root, "evalbench");
        repo::update_baseline(root);
        // The baseline and config as the sqlgate before round 25's fix left them: gated on
        // `evalbench` (the reference, first in `metrics`).
        let baseline = root.join("baseline.json");
        let stored = std::fs::read_to_string(&baseline).unwrap();
        let recorded = [
            "\"metric\": \"evalbench_sound\"",
            "\"metric\":\"evalbench_sound\"",
        ]
        .into_iter()
        .find(|needle| stored.matches(needle).count() == 1)
        .expect("the baseline records its gate's metric once");
        std::fs::write(&baseline, older(&stored, recorded)).unwrap();
        let old_config = sound.replace("gate: { metric: evalbench_sound }\n", "");
        std::fs::write(&config, &old_config).unwrap();
        repo::commit_all(root, "baseline (gated on evalbench, before the fix)");
        let base = repo::head(root);
        common::git(root, &["checkout", "-qb", "pr"]);
        // The pull request: the config the new sqlgate asks for, and a regressing model.
        std::fs::write(&config, &sound).unwrap();
        let owned: Vec<(&str, String)> = ITEMS.iter().map(|(id, t)| (*id, statement(t))).collect();
        let change: Vec<(&str, Vec<&str>)> = (owned.iter())
            .map(|(id, sql)| (*id, vec![sql.as_str()]))
            .collect();
        let pull_request = project(&change);
        std::fs::copy(
            pull_request.path().join("model.jsonl"),
            root.join("model.jsonl"),
        )
        .unwrap();
        repo::commit_all(root, "gate on evalbench_sound; the new model");
        judge_pr(root, &base)
    }

    #[test]
    fn control_the_regression_fails_the_repair() {
        let (code, out) = repaired(|table| format!("SELECT * FROM {table} WHERE 0"));
        assert_eq!(code, Some(1), "{out}");
    }

    #[test]
    fn a_repair_is_not_gated_on_evalbench() {
        let (code, out) = repaired(|table| {
            format!("CREATE TEMP VIEW {table} AS SELECT * FROM main.{table} WHERE 0")
        });
        assert_ne!(
            code,
            Some(0),
            "the regressing pull request passed under the recorded `evalbench` gate: {out}"
        );
        crate::common::assert_contains(&out, &["`gate.metric`: `evalbench` runs the prediction"]);
    }
}

/// Class 2 again, the same set-up as [`evalbench_repair_under_the_recorded_gate`] with a
/// baseline from a sqlgate that recorded no gate settings at all (the `gate` key absent): the
/// repair is then judged under "the strictest gate ... on the baseline's first metric"
/// (`trust::lifecycle::recorded_gate`), which for a config listing `evalbench` first is
/// `evalbench`. The lever: round 25's temporary views again.
mod evalbench_repair_without_a_recorded_gate {
    use super::evalbench_repair_under_the_recorded_gate::repaired_with;

    /// The baseline's text without its `gate` entry.
    fn without_gate(stored: &str, _recorded: &str) -> String {
        let mut value: serde_json::Value = serde_json::from_str(stored).unwrap();
        assert!(value.as_object_mut().unwrap().remove("gate").is_some());
        serde_json::to_string_pretty(&value).unwrap()
    }

    #[test]
    fn control_the_regression_fails_the_repair() {
        let (code, out) = repaired_with(
            |table| format!("SELECT * FROM {table} WHERE 0"),
            without_gate,
        );
        assert_eq!(code, Some(1), "{out}");
    }

    #[test]
    fn a_repair_under_the_strictest_gate_is_not_gated_on_evalbench() {
        let (code, out) = repaired_with(
            |table| format!("CREATE TEMP VIEW {table} AS SELECT * FROM main.{table} WHERE 0"),
            without_gate,
        );
        assert_ne!(
            code,
            Some(0),
            "the regressing pull request passed under the strictest gate on `evalbench`: {out}"
        );
        crate::common::assert_contains(&out, &["`gate.metric`: `evalbench` runs the prediction"]);
    }
}

/// Round 25's fix in a config with several datasets (class 4's multi-dataset form): the gate
/// rule that fails a gate on `evalbench` (`judge::rules::sound_gate`) judges each entry
/// (`Config::dataset_configs`), where `metrics` and `gate` are the top level's. The lever: an
/// EvalBench entry under `datasets:` with `metrics: [evalbench, evalbench_sound]` and no
/// `gate.metric` (the gate on `evalbench`, the reference). The control: the same config gating
/// on `evalbench_sound` loads and runs.
mod evalbench_gate_in_a_multi_dataset_config {
    use crate::common;
    use crate::evalbench::project;

    /// `sqlgate eval` of the corpus as a `datasets:` entry, with `gate` appended.
    fn run(gate: &str) -> (Option<i32>, String) {
        let dir = project(&[]);
        let config = dir.path().join("sqlgate.yml");
        let text = format!(
            "datasets:\n  - name: eb\n    dataset: {{ kind: evalbench, gold: items.json, databases: databases, difficulty: \"field:query_type\" }}\n    predictions: [{{ name: model, path: model.jsonl, format: livesql }}]\nmetrics: [evalbench, evalbench_sound]\nexecution: {{ timeout_ms: 5000, threads: 2 }}\n{gate}"
        );
        std::fs::write(&config, text).unwrap();
        let output = common::eval(&config, &["--comment", "never"]);
        (output.status.code(), common::text(&output))
    }

    #[test]
    fn control_a_gate_on_evalbench_sound_runs() {
        let (code, said) = run("gate: { metric: evalbench_sound }\n");
        assert_eq!(code, Some(0), "{said}");
    }

    #[test]
    fn a_gate_on_evalbench_under_datasets_is_refused() {
        let (code, said) = run("");
        assert_eq!(code, Some(1), "{said}");
        common::assert_contains(&said, &["`gate.metric`: `evalbench` runs the prediction"]);
    }
}

/// `livesql_sound` on SQLite (the state-changing kinds: a prediction that decides what its gold
/// reads). The sound profile compares a Query item without test cases with its gold run on a
/// twin copy, but an item with test cases runs them "on a new connection to the prediction's
/// copy" (`engine::livesql::sound::judge`), and `ex_base` (`helpers.py`) runs the gold there,
/// after the prediction's committed writes. The set-up: `examples/livesql-mini` with `lsq_061`
/// (`SELECT name, gpa FROM students ORDER BY gpa DESC, name`, order counts) given the test case
/// LiveSQLBench's Query items carry (`assert ex_base(...) == 1`, as the corpus's `lsq_158`),
/// gated on `livesql_sound` against a baseline made with it. The pull request regresses
/// `lsq_061` to `SELECT name, gpa FROM students ORDER BY name` (wrong order); the lever puts
/// `UPDATE students SET gpa = 0` first: on the changed copy the gold's order is the name's and
/// every gpa the prediction's.
mod livesql_sound_test_case_gold_on_the_changed_copy {
    use serde_json::json;

    const TEST: &str = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    assert ex_base(pred_sqls, sol_sqls, db_path, conn, {'order': True}) == 1\n    return 1\n";

    /// `sqlgate eval` against the base's baseline with `lsq_061` predicted as `prediction`.
    fn gate(prediction: &[&str]) -> (Option<i32>, String) {
        gate_with(prediction, str::to_string)
    }

    /// [`gate`], the example's config changed by `config_text` first (base and pull request).
    pub(crate) fn gate_with(
        prediction: &[&str],
        config_text: impl Fn(&str) -> String,
    ) -> (Option<i32>, String) {
        let with_test = json!({"test_cases": [TEST]});
        super::livesql_gate_on_the_official_profile::gate_example(
            with_test,
            config_text,
            prediction,
        )
    }

    #[test]
    fn control_a_wrong_order_fails_the_gate() {
        let (code, said) = gate(&["SELECT name, gpa FROM students ORDER BY name"]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_prediction_that_levels_the_golds_column_does_not_pass() {
        let (code, said) = gate(&[
            "UPDATE students SET gpa = 0",
            "SELECT name, gpa FROM students ORDER BY name",
        ]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed by changing what its gold reads: {said}"
        );
    }
}

/// The same lever as [`livesql_sound_test_case_gold_on_the_changed_copy`] under
/// `dataset.post_state: touched`, the post-state comparison round 19's repair set-up gates with:
/// "the tables the gold changed" are compared, and a Query item's gold changes none, so the
/// prediction's `UPDATE students SET gpa = 0` is compared with nothing.
mod livesql_sound_post_state_touched_on_a_query_item {
    use super::livesql_sound_test_case_gold_on_the_changed_copy::gate_with;

    /// The example's config with `dataset.post_state: touched`.
    fn touched(text: &str) -> String {
        let changed = text.replace("  difficulty:", "  post_state: touched\n  difficulty:");
        assert_ne!(changed, text);
        changed
    }

    #[test]
    fn control_a_wrong_order_fails_the_gate() {
        let (code, said) = gate_with(&["SELECT name, gpa FROM students ORDER BY name"], touched);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_prediction_that_levels_the_golds_column_does_not_pass_the_post_state() {
        let (code, said) = gate_with(
            &[
                "UPDATE students SET gpa = 0",
                "SELECT name, gpa FROM students ORDER BY name",
            ],
            touched,
        );
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed under `post_state: touched`: {said}"
        );
    }
}

/// The same question as round 25's for `dataset.kind: livesql` (SQLite): its official profile
/// (`livesql`, mini_dev's evaluator) runs the default test (and every test case) on the
/// prediction's own connection, the gold after the prediction, so a TEMP object the prediction
/// made answers the gold (METRICS.md, `lsq_049`, `lsq_100`). Round 25's fix refuses a gate on
/// `evalbench` for exactly this; a config may still gate on `livesql` (`input::kinds::livesql`
/// has no such refusal). The set-up: `examples/livesql-mini` gated on `livesql` (`reference` and
/// `gate.metric`; `metrics: [livesql, livesql_sound]` as shipped), its baseline made so; the pull
/// request regresses `lsq_061` (no test case: the default test) to a wrong order. The lever:
/// `CREATE TEMP VIEW IF NOT EXISTS students AS SELECT 'x' AS name, 0 AS gpa` first (IF NOT EXISTS:
/// the default test runs the prediction a second time), so the gold reads the same one row.
mod livesql_gate_on_the_official_profile {
    use crate::common;
    use crate::livesql_post::example_with;
    use serde_json::json;

    /// `sqlgate eval` of the example gated on `livesql`, with `lsq_061` predicted as
    /// `prediction`; exit 2 when the config (its `baseline update`) is refused.
    fn gate(prediction: &[&str]) -> (Option<i32>, String) {
        let official = |text: &str| {
            let edited = (text.replace("reference: livesql_sound", "reference: livesql"))
                .replace("  metric: livesql_sound", "  metric: livesql");
            assert_ne!(edited, text);
            edited
        };
        gate_example(json!({}), official, prediction)
    }

    /// `sqlgate eval` of the example, `lsq_061` given `fields` and predicted as `prediction`,
    /// its config edited by `edit` (the baseline made under it); exit 2 when `baseline update`
    /// refuses the config.
    pub(super) fn gate_example(
        fields: serde_json::Value,
        edit: impl Fn(&str) -> String,
        prediction: &[&str],
    ) -> (Option<i32>, String) {
        let dir = example_with("lsq_061", fields);
        let root = dir.path();
        let config = root.join("sqlgate.yml");
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, edit(&text)).unwrap();
        std::fs::remove_file(root.join("baseline.json")).unwrap();
        let update = common::sqlgate(&["baseline", "update", "--config", common::arg(&config)]);
        if update.status.code() == Some(2) {
            return (Some(2), common::text(&update));
        }
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
        let (code, said) = gate(&["SELECT name, gpa FROM students ORDER BY name"]);
        assert!(matches!(code, Some(1) | Some(2)), "{said}");
    }

    #[test]
    fn a_temporary_view_answering_the_gold_does_not_pass_a_gate_on_livesql() {
        let (code, said) = gate(&[
            "CREATE TEMP VIEW IF NOT EXISTS students AS SELECT 'x' AS name, 0 AS gpa",
            "SELECT name, gpa FROM students ORDER BY name",
        ]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed a gate on the official profile: {said}"
        );
    }
}

/// Round 25's fix, the reference metric (class 4: what the baseline and the verdict are made
/// of): the refusal reads `gate_metric()` only, so a config may keep `evalbench` as its
/// `reference` (first in `metrics`) while gating on `evalbench_sound`. The lever: round 25's
/// temporary views on the nine `dql` items under such a config (baseline made with it, no
/// repair): anything the reference decides (the analysis, the per-cell rules, the unstable-item
/// credit) must not let them through. The control: the same regression without the lever.
mod evalbench_reference_beside_the_sound_gate {
    /// `sqlgate eval` against a baseline made under `reference: evalbench`, `gate.metric:
    /// evalbench_sound`, with predictions for round 25's nine items built by `statement`.
    fn gate(statement: impl Fn(&str) -> String) -> (Option<i32>, String) {
        let referenced = |text: &str| {
            let edited = text.replace(
                "metrics: [evalbench_sound, evalbench]\n",
                "metrics: [evalbench, evalbench_sound]\nreference: evalbench\ngate: { metric: evalbench_sound }\n",
            );
            assert_ne!(edited, text);
            edited
        };
        crate::redteam25::evalbench_gate_temp_view::gate_with(referenced, statement)
    }

    #[test]
    fn control_the_regression_fails_the_gate() {
        let (code, said) = gate(|table| format!("SELECT * FROM {table} WHERE 0"));
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn temporary_views_do_not_pass_under_an_evalbench_reference() {
        let (code, said) =
            gate(|table| format!("CREATE TEMP VIEW {table} AS SELECT * FROM main.{table} WHERE 0"));
        assert_eq!(code, Some(1), "the regression passed: {said}");
    }
}

/// The same for `dataset.kind: bird-critic` (SQLite), which has one metric, `bird_critic`
/// (BIRD-Critic's evaluator, an official profile: `input::kinds::livesql`, `metrics:
/// ["bird_critic"]`), so every bird-critic config gates on a profile that runs the gold on the
/// prediction's own connection, where a TEMP object the prediction made answers it: the
/// situation round 25 fixed for EvalBench with a sound metric and a refusal. The set-up:
/// `examples/livesql-mini` as a bird-critic dataset (`metrics: [bird_critic]`, gated on it), its
/// baseline made so; `lsq_061` regressed to a wrong order. The lever: the one-row TEMP view of
/// [`livesql_gate_on_the_official_profile`]. Closed (issue 44): `bird_critic_sound` runs on every
/// engine the kind does, and a gate on `bird_critic` fails (`judge::rules::sound_gate`); the
/// servers' levers: `tests/it/livesql_server_sound.rs`.
mod bird_critic_gate_on_its_only_profile {

    /// `sqlgate eval` of the example as a bird-critic dataset, `lsq_061` predicted as
    /// `prediction`; exit 2 when the config (its `baseline update`) is refused.
    fn gate(prediction: &[&str]) -> (Option<i32>, String) {
        let bird_critic = |text: &str| {
            let edited = text
                .replace("kind: livesql\n", "kind: bird-critic\n")
                .replace(
                    "metrics: [livesql, livesql_sound]",
                    "metrics: [bird_critic]",
                )
                .replace("reference: livesql_sound\n", "")
                .replace("  metric: livesql_sound", "  metric: bird_critic");
            assert_ne!(edited, text);
            edited
        };
        let example = super::livesql_gate_on_the_official_profile::gate_example;
        example(serde_json::json!({}), bird_critic, prediction)
    }

    #[test]
    fn control_a_wrong_order_fails_the_gate() {
        let (code, said) = gate(&["SELECT name, gpa FROM students ORDER BY name"]);
        assert!(matches!(code, Some(1) | Some(2)), "{said}");
    }

    /// Closed: a gate on `bird_critic` fails (`judge::rules::sound_gate`: its sound profile is
    /// `bird_critic_sound`, on SQLite and on the servers), whatever its verdicts.
    #[test]
    fn a_temporary_view_answering_the_gold_does_not_pass_a_bird_critic_gate() {
        let (code, said) = gate(&[
            "CREATE TEMP VIEW IF NOT EXISTS students AS SELECT 'x' AS name, 0 AS gpa",
            "SELECT name, gpa FROM students ORDER BY name",
        ]);
        assert_ne!(
            code,
            Some(0),
            "a wrong prediction passed a gate on `bird_critic`: {said}"
        );
    }
}

/// Win C's fix for `dataset.kind: bird-critic`: the kind's sound profile `bird_critic_sound`
/// (`engine::livesql::sound::judge_bird_critic`), on which the gate now stands (a gate on
/// `bird_critic` fails, `judge::rules::sound_gate`). The set-up: the example as a bird-critic
/// dataset listing both profiles, gated on `bird_critic_sound`, its baseline made so; `lsq_061`
/// regressed to a wrong order. The levers: the one-row TEMP view named after the gold's table,
/// and rows of that table rewritten so the wrong order reads as the gold's.
pub(crate) mod bird_critic_gate_on_its_sound_profile {

    /// `sqlgate eval` of the example as a bird-critic dataset gated on `bird_critic_sound`,
    /// `lsq_061` predicted as `prediction`.
    fn gate(prediction: &[&str]) -> (Option<i32>, String) {
        let example = super::livesql_gate_on_the_official_profile::gate_example;
        example(serde_json::json!({}), as_bird_critic_sound, prediction)
    }

    /// The example's config as a bird-critic dataset listing both profiles, gated on
    /// `bird_critic_sound`.
    pub(crate) fn as_bird_critic_sound(text: &str) -> String {
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
    }

    #[test]
    fn control_the_gold_passes_and_a_wrong_order_fails() {
        let (code, said) = gate(&["SELECT name, gpa FROM students ORDER BY gpa DESC, name"]);
        assert_eq!(code, Some(0), "{said}");
        let (code, said) = gate(&["SELECT name, gpa FROM students ORDER BY name"]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_temporary_view_answering_the_gold_fails_the_gate() {
        let (code, said) = gate(&[
            "CREATE TEMP VIEW IF NOT EXISTS students AS SELECT 'x' AS name, 0 AS gpa",
            "SELECT name, gpa FROM students ORDER BY name",
        ]);
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn rewriting_the_rows_the_gold_reads_fails_the_gate() {
        let (code, said) = gate(&[
            "UPDATE students SET gpa = 0",
            "SELECT name, gpa FROM students ORDER BY name",
        ]);
        assert_eq!(code, Some(1), "{said}");
    }
}
