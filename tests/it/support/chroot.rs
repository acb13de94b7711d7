//! Building chroots out of the host's own programs.

use std::fs;
use std::path::Path;
use std::process::Command;

/// Copy `program` (a symlink is copied as the file it leads to) and every
/// library `ldd` names for it into the chroot `root`, each at its own path.
/// A file already in the chroot is kept.
pub fn copy_with_libs(root: &Path, program: impl AsRef<Path>) {
    let program = program.as_ref();
    let mut files = vec![program.to_path_buf()];
    let out = super::run({
        let mut c = Command::new("ldd");
        c.arg(program);
        c
    });
    files.extend(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| line.split_whitespace().find(|w| w.starts_with('/')))
            .map(Into::into),
    );
    for file in files {
        let dest = root.join(file.strip_prefix("/").expect("an absolute path"));
        if dest.exists() {
            continue;
        }
        fs::create_dir_all(dest.parent().unwrap()).unwrap();
        fs::copy(&file, &dest).unwrap();
    }
}
