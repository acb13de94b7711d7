//! The Python bundle rows of `shforge pin`: a bundle built by
//! `installers/bundle.sh NAME FILE` from the wheel lock in
//! `installers/bundles/NAME/` (`requirements.in` → `requirements.txt` with
//! hashes). The version is asked of PyPI first; the lock is made again by
//! the pinned uv for the bundle's Python; the bundle is built by the same
//! recipe (`python-runtime/bundle.sh`, run from the stage's copy of the
//! scripts whose lock is the new one); the modules its entry imports must
//! be in the new bundle.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::{Count, Made, PinError};
use crate::shipped::SCRIPT_FILES;

use super::text::bundle_file as shipped;

/// Whether KIND's dir of installers/bundles is a Python bundle (a wheel lock).
pub(super) fn is_python(kind: &str) -> bool {
    shipped(kind, "requirements.txt").is_some() && shipped(kind, "requirements.in").is_some()
}

/// The new `requirements.in`: each `PKG==OLD` line at `new`, and the
/// packages so moved (asked of PyPI before anything is built).
pub(super) fn new_requirements_in(
    kind: &str,
    old: &str,
    new: &str,
    name: &str,
) -> Result<(String, Vec<String>), PinError> {
    let text = shipped(kind, "requirements.in").unwrap_or_default();
    let mut out = String::new();
    let mut pkgs = Vec::new();
    for l in text.lines() {
        let t = l.split('#').next().unwrap_or("").trim();
        match t.split_once("==") {
            Some((p, v)) if v.trim() == old && !p.trim().is_empty() => {
                pkgs.push(p.trim().to_owned());
                out.push_str(&format!("{}=={new}\n", p.trim()));
            }
            _ => {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    if pkgs.is_empty() {
        return Err(PinError::Usage(format!(
            "{name}: installers/bundles/{kind}/requirements.in pins no package at {old}; \
             nothing to move"
        )));
    }
    Ok((out, pkgs))
}

/// Ask PyPI (`/pypi/PKG/json`) whether `pkg` has release `version` with
/// files not all yanked: [`PinError::NotFound`] when it has not (or has no
/// such project), [`PinError::Failed`] when PyPI cannot be reached.
pub(super) fn check_release(pkg: &str, version: &str, name: &str) -> Result<(), PinError> {
    let url = format!("https://pypi.org/pypi/{pkg}/json");
    let probe = "import json, sys, urllib.request, urllib.error\n\
                 try:\n    d = json.load(urllib.request.urlopen(sys.argv[1], timeout=60))\n\
                 except urllib.error.HTTPError as e:\n    print(e.code)\n    sys.exit()\n\
                 files = d.get('releases', {}).get(sys.argv[2]) or []\n\
                 print('200' if any(not f.get('yanked') for f in files) else '404')\n";
    let got = Command::new("python3")
        .args(["-I", "-c", probe, &url, version])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| PinError::Failed(format!("python3: {e} (shforge pin asks PyPI with it)")))?;
    let code = String::from_utf8_lossy(&got.stdout).trim().to_owned();
    match code.as_str() {
        "200" => Ok(()),
        "404" => Err(PinError::NotFound(format!(
            "{name}@{version}: PyPI has no {pkg}=={version} (or only yanked files); nothing written"
        ))),
        _ => Err(PinError::Failed(format!(
            "{name}@{version}: cannot ask PyPI about {pkg}=={version} ({})",
            if code.is_empty() { "no answer" } else { &code }
        ))),
    }
}

/// The Python a bundle is for: the `X.Y` of the `python` file in KIND's dir of installers/bundles, or 3.11.
fn python_version(kind: &str) -> String {
    shipped(kind, "python")
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or("3.11")
        .to_owned()
}

/// A clean environment for uv: no UV_*, PIP_* or PYTHON* of the caller,
/// only the way out to PyPI (CA bundle, proxy).
fn clean_env(cmd: &mut Command, home: &Path) {
    cmd.env_clear();
    for v in [
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "https_proxy",
        "HTTPS_PROXY",
        "no_proxy",
        "NO_PROXY",
    ] {
        if let Some(x) = std::env::var_os(v) {
            cmd.env(v, x);
        }
    }
    cmd.env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("UV_CACHE_DIR", home.join("uv-cache"))
        .env("UV_PYTHON_DOWNLOADS", "never")
        .env("UV_NO_CONFIG", "1");
}

/// Lock `dir/requirements.in` again into `dir/requirements.txt` with
/// hashes: `uv pip compile --generate-hashes` for the bundle's Python on
/// x86_64 manylinux_2_28, binary wheels only (the shipped locks' recipe;
/// `--excludes excludes.txt` where the bundle has one).
#[allow(clippy::too_many_arguments)]
pub(super) fn relock(
    dir: &Path,
    kind: &str,
    uv: &Path,
    home: &Path,
    at: &str,
    count: &mut Count,
    progress: &mut dyn FnMut(&str),
) -> Result<(), PinError> {
    let step = count.next();
    let pyver = python_version(kind);
    progress(&format!(
        "{step} uv pip compile --generate-hashes --python-version {pyver} ({kind})"
    ));
    let t = Instant::now();
    let host_py =
        std::env::var("SHFORGE_HOST_PYTHON").unwrap_or_else(|_| "/usr/bin/python3.11".into());
    fs::create_dir_all(home).map_err(|e| PinError::Failed(format!("{}: {e}", home.display())))?;
    let mut c = Command::new(uv);
    clean_env(&mut c, home);
    c.current_dir(dir).args([
        "pip",
        "compile",
        "--no-config",
        "--quiet",
        "--python",
        &host_py,
        "--python-version",
        &pyver,
        "--python-platform",
        "x86_64-manylinux_2_28",
        "--generate-hashes",
        "--only-binary",
        ":all:",
        "--index-url",
        "https://pypi.org/simple",
        "--custom-compile-command",
        &format!("shforge pin {at}"),
    ]);
    if dir.join("excludes.txt").is_file() {
        c.args(["--excludes", "excludes.txt"]);
    }
    c.args(["requirements.in", "-o", "requirements.txt"]);
    let got = c
        .stdin(Stdio::null())
        .output()
        .map_err(|e| PinError::Failed(format!("{}: {e}", uv.display())))?;
    if !got.status.success() {
        let err = String::from_utf8_lossy(&got.stderr);
        let line = err
            .lines()
            .map(str::trim)
            .find(|l| l.contains("error") || l.contains("No solution"))
            .or_else(|| err.lines().map(str::trim).rfind(|l| !l.is_empty()))
            .unwrap_or("no message");
        return Err(PinError::Failed(format!(
            "{at}: uv pip compile cannot lock {kind}'s requirements for Python {pyver}: {line}"
        )));
    }
    progress(&format!(
        "{step} requirements.txt locked ({} pins, {:.1} s)",
        fs::read_to_string(dir.join("requirements.txt"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("==") && !l.starts_with('#'))
            .count(),
        t.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// Build the bundle `path` with `scripts/bundle.sh KIND` (the stage's
/// scripts, whose lock is the new one) into `dir`; `uv` for a Python one.
#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    scripts: &Path,
    kind: &str,
    path: &str,
    dir: &Path,
    uv: Option<&Path>,
    count: &mut Count,
    progress: &mut dyn FnMut(&str),
) -> Result<Made, PinError> {
    let step = count.next();
    progress(&format!("{step} bundle.sh {kind} {path}"));
    let t = Instant::now();
    fs::create_dir_all(dir).map_err(|e| PinError::Failed(format!("{}: {e}", dir.display())))?;
    let out = dir.join(path);
    let mut sh = Command::new("sh");
    if let Some(uv) = uv {
        sh.env("SHFORGE_UV", uv);
    }
    let status = sh
        .arg(scripts.join("bundle.sh"))
        .arg(kind)
        .arg(&out)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| PinError::Failed(format!("sh: {e}")))?;
    if !status.success() || !out.is_file() {
        return Err(PinError::Failed(format!(
            "artifact {path}: `sh installers/bundle.sh {kind} {path}` failed: {status}"
        )));
    }
    let (size, sha256) = super::npm::measure(&out)?;
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
        relocate: None,
    })
}

/// The modules the bundle's entry imports (`entry`'s MODULE, or the
/// non-standard `import`/`from` lines of its `boot.py`).
fn entry_modules(kind: &str) -> Result<Vec<String>, PinError> {
    // bundle.sh runs the bundle's own boot.py where there is one, else
    // the one it writes for `entry`.
    let Some(boot) = shipped(kind, "boot.py") else {
        let e = shipped(kind, "entry").unwrap_or_default();
        return Ok(vec![e.trim().split(':').next().unwrap_or("").to_owned()]);
    };
    let got = Command::new("python3")
        .args([
            "-I",
            "-c",
            "import sys; print('\\n'.join(sys.stdlib_module_names))",
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| PinError::Failed(format!("python3: {e}")))?;
    let std: BTreeSet<String> = String::from_utf8_lossy(&got.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let mut mods = BTreeSet::new();
    for l in boot.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let m = match w.as_slice() {
            ["from", m, "import", ..] | ["import", m, ..] => m.trim_end_matches(','),
            _ => continue,
        };
        let top = m.split('.').next().unwrap_or("");
        if !top.is_empty() && !top.starts_with('_') && !std.contains(top) && !m.starts_with('.') {
            mods.insert(m.to_owned());
        }
    }
    Ok(mods.into_iter().collect())
}

/// Each module the entry imports must be in the new bundle's
/// site-packages (a `.py`, a package dir or an extension module), else a
/// [`PinError::Layout`].
pub(super) fn check_layout(
    m: &Made,
    kind: &str,
    name: &str,
    version: &str,
) -> Result<(), PinError> {
    let names: Vec<String> = super::text::archive_names(m)?
        .into_iter()
        .map(|l| l.trim_end_matches('/').to_owned())
        .collect();
    for module in entry_modules(kind)? {
        let base = format!("site-packages/{}", module.replace('.', "/"));
        let found = names.iter().any(|n| {
            *n == base
                || n.strip_prefix(&base)
                    .is_some_and(|r| r.starts_with('.') && !r.contains('/'))
        });
        if !found {
            return Err(PinError::Layout(format!(
                "{name}@{version}: {} has no module {module} (the bundle's entry imports it): \
                 the package's layout changed; write this version's boot.py by hand; nothing written",
                m.path
            )));
        }
    }
    Ok(())
}

/// The files of the stage's `bundles/KIND/` to write next to the new spec:
/// every file with `--out` (self-contained), only the two lock files in
/// place.
pub(super) fn lock_files(
    stage_dir: &Path,
    kind: &str,
    all: bool,
) -> Result<Vec<(String, String)>, PinError> {
    let prefix = format!("bundles/{kind}/");
    let mut out = Vec::new();
    for (rel, _) in SCRIPT_FILES {
        let Some(f) = rel.strip_prefix(&prefix) else {
            continue;
        };
        let lock = [
            "requirements.in",
            "requirements.txt",
            "package.json",
            "package-lock.json",
        ];
        if !all && !lock.contains(&f) {
            continue;
        }
        let p = stage_dir.join(f);
        let t = fs::read_to_string(&p)
            .map_err(|e| PinError::Failed(format!("{}: {e}", p.display())))?;
        out.push((format!("installers/{rel}"), t));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pinned_package_moves_and_a_lock_without_one_is_refused() {
        let (t, p) = new_requirements_in("nooa", "0.0.10", "0.0.9", "nooa").unwrap();
        assert_eq!(p, ["nooa", "nooa-cli"]);
        assert_eq!(t, "nooa==0.0.9\nnooa-cli==0.0.9\n");
        let e = new_requirements_in("stirrup", "9.9.9", "1.0", "stirrup").unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn the_entry_modules_are_the_non_standard_imports_of_boot_py() {
        assert!(is_python("hermes") && is_python("mini-swe-agent") && !is_python("pi"));
        let m = entry_modules("mini-swe-agent").unwrap();
        assert!(
            m.contains(&"minisweagent.models.litellm_model".to_owned()),
            "{m:?}"
        );
        assert!(
            !m.iter().any(|x| x == "os" || x == "importlib.metadata"),
            "{m:?}"
        );
        let h = entry_modules("hermes").unwrap();
        assert!(h.contains(&"hermes_cli.main".to_owned()), "{h:?}");
    }
}
