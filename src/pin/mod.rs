//! `shforge pin NAME@VERSION`: move a shipped harness's installer spec to
//! another release.
//!
//! The new spec is derived from the shipped one, row by row:
//!
//! * a row made by `npm pack PKG@OLD` (OLD the spec's `version`) is the
//!   harness's own: its `path` and `source` get VERSION instead of OLD, the
//!   package is packed again (`npm view` first: a missing version or
//!   platform package is refused before anything is downloaded), checked
//!   against the registry's `dist.integrity`, and its `sha256` and `size`
//!   are those of the new file;
//! * a row made by `prepare.sh IN MEMBER OUT` whose IN is such a row is
//!   prepared again from the new IN, and its `[[artifact.relocate]]` table is
//!   the one `prepare.sh` prints;
//! * every other row (the Node runtime, the private glibc and Python
//!   runtimes) does not depend on the harness's version and is kept as it
//!   is, digests included;
//! * a row that cannot be derived this way (a bundle built from a lock,
//!   a path without the version) is refused with one line naming it.
//!
//! Before anything is written, the files the spec runs (its `entry`, the
//! launcher's program and arguments, `prepare.sh`'s member) are looked up
//! in the new archives: a package whose layout moved is refused. Everything
//! is fetched into a stage dir inside the artifacts dir; only when every
//! row is made and the new spec parses are the new artifacts moved into
//! the artifacts dir and the specs written (each atomically).

use std::fs;
use std::path::{Path, PathBuf};

use std::time::Instant;

use crate::installer::InstallerSpec;
use crate::installer::spec::ArtifactSpec;

/// Why a pin failed; [`PinError::exit_code`] is the CLI's exit code.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// Bad input: the argument, an unknown harness, a bad `--arch` or
    /// output dir, a row `shforge pin` cannot derive (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The registry has no such version, or no platform package of it for
    /// one arch (exit 3).
    #[error("{0}")]
    NotFound(String),
    /// The new package does not hold a file where the spec expects it
    /// (exit 4).
    #[error("{0}")]
    Layout(String),
    /// A fetch, a tool or a write failed (exit 1).
    #[error("{0}")]
    Failed(String),
}

impl PinError {
    /// 2 bad input, 3 no such version or platform package, 4 layout
    /// changed, 1 a fetch, tool or write failed.
    pub fn exit_code(&self) -> u8 {
        match self {
            PinError::Usage(_) => 2,
            PinError::NotFound(_) => 3,
            PinError::Layout(_) => 4,
            PinError::Failed(_) => 1,
        }
    }
}

/// One `shforge pin` request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The shipped harness's name.
    pub name: String,
    /// The release to pin.
    pub version: String,
    /// Write `OUT/installers/NAME.toml` and `OUT/harnesses/NAME.toml` (the harness spec);
    /// `None`: replace `installers/NAME.toml` of the checkout at `checkout`.
    pub out: Option<PathBuf>,
    /// The checkout whose shipped spec is replaced when `out` is `None`.
    pub checkout: PathBuf,
    /// Only these arches' rows (`uname -m` values); empty: every arch the
    /// spec covers.
    pub arches: Vec<String>,
    /// The artifacts dir (the cache `shforge smoke` reads).
    pub artifacts: PathBuf,
    /// Derive from this installer spec text instead of the shipped one.
    pub from: Option<String>,
}

/// What a pin wrote.
#[derive(Debug, Clone)]
pub struct Pinned {
    /// The installer spec written.
    pub installer: PathBuf,
    /// The harness spec written (`None` in place: it is unchanged).
    pub harness: Option<PathBuf>,
    /// Each new artifact: file name, bytes, sha256.
    pub artifacts: Vec<(String, u64, String)>,
}

/// Split `NAME@VERSION`; one line when it is not that.
pub fn parse_target(arg: &str) -> Result<(String, String), PinError> {
    let bad = || {
        PinError::Usage(format!(
            "{arg:?}: expected NAME@VERSION (a shipped harness and a release, e.g. claude-code@2.1.331)"
        ))
    };
    let (name, version) = arg.rsplit_once('@').ok_or_else(bad)?;
    let ok = !version.is_empty()
        && version.len() <= 64
        && !version.starts_with(['-', '.'])
        && version
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b));
    if name.is_empty() || !ok {
        return Err(bad());
    }
    Ok((name.to_owned(), version.to_owned()))
}

