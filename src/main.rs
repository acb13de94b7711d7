//! The `shforge` command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use shforge::catalog::catalog;
use shforge::dialect::{self, Dialect};
use shforge::files::{self, Bound, FileError};
use shforge::generate::{self, GenerateError};
use shforge::model_server::{self, Directives, Prefer, ServerConfig};
use shforge::params;

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
        kind: shforge::snapshot::Kind,
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
        /// claude-code, opencode, kilo, pi, openclaw or codex.
        #[arg(long)]
        harness: shforge::harness::Harness,
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
        /// Harnesses whose artifacts to fetch (default: every installer spec, unless --spec is given).
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

fn main() -> ExitCode {
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
    } else if let Some(e) = err.downcast_ref::<shforge::smoke::SmokeError>() {
        e.exit_code()
    } else if let Some(e) = err.downcast_ref::<shforge::harness::HarnessError>() {
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

fn run(command: Command) -> Result<u8> {
    match command {
        Command::Generate { out, specs } => generate_into(&out, &specs),
        Command::Check { out, specs } => check(&out, &specs),
        Command::List => {
            for s in catalog()? {
                println!("{}\t{}\t{}", s.path(), s.dialect(), s.purpose());
            }
            Ok(0)
        }
        Command::Lint { dialect, files } => lint(dialect, &files),
        Command::LintTemplates { dirs } => lint_templates(&dirs),
        Command::Params { file } => {
            let file = file.unwrap_or_else(|| PathBuf::from("-"));
            let json = files::read_text_or_stdin(&file, Bound::PARAMS)?;
            match params::shell_assignments(&json) {
                Ok(raw) => {
                    print!("{raw}");
                    Ok(0)
                }
                Err(e) => Err(Usage(e.to_string()).into()),
            }
        }
        Command::Installer { spec, out } => installer(&spec, out.as_deref()),
        Command::Snapshot {
            kind,
            db,
            dir,
            out,
            format,
        } => snapshot(kind, db.as_deref(), dir.as_deref(), out.as_deref(), format),
        Command::Outcome {
            receipt,
            harness,
            capture,
            events,
            stderr,
            stdout,
        } => outcome(shforge::outcome::Inputs {
            receipt,
            harness,
            capture,
            events,
            stderr,
            stdout,
        }),
        Command::FakeModelServer {
            port,
            log,
            token,
            target,
            prefer,
            timeout,
        } => {
            let defaults = Directives {
                token,
                target,
                prefer,
            };
            match model_server::cli::serve(ServerConfig {
                port,
                log,
                defaults,
                timeout: std::time::Duration::from_secs(timeout),
                ..ServerConfig::default()
            })? {}
        }
        Command::Harness(args) => harness(*args),
        Command::Launch(args) => launch(*args),
        Command::EndServicesArgv {
            supervisor,
            receipt,
            grace,
            bash,
        } => {
            let argv = shforge::host::end_services_launch(&supervisor, &bash, &receipt, grace)
                .map_err(|e| Usage(e.to_string()))?;
            print_json(&argv)
        }
        Command::Receipt { file } => {
            use shforge::host::ReceiptError;
            // The I/O error names the file itself; a parse error does not.
            let receipt = shforge::host::CleanupReceipt::from_file(&file).map_err(|e| match e {
                ReceiptError::Io { .. } => Usage(e.to_string()),
                ReceiptError::Json(_) => Usage(format!("{}: {e}", file.display())),
            })?;
            print_json(&receipt)
        }
        Command::Fetch {
            names,
            into,
            all,
            arch,
            every_arch,
            spec,
        } => {
            let rows = shforge::fetch::Rows::new(all, &arch, every_arch).map_err(Usage)?;
            fetch(&names, &spec, &into, &rows)
        }
        Command::Smoke {
            names,
            spec,
            artifacts,
            work,
            bash,
            root,
        } => smoke(
            names,
            &spec,
            shforge::smoke::Options {
                harnesses: Vec::new(),
                artifacts,
                work: work.unwrap_or_else(|| std::env::temp_dir().join("shforge-smoke")),
                bash,
                root,
            },
        ),
    }
}

fn launch(a: LaunchArgs) -> Result<u8> {
    use shforge::host::{CgroupChoice, SupervisorOptions};
    let opts = SupervisorOptions {
        receipt: a.receipt,
        deadline: a.deadline,
        grace: a.grace,
        marker: a.marker,
        bash: a.bash,
        cgroup: a.cgroup.map(|c| match c.as_str() {
            "none" => CgroupChoice::Off,
            _ => CgroupChoice::Dir(c),
        }),
        max_procs: a.max_procs,
    };
    let argv = shforge::host::supervised_launch(&a.supervisor, &opts, &a.command)
        .map_err(|e| Usage(e.to_string()))?;
    print_json(&argv)
}

/// One JSON document and a newline on standard output.
fn print_json<T: serde::Serialize>(value: &T) -> Result<u8> {
    let mut text = serde_json::to_vec(value)?;
    text.push(b'\n');
    write_stdout(&text)?;
    Ok(0)
}

/// All of `bytes` on standard output, flushed; a failure (a closed pipe, a
/// full disk) is one line, exit 2.
fn write_stdout(bytes: &[u8]) -> Result<(), Usage> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(|e| Usage(format!("cannot write standard output: {e}")))
}

