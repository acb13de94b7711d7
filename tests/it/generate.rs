//! generated/ is exactly what `shforge generate` writes; `check` reports
//! stale, missing and extra files; output is deterministic.

use crate::support;

use std::fs;
use std::path::Path;
use std::process::Command;

fn shforge(args: &[&str], dir: &Path) -> std::process::Output {
    let mut c = Command::new(support::shforge());
    c.args(args).arg("--out").arg(dir);
    support::run(c)
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Each file of DIR's manifest (what `shforge generate` wrote there) with
/// its dialect, in the manifest's order (the catalog's).
fn manifest(dir: &Path) -> Vec<(String, String)> {
    let text = fs::read_to_string(dir.join("manifest.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_owned();
            (s("file"), s("dialect"))
        })
        .collect()
}

/// generated/ is what this binary writes (the library's own test of the
/// same, `catalog::tests::golden_generated_dir_is_fresh`, prints the diff).
#[test]
fn golden_generated_dir_is_fresh() {
    let out = shforge(&["check"], &support::root().join("generated"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "generated/ is stale: run `cargo run -- generate`\n{}{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn generation_is_deterministic_and_headed() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    assert!(shforge(&["generate"], a.path()).status.success());
    assert!(shforge(&["generate"], b.path()).status.success());
    // The header's template and spec: `catalog::tests::generated_scripts_are_headed`.
    let files = manifest(a.path());
    assert!(!files.is_empty());
    for (path, _) in &files {
        let x = fs::read(a.path().join(path)).unwrap();
        let y = fs::read(b.path().join(path)).unwrap();
        assert_eq!(x, y, "{path} differs between runs");
        let text = String::from_utf8(x).unwrap();
        let mut lines = text.lines();
        assert!(
            lines.next().unwrap().starts_with("#!"),
            "{path}: no shebang"
        );
        let header = lines.next().unwrap();
        assert!(
            header.contains("templates/") && header.contains("shforge generate"),
            "{path}: header {header:?}"
        );
        assert!(
            !text.contains(a.path().to_str().unwrap()),
            "{path}: absolute path leaked"
        );
    }
    assert_eq!(
        fs::read(a.path().join("manifest.json")).unwrap(),
        fs::read(b.path().join("manifest.json")).unwrap()
    );
}

#[test]
fn manifest_lists_file_dialect_and_sha256() {
    let dir = tempfile::tempdir().unwrap();
    assert!(shforge(&["generate"], dir.path()).status.success());
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("manifest.json")).unwrap())
            .unwrap();
    let files = manifest["files"].as_array().unwrap();
    // One entry per script of the catalog, as `shforge list` prints it.
    let list = support::run({
        let mut c = Command::new(support::shforge());
        c.arg("list");
        c
    });
    assert!(list.status.success());
    assert_eq!(files.len(), stdout(&list).lines().count());
    for f in files {
        let path = f["file"].as_str().unwrap();
        let content = fs::read(dir.path().join(path)).unwrap();
        let out = support::run({
            let mut c = Command::new("sha256sum");
            c.arg(dir.path().join(path));
            c
        });
        let want = stdout(&out).split_whitespace().next().unwrap().to_owned();
        assert_eq!(f["sha256"].as_str().unwrap(), want, "{path}");
        assert!(matches!(f["dialect"].as_str(), Some("posix" | "bash")));
        assert!(!content.is_empty());
    }
}

/// A scratch output dir holding a fresh generation, plus one script to edit
/// (check needs at least one file besides the manifest to go stale).
fn fresh_with_script() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    assert!(shforge(&["generate"], dir.path()).status.success());
    dir
}

