//! Red team round 31 (issue 44): classes 1, 2 and 4 first (paths the base config names, the
//! repair path, shards / merge / baseline), after round 27's fixes to
//! `trust::lifecycle::take_prediction_formats` and `input::spider2_dbt::checked_answer`. Every
//! test asserts the SECURE outcome and runs its control (the same regressing pull request
//! without the lever, which must exit 1): a failing test is a win. Report:
//! `/work/notes/redteam31.md`.

/// Class 1 (paths the base config names, changed in the pull request's tree) on Spider 2.0-DBT.
/// The base config reads `sub/results_metadata.jsonl` (`format: spider2-dbt`); its answers are
/// `<submission>/<instance>/<answer_or_path>`, the submission being the file's folder
/// (`input::spider2_dbt::parse_results`). `answer_file` refuses an answer whose canonical path
/// is outside `canonical(submission)/<instance>`, but the submission folder itself is
/// canonicalised too: when `sub` is a link to the gold folder, `gold/<i>/db.duckdb` is "inside".
/// The lever: the pull request replaces the folder `sub` by a link to `gold` and adds
/// `gold/results_metadata.jsonl` naming each instance's `db.duckdb` (the gold file itself).
/// The control: `i1` answered wrong without it.
pub(crate) mod spider2_dbt_submission_folder_linked_to_the_gold {
    use crate::common::{self, repo};
    use crate::spider2_dbt_gate::{gated, write_answer, INSTANCES, WRONG};
    use serde_json::json;
    use std::path::Path;

    /// The pull request (`i1` answered wrong, then `lever`) judged against the base.
    pub(crate) fn judged(lever: impl FnOnce(&Path)) -> (Option<i32>, String) {
        let (_dir, root, base) = gated();
        common::git(&root, &["checkout", "-qb", "pr"]);
        write_answer(&root, "i1", WRONG);
        lever(&root);
        repo::commit_all(&root, "pull request");
        let output = crate::common::repo::judged(&root, &base, &[]);
        (output.status.code(), common::text(&output))
    }

    /// `gold/results_metadata.jsonl` naming each instance's gold file.
    pub(crate) fn results_naming_the_gold(root: &Path) {
        let lines: String = INSTANCES
            .iter()
            .map(|instance| {
                let line = json!({"instance_id": instance, "answer_type": "file",
                    "answer_or_path": "db.duckdb"});
                format!("{line}\n")
            })
            .collect();
        std::fs::write(root.join("gold/results_metadata.jsonl"), lines).unwrap();
    }

    /// The lever: `sub` a link to `gold`, which holds a results file naming the gold files.
    pub(super) fn submission_is_the_gold(root: &Path) {
        std::fs::remove_dir_all(root.join("sub")).unwrap();
        std::os::unix::fs::symlink("gold", root.join("sub")).unwrap();
        results_naming_the_gold(root);
    }

    /// The lever without the extra file in `gold/`: `sub` a real folder whose results file sits
    /// beside a link `sub/i1` -> `../gold/i1` (the instance folder linked, not the submission).
    fn instance_folder_is_the_gold(root: &Path) {
        let folder = root.join("sub/i1");
        std::fs::remove_dir_all(&folder).unwrap();
        std::os::unix::fs::symlink("../gold/i1", &folder).unwrap();
        let text = std::fs::read_to_string(root.join("sub/results_metadata.jsonl")).unwrap();
        let text = text.replacen("\"out.duckdb\"", "\"db.duckdb\"", 1);
        std::fs::write(root.join("sub/results_metadata.jsonl"), text).unwrap();
    }

    #[test]
    fn control_a_wrong_answer_fails_the_gate() {
        let (code, said) = judged(|_| {});
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_submission_folder_linked_to_the_gold_does_not_pass() {
        let (code, said) = judged(submission_is_the_gold);
        assert_ne!(
            code,
            Some(0),
            "`sub` linked to `gold` passed the gate: {said}"
        );
    }

    #[test]
    fn an_instance_folder_linked_to_the_gold_does_not_pass() {
        let (code, said) = judged(instance_folder_is_the_gold);
        assert_ne!(
            code,
            Some(0),
            "`sub/i1` linked to `gold/i1` passed the gate: {said}"
        );
    }
}

/// Class 1 on Spider 2.0-DBT again, [`spider2_dbt_submission_folder_linked_to_the_gold`]'s
/// set-up with the submission folder left a real folder: the answer's `answer_or_path` itself
/// leaves the instance folder, either as an absolute path to the gold file (`Path::join` of an
/// absolute path is that path) or through a link the pull request commits inside the instance
/// folder (`sub/i1/g` -> `../../gold/i1`, answer `g/db.duckdb`). `answer_file` compares the
/// canonical answer with `canonical(sub)/i1`. The control: `i1` answered wrong without either.
mod spider2_dbt_answer_path_out_of_its_folder {
    use crate::common::{self, repo};
    use crate::spider2_dbt_gate::{gated, write_answer, WRONG};
    use std::path::Path;

