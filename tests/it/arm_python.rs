//! The aarch64 Python runtimes of Hermes, Stirrup, NOOA, mini-swe-agent,
//! Kimi CLI and Mistral Vibe (issue 41, item 2), run under `qemu-aarch64-static` user
//! emulation on this x86_64 host.
//!
//! For each harness the spec's aarch64 rows (the private glibc runtime, the
//! portable Python, the bundle) are taken from the artifacts dir
//! (SHFORGE_SMOKE_ARTIFACTS; `shforge fetch hermes stirrup nooa mini-swe-agent kimi-cli
//! mistral-vibe --arch aarch64 --into DIR` builds just these), their sha256 checked against the
//! spec, unpacked as the installer lays them out (`dest`), and the
//! interpreter relocated by the spec's `[[artifact.relocate]]` table as
//! `templates/lib/relocate.sh` does it: the placeholders must be at the
//! table's offsets, the file with them zeroed must have the table's
//! `zeroed_sha256`, and the paths written there are then the only way the
//! program finds its loader and libraries (qemu honours PT_INTERP; the
//! hardened loader reads no /etc/ld.so.cache). Then, under qemu:
//! `pythonX.Y --version`, one import of the harness package (and the
//! standard library's native modules its wheels need), and the entry's
//! `--version` through the bundle's own `bin/run` and `boot.py`, which
//! must print the spec's `[check] expect`.
//!
//! The generated installer itself is not run for aarch64 here: its entry
//! check would exec an arm64 program, which this host runs only through
//! binfmt_misc (absent in these containers). Its selection of the same rows
//! is tested by `arch_select`.
//!
//! Without qemu-aarch64-static or the aarch64 artifacts: a loud skip, a
//! failure under SHFORGE_REQUIRE_ARM_PYTHON=1, or where it lists the
//! harness (CI sets it to hermes,stirrup).

use crate::support;

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::output::run;
use support::{arm, artifacts};

/// (harness, a top module of its bundle, a native module of its wheels).
const CASES: &[(&str, &str, &str)] = &[
    ("hermes", "hermes_cli", "pydantic_core"),
    // `import stirrup` needs boot.py's moviepy setup (its ffmpeg is left
    // out): the entry's --version below imports it; here its client library.
    ("stirrup", "openai", "pydantic_core"),
    ("nooa", "nooa", "pydantic_core"),
    ("mini-swe-agent", "minisweagent", "pydantic_core"),
    // kimi_cli.cli: the Typer app, with the agent, tools and kosong's
    // providers it imports.
    ("kimi-cli", "kimi_cli.cli", "pydantic_core"),
    ("mistral-vibe", "vibe.core.config", "pydantic_core"),
];

const GATE: arm::Gate<'static> = arm::Gate {
    what: "the aarch64 Python runtimes",
    require: "SHFORGE_REQUIRE_ARM_PYTHON",
};

/// Unpack `name`'s aarch64 rows under `root` and relocate the interpreter
/// for an install at `root`; the interpreter's path, or None when the
/// artifacts are missing (skipped loudly).
fn install(name: &str, root: &Path) -> Option<PathBuf> {
    let spec = artifacts::shipped_spec(name);
    let rows: Vec<_> = spec
        .artifacts
        .iter()
        .filter(|a| a.arch == "aarch64")
        .collect();
    assert_eq!(
        rows.len(),
        3,
        "{name}: glibc, python and bundle rows for aarch64"
    );
    arm::install(&GATE, name, &rows, root)
}

