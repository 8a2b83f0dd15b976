//! The source tree shows the pipeline: top-level modules import only modules declared before
//! them in `src/lib.rs` (across crates the compiler holds it: a crate under `crates/` depends
//! only on the crates below it), no two source files import each other through a cycle, no
//! source file is longer than 800 lines, `docs/ARCHITECTURE.md` names every stage folder that
//! exists, and whether the gate passed is derived in one place, the judge's verdict.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

/// The repository's root (the gate's package).
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `src/` folder of every package of the workspace: the gate's and each crate's under
/// `crates/`.
fn source_roots() -> Vec<PathBuf> {
    let mut roots = vec![root().join("src")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    crates.sort();
    roots.extend(crates);
    roots
}

/// Every module file of every package (not the crate roots `lib.rs` / `main.rs`), by module
/// path (`a::b`). A crate under `crates/` holds its stages as they were in one crate
/// (`crates/sqlgate-engine/src/engine/` is the module `engine`), so the paths are the gate's.
fn module_files() -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut modules = BTreeMap::new();
    for src in source_roots() {
        let mut files = Vec::new();
        walk(&src, &mut files);
        for path in files {
            let crate_root = path.parent() == Some(src.as_path())
                && (path.ends_with("lib.rs") || path.ends_with("main.rs"));
            if crate_root {
                continue;
            }
            let relative = path.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|l| l == "mod") {
                parts.pop();
            }
            let previous = modules.insert(parts.join("::"), path.clone());
            assert!(previous.is_none(), "two files for one module: {path:?}");
        }
    }
    modules
}

/// The code of a file without comments and without its `#[cfg(test)]` module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths that follow `prefix` in `code` (`crate::a::b::C` gives `a::b::C`).
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let boundary = at == 0 || {
            let before = rest.as_bytes()[at - 1];
            !(before.is_ascii_alphanumeric() || before == b'_' || before == b':')
        };
        rest = &rest[at + prefix.len()..];
        if boundary {
            let path: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            found.push(path.trim_end_matches(':').to_string());
        }
    }
    found
}

/// The longest module of `modules` that `path` starts with.
fn resolve(path: &str, modules: &BTreeMap<String, PathBuf>) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len())
        .rev()
        .map(|k| parts[..k].join("::"))
        .find(|m| modules.contains_key(m))
}

/// Which modules each module imports (`crate::` and `super::` paths), ancestors and descendants
/// left out: a folder's `mod.rs` and its children are one unit.
fn imports(modules: &BTreeMap<String, PathBuf>) -> BTreeMap<String, BTreeSet<String>> {
    let related = |a: &str, b: &str| {
        a == b || b.starts_with(&format!("{a}::")) || a.starts_with(&format!("{b}::"))
    };
    modules
        .iter()
        .map(|(module, path)| {
            let code = code(path);
            let supers =
                paths_after(&code, "super::")
                    .into_iter()
                    .map(|p| match module.rsplit_once("::") {
                        Some((parent, _)) => format!("{parent}::{p}"),
                        None => p,
                    });
            let targets = paths_after(&code, "crate::")
                .into_iter()
                .chain(supers)
                .filter_map(|p| resolve(&p, modules))
                .filter(|target| !related(module, target))
                .collect();
            (module.clone(), targets)
        })
        .collect()
}

/// The stages in the order `src/lib.rs` declares them: the gate's own modules (`pub mod
/// report;`) and the crates' modules it re-exports (`pub use sqlgate_engine::engine;`).
fn top_level_order() -> Vec<String> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| {
            let reexported = l.strip_prefix("pub use sqlgate_");
            let reexported = reexported.and_then(|rest| Some(rest.split_once("::")?.1));
            l.strip_prefix("pub mod ").or(reexported)
        })
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
}

