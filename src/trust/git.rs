//! The one place sqlgate runs git (`tests/it/layout.rs` refuses a `git` subprocess anywhere else):
//! the trust stage reads the base commit, the baseline's history and what a pull request
//! changed through it, and `sqlgate baseline store` commits and pushes through it.

use std::path::Path;
use std::process::{Command, Output};

/// Where sqlgate takes git from: the system's own folders, in this order, never the job's
/// `PATH`, which a workflow step extends for every later step (`$GITHUB_PATH`; red team round
/// 13: a `git` first on it that dropped the pins below).
const GIT_PROGRAMS: [&str; 4] = [
    "/usr/local/bin/git",
    "/usr/bin/git",
    "/bin/git",
    "/opt/homebrew/bin/git",
];

/// The first of [`GIT_PROGRAMS`] that is a file (the first one when none is, so the error of
/// starting it names where git was looked for), found once per process.
fn git_program() -> &'static Path {
    static PROGRAM: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    let found = PROGRAM.get_or_init(|| {
        let found = GIT_PROGRAMS
            .into_iter()
            .find(|path| Path::new(path).is_file());
        found.unwrap_or(GIT_PROGRAMS[0])
    });
    Path::new(found)
}

/// git in `folder`, reading the objects as they are: a workflow step can rewrite what git shows
/// for an object without touching the commit (red team round 11: `git replace` of the base's
/// `sqlgate.yml` or `baseline.json` blob, which `git status` does not show), so replace refs are
/// ignored (`GIT_NO_REPLACE_OBJECTS`), and so are grafts (`GIT_GRAFT_FILE`: an empty file), which
/// could give a commit other parents. Every `GIT_*` variable of the job's environment is
/// dropped first: a step sets them for every later step (`$GITHUB_ENV`), and they name the
/// repository, its objects and work tree (`GIT_DIR`, `GIT_OBJECT_DIRECTORY`,
/// `GIT_ALTERNATE_OBJECT_DIRECTORIES`, `GIT_WORK_TREE`), add command-line configuration
/// (`GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`) or the programs git runs (`GIT_EXEC_PATH`).
fn git_in(folder: &Path) -> Command {
    let mut git = Command::new(git_program());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            git.env_remove(name);
        }
    }
    git.arg("-C")
        .arg(folder)
        .args(["-c", "advice.graftFileDeprecated=false"])
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_GRAFT_FILE", "/dev/null");
    git
}

/// Runs git in `folder` with `args` and the extra environment `env`; the whole output, or why
/// git could not be started.
pub fn output(folder: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Output, String> {
    git_in(folder)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))
}

/// git's empty tree: attributes read from it are none.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Runs a read-only git query in `folder`, pathspecs taken literally (a file named `*` is that
/// file), no file-system monitor command of the repository's config run, ancestry read from the
/// commits themselves (not from a commit-graph file, which a step can write), with no attributes
/// from the working tree (`GIT_ATTR_SOURCE`, git 2.40 and later: a
/// pull request's `.gitattributes` could otherwise mark files binary, or change how they are
/// converted, in what the trust stage reads of the base); its standard output, or its error
/// message.
pub fn query(folder: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let output = git_in(folder)
        .args(["-c", "core.fsmonitor=false", "-c", "core.commitGraph=false"])
        .args(args)
        .env("GIT_LITERAL_PATHSPECS", "1")
        .env("GIT_ATTR_SOURCE", EMPTY_TREE)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
    }
}

/// The id and size of the blob at `name` in `commit`, read from the commit's trees (which git
/// checks against their ids as it reads them; the size is the object's, checked with its bytes);
/// `None` when the commit has no such path, an error when it is not a file.
pub fn blob_id(folder: &Path, commit: &str, name: &str) -> Result<Option<(String, u64)>, String> {
    let listed = query(folder, &["ls-tree", "-l", "-z", commit, "--", name])?;
    let Some(entry) = listed.split(|&b| b == 0).find(|e| !e.is_empty()) else {
        return Ok(None);
    };
    let entry = String::from_utf8_lossy(entry);
    let meta = entry.split('\t').next().unwrap_or("");
    match meta.split_whitespace().collect::<Vec<_>>().as_slice() {
        [_, "blob", id, size] => size
            .parse()
            .map(|size| Some((id.to_string(), size)))
            .map_err(|e| format!("the size git lists for `{name}` at {commit}: {e}")),
        _ => Err(format!("`{name}` at {commit} is not a file")),
    }
}

/// The bytes of the blob at `name` in `commit`, checked against the blob's id; `None` when the
/// commit has no such path.
pub fn verified_blob(folder: &Path, commit: &str, name: &str) -> Result<Option<Vec<u8>>, String> {
    let Some((id, _)) = blob_id(folder, commit, name)? else {
        return Ok(None);
    };
    let bytes = query(folder, &["cat-file", "blob", &id])?;
    let mut hasher = ObjectHasher::new(&id, bytes.len() as u64)?;
    hasher.update(&bytes);
    hasher.check(&id, name)?;
    Ok(Some(bytes))
}

/// Writes the blob at `name` in `commit` into the new file `file`, streamed (a database of the
/// base commit can be larger than memory should hold) and checked against the blob's id; the
/// error message when git fails, the commit has no such file, or the bytes are not the blob's.
pub fn blob_to_file(
    folder: &Path,
    (commit, name): (&str, &str),
    file: &Path,
) -> Result<(), String> {
    let (id, size) = blob_id(folder, commit, name)?
        .ok_or_else(|| format!("`{name}` is not in the base commit"))?;
    let out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let mut child = git_in(folder)
        .args(["cat-file", "blob", &id])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let mut writer = HashingWriter {
        hasher: ObjectHasher::new(&id, size)?,
        out,
    };
    let stdout = child.stdout.as_mut().ok_or("git gave no output")?;
    std::io::copy(stdout, &mut writer).map_err(|e| format!("{}: {e}", file.display()))?;
    let output = child
        .wait_with_output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
    }
    writer.hasher.check(&id, name)
}

