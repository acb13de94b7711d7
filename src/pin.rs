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

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
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
    /// Write `OUT/installers/NAME.toml` and `OUT/NAME.toml` (the harness spec);
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
    Npm { pkg: String, ver: String, path: String },
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

/// Pin `req.name` at `req.version`; progress lines go to `progress`.
pub fn pin(req: &Request, progress: &mut dyn FnMut(&str)) -> Result<Pinned, PinError> {
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
    let spec = InstallerSpec::from_toml(&text)
        .map_err(|e| usage(format!("{}: installer spec: {e}", req.name)))?;
    let old = spec.version.clone();
    let plans = plan(&spec, &req.version, &req.arches, &req.name)?;

    // Ask the registry before downloading anything.
    let mut integrity: Vec<Option<String>> = vec![None; plans.len()];
    for (i, p) in plans.iter().enumerate() {
        if let Plan::Npm { pkg, ver, .. } = p {
            let a = &spec.artifacts[i];
            integrity[i] = Some(npm_view(pkg, ver, &req.version, &req.name, a)?);
        }
    }

    check_dir(&req.artifacts)?;
    let stage = StageDir::new(&req.artifacts)?;
    let mut made: Vec<Option<Made>> = vec![None; plans.len()];
    let total = plans
        .iter()
        .filter(|p| matches!(p, Plan::Npm { .. } | Plan::Prepare { .. }))
        .count();
    let mut n = 0;
    // npm rows first: prepare rows read them.
    for (i, p) in plans.iter().enumerate() {
        let Plan::Npm { pkg, ver, path } = p else {
            continue;
        };
        n += 1;
        let spec_at = format!("{pkg}@{ver}");
        // Already in the cache and equal to what the registry serves (its
        // dist.integrity): not downloaded again.
        let cached = req.artifacts.join(path);
        if let Some(want) = &integrity[i]
            && cached.is_file()
            && check_integrity(&cached, want, &spec_at).is_ok()
        {
            let (size, sha256) = measure(&cached)?;
            progress(&format!(
                "[{n}/{total}] {path}: in the artifacts dir, matching the registry's dist.integrity"
            ));
            made[i] = Some(Made {
                file: cached,
                path: path.clone(),
                size,
                sha256,
                relocate: None,
            });
            continue;
        }
        progress(&format!("[{n}/{total}] npm pack {spec_at}"));
        let t = Instant::now();
        let m = npm_pack(&spec_at, path, &stage.0.join(format!("r{i}")))?;
        if let Some(want) = &integrity[i] {
            check_integrity(&m.file, want, &spec_at)?;
        }
        progress(&format!(
            "[{n}/{total}] {} ({:.1} MB, {:.1} s)",
            m.path,
            m.size as f64 / 1e6,
            t.elapsed().as_secs_f64()
        ));
        made[i] = Some(m);
    }
    let layout = Layout::of(&spec);
    for (i, p) in plans.iter().enumerate() {
        if let (Plan::Npm { .. }, Some(m)) = (p, &made[i]) {
            layout.check(&spec.artifacts[i], m, &req.name, &req.version)?;
        }
    }
    let mut scripts: Option<PathBuf> = None;
    for (i, p) in plans.iter().enumerate() {
        let Plan::Prepare {
            input,
            member,
            path,
        } = p
        else {
            continue;
        };
        n += 1;
        let Some(inp) = made[*input].clone() else {
            return Err(PinError::Failed(format!(
                "artifact {path}: its input row was not made"
            )));
        };
        require_member(&inp, member, &req.name, &req.version, "prepare.sh's member")?;
        let s = match &scripts {
            Some(s) => s.clone(),
            None => {
                let s = crate::fetch::write_scripts(&stage.0).map_err(PinError::Failed)?;
                scripts = Some(s.clone());
                s
            }
        };
        progress(&format!("[{n}/{total}] prepare.sh {} {member}", inp.path));
        let t = Instant::now();
        let dir = stage.0.join(format!("r{i}"));
        fs::create_dir_all(&dir).map_err(|e| PinError::Failed(format!("{}: {e}", dir.display())))?;
        let out = dir.join(path);
        let printed = crate::fetch::run_prepare(&s, &inp.file, member, &out)
            .map_err(|e| PinError::Failed(format!("artifact {path}: {e}")))?;
        let relocate = parse_relocate(&printed)
            .ok_or_else(|| PinError::Failed(format!("artifact {path}: prepare.sh printed no relocate table")))?;
        let (size, sha256) = measure(&out)?;
        progress(&format!(
            "[{n}/{total}] {path} ({:.1} MB, {:.1} s)",
            size as f64 / 1e6,
            t.elapsed().as_secs_f64()
        ));
        made[i] = Some(Made {
            file: out,
            path: path.clone(),
            size,
            sha256,
            relocate: Some(relocate),
        });
    }

    let new_text = rewrite(&text, &spec, &plans, &made, &old, &req.version, &req.name)?;
    let inst = crate::installer::Installer::from_toml(&new_text)
        .map_err(|e| PinError::Failed(format!("the derived spec does not parse: {e}")))?;
    let (installer_path, harness_path) = match &req.out {
        Some(out) => (
            out.join("installers").join(format!("{}.toml", req.name)),
            Some(out.join(format!("{}.toml", req.name))),
        ),
        None => {
            let p = req.checkout.join("installers").join(format!("{}.toml", req.name));
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
    inst.script_from_spec(&installer_path)
        .map_err(|e| PinError::Failed(format!("the derived spec generates no installer: {e}")))?;
    let harness_new = harness_path
        .as_ref()
        .map(|_| point_installer(harness_text, &req.name))
        .transpose()?;

    // Commit: artifacts first (a file already there must be the same),
    // then the specs.
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
    let write = |p: &Path, t: &str| {
        crate::files::write_atomic(p, t.as_bytes(), crate::files::FileMode::Data)
            .map_err(|e| PinError::Failed(format!("writing {}: {e}", p.display())))
    };
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
                    if !pkg.is_empty()
                        && (v == old || v.starts_with(&format!("{old}-"))) =>
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
            ["sh", "installers/glibc-runtime/prepare.sh", input, member, _] => {
                match spec.artifacts.iter().position(|b| b.path == *input) {
                    Some(j) if a.path.contains(old.as_str()) => Plan::Prepare {
                        input: j,
                        member: (*member).to_owned(),
                        path: a.path.replace(old.as_str(), version),
                    },
                    _ => Plan::Keep,
                }
            }
            ["sh", "installers/bundle.sh", kind, ..]
                if ["glibc-runtime", "python-runtime", "bash-static"].contains(kind) =>
            {
                Plan::Keep
            }
            ["sh", "installers/bundle.sh", kind, ..] => {
                return Err(PinError::Usage(format!(
                    "{name}: artifact {} is a bundle built by installers/bundle.sh from the lock in \
                     installers/bundles/{kind}/; `shforge pin` cannot move bundles yet (edit that \
                     lock and run bundle.sh: installers/README.md, \"Bumping a pin\")",
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
    if !plans.iter().any(|p| matches!(p, Plan::Npm { .. })) {
        return Err(PinError::Usage(format!(
            "{name}: no row is made by `npm pack PKG@{old}`{}; nothing to move",
            if arches.is_empty() { "" } else { " for those arches" }
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

/// `npm view PKG@VERSION dist.integrity`: the registry's integrity, or a
/// [`PinError::NotFound`] naming the package (a missing version or
/// platform package), or [`PinError::Failed`] when npm cannot reach it.
fn npm_view(
    pkg: &str,
    ver: &str,
    version: &str,
    name: &str,
    a: &ArtifactSpec,
) -> Result<String, PinError> {
    let at = format!("{pkg}@{ver}");
    let got = Command::new("npm")
        .args(["view", "--json", &at, "dist.integrity", "version"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| PinError::Failed(format!("npm: {e} (shforge pin needs npm on PATH)")))?;
    let out = String::from_utf8_lossy(&got.stdout);
    let err = String::from_utf8_lossy(&got.stderr);
    let e404 = out.contains("E404") || err.contains("E404");
    let what = if a.arch == "any" {
        String::new()
    } else {
        format!(" (the {} {} platform package)", a.arch, a.libc_name())
    };
    if e404 {
        return Err(PinError::NotFound(format!(
            "{name}@{version}: npm has no {at}{what}; nothing written"
        )));
    }
    if !got.status.success() {
        let line = err
            .lines()
            .find(|l| l.contains("npm error") && !l.contains("complete log"))
            .unwrap_or("npm view failed")
            .trim();
        return Err(PinError::Failed(format!(
            "{name}@{version}: cannot ask the npm registry about {at}: {line}"
        )));
    }
    let v: serde_json::Value = serde_json::from_str(out.trim()).map_err(|_| {
        PinError::NotFound(format!("{name}@{version}: npm has no {at}{what}; nothing written"))
    })?;
    // Several versions match a range: the answer is an array. A pin is
    // one exact version.
    let obj = match &v {
        serde_json::Value::Object(_) => &v,
        _ => {
            return Err(PinError::Usage(format!(
                "{name}@{version}: names more than one release of {pkg}; give an exact version"
            )));
        }
    };
    if obj.get("version").and_then(|x| x.as_str()) != Some(ver) {
        return Err(PinError::Usage(format!(
            "{name}@{version}: npm resolves {at} to {}; give that exact version",
            obj.get("version").and_then(|x| x.as_str()).unwrap_or("?")
        )));
    }
    obj.get("dist.integrity")
        .and_then(|x| x.as_str())
        .map(str::to_owned)
        .ok_or_else(|| PinError::Failed(format!("{at}: the registry gives no dist.integrity")))
}

trait LibcName {
    fn libc_name(&self) -> &'static str;
}

impl LibcName for ArtifactSpec {
    fn libc_name(&self) -> &'static str {
        use crate::installer::builder::Libc;
        match self.libc {
            Libc::Glibc => "glibc",
            Libc::Musl => "musl",
            Libc::Any => "any-libc",
        }
    }
}

/// `npm pack AT` into `dir`; the file renamed to `path`, measured.
fn npm_pack(at: &str, path: &str, dir: &Path) -> Result<Made, PinError> {
    fs::create_dir_all(dir).map_err(|e| PinError::Failed(format!("{}: {e}", dir.display())))?;
    let got = Command::new("npm")
        .args(["pack", "--loglevel=warn", "--json", at, "--pack-destination"])
        .arg(dir)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| PinError::Failed(format!("npm: {e}")))?;
    if !got.status.success() {
        return Err(PinError::Failed(format!("`npm pack {at}` failed: {}", got.status)));
    }
    let v: serde_json::Value = serde_json::from_slice(&got.stdout)
        .map_err(|e| PinError::Failed(format!("`npm pack {at}`: unreadable output: {e}")))?;
    let file = v
        .get(0)
        .and_then(|x| x.get("filename"))
        .and_then(|x| x.as_str())
        .ok_or_else(|| PinError::Failed(format!("`npm pack {at}` named no file")))?;
    let packed = dir.join(file.trim_start_matches('@').replace('/', "-"));
    let packed = if packed.is_file() { packed } else { dir.join(file) };
    let out = dir.join(path);
    if packed != out {
        fs::rename(&packed, &out)
            .map_err(|e| PinError::Failed(format!("`npm pack {at}` wrote no {}: {e}", packed.display())))?;
    }
    let (size, sha256) = measure(&out)?;
    Ok(Made {
        file: out,
        path: path.to_owned(),
        size,
        sha256,
        relocate: None,
    })
}

fn measure(file: &Path) -> Result<(u64, String), PinError> {
    let fail = |e: std::io::Error| PinError::Failed(format!("{}: {e}", file.display()));
    let size = fs::metadata(file).map_err(fail)?.len();
    let sha = crate::fetch::sha256_file(file).map_err(fail)?;
    Ok((size, sha))
}

/// The file's sha512 against the registry's `sha512-BASE64`.
fn check_integrity(file: &Path, want: &str, at: &str) -> Result<(), PinError> {
    use sha2::{Digest as _, Sha512};
    use std::io::Read as _;
    let Some(b64) = want.strip_prefix("sha512-") else {
        return Ok(());
    };
    let mut f = fs::File::open(file).map_err(|e| PinError::Failed(format!("{}: {e}", file.display())))?;
    let mut h = Sha512::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| PinError::Failed(format!("{}: {e}", file.display())))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    let got = base64(&h.finalize());
    if got != b64 {
        return Err(PinError::Failed(format!(
            "`npm pack {at}`: sha512 {got} differs from the registry's dist.integrity {b64}"
        )));
    }
    Ok(())
}

fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                s.push(T[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// The install-relative files the spec runs, to be found in the new
/// archives.
struct Layout {
    wanted: Vec<(String, &'static str)>,
}

impl Layout {
    fn of(spec: &InstallerSpec) -> Layout {
        let mut wanted = Vec::new();
        let launcher_path = spec.launcher.as_ref().map(|l| l.path.clone());
        if launcher_path.as_deref() != Some(spec.entry.as_str()) {
            wanted.push((spec.entry.clone(), "the spec's entry"));
        }
        if let Some(l) = &spec.launcher {
            wanted.push((l.program.clone(), "the launcher's program"));
            for a in &l.args {
                wanted.push((a.clone(), "a launcher argument"));
            }
        }
        Layout { wanted }
    }

    /// Each wanted file that `a` installs (by its `dest` and `subdir`)
    /// must be in its new archive.
    fn check(&self, a: &ArtifactSpec, m: &Made, name: &str, version: &str) -> Result<(), PinError> {
        for (p, what) in &self.wanted {
            let rel = match &a.dest {
                Some(d) => match p.strip_prefix(&format!("{d}/")) {
                    Some(r) => r.to_owned(),
                    None => continue,
                },
                None => p.clone(),
            };
            let member = match &a.subdir {
                Some(s) => format!("{s}/{rel}"),
                None => rel,
            };
            // A row without dest installs at the root, where a launcher or
            // another row's dest may provide the file instead: only a
            // member under the archive's own top dir is asked of it.
            if a.dest.is_none() && !member.starts_with("package/") {
                continue;
            }
            require_member(m, &member, name, version, what)?;
        }
        Ok(())
    }
}

/// `member` must be a file of `m`'s archive, else a [`PinError::Layout`].
fn require_member(m: &Made, member: &str, name: &str, version: &str, what: &str) -> Result<(), PinError> {
    let got = Command::new("tar")
        .arg("-tzf")
        .arg(&m.file)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| PinError::Failed(format!("tar: {e}")))?;
    if !got.status.success() {
        return Err(PinError::Failed(format!("{}: not a readable tar.gz", m.path)));
    }
    let names: BTreeSet<String> = String::from_utf8_lossy(&got.stdout)
        .lines()
        .map(|l| l.trim_start_matches("./").to_owned())
        .collect();
    if names.contains(member) {
        Ok(())
    } else {
        Err(PinError::Layout(format!(
            "{name}@{version}: {} has no {member} ({what}): the package's layout changed; \
             write this version's spec by hand; nothing written",
            m.path
        )))
    }
}

/// The key/value lines of the `[[artifact.relocate]]` table in
/// `prepare.sh`'s output.
fn parse_relocate(printed: &str) -> Option<Relocate> {
    let mut in_table = false;
    let mut r = Relocate::default();
    for line in printed.lines() {
        let t = line.trim();
        if t == "[[artifact.relocate]]" {
            in_table = true;
            continue;
        }
        if !in_table || t.starts_with('#') || t.is_empty() {
            continue;
        }
        let (k, v) = t.split_once('=')?;
        r.fields.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    (!r.fields.is_empty()).then_some(r)
}

/// The shipped text with each derived row's lines replaced, dropped rows
/// left out, and `version`/`[check].expect` moved.
fn rewrite(
    text: &str,
    spec: &InstallerSpec,
    plans: &[Plan],
    made: &[Option<Made>],
    old: &str,
    new: &str,
    name: &str,
) -> Result<String, PinError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = format!(
        "# Pinned by `shforge pin {name}@{new}`, derived from the shipped spec of {old}:\n\
         # the rows of {old} made by `npm pack` (and prepare.sh from them) were\n\
         # made again for {new}, with the digests and sizes of the new files;\n\
         # the runtime rows are the shipped ones. The comments below were\n\
         # written for {old}.\n"
    );
    let mut row: Option<usize> = None; // index of the current [[artifact]]
    let mut in_relocate = false;
    let mut section = String::new();
    let mut count = 0usize;
    let mut pending: Vec<String> = Vec::new(); // comments/blank lines
    let mut skipping = false;
    let key_of = |l: &str| -> Option<String> {
        let t = l.trim();
        if t.starts_with('#') {
            return None;
        }
        t.split_once('=').map(|(k, _)| k.trim().to_owned())
    };
    for l in lines {
        let t = l.trim();
        if t.starts_with('[') && !t.starts_with("[[artifact.") {
            // A new top-level table.
            section = t.to_owned();
            in_relocate = false;
            if t == "[[artifact]]" {
                row = Some(count);
                count += 1;
            } else {
                row = None;
            }
            skipping = row.is_some_and(|i| matches!(plans.get(i), Some(Plan::Drop)));
            if !skipping {
                for p in pending.drain(..) {
                    out.push_str(&p);
                    out.push('\n');
                }
                out.push_str(l);
                out.push('\n');
            } else {
                pending.clear();
            }
            continue;
        }
        if t.starts_with("[[artifact.") {
            in_relocate = t == "[[artifact.relocate]]";
            if !skipping {
                for p in pending.drain(..) {
                    out.push_str(&p);
                    out.push('\n');
                }
                out.push_str(l);
                out.push('\n');
            }
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            pending.push(l.to_owned());
            continue;
        }
        if skipping {
            pending.clear();
            continue;
        }
        for p in pending.drain(..) {
            out.push_str(&p);
            out.push('\n');
        }
        let key = key_of(l).unwrap_or_default();
        let line = match (row, &section) {
            (None, s) if s.is_empty() && key == "version" => format!("version = {}", q(new)),
            (None, s) if s == "[check]" && key == "expect" => l.replace(old, new),
            (Some(i), _) => match (&plans[i], &made[i]) {
                (Plan::Npm { .. } | Plan::Prepare { .. }, Some(m)) => {
                    if in_relocate {
                        let r = m.relocate.as_ref();
                        match r.and_then(|r| r.fields.iter().find(|(k, _)| *k == key)) {
                            Some((k, v)) => format!("{k} = {v}"),
                            None => l.to_owned(),
                        }
                    } else {
                        match key.as_str() {
                            "path" => {
                                let mut s = format!("path = {}", q(&m.path));
                                if spec.artifacts[i].size.is_none() {
                                    s.push_str(&format!("\nsize = {}", m.size));
                                }
                                s
                            }
                            "size" => format!("size = {}", m.size),
                            "sha256" => format!("sha256 = {}", q(&m.sha256)),
                            "source" => l.replace(old, new),
                            _ => l.to_owned(),
                        }
                    }
                }
                _ => l.to_owned(),
            },
            _ => l.to_owned(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    for p in pending.drain(..) {
        out.push_str(&p);
        out.push('\n');
    }
    Ok(out)
}

fn q(s: &str) -> String {
    format!("\"{s}\"")
}

/// The shipped harness spec with `installer = "installers/NAME.toml"`:
/// written as `OUT/NAME.toml`, it names `OUT/installers/NAME.toml` (a
/// harness spec's `installer` is relative to its file and may not hold
/// `..`, so the harness spec sits above `installers/`, as in a checkout).
fn point_installer(text: &str, name: &str) -> Result<String, PinError> {
    let mut found = false;
    let mut out = String::new();
    for l in text.lines() {
        if !found && l.trim_start().starts_with("installer") && l.contains('=') {
            out.push_str(&format!("installer = \"installers/{name}.toml\"\n"));
            found = true;
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    if found {
        Ok(out)
    } else {
        Err(PinError::Failed(format!(
            "{name}: the shipped harness spec has no installer line"
        )))
    }
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
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn bundles_are_refused_and_runtime_rows_kept() {
        let pi = crate::installer::HARNESS_SPECS
            .iter()
            .find(|(n, _)| *n == "pi")
            .unwrap()
            .1;
        let spec = InstallerSpec::from_toml(pi).unwrap();
        let e = plan(&spec, "9.9.9", &[], "pi").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("bundle"), "{e}");
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
