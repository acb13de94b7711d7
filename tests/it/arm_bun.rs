//! Cline's aarch64 build (issue 41): npm has no arm64 Cline, so its Bun
//! single-file executable's module graph is moved onto arm64 Bun with the
//! arm64 build of its native library swapped in (installers/bun-graph/).
//! Only running it proves the graph and the swapped library work, so, on
//! this x86_64 host, under `qemu-aarch64-static` user emulation:
//!
//! 1. the generated installer, under a `uname` fixture printing aarch64
//!    and with `--glibc-runtime private`, plans the private glibc runtime
//!    and the prepared program (`--plan`: its own selection);
//! 2. those rows are installed as the installer installs them: digest
//!    checked, unpacked, the prepared program's loader and library path
//!    written for the install dir. The installer itself cannot finish
//!    here: its entry check would exec an arm64 program, and this host
//!    has no binfmt handler to hand it to qemu;
//! 3. the entry's `--version` prints 3.0.65, and one headless run through
//!    the real runner (`shforge harness cline` and
//!    generated/harness_runner.sh, the entry a wrapper that starts the
//!    program under qemu) against `shforge fake-model-server` answers the
//!    prompt: the model's tool call writes the token file, exit 0.
//!
//! The image row (glibc from the image) is run by
//! `arch_select::cline_aarch64_program_runs_under_qemu`.
//! Without qemu-aarch64-static or the aarch64 artifacts (`shforge fetch
//! cline --arch aarch64 --into DIR`): a loud skip, a failure under
//! SHFORGE_REQUIRE_ARM_BUN=1.

use crate::support;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::output::{code, run};
use support::{arm, artifacts};

const GATE: arm::Gate<'static> = arm::Gate {
    what: "the aarch64 Bun programs",
    require: "SHFORGE_REQUIRE_ARM_BUN",
};

