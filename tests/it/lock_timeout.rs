//! `--lock-timeout S` of every generated installer: a number the lock's
//! bash arithmetic can hold, read as decimal (a leading zero is not octal).

use crate::support;

use std::process::Output;

fn installer(shell: &support::Shell, timeout: &str) -> Output {
    let d = tempfile::tempdir().unwrap();
    let empty = d.path().join("source");
    std::fs::create_dir(&empty).unwrap();
    let mut c = shell.command(&support::root().join("generated/installers/codex.sh"));
    c.args(["--prefix", d.path().join("prefix").to_str().unwrap()])
        .args(["--source-dir", empty.to_str().unwrap()])
        .args(["--lock-timeout", timeout]);
    support::run(c)
}

/// Accepted values get past the arguments (the empty source dir then fails
/// the install with its own code, never 2); refused ones exit 2 naming the
/// flag, before anything is made.
#[test]
fn lock_timeout_is_decimal_and_bounded() {
    let shells = support::bashes();
    for shell in &shells {
        for ok in ["0", "08", "010", "1.5", "999999999"] {
            let out = installer(shell, ok);
            assert_ne!(out.status.code(), Some(2), "{ok}: {}", support::text(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !err.contains("value too great") && !err.contains("--lock-timeout"),
                "{ok}: {err}"
            );
        }
        for bad in [
            "1000000000",
            "99999999999999999999",
            "1e3",
            "-1",
            "",
            "0x10",
            " 5",
        ] {
            let out = installer(shell, bad);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{bad:?}: {}",
                support::text(&out)
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("--lock-timeout wants seconds (at most 9 whole digits)"),
                "{bad:?}: {err}"
            );
        }
    }
    support::report("lock_timeout_is_decimal_and_bounded", &shells);
}
