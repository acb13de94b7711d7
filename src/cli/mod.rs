//! The `shforge` command line (the `cli` feature): its arguments here,
//! each command in `run.rs`. `src/main.rs` only calls [`main`], so the
//! binary reaches nothing the library keeps private, and an error becomes
//! an exit code in one place (`exit_code`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::dialect::Dialect;
use crate::files::FileError;
use crate::generate::GenerateError;
use crate::model_server::Prefer;

mod run;

use run::{run, seconds};

/// Generate the portable shell runtime for coding-agent harnesses.
#[derive(Parser)]
#[command(name = "shforge", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write every script and manifest.json.
    Generate {
        /// Output directory.
        #[arg(long, default_value = "generated")]
        out: PathBuf,
        /// Also write an installer for each *.toml in DIR (an adapter's specs).
        #[arg(long = "spec", value_name = "DIR")]
        specs: Vec<PathBuf>,
    },
    /// Exit 1, with a diff of the stale files, when DIR differs from a fresh generation.
    Check {
        /// Directory to check.
        #[arg(long, default_value = "generated")]
        out: PathBuf,
        /// Also check an installer for each *.toml in DIR (an adapter's specs).
        #[arg(long = "spec", value_name = "DIR")]
        specs: Vec<PathBuf>,
    },
    /// Print the catalog: name, dialect, purpose.
    List,
    /// Run the dialect guard on scripts.
    Lint {
        /// posix or bash (bash = bash 3.2 and later).
        #[arg(long)]
        dialect: Dialect,
        /// Scripts to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run the template lint on askama shell templates (every file under each DIR).
    LintTemplates {
        /// Template directories.
        #[arg(default_value = "templates")]
        dirs: Vec<PathBuf>,
    },
    /// Turn a JSON object of strings and string arrays into a parameter file.
    Params {
        /// JSON file (at most 256 MiB), or - for standard input (the default).
        file: Option<PathBuf>,
    },
    /// Generate an installer from an adapter's TOML spec.
    Installer {
        /// The spec (TOML).
        #[arg(long)]
        spec: PathBuf,
        /// Write the script here (atomically) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Capture a harness's session data as one JSON document.
    ///
    /// Exit 1: no session data; exit 2: unreadable or foreign input.
    Snapshot {
        /// opencode, kilo, claude-code, pi or codex.
        kind: crate::snapshot::Kind,
        /// The SQLite file (opencode, kilo); FILE-wal beside it is read too.
        #[arg(long, required_unless_present = "dir", conflicts_with = "dir")]
        db: Option<PathBuf>,
        /// The harness's data directory (claude-code, pi, codex).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Write the document here (atomically) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// json (shforge's snapshot document) or atif (an ATIF trajectory).
        #[arg(long, value_enum, default_value_t = SnapshotFormat::Json)]
        format: SnapshotFormat,
    },
    /// Why a rollout ended: one JSON object (status, cause, evidence).
    ///
    /// Exit 2: an unreadable or foreign receipt, or an unreadable input.
    Outcome {
        /// The supervisor's receipt.
        #[arg(long)]
        receipt: PathBuf,
        /// A shipped harness's name (`shforge list`).
        #[arg(long, required_unless_present = "spec")]
        harness: Option<crate::harness::Harness>,
        /// An adapter's harness spec (TOML) instead of --harness: its
        /// `[outcome]` table says what is read beyond the outputs.
        #[arg(long, conflicts_with = "harness")]
        spec: Option<PathBuf>,
        /// What capture.json names: the session dir or DB (host copy).
        #[arg(long)]
        capture: Option<PathBuf>,
        /// The runner's events file.
        #[arg(long)]
        events: Option<PathBuf>,
        /// The CLI's stderr file.
        #[arg(long)]
        stderr: Option<PathBuf>,
        /// The CLI's stdout file (direct mode).
        #[arg(long)]
        stdout: Option<PathBuf>,
    },
    /// Serve a scripted fake model (OpenAI chat/Responses, Anthropic) on 127.0.0.1.
    FakeModelServer {
        /// TCP port; 0 picks a free one.
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Append one JSON line per request to FILE.
        #[arg(long)]
        log: Option<PathBuf>,
        /// Token to write when the conversation names none.
        #[arg(long)]
        token: Option<String>,
        /// Target file when the conversation names none.
        #[arg(long)]
        target: Option<String>,
        /// write or shell: which kind of tool to use when both are offered.
        #[arg(long)]
        prefer: Option<Prefer>,
        /// Seconds a request may take to arrive (and a connection may idle).
        #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86400))]
        timeout: u64,
    },
    /// Install and run real harness CLIs against the fake model server; print a table.
    ///
    /// Exit 1: a check failed; exit 2: unknown harness, bad spec file or bad --root.
    Smoke {
        /// Harnesses to run (default: every shipped harness, unless --spec is given).
        names: Vec<String>,
        /// Also run an adapter's harness spec (the format of harnesses/*.toml;
        /// its `installer` relative to FILE) (repeatable).
        #[arg(long, value_name = "FILE")]
        spec: Vec<PathBuf>,
        /// The pinned artifacts (missing ones are fetched into it).
        #[arg(long, default_value = "/var/cache/shforge/artifacts")]
        artifacts: PathBuf,
        /// Scratch dir (default: $TMPDIR/shforge-smoke).
        #[arg(long)]
        work: Option<PathBuf>,
        /// The bash that runs the installer, supervisor and runner.
        #[arg(long, default_value = "bash")]
        bash: String,
        /// Run inside this root dir (chroot + PID namespace; root only), after bootstrap.sh under its /bin/sh.
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Fetch and verify installer artifacts (sources as the specs say); print a table.
    ///
    /// Exit 1: a fetch or verification failed; exit 2: unknown harness or bad DIR.
    Fetch {
        /// Harnesses whose artifacts to fetch (default: every installer spec, unless --spec is given);
        /// `uv`: only the uv the Python bundles are built with (printed; installed into DIR when absent).
        names: Vec<String>,
        /// The artifacts dir (created when missing; must not be a file, FIFO or link).
        #[arg(long, value_name = "DIR")]
        into: PathBuf,
        /// Every row for this machine's arch, not only its libc's: the
        /// glibc, musl and private-glibc rows (what any image of this arch
        /// needs). Other arches' rows only with --arch or --every-arch.
        #[arg(long)]
        all: bool,
        /// Like --all, for ARCH (a `uname -m` value; amd64/arm64 are
        /// folded) instead of this machine's arch (repeatable).
        #[arg(long, value_name = "ARCH")]
        arch: Vec<String>,
        /// Every row of every spec, for every arch and libc.
        #[arg(long)]
        every_arch: bool,
        /// Also fetch the artifacts of this installer spec file (repeatable).
        #[arg(long, value_name = "FILE")]
        spec: Vec<PathBuf>,
    },
    /// Move a shipped harness's installer spec to another release (npm rows).
    ///
    /// Exit 2: bad argument or a row pin cannot derive (a bundle); 3: no such
    /// version or platform package on the registry; 4: the package's layout
    /// changed; 1: a fetch, tool or write failed. Nothing is written on error.
    Pin {
        /// NAME@VERSION, e.g. claude-code@2.1.331 (an exact release).
        target: String,
        /// Write DIR/installers/NAME.toml and DIR/NAME.toml (the harness spec); without
        /// it, replace installers/NAME.toml of the checkout in the current dir.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Only this arch's rows (x86_64, aarch64; amd64/arm64 folded)
        /// (repeatable; default: every arch the spec covers).
        #[arg(long, value_name = "ARCH")]
        arch: Vec<String>,
        /// Where the new artifacts go (the cache `shforge smoke` reads).
        #[arg(long, default_value = "/var/cache/shforge/artifacts")]
        artifacts: PathBuf,
        /// Derive from this installer spec file instead of the shipped one.
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
    },
    /// Write a harness session dir (params.sh, config, isolated dirs, capture.json).
    Harness(Box<HarnessArgs>),
    /// Print the supervised launch argv of COMMAND as a JSON array.
    Launch(Box<LaunchArgs>),
    /// Print the argv that ends a receipt's preserved services as a JSON array.
    EndServicesArgv {
        /// process_supervisor.sh, as a path inside the sandbox.
        #[arg(long)]
        supervisor: String,
        /// The receipt, as a path inside the sandbox.
        #[arg(long)]
        receipt: String,
        /// Seconds between TERM and KILL (default: the script's 5).
        #[arg(long, value_parser = seconds)]
        grace: Option<std::time::Duration>,
        /// The bash to run the supervisor with.
        #[arg(long, default_value = "bash")]
        bash: String,
    },
    /// Print a cleanup receipt validated and normalised as JSON (exit 2 when it is not one).
    Receipt {
        /// The receipt file (at most 16 MiB).
        file: PathBuf,
    },
}

/// `shforge launch --supervisor PATH --receipt R ... -- COMMAND...`
#[derive(clap::Args)]
struct LaunchArgs {
    /// process_supervisor.sh, as a path inside the sandbox.
    #[arg(long)]
    supervisor: String,
    /// Where the supervisor writes its receipt (inside the sandbox).
    #[arg(long)]
    receipt: String,
    /// Seconds from launch to the stop (fixed point, rounded down to 0.01).
    #[arg(long, value_parser = seconds)]
    deadline: Option<std::time::Duration>,
    /// Seconds between TERM and KILL (default: the script's 5).
    #[arg(long, value_parser = seconds)]
    grace: Option<std::time::Duration>,
    /// Marker token (default: the supervisor makes a fresh one).
    #[arg(long)]
    marker: Option<String>,
    /// A writable cgroup v2 directory (absolute), or none for /proc scanning only.
    #[arg(long)]
    cgroup: Option<String>,
    /// pids.max of the harness's cgroup (needs --cgroup DIR).
    #[arg(long)]
    max_procs: Option<u32>,
    /// The bash to run the supervisor with.
    #[arg(long, default_value = "bash")]
    bash: String,
    /// The command to supervise.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

/// `shforge harness NAME ...`
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("prompt_source").required(true).args(["prompt", "prompt_file"])))]
struct HarnessArgs {
    /// claude-code, opencode, kilo, pi, openclaw or codex.
    #[arg(required_unless_present = "spec")]
    name: Option<String>,
    /// An adapter's harness spec (TOML, the format of harnesses/*.toml) instead of NAME.
    #[arg(long, conflicts_with = "name")]
    spec: Option<PathBuf>,
    /// Host directory to write the session into (must not exist, or be empty).
    #[arg(long)]
    out: PathBuf,
    /// The session dir inside the sandbox (absolute): where DIR will be placed.
    #[arg(long)]
    session_dir: String,
    /// The task's workdir inside the sandbox (absolute): the CLI's cwd.
    #[arg(long)]
    workdir: String,
    /// The installed entry program (the installer's last line).
    #[arg(long)]
    entry: String,
    /// The model server's root URL (a trailing /v1 is dropped).
    #[arg(long)]
    base_url: String,
    /// The model ID.
    #[arg(long)]
    model: String,
    /// chat, responses or anthropic (default: the harness's first).
    #[arg(long)]
    api: Option<String>,
    /// The variable that carries the API key inside the sandbox.
    #[arg(long)]
    api_key_env: Option<String>,
    /// Keep this variable of the caller's environment for the CLI although
    /// its runtime's table removes it (a task's LD_LIBRARY_PATH, PYTHONPATH).
    #[arg(long = "keep-env", value_name = "NAME")]
    keep_env: Vec<String>,
    /// direct or events.
    #[arg(long, default_value = "events")]
    mode: String,
    /// The prompt text.
    #[arg(long)]
    prompt: Option<String>,
    /// A file holding the prompt (UTF-8, at most 64 MiB), or - for standard input.
    #[arg(long)]
    prompt_file: Option<PathBuf>,
}