/// What becomes of one row.
#[derive(Debug, Clone)]
enum Plan {
    /// Kept as it is (a runtime row).
    Keep,
    /// Left out (an arch not asked for).
    Drop,
    /// `npm pack PKG@VER` (VER: the old one with the version replaced)
    /// into the new path.
    Npm {
        pkg: String,
        ver: String,
        path: String,
    },
    /// `bundle.sh KIND PATH` from the lock in KIND's dir of installers/bundles
    /// made again at the new version (a Python bundle).
    PyBundle { kind: String, path: String },
    /// `bundle.sh KIND PATH` from KIND's dir of installers/bundles:
    /// `package.json` at the new version, locked again (a Node bundle).
    NodeBundle { kind: String, path: String },
    /// `prepare.sh` of row `input`'s new file.
    Prepare {
        input: usize,
        member: String,
        path: String,
    },
}

/// A made row: its new file in the stage, and for a prepared one the
/// relocate table `prepare.sh` printed.
#[derive(Debug, Clone)]
struct Made {
    file: PathBuf,
    path: String,
    size: u64,
    sha256: String,
    relocate: Option<Relocate>,
}

/// The fields of a printed `[[artifact.relocate]]` table.
#[derive(Debug, Clone, Default)]
struct Relocate {
    fields: Vec<(String, String)>,
}

mod nodebundle;
mod npm;
mod pypi;
mod text;

/// Pin `req.name` at `req.version`; progress lines go to `progress`.
pub fn pin(req: &Request, progress: &mut dyn FnMut(&str)) -> Result<Pinned, PinError> {
    let (text, harness_text) = texts(req)?;
    let spec = InstallerSpec::from_toml(&text)
        .map_err(|e| PinError::Usage(format!("{}: installer spec: {e}", req.name)))?;
    let old = spec.version.clone();
    let plans = plan(&spec, &req.version, &req.arches, &req.name)?;
    let (installer_path, harness_path) = targets(req)?;
    // Ask the registry before downloading anything.
    let mut integrity: Vec<Option<String>> = vec![None; plans.len()];
    for (i, p) in plans.iter().enumerate() {
        if let Plan::Npm { pkg, ver, .. } = p {
            let a = &spec.artifacts[i];
            integrity[i] = Some(npm::view(pkg, ver, &req.version, &req.name, a)?);
        }
    }
    let locks_in = py_locks(&plans, &old, req)?;
    check_dir(&req.artifacts)?;
    let stage = StageDir::new(&req.artifacts)?;
    let mut made: Vec<Option<Made>> = vec![None; plans.len()];
    let total = plans
        .iter()
        .filter(|p| !matches!(p, Plan::Keep | Plan::Drop))
        .count()
        + locks_in.len();
    let mut count = Count { n: 0, total };
    let mut scripts: Option<PathBuf> = None;
    let lock_files = py_rows(
        req,
        &spec,
        &plans,
        &locks_in,
        &stage.0,
        &mut scripts,
        &mut made,
        &mut count,
        progress,
    )?;
    // npm rows first: prepare rows read them.
    for (i, p) in plans.iter().enumerate() {
        if let Plan::Npm { pkg, ver, path } = p {
            let at = format!("{pkg}@{ver}");
            let m = npm::row(
                req,
                &at,
                path,
                integrity[i].as_deref(),
                &stage.0.join(format!("r{i}")),
                &mut count,
                progress,
            )?;
            made[i] = Some(m);
        }
    }
    let layout = text::Layout::of(&spec);
    for (i, p) in plans.iter().enumerate() {
        if let (Plan::Npm { .. }, Some(m)) = (p, &made[i]) {
            layout.check(&spec.artifacts[i], m, &req.name, &req.version)?;
        }
    }
    for (i, p) in plans.iter().enumerate() {
        if let Plan::Prepare {
            input,
            member,
            path,
        } = p
        {
            let inp = made[*input].clone().ok_or_else(|| {
                PinError::Failed(format!("artifact {path}: its input row was not made"))
            })?;
            let dir = stage.0.join(format!("r{i}"));
            let m = prepared(
                req,
                &inp,
                member,
                path,
                &dir,
                &stage.0,
                &mut scripts,
                &mut count,
                progress,
            )?;
            made[i] = Some(m);
        }
    }
    let new_text = text::rewrite(&text, &spec, &plans, &made, &old, &req.version, &req.name)?;
    let inst = crate::installer::Installer::from_toml(&new_text)
        .map_err(|e| PinError::Failed(format!("the derived spec does not parse: {e}")))?;
    inst.script_from_spec(&installer_path)
        .map_err(|e| PinError::Failed(format!("the derived spec generates no installer: {e}")))?;
    let harness_new = harness_path
        .as_ref()
        .map(|_| text::point_installer(harness_text, &req.name))
        .transpose()?;
    let written = commit(req, &made)?;
    let write = |p: &Path, t: &str| {
        crate::files::write_atomic(p, t.as_bytes(), crate::files::FileMode::Data)
            .map_err(|e| PinError::Failed(format!("writing {}: {e}", p.display())))
    };
    let root = req.out.as_ref().unwrap_or(&req.checkout);
    for (rel, t) in &lock_files {
        write(&root.join(rel), t)?;
    }
    write(&installer_path, &new_text)?;
    if let (Some(p), Some(t)) = (&harness_path, &harness_new) {
        write(p, t)?;
    }
    Ok(Pinned {
        installer: installer_path,
        harness: harness_path,
        artifacts: written,
    })
}

