//! The registry side of `shforge pin`: `npm view`, `npm pack`, integrity.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::{Count, Made, PinError, Request};
use crate::installer::spec::ArtifactSpec;

/// One `npm pack` row: the file already in the artifacts dir when it
/// matches the registry's `dist.integrity` (not downloaded again), else
/// packed into `dir` and checked against it.
pub(super) fn row(
    req: &Request,
    at: &str,
    path: &str,
    integrity: Option<&str>,
    dir: &Path,
    count: &mut Count,
    progress: &mut dyn FnMut(&str),
) -> Result<Made, PinError> {
    let step = count.next();
    let cached = req.artifacts.join(path);
    if let Some(want) = integrity
        && cached.is_file()
        && check_integrity(&cached, want, at).is_ok()
    {
        let (size, sha256) = measure(&cached)?;
        progress(&format!(
            "{step} {path}: in the artifacts dir, matching the registry's dist.integrity"
        ));
        return Ok(Made {
            file: cached,
            path: path.to_owned(),
            size,
            sha256,
            relocate: None,
        });
    }
    progress(&format!("{step} npm pack {at}"));
    let t = Instant::now();
    let m = pack(at, path, dir)?;
    if let Some(want) = integrity {
        check_integrity(&m.file, want, at)?;
    }
    progress(&format!(
        "{step} {} ({:.1} MB, {:.1} s)",
        m.path,
        m.size as f64 / 1e6,
        t.elapsed().as_secs_f64()
    ));
    Ok(m)
}

/// `npm view PKG@VERSION dist.integrity`: the registry's integrity, or a
/// [`PinError::NotFound`] naming the package (a missing version or
/// platform package), or [`PinError::Failed`] when npm cannot reach it.
pub(super) fn view(
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
        PinError::NotFound(format!(
            "{name}@{version}: npm has no {at}{what}; nothing written"
        ))
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
fn pack(at: &str, path: &str, dir: &Path) -> Result<Made, PinError> {
    fs::create_dir_all(dir).map_err(|e| PinError::Failed(format!("{}: {e}", dir.display())))?;
    let got = Command::new("npm")
        .args([
            "pack",
            "--loglevel=warn",
            "--json",
            at,
            "--pack-destination",
        ])
        .arg(dir)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| PinError::Failed(format!("npm: {e}")))?;
    if !got.status.success() {
        return Err(PinError::Failed(format!(
            "`npm pack {at}` failed: {}",
            got.status
        )));
    }
    let v: serde_json::Value = serde_json::from_slice(&got.stdout)
        .map_err(|e| PinError::Failed(format!("`npm pack {at}`: unreadable output: {e}")))?;
    let file = v
        .get(0)
        .and_then(|x| x.get("filename"))
        .and_then(|x| x.as_str())
        .ok_or_else(|| PinError::Failed(format!("`npm pack {at}` named no file")))?;
    let packed = dir.join(file.trim_start_matches('@').replace('/', "-"));
    let packed = if packed.is_file() {
        packed
    } else {
        dir.join(file)
    };
    let out = dir.join(path);
    if packed != out {
        fs::rename(&packed, &out).map_err(|e| {
            PinError::Failed(format!(
                "`npm pack {at}` wrote no {}: {e}",
                packed.display()
            ))
        })?;
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

pub(super) fn measure(file: &Path) -> Result<(u64, String), PinError> {
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
    let mut f =
        fs::File::open(file).map_err(|e| PinError::Failed(format!("{}: {e}", file.display())))?;
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

pub(super) fn base64(bytes: &[u8]) -> String {
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
