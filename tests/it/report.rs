//! The report on real data (baseline: two published systems; candidate: a third) and its
//! resistance to hostile text in predictions.

use crate::common;
use crate::junit_schema;

use common::{shared_spider, sqlgate_command};
use std::path::Path;

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

/// Runs `baseline update` then `eval` in `dir`; returns (exit code, report text, summary JSON).
fn gate(
    dir: &Path,
    dataset: &str,
    baseline_predictions: &str,
    candidate_predictions: &str,
    gate: &str,
) -> (i32, String, serde_json::Value) {
    let common = format!(
        "{dataset}metrics: [ex, esm]\nreference: ex\nbaseline: {{ path: baseline.json }}\n"
    );
    write(
        &dir.join("base.yml"),
        &format!("{common}predictions:\n{baseline_predictions}"),
    );
    write(&dir.join("cand.yml"), &format!("{common}predictions:\n{candidate_predictions}gate: {gate}\nreport: {{ output: report.md }}\n"));
    let update = sqlgate_command(&[
        "baseline",
        "update",
        "--config",
        dir.join("base.yml").to_str().unwrap(),
    ])
    .output()
    .unwrap();
    common::assert_exit(&update, 0);
    let summary = dir.join("summary.json");
    let eval = common::eval_command(
        &dir.join("cand.yml"),
        &[
            "--summary",
            common::arg(&summary),
            "--scatter",
            common::arg(&dir.join("scatter.svg")),
            "--junit",
            common::arg(&dir.join("junit.xml")),
        ],
    )
    .output()
    .unwrap();
    assert!(
        matches!(eval.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&eval.stderr)
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let summary = serde_json::from_str(&std::fs::read_to_string(summary).unwrap()).unwrap();
    (eval.status.code().unwrap(), report, summary)
}

#[test]
fn report_on_shared_data_gates_a_weaker_system() {
    let spider = shared_spider();
    let work = tempfile::tempdir().unwrap();
    let dataset = format!(
        "dataset: {{ gold: {s}/dev_gold.sql, tables: {s}/tables.json, databases: {s}/database, skip_missing_databases: true }}\n",
        s = spider.display()
    );
    let p = |name: &str| {
        format!(
            "  - {{ name: {name}, path: {}/predictions/{name}.txt }}\n",
            spider.display()
        )
    };
    let (code, report, summary) = gate(
        work.path(),
        &dataset,
        &(p("C3") + &p("RESDSQL")),
        &p("GPT4Turbo"),
        "{ metric: ex, max_drop_points: 1.0, per_difficulty: { extra: 2.0 }, significance: { test: mcnemar-exact, alpha: 0.05 }, against: RESDSQL, must_pass: [0, 6] }",
    );
    assert_eq!(code, 1, "GPT4Turbo is 11.7 points below RESDSQL on EX");
    assert_eq!(summary["gate"]["passed"], false);
    assert_eq!(summary["across_systems"]["systems"], 3);
    assert!(summary["across_systems"]["kendall_tau_b"]["esm"]["all"].is_number());
    assert!(
        summary["systems"]["GPT4Turbo"]["fn"]["esm"]["all"]
            .as_f64()
            .unwrap()
            > 0.3
    );
    insta::assert_snapshot!("shared_data_report", undated(&report));
    let cells = summary["gate"]["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0]["cell"], "all");
    assert_eq!(cells[0]["baseline_system"], "RESDSQL");
    // As measured: on SQLite the 46 golds whose rows at their LIMIT tie break the same way on
    // every run, so another system's right verdict there counts (the verdicts are shown as
    // unstable, and nothing is withheld).
    assert_eq!(cells[0]["regressed"].as_array().unwrap().len(), 176);
    assert_eq!(cells[1]["fixed"].as_array().unwrap().len(), 14);
    assert!(summary["gate"]["unstable"]
        .as_array()
        .is_none_or(Vec::is_empty));
    assert_eq!(cells[0]["verdict"], "fail");
    assert!(cells[0]["p_adjusted"].as_f64().unwrap() < 0.05);
    let junit = std::fs::read_to_string(work.path().join("junit.xml")).unwrap();
    // JUnit says the change as the report prints it (84.2 -> 72.4 is -11.8, not the unrounded
    // -11.7): one rounding rule for every text a person reads.
    let shown = |key: &str| (1000.0 * cells[0][key].as_f64().unwrap()).round() / 10.0;
    let change = format!(
        "{:.1} -&gt; {:.1} ({:+.1} points)",
        shown("baseline"),
        shown("candidate"),
        shown("candidate") - shown("baseline")
    );
    assert!(junit.contains(&change), "`{change}` not in {junit}");
    assert!(report.contains(&format!(
        "| {:+.1} |",
        shown("candidate") - shown("baseline")
    )));
    let cases = junit_schema::validate(&junit);
    assert_eq!(
        cases,
        [
            ("GPT4Turbo vs RESDSQL: ex on all".to_string(), true),
            ("GPT4Turbo vs RESDSQL: ex on extra".to_string(), true),
            ("GPT4Turbo: must-pass item 0 (line 1)".to_string(), false),
            ("GPT4Turbo: must-pass item 6 (line 7)".to_string(), true),
        ]
    );
    assert_scatter_shows_the_leaderboard(&work.path().join("scatter.svg"), &summary);
}

/// The SVG has one panel (esm against ex) with every leaderboard system and the tau-b of the
/// summary in its caption.
fn assert_scatter_shows_the_leaderboard(svg: &Path, summary: &serde_json::Value) {
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let tau = summary["across_systems"]["kendall_tau_b"]["esm"]["all"]
        .as_f64()
        .unwrap();
    common::assert_contains(&svg, &[&format!("esm vs ex (Kendall tau-b {tau:.3})")]);
    for system in ["C3", "RESDSQL", "GPT4Turbo"] {
        assert!(svg.contains(&format!(">\n{system}\n</text>")), "{system}");
    }
    assert_eq!(svg.matches("<circle").count(), 3);
}

/// The bundled example's folder, a work folder holding its gold queries as the predictions
/// `good.txt`, and those queries.
fn gold_as_predictions() -> (std::path::PathBuf, tempfile::TempDir, Vec<String>) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    let work = tempfile::tempdir().unwrap();
    let gold: Vec<String> = std::fs::read_to_string(example.join("dev_gold.sql"))
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    write(&work.path().join("good.txt"), &gold.join("\n"));
    (example, work, gold)
}

#[test]
fn hostile_text_cannot_change_the_comment_structure_or_ping() {
    let (example, work, gold) = gold_as_predictions();
    let mut hostile = gold.clone();
    let payloads = [
        "SELECT 1 -- </details></details><img src=x onerror=alert(1)>",
        "SELECT '```' || '````' -- ``` \n# Approved by @octocat",
        "SELECT 1 /* @someone please merge <!-- sqlgate:0000 --> */",
        "SELECT '<script>alert(1)</script>' AS x -- | broken | table |",
    ];
    for (slot, payload) in hostile.iter_mut().zip(payloads) {
        *slot = payload.replace('\n', " ");
    }
    write(&work.path().join("hostile.txt"), &hostile.join("\n"));
    let dataset = format!(
        "dataset: {{ gold: {e}/dev_gold.sql, tables: {e}/tables.json, databases: {e}/database }}\n",
        e = example.display()
    );
    let (code, report, _) = gate(
        work.path(),
        &dataset,
        "  - { name: '@octocat <b>model</b>', path: good.txt }\n",
        "  - { name: '@octocat <b>model</b>', path: hostile.txt }\n",
        "{ max_drop_points: 0.0 }",
    );
    assert_eq!(code, 1);
    let parsed = common::markdown::assert_sqlgate_markup_only(&report, &[]);
    let shown = common::markdown::shown_texts(&parsed).join("\n");
    for mention in ["@octocat", "@someone"] {
        assert!(!shown.contains(mention), "`{mention}` rendered:\n{shown}");
    }
    let blocks = parsed.iter().filter(|n| n.kind == "html_block");
    let opened: usize = blocks
        .clone()
        .map(|n| {
            n.literal.matches("<details>").count() + n.literal.matches("<details open>").count()
        })
        .sum();
    let closed: usize = blocks
        .map(|n| n.literal.matches("</details>").count())
        .sum();
    assert_eq!(opened, closed, "every <details> sqlgate opened is closed");
    for payload in payloads {
        let first_line = payload.lines().next().unwrap();
        assert!(
            report.contains(first_line),
            "prediction shown verbatim inside a fence: {first_line}"
        );
    }
    assert_eq!(
        report.matches("<!-- sqlgate:").count(),
        1 + 1,
        "the marker, plus the payload's copy inside a fence"
    );
}

#[test]
fn a_baseline_made_with_other_settings_is_refused() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    let work = tempfile::tempdir().unwrap();
    let config = |extra: &str| {
        format!(
            "dataset: {{ gold: {e}/dev_gold.sql, tables: {e}/tables.json, databases: {e}/database }}\n\
             predictions: [{{ name: C3, path: {e}/predictions/C3.txt }}]\n\
             baseline: {{ path: baseline.json }}\n{extra}",
            e = example.display()
        )
    };
    let judge =
        |model: &str| format!("judge: {{ base_url: 'http://127.0.0.1:9/v1', model: {model} }}\n");
    write(
        &work.path().join("base.yml"),
        &config(&format!(
            "compare: {{ profile: spider-ts }}\n{}",
            judge("judge-a")
        )),
    );
    let update = sqlgate_command(&[
        "baseline",
        "update",
        "--config",
        work.path().join("base.yml").to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(update.status.success());
    for (changed, named) in [
        (
            format!("compare: {{ profile: strict }}\n{}", judge("judge-a")),
            [
                "`compare.profile`: spider-ts (baseline) vs strict (now)",
                "`compare.profile`",
            ],
        ),
        (
            format!("compare: {{ profile: spider-ts }}\n{}", judge("judge-a"))
                + "# difficulty: none\n",
            [
                "`dataset.difficulty`: spider-hardness (baseline) vs none (now)",
                "none",
            ],
        ),
        (
            format!("compare: {{ plug_value: true }}\n{}", judge("judge-a")),
            [
                "`compare.plug_value`: false (baseline) vs true (now)",
                "plug_value",
            ],
        ),
        (
            format!("compare: {{ profile: spider-ts }}\n{}", judge("judge-b")),
            ["judge-a at", "judge-b at"],
        ),
    ] {
        // The difficulty is a key of the `dataset` line, which the marker comment moves there.
        let text = config(&changed);
        let text = match text.contains("# difficulty: none") {
            true => text.replace("/database }", "/database, difficulty: none }"),
            false => text,
        };
        write(&work.path().join("now.yml"), &text);
        let eval = common::eval_command(&work.path().join("now.yml"), &[])
            .output()
            .unwrap();
        assert_eq!(eval.status.code(), Some(2), "{changed}");
        let stderr = String::from_utf8_lossy(&eval.stderr);
        assert!(
            stderr.contains("baseline.json") && named.iter().all(|n| stderr.contains(n)),
            "{stderr}"
        );
    }
}

#[test]
fn the_comment_fits_githubs_limit_and_says_so() {
    let report = "<!-- sqlgate:x -->\n".to_string() + &"| a line of the report |\n".repeat(5000);
    let comment = sqlgate::report::markdown::fit_comment(&report);
    assert!(comment.chars().count() <= sqlgate::report::markdown::GITHUB_COMMENT_LIMIT);
    assert!(
        comment.starts_with("<!-- sqlgate:x -->") && comment.contains("cut to fit GitHub's limit")
    );
    assert_eq!(sqlgate::report::markdown::fit_comment("short"), "short");
}

/// Kendall tau-b, written out from its definition: (concordant - discordant) over the geometric
/// mean of the pairs not tied in x and not tied in y; `None` when either is zero.
fn tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    let (mut score, mut untied_x, mut untied_y) = (0.0, 0.0, 0.0);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let dx = (x[i] - x[j]).signum() * f64::from(u8::from(x[i] != x[j]));
            let dy = (y[i] - y[j]).signum() * f64::from(u8::from(y[i] != y[j]));
            score += dx * dy;
            untied_x += dx.abs();
            untied_y += dy.abs();
        }
    }
    (untied_x > 0.0 && untied_y > 0.0).then(|| score / (untied_x * untied_y).sqrt())
}

