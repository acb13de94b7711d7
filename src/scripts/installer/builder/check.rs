//! The rules each value of an installer holds, checked by
//! [`InstallerBuilder::build`](super::InstallerBuilder::build): each refusal
//! names the field as the TOML spec does.

use super::*;

pub(super) fn check_artifact(i: usize, mut a: Artifact) -> Result<Artifact, SpecError> {
    let f = |field: &str| format!("artifact[{i}].{field}");
    check_rel_path(&f("path"), &a.path)?;
    let sha = a.sha256.to_ascii_lowercase();
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(SpecError::new(f("sha256"), "expected 64 hex digits"));
    }
    if sha.bytes().all(|b| b == b'0') || sha.bytes().all(|b| b == sha.as_bytes()[0]) {
        return Err(SpecError::new(
            f("sha256"),
            "looks like a placeholder: pin the digest of the real artifact",
        ));
    }
    a.sha256 = sha;
    // The script folds `uname -m` the same way (templates/lib/select.sh), so
    // a spec's amd64/arm64 must match what the machine reports.
    a.arch = match a.arch.as_str() {
        "amd64" => "x86_64".into(),
        "arm64" => "aarch64".into(),
        other => other.to_owned(),
    };
    if !KNOWN_ARCHES.contains(&a.arch.as_str()) {
        return Err(SpecError::new(
            f("arch"),
            format!(
                "expected a `uname -m` value ({}; amd64 and arm64 are folded), got {:?}",
                KNOWN_ARCHES.join(", "),
                a.arch
            ),
        ));
    }
    match (a.unpack, &a.mode) {
        (Unpack::File, None) => a.mode = Some("755".into()),
        (Unpack::File, Some(m)) => check_mode(&f("mode"), m)?,
        (_, Some(_)) => {
            return Err(SpecError::new(
                f("mode"),
                "only a `file` artifact has a mode",
            ));
        }
        (_, None) => {}
    }
    if a.size == Some(0) {
        return Err(SpecError::new(
            f("size"),
            "expected the artifact's size in bytes, got 0",
        ));
    }
    if let Some(n) = a.size.filter(|n| *n > MAX_SIZE) {
        return Err(SpecError::new(f("size"), size_too_big(n)));
    }
    match (&a.subdir, a.unpack) {
        (Some(_), Unpack::File) => {
            return Err(SpecError::new(f("subdir"), "only an archive has a subdir"));
        }
        (Some(s), _) => check_rel_path(&f("subdir"), s)?,
        (None, _) => {}
    }
    match (&a.dest, a.unpack) {
        (Some(d), _) => check_rel_path(&f("dest"), d)?,
        (None, Unpack::File) => {
            let base = a.path.rsplit('/').next().unwrap_or(&a.path).to_owned();
            a.dest = Some(base);
        }
        (None, _) => {}
    }
    if !a.relocations.is_empty() && a.runtime != Runtime::Private {
        return Err(SpecError::new(
            f("relocate"),
            "only a `runtime = \"private\"` artifact has prepared programs",
        ));
    }
    for (k, r) in a.relocations.iter_mut().enumerate() {
        check_relocation(&format!("artifact[{i}].relocate[{k}]"), r)?;
    }
    if !a.chmods.is_empty() && a.unpack == Unpack::File {
        return Err(SpecError::new(
            f("chmod"),
            "only an archive has files to chmod (a `file` artifact has `mode`)",
        ));
    }
    for (k, (path, mode)) in a.chmods.iter().enumerate() {
        check_rel_path(&f(&format!("chmod[{k}].path")), path)?;
        check_mode(&f(&format!("chmod[{k}].mode")), mode)?;
    }
    Ok(a)
}

/// An octal mode of 3 or 4 digits without setuid, setgid or sticky bits.
fn check_mode(field: &str, m: &str) -> Result<(), SpecError> {
    let ok = (3..=4).contains(&m.len()) && m.bytes().all(|b| (b'0'..=b'7').contains(&b));
    if !ok {
        return Err(SpecError::new(
            field,
            format!("expected an octal mode such as \"755\", got {m:?}"),
        ));
    }
    if m.len() == 4 && !m.starts_with('0') {
        return Err(SpecError::new(
            field,
            format!("{m:?} sets setuid, setgid or sticky bits, which never land in an install"),
        ));
    }
    Ok(())
}

