//! Whether an item's gold means the same without the state its preprocess leaves on its session
//! (red team rounds 41 to 44). Under the sound profiles the prediction and every check run on
//! sessions the preprocess never touched: its session is closed before the prediction, as it is
//! on the twin before the gold. A preprocess can leave state on its session alone (a setting, a
//! variable, a temporary object, the last insert id, a pinned clock, a custom setting), which
//! no list of kinds reads in full; so the gold is run both ways, on the preprocess's own session
//! (the official flow) and on a new one, each on a clone of its own, and an item whose gold
//! answers or writes otherwise is not judged ([`super::sound::unjudged`]): without that state it
//! would be another item. Everything the gold does the same without the state is judged, a
//! preprocess's temporary table the gold never reads again included.

use super::python::TestsError;
use super::query_check::{Contents, OWN_ENTRY};

/// How a twin's gold runs after its preprocess (each engine's twin, `gold_twin.rs` on SQLite).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Gold {
    /// On the preprocess's own session, as the official evaluator runs it; its effect read.
    Shared,
    /// On a new session, as the prediction runs; its effect read when `observed`.
    Alone { observed: bool },
}

impl Gold {
    /// Whether the gold's effect is read.
    pub fn observed(self) -> bool {
        match self {
            Gold::Shared => true,
            Gold::Alone { observed } => observed,
        }
    }
}

/// What the gold did on a twin: its outcome (each statement's rows or error, as the engine
/// shows them: a test case may run any statement alone, red team round 45) and the clone's
/// contents just before and after it.
pub struct GoldEffect {
    /// Each statement's rows or error.
    pub outcome: String,
    /// The clone's contents after the preprocess, its session still open.
    pub before: Contents,
    /// The clone's contents after the gold, its sessions ended.
    pub after: Contents,
}

/// How the gold's run on the preprocess's own session (`shared`) differs from its run on a new
/// session (`alone`): another outcome, or an entry of the contents (the clone's own entry left
/// out: ids and times) that the gold changed on one clone and not on the other, or changed to
/// another value. Empty when the two are the same. Entries compared as each clone held them
/// before the gold, so a preprocess that stamps the time, which leaves the two clones apart
/// before the gold, is judged.
fn differences(shared: &GoldEffect, alone: &GoldEffect) -> Vec<String> {
    let mut found = Vec::new();
    if shared.outcome != alone.outcome {
        found.push("its result".to_string());
    }
    let mut names: Vec<&String> = [shared, alone]
        .iter()
        .flat_map(|effect| effect.before.keys().chain(effect.after.keys()))
        .collect();
    names.sort();
    names.dedup();
    for name in names.into_iter().filter(|name| name.as_str() != OWN_ENTRY) {
        let changed = |effect: &GoldEffect| effect.before.get(name) != effect.after.get(name);
        let written = changed(shared) || changed(alone);
        if written
            && (changed(shared) != changed(alone)
                || shared.after.get(name) != alone.after.get(name))
        {
            found.push(format!("`{name}`"));
        }
    }
    found
}

/// What a twin's gold run shows: its [`GoldEffect`], or why the clone could not be read after
/// the preprocess (a lock its session held then: red team round 39's rule, the item fails).
pub type Read = Result<GoldEffect, String>;

/// The clone's contents after the preprocess (`before`), read while its session is open: a
/// fault there is the reason the item is not judged (a lock the preprocess's session holds),
/// a stop is the item's.
pub fn before_gold(
    before: Result<Contents, TestsError>,
) -> Result<Result<Contents, String>, TestsError> {
    match before {
        Ok(contents) => Ok(Ok(contents)),
        Err(TestsError::Fault(why)) => Ok(Err(why)),
        Err(stopped) => Err(stopped),
    }
}

/// What the gold's run shows ([`Read`]): its `outcome` and the contents `before` and `after`
/// it (read only when those before it were).
pub fn read(
    outcome: String,
    before: Result<Contents, String>,
    after: impl FnOnce() -> Result<Contents, TestsError>,
) -> Result<Read, TestsError> {
    Ok(match before {
        Ok(before) => Ok(GoldEffect {
            outcome,
            before,
            after: after()?,
        }),
        Err(why) => Err(why),
    })
}

/// Why an item is not judged, comparing the gold's run on the preprocess's own session
/// (`shared`) with its run on a new one (`alone`); `None` when they are the same.
pub fn why_unjudged(shared: &Read, alone: &Read) -> Option<String> {
    let (shared, alone) = match (shared, alone) {
        (Err(why), _) | (_, Err(why)) => {
            return Some(format!(
                "its clone could not be read after the preprocess, whose session was open: {why}"
            ))
        }
        (Ok(shared), Ok(alone)) => (shared, alone),
    };
    let differ = differences(shared, alone);
    (!differ.is_empty()).then(|| {
        format!(
            "its gold gives another {} on a new session than on the preprocess's",
            differ.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{differences, GoldEffect};
    use crate::engine::livesql::query_check::Contents;

    fn contents(entries: &[(&str, &str)]) -> Contents {
        (entries.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn effect(outcome: &str, before: &[(&str, &str)], after: &[(&str, &str)]) -> GoldEffect {
        GoldEffect {
            outcome: outcome.into(),
            before: contents(before),
            after: contents(after),
        }
    }

    #[test]
    fn a_gold_is_the_same_unless_its_result_or_its_writes_differ() {
        let read = effect(
            "rows",
            &[("t", "1"), ("log", "a")],
            &[("t", "1"), ("log", "a")],
        );
        let stamped = effect(
            "rows",
            &[("t", "1"), ("log", "b")],
            &[("t", "1"), ("log", "b")],
        );
        assert!(differences(&read, &stamped).is_empty());
        let other_rows = effect("none", &[("t", "1")], &[("t", "1")]);
        assert_eq!(differences(&read, &other_rows), ["its result"]);
        let wrote = effect("rows", &[("t", "1")], &[("t", "2")]);
        let wrote_other = effect("rows", &[("t", "1")], &[("t", "3")]);
        let wrote_nothing = effect("rows", &[("t", "1")], &[("t", "1")]);
        assert!(differences(&wrote, &wrote).is_empty());
        assert_eq!(differences(&wrote, &wrote_other), ["`t`"]);
        assert_eq!(differences(&wrote, &wrote_nothing), ["`t`"]);
        let made = effect("rows", &[], &[("new", "1")]);
        assert_eq!(differences(&made, &wrote_nothing), ["`new`"]);
    }
}
