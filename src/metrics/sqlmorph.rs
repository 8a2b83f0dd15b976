//! SQLMorph's seven result-set comparison techniques (seed 004), each a metric under its own
//! name giving EX (binary row-set equality) and, except `execution_accuracy`, the cell-level
//! precision EXP, recall EXR and their F1.
//!
//! The metric's headline value ([`Score::value`], used for accuracy, FP / FN, Kendall tau and the
//! default gate) is EX: binary, so it fits the FP / FN analysis and McNemar's test. The
//! continuous sub-scores are kept in a [`PartialCredit`] detail, written as the metric's value
//! object in the JSONL and gateable as `<technique>.f1` (or `.exp`, `.exr`) through the paired
//! bootstrap.

use super::resultset::{
    align_by_name, align_semantically, cell_set_match, partial_cell_match, same_row_set,
    semantic_row_match, CellMatch,
};
use super::{gold_run, prediction_failure, Detail, Details, Embedder, Env, Metric, Outcome, Score};
use crate::engine::value::Row;
use crate::input::dataset::GoldItem;

/// One of SQLMorph's techniques; each variant is a registered metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Technique {
    /// EX only: set equality of rows.
    ExecutionAccuracy,
    /// Exact column names, exact rows.
    ExactColumnExactCell,
    /// Exact column names, exact then greedy partial rows.
    ExactColumnPartialCell,
    /// Embedding-aligned columns, exact rows.
    SemanticColumnExactCell,
    /// Embedding-aligned columns, exact then greedy partial rows.
    SemanticColumnPartialCell,
    /// No columns: rows as cell sets, exact then Jaccard.
    NoColumnPartialCell,
    /// Unified columns, rows matched by embedding similarity with a coverage penalty.
    UnifiedColumnSemanticRow,
}

/// SQLMorph's outputs for one item.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartialCredit {
    /// EX: the row sets are equal.
    pub ex: bool,
    /// EXP, EXR and F1; `None` for `execution_accuracy`, which gives EX only.
    pub cells: Option<CellScores>,
}

/// Precision, recall and F1 of matched cells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellScores {
    /// EXP: matched / predicted cells.
    pub exp: f64,
    /// EXR: matched / gold cells.
    pub exr: f64,
    /// Harmonic mean of EXP and EXR (0 when both are 0).
    pub f1: f64,
}

/// Names of [`PartialCredit`]'s numbers, in JSONL and report order.
pub const PARTIAL_CREDIT_KEYS: [&str; 4] = ["ex", "exp", "exr", "f1"];

impl CellScores {
    /// Scores of a cell match: a side with no cells has precision (recall) 1 when the other has
    /// none either, else 0.
    pub fn of(cells: CellMatch) -> CellScores {
        let ratio = |total: f64, other: f64| {
            if total > 0.0 {
                cells.matched / total
            } else if other > 0.0 {
                0.0
            } else {
                1.0
            }
        };
        let exp = ratio(cells.predicted, cells.gold);
        let exr = ratio(cells.gold, cells.predicted);
        let f1 = if exp + exr > 0.0 {
            2.0 * exp * exr / (exp + exr)
        } else {
            0.0
        };
        CellScores { exp, exr, f1 }
    }
}

impl PartialCredit {
    /// The all-zero outcome of a prediction that failed or is missing.
    fn failed(technique: Technique) -> PartialCredit {
        PartialCredit {
            ex: false,
            cells: (technique != Technique::ExecutionAccuracy).then_some(CellScores {
                exp: 0.0,
                exr: 0.0,
                f1: 0.0,
            }),
        }
    }

    /// The sub-score called `name` (`ex`, `exp`, `exr`, `f1`).
    pub fn get(&self, name: &str) -> Option<f64> {
        match name {
            "ex" => Some(if self.ex { 1.0 } else { 0.0 }),
            "exp" => self.cells.map(|c| c.exp),
            "exr" => self.cells.map(|c| c.exr),
            "f1" => self.cells.map(|c| c.f1),
            _ => None,
        }
    }

    /// `{"ex":1,"exp":0.8,"exr":1.0,"f1":0.89}` (EX only for `execution_accuracy`).
    pub fn to_json(&self) -> serde_json::Value {
        let mut json = serde_json::json!({ "ex": u8::from(self.ex) });
        if let Some(cells) = self.cells {
            json["exp"] = cells.exp.into();
            json["exr"] = cells.exr.into();
            json["f1"] = cells.f1.into();
        }
        json
    }

