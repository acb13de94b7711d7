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
        .filter(|a| a.arch == "x86_64" && a.libc.as_str() != "musl")
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
