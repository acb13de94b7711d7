//! The uv the Python bundles' recipe (`installers/python-runtime/bundle.sh`)
//! installs their wheels with: found, or installed into the artifacts dir.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{check_dir, run_step};

/// The uv the Python bundles are built with: 0.13.9, the wheel pinned by
/// sha256 (`.ci/uv-tool.sh` pins the same).
pub const UV_VERSION: &str = "0.13.9";
const UV_REQUIREMENT: &str = "uv==0.13.9 \\\n    --hash=sha256:d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19\n";
/// Where `.ci/uv-tool.sh` puts its venv (used when its uv is 0.13.9):
/// `$SHFORGE_UV_VENV`, as that script reads it, or this.
const UV_SHARED: &str = "/var/cache/shforge/venv-uv";

fn uv_is_pinned(uv: &Path) -> bool {
    Command::new(uv)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout).starts_with(&format!("uv {UV_VERSION} "))
        })
}

/// The uv for `bundle.sh`: `$SHFORGE_UV` when set (bundle.sh checks its
/// version), else the venv of `.ci/uv-tool.sh` (`$SHFORGE_UV_VENV`,
/// default /var/cache/shforge/venv-uv) when it holds uv
/// 0.13.9, else `CACHE/.shforge-uv-0.13.9/bin/uv`, installed there first
/// when missing: a venv made by `python3 -m venv` in a stage dir, uv's
/// binary wheel from PyPI by `pip install --require-hashes
/// --only-binary=:all:`, checked with `uv --version`, then renamed into
/// place (a failed install leaves nothing). One line saying why on error.
pub fn ensure_uv(cache: &Path, progress: &mut dyn FnMut(&str)) -> Result<PathBuf, String> {
    if let Some(uv) = std::env::var_os("SHFORGE_UV") {
        return Ok(PathBuf::from(uv));
    }
    let shared = std::env::var_os("SHFORGE_UV_VENV")
        .map_or_else(|| PathBuf::from(UV_SHARED), PathBuf::from)
        .join("bin/uv");
    if uv_is_pinned(&shared) {
        return Ok(shared);
    }
    let home = cache.join(format!(".shforge-uv-{UV_VERSION}"));
    let uv = home.join("bin/uv");
    if uv_is_pinned(&uv) {
        return Ok(uv);
    }
    check_dir(cache).map_err(|e| e.to_string())?;
    let stage = cache.join(format!(".shforge-uv-stage-{}", std::process::id()));
    let _ = fs::remove_dir_all(&stage);
    progress(&format!(
        "no uv {UV_VERSION} (SHFORGE_UV unset, none at {}): installing it from PyPI \
         (binary wheel, sha256-pinned) into {}",
        shared.display(),
        home.display()
    ));
    let result = install_uv(&stage).and_then(|()| {
        if !uv_is_pinned(&stage.join("bin/uv")) {
            return Err(format!("the installed uv is not uv {UV_VERSION}"));
        }
        let _ = fs::remove_dir_all(&home);
        fs::rename(&stage, &home).map_err(|e| format!("moving uv into {}: {e}", home.display()))
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&stage);
    }
    result.map_err(|e| {
        format!(
            "cannot install uv {UV_VERSION} ({e}); install it with `sh .ci/uv-tool.sh` \
             and set SHFORGE_UV to the path it prints"
        )
    })?;
    progress(&format!("uv {UV_VERSION} ready at {}", uv.display()));
    Ok(uv)
}

fn install_uv(stage: &Path) -> Result<(), String> {
    let mut venv = Command::new("python3");
    venv.args(["-m", "venv"]).arg(stage);
    run_step(venv, "python3 -m venv")?;
    let req = stage.join("uv-requirements.txt");
    fs::write(&req, UV_REQUIREMENT).map_err(|e| format!("{}: {e}", req.display()))?;
    let mut pip = Command::new(stage.join("bin/pip"));
    pip.args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-cache-dir",
        "--require-hashes",
        "--only-binary=:all:",
        "-r",
    ])
    .arg(&req);
    run_step(pip, "pip install uv==0.13.9 --require-hashes")
}
