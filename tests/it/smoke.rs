//! `shforge smoke claude-code` end to end (the fastest harness): the real
//! CLI from its pinned artifact, through the generated installer,
//! supervisor and runner, against the fake model server. Needs the
//! artifact cache (SHFORGE_SMOKE_ARTIFACTS, default
//! /var/cache/shforge/artifacts) and root-free /proc; without the cache it
//! skips loudly, and fails under SHFORGE_REQUIRE_SHELLS=1 only when
//! SHFORGE_SMOKE_ARTIFACTS names a dir (CI runs the full smoke anyway).
//!
//! `shforge smoke --spec FILE`: Claude Code's shipped spec copied, under
//! another name, into a temp dir with its installer spec beside it, runs
//! the same smoke with every check; broken spec files exit 2 naming the
//! file and the field, before anything is installed.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The check columns of the smoke's table (src/smoke/checks.rs NAMES).
const CHECKS: [&str; 9] = [
    "exit 0",
    "deliverable",
    "receipt",
    "events",
    "prompt exact",
    "no process left",
    "task HOME untouched",
    "key not written",
    "session captured",
];

/// The artifacts dir when Claude Code's pinned artifact is in it (x86_64);
/// else `None` after saying so loudly (a failure under
/// SHFORGE_REQUIRE_SHELLS=1 when SHFORGE_SMOKE_ARTIFACTS names a dir).
fn claude_artifacts() -> Option<PathBuf> {
    let named = std::env::var_os("SHFORGE_SMOKE_ARTIFACTS");
    let artifacts = named.clone().map_or_else(
        || PathBuf::from("/var/cache/shforge/artifacts"),
        PathBuf::from,
    );
    let file = artifacts.join("anthropic-ai-claude-code-linux-x64-2.1.332.tgz");
    if std::env::consts::ARCH != "x86_64" || !file.is_file() {
        let why = format!("SKIPPING smoke: no {} (x86_64 only)", file.display());
        if named.is_some() && std::env::var("SHFORGE_REQUIRE_SHELLS").is_ok_and(|v| v == "1") {
            panic!("{why}");
        }
        support::loud(&why);
        return None;
    }
    Some(artifacts)
}

/// `shforge smoke ARGS --artifacts A --work W`.
fn smoke(args: &[&str], artifacts: &Path, work: &Path) -> std::process::Output {
    support::run({
        let mut c = Command::new(support::shforge());
        c.arg("smoke")
            .args(args)
            .arg("--artifacts")
            .arg(artifacts)
            .arg("--work")
            .arg(work);
        c
    })
}

/// Two rows of `name` (events, direct), every check ticked, in the table's
/// header order.
fn every_check_passed(name: &str, table: &str, progress: &str) {
    let header = table.lines().next().unwrap_or_default();
    let columns: Vec<&str> = header.split('|').map(str::trim).collect();
    assert_eq!(&columns[5..5 + CHECKS.len()], CHECKS, "{header}");
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with(&format!("| {name} |")))
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    for row in rows {
        assert_eq!(row.matches('✓').count(), CHECKS.len(), "{row}");
        assert!(!row.contains('✗'), "{row}");
    }
    assert!(
        progress.contains(&format!("{name}: events rollout")),
        "{progress}"
    );
}

#[test]
fn smoke_claude_code_passes_every_check() {
    let Some(artifacts) = claude_artifacts() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let out = smoke(&["claude-code"], &artifacts, work.path());
    let table = String::from_utf8_lossy(&out.stdout);
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{table}\n{progress}");
    every_check_passed("claude-code", &table, &progress);
}

