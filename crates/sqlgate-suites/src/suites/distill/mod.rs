//! Test-suite distillation (seed 000, sections 3-4): per schema, the neighbor queries of its gold
//! queries, random databases that satisfy the schema's constraints, and the greedy choice of the
//! databases that distinguish the neighbors (Algorithm 1). The result is a folder in the
//! official suite layout, cached by content hash and extended incrementally.

mod algorithm;
pub mod constraints;
mod generate;
mod query;
pub mod report;
pub mod sampler;
pub mod source;
pub mod store;
pub mod synthesize;
mod values;

pub use query::read_value;
pub use values::person_name_part;

use crate::engine::profile::Profile;
use crate::engine::value::Value;
use crate::input::config::Config;
use crate::input::dataset::{Database, Dataset};
use crate::input::trusted::{BaseFolder, Snapshot};
use crate::sql::schema::Schema;
use crate::suites::gold_cache::GoldCache;
use crate::suites::neighbors::{normal_form, ColumnFacts, Conditions};
use crate::suites::suite::Suite;
use crate::util::error::InputError;
use crate::util::state::StateDir;
use algorithm::{Context, Target};
use constraints::Constraints;
use generate::Generator;
use query::Timed;
use rayon::prelude::*;
use report::{Reuse, SchemaReport, SuiteReport};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use store::{GoldRecord, KeptFile, Manifest, OriginalFile};

/// Version of the generator and algorithm; part of the cache key, bumped whenever a change
/// would give different databases for the same seed.
pub const GENERATOR_VERSION: &str = "sqlgate-distill-12";

/// Distillation settings (`suite.distill`).
#[derive(Debug, Clone)]
pub struct Options {
    /// Seed of every random choice.
    pub seed: u64,
    /// Random databases sampled per schema and run.
    pub max_random_dbs: u64,
    /// Inclusive bounds on the rows of each generated table.
    pub rows: (usize, usize),
    /// Limit per gold or neighbor query.
    pub timeout: Duration,
    /// Which manifests the suite is checked against.
    pub trust: SuiteTrust,
}

/// Which manifests a suite is checked against: the folder's own outside a pull-request run; in
/// one, the base commit's, or a manifest in the folder (restored by `actions/cache`, say) whose
/// digest the base commit's baseline recorded. Any other manifest is never read.
#[derive(Debug, Clone, Default)]
pub struct SuiteTrust {
    /// The suite folder's manifests and gold cache as the base commit of a pull-request run has
    /// them.
    pub base: Option<BaseFolder>,
    /// Digests of manifests the base commit's baseline recorded ([`store::manifest_digest`]).
    pub recorded: std::collections::HashSet<String>,
}

/// Where neighbor queries and gold constants come from.
pub trait NeighborSource: Sync {
    /// Neighbor queries of a gold query: close variants that usually mean something else.
    fn neighbors(&self, gold: &str, schema: &Schema, seed: u64) -> Vec<String>;
    /// The constants of a gold query, to plant in generated databases.
    fn constants(&self, gold: &str) -> Vec<Value>;
    /// What a gold query's conditions ask of the data (constants per compared column, HAVING
    /// group sizes), to generate databases where it returns rows; a source that cannot tell
    /// reports none.
    fn conditions(&self, _gold: &str) -> Conditions {
        Conditions::default()
    }
}

/// Longest a gold or neighbor query may run during distillation: generated databases are
/// small, so only a runaway neighbor reaches it.
const QUERY_LIMIT: Duration = Duration::from_secs(2);

/// The distillation options of a config (`suite.distill`, `execution.timeout_ms`), with the
/// manifests it trusts (see [`SuiteTrust`]) from the run's trusted `snapshot`.
pub fn options(config: &Config, snapshot: &Snapshot) -> Result<Options, InputError> {
    let distill = &config.suite.distill;
    let base = (config.suite.path.as_deref()).and_then(|folder| snapshot.base_folder(folder));
    let trust = SuiteTrust {
        recorded: match &base {
            Some(_) => recorded_manifests(config, snapshot)?,
            None => Default::default(),
        },
        base,
    };
    Ok(Options {
        seed: distill.seed,
        max_random_dbs: distill.max_random_dbs,
        rows: (distill.rows[0], distill.rows[1]),
        timeout: Duration::from_millis(config.execution.timeout_ms).min(QUERY_LIMIT),
        trust,
    })
}

