//! The libc detection and the artifact selection in real roots (issue 21,
//! parts 1 and 5): the musl-only, bookworm+musl and bullseye roots of
//! `tests/roots/build.sh`, and roots made of the host's own programs (a
//! plain glibc one, the same with a musl loader added, and one whose glibc
//! loader is at a path of its own, found only through /bin/sh's PT_INTERP).
//! Every installer's selection part runs in each, under `uname -m` as it is
//! and faked to aarch64 (a `uname` script first on PATH).

use crate::support;

use std::fs;
use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};

use shforge::installer::HARNESS_SPECS;
use shforge::installer::InstallerSpec;
use support::chroot::{HOST_LOADER, cached_root, hide_glibc_loader, host_glibc_root, in_root};

/// PATH inside the roots; the test's scratch dir is the root's /tmp, and
/// /tmp/fake (the faked uname) goes first when asked.
const PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
const FAKE_PATH: &str = "/tmp/fake:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// One root of the table: its name, path, and the libc its programs use.
struct Root {
    name: &'static str,
    path: PathBuf,
    musl: bool,
    /// Keeps a root built for the test alive.
    _dir: Option<tempfile::TempDir>,
}

/// A test script: the generated bootstrap's functions (musl.sh among them)
/// without its `main "$@"`, then `tail`.
fn bootstrap_functions(tail: &str) -> String {
    let text = fs::read_to_string(support::root().join("generated/bootstrap.sh")).unwrap();
    let body = text
        .trim_end()
        .strip_suffix("main \"$@\"")
        .expect("bootstrap.sh ends in main \"$@\"");
    format!("{body}\n{tail}\n")
}

