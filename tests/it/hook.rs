//! hooks/pre-commit in a consuming repository: it checks what is staged
//! (generated scripts against `shforge check`, templates against the
//! template lint), under every POSIX shell of the matrix.

use crate::support;

use support::{copy_tree, text};

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn git(repo: &Path, args: &[&str]) {
    let mut c = Command::new("git");
    c.current_dir(repo)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo);
    let out = support::run(c);
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A consuming repository holding this crate's generated/ and templates/,
/// committed.
fn consumer() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    copy_tree(
        &support::root().join("generated"),
        &repo.path().join("generated"),
    );
    copy_tree(
        &support::root().join("templates"),
        &repo.path().join("templates"),
    );
    git(repo.path(), &["add", "-A"]);
    git(
        repo.path(),
        &["commit", "-q", "--no-verify", "-m", "vendor"],
    );
    repo
}

fn hook(shell: &support::Shell, repo: &Path, command: &Path) -> Output {
    let mut c = shell.command(&support::root().join("hooks/pre-commit"));
    c.current_dir(repo)
        .env("SHFORGE", command)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo);
    support::run(c)
}

/// The whole story under the first shell of the matrix (dash where it is
/// installed): clean, unstaged edit, staged edit, staged bad template, a
/// command that cannot run.
#[test]
fn pre_commit_checks_the_index() {
    if !support::require_tool("pre_commit_checks_the_index", "git") {
        return;
    }
    let shells = support::posix_shells();
    let shell = &shells[0];
    let repo = consumer();
    let r = repo.path();
    let bin = support::shforge();
    let out = hook(shell, r, &bin);
    assert_eq!(out.status.code(), Some(0), "{}: {}", shell.name, text(&out));

    // An unstaged edit is not what the commit holds: still clean.
    let script = r.join("generated/bootstrap.sh");
    let good = fs::read_to_string(&script).unwrap();
    fs::write(&script, good.replacen('\n', "\n# HAND EDIT\n", 2)).unwrap();
    let out = hook(shell, r, &bin);
    assert_eq!(out.status.code(), Some(0), "{}: {}", shell.name, text(&out));

    // Staged, it is refused with the diff.
    git(r, &["add", "generated/bootstrap.sh"]);
    let out = hook(shell, r, &bin);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{}: {t}", shell.name);
    assert!(
        t.contains("stale: bootstrap.sh\n") && t.contains("-# HAND EDIT\n"),
        "{t}"
    );
    fs::write(&script, &good).unwrap();
    git(r, &["add", "generated/bootstrap.sh"]);

    // A staged template the lint refuses, named by its repository path.
    stage_bad_template(r);
    let out = hook(shell, r, &bin);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{}: {t}", shell.name);
    assert!(t.contains(BAD_TEMPLATE_FINDING), "{t}");

    // A command that cannot run is exit 2, not a pass.
    let out = hook(shell, r, Path::new("/nonexistent/shforge"));
    assert_eq!(out.status.code(), Some(2), "{}: {}", shell.name, text(&out));
    support::report("pre_commit_checks_the_index", &shells[..1]);
}

const BAD_TEMPLATE_FINDING: &str = "\ntemplates/lib/bad.sh:1: `{{ v }}` inside a quoted string";

fn stage_bad_template(repo: &Path) {
    fs::write(repo.join("templates/lib/bad.sh"), "echo \"{{ v }}\"\n").unwrap();
    git(repo, &["add", "templates/lib/bad.sh"]);
}

/// Every other POSIX shell runs the hook to the same verdicts.
#[test]
fn pre_commit_runs_under_every_posix_shell() {
    if !support::require_tool("pre_commit_runs_under_every_posix_shell", "git") {
        return;
    }
    let shells = support::posix_shells();
    let repo = consumer();
    let bin = support::shforge();
    for shell in &shells {
        let out = hook(shell, repo.path(), &bin);
        assert_eq!(out.status.code(), Some(0), "{}: {}", shell.name, text(&out));
    }
    stage_bad_template(repo.path());
    for shell in &shells {
        let out = hook(shell, repo.path(), &bin);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{}: {t}", shell.name);
        assert!(t.contains(BAD_TEMPLATE_FINDING), "{}: {t}", shell.name);
    }
    support::report("pre_commit_runs_under_every_posix_shell", &shells);
}

/// A copy of this crate's sources: Cargo.toml and every directory whose
/// files decide what `shforge generate` writes, plus generated/.
fn source_tree_copy() -> tempfile::TempDir {
    let tree = tempfile::tempdir().unwrap();
    fs::copy(
        support::root().join("Cargo.toml"),
        tree.path().join("Cargo.toml"),
    )
    .unwrap();
    for dir in ["templates", "installers", "harnesses", "src", "generated"] {
        copy_tree(&support::root().join(dir), &tree.path().join(dir));
    }
    tree
}

