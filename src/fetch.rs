//! Fetching and verifying pinned installer artifacts (`shforge fetch`,
//! `shforge smoke`).
//!
//! Each artifact is made exactly as its spec's `source` line says:
//!
//! * `npm pack PKG@VERSION` runs `npm pack --loglevel=warn PKG@VERSION
//!   --pack-destination STAGE`.
//! * `sh installers/bundle.sh NAME FILE [ARGS]` and
//!   `sh installers/glibc-runtime/prepare.sh IN MEMBER OUT` run the copies
//!   of those scripts (and the lock files and lists they read) compiled
//!   into shforge, so no checkout is needed. `prepare.sh`'s `IN` is another
//!   pinned artifact: it is fetched first when missing.
//!
//! Every file lands in a stage dir inside the artifacts dir first
//! (`DIR/.shforge-fetch-PID-N/`, same file system, so the final step is a
//! rename): it is checked against the spec's `size` (larger is refused, the
//! installer's rule) and `sha256`, and only a file that passes is renamed
//! to `DIR/PATH`. A failed fetch leaves nothing behind. A file already at
//! `DIR/PATH` is verified the same way; a wrong one is refused (status
//! FAILED, both digests named) and left alone for the user to look at:
//! replacing a file someone put there would hide the corruption.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest as _, Sha256};

use crate::installer::InstallerSpec;
use crate::installer::builder::{Libc, Runtime};
use crate::installer::spec::ArtifactSpec;

use crate::shipped::SCRIPT_FILES;

mod uv;

pub use uv::ensure_uv;

/// One pinned artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needed {
    /// Path relative to the artifacts dir.
    pub path: String,
    /// Expected sha256 (hex).
    pub sha256: String,
    /// Largest size allowed, in bytes, when the spec gives one.
    pub size: Option<u64>,
    /// The spec's `source` text.
    pub source: Option<String>,
}

impl From<&ArtifactSpec> for Needed {
    fn from(a: &ArtifactSpec) -> Self {
        Needed {
            path: a.path.clone(),
            sha256: a.sha256.clone(),
            size: a.size,
            source: a.source.clone(),
        }
    }
}

/// The artifacts of `spec` for the system under `root` (`/` for this
/// machine): `uname -m` as Rust sees it, the libc by
/// [`crate::musl::system_is_musl`], the installers' own rule. On a musl
/// system a spec with programs prepared for this arch gets the private
/// glibc runtime's rows (`runtime = "private"` or either, built for glibc),
/// as `templates/lib/relocate.sh` decides, and so does every system when
/// all of the arch's rows are private; every other system keeps the
/// image's rows.
pub fn needed(spec: &InstallerSpec, root: &Path) -> Vec<Needed> {
    let arch = std::env::consts::ARCH;
    let musl = crate::musl::system_is_musl(root);
    let for_arch = |a: &&ArtifactSpec| a.arch == "any" || a.arch == arch;
    let prepared = spec
        .artifacts
        .iter()
        .filter(for_arch)
        .any(|a| !a.relocate.is_empty());
    // Every row for this arch private (a Python harness): the installer
    // takes the private runtime on every system.
    let only_private = spec
        .artifacts
        .iter()
        .filter(for_arch)
        .all(|a| a.runtime == Some(Runtime::Private));
    let private = prepared && (musl || only_private);
    spec.artifacts
        .iter()
        .filter(for_arch)
        .filter(|a| {
            let runtime = a.runtime.unwrap_or(Runtime::Either);
            if private {
                runtime != Runtime::Image && a.libc != Libc::Musl
            } else {
                runtime != Runtime::Private
                    && match a.libc {
                        Libc::Any => true,
                        Libc::Glibc => !musl,
                        Libc::Musl => musl,
                    }
            }
        })
        .map(Needed::from)
        .collect()
}

/// Every row of `spec`, for every arch and libc (`shforge fetch
/// --every-arch`).
pub fn all(spec: &InstallerSpec) -> Vec<Needed> {
    spec.artifacts.iter().map(Needed::from).collect()
}