/// A scratch dir for the root's /tmp, holding `script` as /tmp/t.sh and a
/// fake `uname` printing aarch64 for -m in /tmp/fake.
fn scratch(script: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("t.sh"), script).unwrap();
    fs::create_dir(d.path().join("fake")).unwrap();
    let uname = d.path().join("fake/uname");
    fs::write(
        &uname,
        "#!/bin/sh\ncase $1 in -m) echo aarch64 ;; *) echo Linux ;; esac\n",
    )
    .unwrap();
    fs::set_permissions(&uname, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(d.path(), fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

/// Every root this machine can offer, each with the libc it must be seen as.
fn roots(test: &str) -> Vec<Root> {
    let mut v = Vec::new();
    let host_ok = shforge::elf_interp(Path::new("/bin/sh")).as_deref() == Some(HOST_LOADER);
    let musl_root = cached_root(test, "musl");
    if support::require(
        test,
        host_ok,
        "an x86_64 glibc host (/bin/sh on /lib64/ld-linux-x86-64.so.2)",
    ) {
        let plain = tempfile::tempdir().unwrap();
        host_glibc_root(plain.path());
        v.push(Root {
            name: "host-glibc",
            path: plain.path().to_path_buf(),
            musl: false,
            _dir: Some(plain),
        });
        if let Some(m) = &musl_root {
            // Debian's musl package adds the loader (a link to its libc.so).
            let mixed = tempfile::tempdir().unwrap();
            host_glibc_root(mixed.path());
            fs::create_dir_all(mixed.path().join("lib/x86_64-linux-musl")).unwrap();
            fs::copy(
                m.join("lib/ld-musl-x86_64.so.1"),
                mixed.path().join("lib/x86_64-linux-musl/libc.so"),
            )
            .unwrap();
            symlink(
                "x86_64-linux-musl/libc.so",
                mixed.path().join("lib/ld-musl-x86_64.so.1"),
            )
            .unwrap();
            v.push(Root {
                name: "host-glibc+musl",
                path: mixed.path().to_path_buf(),
                musl: false,
                _dir: Some(mixed),
            });
            // glibc's loader at /opt/g only (no /lib64, nothing named
            // ld-linux* in /lib), every program patched to name it, and a
            // musl loader: only PT_INTERP tells it is glibc.
            let own = tempfile::tempdir().unwrap();
            host_glibc_root(own.path());
            let programs: Vec<PathBuf> = fs::read_dir(own.path().join("usr/bin"))
                .unwrap()
                .map(|e| Path::new("/usr/bin").join(e.unwrap().file_name()))
                .collect();
            hide_glibc_loader(own.path(), &programs);
            fs::create_dir_all(own.path().join("lib")).unwrap();
            fs::copy(
                m.join("lib/ld-musl-x86_64.so.1"),
                own.path().join("lib/ld-musl-x86_64.so.1"),
            )
            .unwrap();
            v.push(Root {
                name: "own-path-glibc+musl",
                path: own.path().to_path_buf(),
                musl: false,
                _dir: Some(own),
            });
        }
    }
    if let Some(m) = musl_root {
        v.push(Root {
            name: "musl",
            path: m,
            musl: true,
            _dir: None,
        });
    }
    for (name, kind) in [("bookworm+musl", "bookworm-musl"), ("bullseye", "bullseye")] {
        if let Some(p) = cached_root(test, kind) {
            v.push(Root {
                name,
                path: p,
                musl: false,
                _dir: None,
            });
        }
    }
    v
}

/// The shells of a root that run the POSIX scripts: its /bin/sh, and bash.
fn root_shells(root: &Path) -> Vec<&'static str> {
    let mut v = vec!["/bin/sh"];
    if root.join("bin/bash").exists() || root.join("usr/bin/bash").exists() {
        v.push("bash");
    }
    v
}

#[test]
fn each_root_is_seen_as_the_libc_its_programs_use() {
    let test = "each_root_is_seen_as_the_libc_its_programs_use";
    if !support::require_root(test) || !support::require_tool(test, "unshare") {
        return;
    }
    let all = roots(test);
    let script = bootstrap_functions("system_libc; printf '%s\\n' \"$REPLY\"");
    let mut seen = Vec::new();
    for r in &all {
        let want = if r.musl { "musl" } else { "glibc" };
        assert_eq!(
            shforge::system_is_musl(&r.path),
            r.musl,
            "{}: the Rust rule",
            r.name
        );
        let s = scratch(&script);
        for sh in root_shells(&r.path) {
            let out = in_root(&r.path, s.path(), PATH, &[sh, "/tmp/t.sh"], &[]);
            assert_eq!(
                (support::code(&out), stdout(&out).trim().to_owned()),
                (0, want.to_owned()),
                "{} under {sh}: {}",
                r.name,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        seen.push(format!("{}={want}", r.name));
    }
    eprintln!("ROOTS: {test}: {}", seen.join(" "));
}

#[test]
fn elf_interp_in_sh_agrees_with_the_elf_headers() {
    let test = "elf_interp_in_sh_agrees_with_the_elf_headers";
    if !support::require_root(test) || !support::require_tool(test, "unshare") {
        return;
    }
    let Some(musl) = cached_root(test, "musl") else {
        return;
    };
    // Real files of several kinds, read by busybox's od and dd in the musl
    // root and by the host's coreutils.
    let s = scratch(&bootstrap_functions(
        "for f in \"$@\"; do elf_interp \"$f\"; printf '%s|%s\\n' \"$f\" \"$REPLY\"; done",
    ));
    let files = s.path().join("files");
    fs::create_dir(&files).unwrap();
    let dynamic = fs::canonicalize("/bin/sh").unwrap();
    fs::copy(&dynamic, files.join("dynamic")).unwrap();
    fs::copy(musl.join("bin/bash"), files.join("static")).unwrap();
    fs::copy(musl.join("lib/ld-musl-x86_64.so.1"), files.join("loader")).unwrap();
    fs::write(files.join("script"), "#!/bin/sh\necho hi\n").unwrap();
    fs::write(files.join("short"), "\x7fELF\x02\x01").unwrap();
    fs::write(files.join("empty"), "").unwrap();
    let names = [
        "dynamic", "static", "loader", "script", "short", "empty", "none",
    ];
    let want: String = names
        .iter()
        .map(|n| {
            let interp = shforge::elf_interp(&files.join(n)).unwrap_or_default();
            format!("/tmp/files/{n}|{interp}\n")
        })
        .collect();
    assert!(want.contains("/tmp/files/dynamic|/"), "{want}");
    let mut argv = vec!["/bin/sh", "/tmp/t.sh"];
    let args: Vec<String> = names.iter().map(|n| format!("/tmp/files/{n}")).collect();
    argv.extend(args.iter().map(String::as_str));
    let out = in_root(&musl, s.path(), PATH, &argv, &[]);
    assert_eq!(stdout(&out), want, "busybox: {out:?}");
    // The same under the host's dash and coreutils, and under bash 3.2.
    let script = s.path().join("t.sh");
    let host_args: Vec<String> = names
        .iter()
        .map(|n| files.join(n).display().to_string())
        .collect();
    let host_want = want.replace("/tmp/files/", &format!("{}/", files.display()));
    let mut shells = vec!["dash".to_owned()];
    shells.extend(
        support::bashes()
            .iter()
            .filter(|b| b.name.contains("3.2"))
            .map(|b| b.program().to_owned()),
    );
    for sh in &shells {
        let mut c = std::process::Command::new(sh);
        c.arg(&script).args(&host_args);
        let out = support::run(c);
        assert_eq!(stdout(&out), host_want, "{sh}: {out:?}");
    }
}

/// What `spec` must select on `arch` with musl or glibc: artifact paths.
fn expected(spec: &InstallerSpec, arch: &str, musl: bool) -> Vec<String> {
    use shforge::installer::builder::Libc;
    spec.artifacts
        .iter()
        .filter(|a| a.arch == "any" || a.arch == arch)
        .filter(|a| match a.libc {
            Libc::Any => true,
            Libc::Glibc => !musl,
            Libc::Musl => musl,
        })
        .map(|a| a.path.clone())
        .collect()
}

/// The selection part of a generated installer: its functions and pins,
/// then the artifacts it selects and the musl packages it would add.
fn selection_script(name: &str) -> String {
    let text = fs::read_to_string(support::root().join(format!("generated/installers/{name}.sh")))
        .unwrap();
    let body = text
        .trim_end()
        .strip_suffix("main \"$@\"")
        .expect("the installer ends in main \"$@\"");
    format!(
        "{body}\nselect_artifacts\nfor i in \"${{selected[@]}}\"; do printf 'artifact %s\\n' \"${{art_path[$i]}}\"; done\n\
         musl_find_missing\nprintf 'musl-missing %s\\n' \"$musl_missing_list\"\n"
    )
}

#[test]
fn every_installer_selects_the_artifacts_of_each_root_and_arch() {
    let test = "every_installer_selects_the_artifacts_of_each_root_and_arch";
    if !support::require_root(test) || !support::require_tool(test, "unshare") {
        return;
    }
    let all = roots(test);
    let mut table = Vec::new();
    for (name, toml) in HARNESS_SPECS {
        let spec = InstallerSpec::from_toml(toml).unwrap();
        let s = scratch(&selection_script(name));
        for r in all
            .iter()
            .filter(|r| root_shells(&r.path).contains(&"bash"))
        {
            for (arch, path) in [("x86_64", PATH), ("aarch64", FAKE_PATH)] {
                let want = expected(&spec, arch, r.musl);
                let out = in_root(&r.path, s.path(), path, &["bash", "/tmp/t.sh"], &[]);
                let stdout = stdout(&out);
                let got: Vec<String> = stdout
                    .lines()
                    .filter_map(|l| l.strip_prefix("artifact "))
                    .map(str::to_owned)
                    .collect();
                let libc = if r.musl { "musl" } else { "glibc" };
                if want.is_empty() {
                    assert_eq!(
                        support::code(&out),
                        4,
                        "{name} in {} on {arch}: {out:?}",
                        r.name
                    );
                    let err = String::from_utf8_lossy(&out.stderr);
                    assert!(
                        err.contains(&format!(
                            "no artifact of {name} {} for {arch} with {libc}",
                            spec.version
                        )),
                        "{name} in {} on {arch}: {err}",
                        r.name
                    );
                    table.push(format!("{name} {} {arch}: none (exit 4)", r.name));
                    continue;
                }
                assert_eq!(
                    (support::code(&out), &got),
                    (0, &want),
                    "{name} in {} on {arch}: {}",
                    r.name,
                    String::from_utf8_lossy(&out.stderr)
                );
                // musl libraries are looked for on musl systems only: a
                // glibc system with a musl loader asks for none.
                let missing = stdout
                    .lines()
                    .find_map(|l| l.strip_prefix("musl-missing"))
                    .unwrap_or_default()
                    .trim()
                    .to_owned();
                if !r.musl {
                    assert_eq!(missing, "", "{name} in {}", r.name);
                }
                table.push(format!(
                    "{name} {} {arch}: {}{}",
                    r.name,
                    got.join(" + "),
                    if missing.is_empty() {
                        String::new()
                    } else {
                        format!(" (musl libs missing: {missing})")
                    }
                ));
            }
        }
    }
    eprintln!("SELECTION ({} rows):\n{}", table.len(), table.join("\n"));
}

#[test]
fn bootstrap_adds_musl_libraries_only_where_musl_is_all_there_is() {
    let test = "bootstrap_adds_musl_libraries_only_where_musl_is_all_there_is";
    if !support::require_root(test) || !support::require_tool(test, "unshare") {
        return;
    }
    let all = roots(test);
    let bootstrap = fs::read_to_string(support::root().join("generated/bootstrap.sh")).unwrap();
    for r in &all {
        let s = scratch(&bootstrap);
        // A fake apk that only logs: it provides nothing.
        let apk = s.path().join("fake/apk");
        fs::write(&apk, "#!/bin/sh\necho \"apk $*\" >> /tmp/apk.log\nexit 0\n").unwrap();
        fs::set_permissions(&apk, fs::Permissions::from_mode(0o755)).unwrap();
        let args = [
            "/bin/sh",
            "/tmp/t.sh",
            "--musl-lib",
            "libstdc++",
            "--musl-lib",
            "libgcc",
        ];
        let out = in_root(&r.path, s.path(), FAKE_PATH, &args, &[]);
        let log = fs::read_to_string(s.path().join("apk.log")).unwrap_or_default();
        let err = String::from_utf8_lossy(&out.stderr);
        if r.musl {
            assert_eq!(support::code(&out), 4, "{}: {err}", r.name);
            assert_eq!(log, "apk add --no-cache libstdc++ libgcc\n", "{}", r.name);
            assert!(
                err.contains("is still in no musl library directory"),
                "{err}"
            );
        } else {
            assert_eq!(
                (support::code(&out), log.as_str()),
                (0, ""),
                "{}: {err}",
                r.name
            );
        }
        // Without apk: the musl root says so; the others need nothing.
        fs::remove_file(&apk).unwrap();
        let out = in_root(&r.path, s.path(), FAKE_PATH, &args, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        if r.musl {
            assert_eq!(support::code(&out), 4, "{}: {err}", r.name);
            assert!(err.contains("apk not found"), "{err}");
        } else {
            assert_eq!(support::code(&out), 0, "{}: {err}", r.name);
        }
    }
    let names: Vec<&str> = all.iter().map(|r| r.name).collect();
    eprintln!("ROOTS: {test}: {}", names.join(" "));
}

#[test]
fn the_musl_root_has_no_glibc_and_runs_no_glibc_program() {
    let test = "the_musl_root_has_no_glibc_and_runs_no_glibc_program";
    if !support::require_root(test) || !support::require_tool(test, "unshare") {
        return;
    }
    let Some(musl) = cached_root(test, "musl") else {
        return;
    };
    for p in [
        "lib64/ld-linux-x86-64.so.2",
        "lib/ld-linux-aarch64.so.1",
        "sbin/apk",
    ] {
        assert!(!musl.join(p).exists(), "{p}");
    }
    // A glibc program copied in does not start: its loader is missing.
    let s = scratch("");
    let prog = s.path().join("glibc-prog");
    fs::copy(fs::canonicalize("/bin/true").unwrap(), &prog).unwrap();
    let out = in_root(
        &musl,
        s.path(),
        PATH,
        &["/bin/sh", "-c", "/tmp/glibc-prog"],
        &[],
    );
    assert_eq!(support::code(&out), 127, "{out:?}");
}
