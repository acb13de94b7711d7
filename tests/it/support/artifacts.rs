//! The pinned harness artifacts the real-CLI tests install.

use std::path::PathBuf;

use shforge::harness::Harness;

/// The artifacts dir holding `h`'s x86_64 glibc artifacts, or None (said
/// loudly: "SKIPPING {h} {what} against the real CLI") when one is missing.
/// Like the smoke test: required under SHFORGE_REQUIRE_SHELLS=1 when
/// SHFORGE_SMOKE_ARTIFACTS names the dir (default /var/cache/shforge/artifacts).
pub fn artifacts_for(h: Harness, what: &str) -> Option<PathBuf> {
    let named = std::env::var_os("SHFORGE_SMOKE_ARTIFACTS");
    let dir = named.clone().map_or_else(
        || PathBuf::from("/var/cache/shforge/artifacts"),
        PathBuf::from,
    );
    let (_, text) = shforge::installer::HARNESS_SPECS
        .iter()
        .find(|(n, _)| *n == h.name())
        .expect("every harness has a spec");
    let spec = shforge::installer::InstallerSpec::from_toml(text).unwrap();
    let missing: Vec<String> = spec
        .artifacts
        .iter()
        .filter(|a| (a.arch == "x86_64" || a.arch == "any") && a.libc.as_str() != "musl")
        .map(|a| dir.join(&a.path))
        .filter(|p| !p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    if std::env::consts::ARCH == "x86_64" && missing.is_empty() {
        return Some(dir);
    }
    let why = format!(
        "SKIPPING {h} {what} against the real CLI: x86_64 only, missing {}",
        missing.join(", ")
    );
    if named.is_some() && std::env::var("SHFORGE_REQUIRE_SHELLS").is_ok_and(|v| v == "1") {
        panic!("{why}");
    }
    super::loud(&why);
    None
}

/// Install `h` from `artifacts` with its generated installer and return its
/// entry. One prefix for every real-CLI test, kept under CARGO_TARGET_TMPDIR
/// between runs: the installer reuses a checked install in < 1 s, and its
/// lock makes two tests installing the same harness at once take turns.
pub fn install(h: Harness, artifacts: &std::path::Path) -> String {
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
