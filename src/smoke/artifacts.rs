//! The pinned artifacts a harness's installer needs on this machine, and
//! fetching the missing ones with their spec's `source` command.
//!
//! * `npm pack PKG@VERSION` sources run as `npm pack --loglevel=warn
//!   PKG@VERSION --pack-destination DIR` when `npm` is on PATH.
//! * `sh installers/bundle.sh NAME FILE` sources run the copy of
//!   `installers/bundle.sh` and `installers/bundles/NAME/package*.json`
//!   compiled into shforge (written to `WORK/bundle-src/`), so the smoke
//!   needs no checkout.
//!
//! A fetched file must have the spec's sha256. Without npm, or for any
//! other source, the error is one line naming the missing file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest as _, Sha256};

use crate::installer::InstallerSpec;
use crate::installer::builder::Libc;

/// The bundle script and the lock files it builds from.
const BUNDLE_FILES: &[(&str, &str)] = &[
    ("bundle.sh", include_str!("../../installers/bundle.sh")),
    (
        "bundles/pi/package.json",
        include_str!("../../installers/bundles/pi/package.json"),
    ),
    (
        "bundles/pi/package-lock.json",
        include_str!("../../installers/bundles/pi/package-lock.json"),
    ),
    (
        "bundles/openclaw/package.json",
        include_str!("../../installers/bundles/openclaw/package.json"),
    ),
    (
        "bundles/openclaw/package-lock.json",
        include_str!("../../installers/bundles/openclaw/package-lock.json"),
    ),
];

/// One artifact this machine needs.
#[derive(Debug, Clone)]
pub struct Needed {
    /// Path relative to the artifacts dir.
    pub path: String,
    /// Expected sha256.
    pub sha256: String,
    /// The spec's `source` text.
    pub source: Option<String>,
}

/// The artifacts of `spec` for the system under `root` (`/` for this
/// machine): `uname -m` as Rust sees it, the libc by
/// [`crate::musl::system_is_musl`], the installers' own rule. On a musl
/// system a spec with programs prepared for this arch gets the private
/// glibc runtime's rows (`runtime = "private"` or either, built for glibc),
/// as `templates/lib/relocate.sh` decides; every other system keeps the
/// image's rows.
pub fn needed(spec: &InstallerSpec, root: &Path) -> Vec<Needed> {
    use crate::installer::builder::Runtime;
    let arch = std::env::consts::ARCH;
    let musl = crate::musl::system_is_musl(root);
    let for_arch = |a: &&crate::installer::spec::ArtifactSpec| a.arch == "any" || a.arch == arch;
    let private = musl
        && spec
            .artifacts
            .iter()
            .filter(for_arch)
            .any(|a| !a.relocate.is_empty());
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
        .map(|a| Needed {
            path: a.path.clone(),
            sha256: a.sha256.clone(),
            source: a.source.clone(),
        })
        .collect()
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

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
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

/// Make sure every artifact is in `dir`, fetching missing ones. Returns
/// what was fetched; an error is one line naming the file.
pub fn ensure(
    needed: &[Needed],
    dir: &Path,
    work: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<String>, String> {
    let mut fetched = Vec::new();
    for a in needed {
        let file = dir.join(&a.path);
        if file.is_file() {
            continue;
        }
        let source = a.source.as_deref().unwrap_or("");
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("artifact {}: cannot create {}: {e}", a.path, dir.display()))?;
        let missing = |why: &str| format!("artifact {} is missing ({why})", file.display());
        if let Some(pkg) = source.strip_prefix("npm pack ") {
            if !on_path("npm") {
                return Err(missing(&format!("no npm on PATH to run `{source}`")));
            }
            progress(&format!("fetching {} with `{source}`", a.path));
            let mut npm = Command::new("npm");
            npm.args(["pack", "--loglevel=warn", pkg.trim(), "--pack-destination"])
                .arg(dir);
            run_step(npm, source).map_err(|why| missing(&why))?;
        } else if let Some(rest) = source.strip_prefix("sh installers/bundle.sh ") {
            if !on_path("npm") {
                return Err(missing(&format!("no npm on PATH to run `{source}`")));
            }
            let name = rest.split_whitespace().next().unwrap_or_default();
            let src = work.join("bundle-src/installers");
            for (rel, text) in BUNDLE_FILES {
                let p = src.join(rel);
                crate::files::write_atomic(&p, text.as_bytes(), crate::files::Mode::Data)
                    .map_err(|e| missing(&e.to_string()))?;
            }
            progress(&format!("building {} with `{source}`", a.path));
            let mut sh = Command::new("sh");
            sh.arg(src.join("bundle.sh")).arg(name).arg(&file);
            run_step(sh, source).map_err(|why| missing(&why))?;
        } else {
            return Err(missing("its spec names no source the smoke can run"));
        }
        let digest = sha256_file(&file).map_err(|e| missing(&e.to_string()))?;
        if digest != a.sha256 {
            let bad: PathBuf = file.with_extension("mismatch");
            let _ = std::fs::rename(&file, &bad);
            return Err(format!(
                "artifact {}: `{source}` gave sha256 {digest}, the spec pins {} (moved to {})",
                a.path,
                a.sha256,
                bad.display()
            ));
        }
        fetched.push(a.path.clone());
    }
    Ok(fetched)
}