    /// The pull request (`i1` answered wrong, then `lever`) judged against the base.
    fn judged(lever: impl FnOnce(&Path)) -> (Option<i32>, String) {
        let (_dir, root, base) = gated();
        common::git(&root, &["checkout", "-qb", "pr"]);
        write_answer(&root, "i1", WRONG);
        lever(&root);
        repo::commit_all(&root, "pull request");
        let output = crate::common::repo::judged(&root, &base, &[]);
        (output.status.code(), common::text(&output))
    }

    /// `i1`'s `answer_or_path` replaced by `answer` in the results file.
    fn answer_of_i1(root: &Path, answer: &str) {
        let results = root.join("sub/results_metadata.jsonl");
        let text = std::fs::read_to_string(&results).unwrap();
        let named = serde_json::to_string(answer).unwrap();
        std::fs::write(&results, text.replacen("\"out.duckdb\"", &named, 1)).unwrap();
    }

    #[test]
    fn control_a_wrong_answer_fails_the_gate() {
        let (code, said) = judged(|_| {});
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn an_absolute_answer_path_to_the_gold_does_not_pass() {
        let (code, said) = judged(|root| {
            let gold = root.join("gold/i1/db.duckdb");
            answer_of_i1(root, gold.to_str().unwrap());
        });
        assert_ne!(code, Some(0), "an absolute gold path passed: {said}");
    }

    #[test]
    fn a_link_inside_the_instance_folder_to_the_gold_does_not_pass() {
        let (code, said) = judged(|root| {
            std::os::unix::fs::symlink("../../gold/i1", root.join("sub/i1/g")).unwrap();
            answer_of_i1(root, "g/db.duckdb");
        });
        assert_ne!(code, Some(0), "a linked folder in `sub/i1` passed: {said}");
    }
}

/// Class 2 (the repair path) on Spider 2.0-DBT, [`spider2_dbt_submission_folder_linked_to_the_gold`]'s
/// lever: a direct push breaks `main`'s config (an unknown key), and the pull request repairing
/// it (the config's text restored) answers `i1` wrong. In a repair the pull request's config
/// runs, held to the prediction files and dataset its baseline recorded (`trust::repair`); the
/// lever: `sub` a link to `gold`, which gains a `results_metadata.jsonl` naming the gold files.
/// The control: the same repair and regression without it. Contained: in a repair any change
/// to the dataset's files is refused (exit 2), and the lever needs one (the results file in
/// `gold/`).
mod spider2_dbt_repair_submission_linked_to_the_gold {
    use super::spider2_dbt_submission_folder_linked_to_the_gold::submission_is_the_gold;
    use crate::common::{self, repo};
    use crate::spider2_dbt_gate::{gated, write_answer, WRONG};
    use std::path::Path;

    /// The repair (config restored, `i1` answered wrong, then `lever`) judged against the
    /// broken base.
    fn judged(lever: impl FnOnce(&Path)) -> (Option<i32>, String) {
        let (_dir, root, _) = gated();
        let config = root.join("sqlgate.yml");
        let good = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, format!("{good}no_such_key: 1\n")).unwrap();
        let base = repo::commit_base(&root, "a direct push breaks the config", "pr");
        std::fs::write(&config, good).unwrap();
        write_answer(&root, "i1", WRONG);
        lever(&root);
        repo::commit_all(&root, "pull request");
        let output = crate::common::repo::judged(&root, &base, &[]);
        (output.status.code(), common::text(&output))
    }

