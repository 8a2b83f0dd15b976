//! Scoring benchmark on the shared Spider dev data: the four published systems, timed end to end
//! (loading, hardness, parsing, execution, comparison) for EX, ESM, ESM+ and EX with ESM, on 1 and
//! on 2 worker threads, the repetitions of the two interleaved. For each it prints the median wall
//! time, the median CPU time of the process, the parallel efficiency (CPU / (wall x threads)),
//! queries per second (one gold query per item, one prediction query per scored pair) and the peak
//! resident memory so far.
//!
//! With `SQLGATE_OFFICIAL_SPIDER` naming a folder holding the official Spider evaluation script
//! (`evaluation.py`, `process_sql.py`, `exec_eval.py` of test-suite-sql-eval, with `sqlparse` and
//! `nltk` importable by `SQLGATE_PYTHON`, default `python3`), it also times that script on the
//! same four systems (`--etype all`: EX and ESM) and prints how many times faster sqlgate's EX
//! with ESM is, measured in the same run.
//!
//! It also prints the CPU time of loading alone (gold, schemas, hardness, predictions), the part
//! of a run that does not spread over the workers.
//!
//! Run with `cargo bench --bench ex`; `SQLGATE_BENCH_METRICS="ex, esm"` limits it to one metric
//! list. Set `SQLGATE_SPIDER` to point at another copy of the data.

mod common;

use common::{cpu_seconds, median, peak_rss_mib, spider_dir};
use sqlgate::input::config::Config;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const REPETITIONS: usize = 7;
const SYSTEMS: [&str; 4] = ["C3", "Claude", "GPT4Turbo", "RESDSQL"];

fn config(spider: &Path, metric: &str, threads: usize) -> Config {
    let yaml = format!(
        "dataset:\n  gold: {spider}/dev_gold.sql\n  tables: {spider}/tables.json\n  databases: {spider}/database\n  skip_missing_databases: true\n\
         metrics: [{metric}]\n\
         execution: {{ threads: {threads} }}\n\
         predictions:\n  - {{ path: '{spider}/predictions/*.txt' }}\n",
        spider = spider.display()
    );
    Config::parse(
        &yaml,
        &spider.join("bench.yml"),
        &sqlgate::engine::registry::Engines,
    )
    .expect("valid bench config")
}

/// One configuration's figures.
struct Figures {
    wall: f64,
    cpu: f64,
}

/// One timed run of `config`: wall and CPU seconds, and the queries it ran.
fn run_once(config: &Config) -> (f64, f64, usize) {
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let evaluation = sqlgate::score::evaluation::evaluate(config, &Default::default())
        .expect("the shared data loads");
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_before;
    let scored = evaluation
        .results
        .iter()
        .filter(|r| r.scores[0].outcome.is_scored())
        .count();
    (wall, cpu, scored + scored / evaluation.systems.len().max(1))
}

/// Times `metric` on 1 and on 2 threads, the repetitions interleaved (1, 2, 1, 2, ...) so that a
/// burst of load on the machine slows both alike, and prints one line per thread count.
fn bench_both(metric: &str, spider: &Path) -> [Figures; 2] {
    let configs = [config(spider, metric, 1), config(spider, metric, 2)];
    let mut samples: [(Vec<f64>, Vec<f64>); 2] = Default::default();
    let mut queries = 0;
    for _ in 0..REPETITIONS {
        for (config, (walls, cpus)) in configs.iter().zip(samples.iter_mut()) {
            let (wall, cpu, ran) = run_once(config);
            walls.push(wall);
            cpus.push(cpu);
            queries = ran;
        }
    }
    let [one, two] = samples.map(|(walls, cpus)| Figures {
        wall: median(walls),
        cpu: median(cpus),
    });
    for (threads, figures) in [(1, &one), (2, &two)] {
        print_figures(metric, threads, figures, queries);
    }
    [one, two]
}

/// Times `metric` on `threads` threads alone and prints its line.
fn bench(metric: &str, threads: usize, spider: &Path) -> Figures {
    let config = config(spider, metric, threads);
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    let mut queries = 0;
    for _ in 0..REPETITIONS {
        let (wall, cpu, ran) = run_once(&config);
        walls.push(wall);
        cpus.push(cpu);
        queries = ran;
    }
    let figures = Figures {
        wall: median(walls),
        cpu: median(cpus),
    };
    print_figures(metric, threads, &figures, queries);
    figures
}

