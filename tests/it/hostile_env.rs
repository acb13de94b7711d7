//! The task image's environment is hostile too (issue 37, classes 1, 4 and
//! 5): bash's own variables (`TMOUT`, `FUNCNEST`, `CDPATH`, `BASH_COMPAT`,
//! ...), a PATH whose empty or relative entries name the working directory,
//! and `--api-key-env` names the runtime owns.
//!
//! Every script runs under every bash of the matrix (the bootstrap under
//! every POSIX shell too where PATH is concerned) with the image's values
//! set, and must do exactly what it does without them; the harness must
//! not see bash's variables either (the supervised launch clears them, so
//! a harness sees the same environment however it was started).

use crate::support;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use shforge::installer::{Artifact, Installer, Libc};
use support::{code, text};

/// Far above any real run here: only a hang reaches it.
const HANG: Duration = Duration::from_secs(120);

/// bash's variables as a CIS-hardened or careless image sets them; each
/// changes a script on some release (docs/security.md, "What the image's environment
/// cannot change"). PS4 runs code only under xtrace, which the scripts
/// turn off; it is here so that the harness is seen not to get it.
fn bash_vars(marker: &Path) -> Vec<(String, String)> {
    let v = |k: &str, val: &str| (k.to_owned(), val.to_owned());
    vec![
        v("TMOUT", "1"),
        v("FUNCNEST", "1"),
        v("CDPATH", "/tmp"),
        v("BASH_COMPAT", "31"),
        v("CHILD_MAX", "1"),
        v("BASH_XTRACEFD", "2"),
        v("PS4", &format!("$(touch {})", marker.display())),
    ]
}

/// The names the harness must not inherit.
const CLEARED: &[&str] = &[
    "TMOUT",
    "FUNCNEST",
    "CDPATH",
    "BASH_COMPAT",
    "CHILD_MAX",
    "BASH_XTRACEFD",
    "PS4",
];

