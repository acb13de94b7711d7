//! The carried static bash (issue 38, item 4), in a real musl root with no
//! bash of its own: the bootstrap's `--carried-bash` picks the image's bash
//! when it is a real one of 3.2 or later, else the carried file (also when
//! the `bash` on PATH is an impostor or too old), else exits 4; the carried
//! file then runs its own installer (`installers/bash.toml`) into a prefix,
//! and the supervisor runs under the installed bash. Under every POSIX
//! shell of the matrix that can run in the root, and the root's busybox sh.

use crate::support;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::chroot::{cached_root, copy_with_libs, hide_glibc_loader};
use support::{Kind, Shell};

/// PATH inside the root.
const PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

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

/// The pinned carried bash of this arch: (its artifact path, the file in
/// the artifacts cache), checked against the spec's sha256. Missing: a loud
/// skip (`shforge fetch bash --into DIR` makes it).
pub fn carried_artifact(test: &str) -> Option<(String, PathBuf)> {
    let spec = bash_spec();
    let arch = std::env::consts::ARCH;
    let a = spec.artifacts.iter().find(|a| a.arch == arch)?;
    let dir = std::env::var_os("SHFORGE_SMOKE_ARTIFACTS").map_or_else(
        || PathBuf::from("/var/cache/shforge/artifacts"),
        PathBuf::from,
    );
    let file = dir.join(&a.path);
    let sum = support::run({
        let mut c = Command::new("sha256sum");
        c.arg(&file);
        c
    });
    let ok = sum.status.success() && text(&sum.stdout).starts_with(&a.sha256);
    support::require(
        test,
        ok,
        &format!(
            "the carried bash {} in {} (shforge fetch bash --into DIR)",
            a.path,
            dir.display()
        ),
    )
    .then(|| (a.path.clone(), file))
}

/// The carried bash's spec, `installers/bash.toml`.
pub fn bash_spec() -> shforge::installer::InstallerSpec {
    let (_, text) = shforge::installer::RUNTIME_SPECS
        .iter()
        .find(|(n, _)| *n == "bash")
        .unwrap();
    shforge::installer::InstallerSpec::from_toml(text).unwrap()
}

