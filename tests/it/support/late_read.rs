//! tests/fixtures/late_read.c: an LD_PRELOAD library that plays the races of
//! bash's timed `read` on purpose (see docs/portability.md).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The library, built once with the system's C compiler (the one Rust
/// links with).
pub fn library() -> PathBuf {
    static LIB: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("late_read.so");
        let status = Command::new("cc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&out)
            .arg(super::root().join("tests/fixtures/late_read.c"))
            .arg("-ldl")
            .status()
            .expect("cc runs");
        assert!(status.success(), "cc could not build late_read.c");
        out
    })
    .clone()
}

/// The environment that makes every timed read(2) on descriptor `fd` late:
/// the timer fires before the call, or with `after` as the data comes.
/// Each late read appends a byte to `log`.
pub fn env(fd: u32, after: bool, log: &Path) -> Vec<(String, String)> {
    vec![
        ("LD_PRELOAD".into(), library().display().to_string()),
        ("SHFORGE_LATE_READ_FD".into(), fd.to_string()),
        ("SHFORGE_LATE_READ_EVERY".into(), "1".into()),
        (
            "SHFORGE_LATE_READ_AFTER".into(),
            u8::from(after).to_string(),
        ),
        ("SHFORGE_LATE_READ_LOG".into(), log.display().to_string()),
    ]
}

/// How many late reads were played (the bytes in `log`).
pub fn played(log: &Path) -> u64 {
    std::fs::metadata(log).map_or(0, |m| m.len())
}

/// Whether the bash named `shell` (`bash-4.4.19(1)-release …`) arms a timer
/// for `read -t` and checks a flag: 4.4 to 5.1 (4.0 and 4.2 jump out of the
/// signal handler, 5.2 and later time out with select(2)).
pub fn flag_timer_bash(shell: &str) -> bool {
    let version = shell.strip_prefix("bash-").unwrap_or_default();
    let mut parts = version.split(['.', '(']).map(|p| p.parse::<u32>().ok());
    matches!(
        (parts.next().flatten(), parts.next().flatten()),
        (Some(4), Some(4..)) | (Some(5), Some(0 | 1))
    )
}