#[test]
fn top_level_modules_import_only_earlier_stages() {
    let order = top_level_order();
    let rank = |m: &str| {
        let top = m.split("::").next().unwrap();
        order
            .iter()
            .position(|o| o == top)
            .unwrap_or_else(|| panic!("{top} is not declared in src/lib.rs"))
    };
    let mut upward = Vec::new();
    for (module, targets) in imports(&module_files()) {
        for target in targets {
            if rank(&target) > rank(&module) {
                upward.push(format!("{module} -> {target}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports against the pipeline order of src/lib.rs:\n{}",
        upward.join("\n")
    );
}

/// A cycle of `graph`, if it has one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(2) => return None,
            Some(1) => {
                let start = stack.iter().position(|n| *n == node).unwrap();
                let mut cycle: Vec<String> = stack[start..].iter().map(|s| s.to_string()).collect();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(node, 1);
        stack.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, state, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        state.insert(node, 2);
        None
    }
    let mut state = BTreeMap::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut state, &mut Vec::new()))
}

/// The import graph with every module cut to its first `depth` path segments: a folder and all
/// it holds become one node, so a cycle between folders shows as well as one between files.
fn collapsed(
    graph: &BTreeMap<String, BTreeSet<String>>,
    depth: usize,
) -> BTreeMap<String, BTreeSet<String>> {
    let cut = |m: &str| m.split("::").take(depth).collect::<Vec<_>>().join("::");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, targets) in graph {
        let from = cut(module);
        let entry = out.entry(from.clone()).or_default();
        entry.extend(targets.iter().map(|t| cut(t)).filter(|t| *t != from));
    }
    out
}

