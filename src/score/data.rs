//! The server's data as a trusted input: before any query of a run on a server engine, the
//! digests of the server's tables ([`crate::engine::server::data_digest`]) must equal those the
//! trusted baseline recorded (the base commit's in a pull-request run), so a run is never judged
//! on data a pull request loaded; and the digests taken again when scoring ends must equal those
//! of the start, so a run is never judged on data changed while it read them. SQLite database files are covered by the dataset fingerprint
//! and by the refusal of dataset files a pull request changes.

use crate::engine::server::data_digest::{covers_settings, describe, differences, DataDigests};
use crate::input::config::Config;
use crate::input::trusted::Snapshot;
use crate::util::error::InputError;
use serde::Deserialize;

/// Checks the server's digests `now` against the trusted baseline's before scoring. A
/// pull-request run on a server needs a baseline that records them; a run outside a pull
/// request without them gets a note (returned) asking to regenerate the baseline. `now` is
/// `None` on SQLite: nothing to check.
pub fn check(
    (config, snapshot): (&Config, &Snapshot),
    now: Option<&DataDigests>,
) -> Result<Vec<String>, InputError> {
    let Some(now) = now else {
        return Ok(Vec::new());
    };
    let pull_request = snapshot.is_pull_request();
    let Some((path, recorded)) = recorded(config, snapshot)? else {
        return match pull_request {
            true => Err(refusal(config, "the base commit has no baseline".into())),
            false => Ok(Vec::new()),
        };
    };
    let recorded = match recorded {
        Some(recorded) if covers_settings(&recorded) => recorded,
        Some(_) => return unvouched(config, older(&path), pull_request),
        None => return unvouched(config, none_recorded(&path), pull_request),
    };
    let found = differences(&recorded, now);
    if found.is_empty() {
        return Ok(Vec::new());
    }
    Err(InputError::Config {
        path: config.path.clone(),
        message: format!(
            "`dataset.engine`: the data on the server are not those the {}baseline {} was made on: \
             {}. A run is judged only on the data the baseline vouches for: load the base \
             commit's data (docs/ACTION.md) or, on the default branch, record the new data with \
             `sqlgate baseline update`",
            if pull_request { "base commit's " } else { "" },
            path.display(),
            describe(&found)
        ),
    })
}

/// Checks that the server's data digests taken when scoring ended (`after`) equal those taken
/// at start-up (`before`): a row written, moved or removed while the run read them (by an
/// event, a session the server's preparation left behind) would have decided verdicts on data
/// nothing vouches for, so the run fails closed, naming each table.
pub fn unchanged(
    config: &Config,
    before: &DataDigests,
    after: Option<&DataDigests>,
) -> Result<(), InputError> {
    let empty = DataDigests::new();
    let found = differences(before, after.unwrap_or(&empty));
    if found.is_empty() {
        return Ok(());
    }
    Err(InputError::Config {
        path: config.path.clone(),
        message: format!(
            "`dataset.engine`: the data on the server changed while the run read them: {}. \
             The verdicts may have been read from other data than the digests taken at start-up \
             vouch for; nothing may write the benchmark's databases during a run \
             (docs/SECURITY.md)",
            describe(&found)
        ),
    })
}

/// The error of a server whose data could not be held and digested at start-up (`message`,
/// the engine's), naming the key and carrying no secret.
pub fn hold_failed(config: &Config, message: &str) -> InputError {
    InputError::Config {
        path: config.path.clone(),
        message: crate::util::scrub::scrub_cut(
            &format!("`dataset.engine`: cannot compute the data digests: {message}"),
            1500,
        ),
    }
}

/// The error of a run whose hold on the server's data ended before scoring did (`message`, the
/// engine's: its session ended from outside): what the run read is not vouched for, so no
/// verdict is given.
pub fn hold_lost(config: &Config, message: &str) -> InputError {
    InputError::Config {
        path: config.path.clone(),
        message: crate::util::scrub::scrub_cut(
            &format!(
                "`dataset.engine`: the hold on the server's data was lost during the run: \
                 {message}. Another session could then change what the run read after the \
                 digests were taken, so no verdict is given (docs/SECURITY.md)"
            ),
            1500,
        ),
    }
}

/// The error of a run that did not have its server to itself (`message`, the engine's: the
/// other sessions connected at start-up, or the sessions established during the run): what
/// the server computed with may have changed while it read, so no verdict is given.
pub fn not_alone(config: &Config, message: &str) -> InputError {
    InputError::Config {
        path: config.path.clone(),
        message: crate::util::scrub::scrub_cut(
            &format!("`dataset.engine`: {message} (docs/SECURITY.md)"),
            1500,
        ),
    }
}

/// A baseline whose digests vouch for too little (`why`): a pull-request run is refused, any
/// other gets a note asking to regenerate the baseline.
fn unvouched(config: &Config, why: String, pull_request: bool) -> Result<Vec<String>, InputError> {
    match pull_request {
        true => Err(refusal(config, why)),
        false => Ok(vec![format!(
            "{why}, so a change of the data would go unnoticed; regenerate it with `sqlgate \
             baseline update`"
        )]),
    }
}

/// Why a baseline without data digests vouches for nothing.
fn none_recorded(path: &std::path::Path) -> String {
    format!(
        "the baseline {} records no data digests (it was made by an older sqlgate or on SQLite)",
        path.display()
    )
}

/// Why the data digests of a baseline made by an older sqlgate vouch for too little.
fn older(path: &std::path::Path) -> String {
    format!(
        "the baseline {} records data digests of an older sqlgate, which do not cover the \
         server's settings and collations or the tables' row order",
        path.display()
    )
}

/// The refusal of a pull-request run whose data nothing vouches for.
fn refusal(config: &Config, why: String) -> InputError {
    InputError::Config {
        path: config.path.clone(),
        message: format!(
            "`dataset.engine`: a pull request on a server engine is judged on the server's rows, \
             and {why}, so nothing vouches for the rows on the server; run `sqlgate baseline \
             update` on the base branch (it records a digest of every table) and commit the \
             baseline"
        ),
    }
}

/// The trusted baseline's path and its data digests (`None` inside when it records none);
/// `None` when no baseline is configured or present.
fn recorded(
    config: &Config,
    snapshot: &Snapshot,
) -> Result<Option<(std::path::PathBuf, Option<DataDigests>)>, InputError> {
    #[derive(Deserialize)]
    struct Recorded {
        #[serde(default)]
        data_digests: Option<DataDigests>,
    }
    let Some(section) = &config.baseline else {
        return Ok(None);
    };
    let Some(bytes) = snapshot.read(&section.path)?.bytes else {
        return Ok(None);
    };
    let Some(bytes) = config.baseline_section(&section.path, bytes)? else {
        return Ok(None);
    };
    let recorded: Recorded = serde_json::from_slice(&bytes)
        .map_err(|e| InputError::malformed(&section.path, "data_digests", e.to_string()))?;
    Ok(Some((
        section.path.clone(),
        recorded.data_digests.filter(|d| !d.is_empty()),
    )))
}
