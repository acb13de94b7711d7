//! The docs stay true to the CLI and to themselves:
//!
//! - every subcommand `shforge --help` lists has its row in docs/cli.md,
//!   and that row's exit column names every exit code the subcommand's own
//!   help names (and the codes `shforge::cli::main` documents for all of
//!   them appear in docs/cli.md);
//! - every relative link in README.md, docs/*.md, harnesses/README.md and
//!   installers/README.md resolves to a file, and its `#anchor` to a
//!   heading of that file (GitHub's slugs).

use crate::support;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;
use support::run_shforge as shforge;

/// A command's stdout as text.
fn stdout(args: &[&str]) -> String {
    String::from_utf8_lossy(&shforge(args).stdout).into_owned()
}

fn cli_md() -> String {
    fs::read_to_string(support::root().join("docs/cli.md")).unwrap()
}

/// The subcommands `shforge --help` lists (but `help`).
fn subcommands() -> Vec<String> {
    let help = stdout(&["--help"]);
    let list = help
        .split("Commands:\n")
        .nth(1)
        .expect("shforge --help lists its commands");
    let subs: Vec<String> = list
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|s| *s != "help")
        .map(str::to_owned)
        .collect();
    assert!(subs.len() > 10, "too few commands in:\n{help}");
    subs
}

/// The exit codes a text names: `exit 2`, `Exit 1, ...`, `(exit 2 when ...)`.
fn exit_codes(text: &str) -> BTreeSet<u32> {
    let re = Regex::new(r"(?i)\bexit (\d+)").unwrap();
    re.captures_iter(text)
        .map(|c| c[1].parse().unwrap())
        .collect()
}

/// docs/cli.md's table row for `sub`: its cells (`\|` is not a separator).
fn row(cli: &str, sub: &str) -> Option<Vec<String>> {
    let start = format!("| `shforge {sub}");
    let line = cli
        .lines()
        .find(|l| l.starts_with(&start) && l[start.len()..].starts_with([' ', '`']))?;
    Some(
        line.replace(r"\|", "\u{0}")
            .split('|')
            .map(|c| c.replace('\u{0}', "|").trim().to_owned())
            .filter(|c| !c.is_empty())
            .collect(),
    )
}

#[test]
fn every_subcommand_and_its_exit_codes_are_in_docs_cli() {
    let cli = cli_md();
    let mut findings = Vec::new();
    for sub in subcommands() {
        let Some(cells) = row(&cli, &sub) else {
            findings.push(format!("docs/cli.md: no table row for `shforge {sub}`"));
            continue;
        };
        let exit = cells.last().unwrap();
        let documented = exit_codes(&format!("exit {exit}"));
        if documented.is_empty() {
            findings.push(format!(
                "docs/cli.md: `shforge {sub}`'s row names no exit code"
            ));
        }
        let help = stdout(&[&sub, "--help"]);
        for code in exit_codes(&help) {
            let re = Regex::new(&format!(r"(^|[^0-9]){code}([^0-9]|$)")).unwrap();
            if !re.is_match(exit) {
                findings.push(format!(
                    "docs/cli.md: `shforge {sub}`'s help names exit {code}, its row's exit column does not: {exit}"
                ));
            }
        }
    }
    // The codes every command shares, as `shforge::cli::main` documents them.
    let src = fs::read_to_string(support::root().join("src/cli/mod.rs")).unwrap();
    let doc: String = src
        .split("pub fn main()")
        .next()
        .unwrap()
        .lines()
        .rev()
        .take_while(|l| l.starts_with("///"))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join(" ");
    let shared = Regex::new(r"(\d+) (?:success|a failed|the user's)").unwrap();
    let codes: Vec<&str> = shared
        .captures_iter(&doc)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    assert_eq!(codes, ["0", "1", "2"], "shforge::cli::main's doc: {doc}");
    if !cli.contains("usage errors exit 2") {
        findings.push("docs/cli.md: does not say usage errors exit 2".to_owned());
    }
    assert!(findings.is_empty(), "\n{}", findings.join("\n"));
}

/// GitHub's anchor for a heading: lower case, only alphanumerics, `-`, `_`
/// and spaces kept, spaces as `-`; a repeated one gets `-1`, `-2`, ...
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(title) = (!fenced)
            .then(|| line.trim_start_matches('#'))
            .filter(|t| line.starts_with('#') && t.starts_with(' '))
        else {
            continue;
        };
        let base: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut slug = base.clone();
        let mut n = 0;
        while seen.contains(&slug) {
            n += 1;
            slug = format!("{base}-{n}");
        }
        seen.insert(slug);
    }
    seen
}

/// The links of a markdown file, outside fenced blocks and code spans.
fn links(markdown: &str) -> Vec<(usize, String)> {
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let code = Regex::new(r"`[^`]*`").unwrap();
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let line = code.replace_all(line, "``");
        out.extend(link.captures_iter(&line).map(|c| (i + 1, c[1].to_owned())));
    }
    out
}

fn markdown_files() -> Vec<PathBuf> {
    let root = support::root();
    let mut files = vec![
        root.join("README.md"),
        root.join("harnesses/README.md"),
        root.join("installers/README.md"),
    ];
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

fn check_link(file: &Path, target: &str) -> Result<(), String> {
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let dest = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().unwrap().join(path)
    };
    if !dest.exists() {
        return Err(format!("{target}: {} does not exist", dest.display()));
    }
    if anchor.is_empty() {
        return Ok(());
    }
    let text = fs::read_to_string(&dest).map_err(|e| format!("{target}: {e}"))?;
    if anchors(&text).contains(anchor) {
        Ok(())
    } else {
        Err(format!("{target}: no heading gives #{anchor}"))
    }
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = support::root();
    let mut findings = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = fs::read_to_string(&file).unwrap();
        for (n, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            if let Err(e) = check_link(&file, &target) {
                let rel = file
                    .strip_prefix(&root)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                findings.push(format!("{rel}:{n}: {e}"));
            }
        }
    }
    assert!(checked > 50, "only {checked} links found");
    assert!(findings.is_empty(), "\n{}", findings.join("\n"));
}

#[test]
fn anchors_are_githubs() {
    let a = anchors(
        "# The Rust API\n## installers/NAME.sh (bash 3.2+)\n```sh\n# not a heading\n```\n## What the image's environment cannot change\n## Codex\n## Codex\n",
    );
    for want in [
        "the-rust-api",
        "installersnamesh-bash-32",
        "what-the-images-environment-cannot-change",
        "codex",
        "codex-1",
    ] {
        assert!(a.contains(want), "{want} not in {a:?}");
    }
    assert!(!a.contains("not-a-heading"));
}
