//! The dialect guard: every rule catches a sample that breaks it and passes
//! a clean twin (often the same text inside a string or a comment), through
//! the real `shforge lint` command.

use crate::support;

use std::fs;
use std::process::Command;

use shforge::dialect::{Dialect, RULES};

/// (rule, dialect, breaking sample, clean twin)
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "posix-double-bracket",
        "posix",
        "if [[ -n $x ]]; then :; fi",
        "echo '[[ -n $x ]]' # [[ x ]]",
    ),
    ("posix-array-assign", "posix", "a=(x y)", "a='(x y)'"),
    (
        "posix-array-subscript",
        "posix",
        "echo \"${a[0]}\"",
        "echo \"${a}[0]\"",
    ),
    (
        "posix-local",
        "posix",
        "f() { local x=1; }",
        "f() { x_local=1; echo local; }",
    ),
    ("posix-ansi-quote", "posix", "nl=$'\\n'", "nl='$'"),
    (
        "posix-substring",
        "posix",
        "echo \"${x:1:2}\"",
        "echo \"${x:-1}\" \"${x:+y}\" \"${x:=z}\" \"${x:?e}\"",
    ),
    (
        "posix-pattern-substitution",
        "posix",
        "echo \"${x//a/b}\"",
        "echo \"${x%/*}\" \"${x#*/}\"",
    ),
    (
        "posix-function-keyword",
        "posix",
        "function f { :; }",
        "f() { :; } # function f",
    ),
    (
        "posix-source",
        "posix",
        "source ./lib.sh",
        ". ./lib.sh # source it",
    ),
    (
        "posix-test-double-equals",
        "posix",
        "[ \"$a\" == b ]",
        "[ \"$a\" = '==' ]",
    ),
    (
        "posix-echo-options",
        "posix",
        "echo -n hi",
        "printf '%s' 'echo -n hi'",
    ),
    (
        "posix-pipefail",
        "posix",
        "set -o pipefail",
        "echo 'set -o pipefail'",
    ),
    (
        "posix-here-string",
        "posix",
        "cat <<< \"$x\"",
        "printf '%s\\n' \"$x\" | cat",
    ),
    (
        "posix-process-substitution",
        "posix",
        "diff <(a) <(b)",
        "echo '<(a)' >out",
    ),
    ("posix-and-redirect", "posix", "cmd &>log", "cmd >log 2>&1"),
    ("posix-pipe-stderr", "posix", "cmd |& cat", "cmd 2>&1 | cat"),
    ("posix-arith-command", "posix", "(( i++ ))", "i=$((i + 1))"),
    (
        "posix-bash-builtins",
        "posix",
        "declare x=1",
        "x=1 # declare",
    ),
    (
        "posix-brace-expansion",
        "posix",
        "mkdir -p a/{b,c}",
        "echo \"${x:-a,b}\" '{b,c}'",
    ),
    (
        "posix-bash-variables",
        "posix",
        "echo \"$RANDOM\"",
        "echo '$RANDOM' \"$RANDOMIZE\"",
    ),
    (
        "posix-read-options",
        "posix",
        "read -t 5 x",
        "IFS= read -r x",
    ),
    (
        "posix-printf-v",
        "posix",
        "printf -v x '%s' y",
        "x=$(printf '%s' y)",
    ),
    (
        "posix-indirection",
        "posix",
        "echo \"${!name}\"",
        "echo \"${name}\" '${!x}'",
    ),
    ("posix-regex-match", "posix", "[ x =~ y ]", "echo 'a =~ b'"),
    (
        "posix-bash-trap",
        "posix",
        "trap 'echo err' ERR",
        "trap 'echo bye' EXIT INT TERM",
    ),
    (
        "bash32-assoc-array",
        "bash",
        "declare -A map",
        "declare -a list # declare -A",
    ),
    (
        "bash32-case-modification",
        "bash",
        "echo \"${x,,}\"",
        "echo \"${x}\" | tr '[:upper:]' '[:lower:]'",
    ),
    (
        "bash32-mapfile",
        "bash",
        "mapfile -t lines < f",
        "while IFS= read -r l; do :; done < f # mapfile",
    ),
    (
        "bash32-read-fractional-timeout",
        "bash",
        "read -r -t 0.5 x",
        "read -r -t 5 x",
    ),
    (
        "bash32-read-new-options",
        "bash",
        "read -N 4 x",
        "read -r -n 4 x",
    ),
    (
        "bash32-bashpid",
        "bash",
        "echo \"$BASHPID\"",
        "echo \"$$\" '$BASHPID'",
    ),
    (
        "bash32-case-fallthrough",
        "bash",
        "case x in a) :;& b) :;; esac",
        "case x in a) :;; b) :;; esac",
    ),
    ("bash32-pipe-stderr", "bash", "cmd |& cat", "cmd 2>&1 | cat"),
    ("bash32-append-both", "bash", "cmd &>>log", "cmd >>log 2>&1"),
    ("bash32-coproc", "bash", "coproc cat", "echo coproc-free"),
    (
        "bash32-new-shopt",
        "bash",
        "shopt -s globstar",
        "shopt -s extglob",
    ),
    (
        "bash32-declare-new-attributes",
        "bash",
        "declare -g x=1",
        "declare -r x=1",
    ),
    ("bash32-local-dash", "bash", "local -", "local x"),
    ("bash32-named-fd", "bash", "exec {fd}>log", "exec 3>log"),
    (
        "bash32-printf-time",
        "bash",
        "printf '%(%s)T' -1",
        "printf '%s' \"$(date +%s)\"",
    ),
    (
        "bash32-negative-subscript",
        "bash",
        "echo \"${a[-1]}\"",
        "echo \"${a[${#a[@]}-1]}\"",
    ),
    (
        "bash32-negative-length",
        "bash",
        "echo \"${x:1:-1}\"",
        "echo \"${x:1:2}\"",
    ),
    ("bash32-wait-options", "bash", "wait -n", "wait \"$pid\""),
    ("bash32-test-v", "bash", "[[ -v x ]]", "[[ -n ${x+set} ]]"),
    (
        "bash32-transform",
        "bash",
        "echo \"${x@Q}\"",
        "printf '%q' \"$x\"",
    ),
    (
        "bash32-epoch",
        "bash",
        "t=$EPOCHREALTIME",
        "t=$(date +%s) # EPOCHREALTIME",
    ),
    ("bash32-braced-at", "bash", "f \"${@}\"", "f \"$@\""),
    (
        "bash32-brace-sequence-step",
        "bash",
        "echo {1..9..2} {01..03}",
        "echo {1..9} x{1..3}",
    ),
    (
        "posix-brace-sequence",
        "posix",
        "for i in {1..3}; do :; done",
        "for i in 1 2 3; do :; done # {1..3}",
    ),
    ("bash32-unicode-escape", "bash", "x=$'\\u00e9'", "x=$'\\t'"),
    (
        "bash32-empty-array-nounset",
        "bash",
        "set -u\nf \"${a[@]}\"",
        "set -u\nf ${a[@]+\"${a[@]}\"}",
    ),
];

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

