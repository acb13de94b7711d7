//! Which glibc loader a prepared program of each arch names (issue 21,
//! part 5): checked when a spec is built, so an aarch64 program never
//! ships pointing at x86_64's loader.

use super::{Artifact, SpecError};

/// The glibc loader of each arch a prepared program may be built for.
const GLIBC_LOADERS: &[(&str, &str)] = &[
    ("x86_64", "ld-linux-x86-64.so.2"),
    ("aarch64", "ld-linux-aarch64.so.1"),
];

/// A prepared program names its own arch's loader: an aarch64 program left
/// on the default `glibc/ld-linux-x86-64.so.2` would never start (the
/// kernel cannot run that loader there). Other loader names are the spec's
/// own business. Runs after the arch is folded (arm64 → aarch64).
pub(super) fn check_arch(i: usize, a: Artifact) -> Result<Artifact, SpecError> {
    let Some((_, want)) = GLIBC_LOADERS.iter().find(|(arch, _)| *arch == a.arch) else {
        return Ok(a);
    };
    for (k, r) in a.relocations.iter().enumerate() {
        let base = r.interpreter.rsplit('/').next().unwrap_or_default();
        if base != *want && GLIBC_LOADERS.iter().any(|(_, l)| *l == base) {
            return Err(SpecError::new(
                format!("artifact[{i}].relocate[{k}].interpreter"),
                format!(
                    "an {} program needs glibc/{want}, not {} (prepare.sh prints it)",
                    a.arch, r.interpreter
                ),
            ));
        }
    }
    Ok(a)
}