/// The largest placeholder accepted (a path of the kernel's PATH_MAX).
const MAX_PLACEHOLDER: u64 = 4096;

fn check_relocation(field: &str, r: &mut Relocation) -> Result<(), SpecError> {
    let f = |name: &str| format!("{field}.{name}");
    check_rel_path(&f("file"), &r.file)?;
    check_rel_path(&f("interpreter"), &r.interpreter)?;
    if r.rpath.is_empty() {
        return Err(SpecError::new(
            f("rpath"),
            "at least one install-relative directory",
        ));
    }
    for (k, d) in r.rpath.iter().enumerate() {
        check_rel_path(&f(&format!("rpath[{k}]")), d)?;
        if d.contains(':') {
            return Err(SpecError::new(
                f(&format!("rpath[{k}]")),
                "a `:` separates library path entries",
            ));
        }
    }
    for (name, size) in [("interp_size", r.interp_size), ("rpath_size", r.rpath_size)] {
        if !(2..=MAX_PLACEHOLDER).contains(&size) {
            return Err(SpecError::new(
                f(name),
                format!("expected 2 to {MAX_PLACEHOLDER} bytes, got {size}"),
            ));
        }
    }
    let overlap = r.interp_offset < r.rpath_offset + r.rpath_size
        && r.rpath_offset < r.interp_offset + r.interp_size;
    if overlap {
        return Err(SpecError::new(
            f("rpath_offset"),
            "the two placeholders overlap",
        ));
    }
    let sha = r.zeroed_sha256.to_ascii_lowercase();
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(SpecError::new(f("zeroed_sha256"), "expected 64 hex digits"));
    }
    r.zeroed_sha256 = sha;
    let ok = r.glibc.split_once('.').is_some_and(|(a, b)| {
        [a, b]
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 4 && p.bytes().all(|c| c.is_ascii_digit()))
    });
    if !ok {
        return Err(SpecError::new(
            f("glibc"),
            format!(
                "expected a glibc version such as \"2.28\", got {:?}",
                r.glibc
            ),
        ));
    }
    Ok(())
}

pub(super) fn check_name(field: &str, v: &str) -> Result<(), SpecError> {
    let ok = v
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && v.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(SpecError::new(
            field,
            format!("expected [a-z0-9][a-z0-9_-]* (it names files), got {v:?}"),
        ))
    }
}

/// Bytes the installer adds around `NAME-VERSION`: `.` before, and
/// `.stage.` (the longest suffix) plus a PID of up to 10 digits after.
const FILE_NAME_OVERHEAD: usize = 1 + ".stage.".len() + 10;

pub(super) fn check_file_name_length(name: &str, version: &str) -> Result<(), SpecError> {
    let longest = name.len() + 1 + version.len() + FILE_NAME_OVERHEAD;
    if longest <= MAX_FILE_NAME {
        return Ok(());
    }
    let room = MAX_FILE_NAME - FILE_NAME_OVERHEAD - 1;
    let field = if name.len() >= version.len() {
        "name"
    } else {
        "version"
    };
    Err(SpecError::new(
        field,
        format!(
            "NAME-VERSION is {} bytes; with the installer's suffixes (`.NAME-VERSION.stage.PID`, `.lock`) \
             file names would pass {MAX_FILE_NAME} bytes: name and version together may have at most {room}",
            name.len() + 1 + version.len()
        ),
    ))
}

pub(super) fn check_version(field: &str, v: &str) -> Result<(), SpecError> {
    let ok = v.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(SpecError::new(
            field,
            format!("expected letters, digits and . _ + - (it names the install dir), got {v:?}"),
        ))
    }
}

/// A relative path made of safe segments (see [`crate::RelPath`]).
pub(super) fn check_rel_path(field: &str, v: &str) -> Result<(), SpecError> {
    crate::names::RelPath::new(v)
        .map(drop)
        .map_err(|e| SpecError::new(field, e.to_string()))
}

pub(super) fn check_text(field: &str, v: &str) -> Result<(), SpecError> {
    if v.contains('\0') {
        return Err(SpecError::new(
            field,
            "contains a NUL byte, which no shell can hold",
        ));
    }
    Ok(())
}

/// Why a size above [`MAX_SIZE`] is refused.
fn size_too_big(n: u64) -> String {
    format!(
        "{n} is more than {MAX_SIZE} (2^63 - 2), the largest size the installer's bash arithmetic can compare"
    )
}
