//! The judge over one dataset: the cells rule, coverage and the registry's example rule, as a
//! run's verdict shows them.

use super::rules::required_system::REQUIRED;
use super::*;
use crate::analysis::records::ItemRecord;
use crate::input::config::{Config, EngineName, GateConfig, SignificanceConfig, SignificanceTest};
use crate::score::stability::Reasons;
use std::collections::BTreeMap;

fn records(values: &[f64]) -> Vec<ItemRecord> {
    values
        .iter()
        .enumerate()
        .map(|(index, &v)| ItemRecord {
            index,
            difficulty: Some(if index % 2 == 0 { "easy" } else { "hard" }.into()),
            metrics: [("ex".to_string(), Some(v))].into(),
            outcome: BTreeMap::new(),
            prediction: None,
            unstable: Reasons::NONE,
        })
        .collect()
}

fn config(gate: GateConfig) -> Config {
    let dir = std::env::temp_dir();
    let mut config = Config::parse(
        "dataset: { gold: g.sql, databases: . }\npredictions: [{ path: p.txt }]\n",
        &dir.join("sqlgate.yml"),
        &crate::engine::registry::Engines,
    )
    .unwrap();
    config.gate = gate;
    config
}

fn run(gate: GateConfig, base: &[f64], candidate: &[f64]) -> Verdict {
    run_records(gate, ("m", records(base)), records(candidate))
}

/// The gate on system `m` against the baseline system `base.0`.
fn run_records(
    gate: GateConfig,
    base: (&str, Vec<ItemRecord>),
    candidate: Vec<ItemRecord>,
) -> Verdict {
    run_records_on(EngineName::DEFAULT, gate, base, candidate)
}

/// [`run_records`] with a dataset on the engine named `engine`.
fn run_records_on(
    engine: &str,
    gate: GateConfig,
    base: (&str, Vec<ItemRecord>),
    candidate: Vec<ItemRecord>,
) -> Verdict {
    let baseline = baseline_of(&[base]);
    let current = [SystemRecords {
        name: "m".into(),
        from_baseline: false,
        items: candidate,
    }];
    let mut config = config(gate);
    config.dataset.engine.kind = EngineName::try_from(engine.to_string()).unwrap();
    evaluate(&config, &current, Some(&baseline))
}

/// The verdict of every rule on `current` against `baseline`, with `config`'s gate.
fn evaluate(config: &Config, current: &[SystemRecords], baseline: Option<&Baseline>) -> Verdict {
    let metric = config.gate_metric();
    let comparisons = baseline.map_or_else(Vec::new, |b| {
        let tie_breaker = crate::score::stability::TieBreaker::of(&config.dataset.engine.kind);
        crate::analysis::comparison::compare_all(
            &config.gate,
            (metric, tie_breaker),
            current,
            b,
            &Vec::new(),
        )
    });
    let context = Context {
        gate: &config.gate,
        metric,
        predictions: &config.predictions,
        current,
        baseline: baseline.map_or(Compared::NotConfigured, Compared::Baseline),
        comparisons: &comparisons,
        anchor: None,
        age: None,
        own_config: false,
        allowed_gold_errors: &[],
    };
    judge(&context, Vec::new())
}

/// Records whose `ex` is not measured, with `outcome`.
fn unmeasured_records(count: usize, outcome: &str) -> Vec<ItemRecord> {
    records(&vec![0.0; count])
        .into_iter()
        .map(|mut r| {
            r.metrics.insert("ex".into(), None);
            r.outcome.insert("ex".into(), outcome.into());
            r
        })
        .collect()
}

#[test]
fn a_drop_beyond_the_threshold_fails_and_within_passes() {
    let base = [1.0; 20];
    let mut candidate = [1.0; 20];
    candidate[0] = 0.0;
    let strict = run(GateConfig::default(), &base, &candidate);
    assert!(
        !strict.passed() && strict.reasons()[0].contains("dropped 5.0 points"),
        "{strict:?}"
    );
    let lenient = run(
        GateConfig {
            max_drop_points: 5.0,
            ..GateConfig::default()
        },
        &base,
        &candidate,
    );
    assert!(lenient.passed(), "{lenient:?}");
    assert_eq!(lenient.comparisons()[0].regressed, vec![0]);
}