/// The manifest digests the run's baseline records (the base commit's in a pull-request run).
fn recorded_manifests(
    config: &Config,
    snapshot: &Snapshot,
) -> Result<std::collections::HashSet<String>, InputError> {
    #[derive(serde::Deserialize)]
    struct Recorded {
        #[serde(default)]
        suite_manifests: Vec<String>,
    }
    let Some(section) = &config.baseline else {
        return Ok(Default::default());
    };
    let Some(bytes) = snapshot.read(&section.path)?.bytes else {
        return Ok(Default::default());
    };
    let recorded: Recorded = serde_json::from_slice(&bytes)
        .map_err(|e| InputError::malformed(&section.path, "suite_manifests", e.to_string()))?;
    Ok(recorded.suite_manifests.into_iter().collect())
}

/// Distills (or reuses) the configured suite (`suite.kind: distilled`) and opens it, with the
/// cache of its gold results; `snapshot` holds the base's manifests in a pull-request run. The
/// cache trusts no entry: the caller says which the run may use ([`GoldCache::with_trust`]).
pub fn open_configured(
    (config, snapshot): (&Config, &Snapshot),
    dataset: &Dataset,
    profile: &Profile,
    source: &dyn NeighborSource,
) -> Result<(Suite, GoldCache, SuiteReport), InputError> {
    let root = config
        .suite
        .path
        .as_deref()
        .ok_or_else(|| InputError::Config {
            path: config.path.clone(),
            message: "`suite.path` must name the cache folder when `suite.kind` is `distilled`"
                .into(),
        })?;
    let options = options(config, snapshot)?;
    let report = distill(dataset, profile, &options, root, source)?;
    // Items whose original database is absent are skipped by every metric, TS included, so
    // that a TS-correct prediction is always EX-correct; their suites are still distilled.
    // The suite is exactly the files the (checked) manifests list, with their digests.
    let listed = listed_files(&report, root, |db_id| {
        dataset.databases[db_id].path.is_some()
    });
    let suite = suite_of(&listed);
    let digests = listed.into_iter().flat_map(|(_, files)| files).collect();
    let cache = GoldCache::open(root, digests, options.trust.base.as_ref())?;
    Ok((suite, cache, report))
}

/// The suite of every schema a distillation `report` (below `root`) covers, those whose
/// original database is absent included: what the gold audit reads, where TS leaves them out
/// ([`open_configured`]).
pub fn every_schema(report: &SuiteReport, root: &Path) -> Suite {
    suite_of(&listed_files(report, root, |_| true))
}

/// The files of the suite databases of the schemas `keep` accepts, with their digests.
fn listed_files<'a>(
    report: &'a SuiteReport,
    root: &Path,
    keep: impl Fn(&str) -> bool,
) -> Vec<(&'a str, Vec<(PathBuf, String)>)> {
    (report.schemas.iter())
        .filter(|s| keep(&s.db_id))
        .map(|s| {
            let files = s.manifest.files().map(|(file, _, sha256)| {
                (
                    root.join(store::relative(&s.db_id, file)),
                    sha256.to_string(),
                )
            });
            (s.db_id.as_str(), files.collect())
        })
        .collect()
}

fn suite_of(listed: &[(&str, Vec<(PathBuf, String)>)]) -> Suite {
    Suite::listed(listed.iter().map(|(db_id, files)| {
        let paths = files.iter().map(|(path, _)| path.clone()).collect();
        (db_id.to_string(), paths)
    }))
}

/// Distills (or reuses) the suite of every database of `dataset` below `root`.
pub fn distill(
    dataset: &Dataset,
    profile: &Profile,
    options: &Options,
    root: &Path,
    source: &dyn NeighborSource,
) -> Result<SuiteReport, InputError> {
    let started = Instant::now();
    let mut golds: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for item in &dataset.items {
        golds.entry(&item.db_id).or_default().push(item.sql.clone());
    }
    for list in golds.values_mut() {
        list.sort();
        list.dedup();
    }
    // A database with neither a file nor a tables.json entry has no known schema; its items are
    // skipped (`dataset.skip_missing_databases`) and it gets no suite.
    let schemas: Vec<(&Database, Vec<String>)> = golds
        .into_iter()
        .map(|(db_id, list)| (&dataset.databases[db_id], list))
        .filter(|(database, _)| database.path.is_some() || database.tables_entry.is_some())
        .collect();
    let distilled = schemas
        .into_par_iter()
        .map(|(database, list)| distill_schema(database, list, profile, options, root, source))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SuiteReport::new(
        dataset,
        distilled,
        started.elapsed().as_secs_f64(),
    ))
}

/// A schema's constraints, value profiles and original file, when there is one.
struct Loaded {
    constraints: Constraints,
    profiles: values::Profiles,
    /// Whole original rows per table (none without an original database).
    rows: Vec<Vec<Vec<Value>>>,
    original: Option<(Timed, Vec<u8>)>,
}

