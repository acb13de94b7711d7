//! `shforge smoke [NAME...]`: the real harness CLIs, from their pinned
//! artifacts, through the generated installer, supervisor and runner,
//! against the fake model server.
//!
//! For each harness:
//! 1. its artifacts for this machine in the artifacts dir, fetched with the
//!    spec's `source` when missing ([`artifacts`]);
//! 2. the generated installer (from the compiled-in catalog, written to
//!    `WORK/scripts/`) into `WORK/prefix`, fresh (a previous install there is
//!    removed first) and then again, reused;
//! 3. the fake model server on 127.0.0.1 (one per harness);
//! 4. one rollout in events mode and one in direct mode: a session from
//!    [`crate::harness`] in `WORK/NAME/MODE/session`, run as
//!    `process_supervisor.sh -- bash harness_runner.sh session/params.sh`
//!    with HOME set to a task HOME holding marker files, and the key
//!    variable set to a throwaway value;
//! 5. the checks of [`checks`], one table row per harness and mode
//!    ([`table`]), and the top-level `/tmp` entries that appeared during the
//!    rollout (on a shared machine other programs' files can show up there
//!    too; it is a report, not a check).
//!
//! The prompt asks the fake server for one tool call writing a fresh token
//! to `WORK/NAME/MODE/out/deliverable.txt` (outside the workdir, as a task's
//! deliverable would be): through the write tool, or through the shell tool
//! for OpenClaw (its write tool is confined to `--cwd`) and Codex (it has
//! no write tool).

mod artifacts;
mod checks;
mod sandbox;
mod subject;
pub mod table;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::harness::{Harness, Mode, SessionSpec};
use crate::host::{SupervisorOptions, supervised_launch};
use crate::model_server::{RunningServer, ServerConfig};
use crate::scripts::supervisor::MARKER_VAR;

use checks::Check;
use sandbox::Sandbox;
pub use subject::Subject;

/// The harnesses `shforge smoke` runs when none is named.
pub const DEFAULT: [Harness; 13] = Harness::ALL;

/// The runner modes each harness is rolled out in, in row order.
const MODES: [Mode; 2] = [Mode::Events, Mode::Direct];

/// Deadline of one rollout.
pub const DEADLINE: Duration = Duration::from_secs(300);

/// How to run the smoke.
#[derive(Debug, Clone)]
pub struct Options {
    /// The harnesses (shipped ones, adapters' spec files), in order.
    pub harnesses: Vec<Subject>,
    /// Where the pinned artifacts are (and fetched ones go).
    pub artifacts: PathBuf,
    /// Scratch dir: scripts, prefix, sessions, task HOMEs.
    pub work: PathBuf,
    /// The bash that runs the installer, supervisor and runner.
    pub bash: String,
    /// Run the installs and rollouts inside this root directory (chroot and
    /// a PID namespace; needs root), after `bootstrap.sh` under the root's
    /// own `/bin/sh`. The artifacts are the root's: its libc by
    /// [`crate::musl::system_is_musl`].
    pub root: Option<PathBuf>,
}

/// One row of the result: a harness in one mode.
#[derive(Debug, Clone)]
pub struct Row {
    /// The harness's name.
    pub harness: String,
    /// The runner mode.
    pub mode: &'static str,
    /// Install times (fresh, reused), or why the install failed.
    pub install: Result<(Duration, Duration), String>,
    /// Wall time of the rollout.
    pub rollout: Option<Duration>,
    /// The checks, in [`checks::NAMES`] order.
    pub checks: Vec<Check>,
    /// Top-level /tmp entries that appeared during the rollout.
    pub outside: Vec<String>,
}

impl Row {
    /// The row of a rollout that never ran: `why` (an install or server
    /// failure) stands in the install column.
    fn not_run(harness: &Subject, mode: Mode, why: String) -> Row {
        Row {
            harness: harness.name().to_owned(),
            mode: mode.name(),
            install: Err(why),
            rollout: None,
            checks: Vec::new(),
            outside: Vec::new(),
        }
    }

