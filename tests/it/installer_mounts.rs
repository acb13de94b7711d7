//! The installer on the mounts a container orchestrator gives it (issue 38,
//! item 3), with real mounts (root): a prefix on a `noexec` tmpfs is
//! refused up front (8, the message says noexec, nothing left); a complete
//! install on a read-only bind mount is reused writing nothing, as root and
//! as uid 1000; a read-only prefix without the install is a clear 2; uid
//! 1000 installs into a prefix it owns with no HOME and no usable TMPDIR.
//! Each under every bash of the matrix; the installer is the carried bash's
//! (`installers/bash.toml`, a 2.3 MB single file).

use crate::carried_bash::{bash_spec, carried_artifact};
use crate::support;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn describe(what: &str, out: &Output) -> String {
    format!(
        "{what}: status {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// A mount that is undone when dropped (lazily, so a failed test leaves no
/// mount behind).
struct Mounted(PathBuf);

impl Mounted {
    fn new(args: &[&str], at: &Path) -> Mounted {
        let out = support::run({
            let mut c = Command::new("mount");
            c.args(args).arg(at);
            c
        });
        assert!(out.status.success(), "{}", describe("mount", &out));
        Mounted(at.to_owned())
    }

    /// `DIR` bound read-only at `at`.
    fn read_only(dir: &Path, at: &Path) -> Mounted {
        let m = Mounted::new(&["--bind", dir.to_str().unwrap()], at);
        let out = support::run({
            let mut c = Command::new("mount");
            c.args(["-o", "remount,bind,ro"]).arg(at);
            c
        });
        assert!(out.status.success(), "{}", describe("remount ro", &out));
        m
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// A scratch dir every user can enter, with the artifact in `src/`.
fn world(art_path: &str, art: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir(dir.path().join("src")).unwrap();
    fs::copy(art, dir.path().join("src").join(art_path)).unwrap();
    dir
}

/// `BASH generated/installers/bash.sh ARGS` with a bare environment (no
/// HOME, TMPDIR pointing nowhere), from /, optionally as uid/gid 1000.
fn install(bash: &support::Shell, args: &[&str], as_user: bool) -> Output {
    let script = support::root().join("generated/installers/bash.sh");
    let mut c = if as_user {
        let mut c = Command::new("setpriv");
        c.args(["--reuid", "1000", "--regid", "1000", "--clear-groups"])
            .args(&bash.argv)
            .arg(&script);
        c
    } else {
        bash.command(&script)
    };
    c.args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("TMPDIR", "/nonexistent/tmp")
        .current_dir("/");
    support::run(c)
}

/// Every name under `dir` with its type, mode, size and mtime (ns).
fn listing(dir: &Path) -> Vec<String> {
    let out = support::run({
        let mut c = Command::new("find");
        c.arg(dir).args(["-printf", "%P %y %m %s %T@ %U\\n"]);
        c
    });
    assert!(out.status.success());
    let mut v: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    v.sort();
    v
}

fn ready(test: &str) -> Option<(String, PathBuf)> {
    if !support::require_root(test)
        || !support::require_tool(test, "mount")
        || !support::require_tool(test, "setpriv")
    {
        return None;
    }
    carried_artifact(test)
}

#[test]
fn a_noexec_prefix_is_refused_up_front_with_exit_8() {
    let test = "a_noexec_prefix_is_refused_up_front_with_exit_8";
    let Some((art_path, art)) = ready(test) else {
        return;
    };
    let w = world(&art_path, &art);
    let nx = w.path().join("nx");
    fs::create_dir(&nx).unwrap();
    let _m = Mounted::new(&["-t", "tmpfs", "-o", "noexec", "tmpfs"], &nx);
    let src = w.path().join("src");
    let shells = support::bashes();
    for bash in &shells {
        for prefix in [nx.clone(), nx.join("sub/dir")] {
            let what = format!("{} into {}", bash.name, prefix.display());
            let p = prefix.to_str().unwrap();
            let out = install(
                bash,
                &["--prefix", p, "--source-dir", src.to_str().unwrap()],
                false,
            );
            assert_eq!(support::code(&out), 8, "{}", describe(&what, &out));
            let err = text(&out.stderr);
            assert!(
                err.contains("noexec") && err.contains(&format!("(on {})", nx.display())),
                "{}",
                describe(&what, &out)
            );
            assert_eq!(text(&out.stdout), "", "{what}");
            // Nothing of this install is left (a made prefix's last dir
            // goes again; only its parents made by mkdir -p may stay).
            let left: Vec<String> = listing(&nx)
                .into_iter()
                .filter(|l| !l.starts_with(' ') && !l.starts_with("sub "))
                .collect();
            assert!(left.is_empty(), "{what}: left {left:?}");
            // --plan writes nothing and is not refused.
            let plan = install(bash, &["--plan", "--prefix", p], false);
            assert_eq!(support::code(&plan), 0, "{}", describe(&what, &plan));
        }
        let _ = fs::remove_dir_all(nx.join("sub"));
    }
    support::report(test, &shells);
}

#[test]
fn a_complete_install_on_a_read_only_prefix_is_reused_writing_nothing() {
    let test = "a_complete_install_on_a_read_only_prefix_is_reused_writing_nothing";
    let Some((art_path, art)) = ready(test) else {
        return;
    };
    let w = world(&art_path, &art);
    let src = w.path().join("src");
    let src = src.to_str().unwrap();
    let rw = w.path().join("rw");
    let ro = w.path().join("ro");
    let empty = w.path().join("empty");
    let ro_empty = w.path().join("ro-empty");
    for d in [&rw, &ro, &empty, &ro_empty] {
        fs::create_dir(d).unwrap();
    }
    let shells = support::bashes();
    let first = install(
        &shells[0],
        &["--prefix", rw.to_str().unwrap(), "--source-dir", src],
        false,
    );
    assert_eq!(support::code(&first), 0, "{}", describe("install", &first));
    let _ro = Mounted::read_only(&rw, &ro);
    let _ro_empty = Mounted::read_only(&empty, &ro_empty);
    let entry = format!("{}/bash-{}/bin/bash", ro.display(), bash_spec().version);
    let before = listing(&rw);
    for bash in &shells {
        for as_user in [false, true] {
            let what = format!("{} (uid {})", bash.name, if as_user { 1000 } else { 0 });
            let out = install(
                bash,
                &["--prefix", ro.to_str().unwrap(), "--source-dir", src],
                as_user,
            );
            assert_eq!(support::code(&out), 0, "{}", describe(&what, &out));
            assert_eq!(
                text(&out.stdout).lines().last(),
                Some(entry.as_str()),
                "{what}"
            );
            assert_eq!(listing(&rw), before, "{what}: the prefix changed");
            // Read-only and empty: a clear 2 saying the prefix is not writable.
            let out = install(
                bash,
                &["--prefix", ro_empty.to_str().unwrap(), "--source-dir", src],
                as_user,
            );
            assert_eq!(support::code(&out), 2, "{}", describe(&what, &out));
            assert!(
                text(&out.stderr).contains("is not writable"),
                "{}",
                describe(&what, &out)
            );
            assert!(listing(&empty).iter().all(|l| l.starts_with(' ')), "{what}");
        }
    }
    support::report(test, &shells);
}

#[test]
fn a_user_installs_into_its_own_prefix_with_no_home_and_no_tmpdir() {
    let test = "a_user_installs_into_its_own_prefix_with_no_home_and_no_tmpdir";
    let Some((art_path, art)) = ready(test) else {
        return;
    };
    let w = world(&art_path, &art);
    let src = w.path().join("src");
    let shells = support::bashes();
    let outside: Vec<String> = listing(w.path())
        .into_iter()
        .filter(|l| !l.starts_with('p') && !l.starts_with(' '))
        .collect();
    for (i, bash) in shells.iter().enumerate() {
        let prefix = w.path().join(format!("p{i}"));
        fs::create_dir(&prefix).unwrap();
        std::os::unix::fs::chown(&prefix, Some(1000), Some(1000)).unwrap();
        // The rest of the world is not the user's to write: the scratch
        // dir is root's 0755, / is root's.
        let out = install(
            bash,
            &[
                "--prefix",
                prefix.to_str().unwrap(),
                "--source-dir",
                src.to_str().unwrap(),
            ],
            true,
        );
        assert_eq!(support::code(&out), 0, "{}", describe(&bash.name, &out));
        let name = format!("bash-{}", bash_spec().version);
        let mut top: Vec<String> = fs::read_dir(&prefix)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        top.sort();
        assert_eq!(
            top,
            vec![format!(".{name}.lock"), name.clone()],
            "{}",
            bash.name
        );
        for l in listing(&prefix).iter().filter(|l| !l.starts_with(' ')) {
            assert!(l.ends_with(" 1000"), "{}: not the user's: {l}", bash.name);
        }
        // Nothing else of the scratch dir changed (src/ is read only).
        let others: Vec<String> = listing(w.path())
            .into_iter()
            .filter(|l| !l.starts_with('p') && !l.starts_with(' '))
            .collect();
        assert_eq!(others, outside, "{}", bash.name);
    }
    support::report(test, &shells);
}