/// The rows of `spec` for `arch` (a `uname -m` value; `any` rows too), for
/// every libc and runtime: what glibc, musl and old-glibc systems of that
/// arch need (`shforge fetch --all`, `--arch ARCH`).
pub fn all_for_arch(spec: &InstallerSpec, arch: &str) -> Vec<Needed> {
    spec.artifacts
        .iter()
        .filter(|a| a.arch == "any" || a.arch == arch)
        .map(Needed::from)
        .collect()
}

/// Which rows `shforge fetch` takes (`--all`, `--arch`, `--every-arch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rows {
    /// This machine's: arch, libc and runtime as its installer decides.
    Machine,
    /// Every row of these arches (`--all`: this machine's arch).
    Arches(Vec<String>),
    /// Every row of every spec (`--every-arch`).
    Every,
}

impl Rows {
    /// The choice the flags make; an unknown `--arch` (or `any`) is refused
    /// with one line naming the known ones. amd64/arm64 are folded.
    pub fn new(all: bool, arches: &[String], every_arch: bool) -> Result<Rows, String> {
        use crate::installer::builder::KNOWN_ARCHES;
        if every_arch {
            return Ok(Rows::Every);
        }
        if arches.is_empty() {
            return Ok(if all {
                Rows::Arches(vec![std::env::consts::ARCH.to_owned()])
            } else {
                Rows::Machine
            });
        }
        let known = || {
            let v: Vec<&str> = KNOWN_ARCHES
                .iter()
                .copied()
                .filter(|k| *k != "any")
                .collect();
            v.join(", ")
        };
        let mut v = Vec::new();
        for a in arches {
            let folded = match a.as_str() {
                "amd64" => "x86_64",
                "arm64" => "aarch64",
                other => other,
            };
            if folded == "any" || !KNOWN_ARCHES.contains(&folded) {
                return Err(format!(
                    "--arch {a:?}: expected a `uname -m` value ({})",
                    known()
                ));
            }
            if !v.iter().any(|x| x == folded) {
                v.push(folded.to_owned());
            }
        }
        Ok(Rows::Arches(v))
    }

    /// The rows of `spec` this choice takes, each once.
    pub fn pick(&self, spec: &InstallerSpec) -> Vec<Needed> {
        match self {
            Rows::Machine => needed(spec, Path::new("/")),
            Rows::Every => all(spec),
            Rows::Arches(arches) => {
                let mut v: Vec<Needed> = Vec::new();
                for a in arches {
                    for n in all_for_arch(spec, a) {
                        if !v.contains(&n) {
                            v.push(n);
                        }
                    }
                }
                v
            }
        }
    }
}

/// Hex sha256 of a regular file (streamed: artifacts are large; a FIFO or
/// device at the name is refused, never waited on).
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    let (mut f, _) =
        crate::files::open_regular(path).map_err(crate::files::FileError::into_cause)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// What became of one artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// It was already there, with the pinned size and digest.
    Present,
    /// It was made by its `source` and verified.
    Fetched,
    /// One line saying why (names the artifact; digests where they differ).
    Failed(String),
}

/// One line of the `shforge fetch` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Path relative to the artifacts dir.
    pub path: String,
    /// Bytes on disk after the run (None when there is no file).
    pub size: Option<u64>,
    /// Present, fetched or failed.
    pub status: Status,
}

/// The artifacts dir cannot be used (exit 2 for the CLI).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DirError(String);

