//! Issue 37, classes 2 and 3: an image that controls only its environment
//! and files. The installer's tools read none of its configuration (a
//! ~/.curlrc, a ~/.wgetrc, BLOCK_SIZE, TAR_OPTIONS, GZIP, the locale, ...),
//! and the harness CLI gets none of its runtime's code-loading variables
//! (NODE_OPTIONS, BUN_*, PYTHONPATH, LD_PRELOAD) through the real runner,
//! for every catalog harness. Each under every bash of the matrix.

use crate::support;
use support::sha256_hex;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use shforge::installer::{Artifact, Installer, Libc};
use support::http::Server;
use support::{Shell, code, text};

/// A temp dir with the archive of a runtime whose entry prints
/// `fake 1.0`, in its source dir, and an installer for it.
struct World {
    dir: tempfile::TempDir,
    script: PathBuf,
    artifact: Vec<u8>,
}

impl World {
    /// `size`: the spec's size as the archive's length plus this, if any.
    fn new(size: Option<i64>) -> World {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("rt");
        fs::create_dir_all(src.join("bin")).unwrap();
        fs::write(src.join("bin/fake"), "#!/bin/sh\necho 'fake 1.0'\n").unwrap();
        fs::set_permissions(src.join("bin/fake"), fs::Permissions::from_mode(0o755)).unwrap();
        // Some bulk, so that a size in units of a block size is not the size.
        fs::write(src.join("data"), vec![b'x'; 3000]).unwrap();
        fs::create_dir_all(dir.path().join("src/pool")).unwrap();
        let tgz = dir.path().join("src/pool/fake-1.0.tgz");
        let artifact = support::tar_gz_dir(&src, &tgz);
        let mut a = Artifact::tar_gz("pool/fake-1.0.tgz", sha256_hex(&artifact))
            .arch(std::env::consts::ARCH)
            .libc(Libc::Glibc);
        if let Some(d) = size {
            a = a.size((artifact.len() as i64 + d) as u64);
        }
        let inst = Installer::builder("fake", "1.0")
            .entry("bin/fake")
            .check(["--version"], "fake 1.0")
            .artifact(a)
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

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The installer under `sh`, with only `envs` added to a clean
    /// environment (PATH kept).
    fn install(&self, sh: &Shell, source: &[&str], envs: &[(&str, String)]) -> Output {
        let mut c = sh.command(&self.script);
        c.arg("--prefix").arg(self.path("prefix")).args(source);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", self.path("home"));
        for (k, v) in envs {
            c.env(k, v);
        }
        support::run(c)
    }

    fn assert_installed(&self, sh: &Shell, o: &Output) {
        assert_eq!(code(o), 0, "{}: {}", sh.name, text(o));
        let entry = self.path("prefix/fake-1.0/bin/fake");
        let last = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            last.lines().last(),
            Some(entry.to_str().unwrap()),
            "{}",
            sh.name
        );
    }
}

#[test]
fn a_curlrc_or_wgetrc_in_the_image_changes_no_download() {
    if !support::require_tool(
        "a_curlrc_or_wgetrc_in_the_image_changes_no_download",
        "curl",
    ) {
        return;
    }
    let shells = support::bashes();
    let server = Server::start();
    // A "proxy" that serves nothing: a download sent there fails.
    let proxy = Server::start();
    for sh in &shells {
        let w = World::new(None);
        server.put("/pool/fake-1.0.tgz", &w.artifact);
        fs::create_dir_all(w.path("home")).unwrap();
        let stolen = w.path("stolen");
        // curl: the body to a file of the image's choice, and a header.
        fs::write(
            w.path("home/.curlrc"),
            format!(
                "output = \"{}\"\nheader = \"X-Evil: 1\"\n",
                stolen.display()
            ),
        )
        .unwrap();
        // GNU wget: every request through the image's proxy.
        fs::write(
            w.path("home/.wgetrc"),
            format!("use_proxy = on\nhttp_proxy = {}/\n", proxy.url()),
        )
        .unwrap();
        let url = server.url();
        let o = w.install(sh, &["--base-url", &url], &[]);
        w.assert_installed(sh, &o);
        assert!(
            !stolen.exists(),
            "{}: curl wrote the body where .curlrc said",
            sh.name
        );
        // The same with GNU wget alone on PATH (no curl): a tools dir.
        if let Some(wget) = support::which("wget") {
            let w = World::new(None);
            server.put("/pool/fake-1.0.tgz", &w.artifact);
            fs::create_dir_all(w.path("home")).unwrap();
            fs::write(
                w.path("home/.wgetrc"),
                format!("use_proxy = on\nhttp_proxy = {}/\n", proxy.url()),
            )
            .unwrap();
            let bin = tools_without_curl(&w.path("bin"), &wget);
            let mut c = sh.command(&w.script);
            c.arg("--prefix")
                .arg(w.path("prefix"))
                .args(["--base-url", &url])
                .env_clear()
                .env("PATH", &bin)
                .env("HOME", w.path("home"));
            let o = support::run(c);
            w.assert_installed(sh, &o);
        }
    }
    support::report(
        "a_curlrc_or_wgetrc_in_the_image_changes_no_download",
        &shells,
    );
}