    #[test]
    fn control_a_repair_with_a_wrong_answer_fails_the_gate() {
        let (code, said) = judged(|_| {});
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_repair_with_the_submission_linked_to_the_gold_does_not_pass() {
        let (code, said) = judged(submission_is_the_gold);
        assert_ne!(
            code,
            Some(0),
            "the repair passed with `sub` -> `gold`: {said}"
        );
    }
}

/// Class 1 (a prediction format the pull request proposes, `trust::lifecycle::
/// take_prediction_formats`, after round 27's fix) through a `datasets:` config: `main` gates a
/// Spider 2.0-DBT entry `dbt` (its baseline made with that config). The fix checks a proposed
/// format with `kind_accepts` over `Config::dataset_configs`; the lever is round 27's, moved into
/// the entry: the pull request's config (which loads) names an entry `dbt` of `dataset.kind:
/// spider` reading the same file with `format: jsonl`, whose lines name each instance's gold
/// `.duckdb` as the answer text. The control: `i1` answered wrong without it.
mod spider2_dbt_datasets_entry_format {
    use crate::common::{self, repo};
    use crate::spider2_dbt_gate::{gated, write_answer, INSTANCES, WRONG};
    use serde_json::json;
    use std::path::Path;

    /// `main`'s config made a `datasets:` config (one entry `dbt`) and its baseline remade;
    /// then the pull request (`i1` answered wrong, then `lever`) judged against it.
    fn judged(lever: impl FnOnce(&Path)) -> (Option<i32>, String) {
        let (_dir, root, _) = gated();
        std::fs::write(
            root.join("sqlgate.yml"),
            "datasets:\n  - name: dbt\n    dataset: { kind: spider2-dbt, gold: gold/spider2_eval.jsonl, databases: gold, difficulty: none, engine: { kind: duckdb } }\n    predictions: [{ name: agent, path: sub/results_metadata.jsonl, format: spider2-dbt }]\n\
             metrics: [duckdb_match]\ncompare: { profile: spider2 }\n\
             baseline: { path: baseline.json }\ngate: { max_drop_points: 0.0 }\n\
             report: { output: report.md }\n",
        )
        .unwrap();
        std::fs::remove_file(root.join("baseline.json")).unwrap();
        repo::commit_all(&root, "datasets");
        let base = repo::commit_baseline(&root, "baseline of the datasets config");
        common::git(&root, &["checkout", "-qb", "pr"]);
        write_answer(&root, "i1", WRONG);
        lever(&root);
        repo::commit_all(&root, "pull request");
        let output = crate::common::repo::judged(&root, &base, &[]);
        (output.status.code(), common::text(&output))
    }

    /// The lever: a loading config whose entry `dbt` is a `spider` dataset reading the entry's
    /// file as `jsonl`, the file naming the gold files.
    fn gold_as_the_answer(root: &Path) {
        std::fs::create_dir_all(root.join("pr/db/one")).unwrap();
        let conn = rusqlite::Connection::open(root.join("pr/db/one/one.sqlite")).unwrap();
        conn.execute_batch("CREATE TABLE x (a INTEGER); INSERT INTO x VALUES (1);")
            .unwrap();
        drop(conn);
        std::fs::write(root.join("pr/gold.sql"), "SELECT a FROM x\tone\n").unwrap();
        std::fs::write(
            root.join("sqlgate.yml"),
            "datasets:\n  - name: dbt\n    dataset: { kind: spider, gold: pr/gold.sql, databases: pr/db, difficulty: none }\n    predictions: [{ name: agent, path: sub/results_metadata.jsonl, format: jsonl }]\n\
             metrics: [ex]\nbaseline: { path: baseline.json }\ngate: { max_drop_points: 0.0 }\n\
             report: { output: report.md }\n",
        )
        .unwrap();
        let zeros = "0".repeat(64);
        let lines: String = (INSTANCES.iter().enumerate())
            .map(|(index, instance)| {
                let gold = root.join(format!("gold/{instance}/db.duckdb"));
                let sql = format!("sha256:{zeros} {}", gold.display());
                format!("{}\n", json!({"id": index, "sql": sql}))
            })
            .collect();
        std::fs::write(root.join("sub/results_metadata.jsonl"), lines).unwrap();
    }

    #[test]
    fn control_a_wrong_answer_fails_the_gate() {
        let (code, said) = judged(|_| {});
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_format_proposed_in_a_datasets_entry_does_not_pass() {
        let (code, said) = judged(gold_as_the_answer);
        assert_ne!(code, Some(0), "the entry's proposed format passed: {said}");
    }
}

/// Class 1, [`spider2_dbt_submission_folder_linked_to_the_gold`]'s lever aimed outside the
/// workspace (reads outside it): `sub` a link to a folder outside the repository (here one the
/// test makes beside it, standing for a runner's folder holding a `results_metadata.jsonl` and
/// answers the pull request did not commit). The workspace rule (every path the config names
/// resolves inside the workspace after following links) should refuse the prediction file.
/// The control: `i1` answered wrong without it.
mod spider2_dbt_submission_folder_outside_the_workspace {
    use crate::common::{self, repo};
    use crate::spider2_dbt_gate::{gated, write_answer, GOLD, INSTANCES, WRONG};
    use serde_json::json;
    use std::path::Path;

