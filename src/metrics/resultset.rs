//! Result-table comparison shared by SQLMorph's techniques (seed 004) and QAS (seed 003): row-set
//! equality, exact and partial cell matching on aligned columns, cell-set (Jaccard) matching,
//! semantic column alignment and semantic row matching over embeddings, and edit-distance table
//! similarity.
//!
//! Cells are compared by [`Value::key`] (Python `==` semantics: `1 == 1.0`), without tolerance.

use super::Embedder;
use crate::engine::value::{Key, Row, Value};
use pathfinding::prelude::{kuhn_munkres, Matrix};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Cosine similarity a column pair must exceed to be aligned (seed 004).
pub const COLUMN_SIMILARITY_THRESHOLD: f64 = 0.7;

/// How many of a column's most frequent values describe it for embedding (seed 004).
const PROFILE_VALUES: usize = 10;

/// Placeholder of a column a table does not have, in unified rows (seed 004).
const ABSENT_CELL: &str = "N/A";

/// Cells matched between a prediction and its gold, and the cell totals of each side: the
/// numerators and denominators of SQLMorph's EXP and EXR.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CellMatch {
    /// Matched cells, fractional contributions included.
    pub matched: f64,
    /// Cells of the prediction.
    pub predicted: f64,
    /// Cells of the gold.
    pub gold: f64,
}

/// BIRD's execution check: the two results hold the same set of rows (column order as given).
pub fn same_row_set(gold: &[Row], predicted: &[Row]) -> bool {
    row_set(gold) == row_set(predicted)
}

fn row_set(rows: &[Row]) -> HashSet<Vec<Key<'_>>> {
    rows.iter().map(keys).collect()
}

fn keys(row: &Row) -> Vec<Key<'_>> {
    row.iter().map(Value::key).collect()
}

/// Exact name alignment: each gold column paired with the first unused predicted column of the
/// same name, as `(gold, predicted)` indices.
pub fn align_by_name(gold: &[String], predicted: &[String]) -> Vec<(usize, usize)> {
    let mut used = vec![false; predicted.len()];
    gold.iter()
        .enumerate()
        .filter_map(|(g, name)| {
            let p = (0..predicted.len()).find(|&p| !used[p] && predicted[p] == *name)?;
            used[p] = true;
            Some((g, p))
        })
        .collect()
}

/// Cell matching on aligned columns: rows projected onto the aligned pairs are first matched by
/// exact tuple equality (each gold row used once); with `partial`, each remaining predicted row
/// (in order) then takes the unused gold row sharing the most aligned cells (first on ties) and
/// adds that many matched cells. Totals are the full tables' cells (rows x columns), so extra or
/// missing columns cost precision or recall.
pub fn partial_cell_match(
    gold: (&[String], &[Row]),
    predicted: (&[String], &[Row]),
    alignment: &[(usize, usize)],
    partial: bool,
) -> CellMatch {
    let (gold_columns, gold_rows) = gold;
    let (predicted_columns, predicted_rows) = predicted;
    let totals = CellMatch {
        matched: 0.0,
        predicted: (predicted_rows.len() * predicted_columns.len()) as f64,
        gold: (gold_rows.len() * gold_columns.len()) as f64,
    };
    if alignment.is_empty() {
        return totals;
    }
    let gold_projected: Vec<Vec<Key<'_>>> = gold_rows
        .iter()
        .map(|row| alignment.iter().map(|(g, _)| row[*g].key()).collect())
        .collect();
    let predicted_projected: Vec<Vec<Key<'_>>> = predicted_rows
        .iter()
        .map(|row| alignment.iter().map(|(_, p)| row[*p].key()).collect())
        .collect();
    let (exact, unmatched_predicted, mut unmatched_gold) =
        match_exact_rows(&gold_projected, &predicted_projected);
    let mut matched = (exact * alignment.len()) as f64;
    if partial {
        for p in unmatched_predicted {
            let overlap = |g: &usize| {
                gold_projected[*g]
                    .iter()
                    .zip(&predicted_projected[p])
                    .filter(|(a, b)| a == b)
                    .count()
            };
            if let Some((slot, shared)) = best_unused(&unmatched_gold, overlap) {
                matched += shared as f64;
                unmatched_gold.remove(slot);
            }
        }
    }
    CellMatch { matched, ..totals }
}