/// A PATH of the system's tools but curl, with `wget` as the one given.
fn tools_without_curl(bin: &Path, wget: &Path) -> String {
    fs::create_dir_all(bin).unwrap();
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap()) {
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let name = e.file_name();
            if name == "curl" || name == "wget" || bin.join(&name).exists() {
                continue;
            }
            let _ = std::os::unix::fs::symlink(e.path(), bin.join(&name));
        }
    }
    std::os::unix::fs::symlink(wget, bin.join("wget")).unwrap();
    bin.display().to_string()
}

/// Variables that change what the installer's tools print or do.
fn hostile_tool_env(w: &World) -> Vec<(&'static str, String)> {
    vec![
        ("BLOCK_SIZE", "1M".into()),
        ("LS_BLOCK_SIZE", "1M".into()),
        ("QUOTING_STYLE", "c".into()),
        ("TIME_STYLE", "+%s".into()),
        ("LS_COLORS", "di=01;34".into()),
        ("COLUMNS", "20".into()),
        ("POSIXLY_CORRECT", "1".into()),
        ("TAR_OPTIONS", "--to-stdout".into()),
        ("GZIP", "-l".into()),
        ("XZ_DEFAULTS", "--memlimit=1".into()),
        ("AWKPATH", w.path("nowhere").display().to_string()),
        ("LC_ALL", "C.UTF-8".into()),
        ("OPENSSL_CONF", w.path("nowhere.cnf").display().to_string()),
        ("GAWK_READ_TIMEOUT", "1".into()),
    ]
}

#[test]
fn hostile_tool_variables_change_no_install() {
    let shells = support::bashes();
    for sh in &shells {
        // An archive read in place (ls -lnL gives its size): the size
        // reported and checked is its size in bytes, not in BLOCK_SIZE units.
        let w = World::new(Some(0));
        let len = w.artifact.len() as u64;
        let src = w.path("src").display().to_string();
        let env = hostile_tool_env(&w);
        let o = w.install(sh, &["--source-dir", &src], &env);
        w.assert_installed(sh, &o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!(": {len} bytes, read in place")),
            "{}: {err}",
            sh.name
        );
        // One byte less in the spec: refused, whatever BLOCK_SIZE says.
        let small = World::new(Some(-1));
        let src = small.path("src").display().to_string();
        let env = hostile_tool_env(&small);
        let o = small.install(sh, &["--source-dir", &src], &env);
        assert_eq!(code(&o), 4, "{}: {}", sh.name, text(&o));
        assert!(!small.path("prefix/fake-1.0").exists(), "{}", sh.name);
    }
    support::report("hostile_tool_variables_change_no_install", &shells);
}

// ---------------------------------------------------------------- the harness's environment

/// The catalog by runtime (harnesses/*.toml `run.runtime`).
const NODE: [&str; 6] = [
    "continue-cli",
    "copilot-cli",
    "gemini-cli",
    "openclaw",
    "pi",
    "qwen-code",
];
const BUN: [&str; 4] = ["claude-code", "cline", "kilo", "opencode"];
const PYTHON: [&str; 3] = ["hermes", "nooa", "stirrup"];
const NATIVE: [&str; 1] = ["codex"];