fn p(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Run `cmd` with only `env` (plus PATH when `env` lacks it) in `cwd`,
/// stdout and stderr captured, killed (and failed) after [`HANG`].
fn run_in(mut cmd: Command, env: &[(String, String)], cwd: &Path) -> Output {
    cmd.env_clear().current_dir(cwd).stdin(Stdio::null());
    if !env.iter().any(|(k, _)| k == "PATH") {
        cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out_dir = tempfile::tempdir().unwrap();
    let (o, e) = (out_dir.path().join("o"), out_dir.path().join("e"));
    cmd.stdout(fs::File::create(&o).unwrap())
        .stderr(fs::File::create(&e).unwrap());
    let mut child = cmd.spawn().expect("starts");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > HANG {
            child.kill().ok();
            panic!("no end within {HANG:?}: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: fs::read(&o).unwrap(),
        stderr: fs::read(&e).unwrap(),
    }
}

fn generated(name: &str) -> PathBuf {
    support::root().join("generated").join(name)
}

/// The names of `CLEARED` in an `env` dump (NAME=VALUE lines).
fn leaked(env_dump: &str) -> Vec<String> {
    env_dump
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| CLEARED.contains(k))
        .map(|(k, _)| k.to_owned())
        .collect()
}

fn receipt(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(path).unwrap_or_default())
        .unwrap_or_else(|e| panic!("receipt {}: {e}", path.display()))
}

// ------------------------------------------------ class 1: bash's variables

/// A harness that reads nothing for 2 s under `TMOUT=1`, then exits 7:
/// it is not stopped as lost, its status is kept, and it does not see
/// bash's variables.
#[test]
fn the_supervisor_ignores_bash_variables_from_the_image() {
    let shells = support::bashes();
    for sh in &shells {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ps4-ran");
        let (r, envf) = (dir.path().join("receipt.json"), dir.path().join("env"));
        let mut c = sh.command(&generated("process_supervisor.sh"));
        c.args(["--receipt", &p(&r), "--deadline", "60", "--", "sh", "-c"])
            .arg(format!("sleep 2; env > '{}'; exit 7", p(&envf)));
        let out = run_in(c, &bash_vars(&marker), dir.path());
        let doc = receipt(&r);
        assert_eq!(code(&out), 7, "{}: {}\n{doc}", sh.name, text(&out));
        assert_eq!(doc["return_code"], 7, "{}: {doc}", sh.name);
        assert_eq!(doc["timed_out"], false, "{}: {doc}", sh.name);
        assert_eq!(doc["cleanup_confirmed"], true, "{}: {doc}", sh.name);
        let dump = fs::read_to_string(&envf).unwrap();
        assert!(
            leaked(&dump).is_empty(),
            "{}: the harness got {:?}",
            sh.name,
            leaked(&dump)
        );
        assert!(!marker.exists(), "{}: PS4 ran", sh.name);
    }
    support::report(
        "the_supervisor_ignores_bash_variables_from_the_image",
        &shells,
    );
}

/// Events mode records a line that comes after 2 s of silence under
/// `TMOUT=1`; the CLI does not see bash's variables.
#[test]
fn the_runner_ignores_bash_variables_from_the_image() {
    let shells = support::bashes();
    for sh in &shells {
        let dir = tempfile::tempdir().unwrap();
        let (events, envf) = (dir.path().join("events.log"), dir.path().join("env"));
        let params = write_params(
            dir.path(),
            &json!({
                "RUNNER_ARGV": ["sh", "-c", format!("echo one; sleep 2; env > '{}'; echo two", p(&envf))],
                "RUNNER_MODE": "events",
                "RUNNER_EVENTS": p(&events),
                "RUNNER_CWD": "sub",
            }),
        );
        // A relative RUNNER_CWD that CDPATH would send to /tmp/sub.
        fs::create_dir(dir.path().join("sub")).unwrap();
        let mut c = sh.command(&generated("harness_runner.sh"));
        c.arg(&params);
        let out = run_in(c, &bash_vars(&dir.path().join("m")), dir.path());
        assert_eq!(code(&out), 0, "{}: {}", sh.name, text(&out));
        let got = fs::read_to_string(&events).unwrap_or_default();
        let lines: Vec<&str> = got
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|x| x.1)
            .collect();
        assert_eq!(lines, ["one", "two"], "{}: {got:?}", sh.name);
        let dump = fs::read_to_string(&envf).unwrap();
        assert!(
            leaked(&dump).is_empty(),
            "{}: the CLI got {:?}",
            sh.name,
            leaked(&dump)
        );
    }
    support::report("the_runner_ignores_bash_variables_from_the_image", &shells);
}

/// An install and the bootstrap run to their end under `FUNCNEST=1`
/// (every function call past the first fails on 4.4 and later).
#[test]
fn the_installer_and_bootstrap_ignore_bash_variables_from_the_image() {
    let shells = support::bashes();
    for sh in &shells {
        let w = InstallWorld::new();
        let mut c = sh.command(&w.script);
        c.args([
            "--prefix",
            &p(&w.prefix()),
            "--source-dir",
            &p(&w.src()),
            "--quiet",
        ]);
        let out = run_in(c, &bash_vars(&w.dir.path().join("m")), w.dir.path());
        assert_eq!(code(&out), 0, "{}: {}", sh.name, text(&out));
        let last = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .map(str::to_owned);
        assert_eq!(last.as_deref(), Some(p(&w.entry()).as_str()), "{}", sh.name);

        let mut c = sh.command(&generated("bootstrap.sh"));
        c.args(["--need", "sh"]);
        let out = run_in(c, &bash_vars(&w.dir.path().join("m")), w.dir.path());
        assert_eq!(code(&out), 0, "{} bootstrap: {}", sh.name, text(&out));
    }
    support::report(
        "the_installer_and_bootstrap_ignore_bash_variables_from_the_image",
        &shells,
    );
}