    /// Reads what [`PartialCredit::to_json`] wrote.
    pub fn from_json(json: &serde_json::Value) -> Option<PartialCredit> {
        let object = json.as_object()?;
        let ex = match object.get("ex")?.as_u64()? {
            0 => false,
            1 => true,
            _ => return None,
        };
        let number = |key: &str| object.get(key).and_then(serde_json::Value::as_f64);
        let cells = match (number("exp"), number("exr"), number("f1")) {
            (Some(exp), Some(exr), Some(f1)) => Some(CellScores { exp, exr, f1 }),
            (None, None, None) if object.len() == 1 => None,
            _ => return None,
        };
        Some(PartialCredit { ex, cells })
    }
}

/// Whether metric `metric` gives the sub-score `sub` (`ex`, `exp`, `exr`, `f1`), for
/// `gate.metric: <technique>.<sub>`.
pub fn gives_sub_score(metric: &str, sub: &str) -> bool {
    let Some(technique) = TECHNIQUES.iter().find(|t| t.name() == metric) else {
        return false;
    };
    PARTIAL_CREDIT_KEYS.contains(&sub)
        && (sub == "ex" || *technique != Technique::ExecutionAccuracy)
}

/// Every technique.
const TECHNIQUES: [Technique; 7] = [
    Technique::ExecutionAccuracy,
    Technique::ExactColumnExactCell,
    Technique::ExactColumnPartialCell,
    Technique::SemanticColumnExactCell,
    Technique::SemanticColumnPartialCell,
    Technique::NoColumnPartialCell,
    Technique::UnifiedColumnSemanticRow,
];

impl Technique {
    fn needs_embeddings(self) -> bool {
        matches!(
            self,
            Technique::SemanticColumnExactCell
                | Technique::SemanticColumnPartialCell
                | Technique::UnifiedColumnSemanticRow
        )
    }

    /// Compares the two result tables; `Err` when the embedding provider is absent or did not
    /// answer.
    pub fn compare(
        self,
        embedder: Result<&dyn Embedder, &str>,
        gold: (&[String], &[Row]),
        predicted: (&[String], &[Row]),
    ) -> Result<PartialCredit, String> {
        let ex = same_row_set(gold.1, predicted.1);
        let embedder = || embedder.map_err(str::to_string);
        let cells = match self {
            Technique::ExecutionAccuracy => return Ok(PartialCredit { ex, cells: None }),
            Technique::ExactColumnExactCell | Technique::ExactColumnPartialCell => {
                let alignment = align_by_name(gold.0, predicted.0);
                let partial = self == Technique::ExactColumnPartialCell;
                partial_cell_match(gold, predicted, &alignment, partial)
            }
            Technique::SemanticColumnExactCell | Technique::SemanticColumnPartialCell => {
                let alignment = align_semantically(gold, predicted, embedder()?)?;
                let partial = self == Technique::SemanticColumnPartialCell;
                partial_cell_match(gold, predicted, &alignment, partial)
            }
            Technique::NoColumnPartialCell => cell_set_match(gold.1, predicted.1),
            Technique::UnifiedColumnSemanticRow => {
                semantic_row_match(gold, predicted, embedder()?)?
            }
        };
        Ok(PartialCredit {
            ex,
            cells: Some(CellScores::of(cells)),
        })
    }

    /// A wrong verdict with this technique's all-zero scores attached.
    fn failed(self, wrong: Score) -> Score {
        Score {
            details: Some(Details::new(PartialCredit::failed(self))),
            ..wrong
        }
    }
}

impl Detail for PartialCredit {
    fn to_json(&self) -> serde_json::Value {
        PartialCredit::to_json(self)
    }

    fn is_value_object(&self) -> bool {
        true
    }
}

impl Metric for Technique {
    fn read_details(&self, json: &serde_json::Value) -> Option<Details> {
        PartialCredit::from_json(json).map(Details::new)
    }

