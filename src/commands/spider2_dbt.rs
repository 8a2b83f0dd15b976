//! `sqlgate spider2-dbt`: Spider 2.0-DBT's evaluation (`duckdb_match` on the `.duckdb` file each
//! instance's agent left) under the official profile and the sound one, side by side: the
//! score of each over every instance of `spider2_eval.jsonl` (the denominator, always printed),
//! the instances where they disagree, and the gold findings (a gold the starting database
//! already matches).

use crate::engine::exec::Limits;
use crate::engine::spider2_dbt::Verdict;
use crate::input::limits::ExecutionConfig;
use crate::input::spider2_dbt::{load_eval, load_results, Answer, DbtInstance};
use crate::metrics::spider2_dbt::{
    already_matches, both_profiles, reason, tables_of, verdict_value as value, OFFICIAL,
};
use crate::util::log::log_value;
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;

/// One instance under both profiles.
struct Scored {
    instance_id: String,
    official: Verdict,
    sound: Verdict,
    /// Whether the starting database already matches the gold (officially).
    unchanged_gold: bool,
}

/// Scores the submission folder `submission` against the gold folder `gold_dir` (both in the
/// upstream layout, `input::spider2_dbt`); with `examples`, checks each gold against the
/// starting database `<examples>/<instance_id>/<gold file name>`; with `jsonl`, writes one
/// object per instance there. Exit 0 once scored; a gold that cannot be read is an error (2).
pub fn spider2_dbt(
    gold_dir: &Path,
    submission: &Path,
    examples: Option<&Path>,
    jsonl: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let instances = load_eval(gold_dir)?;
    let answers = load_results(submission)?;
    let limits = Limits::of(&ExecutionConfig::default());
    let scored: Vec<Scored> = (instances.iter())
        .map(|instance| {
            score(
                instance,
                answers.get(&instance.instance_id),
                examples,
                &limits,
            )
        })
        .collect();
    print!("{}", summary(&scored, answers.len()));
    if let Some(path) = jsonl {
        let lines: Vec<String> = scored.iter().map(|s| record(s).to_string()).collect();
        std::fs::write(path, lines.join("\n") + "\n")
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn score(
    instance: &DbtInstance,
    answer: Option<&Answer>,
    examples: Option<&Path>,
    limits: &Limits,
) -> Scored {
    let tables = tables_of(instance);
    let (official, sound) = match answer {
        None => {
            let missing = Verdict::Mismatch("no line in results_metadata.jsonl".into());
            (missing.clone(), missing)
        }
        Some(Err(why)) => (
            Verdict::Mismatch(why.clone()),
            Verdict::Mismatch(why.clone()),
        ),
        Some(Ok(file)) => both_profiles(&instance.gold, file, tables, limits),
    };
    let start = (examples.zip(instance.gold.file_name()))
        .map(|(folder, name)| folder.join(&instance.instance_id).join(name));
    let unchanged_gold = start.is_some_and(|start| {
        start.is_file() && already_matches(&instance.gold, &start, tables, limits)
    });
    Scored {
        instance_id: instance.instance_id.clone(),
        official,
        sound,
        unchanged_gold,
    }
}

/// The console report: both scores over every instance, the disagreements, the findings.
fn summary(scored: &[Scored], answered: usize) -> String {
    let total = scored.len();
    let count = |pick: fn(&Scored) -> &Verdict, wanted: Option<u8>| {
        scored.iter().filter(|s| value(pick(s)) == wanted).count()
    };
    let percent = |right: usize| {
        if total == 0 {
            0.0
        } else {
            100.0 * right as f64 / total as f64
        }
    };
    let mut out = format!(
        "spider2-dbt: {total} instances in spider2_eval.jsonl (the denominator of both scores); {answered} lines in results_metadata.jsonl\n"
    );
    for (name, pick) in [
        (
            format!("official ({OFFICIAL})"),
            (|s: &Scored| &s.official) as fn(&Scored) -> &Verdict,
        ),
        (
            "sound (rows, not columns one by one)".to_string(),
            |s: &Scored| &s.sound,
        ),
    ] {
        let right = count(pick, Some(1));
        out += &format!(
            "  {name}: {right}/{total} = {:.1}% ({} unscored)\n",
            percent(right),
            count(pick, None)
        );
    }
    let differ: Vec<&Scored> = scored
        .iter()
        .filter(|s| value(&s.official) != value(&s.sound))
        .collect();
    out += &format!("disagreements: {}\n", differ.len());
    for s in differ {
        out += &format!(
            "  {}: official {} ({}), sound {} ({})\n",
            log_value(&s.instance_id),
            shown(value(&s.official)),
            log_value(&reason(&s.official)),
            shown(value(&s.sound)),
            log_value(&reason(&s.sound))
        );
    }
    for s in scored.iter().filter(|s| s.unchanged_gold) {
        out += &format!(
            "finding gold-unchanged: {}: the starting database already matches the gold (an agent that changes nothing scores 1)\n",
            log_value(&s.instance_id)
        );
    }
    out
}

fn shown(value: Option<u8>) -> String {
    value.map_or_else(|| "-".into(), |v| v.to_string())
}

fn record(s: &Scored) -> serde_json::Value {
    json!({
        "instance_id": s.instance_id,
        "official": value(&s.official),
        "official_reason": reason(&s.official),
        "sound": value(&s.sound),
        "sound_reason": reason(&s.sound),
        "gold_unchanged": s.unchanged_gold,
    })
}
