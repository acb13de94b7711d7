//! The dialect guard: every rule catches a sample that breaks it and passes
//! a clean twin (often the same text inside a string or a comment), through
//! the real `shforge lint` command.

use crate::support;

use std::fs;
use std::process::Command;

// CASES: (rule, dialect, breaking sample, clean twin).
include!("lint_cases.rs");

fn lint(dialect: &str, text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sample.sh");
    fs::write(&file, format!("{text}\n")).unwrap();
    let mut c = Command::new(support::shforge());
    c.args(["lint", "--dialect", dialect]).arg(&file);
    let out = support::run(c);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

// Every rule has a case, and every case a rule:
// `dialect::tests::every_rule_has_a_case` (the rules are internal).

#[test]
fn each_rule_catches_its_sample_and_passes_its_twin() {
    for &(rule, dialect, bad, good) in CASES {
        let (code, out) = lint(dialect, bad);
        assert_eq!(code, 1, "{rule}: {bad:?} should be refused, got {out}");
        assert!(
            out.contains(&format!("[{rule}]")),
            "{rule}: {bad:?} gave {out}"
        );
        assert!(
            out.contains("sample.sh:"),
            "{rule}: finding must name the file: {out}"
        );
        let (code, out) = lint(dialect, good);
        assert_eq!(code, 0, "{rule}: {good:?} should pass, got {out}");
    }
}

#[test]
fn bash_rules_also_apply_to_posix_and_posix_rules_not_to_bash() {
    let (code, _) = lint("posix", "mapfile -t x < f");
    assert_eq!(code, 1);
    let (code, out) = lint("bash", "if [[ -n $x ]]; then local y; fi");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn findings_name_file_line_construct_and_fix() {
    let (code, out) = lint("posix", "#!/bin/sh\n: ok\necho \"${x//a/b}\"");
    assert_eq!(code, 1);
    let line = out.lines().next().unwrap();
    assert!(
        line.contains("sample.sh:3: ${x/pattern/replacement} \u{2014} "),
        "{line}"
    );
    assert!(line.contains("instead"), "{line}");
}

#[test]
fn constructs_in_heredocs_and_multiline_strings_do_not_trip() {
    let text = "cat <<'EOF'\n[[ x ]] $'a' a=(b)\nEOF\nx='\n[[ y\n'\ny=\"\n${a[0]}\"";
    let (code, out) = lint("posix", text);
    // The last line's ${a[0]} is a real expansion inside double quotes.
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains(":8:"), "{out}");
}

#[test]
fn allow_comment_with_reason_silences_one_rule_on_one_line() {
    let text = "# shforge-allow: bash32-epoch guarded by a BASH_VERSINFO check\nt=$EPOCHREALTIME\nu=$EPOCHREALTIME";
    let (code, out) = lint("bash", text);
    assert_eq!(code, 1);
    assert!(out.contains(":3:") && !out.contains(":2:"), "{out}");
}

#[test]
fn unreadable_file_is_a_usage_error() {
    let mut c = Command::new(support::shforge());
    c.args(["lint", "--dialect", "posix", "/nonexistent/x.sh"]);
    let out = support::run(c);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    let mut c = Command::new(support::shforge());
    c.args(["lint", "--dialect", "csh", "x.sh"]);
    assert_eq!(support::run(c).status.code(), Some(2));
}

/// `shforge lint` says what the library's check says
/// (`dialect::tests::library_check_agrees_with_cli`).
#[test]
fn library_check_agrees_with_cli() {
    assert_eq!(lint("posix", "[[ x ]]").0, 1);
    assert_eq!(lint("posix", "[[ x ]]").1.lines().count(), 1);
    assert_eq!(lint("bash", "[[ x ]]").0, 0);
}

#[test]
fn constructs_in_a_trailing_comment_are_not_code() {
    let (code, out) = lint("bash", "printf '%s\\n' x # printf '%(%s)T' -1");
    assert_eq!(code, 0, "{out}");
    // Every case's sample in a trailing comment:
    // `dialect::tests::constructs_in_a_trailing_comment_are_not_code`.
}