/// A duration in seconds as the supervisor takes it: a non-negative decimal
/// (`1.5`, `30`), at most a day's worth of years so the fixed point fits.
fn seconds(text: &str) -> Result<std::time::Duration, String> {
    let bad = || format!("{text:?} is not a number of seconds (e.g. 1.5)");
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad());
    }
    let secs: f64 = text.parse().map_err(|_| bad())?;
    std::time::Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| d.as_secs() <= 100 * 365 * 86_400)
        .ok_or_else(bad)
}

/// `shforge smoke`: the named harnesses (every shipped one when neither a
/// name nor `--spec` is given), then each adapter's spec file; every spec
/// is read and checked before anything is installed.
fn smoke(names: Vec<String>, specs: &[PathBuf], mut opts: shforge::smoke::Options) -> Result<u8> {
    use shforge::harness::Harness;
    use shforge::smoke::Subject;
    let shipped: Vec<Harness> = if names.is_empty() && specs.is_empty() {
        shforge::smoke::DEFAULT.to_vec()
    } else {
        names
            .iter()
            .map(|n| n.parse::<Harness>().map_err(|e| Usage(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?
    };
    opts.harnesses = shipped.into_iter().map(Subject::from).collect();
    for file in specs {
        let subject = Subject::from_spec_file(file).map_err(Usage)?;
        if opts.harnesses.iter().any(|s| s.name() == subject.name()) {
            return Err(Usage(format!(
                "{}: harness spec: name: {:?} is already in this run (its work dir would be shared)",
                file.display(),
                subject.name()
            ))
            .into());
        }
        opts.harnesses.push(subject);
    }
    let start = std::time::Instant::now();
    let rows = shforge::smoke::run(&opts, &mut |line| eprintln!("smoke: {line}"))?;
    print!("{}", shforge::smoke::table::render(&rows));
    let passed = rows.iter().all(|r| r.passed());
    eprintln!(
        "smoke: {} in {:.1} s",
        if passed { "all passed" } else { "FAILED" },
        start.elapsed().as_secs_f64()
    );
    Ok(if passed { 0 } else { 1 })
}

fn fetch(
    names: &[String],
    spec_files: &[PathBuf],
    into: &Path,
    rows: &shforge::fetch::Rows,
) -> Result<u8> {
    use shforge::installer::{HARNESS_SPECS, InstallerSpec};
    let known = || {
        HARNESS_SPECS
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen: Vec<&str> = if names.is_empty() && !spec_files.is_empty() {
        Vec::new()
    } else if names.is_empty() {
        HARNESS_SPECS.iter().map(|(n, _)| *n).collect()
    } else {
        names.iter().map(String::as_str).collect()
    };
    let mut wanted = Vec::new();
    let mut pool = Vec::new();
    let pick = |spec: &InstallerSpec| rows.pick(spec);
    for file in spec_files {
        let text = files::read_text(file, Bound::INSTALLER_SPEC)?;
        let spec = InstallerSpec::from_toml(&text)
            .map_err(|e| Usage(format!("{}: {e}", file.display())))?;
        pool.extend(shforge::fetch::all(&spec));
        wanted.extend(pick(&spec));
    }
    for (n, text) in HARNESS_SPECS {
        let spec = InstallerSpec::from_toml(text).map_err(|e| Usage(format!("{n}: {e}")))?;
        pool.extend(shforge::fetch::all(&spec));
    }
    for name in chosen {
        let text = HARNESS_SPECS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| Usage(format!("unknown harness {name:?} (known: {})", known())))?;
        let spec = InstallerSpec::from_toml(text).map_err(|e| Usage(format!("{name}: {e}")))?;
        wanted.extend(pick(&spec));
    }
    let rows = shforge::fetch::fetch(&wanted, &pool, into, &mut |line| eprintln!("fetch: {line}"))
        .map_err(|e| Usage(e.to_string()))?;
    print!("{}", shforge::fetch::render(&rows));
    let ok = rows
        .iter()
        .all(|r| !matches!(r.status, shforge::fetch::Status::Failed(_)));
    Ok(if ok { 0 } else { 1 })
}

fn harness(a: HarnessArgs) -> Result<u8> {
    use shforge::harness::SessionSpec;
    let prompt = match (a.prompt, a.prompt_file) {
        (Some(p), _) => p,
        (None, Some(file)) => files::read_text_or_stdin(&file, Bound::PROMPT)?,
        (None, None) => unreachable!("clap requires one of --prompt and --prompt-file"),
    };
    let harness = match (&a.name, &a.spec) {
        // An adapter's spec: a bad file or spec is exit 2 naming it.
        (_, Some(file)) => shforge::harness::read_spec_file(file)
            .map_err(Usage)?
            .into(),
        (Some(name), None) => name.parse::<shforge::harness::Harness>()?.into(),
        (None, None) => unreachable!("clap requires NAME or --spec"),
    };
    let spec = SessionSpec {
        harness,
        session_dir: a.session_dir,
        workdir: a.workdir,
        entry: a.entry,
        base_url: a.base_url,
        model: a.model,
        api: a.api.as_deref().map(str::parse).transpose()?,
        api_key_env: a.api_key_env,
        mode: a.mode.parse()?,
        prompt,
    };
    let session = spec.build()?;
    session.write_into(&a.out)?;
    Ok(0)
}

/// `shforge generate`: every script and the manifest into `out`.
fn generate_into(out: &Path, specs: &[PathBuf]) -> Result<u8> {
    refuse_stale_binary(out, "generate")?;
    let outputs = render(specs)?;
    generate::write_dir(out, &outputs)?;
    eprintln!(
        "shforge: wrote {} scripts and {} to {}",
        outputs.len(),
        generate::MANIFEST,
        out.display()
    );
    Ok(0)
}

/// `shforge check`: exit 1, with the report, when `out` is stale.
fn check(out: &Path, specs: &[PathBuf]) -> Result<u8> {
    refuse_stale_binary(out, "check")?;
    let outputs = render(specs)?;
    let report = generate::check_dir(out, &outputs)?;
    print!("{}", report.render());
    match report.fix() {
        None => Ok(0),
        Some(fix) => {
            eprintln!("shforge: {} is out of date: {fix}", out.display());
            Ok(1)
        }
    }
}

/// `shforge outcome`: the rollout's outcome as one JSON object.
fn outcome(inputs: shforge::outcome::Inputs) -> Result<u8> {
    let outcome = shforge::outcome::classify(&inputs).map_err(|e| Usage(e.to_string()))?;
    let mut json = serde_json::to_vec_pretty(&outcome)?;
    json.push(b'\n');
    write_stdout(&json)?;
    Ok(0)
}

/// The catalog and the adapter's specs of `--spec DIR`, each finished.
fn render(specs: &[PathBuf]) -> Result<Vec<generate::Output>> {
    use shforge::catalog::RenderAllError;
    shforge::catalog::render_with_adapter_specs(specs).map_err(|e| match e {
        RenderAllError::Catalog(e) => Usage(e.to_string()).into(),
        RenderAllError::Generate(e) => e.into(),
    })
}

/// `generate` and `check` work from the templates compiled into this
/// binary: inside a shforge source tree (where it runs, or where DIR is)
/// they must be the tree's.
fn refuse_stale_binary(out: &Path, command: &'static str) -> Result<(), Usage> {
    let out = std::path::absolute(out).map_err(|e| Usage(format!("{}: {e}", out.display())))?;
    let here = std::env::current_dir().map_err(|e| Usage(format!("the current directory: {e}")))?;
    for dir in [here, out] {
        shforge::provenance::refuse_stale_binary(&dir, command)
            .map_err(|e| Usage(e.to_string()))?;
    }
    Ok(())
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

fn snapshot(
    kind: shforge::snapshot::Kind,
    db: Option<&Path>,
    dir: Option<&Path>,
    out: Option<&Path>,
    format: SnapshotFormat,
) -> Result<u8> {
    use shforge::snapshot;
    snapshot::remove_private_copies_on_signal();
    let taken = match (db, dir) {
        (Some(db), _) => snapshot::snapshot_db(kind, db),
        (None, Some(dir)) => snapshot::snapshot_dir(kind, dir),
        (None, None) => unreachable!("clap requires --db or --dir"),
    };
    let snap = match taken {
        Ok(snap) => snap,
        Err(e) => {
            eprintln!("shforge: {e}");
            return Ok(e.exit_code());
        }
    };
    let json = match format {
        SnapshotFormat::Json => snap.to_json(),
        SnapshotFormat::Atif => snap.to_atif(),
    };
    match out {
        None => write_stdout(&json)?,
        Some(path) => files::write_atomic(path, &json, files::FileMode::Data)?,
    }
    Ok(0)
}

fn installer(spec: &Path, out: Option<&Path>) -> Result<u8> {
    let text = files::read_text(spec, Bound::INSTALLER_SPEC)?;
    let inst = shforge::installer::Installer::from_toml(&text)
        .map_err(|e| Usage(format!("{}: {e}", spec.display())))?;
    let script = inst.script_from_spec(spec)?;
    match out {
        None => print!("{script}"),
        Some(path) => shforge::installer::write_script(path, &script)?,
    }
    Ok(0)
}

fn lint(dialect: Dialect, files: &[PathBuf]) -> Result<u8> {
    let mut clean = true;
    for file in files {
        let text = files::read_bounded(file, Bound::SCRIPT)?;
        let text = String::from_utf8_lossy(&text);
        for f in dialect::check(&text, dialect) {
            clean = false;
            println!("{}", f.render(&file.display().to_string()));
        }
    }
    Ok(if clean { 0 } else { 1 })
}

fn lint_templates(dirs: &[PathBuf]) -> Result<u8> {
    let mut clean = true;
    for dir in dirs {
        let problems = shforge::template_lint::check_dir(dir)?;
        for p in &problems {
            println!("{p}");
        }
        clean &= problems.is_empty();
    }
    Ok(if clean { 0 } else { 1 })
}