#[test]
fn cross_metric_analyses_equal_the_official_verdicts_on_common_items() {
    let spider = shared_spider();
    let work = tempfile::tempdir().unwrap();
    let systems = ["C3", "Claude", "GPT4Turbo", "RESDSQL"];
    let predictions: String = systems
        .iter()
        .map(|name| {
            format!(
                "  - {{ name: {name}, path: {}/predictions/{name}.txt }}\n",
                spider.display()
            )
        })
        .collect();
    write(
        &work.path().join("all.yml"),
        &format!(
            "dataset: {{ gold: {s}/dev_gold.sql, tables: {s}/tables.json, databases: {s}/database, skip_missing_databases: true }}\n\
             metrics: [ex, esm]\nreference: ex\npredictions:\n{predictions}report: {{ output: report.md }}\n",
            s = spider.display()
        ),
    );
    let summary_path = work.path().join("summary.json");
    let eval = common::eval_command(
        &work.path().join("all.yml"),
        &["--summary", common::arg(&summary_path)],
    )
    .output()
    .unwrap();
    common::assert_exit(&eval, 0);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary_path).unwrap()).unwrap();
    // Per system and difficulty: (exact accuracy, exec accuracy, FP rate, FN rate) on the items
    // the official scorer gave both verdicts for.
    let difficulties = ["easy", "medium", "hard", "extra", "all"];
    let mut per_system = Vec::new();
    for name in systems {
        let text = std::fs::read_to_string(spider.join(format!("reference/official-{name}.jsonl")))
            .unwrap();
        let mut cells: std::collections::BTreeMap<&str, [f64; 5]> = Default::default();
        for line in text.lines() {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            let (Some(exec), Some(exact)) = (row["exec"].as_f64(), row["exact"].as_f64()) else {
                continue;
            };
            let hardness = difficulties
                .iter()
                .find(|d| row["hardness"] == **d)
                .unwrap();
            for key in [*hardness, "all"] {
                let cell = cells.entry(key).or_default();
                cell[0] += exact;
                cell[1] += exec;
                cell[2] += f64::from(u8::from(exact == 1.0 && exec == 0.0));
                cell[3] += f64::from(u8::from(exact == 0.0 && exec == 1.0));
                cell[4] += 1.0;
            }
        }
        let common = summary["systems"][name]["common_counts"]["esm"]["all"]
            .as_f64()
            .unwrap();
        assert_eq!(common, cells["all"][4], "{name}: common items");
        per_system.push(cells);
    }
    for d in difficulties {
        let column = |k: usize| -> Vec<f64> {
            per_system
                .iter()
                .map(|cells| cells[d][k] / cells[d][4])
                .collect()
        };
        let expected = tau_b(&column(0), &column(1));
        let got = summary["across_systems"]["kendall_tau_b"]["esm"][d].as_f64();
        match (expected, got) {
            (Some(e), Some(g)) => assert!((e - g).abs() < 1e-9, "tau {d}: {e} vs {g}"),
            (e, g) => assert_eq!(e, g, "tau {d}"),
        }
        for (k, kind) in [(2, "fp"), (3, "fn")] {
            let rates = column(k);
            let mean = rates.iter().sum::<f64>() / rates.len() as f64;
            let std =
                (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / rates.len() as f64).sqrt();
            let max = rates.iter().copied().fold(f64::MIN, f64::max);
            let spread = &summary["across_systems"][kind]["esm"][d];
            for (field, value) in [("mean", mean), ("std", std), ("max", max)] {
                let got = spread[field].as_f64().unwrap();
                assert!(
                    (got - value).abs() < 1e-6,
                    "{kind} {field} {d}: {got} vs {value}"
                );
            }
        }
    }
    let report = std::fs::read_to_string(work.path().join("report.md")).unwrap();
    let shown = report.replace('\u{2060}', "");
    assert!(shown.contains("esm: n = 972"), "{report}");
}