fn runs_under_qemu(name: &str, module: &str, native: &str) {
    let Some(qemu) = GATE.qemu(name) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("i");
    let Some(py) = install(name, &root) else {
        return;
    };
    let file = py.file_name().unwrap().to_string_lossy().into_owned();
    let version = file.strip_prefix("python").unwrap().to_owned();
    // Nothing of the host reaches it: a clean environment. LiteLLM (NOOA,
    // mini-swe-agent) fetches its model-cost map at import unless told not
    // to, three tries with back-off (23 s under qemu, offline), as the
    // bundles' boot.py tells it for a real run.
    let qrun = |args: &[&str]| {
        run({
            let mut c = Command::new(&qemu);
            c.arg(&py)
                .args(args)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("HOME", tmp.path())
                .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
                .current_dir(tmp.path());
            c
        })
    };

    let o = qrun(&["--version"]);
    assert!(o.status.success(), "{name}: python --version: {o:?}");
    assert!(
        arm::both(&o).starts_with(&format!("Python {version}.")),
        "{name}: {}",
        arm::both(&o)
    );

    let site = root.join(name).join("site-packages");
    let code = format!(
        "import sys, platform; sys.path.append({:?}); import ssl, sqlite3, ctypes, lzma, bz2, zlib; \
         import {native}, {module}; print(platform.machine(), {module}.__name__, ssl.OPENSSL_VERSION)",
        site.display().to_string()
    );
    let o = qrun(&["-I", "-B", "-c", &code]);
    assert!(
        o.status.success(),
        "{name}: import {module}: {}",
        arm::both(&o)
    );
    // Stdout's last line: a package may print a banner on import
    // (mini-swe-agent), and warnings go to stderr (NOOA's litellm).
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .last()
            .is_some_and(|l| l.starts_with(&format!("aarch64 {module} OpenSSL"))),
        "{name}: {}",
        arm::both(&o)
    );

    // The entry's --version as the launcher runs it: bin/run PYTHON BOOT
    // --version, with PYTHON a wrapper that starts the arm64 one under qemu.
    let wrapper = tmp.path().join("py");
    let mut w = fs::File::create(&wrapper).unwrap();
    writeln!(
        w,
        "#!/bin/sh\nexec {:?} {:?} \"$@\"",
        qemu.display().to_string(),
        py.display().to_string()
    )
    .unwrap();
    drop(w);
    support::output::run({
        let mut c = Command::new("chmod");
        c.arg("755").arg(&wrapper);
        c
    });
    let expect = artifacts::shipped_spec(name)
        .check
        .and_then(|c| c.expect)
        .expect("a [check] expect");
    let o = run({
        let mut c = Command::new("sh");
        c.arg(root.join(name).join("bin/run"))
            .arg(&wrapper)
            .arg(root.join(name).join("boot.py"))
            .arg("--version")
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", tmp.path())
            .current_dir(tmp.path());
        c
    });
    assert!(o.status.success(), "{name} --version: {}", arm::both(&o));
    assert!(
        arm::both(&o).contains(&expect),
        "{name} --version: want {expect:?}: {}",
        arm::both(&o)
    );
    // Nothing was written into the install (-B, unchecked-hash .pyc).
    let out = run({
        let mut c = Command::new("find");
        c.arg(&root)
            .arg("-newer")
            .arg(&wrapper)
            .arg("-type")
            .arg("f");
        c
    });
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "",
        "{name}: files written into the install"
    );
    support::loud(&format!(
        "{name} aarch64 under qemu: {}",
        arm::both(&o).trim()
    ));
}

#[test]
fn hermes_aarch64_runtime_runs_under_qemu() {
    let (n, m, x) = CASES[0];
    runs_under_qemu(n, m, x);
}

#[test]
fn stirrup_aarch64_runtime_runs_under_qemu() {
    let (n, m, x) = CASES[1];
    runs_under_qemu(n, m, x);
}

#[test]
fn nooa_aarch64_runtime_runs_under_qemu() {
    let (n, m, x) = CASES[2];
    runs_under_qemu(n, m, x);
}

#[test]
fn mini_swe_agent_aarch64_runtime_runs_under_qemu() {
    let (n, m, x) = CASES[3];
    runs_under_qemu(n, m, x);
}

#[test]
fn kimi_cli_aarch64_runtime_runs_under_qemu() {
    let (n, m, x) = CASES[4];
    runs_under_qemu(n, m, x);
}

#[test]
fn mistral_vibe_aarch64_runtime_runs_under_qemu() {
    let (n, m, x) = CASES[5];
    runs_under_qemu(n, m, x);
}