/// Claude Code's shipped spec under another name, its installer spec a
/// sibling file: `--spec` alone runs it (and no shipped harness), with
/// every check of a shipped one.
#[test]
fn smoke_spec_runs_an_adapters_copy_with_every_check() {
    let Some(artifacts) = claude_artifacts() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("adapter");
    std::fs::create_dir(&dir).unwrap();
    let spec = adapter_copy(&dir, "claude-code", "my-claude");
    let work = tmp.path().join("work");
    let out = smoke(&["--spec", spec.to_str().unwrap()], &artifacts, &work);
    let table = String::from_utf8_lossy(&out.stdout);
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{table}\n{progress}");
    every_check_passed("my-claude", &table, &progress);
    assert_eq!(table.lines().count(), 4, "only the adapter's rows: {table}");
    // Its installer was generated from the sibling spec, like `shforge
    // installer --spec` does.
    let script = std::fs::read_to_string(work.join("scripts/adapters/my-claude.sh")).unwrap();
    assert!(script.contains("my-claude-installer.toml"), "header");
    let capture = std::fs::read_to_string(work.join("my-claude/events/session/capture.json"));
    assert!(capture.unwrap().contains("\"harness\": \"my-claude\""));
}

/// Copy harnesses/FROM.toml into `dir` as NAME.toml, named NAME, its
/// installer spec beside it as NAME-installer.toml; the spec's path.
fn adapter_copy(dir: &Path, from: &str, name: &str) -> PathBuf {
    let root = support::root();
    let text = std::fs::read_to_string(root.join(format!("harnesses/{from}.toml"))).unwrap();
    let text = text
        .replace(&format!("name = \"{from}\""), &format!("name = \"{name}\""))
        .replace(
            &format!("installer = \"installers/{from}.toml\""),
            &format!("installer = \"{name}-installer.toml\""),
        );
    assert!(text.contains(&format!("installer = \"{name}-installer.toml\"")));
    let spec = dir.join(format!("{name}.toml"));
    std::fs::write(&spec, text).unwrap();
    std::fs::copy(
        root.join(format!("installers/{from}.toml")),
        dir.join(format!("{name}-installer.toml")),
    )
    .unwrap();
    spec
}

/// Broken spec files: exit 2, one line naming the file and the field,
/// and nothing installed or run (the work dir is never made).
#[test]
fn smoke_spec_refuses_a_broken_spec_naming_its_field() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let good = std::fs::read_to_string(adapter_copy(dir, "pi", "mine")).unwrap();
    let installer = std::fs::read_to_string(dir.join("mine-installer.toml")).unwrap();
    let cases: Vec<(&str, String, String, &str)> = vec![
        (
            "bad run.prompt",
            good.replace("prompt = \"stdin\"", "prompt = \"pipe\""),
            installer.clone(),
            "harness spec: run.prompt: \"pipe\" is not stdin, file or arg",
        ),
        (
            "an unknown field",
            format!("colour = \"blue\"\n{good}"),
            installer.clone(),
            "harness spec: colour: is not a field of a harness spec",
        ),
        (
            "no installer",
            good.replace("installer = \"mine-installer.toml\"\n", ""),
            installer.clone(),
            "harness spec: installer: is missing",
        ),
        (
            "installer names no file",
            good.replace("mine-installer.toml", "gone.toml"),
            installer.clone(),
            "harness spec: installer: \"gone.toml\" (read as ",
        ),
        (
            "bad installer spec",
            good.clone(),
            installer.replacen("sha256 = \"", "sha256 = \"zz", 1),
            "mine-installer.toml: ",
        ),
        (
            "a shipped name twice",
            good.replace("name = \"mine\"", "name = \"pi\""),
            installer.clone(),
            "harness spec: name: \"pi\" is already in this run",
        ),
    ];
    for (what, spec_text, installer_text, expect) in cases {
        let spec = dir.join("mine.toml");
        std::fs::write(&spec, &spec_text).unwrap();
        std::fs::write(dir.join("mine-installer.toml"), &installer_text).unwrap();
        let work = dir.join("work");
        let out = smoke(&["pi", "--spec", spec.to_str().unwrap()], dir, &work);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(support::code(&out), 2, "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: one line: {err}");
        assert!(
            err.contains(spec.to_str().unwrap()) || err.contains("mine-installer.toml"),
            "{what}: {err}"
        );
        assert!(err.contains(expect), "{what}: {err}");
        assert!(out.stdout.is_empty(), "{what}");
        assert!(!work.exists(), "{what}: the smoke started");
    }
}
