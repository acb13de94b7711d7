//! The digest of the sources that decide what `shforge generate` writes:
//! every file under `templates/`, `installers/`, `harnesses/` and `src/`. Shared, through
//! `#[path]`, by `build.rs` (which records it in the binary) and by
//! [`crate::provenance`] (which computes it for a source tree).

use std::fs;
use std::io;
use std::path::Path;

use sha2::{Digest as _, Sha256};

/// The directories, relative to the crate root, whose files are digested.
pub const DIRS: [&str; 4] = ["templates", "installers", "harnesses", "src"];

/// Hex sha256 over every regular file under [`DIRS`] of `root`, in sorted
/// path order, each as its relative path, a NUL, its length, a NUL and its
/// bytes. Symlinks and other non-regular entries are skipped (a source tree
/// holds none).
pub fn digest(root: &Path) -> io::Result<String> {
    let mut files = Vec::new();
    for dir in DIRS {
        walk(root, &root.join(dir), &mut files)?;
    }
    files.sort();
    let mut hasher = Sha256::new();
    for rel in &files {
        let bytes = fs::read(root.join(rel))?;
        hasher.update(rel.as_bytes());
        hasher.update([0]);
        hasher.update(bytes.len().to_string().as_bytes());
        hasher.update([0]);
        hasher.update(&bytes);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> io::Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(root, &path, out)?;
        } else if kind.is_file() {
            let rel = path.strip_prefix(root).expect("walked under root");
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}
