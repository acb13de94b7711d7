//! Installers: real installs from a source dir and from a real HTTP server on
//! 127.0.0.1 (curl, GNU wget, busybox wget), digest and entry failures,
//! caches, concurrency with both lock kinds, crash recovery, stale tickets,
//! musl chroots, `shforge installer --spec`, and the generated catalog.
//!
//! The artifacts are made here: a tar.gz holding a fake runtime whose entry
//! prints its version. Every installer test runs under every bash of the matrix.

use crate::support;
use support::sha256_hex;

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use shforge::installer::{Artifact, Installer, Libc};
use support::chroot::{copy_with_libs, hide_glibc_loader};
use support::http::Server;
use support::{Shell, code, run_shforge as shforge, text, which};

// ---------------------------------------------------------------- fixtures

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
    support::tar_gz_dir(&src, &dir.join(name))
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
        "awk",
        "find",
        "ls",
        "wc",
        "head",
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
    support::run(install_cmd(sh, w, path, source, extra))
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
    let out = support::run(Command::new(w.entry()));
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
    let shells = support::bashes();
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
    support::report("installs_from_source_dir_then_reuses", &shells);
}

#[test]
fn the_printed_entry_path_is_canonical() {
    // A prefix reached through a symlink and `..` still prints the physical
    // path, on a fresh install and on a reuse.
    let shells = support::bashes();
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
            let o = support::run(c);
            assert_eq!(code(&o), 0, "{round} {}: {}", sh.name, text(&o));
            assert_eq!(
                last_line(&o),
                canonical.to_string_lossy(),
                "{round} {}",
                sh.name
            );
        }
    }
    support::report("the_printed_entry_path_is_canonical", &shells);
}

#[test]
fn empty_check_args_under_set_u() {
    let shells = support::bashes();
    for sh in &shells {
        let w = world_with("fake 1.0", None, &[]);
        let path = tools(w.dir.path(), &[], false);
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_installed(sh, &w, &o);
    }
    support::report("empty_check_args_under_set_u", &shells);
}

#[test]
fn installs_from_base_url_with_curl_wget_and_busybox_wget() {
    let shells = support::bashes();
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
    support::report(
        "installs_from_base_url_with_curl_wget_and_busybox_wget",
        &shells,
    );
}