fn load(database: &Database) -> Result<Loaded, InputError> {
    if let Some(path) = &database.path {
        let fail = |e: rusqlite::Error| {
            InputError::malformed(path, "schema", format!("cannot read constraints: {e}"))
        };
        let conn = Timed::open(path).map_err(fail)?;
        let (constraints, profiles, rows) = conn
            .within(crate::util::sqlite::METADATA_BUDGET, |conn| {
                let constraints = Constraints::from_connection(conn)?;
                let profiles = values::learn(conn, &constraints)?;
                let rows = values::sample_rows(conn, &constraints)?;
                Ok((constraints, profiles, rows))
            })
            .map_err(fail)?;
        let bytes = crate::util::error::read_bounded(path, crate::util::error::MAX_DATABASE_BYTES)?;
        return Ok(Loaded {
            constraints,
            profiles,
            rows,
            original: Some((conn, bytes)),
        });
    }
    let Some(entry) = &database.tables_entry else {
        return Err(InputError::malformed(
            Path::new(&database.db_id),
            "suite",
            "no database file and no tables.json entry: cannot distill a suite for it \
             (set `dataset.tables`)",
        ));
    };
    let constraints = Constraints::from_tables_json(entry);
    let profiles = values::empty(&constraints);
    Ok(Loaded {
        rows: vec![Vec::new(); constraints.tables.len()],
        constraints,
        profiles,
        original: None,
    })
}

fn base_key(loaded: &Loaded, profile: &Profile, options: &Options) -> String {
    let settings = format!(
        "{GENERATOR_VERSION}|{}|{}|{:?}|{:?}",
        options.seed,
        options.max_random_dbs,
        options.rows,
        profile.config()
    );
    let structure = format!("{:?}", loaded.constraints);
    let original: &[u8] = loaded.original.as_ref().map_or(&[], |(_, b)| b);
    crate::util::digest::content_hash([settings.as_bytes(), structure.as_bytes(), original])
}

fn distill_schema(
    database: &Database,
    golds: Vec<String>,
    profile: &Profile,
    options: &Options,
    root: &Path,
    source: &dyn NeighborSource,
) -> Result<SchemaReport, InputError> {
    let started = Instant::now();
    let db_id = database.db_id.as_str();
    let state = StateDir::new(root);
    state.check_folder(Path::new(db_id))?;
    let folder = state.path(Path::new(db_id));
    let loaded = load(database)?;
    let base = base_key(&loaded, profile, options);
    let key = crate::util::digest::content_hash(
        std::iter::once(base.as_bytes()).chain(golds.iter().map(|g| g.as_bytes())),
    );
    let previous = usable_previous(&state, db_id, &base, &options.trust)?;
    if let Some(manifest) = previous.as_ref().filter(|m| m.key == key) {
        return Ok(SchemaReport::from_manifest(
            db_id,
            manifest.clone(),
            Reuse::Cached,
            started.elapsed().as_secs_f64(),
        ));
    }
    crate::util::log::note(&format!(
        "distilling the test suite of `{db_id}` into {} ({})",
        folder.display(),
        match (&previous, &options.trust.base) {
            (Some(_), _) => "extending the cached suite for new gold queries",
            (None, Some(_)) => "the base commit holds no suite for these inputs",
            (None, None) => "not cached yet",
        }
    ));
    let constants: Vec<(String, Vec<Value>, Conditions)> = golds
        .iter()
        .map(|gold| {
            (
                gold.clone(),
                source.constants(gold),
                source.conditions(gold),
            )
        })
        .collect();
    let planted = values::Planted::new(&loaded.constraints, &constants);
    let context = Context {
        generator: Generator {
            constraints: &loaded.constraints,
            profiles: &loaded.profiles,
            originals: &loaded.rows,
            planted: &planted,
            rows: options.rows,
        },
        profile,
        timeout: options.timeout,
        seed: options.seed,
    };
    let schema = database.schema.as_deref().cloned().unwrap_or_default();
    let facts = loaded.constraints.column_facts();
    let mut targets = targets(&golds, &schema, &facts, profile, options.seed, source);
    let generated;
    let reference = match &loaded.original {
        Some((conn, _)) => conn,
        None => {
            generated = generated_reference(&context, &database.db_id)?;
            &generated
        }
    };
    context.keep_executable(reference, &mut targets);
    if loaded.original.is_some() {
        let findings = context.findings(reference, &targets);
        Context::absorb(&mut targets, &findings);
    }
    let (mut kept_files, first) = match &previous {
        Some(manifest) => (manifest.kept.clone(), manifest.examined),
        None => (Vec::new(), 0),
    };
    for file in &kept_files {
        let conn = open_kept(&folder.join(&file.file))?;
        let findings = context.findings(&conn, &targets);
        Context::absorb(&mut targets, &findings);
    }
    let (kept, examined) = context.sample(&mut targets, first, first + options.max_random_dbs);
    let original = match &loaded.original {
        Some((conn, bytes)) => {
            let file = format!("{db_id}.sqlite");
            store::write_file(&state, db_id, &file, bytes)?;
            let rows = context
                .generator
                .count_rows(conn.conn())
                .map_err(|e| InputError::malformed(&folder.join(&file), "suite", e.to_string()))?;
            Some(OriginalFile {
                file,
                rows,
                bytes: bytes.len() as u64,
                sha256: sha256(bytes),
            })
        }
        None => None,
    };
    for database_kept in kept {
        let file = format!("{db_id}_r{:06}.sqlite", database_kept.candidate);
        store::write_file(&state, db_id, &file, &database_kept.bytes)?;
        kept_files.push(KeptFile {
            file,
            candidate: database_kept.candidate,
            rows: database_kept.rows,
            bytes: database_kept.bytes.len() as u64,
            sha256: sha256(&database_kept.bytes),
            natural: database_kept.natural,
        });
    }
    let manifest = Manifest {
        key,
        base_key: base,
        examined,
        original,
        kept: kept_files,
        golds: targets.iter().map(record).collect(),
    };
    store::write_manifest(&state, db_id, &manifest)?;
    store::remove_unlisted(&state, db_id, &manifest)?;
    let reuse = if previous.is_some() {
        Reuse::Extended
    } else {
        Reuse::Fresh
    };
    Ok(SchemaReport::from_manifest(
        &database.db_id,
        manifest,
        reuse,
        started.elapsed().as_secs_f64(),
    ))
}