/// Fetch every artifact of `wanted` missing from `dir`, verifying what is
/// there and what arrives. `pool` is where `prepare.sh` inputs are looked
/// up (rows of any spec); an input missing from `wanted` is fetched first
/// and gets its own row. `dir` is created when missing; a `dir` that is
/// not a directory (a file, FIFO, any symlink) is a [`DirError`].
pub fn fetch(
    wanted: &[Needed],
    pool: &[Needed],
    dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Row>, DirError> {
    check_dir(dir)?;
    let mut stage = Stage::new(dir);
    let mut rows: Vec<Row> = Vec::new();
    for a in with_inputs(wanted, pool) {
        if rows.iter().any(|r| r.path == a.path) {
            continue;
        }
        let status = match one(&a, dir, &mut stage, progress) {
            Ok(s) => s,
            Err(why) => Status::Failed(why),
        };
        let size = fs::metadata(dir.join(&a.path)).ok().map(|m| m.len());
        rows.push(Row {
            path: a.path.clone(),
            size,
            status,
        });
    }
    Ok(rows)
}

/// The table `shforge fetch` prints: artifact, size, status; failures get
/// their reason on the next line.
pub fn render(rows: &[Row]) -> String {
    let width = rows.iter().map(|r| r.path.len()).max().unwrap_or(0).max(8);
    let mut out = format!("{:<width$}  {:>12}  status\n", "artifact", "size");
    for r in rows {
        let size = r.size.map_or_else(|| "-".to_owned(), |s| s.to_string());
        let status = match &r.status {
            Status::Present => "present",
            Status::Fetched => "fetched",
            Status::Failed(_) => "FAILED",
        };
        out.push_str(&format!("{:<width$}  {size:>12}  {status}\n", r.path));
        if let Status::Failed(why) = &r.status {
            out.push_str(&format!("  {why}\n"));
        }
    }
    out
}

/// `wanted` in order, each `prepare.sh` row preceded by its input when
/// that input is a row of `pool` and not already wanted earlier.
fn with_inputs(wanted: &[Needed], pool: &[Needed]) -> Vec<Needed> {
    let mut out: Vec<Needed> = Vec::new();
    for a in wanted {
        if let Some(input) = a.source.as_deref().and_then(prepare_input)
            && !out.iter().any(|o| o.path == input)
            && let Some(row) = wanted.iter().chain(pool).find(|p| p.path == input)
        {
            out.push(row.clone());
        }
        out.push(a.clone());
    }
    out
}

/// `IN` of a `sh installers/glibc-runtime/prepare.sh IN MEMBER OUT` source.
fn prepare_input(source: &str) -> Option<&str> {
    source
        .strip_prefix("sh installers/glibc-runtime/prepare.sh ")?
        .split_whitespace()
        .next()
}

/// Refuse a `dir` that is not a real directory; create a missing one.
fn check_dir(dir: &Path) -> Result<(), DirError> {
    let bad = |what: &str| DirError(format!("{}: {what}, not a directory", dir.display()));
    match fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(bad("a symlink")),
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) => Err(bad(crate::files::kind_of(&m))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => fs::create_dir_all(dir)
            .map_err(|e| DirError(format!("{}: cannot create: {e}", dir.display()))),
        Err(e) => Err(DirError(format!("{}: {e}", dir.display()))),
    }
}

/// The size and digest of `file` against `a`; the error names both.
fn verify(file: &Path, a: &Needed, what: &str) -> Result<(), String> {
    let len = fs::metadata(file)
        .map_err(|e| format!("artifact {}: {e}", a.path))?
        .len();
    if let Some(max) = a.size
        && len > max
    {
        return Err(format!(
            "artifact {}: {what} is {len} bytes, the spec allows at most {max}",
            a.path
        ));
    }
    let digest = sha256_file(file).map_err(|e| format!("artifact {}: {e}", a.path))?;
    if digest != a.sha256 {
        return Err(format!(
            "artifact {}: {what} has sha256 {digest}, the spec pins {}",
            a.path, a.sha256
        ));
    }
    Ok(())
}

/// Verify one present artifact, or fetch it through the stage.
fn one(
    a: &Needed,
    dir: &Path,
    stage: &mut Stage,
    progress: &mut dyn FnMut(&str),
) -> Result<Status, String> {
    if a.path.is_empty() || a.path.contains('/') || a.path.starts_with('.') {
        return Err(format!(
            "artifact {:?}: not a plain file name in the artifacts dir",
            a.path
        ));
    }
    let file = dir.join(&a.path);
    match fs::symlink_metadata(&file) {
        Ok(_) => {
            // Verifying opens with O_NONBLOCK and takes only regular
            // files (a link to one too): a FIFO here is refused, not read.
            return verify(&file, a, "the file present").map(|()| Status::Present);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("artifact {}: {e}", a.path)),
    }
    let source = a.source.as_deref().unwrap_or("");
    let sub = stage
        .fresh()
        .map_err(|e| format!("artifact {}: {e}", a.path))?;
    let result = make(a, source, dir, &sub, stage, progress).and_then(|made| {
        verify(&made, a, &format!("`{source}` gave a file that"))?;
        fs::rename(&made, &file).map_err(|e| {
            format!(
                "artifact {}: cannot move it into {}: {e}",
                a.path,
                dir.display()
            )
        })
    });
    let _ = fs::remove_dir_all(&sub);
    result.map(|()| Status::Fetched)
}

