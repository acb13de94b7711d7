//! The pinned harness artifacts the real-CLI tests install.

use std::path::{Path, PathBuf};

use shforge::harness::Harness;
use shforge::installer::InstallerSpec;
use shforge::installer::spec::ArtifactSpec;

/// The artifacts dir holding `h`'s x86_64 glibc artifacts, or None (said
/// loudly: "SKIPPING {h} {what} against the real CLI") when one is missing.
/// Like the smoke test: required under SHFORGE_REQUIRE_SHELLS=1 when
/// SHFORGE_SMOKE_ARTIFACTS names the dir (default /var/cache/shforge/artifacts).
pub fn artifacts_for(h: Harness, what: &str) -> Option<PathBuf> {
    let named = std::env::var_os("SHFORGE_SMOKE_ARTIFACTS");
    let dir = artifacts_dir();
    let spec = shipped_spec(h.name());
    let missing = missing(
        &dir,
        spec.artifacts
            .iter()
            .filter(|a| (a.arch == "x86_64" || a.arch == "any") && a.libc.as_str() != "musl"),
    );
    if std::env::consts::ARCH == "x86_64" && missing.is_none() {
        return Some(dir);
    }
    let why = format!(
        "SKIPPING {h} {what} against the real CLI: x86_64 only, missing {}",
        missing.unwrap_or_default()
    );
    if named.is_some() && std::env::var("SHFORGE_REQUIRE_SHELLS").is_ok_and(|v| v == "1") {
        panic!("{why}");
    }
    super::loud(&why);
    None
}

/// The artifacts dir the real-CLI tests read: SHFORGE_SMOKE_ARTIFACTS, else
/// /var/cache/shforge/artifacts.
pub fn artifacts_dir() -> PathBuf {
    std::env::var_os("SHFORGE_SMOKE_ARTIFACTS").map_or_else(
        || PathBuf::from("/var/cache/shforge/artifacts"),
        PathBuf::from,
    )
}

/// The shipped installer spec of `name`.
pub fn shipped_spec(name: &str) -> InstallerSpec {
    let (_, text) = shforge::installer::HARNESS_SPECS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("{name}: no shipped installer spec"));
    InstallerSpec::from_toml(text).unwrap()
}

/// The files of `rows` that `dir` lacks, joined for a message; None when
/// every one is there.
pub fn missing<'a>(dir: &Path, rows: impl IntoIterator<Item = &'a ArtifactSpec>) -> Option<String> {
    let gone: Vec<String> = rows
        .into_iter()
        .map(|a| dir.join(&a.path))
        .filter(|p| !p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    (!gone.is_empty()).then(|| gone.join(", "))
}

/// Install `h` from `artifacts` with its generated installer and return its
/// entry. One prefix for every real-CLI test, kept under CARGO_TARGET_TMPDIR
/// between runs: the installer reuses a checked install in < 1 s, and its
/// lock makes two tests installing the same harness at once take turns.
pub fn install(h: Harness, artifacts: &Path) -> String {
    let prefix = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("real-cli-installs");
    let out = super::run({
        let mut c = std::process::Command::new("bash");
        c.arg(super::root().join(format!("generated/installers/{h}.sh")))
            .arg("--prefix")
            .arg(&prefix)
            .arg("--source-dir")
            .arg(artifacts);
        c
    });
    assert!(out.status.success(), "{h} install: {out:?}");
    let entry = String::from_utf8(out.stdout).unwrap();
    entry.lines().last().unwrap().trim().to_owned()
}