#[test]
fn digest_mismatch_exits_5_and_installs_nothing() {
    let shells = support::bashes();
    let wrong = "ab".repeat(32);
    for sh in &shells {
        let w = world_with("fake 1.0", Some(&wrong), &["--version"]);
        let path = tools(w.dir.path(), &[], false);
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_eq!(code(&o), 5, "{}: {}", sh.name, text(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("digest mismatch"));
        assert_nothing_installed(sh, &w);
    }
    support::report("digest_mismatch_exits_5_and_installs_nothing", &shells);
}

#[test]
fn no_digest_tool_exits_5() {
    let shells = support::bashes();
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
    support::report("no_digest_tool_exits_5", &shells);
}

#[test]
fn other_digest_tools_are_used() {
    // sha256sum when openssl is missing, then shasum; busybox when all are.
    let shells = support::bashes();
    for sh in &shells {
        for without in [
            &["openssl"][..],
            &["openssl", "sha256sum"][..],
            &["openssl", "sha256sum", "shasum"][..],
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
    support::report("other_digest_tools_are_used", &shells);
}

/// openssl, the first digest tool, reads no inherited OPENSSL_CONF: a
/// config naming a provider module it cannot load makes `openssl dgst`
/// fail (so the install would exit 5), and a loadable one would run its
/// code in the tool that judges the bytes.
#[test]
fn openssl_reads_no_inherited_config() {
    if !support::require_tool("openssl_reads_no_inherited_config", "openssl") {
        return;
    }
    let shells = support::bashes();
    for sh in &shells {
        let w = world();
        let conf = w.dir.path().join("hostile.cnf");
        let module = w.dir.path().join("no-such-provider.so");
        fs::write(
            &conf,
            format!(
                "openssl_conf = evil\n[evil]\nproviders = p\n[p]\nx = xs\n\
                 [xs]\nmodule = {}\nactivate = 1\n",
                module.display()
            ),
        )
        .unwrap();
        // Only openssl can digest: without the guard the install fails.
        let path = tools(w.dir.path(), &["sha256sum", "shasum", "busybox"], false);
        let mut c = install_cmd(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        c.env("OPENSSL_CONF", &conf);
        let o = support::run(c);
        assert_installed(sh, &w, &o);
    }
    support::report("openssl_reads_no_inherited_config", &shells);
}

/// A digest tool that fails gives way to the next: an openssl that cannot
/// run (its libcrypto gone) or prints no digest does not fail the install,
/// and one that prints a wrong digest is a mismatch, never passed over.
#[test]
fn a_failing_digest_tool_gives_way_to_the_next() {
    let shells = support::bashes();
    for sh in &shells {
        for (label, body, installs) in [
            (
                "fails",
                "echo 'openssl: cannot open libcrypto.so.3' >&2; exit 127",
                true,
            ),
            (
                "prints no digest",
                "echo 'SHA2-256(stdin)= not-a-digest'",
                true,
            ),
            (
                "prints a wrong digest",
                &format!("echo 'SHA2-256(stdin)= {}'", "ab".repeat(32)),
                false,
            ),
        ] {
            let w = world();
            let path = tools(w.dir.path(), &["openssl"], false);
            let fake = path.join("openssl");
            fs::write(&fake, format!("#!/bin/sh\ncat > /dev/null\n{body}\n")).unwrap();
            fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
            let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
            if installs {
                assert_installed(sh, &w, &o);
            } else {
                assert_eq!(code(&o), 5, "{} openssl {label}: {}", sh.name, text(&o));
                assert!(text(&o).contains("digest mismatch"), "{}", text(&o));
                assert_nothing_installed(sh, &w);
            }
        }
    }
    support::report("a_failing_digest_tool_gives_way_to_the_next", &shells);
}

#[test]
fn truncated_download_installs_nothing() {
    let shells = support::bashes();
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
    support::report("truncated_download_installs_nothing", &shells);
}

#[test]
fn missing_artifact_exits_4() {
    let shells = support::bashes();
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
    support::report("missing_artifact_exits_4", &shells);
}

#[test]
fn failing_entry_check_exits_6_and_removes_the_stage() {
    let shells = support::bashes();
    for sh in &shells {
        let w = world_with("something else", None, &["--version"]);
        let path = tools(w.dir.path(), &[], false);
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_eq!(code(&o), 6, "{}: {}", sh.name, text(&o));
        assert_nothing_installed(sh, &w);
    }
    support::report("failing_entry_check_exits_6_and_removes_the_stage", &shells);
}

#[test]
fn broken_cached_install_is_replaced() {
    let shells = support::bashes();
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
    support::report("broken_cached_install_is_replaced", &shells);
}

/// An install whose entry still passes its check but that was made from
/// other artifacts (an earlier pin of the same version: a rebuilt bundle) is
/// replaced, not reused; so is one whose stamp is missing, altered or a
/// link. The stamp records every pinned sha256.
#[test]
fn an_install_of_other_artifacts_is_replaced() {
    let shells = support::bashes();
    for sh in &shells {
        let w = world();
        let path = tools(w.dir.path(), &[], false);
        let src = path_of(&w.src());
        let stamp = w.final_dir().join(".shforge-artifacts");
        let o = run_install(sh, &w, &path, &["--source-dir", &src], &[]);
        assert_installed(sh, &w, &o);
        assert_eq!(
            fs::read_to_string(&stamp).unwrap(),
            format!("{}\n", sha256_hex(&w.artifact)),
            "{}",
            sh.name
        );
        // The same name and version, a rebuilt artifact (one more file).
        let rebuilt = w.dir.path().join("rebuilt");
        fs::create_dir_all(rebuilt.join("src-fake.tgz")).unwrap();
        fs::write(rebuilt.join("src-fake.tgz/NEWS"), "rebuilt\n").unwrap();
        let again = make_runtime_tgz(&rebuilt, "fake.tgz", "fake 1.0");
        fs::write(w.src().join("pool/fake-1.0.tgz"), &again).unwrap();
        let newer = Installer::builder("fake", "1.0")
            .entry("bin/fake")
            .check(["--version"], "fake 1.0")
            .artifact(
                Artifact::tar_gz("pool/fake-1.0.tgz", sha256_hex(&again))
                    .arch(std::env::consts::ARCH)
                    .libc(Libc::Glibc),
            )
            .build()
            .unwrap();
        let newer_script = w.dir.path().join("install_fake_newer.sh");
        fs::write(&newer_script, newer.script().unwrap()).unwrap();
        let cases = [
            "a stamp of other artifacts",
            "no stamp",
            "an altered stamp",
            "a stamp that is a link to the right text",
        ];
        for case in cases {
            match case {
                "no stamp" => fs::remove_file(&stamp).unwrap(),
                "an altered stamp" => fs::write(&stamp, "0000\n").unwrap(),
                "a stamp that is a link to the right text" => {
                    let right = w.dir.path().join("right-stamp");
                    fs::write(&right, format!("{}\n", sha256_hex(&again))).unwrap();
                    fs::remove_file(&stamp).unwrap();
                    symlink(&right, &stamp).unwrap();
                }
                _ => {}
            }
            fs::write(w.final_dir().join("old-marker"), "x").unwrap();
            let mut c = sh.command(&newer_script);
            c.arg("--prefix")
                .arg(w.prefix())
                .args(["--source-dir", &src]);
            c.env("PATH", &path)
                .env_remove("SHELLOPTS")
                .env_remove("BASH_ENV");
            let o = support::run(c);
            assert_installed(sh, &w, &o);
            assert!(
                !w.final_dir().join("old-marker").exists(),
                "{}: {case}: reused",
                sh.name
            );
            assert!(
                text(&o).contains("holds other artifacts"),
                "{}: {case}: {}",
                sh.name,
                text(&o)
            );
            assert_eq!(
                fs::read_to_string(&stamp).unwrap(),
                format!("{}\n", sha256_hex(&again)),
                "{}: {case}",
                sh.name
            );
        }
        // And the install of the newer pin is reused by it.
        fs::write(w.final_dir().join("old-marker"), "x").unwrap();
        let mut c = sh.command(&newer_script);
        c.arg("--prefix")
            .arg(w.prefix())
            .args(["--source-dir", &src]);
        c.env("PATH", &path)
            .env_remove("SHELLOPTS")
            .env_remove("BASH_ENV");
        let o = support::run(c);
        assert_eq!(code(&o), 0, "{}", text(&o));
        assert!(w.final_dir().join("old-marker").exists(), "{}", sh.name);
    }
    support::report("an_install_of_other_artifacts_is_replaced", &shells);
}

#[test]
fn usage_errors_exit_2() {
    let shells = support::bashes();
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
            let o = support::run(c);
            assert_eq!(code(&o), 2, "{} {args:?}: {}", sh.name, text(&o));
            assert!(o.stdout.is_empty());
        }
    }
    support::report("usage_errors_exit_2", &shells);
}

/// Start 8 installers at once against the server; all must succeed with one
/// download and one install.
fn concurrent(hide_flock: bool, test: &str) {
    let shells = support::bashes();
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
        // Every run ends before any is judged: a run still checking the
        // install has its throwaway check home in the prefix meanwhile.
        let outputs: Vec<Output> = children
            .into_iter()
            .map(|ch| ch.wait_with_output().unwrap())
            .collect();
        for o in &outputs {
            assert_installed(sh, &w, o);
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
    support::report(test, &shells);
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
    let shells = support::bashes();
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
    support::report(test, &shells);
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
    let shells = support::bashes();
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
    support::report(test, &shells);
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
    let shells = support::bashes();
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
    support::report(
        "stale_and_recycled_tickets_are_not_owners_but_live_ones_are",
        &shells,
    );
}

#[test]
fn flock_lock_held_by_another_process_times_out_with_3() {
    let shells = support::bashes();
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
    support::report(
        "flock_lock_held_by_another_process_times_out_with_3",
        &shells,
    );
}

#[test]
fn lock_timeout_waits_at_least_the_time_asked_for() {
    // $SECONDS ticks on whole wall-clock seconds: a deadline of SECONDS + 1
    // could give up after a moment. A holder that lets go after 0.6 s must
    // not make a --lock-timeout 1 installer give up.
    let shells = support::bashes();
    for sh in &shells {
        for _ in 0..3 {
            let w = world();
            let path = tools(w.dir.path(), &[], false);
            fs::create_dir_all(w.prefix()).unwrap();
            let lock = w.prefix().join(".fake-1.0.lock");
            // The holder says when it holds the lock (a file it makes under
            // it): probing with `flock -n` could miss a 0.6 s hold entirely
            // on a loaded machine and then wait forever.
            let held = w.dir.path().join("held");
            let mut holder = Command::new("flock")
                .arg(&lock)
                .args(["sh", "-c", ": > \"$1\"; sleep 0.6", "sh"])
                .arg(&held)
                .spawn()
                .unwrap();
            wait_for("flock to hold", || held.exists());
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
    support::report("lock_timeout_waits_at_least_the_time_asked_for", &shells);
}

// ---------------------------------------------------------------- musl chroot

/// A chroot with a bash of the matrix (and its glibc libraries), busybox for
/// every tool, a fake musl loader, and a fake `apk` that logs its arguments
/// and provides the libraries it is asked for.
struct Chroot {
    dir: tempfile::TempDir,
}

/// Root and what the musl chroots are made of (a static busybox, chroot,
/// mknod, ldd); anything missing skips the test loudly, or fails it under
/// SHFORGE_REQUIRE_SHELLS=1.
fn musl_chroot_tools() -> bool {
    let test = "musl chroot tests";
    if !support::require_root(test)
        || !["/usr/bin/busybox", "chroot", "mknod", "ldd"]
            .iter()
            .all(|t| support::require_tool(test, t))
    {
        return false;
    }
    let out = support::run({
        let mut c = Command::new("ldd");
        c.arg("/usr/bin/busybox");
        c
    });
    let dynamic = out.status.success() && String::from_utf8_lossy(&out.stdout).contains("=>");
    support::require(test, !dynamic, "a static /usr/bin/busybox (busybox-static)")
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
        // The bash under test is a glibc program: its loader goes where the
        // libc detection does not look, so that musl is all the image shows.
        hide_glibc_loader(root, std::slice::from_ref(&bash));
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
            "awk",
            "find",
            "ls",
            "wc",
            "head",
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
        support::run(c)
    }

    fn apk_log(&self) -> Option<String> {
        fs::read_to_string(self.root().join("tmp/apk.log")).ok()
    }
}

#[test]
fn musl_libraries_present_in_a_path_file_dir_install_nothing() {
    if std::env::consts::ARCH != "x86_64" || !musl_chroot_tools() {
        return;
    }
    let shells = support::bashes();
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
    support::report(
        "musl_libraries_present_in_a_path_file_dir_install_nothing",
        &shells,
    );
}

#[test]
fn missing_musl_library_is_added_with_apk_exactly() {
    if std::env::consts::ARCH != "x86_64" || !musl_chroot_tools() {
        return;
    }
    let shells = support::bashes();
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
    support::report("missing_musl_library_is_added_with_apk_exactly", &shells);
}

#[test]
fn musl_library_that_cannot_be_provided_exits_7() {
    if std::env::consts::ARCH != "x86_64" || !musl_chroot_tools() {
        return;
    }
    let shells = support::bashes();
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
    support::report("musl_library_that_cannot_be_provided_exits_7", &shells);
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
    let sc = support::run({
        let mut c = Command::new("shellcheck");
        c.arg(&out);
        c
    });
    assert!(sc.status.success(), "{}", text(&sc));
}

/// `shforge installer --spec`: a good spec makes a script (on stdout or
/// `--out`, shellcheck clean); each bad one is refused with exit 2 and one
/// line naming the field.
mod shforge_installer_spec_good_and_bad {
    use super::*;
    use crate::support::cases;

    #[test]
    fn good() {
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
        let sc = support::run({
            let mut c = Command::new("shellcheck");
            c.arg(&out);
            c
        });
        assert!(sc.status.success(), "{}", text(&sc));
    }

    /// GOOD_SPEC with a second artifact whose digest is malformed.
    fn two() -> String {
        format!(
            "{GOOD_SPEC}\n[[artifact]]\npath = \"b.tgz\"\nsha256 = \"abc\"\nunpack = \"tar.gz\"\narch = \"x86_64\"\nlibc = \"musl\"\n"
        )
    }

    fn refused(spec: String, want: &str) {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad.toml");
        fs::write(&f, &spec).unwrap();
        let o = shforge(&["installer", "--spec", f.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{spec}\n{}", text(&o));
        assert!(o.stdout.is_empty());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "want {want:?} in {err:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    }

    cases! { refused;
        second_artifact_sha256 => (two(), "artifact[1].sha256: expected 64 hex digits"),
        unpack_zip => (
            GOOD_SPEC.replace("tar.gz", "zip"),
            "artifact[0].unpack: unknown variant `zip`",
        ),
        libc_bionic => (
            GOOD_SPEC.replace("libc = \"any\"", "libc = \"bionic\""),
            "artifact[0].libc: unknown variant",
        ),
        entry_missing => (GOOD_SPEC.replace("entry = \"bin/tool\"\n", ""), "missing field `entry`"),
        entry_dot_dot => (
            GOOD_SPEC.replace("entry = \"bin/tool\"", "entry = \"../tool\""),
            "entry: ",
        ),
        entry_integer => (
            GOOD_SPEC.replace("entry = \"bin/tool\"", "entry = 5"),
            "entry: invalid type: integer",
        ),
        unknown_field => (
            GOOD_SPEC.replace("arch = \"x86_64\"", "arch = \"x86_64\"\nshaa = 1"),
            "artifact[0].shaa: unknown field `shaa`",
        ),
        musl_lib_unknown => (
            GOOD_SPEC.replace("entry = \"bin/tool\"", "entry = \"bin/tool\"\nmusl_libs = [\"libfoo\"]"),
            "musl_libs[0]: unknown library",
        ),
        path_absolute => (
            GOOD_SPEC.replace("path = \"tool-2.0.tgz\"", "path = \"/abs/tool.tgz\""),
            "artifact[0].path: expected a relative path",
        ),
        sha256_placeholder => (
            GOOD_SPEC.replace("465b40d7195b8dd0b52d8830f13cbe800858a2ee82fba4ce3c1832cd9727062b", &"0".repeat(64)),
            "artifact[0].sha256: looks like a placeholder",
        ),
        name_too_long => (
            GOOD_SPEC.replace("name = \"tool\"", &format!("name = \"{}\"", "t".repeat(240))),
            "name: NAME-VERSION is 244 bytes",
        ),
        mode_setuid => (
            COMMAND_LIKE_SPEC.replace("libc = \"any\"", "libc = \"any\"\nmode = \"4755\""),
            "artifact[0].mode: \"4755\" sets setuid",
        ),
        size_zero => (
            GOOD_SPEC.replace("libc = \"any\"", "libc = \"any\"\nsize = 0"),
            "artifact[0].size: ",
        ),
        subdir_dot_dot => (
            GOOD_SPEC.replace("libc = \"any\"", "libc = \"any\"\nsubdir = \"package/../x\""),
            "artifact[0].subdir: ",
        ),
        subdir_of_a_file => (
            COMMAND_LIKE_SPEC.replace("libc = \"any\"", "libc = \"any\"\nsubdir = \"x\""),
            "artifact[0].subdir: only an archive has a subdir",
        ),
        not_toml => ("name = [".to_owned(), "line 1"),
    }

    #[test]
    fn missing_file() {
        let o = shforge(&["installer", "--spec", "/nonexistent.toml"]);
        assert_eq!(code(&o), 2);
    }
}

#[test]
fn generated_installers_are_clean_and_name_no_host() {
    let dir = support::root().join("generated/installers");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // One installer per shipped spec, and nothing else.
    let mut want: Vec<String> = shforge::installer::shipped_specs()
        .map(|(n, _)| format!("{n}.sh"))
        .collect();
    want.sort();
    assert_eq!(names, want);
    assert_eq!(
        shforge::installer::HARNESS_SPECS.len(),
        shforge::harness::Harness::ALL.len()
    );
    for n in &names {
        let p = dir.join(n);
        let sc = support::run({
            let mut c = Command::new("shellcheck");
            c.arg(&p);
            c
        });
        assert!(sc.status.success(), "{n}: {}", text(&sc));
        let lint = shforge(&["lint", "--dialect", "bash", p.to_str().unwrap()]);
        assert_eq!(code(&lint), 0, "{n}: {}", text(&lint));
        let body = fs::read_to_string(&p).unwrap();
        assert!(!body.contains("://"), "{n} names a download host");
        // No installer runs a python: the word appears only in comments,
        // in the spec's own data (an artifact's path or dest, a relocated
        // file) and in a launcher line naming the private runtime it placed.
        for line in body.lines().filter(|l| l.contains("python")) {
            let t = line.trim_start();
            assert!(
                t.starts_with('#')
                    || t.starts_with("art_")
                    || t.starts_with("rel_")
                    || (t.starts_with("exec \"$here\"/../") && !t.contains(" python")),
                "{n} mentions python outside its data: {line}"
            );
        }
    }
    // The specs in the repository are exactly what was generated.
    for (name, text) in shforge::installer::shipped_specs() {
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
    let mut files = vec!["installer.sh".to_owned()];
    for n in [
        "install_log.sh",
        "download.sh",
        "digest.sh",
        "unpack.sh",
        "judge.sh",
        "lock.sh",
        "select.sh",
        "musl_install.sh",
    ] {
        files.push(format!("lib/{n}"));
    }
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let findings = crate::templates::template_lint_files(&files);
    assert!(findings.is_empty(), "{findings:?}");
}

#[test]
fn generated_harness_installers_run_and_fail_closed_on_a_wrong_artifact() {
    // The real generated scripts, under every bash: usage errors exit 2, and a
    // file with the pinned name but other bytes is refused (5), nothing installed.
    let shells = support::bashes();
    let dir = support::root().join("generated/installers");
    for sh in &shells {
        for (name, text_) in shforge::installer::shipped_specs() {
            let inst = Installer::from_toml(text_).unwrap();
            let script = dir.join(format!("{name}.sh"));
            let o = support::run({
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
            let o = support::run({
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
    support::report(
        "generated_harness_installers_run_and_fail_closed_on_a_wrong_artifact",
        &shells,
    );
}

// ---------------------------------------------------------------- hostile archives
//
// Pinned artifacts are trusted to be the right bytes, not to be well-formed.
// The archives below are made here with the `tar` crate, writing raw header
// fields (the crate itself refuses `..` and absolute names), and gzipped by
// the system gzip. Each case runs under GNU tar and busybox tar, on every
// bash, as whoever runs the tests (root in CI: tar would then make device
// nodes and keep setuid bits).

/// One member of a hand-made archive.
enum Member<'a> {
    File(&'a str, &'a [u8], u32),
    Dir(&'a str),
    Sym(&'a str, &'a str),
    Hard(&'a str, &'a str),
    Char(&'a str),
    Fifo(&'a str),
}

/// A tar.gz of `members`, in order, with the names and link targets written
/// byte for byte into the header.
fn hostile_tgz(members: &[Member]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for m in members {
        let (name, kind, link, data, mode): (&str, tar::EntryType, &str, &[u8], u32) = match m {
            Member::File(n, d, mode) => (n, tar::EntryType::Regular, "", d, *mode),
            Member::Dir(n) => (n, tar::EntryType::Directory, "", b"", 0o755),
            Member::Sym(n, t) => (n, tar::EntryType::Symlink, t, b"", 0o777),
            Member::Hard(n, t) => (n, tar::EntryType::Link, t, b"", 0o644),
            Member::Char(n) => (n, tar::EntryType::Char, "", b"", 0o666),
            Member::Fifo(n) => (n, tar::EntryType::Fifo, "", b"", 0o644),
        };
        let mut h = tar::Header::new_ustar();
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_size(data.len() as u64);
        h.set_mtime(0);
        h.set_uid(0);
        h.set_gid(0);
        if matches!(m, Member::Char(_)) {
            h.set_device_major(1).unwrap();
            h.set_device_minor(3).unwrap();
        }
        let old = h.as_old_mut();
        assert!(name.len() < 100 && link.len() < 100, "short names only");
        old.name = [0; 100];
        old.name[..name.len()].copy_from_slice(name.as_bytes());
        old.linkname = [0; 100];
        old.linkname[..link.len()].copy_from_slice(link.as_bytes());
        h.set_cksum();
        b.append(&h, data).unwrap();
    }
    gzip(&b.into_inner().unwrap())
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .arg("-nc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = bytes.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&data).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    out.stdout
}

/// The fake runtime as a hand-made archive: `bin/fake` runs `script`.
fn runtime_tgz(script: &str) -> Vec<u8> {
    hostile_tgz(&[
        Member::Dir("./"),
        Member::Dir("./bin/"),
        Member::File("./bin/fake", script.as_bytes(), 0o755),
    ])
}

const FAKE: &str = "#!/bin/sh\necho 'fake 1.0'\n";

/// An artifact added after the fake runtime: its bytes, kind, `dest` and
/// `subdir`.
struct Extra {
    bytes: Vec<u8>,
    file: bool,
    dest: Option<String>,
    subdir: Option<String>,
}

fn tgz_extra(members: &[Member]) -> Extra {
    Extra {
        bytes: hostile_tgz(members),
        file: false,
        dest: None,
        subdir: None,
    }
}

/// An archive of which only `subdir` is installed, at `dest`.
fn subdir_extra(members: &[Member], subdir: &str, dest: &str) -> Extra {
    Extra {
        subdir: Some(subdir.into()),
        dest: Some(dest.into()),
        ..tgz_extra(members)
    }
}

/// A world in `dir` whose spec installs the fake runtime (made from
/// `runtime`), then `extras` in order, then an optional launcher at
/// `launcher` running bin/fake. `outside/victim` lies beside the prefix:
/// nothing may touch it.
fn hostile_world(
    dir: tempfile::TempDir,
    runtime: &[u8],
    extras: Vec<Extra>,
    launcher: Option<&str>,
) -> World {
    fs::create_dir_all(dir.path().join("src/pool")).unwrap();
    fs::create_dir_all(dir.path().join("outside")).unwrap();
    fs::write(dir.path().join("outside/victim"), "victim\n").unwrap();
    fs::write(dir.path().join("src/pool/fake-1.0.tgz"), runtime).unwrap();
    let mut b = Installer::builder("fake", "1.0")
        .entry("bin/fake")
        .check(["--version"], "fake 1.0")
        .artifact(Artifact::tar_gz("pool/fake-1.0.tgz", sha256_hex(runtime)));
    for (i, e) in extras.iter().enumerate() {
        let path = format!("pool/extra-{i}");
        fs::write(dir.path().join("src").join(&path), &e.bytes).unwrap();
        let mut a = if e.file {
            Artifact::file(&path, sha256_hex(&e.bytes))
        } else {
            Artifact::tar_gz(&path, sha256_hex(&e.bytes))
        };
        if let Some(d) = &e.dest {
            a = a.dest(d);
        }
        if let Some(d) = &e.subdir {
            a = a.subdir(d);
        }
        b = b.artifact(a);
    }
    if let Some(l) = launcher {
        b = b.launcher(shforge::installer::Launcher::new(l, "bin/fake"));
    }
    let script = dir.path().join("install_fake.sh");
    fs::write(&script, b.build().unwrap().script().unwrap()).unwrap();
    World {
        dir,
        script,
        artifact: runtime.to_vec(),
    }
}

/// The `outside` dir of a world made in `dir`, physically.
fn outside_of(dir: &Path) -> PathBuf {
    fs::canonicalize(dir).unwrap().join("outside")
}

impl World {
    fn outside(&self) -> PathBuf {
        outside_of(self.dir.path())
    }
}

/// Everything under DIR: path, type, mode, link count, content or target.
fn snapshot(dir: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt as _;
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let md = fs::symlink_metadata(&p).unwrap();
        let what = if md.file_type().is_symlink() {
            format!("-> {}", fs::read_link(&p).unwrap().display())
        } else if md.is_dir() {
            for e in fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
            "dir".into()
        } else if md.is_file() {
            String::from_utf8_lossy(&fs::read(&p).unwrap()).into_owned()
        } else {
            "special".into()
        };
        out.push(format!(
            "{} {:o} {} {what}",
            p.display(),
            md.mode(),
            md.nlink()
        ));
    }
    out.sort();
    out
}

/// The tools dir with `tar` being GNU tar or the busybox applet.
fn tools_with_tar(dir: &Path, busybox: bool) -> PathBuf {
    let base = tools(dir, &["tar"], false);
    let bin = dir.join(if busybox {
        "tools-bb-tar"
    } else {
        "tools-gnu-tar"
    });
    if bin.exists() {
        return bin;
    }
    fs::create_dir_all(&bin).unwrap();
    for e in fs::read_dir(&base).unwrap() {
        let e = e.unwrap();
        symlink(fs::read_link(e.path()).unwrap(), bin.join(e.file_name())).unwrap();
    }
    let tar = if busybox {
        PathBuf::from("/usr/bin/busybox")
    } else {
        which("tar").unwrap()
    };
    symlink(tar, bin.join("tar")).unwrap();
    bin
}

struct Case {
    name: &'static str,
    extras: Vec<Extra>,
    launcher: Option<&'static str>,
    /// 0: installed (and `check` holds); 6: refused, nothing installed.
    want: i32,
    check: fn(&World),
}

fn no_check(_: &World) {}

fn hostile_cases(outside: &Path) -> Vec<Case> {
    let mut cases = escaping_cases(outside);
    cases.extend(odd_member_cases());
    cases.extend(subdir_cases());
    cases.extend(layered_cases());
    cases
}

/// Hostile cases: a member name or a link that leads outside the install.
fn escaping_cases(outside: &Path) -> Vec<Case> {
    let abs = outside.to_string_lossy().into_owned();
    let victim = format!("{abs}/victim");
    // From anywhere in the stage, 12 `..` reach / and then the victim.
    let deep = format!("{}{}", "../".repeat(12), victim.trim_start_matches('/'));
    let deep_dir = format!("{}{}", "../".repeat(12), abs.trim_start_matches('/'));
    let (abs, victim, deep, deep_dir) = (&*abs, &*victim, &*deep, &*deep_dir);
    let abs_evil = format!("{abs}/evil");
    let deep_evil = format!("{deep_dir}/evil");
    vec![
        Case {
            name: "absolute member name",
            extras: vec![tgz_extra(&[Member::File(&abs_evil, b"x", 0o644)])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "../ member name",
            extras: vec![tgz_extra(&[Member::File(&deep_evil, b"x", 0o644)])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "symlink to outside, then a member through it",
            extras: vec![tgz_extra(&[
                Member::Sym("escape", abs),
                Member::File("escape/evil", b"x", 0o644),
            ])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "../ symlink, then a member through it",
            extras: vec![tgz_extra(&[
                Member::Sym("escape", deep_dir),
                Member::File("escape/evil", b"x", 0o644),
            ])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "inside symlink, then a member through it",
            extras: vec![tgz_extra(&[
                Member::Dir("sub/"),
                Member::Sym("d", "sub"),
                Member::File("d/x", b"x", 0o644),
            ])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "symlink to an absolute path",
            extras: vec![tgz_extra(&[Member::Sym("lib", abs)])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "symlink that leaves through another symlink",
            extras: vec![tgz_extra(&[
                Member::Dir("a/"),
                Member::Sym("a/b", ".."),
                Member::Sym("c", "a/b/.."),
            ])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "hard link to an absolute path",
            extras: vec![tgz_extra(&[Member::Hard("h", victim)])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "hard link to a ../ path",
            extras: vec![tgz_extra(&[Member::Hard("h", deep)])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "hard link to outside, then a file written through it",
            extras: vec![tgz_extra(&[
                Member::Hard("h", victim),
                Member::File("h", b"pwned\n", 0o644),
            ])],
            launcher: None,
            want: 6,
            check: no_check,
        },
    ]
}

/// Hostile cases: members that are no plain file, or come twice.
fn odd_member_cases() -> Vec<Case> {
    vec![
        Case {
            name: "a member given twice",
            extras: vec![tgz_extra(&[
                Member::File("x", b"1", 0o644),
                Member::File("x", b"2", 0o644),
            ])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "device node",
            extras: vec![tgz_extra(&[Member::Char("null2")])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "FIFO",
            extras: vec![tgz_extra(&[Member::Fifo("pipe")])],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "setuid and setgid bits are stripped",
            extras: vec![tgz_extra(&[
                Member::Dir("sbin/"),
                Member::File("sbin/su", b"#!/bin/sh\n", 0o6755),
            ])],
            launcher: None,
            want: 0,
            check: |w| {
                use std::os::unix::fs::MetadataExt as _;
                let m = fs::metadata(w.final_dir().join("sbin/su")).unwrap().mode();
                assert_eq!(m & 0o7777, 0o755, "mode {m:o}");
            },
        },
        Case {
            name: "links inside the archive are kept",
            extras: vec![tgz_extra(&[
                Member::Dir("lib/"),
                Member::File("lib/real", b"real\n", 0o644),
                Member::Sym("lib/alias", "real"),
                Member::Sym("lib/up", "../bin/fake"),
                Member::Hard("lib/hard", "lib/real"),
            ])],
            launcher: None,
            want: 0,
            check: |w| {
                let f = w.final_dir();
                assert_eq!(fs::read_to_string(f.join("lib/alias")).unwrap(), "real\n");
                assert_eq!(fs::read_to_string(f.join("lib/hard")).unwrap(), "real\n");
                assert!(
                    fs::read_to_string(f.join("lib/up"))
                        .unwrap()
                        .contains("fake")
                );
            },
        },
    ]
}

/// Hostile cases: a `subdir` artifact installs only that part, and only a
/// plain directory inside the archive.
fn subdir_cases() -> Vec<Case> {
    vec![
        Case {
            name: "subdir: one vendor triple of two, its own layout kept",
            extras: vec![subdir_extra(
                &[
                    Member::Dir("package/"),
                    Member::File("package/package.json", b"{}", 0o644),
                    Member::Dir("package/vendor/"),
                    Member::Dir("package/vendor/x86_64-unknown-linux-musl/"),
                    Member::Dir("package/vendor/x86_64-unknown-linux-musl/bin/"),
                    Member::File(
                        "package/vendor/x86_64-unknown-linux-musl/bin/tool",
                        b"x64",
                        0o755,
                    ),
                    Member::Dir("package/vendor/x86_64-unknown-linux-musl/codex-path/"),
                    Member::File(
                        "package/vendor/x86_64-unknown-linux-musl/codex-path/rg",
                        b"rg",
                        0o755,
                    ),
                    Member::Sym(
                        "package/vendor/x86_64-unknown-linux-musl/bin/rg",
                        "../codex-path/rg",
                    ),
                    Member::Dir("package/vendor/aarch64-unknown-linux-musl/"),
                    Member::Dir("package/vendor/aarch64-unknown-linux-musl/bin/"),
                    Member::File(
                        "package/vendor/aarch64-unknown-linux-musl/bin/tool",
                        b"arm",
                        0o755,
                    ),
                ],
                "package/vendor/x86_64-unknown-linux-musl",
                "vendor",
            )],
            launcher: None,
            want: 0,
            check: |w| {
                let f = w.final_dir();
                assert_eq!(fs::read(f.join("vendor/bin/tool")).unwrap(), b"x64");
                assert_eq!(fs::read(f.join("vendor/bin/rg")).unwrap(), b"rg");
                assert_eq!(fs::read(f.join("vendor/codex-path/rg")).unwrap(), b"rg");
                let mut top: Vec<String> = fs::read_dir(&f)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
                top.sort();
                assert_eq!(top, [".shforge-artifacts", "bin", "vendor"], "only these");
                let mut kept: Vec<String> = fs::read_dir(f.join("vendor"))
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
                kept.sort();
                assert_eq!(kept, ["bin", "codex-path"]);
            },
        },
        Case {
            name: "subdir missing from the archive",
            extras: vec![subdir_extra(
                &[
                    Member::Dir("package/"),
                    Member::File("package/x", b"x", 0o644),
                ],
                "package/vendor/x86_64-unknown-linux-musl",
                "vendor",
            )],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "subdir is a file",
            extras: vec![subdir_extra(
                &[
                    Member::Dir("package/"),
                    Member::File("package/vendor", b"x", 0o644),
                ],
                "package/vendor",
                "vendor",
            )],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "subdir reached through a symlink inside the archive",
            extras: vec![subdir_extra(
                &[
                    Member::Dir("real/"),
                    Member::Dir("real/t/"),
                    Member::File("real/t/tool", b"x", 0o755),
                    Member::Sym("package", "real"),
                ],
                "package/t",
                "vendor",
            )],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "subdir holding a symlink to the part left out",
            extras: vec![subdir_extra(
                &[
                    Member::Dir("package/"),
                    Member::File("package/secret", b"s", 0o644),
                    Member::Dir("package/t/"),
                    Member::Sym("package/t/up", "../secret"),
                ],
                "package/t",
                "vendor",
            )],
            launcher: None,
            want: 6,
            check: no_check,
        },
    ]
}

/// Hostile cases: several artifacts and a launcher, none written through
/// or over another.
fn layered_cases() -> Vec<Case> {
    vec![
        Case {
            name: "a later artifact's dest through an earlier symlink",
            extras: vec![
                tgz_extra(&[Member::Dir("sub/"), Member::Sym("node", "sub")]),
                Extra {
                    bytes: hostile_tgz(&[Member::File("evil", b"x", 0o644)]),
                    file: false,
                    dest: Some("node".into()),
                    subdir: None,
                },
            ],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "a file artifact's dest through an earlier symlink",
            extras: vec![
                tgz_extra(&[Member::Dir("sub/"), Member::Sym("tools", "sub")]),
                Extra {
                    bytes: b"#!/bin/sh\n".to_vec(),
                    file: true,
                    dest: Some("tools/x".into()),
                    subdir: None,
                },
            ],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "a later artifact over an earlier one's file",
            extras: vec![
                tgz_extra(&[Member::File("x", b"1", 0o644)]),
                tgz_extra(&[Member::File("x", b"2", 0o644)]),
            ],
            launcher: None,
            want: 6,
            check: no_check,
        },
        Case {
            name: "a symlink planted where the launcher goes",
            extras: vec![tgz_extra(&[
                Member::Dir("bin/"),
                Member::Sym("bin/launch", "fake"),
            ])],
            launcher: Some("bin/launch"),
            want: 6,
            check: no_check,
        },
        Case {
            name: "a launcher next to the archive's files",
            extras: vec![],
            launcher: Some("bin/launch"),
            want: 0,
            check: |w| {
                let o = support::run(Command::new(w.final_dir().join("bin/launch")));
                assert_eq!(String::from_utf8_lossy(&o.stdout), "fake 1.0\n");
            },
        },
    ]
}

/// One hostile case (by name) under one tar, on every bash.
fn hostile_archive_under(busybox: bool, test: &str, name: &str) {
    let shells = support::bashes();
    let tar_name = if busybox { "busybox tar" } else { "GNU tar" };
    let present = if busybox {
        support::require_tool(test, "/usr/bin/busybox")
    } else {
        support::require_tool(test, "tar")
    };
    if !present {
        return;
    }
    for sh in &shells {
        let dir = tempfile::tempdir().unwrap();
        let case = hostile_cases(&outside_of(dir.path()))
            .into_iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no hostile case {name:?}"));
        let w = hostile_world(dir, &runtime_tgz(FAKE), case.extras, case.launcher);
        let path = tools_with_tar(w.dir.path(), busybox);
        let before = snapshot(&w.outside());
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        let what = format!("{} under {tar_name}, {}", case.name, sh.name);
        assert_eq!(code(&o), case.want, "{what}: {}", text(&o));
        assert_eq!(snapshot(&w.outside()), before, "{what}: outside changed");
        if case.want == 0 {
            assert_eq!(prefix_entries(&w), vec!["fake-1.0".to_owned()], "{what}");
            (case.check)(&w);
        } else {
            assert!(
                String::from_utf8_lossy(&o.stderr).contains("refusing"),
                "{what}: {}",
                text(&o)
            );
            assert_nothing_installed(sh, &w);
        }
    }
    support::report(test, &shells);
}

/// The hostile cases by test name: `hostile_table!(m! { prefix })` is
/// `m! { prefix name => ("case"), ... }` (one table for both tars' tests
/// and [`every_hostile_case_is_a_test`]).
macro_rules! hostile_table {
    ($m:ident! { $($prefix:tt)* }) => {
        $m! { $($prefix)*
            absolute_member_name => ("absolute member name"),
            dot_dot_member_name => ("../ member name"),
            symlink_to_outside_then_a_member_through_it => ("symlink to outside, then a member through it"),
            dot_dot_symlink_then_a_member_through_it => ("../ symlink, then a member through it"),
            inside_symlink_then_a_member_through_it => ("inside symlink, then a member through it"),
            symlink_to_an_absolute_path => ("symlink to an absolute path"),
            symlink_that_leaves_through_another_symlink => ("symlink that leaves through another symlink"),
            hard_link_to_an_absolute_path => ("hard link to an absolute path"),
            hard_link_to_a_dot_dot_path => ("hard link to a ../ path"),
            hard_link_to_outside_then_a_file_written_through_it => ("hard link to outside, then a file written through it"),
            a_member_given_twice => ("a member given twice"),
            device_node => ("device node"),
            fifo => ("FIFO"),
            setuid_and_setgid_bits_are_stripped => ("setuid and setgid bits are stripped"),
            links_inside_the_archive_are_kept => ("links inside the archive are kept"),
            subdir_one_vendor_triple_of_two_its_own_layout_kept => ("subdir: one vendor triple of two, its own layout kept"),
            subdir_missing_from_the_archive => ("subdir missing from the archive"),
            subdir_is_a_file => ("subdir is a file"),
            subdir_reached_through_a_symlink_inside_the_archive => ("subdir reached through a symlink inside the archive"),
            subdir_holding_a_symlink_to_the_part_left_out => ("subdir holding a symlink to the part left out"),
            a_later_artifacts_dest_through_an_earlier_symlink => ("a later artifact's dest through an earlier symlink"),
            a_file_artifacts_dest_through_an_earlier_symlink => ("a file artifact's dest through an earlier symlink"),
            a_later_artifact_over_an_earlier_ones_file => ("a later artifact over an earlier one's file"),
            a_symlink_planted_where_the_launcher_goes => ("a symlink planted where the launcher goes"),
            a_launcher_next_to_the_archives_files => ("a launcher next to the archive's files"),
        }
    };
}

/// The cases' names, from the table.
macro_rules! names {
    ($($test:ident => ($name:expr)),* $(,)?) => {
        &[$($name),*]
    };
}

/// Every case of [`hostile_cases`] has its test under both tars.
#[test]
fn every_hostile_case_is_a_test() {
    let names: Vec<&str> = hostile_cases(Path::new("/nowhere"))
        .iter()
        .map(|c| c.name)
        .collect();
    let tests: &[&str] = hostile_table!(names! {});
    assert_eq!(names, tests);
}

mod hostile_archives_never_reach_outside_the_install_with_gnu_tar {
    use super::hostile_archive_under;
    use crate::support::cases;

    fn gnu(name: &str) {
        let test = format!("hostile_archives_never_reach_outside_the_install_with_gnu_tar::{name}");
        hostile_archive_under(false, &test, name);
    }

    hostile_table!(cases! { gnu; });
}

mod hostile_archives_never_reach_outside_the_install_with_busybox_tar {
    use super::hostile_archive_under;
    use crate::support::cases;

    fn busybox(name: &str) {
        let test =
            format!("hostile_archives_never_reach_outside_the_install_with_busybox_tar::{name}");
        hostile_archive_under(true, &test, name);
    }

    hostile_table!(cases! { busybox; });
}

// ---------------------------------------------------------------- footprint and odd input

#[test]
fn the_entry_check_writes_nothing_outside_the_install() {
    // An entry that writes where CLIs do: ~/.cache, ~/.config, ~/.local,
    // the XDG dirs, $TMPDIR and its working directory. Fresh and reused, the
    // caller's home, TMPDIR, XDG dirs and cwd stay empty, and no check home
    // is left in the prefix or the install.
    let script = "#!/bin/sh\nfor d in \"$HOME/.cache/fake\" \"$HOME/.config/fake\" \"$HOME/.local/share/fake\" \"$HOME/.local/state/fake\" \"$XDG_CACHE_HOME/fake\" \"$XDG_CONFIG_HOME/fake\" \"$XDG_DATA_HOME/fake\" \"$XDG_STATE_HOME/fake\" \"$TMPDIR/fake\"; do mkdir -p \"$d\" && : > \"$d/x\" || exit 1; done\n: > cwd-file || exit 1\necho 'fake 1.0'\n";
    let shells = support::bashes();
    for sh in &shells {
        let w = hostile_world(
            tempfile::tempdir().unwrap(),
            &runtime_tgz(script),
            vec![],
            None,
        );
        let path = tools(w.dir.path(), &[], false);
        let caller: Vec<PathBuf> = ["home", "tmp", "xdg", "cwd"]
            .iter()
            .map(|d| w.dir.path().join(d))
            .collect();
        for d in &caller {
            fs::create_dir_all(d).unwrap();
        }
        for round in ["fresh", "reuse"] {
            let mut c = install_cmd(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
            let x = &caller[2];
            c.env("HOME", &caller[0])
                .env("TMPDIR", &caller[1])
                .env("XDG_CACHE_HOME", x.join("cache"))
                .env("XDG_CONFIG_HOME", x.join("config"))
                .env("XDG_DATA_HOME", x.join("data"))
                .env("XDG_STATE_HOME", x.join("state"))
                .current_dir(&caller[3]);
            let o = support::run(c);
            assert_eq!(code(&o), 0, "{round} {}: {}", sh.name, text(&o));
            for d in &caller {
                let left: Vec<_> = fs::read_dir(d).unwrap().collect();
                assert!(
                    left.is_empty(),
                    "{round} {}: {} got {left:?}",
                    sh.name,
                    d.display()
                );
            }
            assert_eq!(
                prefix_entries(&w),
                vec!["fake-1.0".to_owned()],
                "{round} {}",
                sh.name
            );
            let mut top: Vec<String> = fs::read_dir(w.final_dir())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            top.sort();
            assert_eq!(top, [".shforge-artifacts", "bin"], "{round} {}", sh.name);
        }
    }
    support::report(
        "the_entry_check_writes_nothing_outside_the_install",
        &shells,
    );
}

#[test]
fn a_launcher_works_through_symlinks_from_other_directories() {
    let shells = support::bashes();
    for sh in &shells {
        let w = hostile_world(
            tempfile::tempdir().unwrap(),
            &runtime_tgz(FAKE),
            vec![],
            Some("bin/launch"),
        );
        let path = tools(w.dir.path(), &[], false);
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        // An absolute link in one directory, a relative link to it in another.
        let a = w.dir.path().join("elsewhere/a");
        let b = w.dir.path().join("elsewhere/b");
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        symlink(w.final_dir().join("bin/launch"), a.join("launch")).unwrap();
        symlink("../a/launch", b.join("tool")).unwrap();
        for (label, mut c) in [
            ("by path", Command::new(b.join("tool"))),
            ("found on PATH", Command::new("tool")),
        ] {
            c.env("PATH", format!("{}:{}", b.display(), path.display()))
                .current_dir(w.dir.path());
            let o = support::run(c);
            assert_eq!(
                String::from_utf8_lossy(&o.stdout),
                "fake 1.0\n",
                "{label}: {}",
                text(&o)
            );
        }
    }
    support::report(
        "a_launcher_works_through_symlinks_from_other_directories",
        &shells,
    );
}

#[test]
fn a_planted_lock_symlink_is_never_followed() {
    let shells = support::bashes();
    for sh in &shells {
        for hide_flock in [false, true] {
            let w = world();
            let without: &[&str] = if hide_flock { &["flock"] } else { &[] };
            let path = tools(w.dir.path(), without, false);
            let outside = w.dir.path().join("outside");
            fs::create_dir_all(&outside).unwrap();
            fs::write(outside.join("victim"), "victim\n").unwrap();
            fs::create_dir_all(w.prefix()).unwrap();
            let (link, targets): (&str, &[&str]) = if hide_flock {
                (".fake-1.0.lockq", &["dir"])
            } else {
                (".fake-1.0.lock", &["victim", "created"])
            };
            if hide_flock {
                fs::create_dir_all(outside.join("dir")).unwrap();
            }
            for t in targets {
                let _ = fs::remove_file(w.prefix().join(link));
                symlink(outside.join(t), w.prefix().join(link)).unwrap();
                let before = snapshot(&outside);
                let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
                let what = format!("{} {link} -> {t}", sh.name);
                assert_eq!(code(&o), 3, "{what}: {}", text(&o));
                assert_eq!(snapshot(&outside), before, "{what}: outside changed");
                assert!(!w.final_dir().exists(), "{what}");
            }
        }
    }
    support::report("a_planted_lock_symlink_is_never_followed", &shells);
}

#[test]
fn a_prefix_with_a_newline_is_refused() {
    let shells = support::bashes();
    for sh in &shells {
        let w = world();
        let path = tools(w.dir.path(), &[], false);
        let odd = w.dir.path().join("a\nb");
        let mut c = sh.command(&w.script);
        c.arg("--prefix")
            .arg(&odd)
            .args(["--source-dir", &path_of(&w.src())])
            .env("PATH", &path);
        let o = support::run(c);
        assert_eq!(code(&o), 2, "{}: {}", sh.name, text(&o));
        assert!(o.stdout.is_empty() && !odd.exists(), "{}", sh.name);
        // Through a symlink to such a directory too.
        fs::create_dir_all(&odd).unwrap();
        symlink(&odd, w.dir.path().join("plain")).unwrap();
        let mut c = sh.command(&w.script);
        c.arg("--prefix")
            .arg(w.dir.path().join("plain"))
            .args(["--source-dir", &path_of(&w.src())])
            .env("PATH", &path);
        let o = support::run(c);
        assert_eq!(code(&o), 2, "{}: {}", sh.name, text(&o));
        assert_eq!(fs::read_dir(&odd).unwrap().count(), 0, "{}", sh.name);
    }
    support::report("a_prefix_with_a_newline_is_refused", &shells);
}

/// A world like `world()` whose artifact spec gives `size`.
fn sized_world(size: impl Fn(usize) -> u64) -> World {
    let w = world();
    let size = size(w.artifact.len());
    let inst = Installer::builder("fake", "1.0")
        .entry("bin/fake")
        .check(["--version"], "fake 1.0")
        .artifact(Artifact::tar_gz("pool/fake-1.0.tgz", sha256_hex(&w.artifact)).size(size))
        .build()
        .unwrap();
    fs::write(&w.script, inst.script().unwrap()).unwrap();
    w
}

#[test]
fn an_artifact_past_its_size_is_refused_and_its_download_stopped() {
    let shells = support::bashes();
    let server = Server::start();
    for sh in &shells {
        // Exactly its size: installed, from the source dir and downloaded.
        let w = sized_world(|n| n as u64);
        let path = tools(w.dir.path(), &[], false);
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_installed(sh, &w, &o);
        // One byte more than the spec says: exit 4, nothing installed.
        let w = sized_world(|n| n as u64 - 1);
        let path = tools(w.dir.path(), &[], false);
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_eq!(code(&o), 4, "{}: {}", sh.name, text(&o));
        assert_nothing_installed(sh, &w);
        for (label, without, bb) in [
            ("curl", &[][..], false),
            ("wget", &["curl"][..], false),
            ("busybox wget", &["curl"][..], true),
            ("busybox wget without head", &["curl", "head"][..], true),
        ] {
            for (fits, size) in [(true, 0u64), (false, 1)] {
                let w = sized_world(|n| n as u64 - size);
                let url_path = format!("/{}/pool/fake-1.0.tgz", w.dir.path().display());
                server.put(&url_path, &w.artifact);
                let base = format!("{}/{}", server.url(), w.dir.path().display());
                let path = tools(w.dir.path(), without, bb);
                let o = run_install(sh, &w, &path, &["--base-url", &base], &[]);
                if fits {
                    assert_installed(sh, &w, &o);
                } else {
                    assert_eq!(code(&o), 4, "{} {label}: {}", sh.name, text(&o));
                    assert!(
                        String::from_utf8_lossy(&o.stderr).contains("more than the"),
                        "{} {label}: {}",
                        sh.name,
                        text(&o)
                    );
                    assert_nothing_installed(sh, &w);
                    // Stopped, not retried.
                    assert_eq!(server.requests(&url_path), 1, "{} {label}", sh.name);
                }
            }
        }
    }
    support::report(
        "an_artifact_past_its_size_is_refused_and_its_download_stopped",
        &shells,
    );
}

/// `subdir` + `dest`: platform packages that keep their files under a
/// per-platform dir (Codex's `package/vendor/<triple>/`) install at one path,
/// so one `entry` serves every arch. Only this machine's artifact is read
/// (the other one is not even in the source dir).
#[test]
fn subdir_gives_every_arch_one_entry() {
    let shells = support::bashes();
    let (mine, other) = match std::env::consts::ARCH {
        "aarch64" => ("aarch64", "x86_64"),
        _ => (std::env::consts::ARCH, "aarch64"),
    };
    let triple = |arch: &str| format!("package/vendor/{arch}-unknown-linux-musl");
    let (t_mine, t_other) = (triple(mine), triple(other));
    let names: Vec<String> = [&t_mine, &t_other]
        .iter()
        .flat_map(|t| {
            [
                format!("{t}/"),
                format!("{t}/bin/"),
                format!("{t}/bin/fake"),
                format!("{t}/codex-path/"),
                format!("{t}/codex-path/rg"),
            ]
        })
        .collect();
    let own = "#!/bin/sh\necho 'fake 1.0'\n";
    let wrong = "#!/bin/sh\necho 'wrong arch'\n";
    let member = |i: usize| -> Member<'_> {
        let n = names[i].as_str();
        match i % 5 {
            2 => Member::File(
                n,
                if i < 5 {
                    own.as_bytes()
                } else {
                    wrong.as_bytes()
                },
                0o755,
            ),
            4 => Member::File(n, b"rg", 0o755),
            _ => Member::Dir(n),
        }
    };
    let mut members = vec![Member::Dir("package/"), Member::Dir("package/vendor/")];
    members.extend((0..names.len()).map(member));
    let tgz = hostile_tgz(&members);
    for sh in &shells {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("src/pkg-mine.tgz"), &tgz).unwrap();
        let inst = Installer::builder("fake", "1.0")
            .entry("codex/bin/fake")
            .check(["--version"], "fake 1.0")
            .artifact(
                Artifact::tar_gz("pkg-mine.tgz", sha256_hex(&tgz))
                    .arch(mine)
                    .subdir(&t_mine)
                    .dest("codex"),
            )
            .artifact(
                Artifact::tar_gz("pkg-other.tgz", sha256_hex(b"not here"))
                    .arch(other)
                    .subdir(&t_other)
                    .dest("codex"),
            )
            .build()
            .unwrap();
        let script = dir.path().join("install_fake.sh");
        fs::write(&script, inst.script().unwrap()).unwrap();
        let w = World {
            dir,
            script,
            artifact: tgz.clone(),
        };
        let path = tools(w.dir.path(), &[], false);
        let o = run_install(sh, &w, &path, &["--source-dir", &path_of(&w.src())], &[]);
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        let entry = w.final_dir().join("codex/bin/fake");
        assert_eq!(last_line(&o), entry.to_string_lossy(), "{}", sh.name);
        let out = support::run(Command::new(&entry));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "fake 1.0\n");
        assert_eq!(
            fs::read(w.final_dir().join("codex/codex-path/rg")).unwrap(),
            b"rg"
        );
        assert!(!w.final_dir().join("package").exists(), "{}", sh.name);
        assert_eq!(prefix_entries(&w), ["fake-1.0"], "{}", sh.name);
    }
    support::report("subdir_gives_every_arch_one_entry", &shells);
}

// ---------------------------------------------------------------- progress

/// A world of two artifacts: the runtime tar.gz and a plain file placed at
/// `share/note.txt` (mode 644), so that the per-artifact lines can be told apart.
fn two_artifact_world(file_first: bool) -> (World, usize, usize) {
    let w = world();
    let note = b"a note placed as a file\n".to_vec();
    fs::write(w.src().join("pool/note.txt"), &note).unwrap();
    let tgz = Artifact::tar_gz("pool/fake-1.0.tgz", sha256_hex(&w.artifact))
        .arch(std::env::consts::ARCH)
        .libc(Libc::Glibc);
    let file = Artifact::file("pool/note.txt", sha256_hex(&note))
        .dest("share/note.txt")
        .mode("644")
        .arch(std::env::consts::ARCH)
        .libc(Libc::Glibc);
    let (a, b) = if file_first { (file, tgz) } else { (tgz, file) };
    let inst = Installer::builder("fake", "1.0")
        .entry("bin/fake")
        .check(["--version"], "fake 1.0")
        .artifact(a)
        .artifact(b)
        .build()
        .unwrap();
    fs::write(&w.script, inst.script().unwrap()).unwrap();
    let (tgz, file) = (w.artifact.len(), note.len());
    (w, tgz, file)
}

/// The progress lines of a fresh install, without their elapsed time (the
/// last `, N.NNN s`), which is checked for its form only: a fraction on
/// every bash, since this machine has /proc/uptime (bash 5 reads
/// $EPOCHREALTIME; whole seconds, `, N s`, are only for a bash < 5 without it).
fn progress_lines(o: &Output) -> Vec<String> {
    let err = String::from_utf8_lossy(&o.stderr);
    let elapsed = regex::Regex::new(r", \d+\.\d{3} s$").unwrap();
    let total = regex::Regex::new(r"^\d+\.\d{3} s$").unwrap();
    err.lines()
        .map(|l| {
            let l = l.strip_prefix("install_fake: ").unwrap_or(l);
            if l.starts_with("installed ") {
                let (head, took) = l.rsplit_once(" in ").unwrap();
                assert!(total.is_match(took), "no elapsed time in {l:?}");
                return head.to_owned();
            }
            assert!(elapsed.is_match(l), "no elapsed time in {l:?}");
            elapsed.replace(l, "").into_owned()
        })
        .collect()
}

/// A decompression still running in the background when a later artifact
/// fails (here its digest) is stopped before the stage is removed: nothing
/// of the run is left, no process either. The `gzip` here records its pid
/// and sleeps, so it is surely still running.
#[test]
fn a_failed_install_stops_the_background_decompression() {
    for sh in &support::bashes() {
        let (w, _, _) = two_artifact_world(false);
        // Large enough that its copy and digest outlast gzip's start.
        fs::write(w.src().join("pool/note.txt"), vec![b'x'; 4 << 20]).unwrap();
        let base = tools(w.dir.path(), &["gzip"], false);
        let bin = w.dir.path().join("tools-slow-gzip");
        fs::create_dir_all(&bin).unwrap();
        for e in fs::read_dir(&base).unwrap() {
            let e = e.unwrap();
            symlink(fs::read_link(e.path()).unwrap(), bin.join(e.file_name())).unwrap();
        }
        let pidfile = w.dir.path().join("gzip.pid");
        let gzip = bin.join("gzip");
        fs::write(
            &gzip,
            format!(
                "#!/bin/sh\necho $$ > '{}'\nexec sleep 60\n",
                pidfile.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&gzip, fs::Permissions::from_mode(0o755)).unwrap();
        let src = path_of(&w.src());
        let start = Instant::now();
        let o = run_install(sh, &w, &bin, &["--source-dir", &src], &[]);
        assert_eq!(code(&o), 5, "{}: {}", sh.name, text(&o));
        assert!(
            start.elapsed().as_secs() < 50,
            "{}: waited for gzip",
            sh.name
        );
        // A gzip stopped before it wrote its pid never writes it; one that
        // outlived the installer writes it within moments.
        let mut pid = String::new();
        for _ in 0..100 {
            pid = fs::read_to_string(&pidfile).unwrap_or_default();
            if !pid.trim().is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let pid = pid.trim();
        if pid.is_empty() {
            eprintln!("{}: gzip was stopped before it wrote its pid", sh.name);
        }
        assert!(
            pid.is_empty() || !Path::new(&format!("/proc/{pid}")).exists(),
            "{}: the background gzip {pid} outlived the installer",
            sh.name
        );
        assert_eq!(prefix_entries(&w), Vec::<String>::new(), "{}", sh.name);
    }
}

#[test]
fn a_fresh_install_reports_each_phase_on_stderr_and_quiet_silences_it() {
    let shells = support::bashes();
    for sh in &shells {
        // The file first: its place line, after the archive's get, still
        // has its own size.
        let (w, tgz, file) = two_artifact_world(true);
        // Only its owner can write the archive (whatever the umask): it is
        // read in place; a file artifact is always copied.
        let tgz_path = w.src().join("pool/fake-1.0.tgz");
        fs::set_permissions(&tgz_path, fs::Permissions::from_mode(0o644)).unwrap();
        let path = tools(w.dir.path(), &[], false);
        let src = path_of(&w.src());
        let o = run_install(sh, &w, &path, &["--source-dir", &src], &[]);
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        // stdout is only the entry path, on its one line.
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            format!("{}\n", w.entry().display()),
            "{}",
            sh.name
        );
        // bin/fake, README, bin/ and the root ./: four members.
        let mut gz = Command::new("sh");
        gz.arg("-c").arg(format!(
            "gzip -dc < '{}' | wc -c",
            w.src().join("pool/fake-1.0.tgz").display()
        ));
        let tar = support::run(gz);
        let tar = String::from_utf8_lossy(&tar.stdout).trim().to_owned();
        // Every artifact is got and verified first (an archive decompresses
        // in the background meanwhile), then each is unpacked and placed.
        let want = vec![
            format!("get pool/note.txt: {file} bytes, copied from {src}"),
            format!("verify pool/note.txt: {file} bytes, sha256 ok"),
            format!("get pool/fake-1.0.tgz: {tgz} bytes, read in place from {src}"),
            format!("verify pool/fake-1.0.tgz: {tgz} bytes, sha256 ok"),
            format!("place pool/note.txt: {file} bytes as share/note.txt, mode 644"),
            format!("unpack pool/fake-1.0.tgz: 4 members, {tar} bytes of tar"),
            "place pool/fake-1.0.tgz: into .".to_owned(),
            "entry check bin/fake --version: ok".to_owned(),
            format!("installed fake 1.0 into {}", w.final_dir().display()),
        ];
        assert_eq!(progress_lines(&o), want, "{}", sh.name);
        // A reuse says nothing on stderr.
        let o = run_install(sh, &w, &path, &["--source-dir", &src], &[]);
        assert_eq!(code(&o), 0, "{}", text(&o));
        assert!(o.stderr.is_empty(), "{}: {}", sh.name, text(&o));
        // --quiet: a fresh install is silent on stderr, stdout unchanged.
        fs::remove_dir_all(w.final_dir()).unwrap();
        let o = run_install(sh, &w, &path, &["--source-dir", &src], &["--quiet"]);
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        assert!(o.stderr.is_empty(), "{}: {}", sh.name, text(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            format!("{}\n", w.entry().display())
        );
        assert_eq!(
            fs::read(w.final_dir().join("share/note.txt")).unwrap(),
            b"a note placed as a file\n"
        );
        // An error still reaches stderr under --quiet.
        fs::remove_dir_all(w.final_dir()).unwrap();
        fs::write(w.src().join("pool/note.txt"), "changed\n").unwrap();
        let o = run_install(sh, &w, &path, &["--source-dir", &src], &["--quiet"]);
        assert_eq!(code(&o), 5, "{}: {}", sh.name, text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{}: {err}", sh.name);
        assert!(err.contains("digest mismatch for pool/note.txt"), "{err}");
    }
    support::report(
        "a_fresh_install_reports_each_phase_on_stderr_and_quiet_silences_it",
        &shells,
    );
}
