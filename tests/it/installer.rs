//! Installers: real installs from a source dir and from a real HTTP server on
//! 127.0.0.1 (curl, GNU wget, busybox wget), digest and entry failures,
//! caches, concurrency with both lock kinds, crash recovery, stale tickets,
//! musl chroots, `shforge installer --spec`, and the generated catalog.
//!
//! The artifacts are made here: a tar.gz holding a fake runtime whose entry
//! prints its version. Every installer test runs under every bash of the matrix.

use crate::support as common;

use std::fs;
use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::chroot::copy_with_libs;
use common::http::Server;
use common::{Shell, code, run_shforge as shforge, text, which};
use sha2::{Digest as _, Sha256};
use shforge::installer::{Artifact, Installer, Libc};

// ---------------------------------------------------------------- fixtures

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A tar.gz with `bin/fake`, a sh script that prints `output` for `--version`
/// (and `extra` files), made with the system tar.
fn make_runtime_tgz(dir: &Path, name: &str, output: &str) -> Vec<u8> {
    let src = dir.join(format!("src-{name}"));
    fs::create_dir_all(src.join("bin")).unwrap();
    // FAKE_HOLD=FILE makes the entry write its PID to FILE and hang: a
    // test kills the installer while it holds the lock in the entry check.
    let script = format!(
        "#!/bin/sh\nif [ -n \"${{FAKE_HOLD:-}}\" ]; then printf %s \"$$\" > \"$FAKE_HOLD.tmp\"; mv \"$FAKE_HOLD.tmp\" \"$FAKE_HOLD\"; exec sleep 60; fi\nprintf '%s\\n' '{output}'\n"
    );
    fs::write(src.join("bin/fake"), script).unwrap();
    fs::set_permissions(src.join("bin/fake"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(src.join("README"), "fake runtime\n").unwrap();
    let out = dir.join(name);
    let st = Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(&src)
        .arg(".")
        .status()
        .unwrap();
    assert!(st.success());
    fs::read(&out).unwrap()
}

/// One test world: a source dir with the artifact, the spec, the script.
struct World {
    dir: tempfile::TempDir,
    script: PathBuf,
    artifact: Vec<u8>,
}

impl World {
    fn src(&self) -> PathBuf {
        self.dir.path().join("src")
    }
    fn prefix(&self) -> PathBuf {
        self.dir.path().join("prefix")
    }
    fn final_dir(&self) -> PathBuf {
        self.prefix().join("fake-1.0")
    }
    fn entry(&self) -> PathBuf {
        self.final_dir().join("bin/fake")
    }
}

/// Build a world whose artifact prints `output` and whose spec expects
/// `fake 1.0`; `sha_override` pins another digest.
fn world_with(output: &str, sha_override: Option<&str>, check_args: &[&str]) -> World {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src/pool")).unwrap();
    let artifact = make_runtime_tgz(dir.path(), "fake.tgz", output);
    fs::write(dir.path().join("src/pool/fake-1.0.tgz"), &artifact).unwrap();
    let sha = sha_override
        .map(str::to_owned)
        .unwrap_or_else(|| sha256_hex(&artifact));
    let inst = Installer::builder("fake", "1.0")
        .entry("bin/fake")
        .check(check_args.iter().copied(), "fake 1.0")
        .artifact(
            Artifact::tar_gz("pool/fake-1.0.tgz", sha)
                .arch(std::env::consts::ARCH)
                .libc(Libc::Glibc),
        )
        .build()
        .unwrap();
    let script = dir.path().join("install_fake.sh");
    fs::write(&script, inst.script().unwrap()).unwrap();
    World {
        dir,
        script,
        artifact,
    }
}

fn world() -> World {
    world_with("fake 1.0", None, &["--version"])
}

/// A directory of symlinks to the tools an installer may use; `without`
/// leaves some out, `wget_busybox` makes `wget` the busybox applet.
fn tools(dir: &Path, without: &[&str], wget_busybox: bool) -> PathBuf {
    let bin = dir.join(format!("tools-{}-{}", without.join("_"), wget_busybox));
    if bin.exists() {
        return bin;
    }
    fs::create_dir_all(&bin).unwrap();
    let names = [
        "tar",
        "gzip",
        "xz",
        "mkdir",
        "rm",
        "mv",
        "cp",
        "ln",
        "readlink",
        "chmod",
        "uname",
        "sleep",
        "cat",
        "sha256sum",
        "shasum",
        "openssl",
        "busybox",
        "flock",
        "curl",
        "wget",
        "timeout",
        "rmdir",
        "sh",
        "printf",
    ];
    for name in names {
        if without.contains(&name) {
            continue;
        }
        let target = if name == "wget" && wget_busybox {
            Some(PathBuf::from("/usr/bin/busybox"))
        } else {
            which(name)
        };
        if let Some(t) = target {
            symlink(t, bin.join(name)).unwrap();
        }
    }
    bin
}

fn install_cmd(sh: &Shell, w: &World, path: &Path, source: &[&str], extra: &[&str]) -> Command {
    let mut c = sh.command(&w.script);
    c.arg("--prefix").arg(w.prefix());
    c.args(source).args(extra);
    c.env("PATH", path)
        .env_remove("SHELLOPTS")
        .env_remove("BASH_ENV");
    c
}

fn run_install(sh: &Shell, w: &World, path: &Path, source: &[&str], extra: &[&str]) -> Output {
    common::run(install_cmd(sh, w, path, source, extra))
}

fn last_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .last()
        .unwrap_or("")
        .to_owned()
}

/// Names in the prefix other than the lock files: what an install left.
fn prefix_entries(w: &World) -> Vec<String> {
    let Ok(rd) = fs::read_dir(w.prefix()) else {
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock") && !n.ends_with(".lockq"))
        .collect();
    v.sort();
    v
}

fn assert_installed(sh: &Shell, w: &World, o: &Output) {
    assert_eq!(code(o), 0, "{}: {}", sh.name, text(o));
    assert_eq!(last_line(o), w.entry().to_string_lossy(), "{}", sh.name);
    let out = common::run(Command::new(w.entry()));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "fake 1.0\n");
    assert_eq!(
        prefix_entries(w),
        vec!["fake-1.0".to_owned()],
        "{}",
        sh.name
    );
}

fn assert_nothing_installed(sh: &Shell, w: &World) {
    assert_eq!(
        prefix_entries(w),
        Vec::<String>::new(),
        "{}: leftovers in the prefix",
        sh.name
    );
}

fn path_of(dir: &Path) -> String {
    dir.to_string_lossy().into_owned()
}

// ---------------------------------------------------------------- tests

#[test]
fn installs_from_source_dir_then_reuses() {
    let shells = common::bashes();
    for sh in &shells {
        let w = world();
        let path = tools(w.dir.path(), &[], false);
        let src = path_of(&w.src());
        let o = run_install(sh, &w, &path, &["--source-dir", &src], &[]);
        assert_installed(sh, &w, &o);
        // A marker inside the install survives a reuse: nothing was replaced.
        fs::write(w.final_dir().join("marker"), "x").unwrap();
        let o = run_install(sh, &w, &path, &["--source-dir", &src], &[]);
        assert_eq!(code(&o), 0, "{}", text(&o));
        assert_eq!(last_line(&o), w.entry().to_string_lossy());
        assert!(w.final_dir().join("marker").exists(), "{}", sh.name);
    }
    common::report("installs_from_source_dir_then_reuses", &shells);
}

#[test]
fn the_printed_entry_path_is_canonical() {
    // A prefix reached through a symlink and `..` still prints the physical
    // path, on a fresh install and on a reuse.
    let shells = common::bashes();
    for sh in &shells {
        let w = world();
        let path = tools(w.dir.path(), &[], false);
        std::os::unix::fs::symlink(w.dir.path(), w.dir.path().join("alias")).unwrap();
        let twisted = w.dir.path().join("alias/prefix/../prefix");
        let canonical = {
            // The entry does not exist yet: canonicalize the temp dir instead.
            let base = fs::canonicalize(w.dir.path()).unwrap();
            base.join("prefix/fake-1.0/bin/fake")
        };
        for round in ["fresh", "reuse"] {
            let mut c = sh.command(&w.script);
            c.arg("--prefix")
                .arg(&twisted)
                .args(["--source-dir", &path_of(&w.src())]);
            c.env("PATH", &path)
                .env_remove("SHELLOPTS")
                .env_remove("BASH_ENV");
            let o = common::run(c);
            assert_eq!(code(&o), 0, "{round} {}: {}", sh.name, text(&o));
            assert_eq!(
                last_line(&o),
                canonical.to_string_lossy(),
                "{round} {}",
                sh.name
            );
        }
    }
    common::report("the_printed_entry_path_is_canonical", &shells);
}

#[test]
fn empty_check_args_under_set_u() {
    let shells = common::bashes();
    for sh in &shells {
        let w = world_with("fake 1.0", None, &[]);
        let path = tools(w.dir.path(), &[], false);
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_installed(sh, &w, &o);
    }
    common::report("empty_check_args_under_set_u", &shells);
}

#[test]
fn installs_from_base_url_with_curl_wget_and_busybox_wget() {
    let shells = common::bashes();
    let server = Server::start();
    for sh in &shells {
        for (label, without, bb) in [
            ("curl", &[][..], false),
            ("wget", &["curl"][..], false),
            ("busybox wget", &["curl"][..], true),
        ] {
            let w = world();
            let url_path = format!("/{}/pool/fake-1.0.tgz", w.dir.path().display());
            server.put(&url_path, &w.artifact);
            let base = format!("{}/{}", server.url(), w.dir.path().display());
            let path = tools(w.dir.path(), without, bb);
            let o = run_install(sh, &w, &path, &["--base-url", &base], &[]);
            assert_installed(sh, &w, &o);
            assert_eq!(server.requests(&url_path), 1, "{} {label}", sh.name);
            // Reuse: no second download.
            let o = run_install(sh, &w, &path, &["--base-url", &base], &[]);
            assert_eq!(code(&o), 0, "{} {label}: {}", sh.name, text(&o));
            assert_eq!(
                server.requests(&url_path),
                1,
                "{} {label}: reused without a download",
                sh.name
            );
        }
    }
    common::report(
        "installs_from_base_url_with_curl_wget_and_busybox_wget",
        &shells,
    );
}

#[test]
fn digest_mismatch_exits_5_and_installs_nothing() {
    let shells = common::bashes();
    let wrong = "ab".repeat(32);
    for sh in &shells {
        let w = world_with("fake 1.0", Some(&wrong), &["--version"]);
        let path = tools(w.dir.path(), &[], false);
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_eq!(code(&o), 5, "{}: {}", sh.name, text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("digest mismatch"));
        assert_nothing_installed(sh, &w);
    }
    common::report("digest_mismatch_exits_5_and_installs_nothing", &shells);
}

#[test]
fn no_digest_tool_exits_5() {
    let shells = common::bashes();
    for sh in &shells {
        let w = world();
        let path = tools(
            w.dir.path(),
            &["sha256sum", "shasum", "openssl", "busybox"],
            false,
        );
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_eq!(code(&o), 5, "{}: {}", sh.name, text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("no sha256 tool"));
        assert_nothing_installed(sh, &w);
    }
    common::report("no_digest_tool_exits_5", &shells);
}

#[test]
fn other_digest_tools_are_used() {
    // shasum and openssl when sha256sum is missing; busybox when all are.
    let shells = common::bashes();
    for sh in &shells {
        for without in [
            &["sha256sum"][..],
            &["sha256sum", "shasum"][..],
            &["sha256sum", "shasum", "openssl"][..],
        ] {
            let w = world();
            let path = tools(w.dir.path(), without, false);
            let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
            assert_installed(sh, &w, &o);
            let wrong = world_with("fake 1.0", Some(&"cd".repeat(32)), &["--version"]);
            let path = tools(wrong.dir.path(), without, false);
            let o = run_install(
                sh,
                &wrong,
                &path,
                &["--source-dir", &path_of(&wrong.src())],
                &[],
            );
            assert_eq!(code(&o), 5, "{} without {without:?}: {}", sh.name, text(&o));
        }
    }
    common::report("other_digest_tools_are_used", &shells);
}

#[test]
fn truncated_download_installs_nothing() {
    let shells = common::bashes();
    let server = Server::start();
    for sh in &shells {
        for (label, without, bb) in [
            ("curl", &[][..], false),
            ("busybox wget", &["curl"][..], true),
        ] {
            let w = world();
            let url_path = format!("/{}/pool/fake-1.0.tgz", w.dir.path().display());
            server.put(&url_path, &w.artifact);
            server.state.lock().unwrap().truncate.push(url_path.clone());
            let base = format!("{}/{}", server.url(), w.dir.path().display());
            let path = tools(w.dir.path(), without, bb);
            let o = run_install(sh, &w, &path, &["--base-url", &base], &[]);
            assert!(
                [4, 5].contains(&code(&o)),
                "{} {label}: {}",
                sh.name,
                text(&o)
            );
            assert_nothing_installed(sh, &w);
        }
    }
    common::report("truncated_download_installs_nothing", &shells);
}

#[test]
fn missing_artifact_exits_4() {
    let shells = common::bashes();
    let server = Server::start();
    for sh in &shells {
        let w = world();
        let path = tools(w.dir.path(), &[], false);
        fs::remove_file(w.src().join("pool/fake-1.0.tgz")).unwrap();
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_eq!(code(&o), 4, "{}: {}", sh.name, text(&o));
        let o = run_install(
            sh,
            &w,
            &path,
            &["--base-url", &format!("{}/none", server.url())],
            &[],
        );
        assert_eq!(code(&o), 4, "{}: {}", sh.name, text(&o));
        assert_nothing_installed(sh, &w);
    }
    common::report("missing_artifact_exits_4", &shells);
}

#[test]
fn failing_entry_check_exits_6_and_removes_the_stage() {
    let shells = common::bashes();
    for sh in &shells {
        let w = world_with("something else", None, &["--version"]);
        let path = tools(w.dir.path(), &[], false);
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_eq!(code(&o), 6, "{}: {}", sh.name, text(&o));
        assert_nothing_installed(sh, &w);
    }
    common::report("failing_entry_check_exits_6_and_removes_the_stage", &shells);
}

#[test]
fn broken_cached_install_is_replaced() {
    let shells = common::bashes();
    for sh in &shells {
        let w = world();
        let path = tools(w.dir.path(), &[], false);
        // A cached install whose entry prints the wrong thing, and a leftover
        // stage of a crashed installer.
        fs::create_dir_all(w.final_dir().join("bin")).unwrap();
        fs::write(w.final_dir().join("bin/fake"), "#!/bin/sh\necho broken\n").unwrap();
        fs::set_permissions(
            w.final_dir().join("bin/fake"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        fs::write(w.final_dir().join("old-marker"), "x").unwrap();
        fs::create_dir_all(w.prefix().join(".fake-1.0.stage.99999/junk")).unwrap();
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_installed(sh, &w, &o);
        assert!(!w.final_dir().join("old-marker").exists(), "{}", sh.name);
        // A cached install without its entry at all is replaced too.
        fs::remove_file(w.entry()).unwrap();
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_installed(sh, &w, &o);
    }
    common::report("broken_cached_install_is_replaced", &shells);
}

#[test]
fn usage_errors_exit_2() {
    let shells = common::bashes();
    let w = world();
    let path = tools(w.dir.path(), &[], false);
    for sh in &shells {
        for args in [
            &[][..],
            &["--prefix", "/tmp/x"][..],
            &["--prefix", "/tmp/x", "--source-dir", "a", "--base-url", "b"][..],
            &[
                "--prefix",
                "/tmp/x",
                "--source-dir",
                "a",
                "--lock-timeout",
                "soon",
            ][..],
            &["--prefix", "/tmp/x", "--source-dir", "a", "--bogus"][..],
            &["--prefix"][..],
        ] {
            let mut c = sh.command(&w.script);
            c.args(args).env("PATH", &path);
            let o = common::run(c);
            assert_eq!(code(&o), 2, "{} {args:?}: {}", sh.name, text(&o));
            assert!(o.stdout.is_empty());
        }
    }
    common::report("usage_errors_exit_2", &shells);
}

/// Start 8 installers at once against the server; all must succeed with one
/// download and one install.
fn concurrent(hide_flock: bool, test: &str) {
    let shells = common::bashes();
    let server = Server::start();
    for sh in &shells {
        let w = world();
        let url_path = format!("/{}/pool/fake-1.0.tgz", w.dir.path().display());
        server.put(&url_path, &w.artifact);
        let base = format!("{}/{}", server.url(), w.dir.path().display());
        let without: &[&str] = if hide_flock { &["flock"] } else { &[] };
        let path = tools(w.dir.path(), without, false);
        let children: Vec<Child> = (0..8)
            .map(|_| {
                install_cmd(
                    sh,
                    &w,
                    &path,
                    &["--base-url", &base],
                    &["--lock-timeout", "60"],
                )
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
            })
            .collect();
        for ch in children {
            let o = ch.wait_with_output().unwrap();
            assert_installed(sh, &w, &o);
        }
        assert_eq!(server.requests(&url_path), 1, "{}: one download", sh.name);
        if hide_flock {
            assert!(w.prefix().join(".fake-1.0.lockq").is_dir(), "{}", sh.name);
            let left: Vec<_> = fs::read_dir(w.prefix().join(".fake-1.0.lockq"))
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert!(left.is_empty(), "{}: tickets left: {left:?}", sh.name);
        } else {
            assert!(w.prefix().join(".fake-1.0.lock").exists(), "{}", sh.name);
        }
    }
    common::report(test, &shells);
}

#[test]
fn eight_concurrent_installers_with_flock() {
    concurrent(false, "eight_concurrent_installers_with_flock");
}

#[test]
fn eight_concurrent_installers_with_the_ticket_queue() {
    concurrent(true, "eight_concurrent_installers_with_the_ticket_queue");
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// kill -9 an installer mid-download (holding the lock); the next run
/// recovers within its lock timeout and installs.
fn killed_mid_download(hide_flock: bool, test: &str) {
    let shells = common::bashes();
    let server = Server::start();
    for sh in &shells {
        let w = world();
        let url_path = format!("/{}/pool/fake-1.0.tgz", w.dir.path().display());
        server.put(&url_path, &w.artifact);
        let base = format!("{}/{}", server.url(), w.dir.path().display());
        let without: &[&str] = if hide_flock { &["flock"] } else { &[] };
        let path = tools(w.dir.path(), without, false);
        server.set_stall(true);
        let before = server.requests(&url_path);
        let mut victim = install_cmd(sh, &w, &path, &["--base-url", &base], &[])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for("the download to start", || {
            server.requests(&url_path) > before
        });
        victim.kill().unwrap(); // SIGKILL
        victim.wait().unwrap();
        // Let downloads through again; the lock must be free although the
        // dead installer never released it.
        server.set_stall(false);
        let o = run_install(
            sh,
            &w,
            &path,
            &["--base-url", &base],
            &["--lock-timeout", "20"],
        );
        if code(&o) != 0 {
            panic!("{}: no recovery: {}", sh.name, text(&o));
        }
        assert_installed(sh, &w, &o);
    }
    common::report(test, &shells);
}

#[test]
fn kill_9_mid_download_with_flock() {
    killed_mid_download(false, "kill_9_mid_download_with_flock");
}

#[test]
fn kill_9_mid_download_with_the_ticket_queue() {
    killed_mid_download(true, "kill_9_mid_download_with_the_ticket_queue");
}

/// kill -9 an installer while it holds the lock in its entry check (the
/// entry hangs); the next run recovers within its lock timeout.
fn killed_holding_the_lock(hide_flock: bool, test: &str) {
    let shells = common::bashes();
    for sh in &shells {
        let w = world();
        let without: &[&str] = if hide_flock { &["flock"] } else { &[] };
        let path = tools(w.dir.path(), without, false);
        let src = path_of(&w.src());
        let held = w.dir.path().join("held");
        let mut victim = install_cmd(sh, &w, &path, &["--source-dir", &src], &[])
            .env("FAKE_HOLD", &held)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for("the entry check to hang", || held.exists());
        victim.kill().unwrap();
        victim.wait().unwrap();
        let o = run_install(
            sh,
            &w,
            &path,
            &["--source-dir", &src],
            &["--lock-timeout", "20"],
        );
        // The hung entry (an orphan now) is ours to end.
        let pid = fs::read_to_string(&held).unwrap();
        let _ = Command::new("kill").arg("-9").arg(pid.trim()).status();
        assert_installed(sh, &w, &o);
    }
    common::report(test, &shells);
}

#[test]
fn kill_9_holding_the_lock_with_flock() {
    killed_holding_the_lock(false, "kill_9_holding_the_lock_with_flock");
}

#[test]
fn kill_9_holding_the_lock_with_the_ticket_queue() {
    killed_holding_the_lock(true, "kill_9_holding_the_lock_with_the_ticket_queue");
}

/// Field 22 of /proc/PID/stat.
fn start_time(pid: u32) -> String {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(19).unwrap().to_owned()
}

#[test]
fn stale_and_recycled_tickets_are_not_owners_but_live_ones_are() {
    let shells = common::bashes();
    for sh in &shells {
        let w = world();
        let path = tools(w.dir.path(), &["flock"], false);
        let src = path_of(&w.src());
        let q = w.prefix().join(".fake-1.0.lockq");
        fs::create_dir_all(&q).unwrap();
        // A live process standing in for an owner.
        let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
        let pid = sleeper.id();
        let real = start_time(pid);
        // Its PID with another start time: a recycled PID, not the owner.
        symlink(format!("{pid}:1{real}"), q.join("t.1")).unwrap();
        // A dead process's ticket and a dead chooser.
        symlink("999999:1", q.join("t.2")).unwrap();
        symlink("999998:1", q.join("c.999998.1")).unwrap();
        let o = run_install(
            sh,
            &w,
            &path,
            &["--source-dir", &src],
            &["--lock-timeout", "5"],
        );
        assert_installed(sh, &w, &o);
        let left: Vec<_> = fs::read_dir(&q)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{}: {left:?}", sh.name);
        // The same PID with its real start time is a live owner: time out (3).
        fs::remove_dir_all(w.final_dir()).unwrap();
        symlink(format!("{pid}:{real}"), q.join("t.1")).unwrap();
        let o = run_install(
            sh,
            &w,
            &path,
            &["--source-dir", &src],
            &["--lock-timeout", "1"],
        );
        assert_eq!(code(&o), 3, "{}: {}", sh.name, text(&o));
        assert!(
            q.join("t.1").symlink_metadata().is_ok(),
            "{}: live ticket removed",
            sh.name
        );
        assert_nothing_installed(sh, &w);
        // A live chooser blocks too.
        fs::remove_file(q.join("t.1")).unwrap();
        symlink(format!("{pid}:{real}"), q.join(format!("c.{pid}.{real}"))).unwrap();
        let o = run_install(
            sh,
            &w,
            &path,
            &["--source-dir", &src],
            &["--lock-timeout", "1"],
        );
        assert_eq!(code(&o), 3, "{}: {}", sh.name, text(&o));
        fs::remove_file(q.join(format!("c.{pid}.{real}"))).unwrap();
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
        // The owner died: its ticket is stale now.
        symlink(format!("{pid}:{real}"), q.join("t.1")).unwrap();
        let o = run_install(
            sh,
            &w,
            &path,
            &["--source-dir", &src],
            &["--lock-timeout", "5"],
        );
        assert_installed(sh, &w, &o);
    }
    common::report(
        "stale_and_recycled_tickets_are_not_owners_but_live_ones_are",
        &shells,
    );
}

#[test]
fn flock_lock_held_by_another_process_times_out_with_3() {
    let shells = common::bashes();
    for sh in &shells {
        let w = world();
        let path = tools(w.dir.path(), &[], false);
        fs::create_dir_all(w.prefix()).unwrap();
        let lock = w.prefix().join(".fake-1.0.lock");
        let mut holder = Command::new("flock")
            .arg(&lock)
            .arg("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        wait_for("flock to hold", || {
            !Command::new("flock")
                .arg("-n")
                .arg(&lock)
                .arg("true")
                .status()
                .unwrap()
                .success()
        });
        let o = run_install(
            sh,
            &w,
            &path,
            &["--source-dir", &path_of(&w.src())],
            &["--lock-timeout", "0.5"],
        );
        assert_eq!(code(&o), 3, "{}: {}", sh.name, text(&o));
        holder.kill().unwrap();
        holder.wait().unwrap();
        assert_nothing_installed(sh, &w);
    }
    common::report(
        "flock_lock_held_by_another_process_times_out_with_3",
        &shells,
    );
}

#[test]
fn lock_timeout_waits_at_least_the_time_asked_for() {
    // $SECONDS ticks on whole wall-clock seconds: a deadline of SECONDS + 1
    // could give up after a moment. A holder that lets go after 0.6 s must
    // not make a --lock-timeout 1 installer give up.
    let shells = common::bashes();
    for sh in &shells {
        for _ in 0..3 {
            let w = world();
            let path = tools(w.dir.path(), &[], false);
            fs::create_dir_all(w.prefix()).unwrap();
            let lock = w.prefix().join(".fake-1.0.lock");
            let mut holder = Command::new("flock")
                .arg(&lock)
                .args(["sleep", "0.6"])
                .spawn()
                .unwrap();
            wait_for("flock to hold", || {
                !Command::new("flock")
                    .arg("-n")
                    .arg(&lock)
                    .arg("true")
                    .status()
                    .unwrap()
                    .success()
            });
            let o = run_install(
                sh,
                &w,
                &path,
                &["--source-dir", &path_of(&w.src())],
                &["--lock-timeout", "1"],
            );
            holder.wait().unwrap();
            assert_installed(sh, &w, &o);
        }
    }
    common::report("lock_timeout_waits_at_least_the_time_asked_for", &shells);
}

// ---------------------------------------------------------------- musl chroot

/// A chroot with a bash of the matrix (and its glibc libraries), busybox for
/// every tool, a fake musl loader, and a fake `apk` that logs its arguments
/// and provides the libraries it is asked for.
struct Chroot {
    dir: tempfile::TempDir,
}

impl Chroot {
    fn new(sh: &Shell, with_apk: bool) -> Chroot {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [
            "bin",
            "lib",
            "usr/lib",
            "etc",
            "tmp",
            "opt/gcc/lib",
            "src/pool",
            "dev",
        ] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        // Every image has /dev/null; /proc is left out (the lock then
        // falls back to kill -0 for liveness).
        let st = Command::new("mknod")
            .arg(root.join("dev/null"))
            .args(["c", "1", "3"])
            .status()
            .unwrap();
        assert!(st.success());
        fs::set_permissions(root.join("dev/null"), fs::Permissions::from_mode(0o666)).unwrap();
        let bash = fs::canonicalize(sh.program()).unwrap();
        copy_with_libs(root, &bash);
        symlink(&bash, root.join("bin/bash-under-test")).unwrap();
        fs::copy("/usr/bin/busybox", root.join("bin/busybox")).unwrap();
        for t in [
            "sh",
            "tar",
            "gzip",
            "mkdir",
            "rm",
            "mv",
            "cp",
            "ln",
            "readlink",
            "chmod",
            "uname",
            "sleep",
            "cat",
            "sha256sum",
            "rmdir",
            "printf",
            "touch",
        ] {
            symlink("busybox", root.join("bin").join(t)).unwrap();
        }
        // The musl loader that makes this a musl system.
        fs::write(root.join("lib/ld-musl-x86_64.so.1"), "").unwrap();
        fs::write(
            root.join("etc/ld-musl-x86_64.path"),
            "/lib:/usr/lib\n/opt/gcc/lib\n",
        )
        .unwrap();
        if with_apk {
            let apk = "#!/bin/sh\nprintf '%s\\n' \"$*\" >> /tmp/apk.log\n[ -e /tmp/apk.fail ] && exit 1\nfor a in \"$@\"; do\n  case $a in\n    libstdc++) touch /usr/lib/libstdc++.so.6 ;;\n    libgcc) touch /usr/lib/libgcc_s.so.1 ;;\n  esac\ndone\nexit 0\n";
            fs::write(root.join("bin/apk"), apk).unwrap();
            fs::set_permissions(root.join("bin/apk"), fs::Permissions::from_mode(0o755)).unwrap();
        }
        Chroot { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Install a musl-needing spec inside the chroot; glibc and musl
    /// artifacts differ, so the output tells which one was picked.
    fn install(&self) -> Output {
        let root = self.root();
        let glibc = make_runtime_tgz(root, "glibc.tgz", "fake 1.0 glibc");
        let musl = make_runtime_tgz(root, "musl.tgz", "fake 1.0 musl");
        fs::write(root.join("src/pool/glibc.tgz"), &glibc).unwrap();
        fs::write(root.join("src/pool/musl.tgz"), &musl).unwrap();
        let inst = Installer::builder("fake", "1.0")
            .entry("bin/fake")
            .check(["--version"], "fake 1.0")
            .musl_lib("libstdc++")
            .musl_lib("libgcc")
            .artifact(
                Artifact::tar_gz("pool/glibc.tgz", sha256_hex(&glibc))
                    .arch("x86_64")
                    .libc(Libc::Glibc),
            )
            .artifact(
                Artifact::tar_gz("pool/musl.tgz", sha256_hex(&musl))
                    .arch("x86_64")
                    .libc(Libc::Musl),
            )
            .build()
            .unwrap();
        fs::write(root.join("install.sh"), inst.script().unwrap()).unwrap();
        let mut c = Command::new(which("chroot").expect("chroot"));
        c.arg(root)
            .arg("/bin/bash-under-test")
            .args(["/install.sh", "--prefix", "/prefix", "--source-dir", "/src"])
            .env_clear()
            .env("PATH", "/bin");
        common::run(c)
    }

    fn apk_log(&self) -> Option<String> {
        fs::read_to_string(self.root().join("tmp/apk.log")).ok()
    }
}

#[test]
fn musl_libraries_present_in_a_path_file_dir_install_nothing() {
    if std::env::consts::ARCH != "x86_64" || !common::require_root("musl chroot tests") {
        return;
    }
    let shells = common::bashes();
    for sh in &shells {
        let c = Chroot::new(sh, true);
        fs::write(c.root().join("opt/gcc/lib/libstdc++.so.6"), "").unwrap();
        fs::write(c.root().join("opt/gcc/lib/libgcc_s.so.1"), "").unwrap();
        let o = c.install();
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        assert_eq!(last_line(&o), "/prefix/fake-1.0/bin/fake");
        assert_eq!(c.apk_log(), None, "{}: apk was run", sh.name);
        let out = fs::read_to_string(c.root().join("prefix/fake-1.0/bin/fake")).unwrap();
        assert!(
            out.contains("musl"),
            "{}: the musl artifact was not chosen",
            sh.name
        );
    }
    common::report(
        "musl_libraries_present_in_a_path_file_dir_install_nothing",
        &shells,
    );
}

#[test]
fn missing_musl_library_is_added_with_apk_exactly() {
    if std::env::consts::ARCH != "x86_64" || !common::require_root("musl chroot tests") {
        return;
    }
    let shells = common::bashes();
    for sh in &shells {
        let c = Chroot::new(sh, true);
        fs::write(c.root().join("usr/lib/libstdc++.so.6"), "").unwrap();
        let o = c.install();
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        assert_eq!(
            c.apk_log().as_deref(),
            Some("add --no-cache libgcc\n"),
            "{}",
            sh.name
        );
        assert!(c.root().join("usr/lib/libgcc_s.so.1").exists());
        // Reuse: nothing is missing any more, apk is not run again.
        let o = c.install();
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        assert_eq!(
            c.apk_log().as_deref(),
            Some("add --no-cache libgcc\n"),
            "{}",
            sh.name
        );
    }
    common::report("missing_musl_library_is_added_with_apk_exactly", &shells);
}

#[test]
fn musl_library_that_cannot_be_provided_exits_7() {
    if std::env::consts::ARCH != "x86_64" || !common::require_root("musl chroot tests") {
        return;
    }
    let shells = common::bashes();
    for sh in &shells {
        // No apk at all.
        let c = Chroot::new(sh, false);
        let o = c.install();
        assert_eq!(code(&o), 7, "{}: {}", sh.name, text(&o));
        assert!(!c.root().join("prefix/fake-1.0").exists());
        // apk fails.
        let c = Chroot::new(sh, true);
        fs::write(c.root().join("tmp/apk.fail"), "").unwrap();
        let o = c.install();
        assert_eq!(code(&o), 7, "{}: {}", sh.name, text(&o));
        assert_eq!(
            c.apk_log().as_deref(),
            Some("add --no-cache libstdc++ libgcc\n"),
            "{}",
            sh.name
        );
        assert!(!c.root().join("prefix/fake-1.0").exists());
    }
    common::report("musl_library_that_cannot_be_provided_exits_7", &shells);
}

// ---------------------------------------------------------------- CLI and catalog

const GOOD_SPEC: &str = r#"
name = "tool"
version = "2.0"
entry = "bin/tool"

[[artifact]]
path = "tool-2.0.tgz"
sha256 = "465b40d7195b8dd0b52d8830f13cbe800858a2ee82fba4ce3c1832cd9727062b"
unpack = "tar.gz"
arch = "x86_64"
libc = "any"
"#;

/// Values that are also command names (`ls`, `file`, `echo`): a bare
/// `unpack=file` is shellcheck's SC2209; the generated script must be clean.
const COMMAND_LIKE_SPEC: &str = r#"
name = "ls"
version = "1"
entry = "ls"

[check]
args = ["echo"]
expect = "echo"

[[artifact]]
path = "ls"
sha256 = "465b40d7195b8dd0b52d8830f13cbe800858a2ee82fba4ce3c1832cd9727062b"
unpack = "file"
arch = "x86_64"
libc = "any"
"#;

#[test]
fn adapter_specs_with_command_like_values_are_shellcheck_clean() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("ls.toml");
    fs::write(&spec, COMMAND_LIKE_SPEC).unwrap();
    let out = dir.path().join("install_ls.sh");
    let o = shforge(&[
        "installer",
        "--spec",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let sc = common::run({
        let mut c = Command::new("shellcheck");
        c.arg(&out);
        c
    });
    assert!(sc.status.success(), "{}", text(&sc));
}

#[test]
fn shforge_installer_spec_good_and_bad() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.toml");
    fs::write(&good, GOOD_SPEC).unwrap();
    let o = shforge(&["installer", "--spec", good.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let script = String::from_utf8(o.stdout).unwrap();
    assert!(script.starts_with("#!/usr/bin/env bash\n") || script.starts_with("#!"));
    assert!(script.contains("name='tool'\n") && script.ends_with("main \"$@\"\n"));
    assert!(
        script.contains("templates/installer.sh and good.toml")
            && script.contains("shforge installer --spec good.toml"),
        "the header names the spec and how to regenerate: {script}"
    );
    let out = dir.path().join("install_tool.sh");
    let o = shforge(&[
        "installer",
        "--spec",
        good.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(o.stdout.is_empty());
    assert_eq!(fs::read_to_string(&out).unwrap(), script);
    assert_eq!(
        fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o755
    );
    let sc = common::run({
        let mut c = Command::new("shellcheck");
        c.arg(&out);
        c
    });
    assert!(sc.status.success(), "{}", text(&sc));

    let two = format!(
        "{GOOD_SPEC}\n[[artifact]]\npath = \"b.tgz\"\nsha256 = \"abc\"\nunpack = \"tar.gz\"\narch = \"x86_64\"\nlibc = \"musl\"\n"
    );
    let cases: Vec<(String, &str)> = vec![
        (two, "artifact[1].sha256: expected 64 hex digits"),
        (
            GOOD_SPEC.replace("tar.gz", "zip"),
            "artifact[0].unpack: unknown variant `zip`",
        ),
        (
            GOOD_SPEC.replace("libc = \"any\"", "libc = \"bionic\""),
            "artifact[0].libc: unknown variant",
        ),
        (
            GOOD_SPEC.replace("entry = \"bin/tool\"\n", ""),
            "missing field `entry`",
        ),
        (
            GOOD_SPEC.replace("entry = \"bin/tool\"", "entry = \"../tool\""),
            "entry: ",
        ),
        (
            GOOD_SPEC.replace("entry = \"bin/tool\"", "entry = 5"),
            "entry: invalid type: integer",
        ),
        (
            GOOD_SPEC.replace("arch = \"x86_64\"", "arch = \"x86_64\"\nshaa = 1"),
            "artifact[0].shaa: unknown field `shaa`",
        ),
        (
            GOOD_SPEC.replace(
                "entry = \"bin/tool\"",
                "entry = \"bin/tool\"\nmusl_libs = [\"libfoo\"]",
            ),
            "musl_libs[0]: unknown library",
        ),
        (
            GOOD_SPEC.replace("path = \"tool-2.0.tgz\"", "path = \"/abs/tool.tgz\""),
            "artifact[0].path: expected a relative path",
        ),
        (
            GOOD_SPEC.replace(
                "465b40d7195b8dd0b52d8830f13cbe800858a2ee82fba4ce3c1832cd9727062b",
                &"0".repeat(64),
            ),
            "artifact[0].sha256: looks like a placeholder",
        ),
        ("name = [".to_owned(), "line 1"),
    ];
    for (spec, want) in cases {
        let f = dir.path().join("bad.toml");
        fs::write(&f, &spec).unwrap();
        let o = shforge(&["installer", "--spec", f.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{spec}\n{}", text(&o));
        assert!(o.stdout.is_empty());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "want {want:?} in {err:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    }
    let o = shforge(&["installer", "--spec", "/nonexistent.toml"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn generated_installers_are_clean_and_name_no_host() {
    let dir = common::root().join("generated/installers");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "claude-code.sh",
            "kilo.sh",
            "openclaw.sh",
            "opencode.sh",
            "pi.sh"
        ]
    );
    for n in &names {
        let p = dir.join(n);
        let sc = common::run({
            let mut c = Command::new("shellcheck");
            c.arg(&p);
            c
        });
        assert!(sc.status.success(), "{n}: {}", text(&sc));
        let lint = shforge(&["lint", "--dialect", "bash", p.to_str().unwrap()]);
        assert_eq!(code(&lint), 0, "{n}: {}", text(&lint));
        let body = fs::read_to_string(&p).unwrap();
        assert!(!body.contains("://"), "{n} names a download host");
        assert!(!body.contains("python"), "{n} mentions python");
    }
    // The specs in the repository are exactly what was generated.
    for (name, text) in shforge::installer::HARNESS_SPECS {
        let inst = Installer::from_toml(text).unwrap();
        assert_eq!(inst.name(), *name);
        let on_disk = fs::read_to_string(dir.join(format!("{name}.sh"))).unwrap();
        // Same body; only the header's provenance line differs.
        let skip_header = |t: &str| t.lines().skip(2).collect::<Vec<_>>().join("\n");
        assert_eq!(
            skip_header(&inst.script().unwrap()),
            skip_header(&on_disk),
            "{name}: generated/ is stale"
        );
    }
}

#[test]
fn templates_pass_the_template_lint() {
    let t = common::root().join("templates");
    let mut files = vec![t.join("installer.sh")];
    for n in [
        "install_log.sh",
        "download.sh",
        "digest.sh",
        "unpack.sh",
        "lock.sh",
        "select.sh",
        "musl_install.sh",
    ] {
        files.push(t.join("lib").join(n));
    }
    for f in files {
        let src = fs::read_to_string(&f).unwrap();
        let findings = shforge::template_lint::check(&src);
        assert!(findings.is_empty(), "{}: {findings:?}", f.display());
    }
}

#[test]
fn generated_harness_installers_run_and_fail_closed_on_a_wrong_artifact() {
    // The real generated scripts, under every bash: usage errors exit 2, and a
    // file with the pinned name but other bytes is refused (5), nothing installed.
    let shells = common::bashes();
    let dir = common::root().join("generated/installers");
    for sh in &shells {
        for (name, text_) in shforge::installer::HARNESS_SPECS {
            let inst = Installer::from_toml(text_).unwrap();
            let script = dir.join(format!("{name}.sh"));
            let o = common::run({
                let mut c = sh.command(&script);
                c.arg("--prefix");
                c
            });
            assert_eq!(code(&o), 2, "{} {name}: {}", sh.name, text(&o));
            if std::env::consts::ARCH != "x86_64" {
                continue;
            }
            let tmp = tempfile::tempdir().unwrap();
            for a in inst.artifacts() {
                let p = tmp.path().join("src").join(a.path());
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(&p, b"not the real artifact").unwrap();
            }
            let prefix = tmp.path().join("prefix");
            let o = common::run({
                let mut c = sh.command(&script);
                c.arg("--prefix")
                    .arg(&prefix)
                    .arg("--source-dir")
                    .arg(tmp.path().join("src"));
                c
            });
            assert_eq!(code(&o), 5, "{} {name}: {}", sh.name, text(&o));
            let left: Vec<_> = fs::read_dir(&prefix)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| !n.ends_with(".lock") && !n.ends_with(".lockq"))
                .collect();
            assert!(left.is_empty(), "{} {name}: {left:?}", sh.name);
        }
    }
    common::report(
        "generated_harness_installers_run_and_fail_closed_on_a_wrong_artifact",
        &shells,
    );
}