    /// Every check passed (and the install did).
    pub fn passed(&self) -> bool {
        self.install.is_ok()
            && self.checks.len() == checks::NAMES.len()
            && self.checks.iter().all(|c| c.ok)
    }
}

/// A setup step failed before any harness ran.
#[derive(Debug, thiserror::Error)]
pub enum SmokeError {
    /// Writing the scripts or dirs failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The catalog could not be rendered.
    #[error("rendering the scripts: {0}")]
    Render(String),
    /// `--root` cannot be used.
    #[error("--root {root}: {why}")]
    Root {
        /// The root.
        root: String,
        /// Why.
        why: String,
    },
}

impl SmokeError {
    /// 2 for an unusable `--root` (the user's input), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            SmokeError::Root { .. } => 2,
            _ => 1,
        }
    }
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SmokeError {
    let path = path.display().to_string();
    move |source| SmokeError::Io { what, path, source }
}

/// Paths of the generated scripts written for the run.
struct Scripts {
    supervisor: PathBuf,
    runner: PathBuf,
    dir: PathBuf,
}

fn write_scripts(work: &Path) -> Result<Scripts, SmokeError> {
    let dir = work.join("scripts");
    let catalog = crate::catalog::catalog().map_err(|e| SmokeError::Render(e.to_string()))?;
    let outputs =
        crate::generate::render_all(&catalog).map_err(|e| SmokeError::Render(e.to_string()))?;
    for o in &outputs {
        let p = dir.join(&o.path);
        crate::files::write_atomic(&p, o.content.as_bytes(), crate::files::FileMode::Executable)
            .map_err(|e| io("writing", &p)(e.into_cause()))?;
    }
    Ok(Scripts {
        supervisor: dir.join(crate::scripts::supervisor::PATH),
        runner: dir.join(crate::scripts::runner::PATH),
        dir,
    })
}

