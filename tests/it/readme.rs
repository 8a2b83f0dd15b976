//! Every example in README.md runs: each YAML config block is parsed by sqlgate's config parser,
//! the workflow block is part of `.github/workflows/sqlgate-pr.yml`, each `sqlgate` command (and
//! the Quick start's `cargo run` of the example) runs on a copy of the bundled example, and the
//! comment excerpt is what that run writes. Relative links in README.md and docs/*.md resolve.

use crate::common;

use common::sqlgate_command;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// Copies `examples/spider-mini` to `<dir>/examples/spider-mini`.
fn copy_example(dir: &Path) -> PathBuf {
    let from = root().join("examples/spider-mini");
    let to = dir.join("examples/spider-mini");
    let mut stack = vec![PathBuf::new()];
    while let Some(relative) = stack.pop() {
        std::fs::create_dir_all(to.join(&relative)).unwrap();
        for entry in std::fs::read_dir(from.join(&relative)).unwrap() {
            let entry = entry.unwrap();
            let name = relative.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                stack.push(name);
            } else if name.as_os_str() != "sqlgate-report.md" {
                std::fs::copy(from.join(&name), to.join(&name)).unwrap();
            }
        }
    }
    to
}

/// The README's config block.
fn readme_config() -> String {
    common::markdown::fenced_blocks(&readme())
        .into_iter()
        .find(|(language, body)| language == "yaml" && body.starts_with("dataset:"))
        .expect("a config block")
        .1
}

/// A model repository (`git init`, nothing committed) in `dir` laid out as `config` (the
/// README's) names its files, filled with the bundled example (its gold, tables, databases, and C3's predictions); returns the config.
fn model_repository(dir: &Path, config: &str) -> PathBuf {
    common::git(dir, &["init", "--quiet", "--initial-branch=main"]);
    let example = copy_example(dir).canonicalize().unwrap();
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::create_dir_all(dir.join("predictions")).unwrap();
    for (from, to) in [
        ("dev_gold.sql", "data/dev_gold.sql"),
        ("tables.json", "data/tables.json"),
        ("predictions/C3.txt", "predictions/dev.sql"),
    ] {
        std::fs::copy(example.join(from), dir.join(to)).unwrap();
    }
    std::fs::rename(example.join("database"), dir.join("data/database")).unwrap();
    std::fs::write(dir.join("sqlgate.yml"), config).unwrap();
    dir.join("sqlgate.yml")
}