/// The artifacts `name`'s generated installer plans for an aarch64 glibc
/// system with the private runtime (a `uname` fixture first on PATH).
fn planned(name: &str, tmp: &Path) -> Vec<String> {
    let fake = tmp.join("fake");
    fs::create_dir(&fake).unwrap();
    let uname = fake.join("uname");
    fs::write(
        &uname,
        "#!/bin/sh\ncase $1 in -m) echo aarch64 ;; *) echo Linux ;; esac\n",
    )
    .unwrap();
    fs::set_permissions(&uname, fs::Permissions::from_mode(0o755)).unwrap();
    let o = run({
        let mut c = Command::new("bash");
        c.arg(support::root().join(format!("generated/installers/{name}.sh")))
            .args(["--plan", "--glibc-runtime", "private", "--prefix"])
            .arg(tmp.join("prefix"))
            .env("PATH", format!("{}:/usr/bin:/bin", fake.display()));
        c
    });
    assert_eq!(code(&o), 0, "{name} --plan: {}", arm::both(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("artifact "))
        .map(str::to_owned)
        .collect()
}

/// Install the `planned` rows of `name` under `root` as the installer
/// does (digests checked, unpacked at `dest`, the relocation written);
/// the relocated program, or None when an artifact is missing (skipped).
fn install(name: &str, planned: &[String], root: &Path) -> Option<PathBuf> {
    let spec = artifacts::shipped_spec(name);
    let rows: Vec<_> = planned
        .iter()
        .map(|p| {
            spec.artifacts
                .iter()
                .find(|a| &a.path == p)
                .unwrap_or_else(|| panic!("{name}: planned {p} is no row"))
        })
        .collect();
    arm::install(&GATE, name, &rows, root)
}

/// The fake model server as a child (killed when dropped) and its URL.
struct FakeServer(std::process::Child, String);

impl FakeServer {
    fn start(log: &Path, target: &Path) -> FakeServer {
        use std::ffi::OsStr;
        let (child, url) = support::spawn_fake_model_server([
            OsStr::new("--log"),
            log.as_os_str(),
            OsStr::new("--token"),
            OsStr::new("tok-arm64"),
            OsStr::new("--target"),
            target.as_os_str(),
        ]);
        FakeServer(child, url)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn cline_aarch64_installs_and_answers_the_fake_model_under_qemu() {
    let Some(qemu) = GATE.qemu("cline") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let plan = planned("cline", t);
    assert_eq!(
        plan,
        [
            "glibc-runtime-2.36-9+deb12u14-aarch64.tar.gz",
            "cline-cli-linux-arm64-3.0.65-prepared.tar.gz"
        ],
        "cline: the private aarch64 rows"
    );
    let root = t.join("i");
    let Some(program) = install("cline", &plan, &root) else {
        return;
    };

    let o = run({
        let mut c = Command::new(&qemu);
        c.arg(&program)
            .arg("--version")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", t)
            .current_dir(t);
        c
    });
    assert_eq!(code(&o), 0, "cline --version under qemu: {}", arm::both(&o));
    assert!(arm::both(&o).contains("3.0.65"), "{}", arm::both(&o));

    // One headless run: the runner execs the entry, a wrapper that starts
    // the arm64 program under qemu.
    let entry = t.join("cline-under-qemu");
    fs::write(
        &entry,
        format!(
            "#!/bin/sh\nexec '{}' '{}' \"$@\"\n",
            qemu.display(),
            program.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&entry, fs::Permissions::from_mode(0o755)).unwrap();
    let work = t.join("work");
    fs::create_dir(&work).unwrap();
    let log = t.join("requests.jsonl");
    let target = work.join("out.txt");
    let server = FakeServer::start(&log, &target);
    let session = t.join("session");
    let made = run({
        let mut c = Command::new(support::shforge());
        c.args(["harness", "cline", "--out"])
            .arg(&session)
            .arg("--session-dir")
            .arg(&session)
            .arg("--workdir")
            .arg(&work)
            .arg("--entry")
            .arg(&entry)
            .args(["--base-url", &server.1, "--model", "fake-model"])
            .args(["--api-key-env", "SHFORGE_TEST_KEY"])
            .args(["--prompt", "write the token into the target file"]);
        c
    });
    assert_eq!(
        code(&made),
        0,
        "shforge harness cline: {}",
        arm::both(&made)
    );
    let o = run({
        // A guard against a hang, not a time limit.
        let mut c = Command::new("timeout");
        c.arg("400")
            .arg("bash")
            .arg(support::root().join("generated/harness_runner.sh"))
            .arg(session.join("params.sh"))
            .env("SHFORGE_TEST_KEY", "sk-shforge-test");
        c
    });
    drop(server);
    let stderr = fs::read_to_string(session.join("stderr.log")).unwrap_or_default();
    let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
    assert_eq!(
        code(&o),
        0,
        "the runner: {}; stderr: {tail:?}",
        arm::both(&o)
    );
    let requests = fs::read_to_string(&log).unwrap_or_default();
    assert!(
        requests.lines().count() >= 2,
        "a tool call and the final answer: {requests}"
    );
    assert_eq!(
        fs::read_to_string(&target).ok().as_deref(),
        Some("tok-arm64"),
        "the model's tool call ran; stderr: {tail:?}"
    );
    support::loud(&format!(
        "cline aarch64 under qemu: --version and a headless run ({} requests)",
        requests.lines().count()
    ));
}

/// `installers/bun-graph/bun_graph.py ARGS`.
fn bun_graph(args: &[&Path]) -> std::process::Output {
    run({
        let mut c = Command::new("python3");
        c.arg(support::root().join("installers/bun-graph/bun_graph.py"))
            .args(args);
        c
    })
}

/// `bun_graph.py --list` lines: (sha256, machine, name).
fn listed(exe: &Path) -> Vec<(String, String, String)> {
    let o = bun_graph(&[Path::new("--list"), exe]);
    assert_eq!(code(&o), 0, "--list {}: {}", exe.display(), arm::both(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.splitn(4, ' ').collect();
            (w[0].to_owned(), w[2].to_owned(), w[3].to_owned())
        })
        .collect()
}

/// Without qemu: the pinned aarch64 program's module graph is the x86-64
/// one with exactly the recipe's `swap` files replaced (same files, same
/// order; no x86-64 ELF left), and bun_graph.py refuses bad input with one
/// line and no output file.
#[test]
fn cline_aarch64_graph_is_the_x86_64_one_with_the_recipes_swaps() {
    let dir = artifacts::artifacts_dir();
    let spec = artifacts::shipped_spec("cline");
    let row = |arch: &str| {
        spec.artifacts
            .iter()
            .find(|a| a.arch == arch && a.runtime.is_some_and(|r| r.as_str() == "image"))
            .unwrap_or_else(|| panic!("cline: no {arch} image row"))
    };
    let t = tempfile::tempdir().unwrap();
    let mut programs = Vec::new();
    for arch in ["x86_64", "aarch64"] {
        let a = row(arch);
        let file = dir.join(&a.path);
        if !file.is_file() {
            GATE.skip(
                "cline",
                &format!(
                    "missing {} (`shforge fetch cline --arch {arch} --into DIR`)",
                    file.display()
                ),
            );
            return;
        }
        assert_eq!(
            arm::sha256_file(&file),
            a.sha256,
            "{}: not the pinned file",
            a.path
        );
        let into = t.path().join(arch);
        fs::create_dir(&into).unwrap();
        let o = run({
            let mut c = Command::new("tar");
            c.arg("-xzf")
                .arg(&file)
                .arg("-C")
                .arg(&into)
                .arg(&spec.entry);
            c
        });
        assert_eq!(code(&o), 0, "{}", arm::both(&o));
        programs.push(into.join(&spec.entry));
    }
    let (x64, arm) = (listed(&programs[0]), listed(&programs[1]));
    let recipe =
        fs::read_to_string(support::root().join("installers/bundles/cline-arm64/bun-graph"))
            .unwrap();
    let swapped: Vec<&str> = recipe
        .lines()
        .filter_map(|l| l.strip_prefix("swap "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(x64.len(), arm.len(), "the same number of files");
    let mut replaced = 0;
    for (x, a) in x64.iter().zip(&arm) {
        assert_eq!(x.2, a.2, "the same names in the same order");
        assert_ne!(
            a.1, "x86_64",
            "{}: an x86-64 ELF left in the arm64 graph",
            a.2
        );
        if x.1 == "x86_64" {
            assert!(
                swapped.contains(&x.0.as_str()),
                "{}: not in the recipe",
                x.2
            );
            assert_eq!(a.1, "aarch64", "{}", a.2);
            replaced += 1;
        } else {
            assert_eq!(x, a, "a file the recipe does not swap changed");
        }
    }
    assert_eq!(replaced, swapped.len(), "every swap of the recipe was used");

    // Refusals: one line, exit 1, no output. The graph-carrying program as
    // the BUN (its .bun section is not the empty placeholder); a swap of a
    // file the graph does not hold.
    let out = t.path().join("out");
    let zero = "0".repeat(64);
    for (args, needle) in [
        (
            vec![programs[0].clone(), programs[1].clone(), out.clone()],
            "not the empty placeholder",
        ),
        (
            vec![
                programs[0].clone(),
                programs[1].clone(),
                out.clone(),
                "--swap".into(),
                format!("{zero}={}", programs[0].display()).into(),
            ],
            "0 embedded files have that sha256",
        ),
    ] {
        let refs: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
        let o = bun_graph(&refs);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 1, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(!out.exists() && !t.path().join("out.tmp").exists());
    }
}