/// Functions the image exports, named like every builtin and tool the
/// supervisor runs, in both import forms (`BASH_FUNC_NAME%%`, and
/// `NAME=() {` as bash 3.2.48 imports them): none runs, the harness's
/// status and receipt are right, and the harness inherits none.
#[test]
fn the_supervisor_runs_no_function_from_the_image() {
    const NAMES: &[&str] = &[
        "builtin", "exec", "printf", "read", "wait", "local", "return", "shopt", "unset", "set",
        "kill", "trap", "mv", "sleep", "rm", "cat", "mkdir", "rmdir", "command", "cd", "export",
        "type", "echo", "test", "env", "perl", "compgen", "declare", "eval", "exit", "shift",
    ];
    let shells = support::bashes();
    for sh in &shells {
        let dir = tempfile::tempdir().unwrap();
        let ran = dir.path().join("ran");
        let (r, envf) = (dir.path().join("receipt.json"), dir.path().join("env"));
        let mut env = Vec::new();
        for name in NAMES {
            let body = format!("() {{ echo {name} >> '{}'; return 0; }}", p(&ran));
            env.push((format!("BASH_FUNC_{name}%%"), body.clone()));
            env.push(((*name).to_owned(), body));
        }
        let mut c = sh.command(&generated("process_supervisor.sh"));
        c.args(["--receipt", &p(&r), "--deadline", "60", "--", "sh", "-c"])
            .arg(format!("env > '{}'; exit 7", p(&envf)));
        let out = run_in(c, &env, dir.path());
        assert!(
            !ran.exists(),
            "{}: ran {:?}",
            sh.name,
            fs::read_to_string(&ran)
        );
        assert_eq!(code(&out), 7, "{}: {}", sh.name, text(&out));
        let doc = receipt(&r);
        assert_eq!(doc["return_code"], 7, "{}: {doc}", sh.name);
        assert_eq!(doc["cleanup_confirmed"], true, "{}: {doc}", sh.name);
        let dump = fs::read_to_string(&envf).unwrap();
        // (`NAME=() {` stays a plain variable where this bash did not
        // import it as a function.)
        assert!(!dump.contains("BASH_FUNC_"), "{}: {dump}", sh.name);
    }
    support::report("the_supervisor_runs_no_function_from_the_image", &shells);
}

/// Started with `&` by a shell without job control (INT ignored) where
/// `env` has no `--default-signal` (busybox), the supervisor restarts
/// through perl: PERL5OPT/PERL5LIB from the image load no module into that
/// perl, and the harness still gets them.
#[test]
fn the_supervisor_perl_restart_loads_no_code_from_the_image() {
    let (Some(busybox), Some(perl)) = (support::which("busybox"), support::which("perl")) else {
        support::require("the_supervisor_perl_restart", false, "busybox and perl");
        return;
    };
    let shells = support::bashes();
    for sh in &shells {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        fs::create_dir(&bin).unwrap();
        for t in ["mv", "sleep", "cat", "rm", "mkdir", "rmdir"] {
            std::os::unix::fs::symlink(support::which(t).unwrap(), bin.join(t)).unwrap();
        }
        std::os::unix::fs::symlink(&perl, bin.join("perl")).unwrap();
        std::os::unix::fs::symlink(&busybox, bin.join("env")).unwrap();
        let ran = dir.path().join("ran");
        fs::write(
            dir.path().join("Evil.pm"),
            format!("package Evil; open(my $f, '>', '{}'); 1;\n", p(&ran)),
        )
        .unwrap();
        let (r, envf) = (dir.path().join("receipt.json"), dir.path().join("env"));
        let inner = format!(
            "'{}' '{}' --receipt '{}' -- /bin/sh -c 'echo \"$PERL5OPT $PERL5LIB\" > {}; exit 7' & wait $!",
            sh.program(),
            p(&generated("process_supervisor.sh")),
            p(&r),
            p(&envf)
        );
        let mut c = Command::new("/bin/sh");
        c.args(["-c", &inner]);
        let env = vec![
            ("PATH".to_owned(), p(&bin)),
            ("PERL5OPT".to_owned(), "-MEvil".to_owned()),
            ("PERL5LIB".to_owned(), p(dir.path())),
        ];
        let out = run_in(c, &env, dir.path());
        assert!(
            !ran.exists(),
            "{}: PERL5OPT loaded a module: {}",
            sh.name,
            text(&out)
        );
        assert_eq!(code(&out), 7, "{}: {}", sh.name, text(&out));
        let got = fs::read_to_string(&envf).unwrap();
        assert_eq!(
            got.trim(),
            format!("-MEvil {}", p(dir.path())),
            "{}",
            sh.name
        );
    }
    support::report(
        "the_supervisor_perl_restart_loads_no_code_from_the_image",
        &shells,
    );
}

