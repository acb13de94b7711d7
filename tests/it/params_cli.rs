//! `shforge params`: bad input exits 2 with a one-line message naming the key
//! and prints nothing on stdout.

use crate::support;

use std::io::Write as _;
use std::process::{Command, Stdio};

fn params_stdin(input: &[u8]) -> std::process::Output {
    let mut child = Command::new(support::shforge())
        .arg("params")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn rejections_exit_2_name_the_key_and_print_nothing() {
    let cases: &[(&str, &str)] = &[
        (r#"{"OK":"x","NUM":1}"#, "NUM"),
        (r#"{"FLT":1.5}"#, "FLT"),
        (r#"{"BOOL":false}"#, "BOOL"),
        (r#"{"NUL_V":null}"#, "NUL_V"),
        (r#"{"OBJ":{"a":"b"}}"#, "OBJ"),
        (r#"{"ARR":["a",1]}"#, "ARR"),
        (r#"{"ARR2":["a",null]}"#, "ARR2"),
        (r#"{"ARR3":[["a"]]}"#, "ARR3"),
        (r#"{"NULB":"a\u0000b"}"#, "NULB"),
        (r#"{"NULA":["a\u0000"]}"#, "NULA"),
        (r#"{"9lives":"x"}"#, "9lives"),
        (r#"{"a b":"x"}"#, "a b"),
        (r#"{"":"x"}"#, "\"\""),
        (r#"{"DUP":"x","OTHER":"y","DUP":"z"}"#, "DUP"),
    ];
    for (json, key) in cases {
        let out = params_stdin(json.as_bytes());
        assert_eq!(out.status.code(), Some(2), "{json}");
        assert!(
            out.stdout.is_empty(),
            "{json}: printed {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{json}: {err}");
        assert!(err.contains(key), "{json}: message must name {key}: {err}");
    }
    for bad in [&b"[1]"[..], b"not json", b"{\"A\":\"x\"", b"\xff\xfe", b""] {
        let out = params_stdin(bad);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn file_argument_and_dash_read_the_same_input() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.json");
    std::fs::write(&f, r#"{"A":"x y","B":["1"]}"#).unwrap();
    let from_file = support::run({
        let mut c = Command::new(support::shforge());
        c.arg("params").arg(&f);
        c
    });
    let from_stdin = params_stdin(br#"{"A":"x y","B":["1"]}"#);
    assert!(from_file.status.success());
    assert_eq!(from_file.stdout, from_stdin.stdout);
    assert_eq!(
        String::from_utf8_lossy(&from_file.stdout),
        "A='x y'\nB=()\nB[0]='1'\n"
    );
    let missing = support::run({
        let mut c = Command::new(support::shforge());
        c.args(["params", "/nonexistent.json"]);
        c
    });
    assert_eq!(missing.status.code(), Some(2));
}