/// Bad input from the user: printed as one line, exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Usage(String);

/// Runs the `shforge` command on this process's arguments and returns its
/// exit status: 0 success; 1 a failed write, run or check (a stale
/// `generated/`, a finding); 2 the user's input (usage errors, refused or
/// oversized files). Errors are printed as one line on standard error,
/// `shforge: …`.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    match run(cli.command) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("shforge: {}", message(&err));
            ExitCode::from(exit_code(&err))
        }
    }
}

/// The one place an error becomes an exit code: 2 for the user's input
/// ([`Usage`], a refused or oversized file), 1 for a write or run that
/// failed.
fn exit_code(err: &anyhow::Error) -> u8 {
    if err.is::<Usage>() {
        2
    } else if let Some(e) = err.downcast_ref::<FileError>() {
        e.exit_code()
    } else if let Some(e) = err.downcast_ref::<GenerateError>() {
        e.exit_code()
    } else if let Some(e) = err.downcast_ref::<crate::smoke::SmokeError>() {
        e.exit_code()
    } else if let Some(e) = err.downcast_ref::<crate::harness::HarnessError>() {
        e.exit_code()
    } else if let Some(e) = err.downcast_ref::<crate::pin::PinError>() {
        e.exit_code()
    } else {
        1
    }
}

/// The error and its causes on one line, each said once: an error whose
/// own message already ends with its cause (thiserror's `{source}`) would
/// otherwise print the cause twice ("cannot write X: denied: denied").
fn message(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// clap's own usage errors as one line, like every other usage error (exit
/// 2); help and --version print as usual.
fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit()
    }
    // The first paragraph says what is wrong; the rest is usage and tips.
    let text = e.render().to_string();
    let first = text.split("\n\n").next().unwrap_or_default();
    let what = first.split_whitespace().collect::<Vec<_>>().join(" ");
    let what = what.strip_prefix("error: ").unwrap_or(&what);
    eprintln!("shforge: {what} (see shforge --help)");
    ExitCode::from(2)
}

/// What `shforge snapshot` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SnapshotFormat {
    /// shforge's snapshot document.
    Json,
    /// An Agent Trajectory Interchange Format trajectory.
    Atif,
}
