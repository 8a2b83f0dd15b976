//! What config validation keeps of the metrics' own descriptions agrees with the registry.

use super::REGISTRY;
use crate::input::config::{SQLITE_ONLY_METRICS, SUITE_METRICS};

/// The registered names whose metric says `yes`, sorted.
fn names_where(yes: fn(&dyn super::Metric) -> bool) -> Vec<&'static str> {
    let mut names: Vec<&str> = REGISTRY
        .iter()
        .filter(|(_, make)| yes(make().as_ref()))
        .map(|(name, _)| *name)
        .collect();
    names.sort();
    names
}

/// `names`, sorted.
fn sorted(names: &[&'static str]) -> Vec<&'static str> {
    let mut names = names.to_vec();
    names.sort();
    names
}

#[test]
fn config_validation_refuses_exactly_the_metrics_that_need_sqlite_files() {
    assert_eq!(
        names_where(|m| m.needs_sqlite_files()),
        sorted(&SQLITE_ONLY_METRICS)
    );
}

#[test]
fn config_validation_asks_a_suite_of_exactly_the_metrics_that_need_one() {
    assert_eq!(names_where(|m| m.needs_suite()), sorted(&SUITE_METRICS));
}

#[test]
fn every_metric_is_registered_under_its_own_name() {
    for (name, make) in REGISTRY {
        assert_eq!(make().name(), *name);
    }
}
