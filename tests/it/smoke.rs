//! `shforge smoke claude-code` end to end (the fastest harness): the real
//! CLI from its pinned artifact, through the generated installer,
//! supervisor and runner, against the fake model server. Needs the
//! artifact cache (SHFORGE_SMOKE_ARTIFACTS, default
//! /var/cache/shforge/artifacts) and root-free /proc; without the cache it
//! skips loudly, and fails under SHFORGE_REQUIRE_SHELLS=1 only when
//! SHFORGE_SMOKE_ARTIFACTS names a dir (CI runs the full smoke anyway).

use crate::support as common;

use std::path::PathBuf;
use std::process::Command;

#[test]
fn smoke_claude_code_passes_every_check() {
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
        common::loud(&why);
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let out = common::run({
        let mut c = Command::new(common::shforge());
        c.args(["smoke", "claude-code", "--artifacts"])
            .arg(&artifacts)
            .arg("--work")
            .arg(work.path());
        c
    });
    let table = String::from_utf8_lossy(&out.stdout);
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{table}\n{progress}");
    // Two rows (events, direct), every check ticked.
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("| claude-code |"))
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    for row in rows {
        assert_eq!(row.matches('✓').count(), 7, "{row}");
        assert!(!row.contains('✗'), "{row}");
    }
    assert!(
        progress.contains("claude-code: events rollout"),
        "{progress}"
    );
}