/// The new lock input of each bundle the plan builds (`requirements.in`
/// of a Python bundle, `package.json` of a Node bundle: kind, file, text),
/// every package it moves asked of its registry first (nothing is built
/// for a release the registry does not have).
fn py_locks(
    plans: &[Plan],
    old: &str,
    req: &Request,
) -> Result<Vec<(String, &'static str, String)>, PinError> {
    let mut out: Vec<(String, &'static str, String)> = Vec::new();
    for p in plans {
        let (kind, node) = match p {
            Plan::PyBundle { kind, .. } => (kind, false),
            Plan::NodeBundle { kind, .. } => (kind, true),
            _ => continue,
        };
        if out.iter().any(|(k, _, _)| k == kind) {
            continue;
        }
        if node {
            let (text, pkgs) = nodebundle::new_package_json(kind, old, &req.version, &req.name)?;
            for pkg in &pkgs {
                nodebundle::check_release(pkg, &req.version, &req.name)?;
            }
            out.push((kind.clone(), "package.json", text));
        } else {
            let (text, pkgs) = pypi::new_requirements_in(kind, old, &req.version, &req.name)?;
            for pkg in &pkgs {
                pypi::check_release(pkg, &req.version, &req.name)?;
            }
            out.push((kind.clone(), "requirements.in", text));
        }
    }
    Ok(out)
}

/// Lock each bundle again in the stage's copy of the scripts and build its
/// rows from it (layout checked); the lock files to write next to the new
/// spec (relative to OUT or the checkout).
#[allow(clippy::too_many_arguments)]
fn py_rows(
    req: &Request,
    spec: &InstallerSpec,
    plans: &[Plan],
    locks_in: &[(String, &'static str, String)],
    stage: &Path,
    scripts: &mut Option<PathBuf>,
    made: &mut [Option<Made>],
    count: &mut Count,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<(String, String)>, PinError> {
    if locks_in.is_empty() {
        return Ok(Vec::new());
    }
    let s = crate::fetch::write_scripts(stage).map_err(PinError::Failed)?;
    *scripts = Some(s.clone());
    let uv = if plans.iter().any(|p| matches!(p, Plan::PyBundle { .. })) {
        Some(crate::fetch::ensure_uv(&req.artifacts, progress).map_err(PinError::Failed)?)
    } else {
        None
    };
    let at = format!("{}@{}", req.name, req.version);
    let mut files = Vec::new();
    for (kind, file, text) in locks_in {
        let dir = s.join("bundles").join(kind);
        let p = dir.join(file);
        fs::write(&p, text).map_err(|e| PinError::Failed(format!("{}: {e}", p.display())))?;
        match (*file, &uv) {
            ("requirements.in", Some(uv)) => {
                pypi::relock(&dir, kind, uv, &stage.join("home"), &at, count, progress)?
            }
            _ => nodebundle::relock(&dir, &at, count, progress)?,
        }
        files.extend(pypi::lock_files(&dir, kind, req.out.is_some())?);
    }
    for (i, p) in plans.iter().enumerate() {
        let dir = stage.join(format!("r{i}"));
        match p {
            Plan::PyBundle { kind, path } => {
                let m = pypi::build(&s, kind, path, &dir, uv.as_deref(), count, progress)?;
                pypi::check_layout(&m, kind, &req.name, &req.version)?;
                made[i] = Some(m);
            }
            Plan::NodeBundle { kind, path } => {
                let m = pypi::build(&s, kind, path, &dir, None, count, progress)?;
                // The launcher's files inside the bundle (its top dir).
                for a in spec.launcher.iter().flat_map(|l| &l.args) {
                    if a.starts_with("bundle/") {
                        text::require_member(
                            &m,
                            a,
                            &req.name,
                            &req.version,
                            "a launcher argument",
                        )?;
                    }
                }
                made[i] = Some(m);
            }
            _ => {}
        }
    }
    Ok(files)
}

/// Progress numbering: `[n/total]`.
struct Count {
    n: usize,
    total: usize,
}

impl Count {
    fn next(&mut self) -> String {
        self.n += 1;
        format!("[{}/{}]", self.n, self.total)
    }
}

/// The installer spec to derive from and the shipped harness spec.
fn texts(req: &Request) -> Result<(String, &'static str), PinError> {
    let usage = PinError::Usage;
    let text = match &req.from {
        Some(t) => t.clone(),
        None => crate::installer::HARNESS_SPECS
            .iter()
            .find(|(n, _)| *n == req.name)
            .map(|(_, t)| (*t).to_owned())
            .ok_or_else(|| {
                let known: Vec<&str> = crate::installer::HARNESS_SPECS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect();
                usage(format!(
                    "unknown harness {:?} (known: {})",
                    req.name,
                    known.join(", ")
                ))
            })?,
    };
    let harness_text = crate::harness::SHIPPED
        .iter()
        .find(|(h, _)| h.name() == req.name)
        .map(|(_, t)| *t)
        .ok_or_else(|| usage(format!("unknown harness {:?}", req.name)))?;
    Ok((text, harness_text))
}

/// Where the specs go: `OUT/installers/NAME.toml` and `OUT/harnesses/NAME.toml`, or
/// the checkout's installer spec; refused before anything is fetched.
fn targets(req: &Request) -> Result<(PathBuf, Option<PathBuf>), PinError> {
    let usage = PinError::Usage;
    let t = match &req.out {
        Some(out) => {
            // OUT and OUT/installers: real directories or absent (made at
            // the end), never a file or a link.
            for d in [out.clone(), out.join("installers"), out.join("harnesses")] {
                if let Ok(m) = fs::symlink_metadata(&d)
                    && !m.is_dir()
                {
                    return Err(usage(format!(
                        "--out: {}: not a directory (a file or a symlink)",
                        d.display()
                    )));
                }
            }
            (
                out.join("installers").join(format!("{}.toml", req.name)),
                Some(out.join("harnesses").join(format!("{}.toml", req.name))),
            )
        }
        None => {
            let p = req
                .checkout
                .join("installers")
                .join(format!("{}.toml", req.name));
            if !p.is_file() || !req.checkout.join("harnesses").is_dir() {
                return Err(usage(format!(
                    "{}: not a shforge checkout (no installers/{}.toml); give --out DIR",
                    req.checkout.display(),
                    req.name
                )));
            }
            (p, None)
        }
    };
    Ok(t)
}

/// Run `prepare.sh` on `inp`'s new file: the prepared row.
#[allow(clippy::too_many_arguments)]
fn prepared(
    req: &Request,
    inp: &Made,
    member: &str,
    path: &str,
    dir: &Path,
    stage: &Path,
    scripts: &mut Option<PathBuf>,
    count: &mut Count,
    progress: &mut dyn FnMut(&str),
) -> Result<Made, PinError> {
    text::require_member(inp, member, &req.name, &req.version, "prepare.sh's member")?;
    let s = match scripts {
        Some(s) => s.clone(),
        None => {
            let s = crate::fetch::write_scripts(stage).map_err(PinError::Failed)?;
            *scripts = Some(s.clone());
            s
        }
    };
    let step = count.next();
    progress(&format!("{step} prepare.sh {} {member}", inp.path));
    let t = Instant::now();
    fs::create_dir_all(dir).map_err(|e| PinError::Failed(format!("{}: {e}", dir.display())))?;
    let out = dir.join(path);
    let printed = crate::fetch::run_prepare(&s, &inp.file, member, &out)
        .map_err(|e| PinError::Failed(format!("artifact {path}: {e}")))?;
    let relocate = text::parse_relocate(&printed).ok_or_else(|| {
        PinError::Failed(format!(
            "artifact {path}: prepare.sh printed no relocate table"
        ))
    })?;
    let (size, sha256) = npm::measure(&out)?;
    progress(&format!(
        "{step} {path} ({:.1} MB, {:.1} s)",
        size as f64 / 1e6,
        t.elapsed().as_secs_f64()
    ));
    Ok(Made {
        file: out,
        path: path.to_owned(),
        size,
        sha256,
        relocate: Some(relocate),
    })
}

/// Move the new artifacts into the artifacts dir (a file already there
/// must be the same, checked for all before any is moved).
fn commit(req: &Request, made: &[Option<Made>]) -> Result<Vec<(String, u64, String)>, PinError> {
    let mut written = Vec::new();
    for m in made.iter().flatten() {
        let dest = req.artifacts.join(&m.path);
        if dest.exists() {
            let have = crate::fetch::sha256_file(&dest)
                .map_err(|e| PinError::Failed(format!("{}: {e}", dest.display())))?;
            if have != m.sha256 {
                return Err(PinError::Failed(format!(
                    "{}: already there with sha256 {have}, the new file has {}; move it away",
                    dest.display(),
                    m.sha256
                )));
            }
        }
    }
    for m in made.iter().flatten() {
        let dest = req.artifacts.join(&m.path);
        if !dest.exists() {
            fs::rename(&m.file, &dest)
                .map_err(|e| PinError::Failed(format!("moving {} into place: {e}", m.path)))?;
        }
        written.push((m.path.clone(), m.size, m.sha256.clone()));
    }
    Ok(written)
}

/// The plan of every row; a row that cannot be derived is refused.
fn plan(
    spec: &InstallerSpec,
    version: &str,
    arches: &[String],
    name: &str,
) -> Result<Vec<Plan>, PinError> {
    let old = &spec.version;
    let mut plans = Vec::new();
    for a in &spec.artifacts {
        let wanted = arches.is_empty() || a.arch == "any" || arches.contains(&a.arch);
        let source = a.source.clone().unwrap_or_default();
        let words: Vec<&str> = source.split_whitespace().collect();
        let p = match words.as_slice() {
            _ if !wanted => Plan::Drop,
            // The harness's own package: its version is the spec's, or
            // the spec's with a platform suffix (Codex's `0.171.0-linux-x64`).
            ["npm", "pack", at] => match at.rsplit_once('@') {
                Some((pkg, v))
                    if !pkg.is_empty() && (v == old || v.starts_with(&format!("{old}-"))) =>
                {
                    if !a.path.contains(old.as_str()) {
                        return Err(underivable(name, a, "its path does not name the version"));
                    }
                    Plan::Npm {
                        pkg: pkg.to_owned(),
                        ver: v.replacen(old.as_str(), version, 1),
                        path: a.path.replace(old.as_str(), version),
                    }
                }
                _ => Plan::Keep,
            },
            [
                "sh",
                "installers/glibc-runtime/prepare.sh",
                input,
                member,
                _,
            ] => match spec.artifacts.iter().position(|b| b.path == *input) {
                Some(j) if a.path.contains(old.as_str()) => Plan::Prepare {
                    input: j,
                    member: (*member).to_owned(),
                    path: a.path.replace(old.as_str(), version),
                },
                _ => Plan::Keep,
            },
            ["sh", "installers/bundle.sh", kind, ..]
                if ["glibc-runtime", "python-runtime", "bash-static"].contains(kind) =>
            {
                Plan::Keep
            }
            ["sh", "installers/bundle.sh", kind, file]
                if *file == a.path && pypi::is_python(kind) =>
            {
                if !a.path.contains(old.as_str()) {
                    return Err(underivable(name, a, "its path does not name the version"));
                }
                Plan::PyBundle {
                    kind: (*kind).to_owned(),
                    path: a.path.replace(old.as_str(), version),
                }
            }
            ["sh", "installers/bundle.sh", kind, file]
                if *file == a.path && nodebundle::is_node(kind) =>
            {
                if !a.path.contains(old.as_str()) {
                    return Err(underivable(name, a, "its path does not name the version"));
                }
                Plan::NodeBundle {
                    kind: (*kind).to_owned(),
                    path: a.path.replace(old.as_str(), version),
                }
            }
            ["sh", "installers/bundle.sh", kind, ..] => {
                return Err(PinError::Usage(format!(
                    "{name}: artifact {} is a bundle built by installers/bundle.sh from \
                     installers/bundles/{kind}/, neither a wheel lock nor a package lock; \
                     `shforge pin` cannot move it",
                    a.path
                )));
            }
            _ if a.path.contains(old.as_str()) => {
                return Err(underivable(name, a, "its source is not `npm pack`"));
            }
            _ => Plan::Keep,
        };
        plans.push(p);
    }
    // A prepared row follows its input: an input kept means it is kept.
    for i in 0..plans.len() {
        if let Plan::Prepare { input, .. } = plans[i]
            && !matches!(plans[input], Plan::Npm { .. })
        {
            plans[i] = if matches!(plans[input], Plan::Drop) {
                Plan::Drop
            } else {
                Plan::Keep
            };
        }
    }
    if !plans.iter().any(|p| {
        matches!(
            p,
            Plan::Npm { .. } | Plan::PyBundle { .. } | Plan::NodeBundle { .. }
        )
    }) {
        return Err(PinError::Usage(format!(
            "{name}: no row is made by `npm pack PKG@{old}` or a bundle's lock{}; nothing to move",
            if arches.is_empty() {
                ""
            } else {
                " for those arches"
            }
        )));
    }
    Ok(plans)
}

fn underivable(name: &str, a: &ArtifactSpec, why: &str) -> PinError {
    PinError::Usage(format!(
        "{name}: artifact {} cannot be derived for another version ({why}; source {:?})",
        a.path,
        a.source.as_deref().unwrap_or("")
    ))
}

/// Refuse an artifacts dir that is a symlink or not a directory; create a
/// missing one.
fn check_dir(dir: &Path) -> Result<(), PinError> {
    match fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(PinError::Usage(format!(
            "{}: not a directory (the artifacts dir)",
            dir.display()
        ))),
        Err(_) => fs::create_dir_all(dir)
            .map_err(|e| PinError::Usage(format!("{}: cannot create: {e}", dir.display()))),
    }
}

/// `DIR/.shforge-pin-PID/`, removed with its contents when dropped.
struct StageDir(PathBuf);

impl StageDir {
    fn new(parent: &Path) -> Result<StageDir, PinError> {
        let d = parent.join(format!(".shforge-pin-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir(&d)
            .map_err(|e| PinError::Failed(format!("cannot create {}: {e}", d.display())))?;
        Ok(StageDir(d))
    }
}

impl Drop for StageDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_or_are_refused() {
        assert_eq!(
            parse_target("claude-code@2.1.331").unwrap(),
            ("claude-code".into(), "2.1.331".into())
        );
        for bad in ["claude-code", "@1", "x@", "x@-1", "x@1 2", "x@$(id)"] {
            assert!(parse_target(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn base64_matches_known_values() {
        assert_eq!(npm::base64(b""), "");
        assert_eq!(npm::base64(b"f"), "Zg==");
        assert_eq!(npm::base64(b"fo"), "Zm8=");
        assert_eq!(npm::base64(b"foo"), "Zm9v");
        assert_eq!(npm::base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn bundles_are_planned_and_runtime_rows_kept() {
        for (name, want) in [
            ("pi", "node"),
            ("openclaw", "node"),
            ("hermes", "py"),
            ("nooa", "py"),
        ] {
            let t = crate::installer::HARNESS_SPECS
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap()
                .1;
            let spec = InstallerSpec::from_toml(t).unwrap();
            let p = plan(&spec, "9.9.9", &[], name).unwrap();
            let n = p
                .iter()
                .filter(|p| match want {
                    "node" => matches!(p, Plan::NodeBundle { .. }),
                    _ => matches!(p, Plan::PyBundle { .. }),
                })
                .count();
            assert!(n >= 1, "{name}: {p:?}");
            assert!(
                p.iter().all(|p| !matches!(p, Plan::Npm { .. })),
                "{name}: {p:?}"
            );
        }
        let gem = crate::installer::HARNESS_SPECS
            .iter()
            .find(|(n, _)| *n == "gemini-cli")
            .unwrap()
            .1;
        let spec = InstallerSpec::from_toml(gem).unwrap();
        let p = plan(&spec, "0.60.0", &["x86_64".into()], "gemini-cli").unwrap();
        let npm = p.iter().filter(|p| matches!(p, Plan::Npm { .. })).count();
        let drop = p.iter().filter(|p| matches!(p, Plan::Drop)).count();
        assert_eq!(npm, 1, "{p:?}");
        assert!(drop >= 3, "{p:?}");
    }
}
