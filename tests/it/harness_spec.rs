//! Harness specs (`harnesses/NAME.toml`): the golden outputs of the six
//! shipped harnesses, and adapter specs given with `--spec FILE`.
//!
//! The golden files under `tests/fixtures/harness/golden/` were written by
//! the hand-coded profiles before the harnesses became data (commit
//! "harness spec: golden session dirs of the six hand-coded profiles"):
//! every harness × API × mode with plain inputs, and per harness one case
//! with a hostile model, a named key variable and a base URL with a path.
//! The session dir `shforge harness` writes from the spec must equal them
//! byte for byte. `SHFORGE_BLESS_GOLDEN=1` rewrites them (only for an
//! intended change of a profile; the diff then shows what changed).

use crate::support as common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use shforge::harness::Harness;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harness/golden")
}

fn shforge(args: &[String]) -> Output {
    let mut c = Command::new(common::shforge());
    c.args(args);
    common::run(c)
}

/// A model full of every config syntax the harnesses expand, and shell.
const HOSTILE_MODEL: &str =
    "m{file:/etc/passwd}{env:HOME}${SECRET}$${X}$(id)`id`'\"\\ é!cat<SECRET";
const PROMPT: &str = "write the token\n$(touch /tmp/x) 'q' \"d\" \\ -- @file\n";

/// One golden case: its name and the `shforge harness` arguments after
/// `--out DIR`.
struct Case {
    name: String,
    args: Vec<String>,
}

fn base_args(harness: &str, mode: &str) -> Vec<String> {
    [
        harness,
        "--session-dir",
        "/sandbox/session",
        "--workdir",
        "/task/work",
        "--entry",
        "/opt/h/bin/cli",
        "--mode",
        mode,
        "--prompt",
        PROMPT,
    ]
    .map(String::from)
    .to_vec()
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for h in Harness::ALL {
        for &api in h.apis() {
            for mode in ["events", "direct"] {
                let mut args = base_args(h.name(), mode);
                args.extend(
                    [
                        "--base-url",
                        "http://127.0.0.1:4321",
                        "--model",
                        "fake-model",
                        "--api",
                        api.name(),
                    ]
                    .map(String::from),
                );
                out.push(Case {
                    name: format!("{h}-{mode}-{api}"),
                    args,
                });
            }
        }
        let mut args = base_args(h.name(), "events");
        args.extend(
            [
                "--base-url",
                "HTTP://LocalHost:8080/prefix/v1/",
                "--model",
                HOSTILE_MODEL,
                "--api-key-env",
                "MY_KEY_2",
            ]
            .map(String::from),
        );
        out.push(Case {
            name: format!("{h}-hostile"),
            args,
        });
    }
    out
}

/// The session dir as text: each directory and file by relative path,
/// sorted, a file with its length and bytes.
fn dump(dir: &Path) -> Vec<u8> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            if p.is_dir() {
                out.push((rel, None));
                walk(root, &p, out);
            } else {
                out.push((rel, Some(std::fs::read(&p).unwrap())));
            }
        }
    }
    let mut entries = Vec::new();
    walk(dir, dir, &mut entries);
    entries.sort();
    let mut text = Vec::new();
    for (rel, content) in entries {
        match content {
            None => text.extend(format!("dir {rel}\n").bytes()),
            Some(bytes) => {
                text.extend(format!("file {rel} {}\n", bytes.len()).bytes());
                text.extend(&bytes);
                text.push(b'\n');
            }
        }
    }
    text
}

fn written(case: &Case) -> Vec<u8> {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let mut args = vec!["harness".to_owned()];
    args.extend(case.args.iter().cloned());
    args.extend(["--out".into(), out_dir.display().to_string()]);
    let out = shforge(&args);
    assert!(
        out.status.success(),
        "{}: {}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    dump(&out_dir)
}

#[test]
fn shipped_harnesses_write_the_golden_session_dirs() {
    let bless = std::env::var_os("SHFORGE_BLESS_GOLDEN").is_some();
    let cases = cases();
    // 4 harnesses × 3 APIs + 2 × 1, × 2 modes, + one hostile case each.
    assert_eq!(cases.len(), (4 * 3 + 2) * 2 + 6);
    let mut differ = Vec::new();
    for case in &cases {
        let got = written(case);
        let path = golden_dir().join(format!("{}.txt", case.name));
        if bless {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if got != want {
            differ.push(format!(
                "{}:\n--- golden\n{}\n--- written\n{}",
                case.name,
                String::from_utf8_lossy(&want),
                String::from_utf8_lossy(&got)
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