fn print_figures(metric: &str, threads: usize, figures: &Figures, queries: usize) {
    let executes = metric.split(',').any(|m| m.trim() == "ex");
    println!(
        "{metric:>14} | {threads} | {:>7.3} s | {:>7.3} s | {:>5.0} % | {:>9} | {:>6.0} MiB",
        figures.wall,
        figures.cpu,
        100.0 * figures.cpu / (figures.wall * threads as f64),
        if executes {
            format!("{:.0}", queries as f64 / figures.wall)
        } else {
            "-".to_string()
        },
        peak_rss_mib(),
    );
}

/// The official script's wall time over the four systems, on the items whose database exists.
fn official(script: &Path, spider: &Path) -> f64 {
    let python = std::env::var("SQLGATE_PYTHON").unwrap_or_else(|_| "python3".into());
    let work = tempfile::tempdir().expect("temporary folder");
    let gold = std::fs::read_to_string(spider.join("dev_gold.sql")).expect("shared gold");
    let present: Vec<bool> = gold
        .lines()
        .map(|l| {
            let db = l.rsplit('\t').next().unwrap_or_default();
            spider.join(format!("database/{db}/{db}.sqlite")).is_file()
        })
        .collect();
    let keep = |text: &str| -> String {
        text.lines()
            .zip(&present)
            .filter(|(_, p)| **p)
            .map(|(l, _)| format!("{l}\n"))
            .collect()
    };
    std::fs::write(work.path().join("gold.sql"), keep(&gold)).expect("writable");
    // NLTK's sentence splitter needs data that is not installed offline; the official verdicts
    // in shared/data were produced the same way (see its PROVENANCE.md).
    let runner = "import functools, runpy, sys, nltk\n\
                  nltk.word_tokenize = functools.partial(nltk.tokenize.word_tokenize, preserve_line=True)\n\
                  sys.path.insert(0, sys.argv[1])\n\
                  sys.argv = [sys.argv[1] + '/evaluation.py'] + sys.argv[2:]\n\
                  runpy.run_path(sys.argv[0], run_name='__main__')\n";
    let started = Instant::now();
    for system in SYSTEMS {
        let predictions = std::fs::read_to_string(spider.join(format!("predictions/{system}.txt")))
            .expect("shared predictions");
        let pred = work.path().join(format!("{system}.txt"));
        std::fs::write(&pred, keep(&predictions)).expect("writable");
        let output = Command::new(&python)
            .args(["-c", runner])
            .arg(script)
            .args(["--gold"])
            .arg(work.path().join("gold.sql"))
            .arg("--pred")
            .arg(&pred)
            .arg("--db")
            .arg(spider.join("database"))
            .arg("--table")
            .arg(spider.join("tables.json"))
            .args(["--etype", "all"])
            .output()
            .expect("the official script starts");
        assert!(
            output.status.success(),
            "the official script failed on {system}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    started.elapsed().as_secs_f64()
}

fn main() {
    let spider = spider_dir();
    println!(
        "four shared systems x 1034 items; medians of {REPETITIONS} runs; machine load average {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("        metric | threads | wall | CPU | efficiency | queries/s | peak RSS");
    let mut ex_esm = Vec::new();
    let only = std::env::var("SQLGATE_BENCH_METRICS").ok();
    let lists = ["ex", "esm", "esm_plus", "ex, esm"];
    for metric in lists
        .into_iter()
        .filter(|m| only.as_deref().is_none_or(|o| o == *m))
    {
        let [one, two] = bench_both(metric, &spider);
        if metric == "ex, esm" {
            ex_esm.extend([one.wall, two.wall]);
        }
    }
    if let [one, two] = ex_esm[..] {
        println!("EX with ESM: speedup on 2 threads {:.2}", one / two);
    }
    let config = config(&spider, "ex, esm", 1);
    let loading: Vec<f64> = (0..REPETITIONS)
        .map(|_| {
            let before = cpu_seconds();
            sqlgate::score::evaluation::prepare(&config, &Default::default())
                .expect("the shared data loads");
            cpu_seconds() - before
        })
        .collect();
    println!("loading alone (ex, esm): {:.3} s CPU", median(loading));
    if let Some(script) = std::env::var_os("SQLGATE_OFFICIAL_SPIDER") {
        let seconds = official(Path::new(&script), &spider);
        let ours = bench("ex, esm", 2, &spider).wall;
        println!(
            "official evaluation.py --etype all, four systems: {seconds:.1} s; sqlgate ex + esm \
             {ours:.3} s: {:.0}x",
            seconds / ours
        );
    }
}