/// `shforge launch` (and so the Python API, which calls it) clears every
/// variable of the table before bash starts.
#[test]
fn the_launch_argv_clears_bash_variables() {
    let out = support::run_shforge(&[
        "launch",
        "--supervisor",
        "/s/process_supervisor.sh",
        "--receipt",
        "/s/r.json",
        "--",
        "cli",
    ]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let argv: Vec<String> = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    });
    for name in ["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS"]
        .iter()
        .chain(CLEARED)
    {
        let pos = argv.iter().position(|a| a == name);
        assert!(
            pos.is_some_and(|i| i > 0 && argv[i - 1] == "-u"),
            "{name} is not cleared: {argv:?}"
        );
    }
}

// ------------------------------------------------------------ class 4: PATH

/// Names of tools a script might look up; each, planted in the working
/// directory, records that it ran and fails.
const PLANTED: &[&str] = &[
    "sh",
    "bash",
    "env",
    "mv",
    "rm",
    "cp",
    "ln",
    "mkdir",
    "rmdir",
    "sleep",
    "cat",
    "dd",
    "sed",
    "tr",
    "mktemp",
    "tar",
    "gzip",
    "xz",
    "sha256sum",
    "shasum",
    "openssl",
    "busybox",
    "ls",
    "od",
    "sort",
    "head",
    "awk",
    "uname",
    "getconf",
    "ldd",
    "flock",
    "perl",
    "stat",
    "id",
    "chmod",
    "touch",
    "readlink",
    "date",
    "find",
    "wc",
    "cut",
    "grep",
    "curl",
    "wget",
    "setsid",
    "fake-cli",
    "shforge-missing-tool",
];

/// A working directory full of impostors, and a PATH whose empty, `.` and
/// relative entries all name it, ahead of the real directories.
struct Impostors {
    dir: tempfile::TempDir,
}