    fn name(&self) -> &'static str {
        match self {
            Technique::ExecutionAccuracy => "execution_accuracy",
            Technique::ExactColumnExactCell => "exact_column_and_exact_cell",
            Technique::ExactColumnPartialCell => "exact_column_and_partial_cell",
            Technique::SemanticColumnExactCell => "semantic_column_and_exact_cell",
            Technique::SemanticColumnPartialCell => "semantic_column_and_partial_cell",
            Technique::NoColumnPartialCell => "no_column_and_partial_cell",
            Technique::UnifiedColumnSemanticRow => "unified_column_and_semantic_row",
        }
    }

    /// EXP, EXR and F1 of a technique with cell scores (a technique's EX is a binary verdict).
    fn continuous_scores(&self) -> Vec<String> {
        ["exp", "exr", "f1"]
            .into_iter()
            .filter(|sub| gives_sub_score(self.name(), sub))
            .map(|sub| format!("{}.{sub}", self.name()))
            .collect()
    }

    fn score(&self, env: &Env<'_>, item: &GoldItem, prediction: Option<&str>) -> Score {
        if self.needs_embeddings() {
            if let Err(reason) = env.embedder() {
                return Score::unscored(Outcome::Unavailable, reason);
            }
        }
        let run = match gold_run(env, item) {
            Ok(run) => run,
            Err(unscored) => return unscored,
        };
        let Some(prediction) = prediction else {
            return self.failed(Score::missing());
        };
        let sql = env.profile.prepare_prediction(prediction);
        let predicted = match env.executor.run_table(run.db, &sql) {
            Ok(table) => table,
            Err(e) => return self.failed(prediction_failure(e)),
        };
        let gold_table = (run.gold.columns.as_slice(), run.rows());
        let predicted_table = (predicted.columns.as_slice(), predicted.rows.as_slice());
        match self.compare(env.embedder(), gold_table, predicted_table) {
            Ok(credit) => Score {
                details: Some(Details::new(credit)),
                ..Score::binary(credit.ex)
            },
            Err(reason) => Score::unscored(
                Outcome::Unavailable,
                format!("embedding provider failed: {reason}"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Worked examples derived by hand from seed 004's definitions.
    use super::*;
    use crate::engine::value::Value;
    use crate::metrics::Embedder;

    fn text(s: &str) -> Value {
        Value::Text(s.into())
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// Embeddings looked up by the text's prefix (the first matching entry).
    struct Lookup(Vec<(&'static str, Vec<f32>)>);

    impl Embedder for Lookup {
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
            texts
                .iter()
                .map(|t| {
                    self.0
                        .iter()
                        .find(|(prefix, _)| t.starts_with(prefix))
                        .map(|(_, v)| v.clone())
                        .ok_or_else(|| format!("no test vector for `{t}`"))
                })
                .collect()
        }
    }

    /// The embedding provider of a test: `None` is an unconfigured one.
    type Services = Option<Lookup>;

    fn with(embedder: Lookup) -> Services {
        Some(embedder)
    }

    fn provider(services: &Services) -> Result<&dyn Embedder, &str> {
        services
            .as_ref()
            .map(|lookup| lookup as &dyn Embedder)
            .ok_or("no `embeddings:` provider is configured")
    }

    fn run(
        technique: Technique,
        services: &Services,
        gold: (&[&str], &[Row]),
        predicted: (&[&str], &[Row]),
    ) -> (f64, f64, f64, f64) {
        let (gold_names, predicted_names) = (names(gold.0), names(predicted.0));
        let credit = technique
            .compare(
                provider(services),
                (&gold_names, gold.1),
                (&predicted_names, predicted.1),
            )
            .unwrap();
        let get = |k: &str| credit.get(k).unwrap_or(f64::NAN);
        (get("ex"), get("exp"), get("exr"), get("f1"))
    }

    /// Equal within f32 embedding precision.
    fn close(actual: (f64, f64, f64, f64), expected: (f64, f64, f64, f64)) {
        let pairs = [
            (actual.0, expected.0),
            (actual.1, expected.1),
            (actual.2, expected.2),
            (actual.3, expected.3),
        ];
        assert!(
            pairs.iter().all(|(a, e)| (a - e).abs() < 1e-6),
            "{actual:?} != {expected:?}"
        );
    }

    /// Gold (name, age): Alice 30, Bob 25, Carol 40. Prediction (name, age, city): Alice 30 X,
    /// Bob 26 Y. 6 predicted cells, 6 gold cells.
    fn people() -> (Vec<Row>, Vec<Row>) {
        let gold = vec![
            vec![text("Alice"), Value::Int(30)],
            vec![text("Bob"), Value::Int(25)],
            vec![text("Carol"), Value::Int(40)],
        ];
        let predicted = vec![
            vec![text("Alice"), Value::Int(30), text("X")],
            vec![text("Bob"), Value::Int(26), text("Y")],
        ];
        (gold, predicted)
    }

    #[test]
    fn people_example_under_every_column_free_and_exact_technique() {
        let (gold, predicted) = people();
        let services = None;
        let g = (&["name", "age"][..], &gold[..]);
        let p = (&["name", "age", "city"][..], &predicted[..]);
        let ea = Technique::ExecutionAccuracy
            .compare(provider(&services), (&names(g.0), g.1), (&names(p.0), p.1))
            .unwrap();
        assert_eq!(ea.to_json(), serde_json::json!({"ex": 0}));
        // Exact rows on (name, age): Alice 30 only -> 2 cells of 6 and 6.
        let third = 1.0 / 3.0;
        close(
            run(Technique::ExactColumnExactCell, &services, g, p),
            (0.0, third, third, third),
        );
        // Partial: Bob 26 pairs with Bob 25 (1 shared cell; Carol 40 shares none) -> 3 cells.
        close(
            run(Technique::ExactColumnPartialCell, &services, g, p),
            (0.0, 0.5, 0.5, 0.5),
        );
        // Cell sets: {Alice,30,X} ~ {Alice,30} (Jaccard 2/3, +2), {Bob,26,Y} ~ {Bob,25}
        // (Jaccard 1/4, +1): 3 of 6 predicted and 6 gold cell values.
        close(
            run(Technique::NoColumnPartialCell, &services, g, p),
            (0.0, 0.5, 0.5, 0.5),
        );
    }

    #[test]
    fn permuted_columns_fail_ex_but_match_every_cell() {
        let gold = [
            vec![Value::Int(1), text("a")],
            vec![Value::Int(2), text("b")],
        ];
        let predicted = [
            vec![text("a"), Value::Int(1)],
            vec![text("b"), Value::Int(2)],
        ];
        let services = None;
        let g = (&["id", "n"][..], &gold[..]);
        let p = (&["n", "id"][..], &predicted[..]);
        for technique in [
            Technique::ExactColumnExactCell,
            Technique::ExactColumnPartialCell,
            Technique::NoColumnPartialCell,
        ] {
            close(run(technique, &services, g, p), (0.0, 1.0, 1.0, 1.0));
        }
    }

    #[test]
    fn duplicates_are_matched_once_and_integral_reals_equal_integers() {
        let gold = [
            vec![Value::Int(1)],
            vec![Value::Int(1)],
            vec![Value::Int(2)],
        ];
        let predicted = [
            vec![Value::Real(1.0)],
            vec![Value::Int(2)],
            vec![Value::Int(3)],
        ];
        let services = None;
        let g = (&["x"][..], &gold[..]);
        let p = (&["x"][..], &predicted[..]);
        let two_thirds = 2.0 / 3.0;
        for technique in [
            Technique::ExactColumnExactCell,
            Technique::ExactColumnPartialCell,
            Technique::NoColumnPartialCell,
        ] {
            close(
                run(technique, &services, g, p),
                (0.0, two_thirds, two_thirds, two_thirds),
            );
        }
    }

    #[test]
    fn renamed_column_matches_rows_but_no_cells_by_exact_name() {
        let rows = [vec![Value::Int(7)]];
        let services = None;
        let g = (&["total"][..], &rows[..]);
        let p = (&["count(*)"][..], &rows[..]);
        close(
            run(Technique::ExactColumnPartialCell, &services, g, p),
            (1.0, 0.0, 0.0, 0.0),
        );
        close(
            run(Technique::NoColumnPartialCell, &services, g, p),
            (1.0, 1.0, 1.0, 1.0),
        );
    }

    #[test]
    fn empty_results() {
        let services = None;
        let one = [vec![Value::Int(1)]];
        let g = (&["x"][..], &[][..]);
        close(
            run(Technique::ExactColumnPartialCell, &services, g, g),
            (1.0, 1.0, 1.0, 1.0),
        );
        close(
            run(
                Technique::NoColumnPartialCell,
                &services,
                (&["x"][..], &one[..]),
                g,
            ),
            (0.0, 0.0, 0.0, 0.0),
        );
    }

    /// Gold (name, age) vs prediction (full_name, years): names align (cosine 1), ages align
    /// with cosine 0.8 > 0.7. Rows: Alice 30 / Alice 30 exact, Bob 25 / Bob 26 partial.
    #[test]
    fn semantic_columns_align_renamed_columns_above_the_threshold() {
        let gold = [
            vec![text("Alice"), Value::Int(30)],
            vec![text("Bob"), Value::Int(25)],
        ];
        let predicted = [
            vec![text("Alice"), Value::Int(30)],
            vec![text("Bob"), Value::Int(26)],
        ];
        let g = (&["name", "age"][..], &gold[..]);
        let p = (&["full_name", "years"][..], &predicted[..]);
        let vectors = |years: Vec<f32>| {
            Lookup(vec![
                ("column: name;", vec![1.0, 0.0, 0.0]),
                ("column: full_name;", vec![1.0, 0.0, 0.0]),
                ("column: age;", vec![0.0, 1.0, 0.0]),
                ("column: years;", years),
            ])
        };
        let aligned = with(vectors(vec![0.0, 0.8, 0.6]));
        close(
            run(Technique::SemanticColumnExactCell, &aligned, g, p),
            (0.0, 0.5, 0.5, 0.5),
        );
        close(
            run(Technique::SemanticColumnPartialCell, &aligned, g, p),
            (0.0, 0.75, 0.75, 0.75),
        );
        // Cosine 0.6: only the names align; both rows match on them: 2 of 4 cells.
        let below = with(vectors(vec![0.0, 0.6, 0.8]));
        close(
            run(Technique::SemanticColumnPartialCell, &below, g, p),
            (0.0, 0.5, 0.5, 0.5),
        );
    }

    #[test]
    fn column_profile_names_type_and_most_frequent_values() {
        let rows: Vec<Row> = [3, 1, 3, 2, 1, 3]
            .iter()
            .map(|i| vec![Value::Int(*i)])
            .collect();
        assert_eq!(
            super::super::resultset::column_profile("age", &rows, 0),
            "column: age; type: integer; values: 3, 1, 2"
        );
    }

    /// Unified columns [age, name]: gold rows "30 | Alice", "25 | Bob"; prediction (name, city)
    /// "N/A | Paris | Alice" over [age, city, name], coverage 1/2.
    #[test]
    fn unified_rows_are_matched_by_embedding_with_a_coverage_penalty() {
        let gold = [
            vec![text("Alice"), Value::Int(30)],
            vec![text("Bob"), Value::Int(25)],
        ];
        let same_columns = [vec![Value::Int(30), text("Alice")]];
        let embedder = with(Lookup(vec![
            ("30 | Alice", vec![1.0, 0.0]),
            ("25 | Bob", vec![0.0, 1.0]),
            ("30 | N/A | Alice", vec![0.6, 0.8]),
            ("25 | N/A | Bob", vec![1.0, 0.0]),
            ("N/A | Paris | Alice", vec![0.0, 1.0]),
        ]));
        let g = (&["name", "age"][..], &gold[..]);
        // One predicted row matched with similarity 1, full coverage: EXP 1/1, EXR 1/2.
        close(
            run(
                Technique::UnifiedColumnSemanticRow,
                &embedder,
                g,
                (&["age", "name"][..], &same_columns[..]),
            ),
            (0.0, 1.0, 0.5, 2.0 / 3.0),
        );
        // Best match: gold row 0 at cosine 0.8, times coverage 1/2 = 0.4.
        let other = [vec![text("Alice"), text("Paris")]];
        close(
            run(
                Technique::UnifiedColumnSemanticRow,
                &embedder,
                g,
                (&["name", "city"][..], &other[..]),
            ),
            (0.0, 0.4, 0.2, 2.0 * 0.4 * 0.2 / 0.6),
        );
    }

    #[test]
    fn semantic_techniques_are_unavailable_without_a_provider() {
        let rows = vec![vec![Value::Int(1)]];
        let columns = names(&["x"]);
        for technique in [
            Technique::SemanticColumnExactCell,
            Technique::SemanticColumnPartialCell,
            Technique::UnifiedColumnSemanticRow,
        ] {
            let error = technique
                .compare(provider(&None), (&columns, &rows), (&columns, &rows))
                .unwrap_err();
            assert!(error.contains("embeddings"), "{error}");
        }
    }

    #[test]
    fn value_objects_round_trip() {
        let credit = PartialCredit {
            ex: true,
            cells: Some(CellScores {
                exp: 0.8,
                exr: 1.0,
                f1: 0.888_888_888_888_888_8,
            }),
        };
        assert_eq!(PartialCredit::from_json(&credit.to_json()), Some(credit));
        let ex_only = PartialCredit {
            ex: false,
            cells: None,
        };
        assert_eq!(PartialCredit::from_json(&ex_only.to_json()), Some(ex_only));
        assert_eq!(
            PartialCredit::from_json(&serde_json::json!({"ex": 2})),
            None
        );
    }
}
