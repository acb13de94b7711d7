//! The README's quick starts run from the README's own text, so they cannot
//! rot: each is the fenced block after an `<!-- quickstart: NAME -->` line.
//! `host-cli` runs here with bash (one real Codex rollout: its pinned
//! artifact from `SHFORGE_SMOKE_ARTIFACTS`, default
//! /var/cache/shforge/artifacts, so no network when it is there; skipped
//! loudly without it, a failure under SHFORGE_REQUIRE_SHELLS=1). `python`
//! runs against the installed wheel in tests/python/test_readme_quickstart.py;
//! here only its marker and block are checked.

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use shforge::harness::Harness;

/// The README's text.
fn readme() -> String {
    fs::read_to_string(support::root().join("README.md")).unwrap()
}

/// The body of the fenced block right after `<!-- quickstart: NAME -->`,
/// and the block's language.
pub fn quickstart(readme: &str, name: &str) -> (String, String) {
    let marker = format!("<!-- quickstart: {name} -->\n");
    let start = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("README.md has no `{}` line", marker.trim_end()));
    let rest = &readme[start + marker.len()..];
    let fence = rest.strip_prefix("```").unwrap_or_else(|| {
        panic!(
            "README.md: `{}` is not followed by a fenced block",
            marker.trim_end()
        )
    });
    let (lang, body) = fence.split_once('\n').expect("a fenced block");
    let end = body
        .find("\n```\n")
        .unwrap_or_else(|| panic!("README.md: the {name} quick start's block is not closed"));
    (lang.trim().to_owned(), body[..=end].to_owned())
}

#[test]
fn every_quickstart_is_a_marked_block() {
    let text = readme();
    for (name, lang) in [("host-cli", "sh"), ("python", "python")] {
        let (got, body) = quickstart(&text, name);
        assert_eq!(got, lang, "the {name} quick start's language");
        assert!(body.lines().count() > 5, "the {name} quick start is empty");
    }
}

/// The directories `mktemp -d` made under `tmp` that hold `out/result.txt`.
fn results(tmp: &Path) -> Vec<PathBuf> {
    fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("out/result.txt"))
        .filter(|p| p.is_file())
        .collect()
}

#[test]
fn the_host_cli_quickstart_runs_as_written() {
    let Some(artifacts) = support::artifacts::artifacts_for(Harness::Codex, "README quick start")
    else {
        return;
    };
    let (_, script) = quickstart(&readme(), "host-cli");
    let dir = tempfile::tempdir().unwrap();
    let (home, tmp) = (dir.path().join("home"), dir.path().join("tmp"));
    fs::create_dir(&home).unwrap();
    fs::create_dir(&tmp).unwrap();
    let file = dir.path().join("quickstart.sh");
    fs::write(&file, &script).unwrap();
    // `shforge` on PATH, as `cargo install --path .` would put it.
    let bin = support::shforge();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-e", "-u", "-o", "pipefail"])
        .arg(&file)
        .env("PATH", path)
        .env("HOME", &home)
        .env("TMPDIR", &tmp)
        .env("SHFORGE_ARTIFACTS", &artifacts)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = format!(
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(
        out.status.success(),
        "the host-cli quick start failed: {said}"
    );
    let found = results(&tmp);
    assert_eq!(found.len(), 1, "one work dir with out/result.txt: {said}");
    assert_eq!(fs::read_to_string(&found[0]).unwrap(), "hello-shforge");
    for expected in [
        "hello-shforge",
        "\"cleanup_confirmed\":true",
        "\"return_code\":0",
        "\"status\": \"completed\"",
        "\"cause\": \"none\"",
        "snapshot: ",
    ] {
        assert!(stdout.contains(expected), "stdout lacks {expected}: {said}");
    }
    let snapshot = fs::read_to_string(
        found[0]
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("snapshot.json"),
    )
    .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&snapshot).unwrap();
    assert!(doc["summary"]["sessions"].as_u64() >= Some(1), "{snapshot}");
}