/// Run `source` so that it writes `a.path` inside `sub`; its path.
fn make(
    a: &Needed,
    source: &str,
    dir: &Path,
    sub: &Path,
    stage: &mut Stage,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, String> {
    let missing = |why: &str| format!("artifact {} is missing ({why})", a.path);
    let out = sub.join(&a.path);
    let words: Vec<&str> = source.split_whitespace().collect();
    let mut cmd = match words.as_slice() {
        ["npm", "pack", pkg] => {
            need_npm(source).map_err(|w| missing(&w))?;
            let mut npm = Command::new("npm");
            npm.args(["pack", "--loglevel=warn", pkg, "--pack-destination"])
                .arg(sub);
            npm
        }
        ["sh", "installers/bundle.sh", name, file, rest @ ..] if *file == a.path => {
            let scripts = stage.scripts().map_err(|e| missing(&e))?;
            // Only a Node bundle (a package lock) and a Bun graph (its
            // packages are `npm pack`ed) run npm: the runtimes and the
            // Python bundles (uv) do not.
            let bundle = scripts.join("bundles").join(name);
            if bundle.join("package-lock.json").is_file() || bundle.join("bun-graph").is_file() {
                need_npm(source).map_err(|w| missing(&w))?;
            }
            let mut sh = Command::new("sh");
            // A Python bundle (a wheel lock) is installed by uv on the host:
            // brought here when the machine has none.
            if scripts
                .join("bundles")
                .join(name)
                .join("requirements.txt")
                .is_file()
            {
                let uv = uv::ensure_uv(dir, progress).map_err(|w| missing(&w))?;
                sh.env("SHFORGE_UV", uv);
            }
            sh.arg(scripts.join("bundle.sh"))
                .arg(name)
                .arg(&out)
                .args(rest);
            sh
        }
        [
            "sh",
            "installers/glibc-runtime/prepare.sh",
            input,
            member,
            file,
        ] if *file == a.path => {
            let scripts = stage.scripts().map_err(|e| missing(&e))?;
            let mut sh = Command::new("sh");
            sh.arg(scripts.join("glibc-runtime/prepare.sh"))
                .arg(dir.join(input))
                .arg(member)
                .arg(&out);
            sh
        }
        _ => return Err(missing(&format!("no source shforge can run: {source:?}"))),
    };
    progress(&format!("fetching {} with `{source}`", a.path));
    cmd.current_dir(sub);
    run_step(cmd, source).map_err(|why| missing(&why))?;
    if !out.is_file() {
        return Err(missing(&format!("`{source}` wrote no {}", a.path)));
    }
    Ok(out)
}

fn need_npm(source: &str) -> Result<(), String> {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("npm").is_file()));
    if found {
        Ok(())
    } else {
        Err(format!("no npm on PATH to run `{source}`"))
    }
}

/// Run one fetch step with stdin and stdout closed (its stderr is the
/// user's); the error says why, naming the program or the spec's `source`.
fn run_step(mut cmd: Command, source: &str) -> Result<(), String> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("{program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{source}` failed: {status}"))
    }
}

/// Write the host-side scripts ([`SCRIPT_FILES`]) under `dir/installers/`
/// and return that directory (`shforge pin` runs `prepare.sh` from it).
pub(crate) fn write_scripts(dir: &Path) -> Result<PathBuf, String> {
    let s = dir.join("installers");
    for (rel, text) in SCRIPT_FILES {
        crate::files::write_atomic(&s.join(rel), text.as_bytes(), crate::files::FileMode::Data)
            .map_err(|e| e.to_string())?;
    }
    Ok(s)
}