    /// The pull request (`i1` answered wrong, then `lever` with the folder outside) judged.
    fn judged(lever: impl FnOnce(&Path, &Path)) -> (Option<i32>, String) {
        let (dir, root, base) = gated();
        common::git(&root, &["checkout", "-qb", "pr"]);
        write_answer(&root, "i1", WRONG);
        lever(&root, &dir.path().join("outside"));
        repo::commit_all(&root, "pull request");
        let output = crate::common::repo::judged(&root, &base, &[]);
        (output.status.code(), common::text(&output))
    }

    /// `outside` holds right answers and a results file; `sub` links to it.
    fn submission_outside(root: &Path, outside: &Path) {
        let mut results = String::new();
        for instance in INSTANCES {
            let file = outside.join(format!("{instance}/out.duckdb"));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            sqlgate::engine::duckdb::tables::write_script(&file, GOLD).unwrap();
            let line = json!({"instance_id": instance, "answer_type": "file",
                "answer_or_path": "out.duckdb"});
            results += &format!("{line}\n");
        }
        std::fs::write(outside.join("results_metadata.jsonl"), results).unwrap();
        std::fs::remove_dir_all(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(outside, root.join("sub")).unwrap();
    }

    #[test]
    fn control_a_wrong_answer_fails_the_gate() {
        let (code, said) = judged(|_, _| {});
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_submission_folder_linked_outside_the_workspace_is_refused() {
        let (code, said) = judged(submission_outside);
        assert_eq!(code, Some(2), "`sub` linked outside the workspace: {said}");
    }
}

/// Class 2 (the repair path) on Spider 2.0-DBT: `main` gates with `compare.profile:
/// spider2-sound` (its baseline made so), a direct push breaks the config, and the pull request
/// repairing it answers `i1` with the gold's values scrambled across rows (official
/// `duckdb_match` 1, sound 0). The lever: the repairing config names `compare.profile: spider2`
/// (the official comparison) instead. The repair is held to what the base's baseline recorded
/// (`trust::repair::govern`: datasets, overrides, suites, prediction files; the gate settings
/// in `trust::lifecycle`); is the comparison one of them? The control: the same repair keeping
/// `spider2-sound`.
mod spider2_dbt_repair_official_profile {
    use crate::common::{self, repo};
    use crate::spider2_dbt_gate::{gated, write_answer};

    /// The gold's values with the columns scrambled across rows.
    const SCRAMBLED: &str =
        "CREATE TABLE t (a INTEGER, b INTEGER); INSERT INTO t VALUES (1, 4), (3, 2);";

    /// `main` on `spider2-sound` with its baseline, then broken by a direct push; the repair
    /// (config restored with `profile`, `i1` scrambled) judged against it.
    fn judged(profile: &str) -> (Option<i32>, String) {
        let (_dir, root, _) = gated();
        let config = root.join("sqlgate.yml");
        let official = std::fs::read_to_string(&config).unwrap();
        let sound = official.replace("profile: spider2 ", "profile: spider2-sound ");
        assert_ne!(sound, official);
        std::fs::write(&config, &sound).unwrap();
        std::fs::remove_file(root.join("baseline.json")).unwrap();
        repo::commit_all(&root, "sound profile");
        repo::commit_baseline(&root, "baseline on the sound profile");
        std::fs::write(&config, format!("{sound}no_such_key: 1\n")).unwrap();
        let base = repo::commit_base(&root, "a direct push breaks the config", "pr");
        let repaired = sound.replace("profile: spider2-sound ", &format!("profile: {profile} "));
        std::fs::write(&config, repaired).unwrap();
        write_answer(&root, "i1", SCRAMBLED);
        repo::commit_all(&root, "pull request");
        let output = crate::common::repo::judged(&root, &base, &[]);
        (output.status.code(), common::text(&output))
    }

    #[test]
    fn control_a_repair_on_the_sound_profile_fails_the_gate() {
        let (code, said) = judged("spider2-sound");
        assert_eq!(code, Some(1), "{said}");
    }

    #[test]
    fn a_repair_on_the_official_profile_does_not_pass() {
        let (code, said) = judged("spider2");
        assert_ne!(code, Some(0), "the repair on `spider2` passed: {said}");
    }
}