/// Runs `eval` on spider-mini with `config` (dataset and report lines added) in `dir`, checks its
/// JUnit output against the schema; returns (exit code, stdout, report).
fn eval_mini(dir: &Path, name: &str, config: &str) -> (i32, String, String) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spider-mini");
    let path = dir.join(name);
    write(
        &path,
        &format!(
            "dataset: {{ gold: {e}/dev_gold.sql, tables: {e}/tables.json, databases: {e}/database }}\n\
             metrics: [ex, esm]\nreport: {{ output: {d}/{name}.md }}\n{}",
            config.replace("$E", &example.display().to_string()),
            e = example.display(),
            d = dir.display()
        ),
    );
    let junit = dir.join(format!("{name}.junit.xml"));
    let output = common::eval_command(&path, &["--junit", common::arg(&junit)])
        .output()
        .unwrap();
    let report = std::fs::read_to_string(dir.join(format!("{name}.md"))).unwrap();
    junit_schema::validate(&std::fs::read_to_string(junit).unwrap());
    (
        output.status.code().unwrap(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        report,
    )
}

#[test]
fn the_headline_says_the_verdict_and_why_in_each_case() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let system =
        |file: &str| format!("predictions: [{{ name: model, path: $E/predictions/{file}.txt }}]\n");
    let gated = format!(
        "baseline: {{ path: {}/baseline.json }}\ngate: {{ max_drop_points: 0.0, significance: {{ test: mcnemar-exact, alpha: 0.05 }} }}\n",
        dir.display()
    );
    let (code, _, _) = eval_mini(
        dir,
        "first-run.yml",
        &format!(
            "{}baseline: {{ path: {}/baseline.json, required: false }}\n",
            system("RESDSQL"),
            dir.display()
        ),
    );
    assert_eq!(code, 0);
    let first_run = std::fs::read_to_string(dir.join("first-run.yml.md")).unwrap();
    let update = sqlgate_command(&[
        "baseline",
        "update",
        "--config",
        dir.join("first-run.yml").to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(update.status.success());
    let (pass_code, pass_out, pass) = eval_mini(dir, "pass.yml", &(system("RESDSQL") + &gated));
    let gated_esm = gated.replace("gate: {", "gate: { metric: esm,");
    let (fail_code, fail_out, fail) = eval_mini(dir, "fail.yml", &(system("C3") + &gated_esm));
    let everyone = "predictions:\n  - { path: \"$E/predictions/*.txt\" }\n";
    let (board_code, _, board) = eval_mini(dir, "leaderboard.yml", everyone);
    assert_eq!((pass_code, board_code), (0, 0));
    // The heading as GitHub renders it: its text, without the escaper's word joiners.
    let headline = |report: &str| {
        let line = report.lines().nth(1).unwrap();
        let text: String = common::markdown::nodes(line)
            .iter()
            .filter(|n| matches!(n.kind, "text" | "code"))
            .map(|n| n.literal.replace('\u{2060}', ""))
            .collect();
        format!("## {text}")
    };
    assert!(
        headline(&first_run)
            .starts_with("## ✅ sqlgate passed, not gated: first run: no baseline at"),
        "{first_run}"
    );
    // The line right below the heading: what the headline leaves out.
    let detail = |report: &str| report.lines().nth(3).unwrap().to_string();
    assert!(
        headline(&pass).starts_with("## ✅ sqlgate passed: ex ")
            && headline(&pass).ends_with(" regressed / 0 fixed"),
        "{pass}"
    );
    assert!(detail(&pass).starts_with("over 157 items: "), "{pass}");
    assert!(detail(&pass).contains("McNemar p = "), "{pass}");
    assert!(
        headline(&board).starts_with("## ✅ sqlgate passed, not gated: no baseline configured"),
        "{board}"
    );
    let fail_headline = headline(&fail);
    assert_eq!(fail_code, 1, "{fail}");
    assert!(
        fail_headline.starts_with("## ❌ sqlgate failed: esm "),
        "{fail_headline}"
    );
    assert!(
        detail(&fail).contains("&lt; 0.05: significant, drop "),
        "{fail}"
    );
    for report in [&first_run, &pass, &fail, &board] {
        let heading = headline(report);
        assert!(heading.chars().count() <= 100 + "## ".len(), "{heading}");
    }
    // What the heading says in full is not listed again below it.
    assert_eq!(
        first_run.matches("no baseline at").count(),
        1,
        "{first_run}"
    );
    assert_eq!(
        board.matches("no baseline configured").count(),
        1,
        "{board}"
    );
    assert_eq!(fail.matches("dropped 27.4 points").count(), 0, "{fail}");
    // Stdout's verdict line is the heading's line and its detail on one line.
    for (stdout, report) in [(&pass_out, &pass), (&fail_out, &fail)] {
        let line = stdout.lines().find(|l| l.starts_with("gate ")).unwrap();
        let plain = headline(report);
        let told = plain.split_once(" sqlgate ").unwrap().1;
        assert!(line["gate ".len()..].starts_with(told), "{line} vs {plain}");
    }
    let stable = |report: &str| undated(&report.replace(&dir.display().to_string(), "[dir]"));
    insta::assert_snapshot!("first_run_comment", stable(&first_run));
    insta::assert_snapshot!("pass_comment", stable(&pass));
    insta::assert_snapshot!("fail_comment", stable(&fail));
    insta::assert_snapshot!("leaderboard_comment", stable(&board));
}

/// A report with the baseline's date and age (which move with the day the test runs) replaced.
fn undated(report: &str) -> String {
    let dated = regex::Regex::new(r"made \d{4}-\d{2}-\d{2} \(\d+\.\d days ago\)").unwrap();
    dated
        .replace_all(report, "made [date] ([age] days ago)")
        .into_owned()
}

/// A hostile system name (backticks, a `|`, a mention, a `:` name, a commit-like hex run) and a
/// gated feature cell render in the comment's table cells and in the `<summary>` title of the
/// regressed items as exactly their characters: what GitHub would link is code, so there is no
/// invisible word joiner anywhere in the comment, a backtick is code (never `&#96;`), and the
/// `|` keeps every row's cells.
#[test]
fn hostile_names_show_their_characters_in_table_cells_and_summary_titles() {
    let (example, work, gold) = gold_as_predictions();
    let broken: Vec<&str> = (gold.iter().enumerate())
        .map(|(i, sql)| if i < 3 { "SELECT 'wrong'" } else { sql })
        .collect();
    write(&work.path().join("broken.txt"), &broken.join("\n"));
    let dataset = format!(
        "dataset: {{ gold: {e}/dev_gold.sql, tables: {e}/tables.json, databases: {e}/database }}\n",
        e = example.display()
    );
    let name = "`m|1` @octo x:y 0123456789abcdef";
    let entry = |file: &str| format!("  - {{ name: '{name}', path: {file} }}\n");
    let (code, report, _) = gate(
        work.path(),
        &dataset,
        &entry("good.txt"),
        &entry("broken.txt"),
        "{ max_drop_points: 0.0, per_feature: { aggregate: 50.0 } }",
    );
    assert_eq!(code, 1);
    assert!(
        !report.contains('\u{2060}') && !report.contains("&#96;"),
        "{report}"
    );
    let shown_name = name.replace('`', "");
    let parsed = common::markdown::nodes(&report);
    let cells: Vec<String> = parsed
        .split(|n| n.kind == "table_cell")
        .map(|run| {
            (run.iter().take_while(|n| n.kind != "table_row"))
                .filter(|n| matches!(n.kind, "text" | "code"))
                .map(|n| n.literal.as_str())
                .collect()
        })
        .collect();
    let rows = report.lines().filter(|l| l.contains("&#124;")).count();
    assert!(
        rows >= 3,
        "the accuracy and gate tables name the system: {report}"
    );
    assert!(
        cells.iter().filter(|c| **c == shown_name).count() >= rows,
        "{cells:?}"
    );
    assert!(cells.iter().any(|c| c == "feature:aggregate"), "{cells:?}");
    let codes: Vec<&str> = (parsed.iter().filter(|n| n.kind == "code"))
        .map(|n| n.literal.as_str())
        .collect();
    for copied in [
        "m",
        "1",
        "@octo",
        "x:y",
        "0123456789abcdef",
        "feature:aggregate",
    ] {
        assert!(codes.contains(&copied), "`{copied}` is code: {codes:?}");
    }
    let title = format!("Regressed items of {shown_name} (vs baseline {shown_name}) (3)");
    let summary = report
        .lines()
        .find(|l| l.starts_with("<details open><summary>Regressed items of "))
        .unwrap();
    let inner = &summary["<details open><summary>".len()..summary.find("</summary>").unwrap()];
    let text = inner.replace("<code>", "").replace("</code>", "");
    assert!(!text.contains('<'), "no tag but <code> in {summary}");
    assert_eq!(common::markdown::decode_html_text(&text), title);
    assert_eq!(inner.matches("<code>@octo</code>").count(), 2, "{summary}");
}
