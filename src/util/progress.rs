//! Progress of a scoring run: a bar (items done, rate, ETA) on a terminal, plain periodic lines
//! in CI logs, nothing for runs that finish before the first line is due.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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
    /// Progress over `total` pairs: a bar when stderr is a terminal, plain lines otherwise.
    pub fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
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

    /// Clears the bar, or prints a closing line when periodic lines were printed.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
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