/// The manifest a schema's suite is reused or extended from: the trusted one (the base
/// commit's in a pull-request run) when it was made for the same schema and settings, after
/// its files are checked against it. A missing file (an interrupted run, a suite the base
/// does not commit whole) makes the suite be rebuilt, and says so; a file whose content differs
/// is an error naming it.
fn usable_previous(
    state: &StateDir,
    db_id: &str,
    base_key: &str,
    trust: &SuiteTrust,
) -> Result<Option<Manifest>, InputError> {
    let Some((manifest, source)) =
        store::read_manifest(state, db_id, trust)?.filter(|(m, _)| m.base_key == base_key)
    else {
        return Ok(None);
    };
    match store::verify(state, db_id, &manifest, &source)? {
        store::Check::Complete => Ok(Some(manifest)),
        store::Check::Missing(file) => {
            crate::util::log::note(&format!(
                "the suite of `{db_id}` lacks {file}, which {source} lists; distilling it again"
            ));
            Ok(None)
        }
    }
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    crate::util::digest::hex(&sha2::Sha256::digest(bytes))
}

/// The distinct gold queries with their (prepared, deduplicated) neighbors. A neighbor whose
/// normal form is the gold's (or an earlier neighbor's) is provably equivalent to it (see
/// [`crate::suites::neighbors::normal_form`]): no database can distinguish it, so it is not one.
fn targets(
    golds: &[String],
    schema: &Schema,
    facts: &ColumnFacts,
    profile: &Profile,
    seed: u64,
    source: &dyn NeighborSource,
) -> Vec<Target> {
    golds
        .iter()
        .map(|gold| {
            let prepared = profile.prepare_gold(gold);
            let mut seen = HashSet::from([normal_form(&prepared.sql, facts)]);
            let mut neighbors: Vec<String> = Vec::new();
            for neighbor in source.neighbors(gold, schema, seed) {
                let neighbor = profile.prepare_prediction(&neighbor);
                if seen.insert(normal_form(&neighbor, facts)) {
                    neighbors.push(neighbor);
                }
            }
            Target {
                gold: gold.clone(),
                prepared,
                distinguished: vec![false; neighbors.len()],
                neighbors,
                nonempty: false,
                runs: true,
            }
        })
        .collect()
}

/// Without an original database, neighbors must execute on a generated one.
fn generated_reference(context: &Context<'_>, db_id: &str) -> Result<Timed, InputError> {
    context
        .generator
        .generate(context.candidate_seed(u64::MAX), generate::Phase::Natural)
        .and_then(Timed::new)
        .map_err(|e| {
            InputError::malformed(
                Path::new(db_id),
                "suite",
                format!("cannot create a database from tables.json: {e}"),
            )
        })
}

fn open_kept(path: &Path) -> Result<Timed, InputError> {
    Timed::open(path).map_err(|e| InputError::malformed(path, "suite", format!("cannot open: {e}")))
}

fn record(target: &Target) -> GoldRecord {
    GoldRecord {
        gold: target.gold.clone(),
        runs: target.runs,
        neighbors: target.neighbors.len(),
        undistinguished: target
            .neighbors
            .iter()
            .zip(&target.distinguished)
            .filter(|(_, d)| !**d)
            .map(|(n, _)| n.clone())
            .collect(),
        nonempty: target.nonempty,
    }
}