#[test]
fn every_rule_has_a_case() {
    for rule in RULES {
        assert!(
            CASES.iter().any(|c| c.0 == rule.id),
            "rule {} has no test case",
            rule.id
        );
    }
    for case in CASES {
        assert!(
            RULES.iter().any(|r| r.id == case.0),
            "case for unknown rule {}",
            case.0
        );
    }
}

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

#[test]
fn library_check_agrees_with_cli() {
    assert!(shforge::dialect::check("[[ x ]]\n", Dialect::Posix).len() == 1);
    assert!(shforge::dialect::check("[[ x ]]\n", Dialect::Bash).is_empty());
}

#[test]
fn constructs_in_a_trailing_comment_are_not_code() {
    let (code, out) = lint("bash", "printf '%s\\n' x # printf '%(%s)T' -1");
    assert_eq!(code, 0, "{out}");
    for &(rule, dialect, bad, _) in CASES {
        if bad.contains('\n') {
            continue;
        }
        let dialect: Dialect = dialect.parse().unwrap();
        for code in [": ok", "printf '%s\\n' x", "echo \"$x\""] {
            let text = format!("{code} # {bad}\n");
            let findings = shforge::dialect::check(&text, dialect);
            assert!(
                findings.is_empty(),
                "{rule}: {text:?} gave {:?}",
                findings.iter().map(|f| f.render("t")).collect::<Vec<_>>()
            );
        }
    }
}
