//! The "Proposed benchmark" section: what a pull request's benchmark change would do to the
//! base's own systems, from the evidence phase's counts, as the template shows it.

use crate::evidence::proposed::BenchmarkChange;
use serde::Serialize;

/// Items listed per system and direction before the rest are counted.
const LISTED_ITEMS: usize = 20;

/// The section's data as the template reads it.
#[derive(Debug, Clone, Serialize)]
pub struct ProposedView {
    /// The changed files, comma-separated.
    pub files: String,
    /// The metric re-scored.
    pub metric: String,
    /// Gold items on the base's benchmark.
    pub base_items: usize,
    /// Gold items on the proposed benchmark.
    pub proposed_items: usize,
    /// Whether items could be paired (else only the totals are shown).
    pub paired: bool,
    /// One row per system.
    pub rows: Vec<ProposedRow>,
    /// Systems not re-scored, with why, comma-separated (empty when none).
    pub skipped: String,
}

/// One system's row.
#[derive(Debug, Clone, Serialize)]
pub struct ProposedRow {
    /// The system.
    pub system: String,
    /// `right / items` on the base's benchmark.
    pub on_base: String,
    /// `right / items` on the proposed benchmark.
    pub on_proposed: String,
    /// The items that turn right, listed.
    pub turn_right: String,
    /// The items that turn wrong, listed.
    pub turn_wrong: String,
}

/// The view of `change`.
pub fn view(change: &BenchmarkChange) -> ProposedView {
    let (base_items, proposed_items) = change.items;
    ProposedView {
        files: change.changed.join(", "),
        metric: change.metric.clone(),
        base_items,
        proposed_items,
        paired: change.paired_by != "none",
        rows: (change.systems.iter())
            .map(|system| ProposedRow {
                system: system.name.clone(),
                on_base: format!("{} / {base_items}", system.right_on_base),
                on_proposed: format!("{} / {proposed_items}", system.right_on_proposed),
                turn_right: listed(&system.turn_right),
                turn_wrong: listed(&system.turn_wrong),
            })
            .collect(),
        skipped: change.skipped.join(", "),
    }
}

/// `items` as `3 (3, 17, 40)`, the first [`LISTED_ITEMS`] named and the rest counted; `0` when
/// there are none.
fn listed(items: &[usize]) -> String {
    if items.is_empty() {
        return "0".to_string();
    }
    let named: Vec<String> = (items.iter().take(LISTED_ITEMS))
        .map(|i| i.to_string())
        .collect();
    let more = items.len().saturating_sub(LISTED_ITEMS);
    let rest = if more > 0 {
        format!(", {more} more")
    } else {
        String::new()
    };
    format!("{} ({}{rest})", items.len(), named.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_name_the_first_items_and_count_the_rest() {
        assert_eq!(listed(&[]), "0");
        assert_eq!(listed(&[3, 17]), "2 (3, 17)");
        let many: Vec<usize> = (0..23).collect();
        assert!(listed(&many).starts_with("23 (0, 1, 2,"));
        assert!(listed(&many).ends_with("19, 3 more)"));
    }
}
