//! The askama shell templates: the template lint over templates/, and the
//! escaper traps the design rules out, each shown with a real template.

mod common;

use std::fmt;
use std::fs;
use std::path::Path;

use askama::Template;
// `filters` must be in scope where a template uses `|raw`.
use shforge::quote::{Raw, Value, filters};

fn templates(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            templates(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_template_passes_the_template_lint() {
    let root = common::root().join("templates");
    let mut files = Vec::new();
    if root.exists() {
        templates(&root, &mut files);
    }
    let mut problems = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        if let Some(p) = shforge::template_lint::check_name(&rel) {
            problems.push(p);
        }
        let text = fs::read_to_string(path).unwrap();
        for f in shforge::template_lint::check(&text) {
            problems.push(format!("templates/{rel}:{}: {}", f.line, f.message));
        }
        assert!(text.is_ascii(), "templates/{rel} holds non-ASCII text");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    common::loud(&format!("template lint: {} templates clean", files.len()));
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
    for (src, want) in bad {
        let found = shforge::template_lint::check(src);
        assert!(
            found.iter().any(|f| f.message.contains(want)),
            "{src:?}: {found:?}"
        );
    }
    assert!(shforge::template_lint::check_name("x.sh.j2").is_some());
}

#[test]
fn nul_never_reaches_a_template() {
    let err = Value::new("a\0b").unwrap_err();
    assert!(err.to_string().contains("NUL"), "{err}");
}