/// The stale-binary trap: templates are compiled into the binary, so a
/// shforge built before a template changed would pass the change with a
/// stale generated/. Inside a shforge source tree, `check` and `generate`
/// refuse a binary built from other sources (exit 2) and write nothing.
#[test]
fn a_binary_built_from_other_sources_is_refused_inside_the_tree() {
    let tree = source_tree_copy();
    let run = |args: &[&str]| {
        let mut c = Command::new(support::shforge());
        c.current_dir(tree.path()).args(args);
        support::run(c)
    };
    let same = run(&["check"]);
    assert_eq!(
        same.status.code(),
        Some(0),
        "an exact copy: {}",
        text(&same)
    );

    let musl = tree.path().join("templates/lib/musl.sh");
    let body = fs::read_to_string(&musl).unwrap();
    fs::write(&musl, format!("{body}# a changed template\n")).unwrap();
    let before = fs::read(tree.path().join("generated/manifest.json")).unwrap();
    for command in ["check", "generate"] {
        let out = run(&[command]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("built from other sources") && err.lines().count() == 1,
            "{command}: {err}"
        );
    }
    assert_eq!(
        fs::read(tree.path().join("generated/manifest.json")).unwrap(),
        before,
        "generate wrote nothing"
    );
}

/// In shforge's own repository the hook builds the generator from the work
/// tree (`cargo run`), even with a `shforge` on PATH.
#[test]
fn pre_commit_in_shforge_itself_builds_from_source() {
    if !support::require_tool("pre_commit_in_shforge_itself_builds_from_source", "git") {
        return;
    }
    let repo = source_tree_copy();
    git(repo.path(), &["init", "-q"]);
    git(
        repo.path(),
        &["add", "Cargo.toml", "templates", "generated"],
    );
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("calls");
    for tool in ["shforge", "cargo"] {
        let p = bin.path().join(tool);
        fs::write(
            &p,
            format!("#!/bin/sh\necho \"{tool} $*\" >>'{}'\n", log.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let mut c = Command::new("sh");
    c.arg(support::root().join("hooks/pre-commit"))
        .current_dir(repo.path())
        .env("PATH", path)
        .env_remove("SHFORGE")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo.path());
    let out = support::run(c);
    let calls = fs::read_to_string(&log).unwrap_or_default();
    assert!(
        calls
            .lines()
            .all(|l| l.starts_with("cargo run -q --manifest-path "))
            && !calls.is_empty(),
        "{calls}\n{}",
        text(&out)
    );
}

/// An adapter's own specs (`shforge.specs`): the hook checks their
/// installers too, from the index, and a staged spec change without the
/// regenerated installer is refused.
#[test]
fn pre_commit_checks_an_adapters_specs() {
    if !support::require_tool("pre_commit_checks_an_adapters_specs", "git") {
        return;
    }
    let repo = tempfile::tempdir().unwrap();
    let r = repo.path();
    git(r, &["init", "-q"]);
    fs::create_dir(r.join("specs")).unwrap();
    let pi = fs::read_to_string(support::root().join("installers/pi.toml")).unwrap();
    let spec = r.join("specs/my-pi.toml");
    fs::write(&spec, pi.replacen("name = \"pi\"", "name = \"my-pi\"", 1)).unwrap();
    let mut c = Command::new(support::shforge());
    c.current_dir(r)
        .args(["generate", "--out", "vendor", "--spec", "specs"]);
    let out = support::run(c);
    assert!(out.status.success(), "{}", text(&out));
    git(r, &["add", "-A"]);
    git(r, &["commit", "-q", "--no-verify", "-m", "vendor"]);
    let hook = || {
        let mut c = Command::new("sh");
        c.arg(support::root().join("hooks/pre-commit"))
            .current_dir(r)
            .env("SHFORGE", support::shforge())
            .env("SHFORGE_OUT", "vendor")
            .env("SHFORGE_SPECS", "specs")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", r);
        support::run(c)
    };
    let clean = hook();
    assert_eq!(clean.status.code(), Some(0), "{}", text(&clean));
    let body = fs::read_to_string(&spec).unwrap();
    fs::write(&spec, body.replacen("version = \"", "version = \"9", 1)).unwrap();
    git(r, &["add", "specs"]);
    let stale = hook();
    assert_eq!(stale.status.code(), Some(1), "{}", text(&stale));
    assert!(
        String::from_utf8_lossy(&stale.stdout).contains("stale: installers/my-pi.sh"),
        "{}",
        text(&stale)
    );
}