impl Impostors {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ran = dir.path().join("ran");
        fs::create_dir(&ran).unwrap();
        let bin = dir.path().join("bin");
        fs::create_dir(&bin).unwrap();
        for name in PLANTED {
            for d in [dir.path(), &bin] {
                let f = d.join(name);
                fs::write(&f, format!("#!/bin/sh\n: > '{}/{name}'\nexit 1\n", p(&ran))).unwrap();
                fs::set_permissions(&f, fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        Impostors { dir }
    }

    fn cwd(&self) -> &Path {
        self.dir.path()
    }

    /// `PATH`: an empty entry, `.`, `bin`, then `real`.
    fn path(&self, real: &str) -> (String, String) {
        ("PATH".into(), format!(":.:bin:{real}:"))
    }

    /// The impostors that ran.
    fn ran(&self) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(self.dir.path().join("ran"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

fn host_path() -> String {
    std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
}

#[test]
fn no_relative_path_entry_supplies_a_tool_to_the_supervisor_or_runner() {
    let shells = support::bashes();
    for sh in &shells {
        let imp = Impostors::new();
        let env = vec![imp.path(&host_path())];
        let r = imp.cwd().join("receipt.json");
        let events = imp.cwd().join("events.log");
        let params = write_params(
            imp.cwd(),
            &json!({
                "RUNNER_ARGV": ["sh", "-c", "echo hi"],
                "RUNNER_MODE": "events",
                "RUNNER_EVENTS": p(&events),
            }),
        );
        let mut c = sh.command(&generated("process_supervisor.sh"));
        c.args(["--receipt", &p(&r), "--deadline", "60", "--"])
            .arg(sh.program())
            .arg(generated("harness_runner.sh"))
            .arg(&params);
        let out = run_in(c, &env, imp.cwd());
        assert!(
            imp.ran().is_empty(),
            "{}: impostors ran: {:?}\n{}",
            sh.name,
            imp.ran(),
            text(&out)
        );
        assert_eq!(code(&out), 0, "{}: {}", sh.name, text(&out));
        assert_eq!(receipt(&r)["return_code"], 0, "{}", sh.name);
        assert!(
            fs::read_to_string(&events).unwrap().ends_with("\thi\n"),
            "{}",
            sh.name
        );

        // A CLI named only by a relative entry is not found (127), never run.
        let params = write_params(imp.cwd(), &json!({"RUNNER_ARGV": ["fake-cli"]}));
        let mut c = sh.command(&generated("harness_runner.sh"));
        c.arg(&params);
        let out = run_in(c, &env, imp.cwd());
        assert_eq!(code(&out), 127, "{}: {}", sh.name, text(&out));
        assert!(
            imp.ran().is_empty(),
            "{}: impostors ran: {:?}",
            sh.name,
            imp.ran()
        );

        // Nor through RUNNER_PATH_PREFIX: refused (125) before the CLI runs.
        let params = write_params(
            imp.cwd(),
            &json!({"RUNNER_ARGV": ["fake-cli"], "RUNNER_PATH_PREFIX": "bin"}),
        );
        let mut c = sh.command(&generated("harness_runner.sh"));
        c.arg(&params);
        let out = run_in(c, &env, imp.cwd());
        assert_eq!(code(&out), 125, "{}: {}", sh.name, text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("RUNNER_PATH_PREFIX"), "{}: {err}", sh.name);
        assert!(
            imp.ran().is_empty(),
            "{}: impostors ran: {:?}",
            sh.name,
            imp.ran()
        );
    }
    support::report(
        "no_relative_path_entry_supplies_a_tool_to_the_supervisor_or_runner",
        &shells,
    );
}

#[test]
fn no_relative_path_entry_supplies_a_tool_to_the_installer() {
    let shells = support::bashes();
    for sh in &shells {
        let w = InstallWorld::new();
        let imp = Impostors::new();
        let mut c = sh.command(&w.script);
        c.args(["--prefix", &p(&w.prefix()), "--source-dir", &p(&w.src())]);
        let out = run_in(c, &[imp.path(&host_path())], imp.cwd());
        assert!(
            imp.ran().is_empty(),
            "{}: impostors ran: {:?}\n{}",
            sh.name,
            imp.ran(),
            text(&out)
        );
        assert_eq!(code(&out), 0, "{}: {}", sh.name, text(&out));
    }
    support::report(
        "no_relative_path_entry_supplies_a_tool_to_the_installer",
        &shells,
    );
}

/// `--need TOOL` where only the working directory has TOOL: the bootstrap
/// must look for a package (and, with no package manager in its PATH, exit
/// 4), never take the impostor for the tool. Every POSIX shell and bash.
#[test]
fn no_relative_path_entry_satisfies_the_bootstrap() {
    let shells = support::posix_shells();
    let tools = tempfile::tempdir().unwrap();
    // Only what the bootstrap needs besides the package managers.
    for t in [
        "sh", "cat", "uname", "ls", "id", "rm", "mkdir", "readlink", "dirname",
    ] {
        if let Some(real) = support::which(t) {
            std::os::unix::fs::symlink(real, tools.path().join(t)).unwrap();
        }
    }
    for sh in &shells {
        let imp = Impostors::new();
        let mut c = sh.command(&generated("bootstrap.sh"));
        c.args(["--need", "shforge-missing-tool"]);
        let out = run_in(c, &[imp.path(&p(tools.path()))], imp.cwd());
        assert_eq!(code(&out), 4, "{}: {}", sh.name, text(&out));
        assert!(
            imp.ran().is_empty(),
            "{}: impostors ran: {:?}",
            sh.name,
            imp.ran()
        );
    }
    support::report("no_relative_path_entry_satisfies_the_bootstrap", &shells);
}

// ---------------------------------------------- class 5: names the runtime owns

#[test]
fn api_key_env_refuses_names_the_runtime_owns() {
    let tmp = tempfile::tempdir().unwrap();
    for name in [
        "PWD",
        "OLDPWD",
        "SHLVL",
        "IFS",
        "PATH",
        "HOME",
        "TMOUT",
        "FUNCNEST",
        "CDPATH",
        "BASH_ENV",
        "SHELLOPTS",
        "NEMO_GYM_SUPERVISOR",
        "RUNNER_ENV",
        "LD_PRELOAD",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "XDG_CONFIG_HOME",
        "LC_ALL",
        "_",
        "RANDOM",
        "SECONDS",
    ] {
        let out_dir = tmp.path().join(name);
        let mut c = Command::new(support::shforge());
        c.args(["harness", "pi", "--out", &p(&out_dir)])
            .args(["--session-dir", "/s", "--workdir", "/w", "--entry", "/e"])
            .args(["--base-url", "http://h", "--model", "m", "--prompt", "p"])
            .args(["--api-key-env", name]);
        let out = support::run(c);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), 2, "{name}: {}", text(&out));
        assert!(
            err.contains("--api-key-env") && err.contains(name),
            "{name}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(!out_dir.exists(), "{name}: something was written");
    }
}

// ---------------------------------------------------------------- fixtures

fn write_params(dir: &Path, doc: &serde_json::Value) -> PathBuf {
    let n = fs::read_dir(dir).unwrap().count();
    support::write_params(&dir.join(format!("params-{n}.sh")), doc)
}

/// An installer of a fake runtime (a tar.gz whose `bin/fake --version`
/// prints `fake 1.0`) from a source dir.
struct InstallWorld {
    dir: tempfile::TempDir,
    script: PathBuf,
}

impl InstallWorld {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("tree");
        fs::create_dir_all(src.join("bin")).unwrap();
        fs::write(src.join("bin/fake"), "#!/bin/sh\necho 'fake 1.0'\n").unwrap();
        fs::set_permissions(src.join("bin/fake"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::create_dir_all(dir.path().join("src")).unwrap();
        let tgz = support::tar_gz_dir(&src, &dir.path().join("src/fake.tgz"));
        let sha = support::sha256_hex(&tgz);
        let inst = Installer::builder("fake", "1.0")
            .entry("bin/fake")
            .check(["--version"], "fake 1.0")
            .artifact(
                Artifact::tar_gz("fake.tgz", sha)
                    .arch(std::env::consts::ARCH)
                    .libc(Libc::Glibc),
            )
            .build()
            .unwrap();
        let script = dir.path().join("install_fake.sh");
        fs::write(&script, inst.script().unwrap()).unwrap();
        InstallWorld { dir, script }
    }
    fn src(&self) -> PathBuf {
        self.dir.path().join("src")
    }
    fn prefix(&self) -> PathBuf {
        self.dir.path().join("prefix")
    }
    fn entry(&self) -> PathBuf {
        self.prefix().join("fake-1.0/bin/fake")
    }
}
