//! The Node bundle rows of `shforge pin` (Pi, OpenClaw): a bundle built by
//! `installers/bundle.sh NAME FILE` from `installers/bundles/NAME/`'s
//! `package.json` and `package-lock.json`. The version is asked of npm
//! first; `package.json` gets it and the lock is made again by `npm install
//! --package-lock-only --ignore-scripts` (the registry's integrity pinned
//! in it); the bundle is built by the same recipe (`npm ci` from that lock).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::{Count, PinError};

use super::text::bundle_file as shipped;

/// Whether KIND's dir of installers/bundles is a Node bundle (a package lock).
pub(super) fn is_node(kind: &str) -> bool {
    shipped(kind, "package.json").is_some() && shipped(kind, "package-lock.json").is_some()
}

/// The new `package.json`: each dependency at exactly `old` moved to
/// `new`, and the packages so moved.
pub(super) fn new_package_json(
    kind: &str,
    old: &str,
    new: &str,
    name: &str,
) -> Result<(String, Vec<String>), PinError> {
    let text = shipped(kind, "package.json").unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| PinError::Failed(format!("installers/bundles/{kind}/package.json: {e}")))?;
    let pkgs: Vec<String> = v
        .get("dependencies")
        .and_then(|d| d.as_object())
        .map(|d| {
            d.iter()
                .filter(|(_, x)| x.as_str() == Some(old))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    if pkgs.is_empty() {
        return Err(PinError::Usage(format!(
            "{name}: installers/bundles/{kind}/package.json pins no dependency at {old}; \
             nothing to move"
        )));
    }
    let mut out = text.to_owned();
    for p in &pkgs {
        out = out.replace(
            &format!("\"{p}\": \"{old}\""),
            &format!("\"{p}\": \"{new}\""),
        );
    }
    Ok((out, pkgs))
}

/// `npm view PKG@VERSION version`: [`PinError::NotFound`] when npm has no
/// such release.
pub(super) fn check_release(pkg: &str, version: &str, name: &str) -> Result<(), PinError> {
    let at = format!("{pkg}@{version}");
    let got = Command::new("npm")
        .args(["view", "--json", &at, "version"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| PinError::Failed(format!("npm: {e} (shforge pin needs npm on PATH)")))?;
    let out = String::from_utf8_lossy(&got.stdout);
    let err = String::from_utf8_lossy(&got.stderr);
    if out.contains("E404")
        || err.contains("E404")
        || (got.status.success() && out.trim().is_empty())
    {
        return Err(PinError::NotFound(format!(
            "{name}@{version}: npm has no {at}; nothing written"
        )));
    }
    if !got.status.success() {
        return Err(PinError::Failed(format!(
            "{name}@{version}: cannot ask the npm registry about {at}"
        )));
    }
    if out.trim() != format!("\"{version}\"") {
        return Err(PinError::Usage(format!(
            "{name}@{version}: npm resolves {at} to {}; give that exact version",
            out.trim()
        )));
    }
    Ok(())
}

/// Lock `dir/package.json` again into `dir/package-lock.json`: `npm
/// install --package-lock-only --ignore-scripts` (nothing installed or
/// run; the registry's integrity of every package written in the lock).
pub(super) fn relock(
    dir: &Path,
    at: &str,
    count: &mut Count,
    progress: &mut dyn FnMut(&str),
) -> Result<(), PinError> {
    let step = count.next();
    progress(&format!("{step} npm install --package-lock-only ({at})"));
    let t = Instant::now();
    let _ = std::fs::remove_file(dir.join("package-lock.json"));
    let got = Command::new("npm")
        .args([
            "install",
            "--package-lock-only",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| PinError::Failed(format!("npm: {e}")))?;
    if !got.status.success() || !dir.join("package-lock.json").is_file() {
        let err = String::from_utf8_lossy(&got.stderr);
        let line = err
            .lines()
            .find(|l| l.contains("npm error") && !l.contains("complete log"))
            .unwrap_or("no message")
            .trim();
        return Err(PinError::Failed(format!(
            "{at}: npm cannot lock the bundle's package.json: {line}"
        )));
    }
    progress(&format!(
        "{step} package-lock.json locked ({:.1} s)",
        t.elapsed().as_secs_f64()
    ));
    Ok(())
}