/// A copy of the musl root without any bash, with the bootstrap at
/// /bootstrap.sh, the carried bash at /art/PATH, its installer at /bash.sh,
/// the supervisor at /sup.sh and the matrix's other POSIX shells (their
/// glibc loader hidden, so the root still looks musl-only).
fn bashless_root(musl: &Path, art_path: &str, art: &Path, shells: &[Shell]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let cp = support::run({
        let mut c = Command::new("cp");
        c.arg("-a").arg(format!("{}/.", musl.display())).arg(root);
        c
    });
    assert!(cp.status.success(), "cp: {}", text(&cp.stderr));
    for b in [
        "bin/bash",
        "usr/bin/bash",
        "usr/local/bin/bash",
        "bin/bash-static",
    ] {
        let _ = fs::remove_file(root.join(b));
    }
    fs::create_dir_all(root.join("art")).unwrap();
    fs::copy(art, root.join("art").join(art_path)).unwrap();
    fs::set_permissions(
        root.join("art").join(art_path),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let generated = support::root().join("generated");
    fs::copy(generated.join("bootstrap.sh"), root.join("bootstrap.sh")).unwrap();
    fs::copy(generated.join("installers/bash.sh"), root.join("bash.sh")).unwrap();
    fs::copy(generated.join("process_supervisor.sh"), root.join("sup.sh")).unwrap();
    fs::create_dir_all(root.join("usr/local/bin")).unwrap();
    fs::create_dir_all(root.join("proc")).unwrap();
    let mut copied = Vec::new();
    for s in other_shells(shells) {
        copy_with_libs(root, s.program());
        copied.push(PathBuf::from(s.program()));
    }
    hide_glibc_loader(root, &copied);
    let found = support::run(chroot(root, &["/bin/sh", "-c", "command -v bash"]));
    assert!(!found.status.success(), "the root must be bash-less");
    dir
}

fn other_shells(shells: &[Shell]) -> Vec<Shell> {
    shells
        .iter()
        .filter(|s| {
            s.kind == Kind::Posix
                && !s.program().ends_with("/bash")
                && !s.program().ends_with("/busybox")
                && s.program().starts_with('/')
        })
        .cloned()
        .collect()
}

/// The root's own busybox sh, then the copied shells.
fn root_shells(shells: &[Shell]) -> Vec<Shell> {
    let mut v = vec![Shell {
        name: "the root's /bin/sh (busybox)".into(),
        argv: vec!["/bin/sh".into()],
        kind: Kind::Posix,
    }];
    v.extend(other_shells(shells));
    v
}

/// `chroot ROOT ARGV...` with only PATH in the environment, from /.
fn chroot(root: &Path, argv: &[&str]) -> Command {
    let mut c = Command::new("chroot");
    c.arg(root)
        .args(argv)
        .env_clear()
        .env("PATH", PATH)
        .current_dir("/");
    c
}

fn bootstrap(root: &Path, shell: &Shell, args: &[&str]) -> Output {
    let mut argv: Vec<&str> = shell.argv.iter().map(String::as_str).collect();
    argv.push("/bootstrap.sh");
    argv.extend_from_slice(args);
    support::run(chroot(root, &argv))
}

/// Put an executable `bash` at /usr/local/bin (first on PATH) with `body`.
fn fake_bash(root: &Path, body: &str) {
    let p = root.join("usr/local/bin/bash");
    fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Neither a usable image bash nor a usable carried file: exit 4 naming
/// both, nothing on stdout.
fn neither_is_exit_4(root: &Path, shell: &Shell, too_old: &str) {
    let what = |case: &str| format!("{case}, under {}", shell.name);
    // Neither: exit 4 naming both, nothing on stdout.
    fake_bash(root, too_old);
    let out = bootstrap(root, shell, &["--carried-bash", "/art/missing"]);
    assert_eq!(
        support::code(&out),
        4,
        "{}",
        describe(&what("neither"), &out)
    );
    assert_eq!(text(&out.stdout), "", "{}", what("neither"));
    let err = text(&out.stderr);
    assert!(
        err.contains("/usr/local/bin/bash") && err.contains("/art/missing"),
        "{}",
        describe(&what("neither"), &out)
    );
    let _ = fs::remove_file(root.join("usr/local/bin/bash"));
    let out = bootstrap(root, shell, &["--carried-bash", "/bootstrap.sh"]);
    assert_eq!(
        support::code(&out),
        4,
        "{}",
        describe(&what("no bash, bad file"), &out)
    );
    assert!(
        text(&out.stderr).contains("no bash on PATH"),
        "{}",
        what("no bash")
    );
}

#[test]
fn bootstrap_prefers_the_images_bash_then_the_carried_one() {
    let test = "bootstrap_prefers_the_images_bash_then_the_carried_one";
    if !support::require_root(test) || !support::require_tool(test, "chroot") {
        return;
    }
    let Some(musl) = cached_root(test, "musl") else {
        return;
    };
    let Some((art_path, art)) = carried_artifact(test) else {
        return;
    };
    let all = support::posix_shells();
    let dir = bashless_root(&musl, &art_path, &art, &all);
    let root = dir.path();
    let carried = format!("/art/{art_path}");
    let want_carried = format!("bash {carried}\n");
    let shells = root_shells(&all);
    // Things named bash that are not a bash of 3.2 or later: each must lose
    // to the carried file.
    let impostors = [
        ("too old", "echo 'shforge-bash 3.1.17(1)-release'"),
        ("garbage", "echo 'GNU bash, version 5.2'"),
        ("no minor", "echo 'shforge-bash 5'"),
        ("not digits", "echo 'shforge-bash 5.x'"),
        ("huge", "echo 'shforge-bash 99999999999999999999.1'"),
        (
            "two lines",
            "echo 'shforge-bash 5.2.1'; echo 'shforge-bash 5.2.1'",
        ),
        ("another shell", "exec /bin/sh \"$@\""),
        ("fails", "echo 'shforge-bash 5.2.15(1)-release'; exit 1"),
    ];
    for shell in &shells {
        let what = |case: &str| format!("{case}, under {}", shell.name);
        // No bash in the image: the carried one, printed as the one line.
        let _ = fs::remove_file(root.join("usr/local/bin/bash"));
        let out = bootstrap(root, shell, &["--carried-bash", &carried]);
        assert_eq!(
            support::code(&out),
            0,
            "{}",
            describe(&what("no bash"), &out)
        );
        assert_eq!(text(&out.stdout), want_carried, "{}", what("no bash"));
        // A relative FILE is printed absolute (the bootstrap runs from /).
        let out = bootstrap(root, shell, &["--carried-bash", &carried[1..]]);
        assert_eq!(text(&out.stdout), want_carried, "{}", what("relative"));
        // --need bash too: still the carried file, no package manager run
        // (the root has none: trying one would exit 4).
        let out = bootstrap(root, shell, &["--need", "bash", "--carried-bash", &carried]);
        assert_eq!(
            support::code(&out),
            0,
            "{}",
            describe(&what("--need bash"), &out)
        );
        assert_eq!(text(&out.stdout), want_carried, "{}", what("--need bash"));
        for (case, body) in impostors {
            fake_bash(root, body);
            let out = bootstrap(root, shell, &["--carried-bash", &carried]);
            assert_eq!(support::code(&out), 0, "{}", describe(&what(case), &out));
            assert_eq!(text(&out.stdout), want_carried, "{}", what(case));
        }
        neither_is_exit_4(root, shell, impostors[0].1);
        // A real bash in the image wins: the carried file placed as the
        // image's own (it is a real bash 5.2).
        fs::copy(&art, root.join("usr/local/bin/bash")).unwrap();
        let out = bootstrap(root, shell, &["--carried-bash", &carried]);
        assert_eq!(
            support::code(&out),
            0,
            "{}",
            describe(&what("image bash"), &out)
        );
        assert_eq!(
            text(&out.stdout),
            "bash /usr/local/bin/bash\n",
            "{}",
            what("image bash")
        );
        // Without --carried-bash the output is as before: nothing on stdout.
        let out = bootstrap(root, shell, &[]);
        assert_eq!(
            support::code(&out),
            0,
            "{}",
            describe(&what("no option"), &out)
        );
        assert_eq!(text(&out.stdout), "", "{}", what("no option"));
        let _ = fs::remove_file(root.join("usr/local/bin/bash"));
    }
    support::report(test, &shells);
}

#[test]
fn the_carried_bash_installs_itself_and_runs_the_supervisor() {
    let test = "the_carried_bash_installs_itself_and_runs_the_supervisor";
    if !support::require_root(test)
        || !support::require_tool(test, "chroot")
        || !support::require_tool(test, "unshare")
    {
        return;
    }
    let Some(musl) = cached_root(test, "musl") else {
        return;
    };
    let Some((art_path, art)) = carried_artifact(test) else {
        return;
    };
    let dir = bashless_root(&musl, &art_path, &art, &[]);
    let root = dir.path();
    let carried = format!("/art/{art_path}");
    let chosen = support::run(chroot(
        root,
        &["/bin/sh", "/bootstrap.sh", "--carried-bash", &carried],
    ));
    assert_eq!(
        text(&chosen.stdout),
        format!("bash {carried}\n"),
        "{}",
        describe("bootstrap", &chosen)
    );
    // The file the bootstrap chose runs its own installer.
    let out = support::run(chroot(
        root,
        &[
            &carried,
            "/bash.sh",
            "--prefix",
            "/opt/p",
            "--source-dir",
            "/art",
        ],
    ));
    assert_eq!(support::code(&out), 0, "{}", describe("install", &out));
    let entry = format!("/opt/p/bash-{}/bin/bash", bash_spec().version);
    assert_eq!(text(&out.stdout).lines().last(), Some(entry.as_str()));
    let installed = fs::read(root.join(entry.trim_start_matches('/'))).unwrap();
    assert_eq!(
        installed,
        fs::read(&art).unwrap(),
        "the install is the artifact's bytes"
    );
    // Again: reused, the same last line.
    let again = support::run(chroot(
        root,
        &[
            &carried,
            "/bash.sh",
            "--prefix",
            "/opt/p",
            "--source-dir",
            "/art",
        ],
    ));
    assert_eq!(
        text(&again.stdout),
        format!("{entry}\n"),
        "{}",
        describe("reuse", &again)
    );
    // The supervisor under the installed bash, in a PID namespace with its
    // own /proc: the command's output and a confirmed receipt.
    let sup = support::run({
        let mut c = Command::new("unshare");
        c.args([
            "--mount",
            "--propagation",
            "private",
            "--pid",
            "--fork",
            "--",
            "/bin/sh",
            "-c",
        ])
        .arg(r#"r=$1; shift; mount -t proc proc "$r/proc" && exec chroot "$r" "$@""#)
        .arg("sh")
        .arg(root)
        .args([
            entry.as_str(),
            "--noprofile",
            "--norc",
            "/sup.sh",
            "--receipt",
            "/tmp/receipt.json",
            "--",
            "/bin/sh",
            "-c",
            "echo carried > /tmp/out",
        ])
        .env_clear()
        .env("PATH", PATH)
        .current_dir("/");
        c
    });
    assert_eq!(support::code(&sup), 0, "{}", describe("supervisor", &sup));
    assert_eq!(
        fs::read_to_string(root.join("tmp/out")).unwrap(),
        "carried\n"
    );
    let receipt = fs::read_to_string(root.join("tmp/receipt.json")).unwrap();
    let r: shforge::CleanupReceipt = serde_json::from_str(&receipt).unwrap();
    assert_eq!(r.return_code, Some(0), "{receipt}");
    assert!(r.cleanup_confirmed, "{receipt}");
}

#[test]
fn every_bash_of_the_matrix_from_3_2_is_taken_as_the_images() {
    // The floor is inclusive: each bash of SHFORGE_TEST_BASHES (3.2.48 to
    // 5.3) standing as the image's `bash` is chosen over the carried file.
    let test = "every_bash_of_the_matrix_from_3_2_is_taken_as_the_images";
    let shells = support::posix_shells();
    let bashes = support::bashes();
    for b in &bashes {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("bash");
        std::os::unix::fs::symlink(b.program(), &link).unwrap();
        for shell in &shells {
            let mut c = shell.command(&support::root().join("generated/bootstrap.sh"));
            c.args(["--carried-bash", "/nonexistent/carried"])
                .env_clear()
                .env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()));
            let out = support::run(c);
            let what = format!("{} as the image's bash, under {}", b.name, shell.name);
            assert_eq!(support::code(&out), 0, "{}", describe(&what, &out));
            assert_eq!(
                text(&out.stdout),
                format!("bash {}\n", link.display()),
                "{what}"
            );
        }
    }
    support::report(test, &shells);
}