/// A session for harness `name` whose entry is `entry`, in `dir`/NAME.
fn session(dir: &Path, name: &str, entry: &Path) -> PathBuf {
    let s = dir.join(format!("session-{name}"));
    let work = dir.join("work");
    fs::create_dir_all(&work).unwrap();
    let o = support::run_shforge(&[
        "harness",
        name,
        "--out",
        s.to_str().unwrap(),
        "--session-dir",
        s.to_str().unwrap(),
        "--workdir",
        work.to_str().unwrap(),
        "--entry",
        entry.to_str().unwrap(),
        "--base-url",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--prompt",
        "hi",
        "--mode",
        "direct",
    ]);
    assert_eq!(code(&o), 0, "{name}: {}", text(&o));
    s.join("params.sh")
}

/// Run the real runner on `params` under `sh` with `envs` added.
fn run_runner(sh: &Shell, params: &Path, envs: &[(&str, String)]) -> Output {
    let mut c = sh.command(&support::root().join("generated/harness_runner.sh"));
    c.arg(params);
    for (k, v) in envs {
        c.env(k, v);
    }
    support::run(c)
}

fn executable(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn node_options_from_the_image_load_nothing_into_a_node_harness() {
    let Some(node) = support::which("node") else {
        support::require(
            "node_options_from_the_image_load_nothing_into_a_node_harness",
            false,
            "node",
        );
        return;
    };
    let shells = support::bashes();
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("evil-ran");
    let evil = tmp.path().join("evil.js");
    fs::write(
        &evil,
        format!(
            "require('fs').appendFileSync({:?}, 'x\\n');\n",
            marker.display()
        ),
    )
    .unwrap();
    // A Node CLI: it records that it ran, and what NODE_* it saw.
    let ran = tmp.path().join("cli-ran");
    let cli = tmp.path().join("cli.js");
    executable(
        &cli,
        &format!(
            "#!{}\nrequire('fs').appendFileSync({:?}, Object.keys(process.env).filter(k => k.startsWith('NODE_')).join(',') + '\\n');\n",
            node.display(),
            ran.display()
        ),
    );
    let hostile = vec![
        ("NODE_OPTIONS", format!("--require {}", evil.display())),
        ("NODE_PATH", tmp.path().display().to_string()),
        ("NODE_EXTRA_CA_CERTS", "/nonexistent/ca.pem".to_owned()),
    ];
    for sh in &shells {
        for name in NODE.iter().chain(&BUN) {
            let params = session(tmp.path(), name, &cli);
            let _ = fs::remove_file(&ran);
            let o = run_runner(sh, &params, &hostile);
            let seen = fs::read_to_string(&ran).unwrap_or_else(|_| {
                panic!("{} {name}: the CLI did not run: {}", sh.name, text(&o))
            });
            assert!(
                !marker.exists(),
                "{} {name}: NODE_OPTIONS --require ran evil.js",
                sh.name
            );
            // The CA file is connection config, like the proxies: kept.
            assert_eq!(seen.trim(), "NODE_EXTRA_CA_CERTS", "{} {name}", sh.name);
            fs::remove_dir_all(params.parent().unwrap()).unwrap();
        }
    }
    support::report(
        "node_options_from_the_image_load_nothing_into_a_node_harness",
        &shells,
    );
}

#[test]
fn bun_variables_never_reach_a_bun_harness() {
    // No bun on this machine: the CLI records what it was given.
    let shells = support::bashes();
    let tmp = tempfile::tempdir().unwrap();
    let seen = tmp.path().join("seen");
    let cli = tmp.path().join("cli");
    executable(&cli, &format!("#!/bin/sh\nenv > {:?}\n", seen.display()));
    let hostile = vec![
        ("BUN_OPTIONS", "--preload /tmp/evil.ts".to_owned()),
        ("BUN_BE_BUN", "1".to_owned()),
        ("NODE_OPTIONS", "--require /tmp/evil.js".to_owned()),
        ("SHFORGE_TEST_KEPT", "1".to_owned()),
    ];
    for sh in &shells {
        for name in BUN {
            let params = session(tmp.path(), name, &cli);
            let _ = fs::remove_file(&seen);
            let o = run_runner(sh, &params, &hostile);
            let env = fs::read_to_string(&seen)
                .unwrap_or_else(|_| panic!("{} {name}: {}", sh.name, text(&o)));
            for bad in ["BUN_OPTIONS=", "BUN_BE_BUN=", "NODE_OPTIONS="] {
                assert!(
                    !env.lines().any(|l| l.starts_with(bad)),
                    "{} {name}: {bad} reached the CLI",
                    sh.name
                );
            }
            assert!(env.contains("SHFORGE_TEST_KEPT=1"), "{} {name}", sh.name);
            fs::remove_dir_all(params.parent().unwrap()).unwrap();
        }
    }
    support::report("bun_variables_never_reach_a_bun_harness", &shells);
}

/// The real interpreter behind `python3` (pyenv's is a shim script).
fn real_python() -> Option<PathBuf> {
    let o = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    (o.status.success() && p.is_absolute()).then_some(p)
}

#[test]
fn pythonpath_from_the_image_loads_nothing_into_a_python_harness() {
    let Some(python) = real_python() else {
        support::require(
            "pythonpath_from_the_image_loads_nothing_into_a_python_harness",
            false,
            "python3",
        );
        return;
    };
    let shells = support::bashes();
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("evil-ran");
    let evil = tmp.path().join("evil");
    fs::create_dir_all(&evil).unwrap();
    fs::write(
        evil.join("sitecustomize.py"),
        format!("open({:?}, 'a').write('x\\n')\n", marker.display()),
    )
    .unwrap();
    // The harness runs under -I; its own child interpreters do not (a tool
    // running sys.executable): the CLI here is such a child.
    let ran = tmp.path().join("cli-ran");
    let cli = tmp.path().join("cli");
    executable(
        &cli,
        &format!(
            "#!/bin/sh\nexec {:?} -c 'open({:?}, \"a\").write(\"x\")'\n",
            python.display(),
            ran.display()
        ),
    );
    let hostile = vec![
        ("PYTHONPATH", evil.display().to_string()),
        (
            "PYTHONSTARTUP",
            evil.join("sitecustomize.py").display().to_string(),
        ),
    ];
    for sh in &shells {
        for name in PYTHON {
            let params = session(tmp.path(), name, &cli);
            let _ = fs::remove_file(&ran);
            let o = run_runner(sh, &params, &hostile);
            assert!(
                ran.exists(),
                "{} {name}: the CLI did not run: {}",
                sh.name,
                text(&o)
            );
            assert!(
                !marker.exists(),
                "{} {name}: PYTHONPATH loaded sitecustomize",
                sh.name
            );
            fs::remove_dir_all(params.parent().unwrap()).unwrap();
        }
    }
    support::report(
        "pythonpath_from_the_image_loads_nothing_into_a_python_harness",
        &shells,
    );
}

#[test]
fn ld_preload_from_the_image_loads_nothing_into_any_harness() {
    if !support::require_tool(
        "ld_preload_from_the_image_loads_nothing_into_any_harness",
        "gcc",
    ) {
        return;
    }
    let shells = support::bashes();
    let tmp = tempfile::tempdir().unwrap();
    // The library logs every program it is loaded into: the runner's bash
    // got it from the caller before any script ran (nothing can stop
    // that), the CLI must not.
    let log = tmp.path().join("loaded");
    let c_src = tmp.path().join("evil.c");
    fs::write(
        &c_src,
        format!(
            "#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void evil(void) {{\n  char exe[4096] = {{0}};\n  if (readlink(\"/proc/self/exe\", exe, sizeof exe - 1) < 0) return;\n  FILE *f = fopen({:?}, \"a\");\n  if (f) {{ fprintf(f, \"%s\\n\", exe); fclose(f); }}\n}}\n",
            log.display()
        ),
    )
    .unwrap();
    let so = tmp.path().join("evil.so");
    let o = support::run({
        let mut c = Command::new("gcc");
        c.args(["-shared", "-fPIC", "-o"]).arg(&so).arg(&c_src);
        c
    });
    assert_eq!(code(&o), 0, "gcc: {}", text(&o));
    // A glibc program as the CLI, by a name of its own.
    let cli = tmp.path().join("fakecli");
    fs::copy("/bin/true", &cli).unwrap();
    for sh in &shells {
        for name in NODE.iter().chain(&BUN).chain(&PYTHON).chain(&NATIVE) {
            let params = session(tmp.path(), name, &cli);
            let _ = fs::remove_file(&log);
            let o = run_runner(sh, &params, &[("LD_PRELOAD", so.display().to_string())]);
            assert_eq!(code(&o), 0, "{} {name}: {}", sh.name, text(&o));
            let loaded = fs::read_to_string(&log).unwrap_or_default();
            assert!(
                !loaded.lines().any(|l| l.ends_with("/fakecli")),
                "{} {name}: LD_PRELOAD reached the CLI: {loaded}",
                sh.name
            );
            fs::remove_dir_all(params.parent().unwrap()).unwrap();
        }
    }
    support::report(
        "ld_preload_from_the_image_loads_nothing_into_any_harness",
        &shells,
    );
}

/// `--keep-env NAME` gives a removed variable back to the CLI (a task's
/// LD_LIBRARY_PATH or NODE_PATH its commands need); the rest of the family
/// stays removed, and a RUNNER_* name is refused.
#[test]
fn keep_env_gives_back_only_the_variables_named() {
    let shells = support::bashes();
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("env");
    let cli = tmp.path().join("dump-env");
    executable(&cli, &format!("#!/bin/sh\nenv > '{}'\n", dump.display()));
    let s = tmp.path().join("session");
    let work = tmp.path().join("work");
    fs::create_dir_all(&work).unwrap();
    let args = |out: &Path, keep: &[&str]| {
        let mut v: Vec<String> = ["harness", "pi", "--out"].map(String::from).to_vec();
        v.push(out.display().to_string());
        for (flag, value) in [
            ("--session-dir", s.display().to_string()),
            ("--workdir", work.display().to_string()),
            ("--entry", cli.display().to_string()),
            ("--base-url", "http://127.0.0.1:9".into()),
            ("--model", "m".into()),
            ("--prompt", "hi".into()),
            ("--mode", "direct".into()),
        ] {
            v.extend([flag.to_owned(), value]);
        }
        for k in keep {
            v.extend(["--keep-env".to_owned(), (*k).to_owned()]);
        }
        v
    };
    let refused = tmp.path().join("refused");
    let a = args(&refused, &["RUNNER_ENV"]);
    let o = support::run_shforge(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--keep-env"),
        "{}",
        text(&o)
    );
    assert!(!refused.exists());
    let a = args(&s, &["LD_LIBRARY_PATH", "NODE_PATH"]);
    let o = support::run_shforge(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code(&o), 0, "{}", text(&o));
    for sh in &shells {
        let _ = fs::remove_file(&dump);
        let env = [
            ("LD_LIBRARY_PATH", "/task/lib".to_owned()),
            ("LD_BIND_NOW", "1".to_owned()),
            ("NODE_PATH", "/task/node_modules".to_owned()),
            ("NODE_OPTIONS", "--no-warnings".to_owned()),
        ];
        let o = run_runner(sh, &s.join("params.sh"), &env);
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        let got = fs::read_to_string(&dump).unwrap();
        let has = |kv: &str| got.lines().any(|l| l == kv);
        assert!(has("LD_LIBRARY_PATH=/task/lib"), "{}: {got}", sh.name);
        assert!(has("NODE_PATH=/task/node_modules"), "{}: {got}", sh.name);
        assert!(
            !got.contains("LD_BIND_NOW") && !got.contains("NODE_OPTIONS"),
            "{}: {got}",
            sh.name
        );
    }
    support::report("keep_env_gives_back_only_the_variables_named", &shells);
}