#[test]
fn significance_spares_drops_that_could_be_noise() {
    let base = [1.0; 20];
    let mut candidate = [1.0; 20];
    candidate[0] = 0.0;
    let significance = Some(SignificanceConfig {
        test: SignificanceTest::McnemarExact,
        alpha: 0.05,
    });
    let strict = run(
        GateConfig {
            significance: significance.clone(),
            ..GateConfig::default()
        },
        &base,
        &candidate,
    );
    assert!(
        !strict.passed(),
        "max_drop_points 0 allows no net regressed item unless max_regressed_items says so"
    );
    let noisy = run(
        GateConfig {
            significance: significance.clone(),
            max_regressed_items: Some(3),
            ..GateConfig::default()
        },
        &base,
        &candidate,
    );
    assert!(
        noisy.passed(),
        "one regression is not significant: {noisy:?}"
    );
    let cell = &noisy.comparisons()[0].cells[0];
    assert_eq!(cell.regressed, 1);
    assert!((cell.p_value.unwrap() - 1.0).abs() < 1e-9, "{cell:?}");
    let bad = [0.0; 20];
    let clear = run(
        GateConfig {
            significance,
            max_regressed_items: Some(3),
            ..GateConfig::default()
        },
        &base,
        &bad,
    );
    assert!(!clear.passed(), "{clear:?}");
}

#[test]
fn an_accepted_regression_counts_in_no_cell_and_is_noted() {
    let base = [1.0; 20];
    let mut candidate = [1.0; 20];
    (candidate[3], candidate[4]) = (0.0, 0.0);
    let accept = |items: Vec<usize>| crate::input::config::AcceptedRegression {
        items,
        reason: "gold is ambiguous".into(),
    };
    let gate = |accepted: Vec<usize>| GateConfig {
        accept: vec![accept(accepted)],
        ..GateConfig::default()
    };
    let both = run(gate(vec![3, 4]), &base, &candidate);
    assert!(both.passed(), "{both:?}");
    assert_eq!(both.comparisons()[0].accepted, [3, 4]);
    assert_eq!(both.comparisons()[0].cells[0].items, 18);
    assert_eq!(
        both.notes(),
        [
            "m: regressed items [3, 4] are accepted by `gate.accept` in the base config (gold is \
          ambiguous) and left out of every cell"
        ]
    );
    let one = run(gate(vec![3]), &base, &candidate);
    assert!(!one.passed(), "item 4 is not accepted: {one:?}");
    assert_eq!(one.comparisons()[0].regressed, [4]);
}

#[test]
fn per_difficulty_cells_and_must_pass_items() {
    let base = [1.0; 10];
    let mut candidate = [1.0; 10];
    candidate[1] = 0.0;
    let per_difficulty = [("hard".to_string(), 0.0)].into();
    let gate = GateConfig {
        max_drop_points: 50.0,
        per_difficulty,
        ..GateConfig::default()
    };
    let result = run(gate, &base, &candidate);
    assert!(
        !result.passed() && result.reasons()[0].contains("on hard dropped 20.0 points"),
        "{result:?}"
    );
    let must_pass = GateConfig {
        max_drop_points: 50.0,
        must_pass: vec![1],
        ..GateConfig::default()
    };
    let result = run(must_pass, &base, &candidate);
    assert!(
        !result.passed() && result.reasons()[0].contains("must-pass items regressed: [1]"),
        "{result:?}"
    );
}

#[test]
fn no_baseline_passes_with_a_note() {
    let result = evaluate(&config(GateConfig::default()), &[], None);
    assert!(result.passed() && result.notes()[0].contains("no baseline"));
}

#[test]
fn an_unavailable_gated_metric_fails_closed() {
    let result = run_records(
        GateConfig::default(),
        ("m", records(&[1.0; 4])),
        unmeasured_records(4, "unavailable"),
    );
    assert!(!result.passed(), "{result:?}");
    assert!(
        result
            .reasons()
            .iter()
            .any(|r| r.contains("unavailable on 4 items")),
        "{result:?}"
    );
    assert!(result
        .reasons()
        .iter()
        .any(|r| r.contains("measured nothing")));
}

#[test]
fn gated_items_whose_gold_fails_fail_closed() {
    let mut candidate = records(&[1.0; 4]);
    candidate.extend(
        unmeasured_records(6, "gold_error")
            .into_iter()
            .map(|mut r| {
                r.index += 4;
                r
            }),
    );
    let result = run_records(GateConfig::default(), ("m", records(&[1.0; 10])), candidate);
    assert!(!result.passed());
    assert!(
        result.reasons()[0].contains("gold query of 6 gated items failed"),
        "{result:?}"
    );
}