/// Run the smoke; `progress` gets one line per step.
pub fn run(opts: &Options, progress: &mut dyn FnMut(&str)) -> Result<Vec<Row>, SmokeError> {
    std::fs::create_dir_all(&opts.work).map_err(io("creating", &opts.work))?;
    let work = std::fs::canonicalize(&opts.work).map_err(io("resolving", &opts.work))?;
    let scripts = write_scripts(&work)?;
    let sandbox = match &opts.root {
        None => Sandbox::host(),
        Some(root) => {
            let bad = |why: String| SmokeError::Root {
                root: root.display().to_string(),
                why,
            };
            let uid0 = std::fs::read_to_string("/proc/self/status").is_ok_and(|st| {
                st.lines()
                    .find(|l| l.starts_with("Uid:"))
                    .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"))
            });
            if !uid0 {
                return Err(bad("needs root (unshare, mount, chroot)".into()));
            }
            let root = std::fs::canonicalize(root).map_err(|e| bad(e.to_string()))?;
            std::fs::create_dir_all(&opts.artifacts).map_err(io("creating", &opts.artifacts))?;
            let artifacts =
                std::fs::canonicalize(&opts.artifacts).map_err(io("resolving", &opts.artifacts))?;
            for dir in ["proc", "dev", "tmp"] {
                if !root.join(dir).is_dir() {
                    return Err(bad(format!("has no /{dir}")));
                }
            }
            let python = ["usr/bin/python3", "usr/bin/python", "bin/python3"]
                .iter()
                .any(|p| root.join(p).exists());
            progress(&format!(
                "root {}: {}, {}",
                root.display(),
                libc_name(&root),
                if python { "HAS a python" } else { "no python" }
            ));
            // The mount points exist before the first snapshot of the root,
            // so that they do not show as what an install created.
            for bind in [&work, &artifacts] {
                let point = root.join(bind.strip_prefix("/").unwrap_or(bind));
                std::fs::create_dir_all(&point).map_err(io("creating", &point))?;
            }
            Sandbox::root(root, vec![work.clone(), artifacts])
        }
    };
    let mut rows = Vec::new();
    for (i, h) in opts.harnesses.iter().enumerate() {
        let tag = format!("[{}/{}] {}", i + 1, opts.harnesses.len(), h.name());
        let mut say = |s: &str| progress(&format!("{tag}: {s}"));
        let root_before = sandbox.root_state();
        let install = install(h, opts, &work, &scripts, &sandbox, &mut say);
        // Under --root, what the installs changed in the root (HOME/TMPDIR of
        // the entry check included) is reported on both rows.
        let install_outside: Vec<String> = match (root_before, sandbox.root_state()) {
            (Some(b), Some(a)) => sandbox::changed(&b, &a)
                .into_iter()
                .map(|c| format!("install: {c}"))
                .collect(),
            _ => Vec::new(),
        };
        let (entry, fresh, reused) = match install {
            Ok(done) => done,
            Err(e) => {
                say(&format!("install failed: {e}"));
                rows.extend(MODES.map(|mode| Row::not_run(h, mode, e.clone())));
                continue;
            }
        };
        let _ = std::fs::create_dir_all(work.join(h.name()));
        let server = match RunningServer::start(ServerConfig {
            log: Some(work.join(h.name()).join("server.log")),
            ..ServerConfig::default()
        }) {
            Ok(s) => s,
            Err(e) => {
                let e = format!("fake model server: {e}");
                say(&e);
                rows.extend(MODES.map(|mode| Row::not_run(h, mode, e.clone())));
                continue;
            }
        };
        for mode in MODES {
            say(&format!("{} rollout", mode.name()));
            let run = Run {
                opts,
                work: &work,
                scripts: &scripts,
                sandbox: &sandbox,
            };
            let row = rollout(h, mode, &entry, &server, &run);
            let failed: Vec<&str> = row
                .checks
                .iter()
                .filter(|c| !c.ok)
                .map(|c| c.name)
                .collect();
            say(&format!(
                "{} rollout: {:.1} s, {}",
                mode.name(),
                row.rollout.unwrap_or_default().as_secs_f64(),
                if failed.is_empty() {
                    "all checks pass".to_owned()
                } else {
                    format!("FAILED: {}", failed.join(", "))
                }
            ));
            let mut outside = install_outside.clone();
            outside.extend(row.outside.iter().cloned());
            rows.push(Row {
                install: Ok((fresh, reused)),
                outside,
                ..row
            });
        }
    }
    Ok(rows)
}

/// Run the installer twice (fresh, then reused); the entry path and both
/// wall times.
fn install(
    h: &Subject,
    opts: &Options,
    work: &Path,
    scripts: &Scripts,
    sandbox: &Sandbox,
    say: &mut dyn FnMut(&str),
) -> Result<(String, Duration, Duration), String> {
    let text = h.installer_text()?;
    let spec = crate::installer::InstallerSpec::from_toml(text).map_err(|e| e.to_string())?;
    let system = sandbox.system();
    let needed = artifacts::needed(&spec, system);
    if needed.is_empty() {
        return Err(format!(
            "{} has no artifact for {} with {}",
            h.name(),
            std::env::consts::ARCH,
            libc_name(system)
        ));
    }
    artifacts::ensure(&needed, &opts.artifacts, work, say)?;
    let prefix = work.join("prefix");
    let installed = prefix.join(format!("{}-{}", spec.name, spec.version));
    if installed.exists() {
        std::fs::remove_dir_all(&installed)
            .map_err(|e| format!("removing the previous {}: {e}", installed.display()))?;
    }
    let script = h.installer_script(&scripts.dir)?;
    let mut entry = String::new();
    let mut times = Vec::new();
    for round in ["fresh", "reused"] {
        say(&format!("install ({round})"));
        let start = Instant::now();
        let argv = [
            opts.bash.clone(),
            "--noprofile".into(),
            "--norc".into(),
            script.display().to_string(),
            "--prefix".into(),
            prefix.display().to_string(),
            "--source-dir".into(),
            std::fs::canonicalize(&opts.artifacts)
                .unwrap_or_else(|_| opts.artifacts.clone())
                .display()
                .to_string(),
        ];
        let out = sandbox
            .command(&argv, &work.join("install-left.txt"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running {}: {e}", script.display()))?;
        times.push(start.elapsed());
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "installer ({round}) exit {:?}: {}",
                out.status.code(),
                err.lines().last().unwrap_or("")
            ));
        }
        let last = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or("")
            .to_owned();
        if round == "reused" && last != entry {
            return Err(format!("reused install printed {last:?}, fresh {entry:?}"));
        }
        entry = last;
    }
    Ok((entry, times[0], times[1]))
}

