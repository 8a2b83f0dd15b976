//! Progress of a scoring run: a bar (items done, rate, ETA) on a terminal outside CI, plain
//! periodic lines in CI logs, nothing for runs that finish before the first line is due.
//!
//! A CI runner may give the steps a terminal (`act` does), and there a bar would be drawn into
//! the log, its last line left open: the next workflow command (`::stop-commands::...`) would
//! continue that line and not be read as one. So no bar under CI (`CI`, `GITHUB_ACTIONS`, `ACT`),
//! and a bar, where one is drawn, always leaves stderr at the start of a line: when it finishes
//! and before every note printed while it runs ([`eprint_below_bar`]).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The bar being drawn, if any: notes printed meanwhile go below it.
static ACTIVE_BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// The environment variables that say a run is in CI (GitHub Actions, `act`, most CI systems);
/// one set to anything but empty, `0` or `false` counts.
const CI_MARKERS: [&str; 3] = ["CI", "GITHUB_ACTIONS", "ACT"];

/// Seconds between two plain progress lines.
const LINE_INTERVAL: Duration = Duration::from_secs(10);

/// Counts finished (system, item) pairs and shows it.
pub struct Progress {
    total: usize,
    done: AtomicUsize,
    started: Instant,
    /// Milliseconds since `started` when the last plain line was printed.
    last_line_ms: AtomicU64,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Progress over `total` pairs: a bar when stderr is a terminal and the run is not in CI,
    /// plain lines otherwise.
    pub fn new(total: usize) -> Progress {
        let wants_bar = std::io::stderr().is_terminal() && !in_ci(|name| std::env::var(name).ok());
        let bar = wants_bar.then(|| {
            let bar = ProgressBar::new(total as u64);
            let style =
                ProgressStyle::with_template("{bar:40} {pos}/{len} pairs  {rate}  ETA {eta}")
                    .expect("a valid progress template")
                    .with_key(
                        "rate",
                        |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = write!(w, "{:.0}/s", state.per_sec());
                        },
                    );
            bar.set_style(style);
            set_active_bar(Some(bar.clone()));
            bar
        });
        Progress {
            total,
            done: AtomicUsize::new(0),
            started: Instant::now(),
            last_line_ms: AtomicU64::new(0),
            bar,
        }
    }

    /// Records one finished pair.
    pub fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        match &self.bar {
            Some(bar) => bar.inc(1),
            None => self.maybe_print_line(done),
        }
    }

    fn maybe_print_line(&self, done: usize) {
        let elapsed = self.started.elapsed();
        let now_ms = elapsed.as_millis() as u64;
        let last = self.last_line_ms.load(Ordering::Relaxed);
        if now_ms < last + LINE_INTERVAL.as_millis() as u64 {
            return;
        }
        if self
            .last_line_ms
            .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        eprintln!("sqlgate: {}", line(done, self.total, elapsed));
    }

    /// Leaves the bar's final state on its own line (the line ended, so whatever is printed next
    /// starts a line), or prints a closing line when periodic lines were printed.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            set_active_bar(None);
            bar.finish();
            eprintln!();
        } else if self.last_line_ms.load(Ordering::Relaxed) > 0 {
            eprintln!(
                "sqlgate: {}",
                line(
                    self.done.load(Ordering::Relaxed),
                    self.total,
                    self.started.elapsed()
                )
            );
        }
    }
}

/// Whether the variables `var` reads say the run is in CI (see [`CI_MARKERS`]).
fn in_ci(var: impl Fn(&str) -> Option<String>) -> bool {
    CI_MARKERS.iter().filter_map(|name| var(name)).any(|value| {
        let value = value.trim();
        !(value.is_empty() || value == "0" || value.eq_ignore_ascii_case("false"))
    })
}

fn set_active_bar(bar: Option<ProgressBar>) {
    *ACTIVE_BAR.lock().unwrap_or_else(|e| e.into_inner()) = bar;
}

/// Writes `text` to stderr, starting on a line of its own: while a bar is drawn, the bar is
/// cleared and its line ended first (so that in the bytes, as a log reads them, `text` starts a
/// line), and drawn again below `text`.
pub fn eprint_below_bar(text: &str) {
    let bar = ACTIVE_BAR.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match bar {
        Some(bar) => bar.suspend(|| eprint!("\n{text}")),
        None => eprint!("{text}"),
    }
}

/// `done/total pairs (p%), rate/s, ETA s`.
fn line(done: usize, total: usize, elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64().max(1e-9);
    let rate = done as f64 / seconds;
    let remaining = total.saturating_sub(done) as f64 / rate.max(1e-9);
    let percent = if total == 0 {
        100.0
    } else {
        100.0 * done as f64 / total as f64
    };
    format!("{done}/{total} pairs ({percent:.0}%), {rate:.0}/s, ETA {remaining:.0}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_markers_turn_the_bar_off() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            }
        };
        assert!(!in_ci(env(&[])));
        assert!(!in_ci(env(&[
            ("CI", "false"),
            ("ACT", ""),
            ("GITHUB_ACTIONS", "0")
        ])));
        assert!(in_ci(env(&[("CI", "true")])));
        assert!(in_ci(env(&[("GITHUB_ACTIONS", "true")])));
        assert!(in_ci(env(&[("ACT", "true")])));
        assert!(in_ci(env(&[("CI", "1")])));
    }

    #[test]
    fn plain_lines_say_count_rate_and_eta() {
        assert_eq!(
            line(250, 1000, Duration::from_secs(5)),
            "250/1000 pairs (25%), 50/s, ETA 15s"
        );
        assert_eq!(
            line(0, 0, Duration::from_secs(1)),
            "0/0 pairs (100%), 0/s, ETA 0s"
        );
    }
}
