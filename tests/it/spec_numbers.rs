//! Installer spec numbers past what the generated bash script can compare
//! are refused at generation (`shforge installer --spec`, exit 2, naming
//! the field), and the largest accepted `size` really is compared and
//! downloaded by the script under every bash (bash arithmetic is signed
//! 64-bit: 2^63 reached `[` as "integer expression expected" and the size
//! check was skipped; 2^63 − 1 made the download's `head -c $((size + 1))`
//! fail).

use crate::support;

use std::path::Path;
use std::process::Command;

use sha2::{Digest as _, Sha256};
use support::{code, run_shforge as shforge, text};

/// The largest size the script can handle: 2^63 − 2.
const MAX: u64 = shforge::installer::spec::MAX_SIZE;

/// A one-file spec for `tool` (a sh script printing 1.0) with `size`.
fn spec(dir: &Path, size: &str) -> std::path::PathBuf {
    let tool = b"#!/bin/sh\necho 1.0\n";
    std::fs::write(dir.join("tool"), tool).unwrap();
    let sha: String = Sha256::digest(tool)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let text = format!(
        "name = \"tool\"\nversion = \"1.0\"\nentry = \"tool\"\n\n[[artifact]]\npath = \"tool\"\nsha256 = \"{sha}\"\nunpack = \"file\"\narch = \"any\"\nlibc = \"any\"\nsize = {size}\n"
    );
    let path = dir.join("spec.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn sizes_past_bash_arithmetic_are_refused_at_generation() {
    assert_eq!(MAX, (1u64 << 63) - 2);
    // (name, the size as the spec writes it, the number it means)
    let rows: &[(&str, &str, &str)] = &[
        (
            "2^63 - 1 (the download's +1 wraps)",
            "9223372036854775807",
            "9223372036854775807",
        ),
        (
            "2^63 (integer expression expected)",
            "9223372036854775808",
            "9223372036854775808",
        ),
        (
            "2^64 - 1 (the most TOML reads)",
            "18446744073709551615",
            "18446744073709551615",
        ),
        (
            "2^63 - 1 in hex",
            "0x7fffffffffffffff",
            "9223372036854775807",
        ),
        (
            "2^63 with digit separators",
            "9_223_372_036_854_775_808",
            "9223372036854775808",
        ),
    ];
    for (name, size, number) in rows {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec(dir.path(), size);
        let out = dir.path().join("install.sh");
        let o = shforge(&[
            "installer",
            "--spec",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{name}: {}", text(&o));
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(
            err.contains(&format!("artifact[0].size: {number} is more than {MAX}")),
            "{name}: {err}"
        );
        assert!(!out.exists(), "{name}: an installer was written");
    }
}

#[test]
fn the_largest_size_is_compared_and_downloaded_by_every_bash() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), &MAX.to_string());
    let script = dir.path().join("install.sh");
    let o = shforge(&[
        "installer",
        "--spec",
        spec.to_str().unwrap(),
        "--out",
        script.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let server = support::http::Server::start();
    server.put("/tool", &std::fs::read(dir.path().join("tool")).unwrap());
    let bashes = support::bashes();
    for sh in &bashes {
        for source in [
            ["--source-dir".to_owned(), dir.path().display().to_string()],
            ["--base-url".to_owned(), server.url()],
        ] {
            let prefix = tempfile::tempdir().unwrap();
            let o = support::run({
                let mut c: Command = sh.command(&script);
                c.arg("--prefix").arg(prefix.path()).args(&source);
                c
            });
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(code(&o), 0, "{} {}: {err}", sh.name, source[0]);
            assert!(
                !err.contains("integer expression"),
                "{} {}: {err}",
                sh.name,
                source[0]
            );
            assert!(prefix.path().join("tool-1.0/tool").is_file(), "{}", sh.name);
        }
    }
    support::report("the largest installer size under", &bashes);
}