/// The files at `commit` whose bytes hold `needle`, every blob of the commit read once and
/// checked against its id (`git grep` would search whatever bytes the object store holds, so a
/// forged object could hide a file); blobs over `most_bytes` are checked but not searched.
pub fn files_holding(
    folder: &Path,
    commit: &str,
    needle: &[u8],
    most_bytes: u64,
) -> Result<Vec<String>, String> {
    let listed = query(folder, &["ls-tree", "-r", "-z", commit])?;
    let blobs: Vec<(String, String)> = (listed.split(|&b| b == 0))
        .filter_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (meta, path) = entry.split_once('\t')?;
            match meta.split(' ').collect::<Vec<_>>().as_slice() {
                [_, "blob", id] => Some((id.to_string(), path.to_string())),
                _ => None,
            }
        })
        .collect();
    let mut child = git_in(folder)
        .args(["cat-file", "--batch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("git takes no input")?;
    let ids: String = blobs.iter().map(|(id, _)| format!("{id}\n")).collect();
    let feeder = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, ids.as_bytes()));
    let mut stdout = std::io::BufReader::new(child.stdout.take().ok_or("git gave no output")?);
    let mut found = Vec::new();
    for (id, path) in &blobs {
        if batch_blob_holds(&mut stdout, (id, path), needle, most_bytes)? {
            found.push(path.clone());
        }
    }
    let _ = feeder.join();
    let _ = child.wait();
    Ok(found)
}

/// Reads the next object of a `cat-file --batch` stream (which must be blob `id`, at `path`),
/// checks it against its id and says whether it holds `needle` (when at most `most_bytes`).
fn batch_blob_holds(
    stream: &mut impl std::io::BufRead,
    (id, path): (&str, &str),
    needle: &[u8],
    most_bytes: u64,
) -> Result<bool, String> {
    let error = |e: std::io::Error| format!("reading `{path}` from git: {e}");
    let mut header = String::new();
    stream.read_line(&mut header).map_err(error)?;
    let size = match header.trim_end().split(' ').collect::<Vec<_>>().as_slice() {
        [got, "blob", size] if *got == id => size.parse::<u64>().ok(),
        _ => None,
    }
    .ok_or_else(|| format!("git could not read `{path}`: {}", header.trim_end()))?;
    let mut hasher = ObjectHasher::new(id, size)?;
    let mut kept = Vec::new();
    let mut left = size;
    let mut chunk = vec![0u8; 1 << 16];
    while left > 0 {
        let take = (left.min(chunk.len() as u64)) as usize;
        stream.read_exact(&mut chunk[..take]).map_err(error)?;
        hasher.update(&chunk[..take]);
        if size <= most_bytes {
            kept.extend_from_slice(&chunk[..take]);
        }
        left -= take as u64;
    }
    let mut newline = [0u8; 1];
    stream.read_exact(&mut newline).map_err(error)?;
    hasher.check(id, path)?;
    let holds = !needle.is_empty() && kept.windows(needle.len()).any(|w| w == needle);
    Ok(holds)
}

/// The hash of a git blob object (`blob <size>\0` and its bytes), in the repository's object
/// format: SHA-1 (40-digit ids) or SHA-256 (64).
enum ObjectHasher {
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

impl ObjectHasher {
    /// A hasher for blob `id` of `size` bytes, its header hashed.
    fn new(id: &str, size: u64) -> Result<ObjectHasher, String> {
        use sha2::Digest;
        let mut hasher = match id.len() {
            40 => ObjectHasher::Sha1(sha1::Sha1::new()),
            64 => ObjectHasher::Sha256(sha2::Sha256::new()),
            _ => return Err(format!("`{id}` is not a git object id")),
        };
        hasher.update(format!("blob {size}\0").as_bytes());
        Ok(hasher)
    }

    fn update(&mut self, bytes: &[u8]) {
        use sha2::Digest;
        match self {
            ObjectHasher::Sha1(hasher) => hasher.update(bytes),
            ObjectHasher::Sha256(hasher) => hasher.update(bytes),
        }
    }

    /// Fails unless the bytes hashed are blob `id` (the file at `name`): an object store
    /// changed behind git's back (red team round 12: a workflow step's forged loose object of
    /// the base's config or baseline, which git reads without checking) stops the run.
    fn check(self, id: &str, name: &str) -> Result<(), String> {
        use sha2::Digest;
        let got = match self {
            ObjectHasher::Sha1(hasher) => crate::util::digest::hex(&hasher.finalize()),
            ObjectHasher::Sha256(hasher) => crate::util::digest::hex(&hasher.finalize()),
        };
        match got == id {
            true => Ok(()),
            false => Err(format!(
                "the base commit's `{name}` is not what the commit names (blob {id}, but the \
                 object store holds bytes hashing to {got}): the repository's objects were \
                 changed behind git's back"
            )),
        }
    }
}

/// A file writer that hashes what it writes.
struct HashingWriter {
    hasher: ObjectHasher,
    out: std::fs::File,
}

impl std::io::Write for HashingWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let written = self.out.write(bytes)?;
        self.hasher.update(&bytes[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