#[test]
fn check_reports_stale_missing_and_extra_files() {
    let dir = fresh_with_script();
    let ok = shforge(&["check"], dir.path());
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    // Edit: the manifest always exists, so edit it (and a script when there is one).
    let target = manifest(dir.path())
        .first()
        .map_or("manifest.json".to_owned(), |(path, _)| path.clone());
    let path = dir.path().join(&target);
    let mut text = fs::read_to_string(&path).unwrap();
    text = text.replacen('\n', "\nHAND EDIT\n", 1);
    fs::write(&path, &text).unwrap();
    let out = shforge(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let s = stdout(&out);
    assert!(s.contains(&format!("stale: {target}")), "{s}");
    assert!(s.contains("-HAND EDIT"), "diff must show the edit: {s}");
    assert!(s.contains(&format!("--- a/{target}")), "{s}");

    // Missing and extra.
    let dir = fresh_with_script();
    fs::remove_file(dir.path().join(&target)).unwrap();
    fs::create_dir_all(dir.path().join("sub")).unwrap();
    fs::write(dir.path().join("sub/extra.sh"), "#!/bin/sh\n").unwrap();
    let out = shforge(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let s = stdout(&out);
    assert!(s.contains(&format!("missing: {target}")), "{s}");
    assert!(s.contains("extra: sub/extra.sh"), "{s}");
}

#[test]
fn generate_removes_only_files_its_old_manifest_listed() {
    // DIR sits inside a private parent, so the `../escape.sh` the manifest
    // names is this test's own file, not one in the shared /tmp.
    let parent = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir_in(parent.path()).unwrap();
    assert!(shforge(&["generate"], dir.path()).status.success());
    fs::write(dir.path().join("user-file.txt"), "mine").unwrap();
    let old = r#"{"files":[{"file":"retired.sh","dialect":"posix","sha256":"x"},{"file":"../escape.sh","dialect":"posix","sha256":"x"}]}"#;
    fs::write(dir.path().join("manifest.json"), old).unwrap();
    fs::write(dir.path().join("retired.sh"), "#!/bin/sh\n").unwrap();
    let outside = dir.path().parent().unwrap().join("escape.sh");
    fs::write(&outside, "keep").unwrap();
    assert!(shforge(&["generate"], dir.path()).status.success());
    assert!(!dir.path().join("retired.sh").exists());
    assert!(dir.path().join("user-file.txt").exists());
    assert!(
        outside.exists(),
        "generate must never follow a manifest outside DIR"
    );
}

#[test]
fn list_prints_every_entry() {
    let out = support::run({
        let mut c = Command::new(support::shforge());
        c.arg("list");
        c
    });
    assert!(out.status.success());
    let s = stdout(&out);
    // The catalog, as `shforge generate` writes it.
    let dir = fresh_with_script();
    let catalog = manifest(dir.path());
    assert_eq!(s.lines().count(), catalog.len());
    for (path, dialect) in catalog {
        assert!(s.contains(&format!("{path}\t{dialect}\t")), "{s}");
    }
}

/// One edit to a shared `templates/lib/` line shows up in every installer:
/// `check` prints that hunk once and names the other files.
#[test]
fn check_folds_a_hunk_shared_by_several_files() {
    let dir = fresh_with_script();
    let line = "# verify_digest FILE EXPECTED WHAT: exit 5 unless FILE has sha256 EXPECTED.\n";
    let mut edited = Vec::new();
    for (file, _) in manifest(dir.path()) {
        let path = dir.path().join(&file);
        let text = fs::read_to_string(&path).unwrap();
        if text.contains(line) {
            fs::write(&path, text.replacen(line, "# HAND EDIT\n", 1)).unwrap();
            edited.push(file);
        }
    }
    assert!(edited.len() >= 2, "the line is in {edited:?}");
    let out = shforge(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let s = stdout(&out);
    for p in &edited {
        assert!(s.contains(&format!("stale: {p}\n")), "{s}");
    }
    assert_eq!(s.matches("-# HAND EDIT\n").count(), 1, "{s}");
    assert!(
        s.contains(&format!(" @@ also in: {}\n", edited[1..].join(", "))),
        "{s}"
    );
}