#[test]
fn a_gated_cell_without_items_fails_closed() {
    let gate = GateConfig {
        per_difficulty: [("extra".to_string(), 2.0)].into(),
        ..GateConfig::default()
    };
    let result = run(gate, &[1.0; 6], &[1.0; 6]);
    assert!(!result.passed());
    assert_eq!(result.reasons().len(), 1, "{result:?}");
    assert!(result.reasons()[0].contains("cell `extra`"), "{result:?}");
}

#[test]
fn no_system_compared_fails_closed() {
    let result = run_records(
        GateConfig::default(),
        ("another", records(&[1.0; 4])),
        records(&[1.0; 4]),
    );
    assert!(!result.passed());
    assert_eq!(result.reasons().len(), 1, "{result:?}");
    assert!(
        result.reasons()[0].starts_with("m: the baseline has no system `m` to compare it with"),
        "{result:?}"
    );
    let nothing = evaluate(
        &config(GateConfig::default()),
        &[],
        Some(&baseline_of(&[("another", records(&[1.0; 4]))])),
    );
    assert!(
        nothing.reasons()[0].contains("no system was compared"),
        "{nothing:?}"
    );
}

/// A baseline holding `systems`.
fn baseline_of(systems: &[(&str, Vec<ItemRecord>)]) -> Baseline {
    Baseline {
        sqlgate_version: "test".into(),
        commit: None,
        created_unix: None,
        dataset_sha256: String::new(),
        dataset_digests: None,
        suite_digests: None,
        records_sha256: None,
        metrics: vec!["ex".into()],
        settings: crate::analysis::baseline::Settings::of(&config(GateConfig::default())),
        gate: None,
        systems: systems
            .iter()
            .map(|(name, items)| (name.to_string(), items.clone()))
            .collect(),
        provider_cache: Vec::new(),
        gold_cache: Vec::new(),
        suite_manifests: Vec::new(),
        data_digests: None,
        inputs: None,
        gold_ms: Default::default(),
    }
}

#[test]
fn a_baseline_system_a_glob_could_name_must_be_measured() {
    let mut glob_config = config(GateConfig::default());
    glob_config.predictions[0].path = "/work/preds/*.txt".into();
    let baseline = baseline_of(&[("m", records(&[1.0; 4])), ("gone", records(&[1.0; 4]))]);
    let current = [SystemRecords {
        name: "m".into(),
        from_baseline: false,
        items: records(&[1.0; 4]),
    }];
    let result = evaluate(&glob_config, &current, Some(&baseline));
    assert!(!result.passed());
    assert_eq!(result.reasons().len(), 1, "{result:?}");
    assert!(
        result.reasons()[0].starts_with("gone: this baseline system was not measured"),
        "{result:?}"
    );
    let explicit = evaluate(&config(GateConfig::default()), &current, Some(&baseline));
    assert!(
        explicit.passed(),
        "a leaderboard entry the config cannot name is not required: {explicit:?}"
    );
}

#[test]
fn a_rule_added_to_the_registry_fails_the_verdict() {
    let baseline = baseline_of(&[("m", records(&[1.0; 4])), (REQUIRED, records(&[1.0; 4]))]);
    let only_m = [SystemRecords {
        name: "m".into(),
        from_baseline: false,
        items: records(&[1.0; 4]),
    }];
    let verdict = evaluate(&config(GateConfig::default()), &only_m, Some(&baseline));
    assert!(!verdict.passed(), "{verdict:?}");
    assert_eq!(
        verdict.reasons(),
        ["toy-required: the example rule requires this system"]
    );
    assert_eq!(
        verdict.headline(),
        format!("failed: {}", verdict.reasons()[0])
    );
    assert_eq!(verdict.reason(), verdict.statement());
    assert_eq!(verdict.exit_code(true), std::process::ExitCode::from(1));
    assert_eq!(verdict.exit_code(false), std::process::ExitCode::SUCCESS);
    let both = [
        only_m[0].clone(),
        SystemRecords {
            name: REQUIRED.into(),
            ..only_m[0].clone()
        },
    ];
    let measured = evaluate(&config(GateConfig::default()), &both, Some(&baseline));
    assert!(measured.passed(), "{measured:?}");
    assert_eq!(measured.reason(), "");
}

#[test]
fn notes_are_listed_section_by_section() {
    let findings = |section: NoteSection, text: &str| Findings {
        notes: vec![Note::new(section, text)],
        ..Findings::default()
    };
    let verdict = Verdict::of_dataset(
        vec![
            findings(NoteSection::Review, "age"),
            findings(NoteSection::Comparison, "drift"),
        ],
        vec![
            Note::new(NoteSection::Run, "evaluation"),
            Note::new(NoteSection::Inputs, "changed"),
            Note::new(NoteSection::Governance, "own config"),
        ],
    );
    assert_eq!(
        verdict.notes(),
        ["own config", "drift", "changed", "age", "evaluation"]
    );
    assert!(verdict.passed());
}