/// Runs one README command line (`sqlgate ...` or `cargo run --release -- ...` as the test
/// build of sqlgate, `git ...` through `sh` as a newcomer would) in `dir`; asserts it exits 0.
/// The baseline's commit comes from the repository, never from `GITHUB_SHA`.
fn run(line: &str, dir: &Path) {
    let mut command = if line.starts_with("git ") {
        common::shell(line)
    } else {
        let arguments = line
            .strip_prefix("cargo run --release -- ")
            .or_else(|| line.strip_prefix("sqlgate "))
            .unwrap_or_else(|| panic!("not a sqlgate or git command: {line}"));
        let arguments: Vec<&str> = arguments.split_whitespace().collect();
        sqlgate_command(&arguments)
    };
    let output = command
        .current_dir(dir)
        .env_remove("GITHUB_SHA")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "`{line}` in {}:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// README commands a test does not run, each with the reason.
const NOT_RUN: [(&str, &str); 4] = [
    (
        "cargo fmt --check && cargo clippy --all-targets -- -D warnings && cargo test",
        "the test suite itself; checked to be the line .ci/run runs",
    ),
    (
        "cargo install --locked --path .",
        "a release build of several minutes; the same build the Quick start's cargo run does",
    ),
    (
        "docker build --target source -t sqlgate:dev .",
        "needs Docker and a release build of several minutes inside the image",
    ),
    (
        "docker run --rm -v \"$PWD:/work\" -w /work sqlgate:dev eval --config examples/spider-mini/sqlgate.yml",
        "needs the image of the line before; the same eval the Quick start runs",
    ),
];

#[test]
fn the_readme_commands_run_on_the_bundled_example() {
    let blocks = common::markdown::fenced_blocks(&readme());
    let commands: Vec<String> = blocks
        .iter()
        .filter(|(language, _)| language == "sh")
        .flat_map(|(_, body)| body.lines().map(str::to_string).collect::<Vec<_>>())
        .filter(|line| !line.trim().is_empty())
        .collect();
    assert_eq!(
        commands[..2],
        [
            "cargo run --release -- eval --config examples/spider-mini/sqlgate.yml",
            NOT_RUN[0].0
        ],
        "the two set-up commands open the README"
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert_eq!(ci.trim_end().lines().last(), Some(NOT_RUN[0].0));
    let model = tempfile::tempdir().unwrap();
    model_repository(model.path(), &readme_config());
    let mut ran = 0;
    for line in &commands {
        if NOT_RUN.iter().any(|(command, _)| command == line) {
            continue;
        }
        // A command naming the example's config runs from the root of a copy of this repository;
        // one naming `sqlgate.yml` in the model repository the README's config describes, where
        // the commands run in README order (the baseline first).
        if line.contains("examples/spider-mini/") {
            let work = tempfile::tempdir().unwrap();
            copy_example(work.path());
            run(line, work.path());
        } else {
            run(line, model.path());
        }
        ran += 1;
    }
    assert!(ran >= 3, "{commands:?}");
    let baseline: serde_json::Value = serde_json::from_slice(
        &std::fs::read(model.path().join(".sqlgate/baseline.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        baseline["commit"].as_str(),
        Some(common::git(model.path(), &["rev-parse", "HEAD~1"]).as_str()),
        "the baseline records the commit made before it, and is committed after"
    );
}

#[test]
fn the_comment_excerpt_is_what_the_example_writes() {
    let readme = readme();
    let start = readme.find("<!-- example-comment:start -->\n").unwrap();
    let end = readme.find("<!-- example-comment:end -->").unwrap();
    let excerpt = &readme[start..end];
    let work = tempfile::tempdir().unwrap();
    let example = copy_example(work.path());
    run(
        "sqlgate eval --config examples/spider-mini/sqlgate.yml",
        work.path(),
    );
    let report = std::fs::read_to_string(example.join("sqlgate-report.md")).unwrap();
    let report: Vec<&str> = report.lines().collect();
    let unquoted: Vec<&str> = excerpt
        .lines()
        .skip(1)
        .map(|l| l.strip_prefix("> ").unwrap_or(l.trim_start_matches('>')))
        .collect();
    let mut at = 0;
    for chunk in unquoted.split(|l| *l == "…") {
        let found = (at..report.len().saturating_sub(chunk.len() - 1))
            .find(|&i| report[i..i + chunk.len()] == *chunk)
            .unwrap_or_else(|| panic!("not in the report, in order:\n{}", chunk.join("\n")));
        at = found + chunk.len();
    }
    assert!(unquoted.len() > 10 && unquoted[0].starts_with("## ✅ sqlgate passed"));
}

#[test]
fn every_yaml_block_is_a_valid_config_or_the_pr_workflow() {
    let workflow =
        std::fs::read_to_string(root().join(".github/workflows/sqlgate-pr.yml")).unwrap();
    let (mut configs, mut workflows) = (0, 0);
    for (language, body) in common::markdown::fenced_blocks(&readme()) {
        if language != "yaml" {
            continue;
        }
        if body.lines().any(|l| l.starts_with("dataset:")) {
            let work = tempfile::tempdir().unwrap();
            let config = model_repository(work.path(), &body);
            sqlgate::input::config::Config::load(&config, &sqlgate::engine::registry::Engines)
                .unwrap_or_else(|e| panic!("{e}\n{body}"));
            configs += 1;
        } else if body.lines().any(|l| l.starts_with("jobs:")) {
            // The shipped file gates the bundled example; the README's copy, the layout above.
            let shipped = workflow.replace(
                "config: examples/spider-mini/sqlgate.yml",
                "config: sqlgate.yml",
            );
            assert!(shipped.contains(&body), "not in sqlgate-pr.yml:\n{body}");
            workflows += 1;
        } else {
            panic!("a YAML block that is neither a config nor the workflow:\n{body}");
        }
    }
    assert_eq!((configs, workflows), (1, 1));
}

/// The targets of Markdown links `[text](target)` outside code.
fn link_targets(markdown: &str) -> Vec<String> {
    let pattern = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut in_fence = false;
    let mut targets = Vec::new();
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        if !in_fence {
            targets.extend(pattern.captures_iter(line).map(|c| c[1].to_string()));
        }
    }
    targets
}

#[test]
fn relative_links_in_the_readme_and_docs_resolve() {
    let mut pages = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let file = target.split('#').next().unwrap();
            let resolved = page.parent().unwrap().join(file);
            assert!(
                resolved.exists(),
                "{}: link to {target}, which does not exist",
                page.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} relative links");
    assert_eq!(
        link_targets("see [a](docs/A.md) and `[b](c)`\n```\n[d](e)\n```\n"),
        ["docs/A.md", "c"]
    );
}