/// `glibc` or `musl`: the libc the installers will see in `system`.
fn libc_name(system: &Path) -> &'static str {
    if crate::musl::system_is_musl(system) {
        "musl"
    } else {
        "glibc"
    }
}

/// Marker files of the task's HOME: what a task image would have.
const TASK_HOME: &[(&str, &str)] = &[
    (".bashrc", "# the task's own bashrc\n"),
    (".profile", "# the task's own profile\n"),
    (".config/marker", "task config\n"),
    (".cache/marker", "task cache\n"),
    (".local/share/marker", "task data\n"),
    (".local/state/marker", "task state\n"),
    (".npmrc", "registry=http://127.0.0.1:9/\n"),
];

fn top_tmp(tmp: &Path) -> std::collections::BTreeSet<String> {
    std::fs::read_dir(tmp)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Names other programs on a shared host leave in /tmp while a rollout
/// runs: Rust `tempfile` dirs (`.tmpXXXXXX`), gcc's (`ccXXXXXX.*`) and
/// mktemp's (`tmp.XXXXXXXXXX`). Host mode only; a root's /tmp is the run's.
fn foreign_scratch(name: &str) -> bool {
    let alnum = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_alphanumeric());
    if let Some(rest) = name.strip_prefix(".tmp") {
        return alnum(rest, 6);
    }
    if let Some(rest) = name.strip_prefix("tmp.") {
        return alnum(rest, 10);
    }
    if let Some(rest) = name.strip_prefix("cc") {
        return rest.split_once('.').is_some_and(|(a, _)| alnum(a, 6));
    }
    false
}

fn fresh_token(h: &Subject, mode: Mode) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "smoke-{}-{}-{:x}-{}",
        h.name(),
        mode.name(),
        nanos,
        std::process::id()
    )
}

/// The API key's value in every rollout: a throwaway that no file may hold.
const KEY_VALUE: &str = "sk-shforge-smoke-not-a-real-key";

/// The kind of tool the fake server has the CLI use: the shell where the
/// write tool cannot reach the deliverable (OpenClaw confines it to
/// `--cwd`, Codex has none, Gemini CLI's is confined to the workspace);
/// the write tool for every other one, an adapter's spec included (the
/// server takes the shell when no write tool is declared).
fn prefer(h: &Subject) -> &'static str {
    match h.shipped() {
        Some(Harness::OpenClaw | Harness::Codex | Harness::GeminiCli | Harness::Stirrup) => "shell",
        _ => "write",
    }
}

/// The variable the smoke puts the key in: one of its own when the CLI
/// reads a fixed variable for the default API (`[key] reads`: Claude Code,
/// and Qwen Code and Cline per API), so the session's copy into the
/// right one is part of every rollout; else the API's default.
fn key_var(h: &Subject) -> Option<String> {
    let def = h.def();
    def.key_reads
        .for_api(def.apis()[0])
        .map(|_| "SHFORGE_SMOKE_API_KEY".to_owned())
}