/// Records of `values` with prediction texts `texts` and the unstable reasons `unstable`.
fn unstable_records(
    values: &[f64],
    texts: &[&str],
    unstable: &[Option<crate::score::stability::Unstable>],
) -> Vec<ItemRecord> {
    (records(values).into_iter().zip(texts).zip(unstable))
        .map(|((mut record, text), reason)| {
            record.prediction = Some(text.to_string());
            record.unstable = reason.map_or(Reasons::NONE, Reasons::of);
            record
        })
        .collect()
}

#[test]
fn an_unchanged_unstable_prediction_whose_verdict_flips_is_neither_regressed_nor_fixed() {
    use crate::score::stability::Unstable::{GoldOrder, PredictionOrder};
    let texts = ["a", "b", "c", "d"];
    let base = unstable_records(&[1.0, 0.0, 1.0, 1.0], &texts, &[None, None, None, None]);
    let candidate = unstable_records(
        &[0.0, 1.0, 1.0, 1.0],
        &texts,
        &[Some(PredictionOrder), Some(GoldOrder), None, None],
    );
    let verdict = run_records(GateConfig::default(), ("m", base), candidate);
    assert!(verdict.passed(), "{verdict:?}");
    let comparison = &verdict.comparisons()[0];
    assert_eq!(
        (comparison.regressed.clone(), comparison.fixed.clone()),
        (vec![], vec![])
    );
    assert_eq!(
        comparison.unstable_not_counted,
        vec![(0, PredictionOrder), (1, GoldOrder)]
    );
    assert_eq!(comparison.cells[0].candidate_accuracy, 0.75);
    assert_eq!(
        verdict.notes(),
        [
            "m: unstable, not counted: item 0 (prediction-order), item 1 (gold-order): the \
            prediction is unchanged and its verdict changed, as an undetermined order or the \
            time limit allows, so the baseline's verdict stands"
        ]
    );
}

#[test]
fn on_a_server_a_changed_prediction_right_only_by_a_tie_is_not_credited() {
    use crate::score::stability::Unstable::{GoldOrder, PredictionOrder};
    let base = || unstable_records(&[1.0, 0.0, 1.0], &["a", "b", "c"], &[None, None, None]);
    let candidate = |reason| {
        unstable_records(
            &[1.0, 1.0, 1.0],
            &["a2", "b2", "c"],
            &[Some(reason), Some(reason), None],
        )
    };
    // On SQLite the trusted file and the bundled engine break the tie the same way every run:
    // the verdicts count as measured (item 1 is a fix).
    for reason in [PredictionOrder, GoldOrder] {
        let verdict = run_records(GateConfig::default(), ("m", base()), candidate(reason));
        assert!(verdict.passed(), "{verdict:?}");
        assert_eq!(verdict.comparisons()[0].fixed, vec![1]);
        assert!(verdict.comparisons()[0].unstable_not_credited.is_empty());
    }
    let base = base();
    let candidate = candidate(PredictionOrder);
    let gate = GateConfig::default();
    let verdict = run_records_on("postgresql", gate, ("m", base), candidate);
    assert!(!verdict.passed(), "{verdict:?}");
    let comparison = &verdict.comparisons()[0];
    // Item 0 was right and is now right only by chance: a regression; item 1 is no fix.
    assert_eq!(
        (comparison.regressed.clone(), comparison.fixed.clone()),
        (vec![0], vec![])
    );
    assert_eq!(
        comparison.unstable_not_credited,
        vec![(0, PredictionOrder), (1, PredictionOrder)]
    );
    // A stable right verdict of a changed prediction counts as always.
    let stable = unstable_records(&[1.0, 1.0, 1.0], &["a2", "b2", "c"], &[None, None, None]);
    let base = unstable_records(&[1.0, 0.0, 1.0], &["a", "b", "c"], &[None, None, None]);
    let gate = GateConfig::default();
    let verdict = run_records_on("mysql", gate, ("m", base), stable);
    assert_eq!(verdict.comparisons()[0].fixed, vec![1]);
}