#[test]
fn no_import_cycle_between_files_or_folders() {
    let graph = imports(&module_files());
    let depth = graph
        .keys()
        .map(|m| m.split("::").count())
        .max()
        .unwrap_or(1);
    for level in 1..=depth {
        if let Some(cycle) = find_cycle(&collapsed(&graph, level)) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn no_source_file_is_longer_than_800_lines() {
    let long: Vec<String> = module_files()
        .values()
        .chain([root().join("src/main.rs")].iter())
        .filter_map(|path| {
            let lines = std::fs::read_to_string(path).unwrap().lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines: {}",
        long.join(", ")
    );
}

/// The repository paths `page` names that lead to source: `src/...` and `crates/.../src/...`.
fn source_paths_named(page: &str) -> BTreeSet<String> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    page.split(|c: char| !path_char(c))
        .filter(|word| word.starts_with("src/") || word.starts_with("crates/"))
        .map(|word| word.trim_end_matches(['.', '/']).to_string())
        .collect()
}

#[test]
fn architecture_page_names_every_stage_folder() {
    let page = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let named = source_paths_named(&page);
    for path in &named {
        let candidate = root().join(path);
        assert!(
            candidate.exists() || candidate.with_extension("rs").exists(),
            "docs/ARCHITECTURE.md names {path}, which does not exist"
        );
    }
    let modules = module_files();
    for module in top_level_order() {
        let file = &modules[&module];
        if file.ends_with("mod.rs") {
            let folder = file.parent().unwrap().strip_prefix(root()).unwrap();
            let folder = folder.to_string_lossy();
            assert!(
                named.contains(folder.as_ref()),
                "docs/ARCHITECTURE.md does not name the folder {folder}/"
            );
        }
    }
}

#[test]
fn git_runs_only_in_the_trust_stage() {
    let spawning: Vec<String> = module_files()
        .into_iter()
        .filter(|(module, _)| module != "trust::git")
        .filter(|(_, path)| {
            let code = code(path);
            code.contains("Command::new(\"git\")")
        })
        .map(|(module, _)| module)
        .collect();
    assert!(
        spawning.is_empty(),
        "git is spawned outside src/trust/git.rs: {spawning:?}"
    );
}

/// The fields of `Config` outside its YAML: what parsing one text derives, never run state.
const CONFIG_DERIVED_FIELDS: [&str; 7] = [
    "dataset",
    "datasets",
    "dataset_name",
    "base_dir",
    "path",
    "workspace",
    "source_sha256",
];

#[test]
fn config_holds_no_run_state() {
    let path = module_files()
        .remove("input::config")
        .expect("the module input::config");
    let text = std::fs::read_to_string(path).unwrap();
    let start = text.find("pub struct Config {").expect("the Config struct");
    let body = &text[start..start + text[start..].find("\n}\n").expect("its end")];
    let lines: Vec<&str> = body.lines().map(str::trim).collect();
    let skipped: Vec<String> = (lines.iter().enumerate())
        .filter(|(_, line)| line.starts_with("#[serde(skip"))
        .filter_map(|(at, _)| {
            let field = lines[at + 1..].iter().find(|l| l.starts_with("pub "))?;
            let name = field.trim_start_matches("pub ").split(':').next()?;
            Some(name.trim().to_string())
        })
        .collect();
    let run_state: Vec<&String> = (skipped.iter())
        .filter(|name| !CONFIG_DERIVED_FIELDS.contains(&name.as_str()))
        .collect();
    assert!(
        run_state.is_empty(),
        "Config carries run state (it belongs in the trust stage's Snapshot): {run_state:?}"
    );
    assert_eq!(skipped.len(), CONFIG_DERIVED_FIELDS.len(), "{skipped:?}");
}

/// The one file that derives whether the gate passed (`judge::verdict::Verdict::passed`).
const VERDICT_FILE: &str = "src/judge/verdict.rs";

/// Whether a line of code gives `passed` a value: `passed =` (not `==` or `=>`) or `passed:` (a
/// field of a struct literal, not a path), `passed` being an identifier (not inside `"passed"`).
fn assigns_passed(line: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '"';
    line.match_indices("passed").any(|(at, name)| {
        let before = line[..at].chars().next_back();
        let after = &line[at + name.len()..];
        let rest = after.trim_start();
        let assigned = rest.starts_with('=') && !rest.starts_with("==") && !rest.starts_with("=>");
        let field = rest.starts_with(':') && !rest.starts_with("::");
        !before.is_some_and(word) && !after.starts_with(word) && (assigned || field)
    })
}

#[test]
fn passed_is_derived_only_by_the_verdict() {
    let mut found = Vec::new();
    for path in module_files().values() {
        if path == &root().join(VERDICT_FILE) {
            continue;
        }
        for line in code(path).lines().filter(|line| assigns_passed(line)) {
            found.push(format!("{}: {}", path.display(), line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "`passed` is derived only in {VERDICT_FILE} (read `Verdict::passed`):\n{}",
        found.join("\n")
    );
    assert!(assigns_passed("    passed: reasons.is_empty(),"));
    assert!(assigns_passed("gate.passed = false;"));
    assert!(!assigns_passed("\"passed\": verdict.passed(),"));
    assert!(!assigns_passed("passed => input.verdict.passed(),"));
}

/// What reaching an engine takes, named in code: the gate depends on the engines' crate (the
/// evidence phase and the commands run queries), so this rule is read, not a dependency edge.
const ENGINE_NAMES: [&str; 5] = [
    "engine::exec",
    "Executor",
    "rusqlite",
    "engine::server",
    "sqlgate_engine",
];

#[test]
fn the_report_runs_no_query() {
    let running: Vec<String> = module_files()
        .into_iter()
        .filter(|(module, _)| module == "report" || module.starts_with("report::"))
        .filter(|(_, path)| {
            let code = code(path);
            ENGINE_NAMES.iter().any(|name| code.contains(name))
        })
        .map(|(module, _)| module)
        .collect();
    assert!(
        running.is_empty(),
        "the report renders what the evidence phase ran (src/evidence/); these modules reach an \
         engine: {running:?}"
    );
}

/// Each engine's name and factory, read from its file in `engine/kinds/`: the name its
/// `fn name` returns and the type implementing `EngineFactory`.
fn engine_kinds() -> Vec<(String, String)> {
    let quoted_after = |code: &str, marker: &str| -> Option<String> {
        let rest = &code[code.find(marker)? + marker.len()..];
        let start = rest.find('"')? + 1;
        Some(rest[start..start + rest[start..].find('"')?].to_string())
    };
    (module_files().into_iter())
        .filter(|(module, _)| module.starts_with("engine::kinds::"))
        .filter_map(|(_, path)| {
            let code = std::fs::read_to_string(path).unwrap();
            let name = quoted_after(&code, "fn name(&self) -> &'static str {")?;
            let factory = code[code.find("impl EngineFactory for ")? + 23..]
                .split_whitespace()
                .next()?
                .to_string();
            Some((name, factory))
        })
        .collect()
}

#[test]
fn nothing_outside_the_engines_files_names_an_engine() {
    let kinds = engine_kinds();
    let names: Vec<&str> = kinds.iter().map(|(name, _)| name.as_str()).collect();
    for expected in ["sqlite", "postgresql", "mysql", "toy"] {
        assert!(names.contains(&expected), "{expected} in {kinds:?}");
    }
    let mut found = Vec::new();
    for (module, path) in module_files() {
        if module.starts_with("engine::kinds") {
            continue;
        }
        let code = code(&path);
        let mut named: Vec<String> = Vec::new();
        if module != "engine::registry" {
            named.extend(kinds.iter().map(|(_, factory)| factory.clone()));
            named.push("engine::kinds".into());
        }
        for name in &names {
            named.extend([format!("== \"{name}\""), format!("\"{name}\" =>")]);
        }
        named.push("EngineKind".into());
        for word in named.iter().filter(|word| code.contains(word.as_str())) {
            found.push(format!("{module}: {word}"));
        }
    }
    assert!(
        found.is_empty(),
        "an engine is named only in its file of engine/kinds/ (and its line in \
         engine::registry::ENGINES); everything else asks the registry's factory:\n{}",
        found.join("\n")
    );
}
