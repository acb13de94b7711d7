//! The aarch64 rows of the shipped specs, installed by hand for
//! `qemu-aarch64-static` (arm_python.rs, arm_bun.rs): the generated
//! installer cannot finish on this x86_64 host, whose entry check would
//! exec an arm64 program without a binfmt handler.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use shforge::installer::spec::ArtifactSpec;

use super::artifacts::{artifacts_dir, missing};
use super::output::{code, run};

/// qemu's user-mode emulator, from Debian's qemu-user-static.
pub const QEMU: &str = "qemu-aarch64-static";

/// A group of qemu tests: skipped loudly without what they need, unless
/// the environment variable `require` is 1 or a comma-separated list of
/// harness names holding the one skipped.
pub struct Gate<'a> {
    /// What is skipped, for the line ("the aarch64 Python runtimes").
    pub what: &'a str,
    /// The variable that forbids skipping.
    pub require: &'a str,
}

impl Gate<'_> {
    /// Say why `name`'s case is skipped; panic instead when required.
    pub fn skip(&self, name: &str, why: &str) {
        let line = format!("SKIPPING {} under qemu: {name}: {why}", self.what);
        let required =
            std::env::var(self.require).is_ok_and(|v| v == "1" || v.split(',').any(|n| n == name));
        if required {
            panic!("{line} ({}=1 forbids skipping)", self.require);
        }
        super::loud(&line);
    }

    /// qemu-aarch64-static on PATH, or None (`name`'s case skipped).
    pub fn qemu(&self, name: &str) -> Option<PathBuf> {
        let found = super::which(QEMU);
        if found.is_none() {
            self.skip(
                name,
                "no qemu-aarch64-static on PATH (apt-get install qemu-user-static)",
            );
        }
        found
    }
}

/// Stdout and stderr together, for `contains` checks and messages.
pub fn both(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `sha256sum FILE` (the debug build's own sha2 takes seconds for the
/// 150 MB programs).
pub fn sha256_file(file: &Path) -> String {
    let o = run({
        let mut c = Command::new("sha256sum");
        c.arg(file);
        c
    });
    assert_eq!(code(&o), 0, "sha256sum {}: {}", file.display(), both(&o));
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// The text relocate.sh expects in a placeholder of `size` bytes.
fn marker(tag: &str, size: u64) -> Vec<u8> {
    let mut m = format!("/@shforge-{tag}-placeholder@/");
    while m.len() < (size - 1) as usize {
        m.push('x');
    }
    m.truncate((size - 1) as usize);
    m.into_bytes()
}

/// Install `rows` of `name` under `root` as the installer lays them out:
/// each file's digest checked against its row, unpacked at its `dest`, and
/// each `[[artifact.relocate]]` program relocated for an install at `root`
/// as `templates/lib/relocate.sh` does it (the placeholders at the table's
/// offsets, the file with them zeroed of the table's `zeroed_sha256`, then
/// the aarch64 loader and library path written there). The last relocated
/// program, or None when an artifact is missing (skipped through `gate`).
pub fn install(gate: &Gate, name: &str, rows: &[&ArtifactSpec], root: &Path) -> Option<PathBuf> {
    let dir = artifacts_dir();
    if let Some(gone) = missing(&dir, rows.iter().copied()) {
        gate.skip(
            name,
            &format!("missing {gone} (`shforge fetch {name} --arch aarch64 --into DIR`)"),
        );
        return None;
    }
    let mut program = None;
    for a in rows {
        let file = dir.join(&a.path);
        assert_eq!(
            sha256_file(&file),
            a.sha256,
            "{}: not the pinned file",
            a.path
        );
        let dest = root.join(a.dest.as_deref().unwrap_or(""));
        fs::create_dir_all(&dest).unwrap();
        let o = run({
            let mut c = Command::new("tar");
            c.arg("-xzf").arg(&file).arg("-C").arg(&dest);
            c
        });
        assert_eq!(code(&o), 0, "unpacking {}: {}", a.path, both(&o));
        for r in &a.relocate {
            let f = dest.join(&r.file);
            let mut b = fs::read(&f).unwrap();
            let (io, is) = (r.interp_offset as usize, r.interp_size as usize);
            let (ro, rs) = (r.rpath_offset as usize, r.rpath_size as usize);
            let text = |s: &[u8]| s.iter().copied().filter(|c| *c != 0).collect::<Vec<u8>>();
            let what = &r.file;
            assert_eq!(
                text(&b[io..io + is]),
                marker("interp", r.interp_size),
                "{what}: interp placeholder"
            );
            assert_eq!(
                text(&b[ro..ro + rs]),
                marker("rpath", r.rpath_size),
                "{what}: rpath placeholder"
            );
            b[io..io + is].fill(0);
            b[ro..ro + rs].fill(0);
            fs::write(&f, &b).unwrap();
            assert_eq!(sha256_file(&f), r.zeroed_sha256, "{what}: zeroed_sha256");
            let interp = r
                .interpreter
                .as_deref()
                .expect("an aarch64 row names its loader");
            assert_eq!(
                interp, "glibc/ld-linux-aarch64.so.1",
                "{what}: the aarch64 loader"
            );
            let interp = format!("{}/{interp}", root.display());
            let rpath = r
                .rpath
                .clone()
                .unwrap_or_else(|| vec!["glibc".to_owned()])
                .iter()
                .map(|d| format!("{}/{d}", root.display()))
                .collect::<Vec<_>>()
                .join(":");
            assert!(
                interp.len() < is && rpath.len() < rs,
                "the temp dir is too long a prefix"
            );
            b[io..io + interp.len()].copy_from_slice(interp.as_bytes());
            b[ro..ro + rpath.len()].copy_from_slice(rpath.as_bytes());
            fs::write(&f, &b).unwrap();
            program = Some(f);
        }
    }
    Some(program.expect("a relocated program"))
}