#[test]
fn a_changed_prediction_near_the_time_limit_counts_as_measured() {
    use crate::score::stability::Unstable::{PredictionTiming, PredictionValue};
    let base = || unstable_records(&[1.0; 20], &["a"; 20], &[None; 20]);
    let mut texts = ["a"; 20];
    texts[3] = "slow";
    let mut reasons = [None; 20];
    reasons[3] = Some(PredictionTiming);
    let gate = || GateConfig {
        max_drop_points: 10.0,
        must_pass: vec![3],
        ..GateConfig::default()
    };
    // Slowness hides no drop: a must-pass item that a slow new prediction gets wrong regresses.
    let mut values = [1.0; 20];
    values[3] = 0.0;
    let wrong = unstable_records(&values, &texts, &reasons);
    let verdict = run_records_on("postgresql", gate(), ("m", base()), wrong);
    assert_eq!(verdict.comparisons()[0].must_pass_regressions, vec![3]);
    assert!(!verdict.passed());
    // And the clock cannot make a wrong answer right: a right slow one counts as right.
    let right = unstable_records(&[1.0; 20], &texts, &reasons);
    let verdict = run_records_on("postgresql", gate(), ("m", base()), right);
    assert!(verdict.passed(), "{verdict:?}");
    // But the clock vouches for nothing: a slow right one whose value the plan also picks is
    // not credited (red team round 9: a pull request controls how slow its prediction is).
    let mut steered = unstable_records(&[1.0; 20], &texts, &reasons);
    steered[3].unstable = steered[3].unstable.with(PredictionValue, true);
    let verdict = run_records_on("mysql", gate(), ("m", base()), steered);
    let comparison = &verdict.comparisons()[0];
    assert_eq!(comparison.must_pass_regressions, vec![3]);
    assert_eq!(comparison.unstable_not_credited, vec![(3, PredictionValue)]);
}

#[test]
fn against_a_baseline_without_prediction_texts_an_unstable_verdict_earns_no_fix() {
    use crate::score::stability::Unstable::GoldOrder;
    let base = records(&[1.0, 0.0, 1.0, 1.0]);
    let candidate = unstable_records(
        &[1.0, 1.0, 0.0, 1.0],
        &["a", "b", "c", "d"],
        &[Some(GoldOrder), Some(GoldOrder), Some(GoldOrder), None],
    );
    let gate = GateConfig::default();
    let verdict = run_records_on("postgresql", gate, ("m", base), candidate);
    let comparison = &verdict.comparisons()[0];
    // Item 0 stays right, item 1's fix is not credited, item 2's drop counts.
    assert_eq!(
        (comparison.regressed.clone(), comparison.fixed.clone()),
        (vec![2], vec![])
    );
    assert_eq!(comparison.unstable_not_credited, vec![(1, GoldOrder)]);
    assert!(!verdict.passed());
    assert!(verdict.notes().iter().any(|n| n.starts_with(
        "m: the baseline does not record the predictions' texts (an older sqlgate wrote it)"
    )));
}

#[test]
fn an_item_the_baseline_measured_and_this_run_could_not_counts_as_not_right() {
    use crate::score::stability::Unstable::GoldTiming;
    let base = || records(&[1.0, 1.0, 0.0, 1.0]);
    let mut candidate = records(&[1.0, 1.0, 0.0, 1.0]);
    for (index, outcome) in [(1, "gold_timeout"), (2, "gold_error"), (3, "skipped")] {
        candidate[index].metrics.insert("ex".into(), None);
        candidate[index].outcome.insert("ex".into(), outcome.into());
    }
    let verdict = run_records(GateConfig::default(), ("m", base()), candidate.clone());
    assert!(!verdict.passed(), "{verdict:?}");
    let comparison = &verdict.comparisons()[0];
    // A skipped item (excluded by a reviewed override of the trusted base) is left out.
    assert_eq!(comparison.regressed, vec![1]);
    assert_eq!(comparison.cells[0].items, 3);
    assert_eq!(
        comparison.unmeasured,
        [(1, "gold_timeout"), (2, "gold_error")].map(|(i, o)| (i, o.to_string()))
    );
    assert!(verdict.notes().contains(
        &"m: not measured in this run: item 1 (gold_timeout), item 2 (gold_error): the \
          baseline measured them, so each counts as not right (fail closed)"
            .to_string()
    ));
    // A gold that ran near the time limit in the baseline and timed out now: the clock's doing.
    let mut flaky = base();
    flaky[1].unstable = Reasons::of(GoldTiming);
    let verdict = run_records(GateConfig::default(), ("m", flaky), candidate);
    let comparison = &verdict.comparisons()[0];
    assert!(comparison.regressed.is_empty(), "{comparison:?}");
    assert_eq!(comparison.unstable_not_counted, vec![(1, GoldTiming)]);
}