/// Matches equal rows one to one; returns the count and the unmatched predicted and gold row
/// indices, in order.
fn match_exact_rows<T: Eq + std::hash::Hash>(
    gold: &[T],
    predicted: &[T],
) -> (usize, Vec<usize>, Vec<usize>) {
    let mut available: HashMap<&T, Vec<usize>> = HashMap::new();
    for (g, row) in gold.iter().enumerate().rev() {
        available.entry(row).or_default().push(g);
    }
    let mut used_gold = vec![false; gold.len()];
    let mut unmatched_predicted = Vec::new();
    let mut count = 0;
    for (p, row) in predicted.iter().enumerate() {
        match available.get_mut(row).and_then(Vec::pop) {
            Some(g) => {
                used_gold[g] = true;
                count += 1;
            }
            None => unmatched_predicted.push(p),
        }
    }
    let unmatched_gold = (0..gold.len()).filter(|&g| !used_gold[g]).collect();
    (count, unmatched_predicted, unmatched_gold)
}

/// The position in `candidates` with the highest positive score (first on ties).
fn best_unused<S: PartialOrd + Default + Copy>(
    candidates: &[usize],
    score: impl Fn(&usize) -> S,
) -> Option<(usize, S)> {
    let mut best: Option<(usize, S)> = None;
    for (slot, candidate) in candidates.iter().enumerate() {
        let s = score(candidate);
        if s > S::default() && best.is_none_or(|(_, b)| s > b) {
            best = Some((slot, s));
        }
    }
    best
}

/// SQLMorph's column-free matching: each row becomes the set of its cells' texts; rows are
/// matched first by set equality, then each remaining predicted row takes the unused gold row of
/// highest Jaccard similarity and adds the size of their intersection. Totals are the sizes of
/// all row sets.
pub fn cell_set_match(gold: &[Row], predicted: &[Row]) -> CellMatch {
    let gold_sets: Vec<Vec<String>> = gold.iter().map(cell_set).collect();
    let predicted_sets: Vec<Vec<String>> = predicted.iter().map(cell_set).collect();
    let size = |sets: &[Vec<String>]| sets.iter().map(Vec::len).sum::<usize>() as f64;
    let (_, unmatched_predicted, mut unmatched_gold) =
        match_exact_rows(&gold_sets, &predicted_sets);
    let unmatched: HashSet<usize> = unmatched_predicted.iter().copied().collect();
    let mut matched: f64 = (0..predicted_sets.len())
        .filter(|p| !unmatched.contains(p))
        .map(|p| predicted_sets[p].len() as f64)
        .sum();
    for p in unmatched_predicted {
        let similarity = |g: &usize| jaccard(&gold_sets[*g], &predicted_sets[p]).0;
        if let Some((slot, _)) = best_unused(&unmatched_gold, similarity) {
            matched += jaccard(&gold_sets[unmatched_gold[slot]], &predicted_sets[p]).1 as f64;
            unmatched_gold.remove(slot);
        }
    }
    CellMatch {
        matched,
        predicted: size(&predicted_sets),
        gold: size(&gold_sets),
    }
}

/// A row's distinct cell texts, sorted.
fn cell_set(row: &Row) -> Vec<String> {
    let set: BTreeSet<String> = row.iter().map(cell_text).collect();
    set.into_iter().collect()
}

/// (Jaccard similarity, intersection size) of two sorted sets.
fn jaccard(a: &[String], b: &[String]) -> (f64, usize) {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    let similarity = if union == 0 {
        0.0
    } else {
        common as f64 / union as f64
    };
    (similarity, common)
}

/// A cell's text: integral numbers as integers (so `1` and `1.0` agree), NULL as `NULL`, blobs
/// in hex.
pub fn cell_text(value: &Value) -> String {
    match value.key() {
        Key::Null => "NULL".into(),
        Key::Int(i) => i.to_string(),
        Key::Real(bits) => f64::from_bits(bits).to_string(),
        Key::Text(text) => text.to_string(),
        Key::Blob(bytes) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        Key::Py(_) | Key::Nan(_) => crate::engine::denotation::python_str(value),
    }
}

/// The text embedded for a column: its name, its inferred type and up to ten of its most
/// frequent values (most frequent first, first appearance on ties).
pub fn column_profile(name: &str, rows: &[Row], column: usize) -> String {
    let mut counts: HashMap<String, (usize, usize)> = HashMap::new();
    for (position, row) in rows.iter().enumerate() {
        let entry = counts
            .entry(cell_text(&row[column]))
            .or_insert((0, position));
        entry.0 += 1;
    }
    let mut frequent: Vec<(String, (usize, usize))> = counts.into_iter().collect();
    frequent.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.1 .1.cmp(&b.1 .1)));
    let values: Vec<String> = frequent
        .into_iter()
        .take(PROFILE_VALUES)
        .map(|(text, _)| text)
        .collect();
    format!(
        "column: {name}; type: {}; values: {}",
        column_type(rows, column),
        values.join(", ")
    )
}

