//! The askama shell templates: the template lint over templates/, and the
//! escaper traps the design rules out, each shown with a real template.

use crate::support;

use std::fmt;
use std::fs;
use std::path::Path;

use askama::Template;
// `filters` must be in scope where a template uses `|raw`.
use shforge::quote::{Raw, Value, filters};

#[test]
fn every_template_passes_the_template_lint() {
    let root = support::root().join("templates");
    let problems = lint_templates(&[&root]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `shforge lint-templates` over DIRS: its findings, one a line (none
/// when it exits 0; it must exit 0 or 1).
fn lint_templates(dirs: &[&Path]) -> Vec<String> {
    let mut c = std::process::Command::new(support::shforge());
    c.arg("lint-templates").args(dirs);
    let out = support::run(c);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    match out.status.code() {
        Some(0) if text.is_empty() => Vec::new(),
        Some(1) if !text.is_empty() => text.lines().map(str::to_owned).collect(),
        _ => panic!("lint-templates: {out:?}"),
    }
}

/// The template lint's findings for each of FILES (each under templates/),
/// through `shforge lint-templates` on copies of them alone.
pub(crate) fn template_lint_files(files: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let to = dir.path().join(f);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(support::root().join("templates").join(f), &to).unwrap();
    }
    lint_templates(&[dir.path()])
}

/// `shforge lint-templates` runs the same lint: names, positions, ASCII.
#[test]
fn lint_templates_command_reports_each_problem() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("lib")).unwrap();
    fs::write(dir.path().join("ok.sh"), "x={{ v }}\n").unwrap();
    fs::write(dir.path().join("lib/bad.sh"), "echo \"{{ v }}\"\n").unwrap();
    fs::write(dir.path().join("x.sh.j2"), "x=1\n").unwrap();
    fs::write(dir.path().join("utf.bash"), "# caf\u{e9}\n").unwrap();
    let mut c = std::process::Command::new(support::shforge());
    c.arg("lint-templates").arg(dir.path());
    let out = support::run(c);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.contains("lib/bad.sh:1: `{{ v }}` inside a quoted string"),
        "{text}"
    );
    assert!(text.contains("x.sh.j2: "), "{text}");
    assert!(text.contains("utf.bash:1: non-ASCII"), "{text}");

    let mut c = std::process::Command::new(support::shforge());
    c.arg("lint-templates")
        .arg(support::root().join("templates"));
    assert_eq!(support::run(c).status.code(), Some(0));
    let mut c = std::process::Command::new(support::shforge());
    c.arg("lint-templates").arg(dir.path().join("missing"));
    assert_eq!(support::run(c).status.code(), Some(2));
}

/// A value whose Display writes in three pieces.
struct Parts;
impl fmt::Display for Parts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a b")?;
        f.write_str("/")?;
        f.write_str("c")
    }
}

/// A value whose Display writes nothing.
struct Nothing;
impl fmt::Display for Nothing {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}

#[derive(Template)]
#[template(source = "x={{ v }}", ext = "sh")]
struct One<'a> {
    v: &'a Value,
}

#[test]
fn multi_part_display_becomes_one_clean_word() {
    // The trap: the escaper runs per write_str, so Parts printed directly
    // would come out as 'a b'/c. Value::display renders to one string first.
    let v = Value::display(&Parts).unwrap();
    assert_eq!(One { v: &v }.render().unwrap(), "x='a b/c'");
}

#[test]
fn empty_display_still_prints_an_empty_word() {
    let v = Value::display(&Nothing).unwrap();
    assert_eq!(One { v: &v }.render().unwrap(), "x=''");
    let v = Value::new("").unwrap();
    assert_eq!(One { v: &v }.render().unwrap(), "x=''");
}

#[test]
fn values_that_look_like_code_are_quoted() {
    for (input, want) in [
        ("FOO=bar", "x='FOO=bar'"),
        ("%1", "x='%1'"),
        ("$(touch /tmp/pwned)", "x='$(touch /tmp/pwned)'"),
        ("it's", "x=\"it's\""),
        ("plain", "x='plain'"),
    ] {
        let v = Value::new(input).unwrap();
        assert_eq!(One { v: &v }.render().unwrap(), want);
    }
}

#[derive(Template)]
#[template(source = "{{ code|raw }} {{ word }}", ext = "sh")]
struct Code<'a> {
    code: &'a Raw,
    word: &'a Value,
}

#[test]
fn raw_code_only_through_the_raw_filter() {
    let code = Raw::code("printf '%s\\n'");
    let word = Value::new("a b").unwrap();
    assert_eq!(
        Code {
            code: &code,
            word: &word
        }
        .render()
        .unwrap(),
        "printf '%s\\n' 'a b'"
    );
}

#[test]
fn the_lint_catches_each_trap_position() {
    let bad = [
        ("echo \"{{ v }}\"", "quoted string"),
        ("# {{ v }}", "comment"),
        ("cat <<EOF\n{{ v }}\nEOF", "here-document"),
        ("{{ v|safe }}", "filter `safe`"),
        ("{{ v|join(\" \") }}", "filter `join`"),
    ];
    // Each through `shforge lint-templates`; the library's own check of
    // the same: `template_lint::tests::the_lint_catches_each_trap_position`.
    for (src, want) in bad {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("t.sh"), format!("{src}\n")).unwrap();
        let found = lint_templates(&[dir.path()]);
        assert!(found.iter().any(|f| f.contains(want)), "{src:?}: {found:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("x.sh.j2"), "x=1\n").unwrap();
    assert_eq!(lint_templates(&[dir.path()]).len(), 1);
}

#[test]
fn nul_never_reaches_a_template() {
    let err = Value::new("a\0b").unwrap_err();
    assert!(err.to_string().contains("NUL"), "{err}");
}
