//! Stage 7, report: the Markdown report and PR comment (minijinja templates), the console
//! summary, `summary.json`, the per-item JSONL and the leaderboard scatter.
//!
//! Enters: an evaluation, its analyses and the gate verdict. Leaves: text and files. May import
//! every stage before it; must not import ci or commands.

pub mod audit;
pub mod datasets;
pub mod disagreements;
pub mod escape;
pub mod extraction;
pub mod features;
pub mod jsonl;
pub mod junit;
pub mod markdown;
pub mod proposed;
pub mod scatter;
pub mod summary;
pub mod unscored;
pub mod unstable;