/// The most common type of a column's non-NULL values (`null` when all are NULL).
fn column_type(rows: &[Row], column: usize) -> &'static str {
    let mut counts = [0usize; 4];
    for row in rows {
        match &row[column] {
            Value::Null => {}
            Value::Int(_) => counts[0] += 1,
            Value::Real(_) => counts[1] += 1,
            Value::Text(_) => counts[2] += 1,
            Value::Blob(_) => counts[3] += 1,
            Value::Py(value) if value.as_f64().is_some() => counts[1] += 1,
            Value::Py(_) => counts[2] += 1,
        }
    }
    let names = ["integer", "real", "text", "blob"];
    match counts.iter().enumerate().max_by_key(|(i, c)| (**c, 4 - i)) {
        Some((i, c)) if *c > 0 => names[i],
        _ => "null",
    }
}

/// Semantic column alignment: embeds every column's profile, finds the one-to-one pairing of
/// maximal total cosine similarity (Hungarian algorithm) and keeps pairs above
/// [`COLUMN_SIMILARITY_THRESHOLD`].
pub fn align_semantically(
    gold: (&[String], &[Row]),
    predicted: (&[String], &[Row]),
    embedder: &dyn Embedder,
) -> Result<Vec<(usize, usize)>, String> {
    let profiles = |(columns, rows): (&[String], &[Row])| -> Vec<String> {
        columns
            .iter()
            .enumerate()
            .map(|(c, name)| column_profile(name, rows, c))
            .collect()
    };
    let similarity = embedded_similarity(&profiles(gold), &profiles(predicted), embedder)?;
    Ok(best_assignment(&similarity)
        .into_iter()
        .filter(|&(g, p)| similarity[g][p] > COLUMN_SIMILARITY_THRESHOLD)
        .collect())
}

/// SQLMorph's unified-column semantic row matching: rows of both tables over the sorted union of
/// column names (absent columns as `N/A`), serialised with ` | `, embedded, matched one to one
/// by the Hungarian algorithm on cosine similarity; each match's similarity (negative ones
/// counted as 0) is multiplied by the share of gold column names the prediction has. Returns
/// (sum of penalised similarities, predicted rows, gold rows).
pub fn semantic_row_match(
    gold: (&[String], &[Row]),
    predicted: (&[String], &[Row]),
    embedder: &dyn Embedder,
) -> Result<CellMatch, String> {
    let union: BTreeSet<&String> = gold.0.iter().chain(predicted.0).collect();
    let serialise = |(columns, rows): (&[String], &[Row])| -> Vec<String> {
        rows.iter()
            .map(|row| {
                let cells: Vec<String> = union
                    .iter()
                    .map(|name| match columns.iter().position(|c| c == *name) {
                        Some(c) => cell_text(&row[c]),
                        None => ABSENT_CELL.to_string(),
                    })
                    .collect();
                cells.join(" | ")
            })
            .collect()
    };
    let gold_names: BTreeSet<&String> = gold.0.iter().collect();
    let predicted_names: BTreeSet<&String> = predicted.0.iter().collect();
    let coverage = if gold_names.is_empty() {
        0.0
    } else {
        gold_names.intersection(&predicted_names).count() as f64 / gold_names.len() as f64
    };
    let totals = CellMatch {
        matched: 0.0,
        predicted: predicted.1.len() as f64,
        gold: gold.1.len() as f64,
    };
    if gold.1.is_empty() || predicted.1.is_empty() {
        return Ok(totals);
    }
    let similarity = embedded_similarity(&serialise(gold), &serialise(predicted), embedder)?;
    let matched = best_assignment(&similarity)
        .into_iter()
        .map(|(g, p)| similarity[g][p].max(0.0) * coverage)
        .sum();
    Ok(CellMatch { matched, ..totals })
}

/// Cosine similarities `[gold][predicted]` of the two lists' embeddings (one provider call).
fn embedded_similarity(
    gold: &[String],
    predicted: &[String],
    embedder: &dyn Embedder,
) -> Result<Vec<Vec<f64>>, String> {
    if gold.is_empty() || predicted.is_empty() {
        return Ok(vec![vec![]; gold.len()]);
    }
    let texts: Vec<String> = gold.iter().chain(predicted).cloned().collect();
    let vectors = embedder.embed(&texts)?;
    if vectors.len() != texts.len() {
        return Err(format!(
            "the embedding provider returned {} vectors for {} texts",
            vectors.len(),
            texts.len()
        ));
    }
    let (gold_vectors, predicted_vectors) = vectors.split_at(gold.len());
    Ok(gold_vectors
        .iter()
        .map(|g| predicted_vectors.iter().map(|p| cosine(g, p)).collect())
        .collect())
}

/// Cosine similarity; 0 when either vector is zero or their lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let norm = |v: &[f32]| v.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let denominator = norm(a) * norm(b);
    if denominator == 0.0 {
        0.0
    } else {
        dot / denominator
    }
}