/// In a root: the Python-less path, bootstrap.sh under the image's own
/// /bin/sh (dash on Debian, busybox in the musl root), provides bash (if
/// missing) and refuses an overlapping workdir and session dir.
fn bootstrap(
    sandbox: &Sandbox,
    scripts: &Path,
    workdir: &Path,
    session: &Path,
    left: &Path,
) -> Result<(), String> {
    let argv = [
        "/bin/sh".to_owned(),
        scripts.join("bootstrap.sh").display().to_string(),
        "--need".into(),
        "bash".into(),
        "--workdir".into(),
        workdir.display().to_string(),
        "--session-dir".into(),
        session.display().to_string(),
    ];
    match sandbox.command(&argv, left).stdin(Stdio::null()).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr).trim().to_owned();
            Err(format!(
                "bootstrap.sh under /bin/sh: exit {:?}: {err}",
                o.status.code()
            ))
        }
        Err(e) => Err(format!("unshare: {e}")),
    }
}

/// What every rollout of a run shares.
struct Run<'a> {
    opts: &'a Options,
    work: &'a Path,
    scripts: &'a Scripts,
    sandbox: &'a Sandbox,
}

fn rollout(h: &Subject, mode: Mode, entry: &str, server: &RunningServer, run: &Run<'_>) -> Row {
    let Run {
        opts,
        work,
        scripts,
        sandbox,
    } = *run;
    let mut row = Row {
        harness: h.name().to_owned(),
        mode: mode.name(),
        install: Ok(Default::default()),
        rollout: None,
        checks: Vec::new(),
        outside: Vec::new(),
    };
    let base = work.join(h.name()).join(mode.name());
    let session = base.join("session");
    let task_home = base.join("task-home");
    let workdir = base.join("workdir");
    let out_dir = base.join("out");
    if let Err(e) = lay_out(&base, &[&workdir, &out_dir], &task_home) {
        row.checks
            .push(Check::new(checks::NAMES[0], false, format!("setup: {e}")));
        return row;
    }
    let token = fresh_token(h, mode);
    let target = out_dir.join("deliverable.txt");
    let prompt = prompt_for(&token, &target, prefer(h));
    let spec = SessionSpec {
        harness: h.harness.clone(),
        session_dir: session.display().to_string(),
        workdir: workdir.display().to_string(),
        entry: entry.to_owned(),
        base_url: server.base_url(),
        model: "fake-model".into(),
        api: None,
        api_key_env: key_var(h),
        keep_env: Vec::new(),
        mode,
        prompt,
    };
    let built = match spec.build() {
        Ok(s) => s,
        Err(e) => {
            row.checks
                .push(Check::new(checks::NAMES[0], false, format!("session: {e}")));
            return row;
        }
    };
    if let Err(e) = built.write_into(&session) {
        row.checks
            .push(Check::new(checks::NAMES[0], false, format!("session: {e}")));
        return row;
    }
    let marker = format!("{token}-marker");
    let receipt = base.join("receipt.json");
    let sup = SupervisorOptions::new(receipt.display().to_string())
        .deadline(DEADLINE)
        .marker(marker.clone())
        .bash(opts.bash.clone());
    let command = [
        opts.bash.clone(),
        "--noprofile".into(),
        "--norc".into(),
        scripts.runner.display().to_string(),
        session.join("params.sh").display().to_string(),
    ];
    let argv = supervised_launch(&scripts.supervisor.display().to_string(), &sup, &command)
        .expect("the launch is built from checked paths");
    let left = base.join("left.txt");
    if sandbox.in_root()
        && let Err(why) = bootstrap(sandbox, &scripts.dir, &workdir, &session, &left)
    {
        row.checks.push(Check::new(checks::NAMES[0], false, why));
        return row;
    }
    let home_before = checks::tree(&task_home);
    let tmp = sandbox.tmp();
    let tmp_before = top_tmp(&tmp);
    let root_before = sandbox.root_state();
    let start = Instant::now();
    let mut cmd = sandbox.command(&argv, &left);
    cmd.env("HOME", &task_home)
        .env(built.api_key_env.as_str(), KEY_VALUE)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_STATE_HOME")
        .current_dir(&workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let status = cmd.status().map(|s| s.code());
    row.rollout = Some(start.elapsed());
    let tmp_after = top_tmp(&tmp);
    let root_after = sandbox.root_state();
    let status = status.unwrap_or(None);
    row.checks.push(checks::exit_zero(status));
    row.checks.push(checks::deliverable(&target, &token));
    row.checks.push(checks::receipt(&receipt));
    let server_log = work.join(h.name()).join("server.log");
    row.checks
        .extend(output_checks(h, mode, &session, &spec.prompt, &server_log));
    row.checks.push(nothing_left(sandbox, &left, &marker));
    row.checks.push(checks::home_untouched(
        &home_before,
        &checks::tree(&task_home),
    ));
    row.checks.push(checks::key_not_written(&base, KEY_VALUE));
    row.checks.push(checks::captured(&built.capture));
    // Entries still there once the checks are done: a compiler's or another
    // program's short-lived temp files on a shared machine are gone by then.
    row.outside = match (root_before, root_after) {
        // In a root: every path of the root created or changed, but for the
        // bind-mounted work and artifacts dirs and /proc, /dev.
        (Some(before), Some(after)) => sandbox::changed(&before, &after),
        _ => new_in_tmp(&tmp, &tmp_before, &tmp_after),
    };
    row
}

/// A fresh rollout's directories: `base` emptied, `dirs` made, the task's
/// home filled with [`TASK_HOME`].
fn lay_out(base: &Path, dirs: &[&Path], task_home: &Path) -> std::io::Result<()> {
    if base.exists() {
        std::fs::remove_dir_all(base)?;
    }
    for d in dirs {
        std::fs::create_dir_all(d)?;
    }
    for (rel, text) in TASK_HOME {
        let p = task_home.join(rel);
        crate::files::write_atomic(&p, text.as_bytes(), crate::files::FileMode::Data)
            .map_err(crate::files::FileError::into_cause)?;
    }
    Ok(())
}

/// The task: write `token` into `target`, with the fake server's
/// directives.
fn prompt_for(token: &str, target: &Path, prefer: &str) -> String {
    format!(
        "Write the token below into the target file, exactly, with no newline.\n\
         shforge-token={token} shforge-target={} shforge-prefer={prefer}\n",
        target.display()
    )
}

/// The CLI's output is its events (in the file or on stdout), and the
/// model got the prompt exactly.
fn output_checks(
    h: &Subject,
    mode: Mode,
    session: &Path,
    prompt: &str,
    server_log: &Path,
) -> [Check; 2] {
    let (file, json) = (
        mode == Mode::Events,
        h.def().output() == crate::harness::Output::Json,
    );
    [
        checks::events(
            &session.join(if file { "events.log" } else { "stdout.log" }),
            file,
            json,
        ),
        checks::prompt_exact(&session.join("prompt.txt"), prompt, server_log),
    ]
}

/// No process of the rollout is left: none carries its marker, and in a
/// root none was left in its PID namespace (listed in `left`).
fn nothing_left(sandbox: &Sandbox, left: &Path, marker: &str) -> Check {
    let alive = checks::no_process_left(MARKER_VAR, marker);
    if sandbox.in_root() {
        let listed = std::fs::read_to_string(left).unwrap_or_else(|e| e.to_string());
        if !listed.trim().is_empty() {
            return Check::new(
                alive.name,
                false,
                format!(
                    "left in the PID namespace: {}",
                    listed.trim().replace('\n', "; ")
                ),
            );
        }
    }
    alive
}

/// The entries of `/tmp` made during the rollout and still there (but
/// another program's scratch).
fn new_in_tmp(
    tmp: &Path,
    before: &std::collections::BTreeSet<String>,
    after: &std::collections::BTreeSet<String>,
) -> Vec<String> {
    after
        .difference(before)
        .filter(|n| tmp.join(n).exists() && !foreign_scratch(n))
        .map(|n| format!("/tmp/{n}"))
        .collect()
}
