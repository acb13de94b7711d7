//! hooks/pre-commit in a consuming repository: it checks what is staged
//! (generated scripts against `shforge check`, templates against the
//! template lint), under every POSIX shell of the matrix.

use crate::support as common;

use common::{copy_tree, text};

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
    let out = common::run(c);
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A consuming repository holding this crate's generated/ and templates/,
/// committed.
fn consumer() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    copy_tree(
        &common::root().join("generated"),
        &repo.path().join("generated"),
    );
    copy_tree(
        &common::root().join("templates"),
        &repo.path().join("templates"),
    );
    git(repo.path(), &["add", "-A"]);
    git(
        repo.path(),
        &["commit", "-q", "--no-verify", "-m", "vendor"],
    );
    repo
}

fn hook(shell: &common::Shell, repo: &Path, command: &Path) -> Output {
    let mut c = shell.command(&common::root().join("hooks/pre-commit"));
    c.current_dir(repo)
        .env("SHFORGE", command)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", repo);
    common::run(c)
}

/// The whole story under the first shell of the matrix (dash where it is
/// installed): clean, unstaged edit, staged edit, staged bad template, a
/// command that cannot run.
#[test]
fn pre_commit_checks_the_index() {
    if !common::require_tool("pre_commit_checks_the_index", "git") {
        return;
    }
    let shells = common::posix_shells();
    let shell = &shells[0];
    let repo = consumer();
    let r = repo.path();
    let bin = common::shforge();
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
    common::report("pre_commit_checks_the_index", &shells[..1]);
}

const BAD_TEMPLATE_FINDING: &str = "\ntemplates/lib/bad.sh:1: `{{ v }}` inside a quoted string";

fn stage_bad_template(repo: &Path) {
    fs::write(repo.join("templates/lib/bad.sh"), "echo \"{{ v }}\"\n").unwrap();
    git(repo, &["add", "templates/lib/bad.sh"]);
}

/// Every other POSIX shell runs the hook to the same verdicts.
#[test]
fn pre_commit_runs_under_every_posix_shell() {
    if !common::require_tool("pre_commit_runs_under_every_posix_shell", "git") {
        return;
    }
    let shells = common::posix_shells();
    let repo = consumer();
    let bin = common::shforge();
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
    common::report("pre_commit_runs_under_every_posix_shell", &shells);
}