/// The one-to-one `(row, column)` pairing of maximal total similarity, covering the smaller
/// side: Jonker-Volgenant (`lapjv`, fast on large tables) on the square matrix padded with
/// zero-similarity cells; the Hungarian algorithm when lapjv gives up (it can on many ties).
pub(crate) fn best_assignment(similarity: &[Vec<f64>]) -> Vec<(usize, usize)> {
    let rows = similarity.len();
    let columns = similarity.first().map_or(0, Vec::len);
    if rows == 0 || columns == 0 {
        return Vec::new();
    }
    let size = rows.max(columns);
    let cost = lapjv::Matrix::from_shape_fn((size, size), |(r, c)| {
        1.0 - if r < rows && c < columns {
            similarity[r][c]
        } else {
            0.0
        }
    });
    match lapjv::lapjv(&cost) {
        Ok((row_to_column, _)) => row_to_column
            .into_iter()
            .enumerate()
            .filter(|&(r, c)| r < rows && c < columns)
            .collect(),
        Err(_) => hungarian_assignment(similarity),
    }
}

/// [`best_assignment`] by the Hungarian algorithm on weights scaled to integers.
fn hungarian_assignment(similarity: &[Vec<f64>]) -> Vec<(usize, usize)> {
    let rows = similarity.len();
    let columns = similarity.first().map_or(0, Vec::len);
    let scaled = |s: f64| (s * 1e9).round() as i64;
    if rows <= columns {
        let weights = Matrix::from_fn(rows, columns, |(r, c)| scaled(similarity[r][c]));
        let (_, assignment) = kuhn_munkres(&weights);
        assignment.into_iter().enumerate().collect()
    } else {
        let weights = Matrix::from_fn(columns, rows, |(c, r)| scaled(similarity[r][c]));
        let (_, assignment) = kuhn_munkres(&weights);
        let mut pairs: Vec<(usize, usize)> = assignment
            .into_iter()
            .enumerate()
            .map(|(c, r)| (r, c))
            .collect();
        pairs.sort_unstable();
        pairs
    }
}

/// QAS's S_T: 1 - the Levenshtein distance between the two tables read as sequences of cells
/// (row after row), divided by the longer sequence's length; 1 for two empty tables. A cell
/// costs one edit, so one wrong value in a large table costs little and every value wrong costs
/// everything (seed 003). When row order does not matter (no ORDER BY in the gold), both tables'
/// rows are sorted first, so that an arbitrary order costs nothing.
pub fn table_similarity(gold: &[Row], predicted: &[Row], order_matters: bool) -> f64 {
    let gold_cells = cell_sequence(gold, order_matters);
    let predicted_cells = cell_sequence(predicted, order_matters);
    let longest = gold_cells.len().max(predicted_cells.len());
    if longest == 0 {
        return 1.0;
    }
    let distance = strsim::generic_levenshtein(&gold_cells, &predicted_cells);
    1.0 - distance as f64 / longest as f64
}

/// A table's cells row after row, rows sorted unless their order matters.
fn cell_sequence(rows: &[Row], order_matters: bool) -> Vec<Key<'_>> {
    let mut keyed: Vec<Vec<Key<'_>>> = rows.iter().map(keys).collect();
    if !order_matters {
        keyed.sort_unstable();
    }
    keyed.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(similarity: &[Vec<f64>], pairs: &[(usize, usize)]) -> f64 {
        pairs.iter().map(|&(r, c)| similarity[r][c]).sum()
    }

    /// Deterministic pseudo-random similarities in [0, 1), coarse when `levels` is small (ties).
    fn matrix(rows: usize, columns: usize, levels: u64, seed: u64) -> Vec<Vec<f64>> {
        let mut state = seed;
        (0..rows)
            .map(|_| {
                (0..columns)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        ((state >> 33) % levels) as f64 / levels as f64
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_fast_assignment_is_as_good_as_the_hungarian_one() {
        for (rows, columns, levels) in [
            (7, 7, 1000),
            (5, 9, 1000),
            (9, 4, 1000),
            (30, 30, 2),
            (12, 20, 3),
            (40, 40, 1),
        ] {
            for seed in 0..5 {
                let similarity = matrix(rows, columns, levels, seed);
                let fast = best_assignment(&similarity);
                let exact = hungarian_assignment(&similarity);
                assert_eq!(fast.len(), rows.min(columns));
                let mut used: Vec<usize> = fast.iter().map(|&(_, c)| c).collect();
                used.sort_unstable();
                used.dedup();
                assert_eq!(used.len(), fast.len(), "one-to-one");
                let (a, b) = (total(&similarity, &fast), total(&similarity, &exact));
                assert!(
                    (a - b).abs() < 1e-9,
                    "{rows}x{columns}/{levels}: {a} vs {b}"
                );
            }
        }
    }
}