/// Run `prepare.sh IN MEMBER OUT` from `scripts` (see [`write_scripts`]);
/// its standard output (the `[[artifact.relocate]]` table) on success,
/// else one line saying why.
pub(crate) fn run_prepare(
    scripts: &Path,
    input: &Path,
    member: &str,
    out: &Path,
) -> Result<String, String> {
    let got = Command::new("sh")
        .arg(scripts.join("glibc-runtime/prepare.sh"))
        .arg(input)
        .arg(member)
        .arg(out)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("sh: {e}"))?;
    if !got.status.success() {
        return Err(format!(
            "`prepare.sh {} {member}` failed: {}",
            input.display(),
            got.status
        ));
    }
    String::from_utf8(got.stdout).map_err(|_| "prepare.sh printed non-UTF-8 text".to_owned())
}

/// The stage dir inside the artifacts dir, made on first use and removed
/// with everything in it when dropped.
struct Stage {
    parent: PathBuf,
    dir: Option<PathBuf>,
    scripts: Option<PathBuf>,
    next: u32,
}

impl Stage {
    fn new(parent: &Path) -> Stage {
        Stage {
            parent: parent.to_path_buf(),
            dir: None,
            scripts: None,
            next: 0,
        }
    }

    fn root(&mut self) -> std::io::Result<PathBuf> {
        if let Some(d) = &self.dir {
            return Ok(d.clone());
        }
        let pid = std::process::id();
        let mut n = 0u32;
        loop {
            let d = self.parent.join(format!(".shforge-fetch-{pid}-{n}"));
            match fs::create_dir(&d) {
                Ok(()) => {
                    self.dir = Some(d.clone());
                    return Ok(d);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => {
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!(
                            "cannot create a stage dir in {}: {e}",
                            self.parent.display()
                        ),
                    ));
                }
            }
        }
    }

    /// An empty dir for one artifact.
    fn fresh(&mut self) -> std::io::Result<PathBuf> {
        let d = self.root()?.join(format!("a{}", self.next));
        self.next += 1;
        fs::create_dir(&d)?;
        Ok(d)
    }

    /// `STAGE/installers/`, with [`SCRIPT_FILES`] written once.
    fn scripts(&mut self) -> Result<PathBuf, String> {
        if let Some(s) = &self.scripts {
            return Ok(s.clone());
        }
        let s = self.root().map_err(|e| e.to_string())?.join("installers");
        for (rel, text) in SCRIPT_FILES {
            crate::files::write_atomic(&s.join(rel), text.as_bytes(), crate::files::FileMode::Data)
                .map_err(|e| e.to_string())?;
        }
        self.scripts = Some(s.clone());
        Ok(s)
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        if let Some(d) = &self.dir {
            let _ = fs::remove_dir_all(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, source: &str) -> Needed {
        Needed {
            path: path.into(),
            sha256: String::new(),
            size: None,
            source: Some(source.into()),
        }
    }

    #[test]
    fn a_prepared_row_brings_its_input_first_once() {
        let input = row("a.tgz", "npm pack a@1");
        let prepared = row(
            "a-prepared.tar.gz",
            "sh installers/glibc-runtime/prepare.sh a.tgz package/a a-prepared.tar.gz",
        );
        let got = with_inputs(
            &[prepared.clone(), prepared.clone()],
            std::slice::from_ref(&input),
        );
        assert_eq!(got, vec![input.clone(), prepared.clone(), prepared.clone()]);
        let got = with_inputs(&[input.clone(), prepared.clone()], &[]);
        assert_eq!(got, vec![input, prepared]);
    }

    #[test]
    fn every_shipped_source_is_one_fetch_can_run() {
        for (name, text) in crate::installer::shipped_specs() {
            let spec = InstallerSpec::from_toml(text).unwrap();
            for a in all(&spec) {
                let s = a.source.clone().unwrap_or_default();
                let w: Vec<&str> = s.split_whitespace().collect();
                let ok = match w.as_slice() {
                    ["npm", "pack", _] => true,
                    ["sh", "installers/bundle.sh", _, f, ..] => *f == a.path,
                    ["sh", "installers/glibc-runtime/prepare.sh", i, _, f] => {
                        *f == a.path && spec.artifacts.iter().any(|b| b.path == *i)
                    }
                    _ => false,
                };
                assert!(ok, "{name}: {}: source {s:?}", a.path);
            }
        }
    }
}
