//! The files a test works on: the crate's own, and copies of them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The crate root (where `generated/` and `templates/` live).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copy the directory tree `from` to `to` (created), following symlinks.
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &dest);
        } else {
            fs::copy(&path, &dest).unwrap();
        }
    }
}

/// `tar -czf OUT -C SRC .` with the system tar; the archive's bytes.
pub fn tar_gz_dir(src: &Path, out: &Path) -> Vec<u8> {
    let st = Command::new("tar")
        .arg("-czf")
        .arg(out)
        .arg("-C")
        .arg(src)
        .arg(".")
        .status()
        .unwrap();
    assert!(st.success(), "tar -czf {}", out.display());
    fs::read(out).unwrap()
}
