//! The `shforge` command line.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};

use shforge::catalog::catalog;
use shforge::dialect::{self, Dialect};
use shforge::generate;
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
        /// JSON file, or - for standard input (the default).
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
    Smoke {
        /// Harnesses to run (default: claude-code opencode kilo pi openclaw codex).
        names: Vec<String>,
        /// The pinned artifacts (missing ones are fetched into it).
        #[arg(long, default_value = "/var/cache/shforge/artifacts")]
        artifacts: PathBuf,
        /// Scratch dir (default: $TMPDIR/shforge-smoke).
        #[arg(long)]
        work: Option<PathBuf>,
        /// The bash that runs the installer, supervisor and runner.
        #[arg(long, default_value = "bash")]
        bash: String,
        /// Run inside this root dir (chroot + PID namespace; root only), after bootstrap.sh under dash.
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Write a harness session dir (params.sh, config, isolated dirs, capture.json).
    Harness(Box<HarnessArgs>),
}

/// `shforge harness NAME ...`
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("prompt_source").required(true).args(["prompt", "prompt_file"])))]
struct HarnessArgs {
    /// claude-code, opencode, kilo, pi, openclaw or codex.
    name: String,
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
    /// A file holding the prompt (UTF-8).
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
            let code = if err.downcast_ref::<Usage>().is_some() {
                2
            } else {
                1
            };
            eprintln!("shforge: {err:#}");
            ExitCode::from(code)
        }
    }
}

fn run(command: Command) -> Result<u8> {
    match command {
        Command::Generate { out, specs } => {
            refuse_stale_binary(&out, "generate")?;
            let outputs = render(&specs)?;
            generate::write_dir(&out, &outputs)
                .with_context(|| format!("writing {}", out.display()))?;
            eprintln!(
                "shforge: wrote {} scripts and {} to {}",
                outputs.len(),
                generate::MANIFEST,
                out.display()
            );
            Ok(0)
        }
        Command::Check { out, specs } => {
            refuse_stale_binary(&out, "check")?;
            let outputs = render(&specs)?;
            let report = generate::check_dir(&out, &outputs)?;
            for change in &report.stale {
                println!("stale: {}", change.path);
            }
            print!("{}", report.diff());
            for path in &report.missing {
                println!("missing: {path}");
            }
            for path in &report.extra {
                println!("extra: {path}");
            }
            if report.is_clean() {
                return Ok(0);
            }
            let regenerate = !(report.stale.is_empty() && report.missing.is_empty());
            let fix = match (regenerate, report.extra.is_empty()) {
                (true, true) => "run `shforge generate`",
                (true, false) => "run `shforge generate` and remove the extra files",
                _ => "remove the extra files (generate deletes only files its manifest listed)",
            };
            eprintln!("shforge: {} is out of date: {fix}", out.display());
            Ok(1)
        }
        Command::List => {
            for s in catalog()? {
                println!("{}\t{}\t{}", s.path(), s.dialect(), s.purpose());
            }
            Ok(0)
        }
        Command::Lint { dialect, files } => lint(dialect, &files),
        Command::LintTemplates { dirs } => lint_templates(&dirs),
        Command::Params { file } => {
            let json = read_input(file.as_deref())?;
            match params::shell_assignments(&json) {
                Ok(raw) => {
                    print!("{raw}");
                    Ok(0)
                }
                Err(e) => Err(Usage(e.to_string()).into()),
            }
        }
        Command::Installer { spec, out } => installer(&spec, out.as_deref()),
        Command::Snapshot { kind, db, dir, out } => {
            snapshot(kind, db.as_deref(), dir.as_deref(), out.as_deref())
        }
        Command::Outcome {
            receipt,
            harness,
            capture,
            events,
            stderr,
            stdout,
        } => {
            let inputs = shforge::outcome::Inputs {
                receipt,
                harness,
                capture,
                events,
                stderr,
                stdout,
            };
            let outcome = shforge::outcome::classify(&inputs).map_err(|e| Usage(e.to_string()))?;
            let mut json = serde_json::to_vec_pretty(&outcome)?;
            json.push(b'\n');
            use std::io::Write as _;
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(&json)
                .and_then(|()| stdout.flush())
                .map_err(|e| Usage(format!("cannot write standard output: {e}")))?;
            Ok(0)
        }
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
        Command::Smoke {
            names,
            artifacts,
            work,
            bash,
            root,
        } => smoke(names, artifacts, work, bash, root),
    }
}

fn smoke(
    names: Vec<String>,
    artifacts: PathBuf,
    work: Option<PathBuf>,
    bash: String,
    root: Option<PathBuf>,
) -> Result<u8> {
    use shforge::harness::Harness;
    let harnesses = if names.is_empty() {
        shforge::smoke::DEFAULT.to_vec()
    } else {
        names
            .iter()
            .map(|n| n.parse::<Harness>().map_err(|e| Usage(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?
    };
    let opts = shforge::smoke::Options {
        harnesses,
        artifacts,
        work: work.unwrap_or_else(|| std::env::temp_dir().join("shforge-smoke")),
        bash,
        root,
    };
    let start = std::time::Instant::now();
    let rows = shforge::smoke::run(&opts, &mut |line| eprintln!("smoke: {line}")).map_err(
        |e| -> anyhow::Error {
            match e {
                shforge::smoke::SmokeError::Root { .. } => Usage(e.to_string()).into(),
                e => e.into(),
            }
        },
    )?;
    print!("{}", shforge::smoke::table::render(&rows));
    let passed = rows.iter().all(|r| r.passed());
    eprintln!(
        "smoke: {} in {:.1} s",
        if passed { "all passed" } else { "FAILED" },
        start.elapsed().as_secs_f64()
    );
    Ok(if passed { 0 } else { 1 })
}

fn harness(a: HarnessArgs) -> Result<u8> {
    use shforge::harness::{HarnessError, SessionSpec};
    let usage = |e: HarnessError| -> anyhow::Error {
        if e.is_usage() {
            Usage(e.to_string()).into()
        } else {
            e.into()
        }
    };
    let prompt = match (a.prompt, a.prompt_file) {
        (Some(p), _) => p,
        (None, Some(file)) => {
            let bytes = read_prompt_file(&file)?;
            String::from_utf8(bytes)
                .map_err(|_| Usage(format!("{}: the prompt is not UTF-8", file.display())))?
        }
        (None, None) => unreachable!("clap requires one of --prompt and --prompt-file"),
    };
    let spec = SessionSpec {
        harness: a.name.parse().map_err(usage)?,
        session_dir: a.session_dir,
        workdir: a.workdir,
        entry: a.entry,
        base_url: a.base_url,
        model: a.model,
        api: a
            .api
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(usage)?,
        api_key_env: a.api_key_env,
        mode: a.mode.parse().map_err(usage)?,
        prompt,
    };
    let session = spec.build().map_err(usage)?;
    session.write_into(&a.out).map_err(usage)?;
    Ok(0)
}

/// The most a prompt file may hold: far above any real prompt, and a bound
/// on what a device or FIFO given as the file (`/dev/zero`) can make us read.
const PROMPT_MAX: u64 = 64 << 20;

fn read_prompt_file(file: &Path) -> Result<Vec<u8>, Usage> {
    use std::io::Read as _;
    let cannot = |e: std::io::Error| Usage(format!("cannot read {}: {e}", file.display()));
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .map_err(cannot)?
        .take(PROMPT_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > PROMPT_MAX {
        return Err(Usage(format!(
            "{}: the prompt is larger than {} MiB",
            file.display(),
            PROMPT_MAX >> 20
        )));
    }
    Ok(bytes)
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

fn snapshot(
    kind: shforge::snapshot::Kind,
    db: Option<&Path>,
    dir: Option<&Path>,
    out: Option<&Path>,
) -> Result<u8> {
    use shforge::snapshot;
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
    let json = snap.to_json();
    match out {
        None => {
            use std::io::Write as _;
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(&json)
                .and_then(|()| stdout.flush())
                .map_err(|e| Usage(format!("cannot write standard output: {e}")))?;
        }
        Some(path) => generate::write_file_atomic(path, &json, false)
            .map_err(|e| Usage(format!("cannot write {}: {e}", path.display())))?,
    }
    Ok(0)
}

fn installer(spec: &Path, out: Option<&Path>) -> Result<u8> {
    let text = std::fs::read_to_string(spec)
        .map_err(|e| Usage(format!("cannot read {}: {e}", spec.display())))?;
    let inst = shforge::installer::Installer::from_toml(&text)
        .map_err(|e| Usage(format!("{}: {e}", spec.display())))?;
    let script = inst.script_from_spec(spec)?;
    match out {
        None => print!("{script}"),
        Some(path) => shforge::installer::write_script(path, &script)
            .with_context(|| format!("writing {}", path.display()))?,
    }
    Ok(0)
}

fn lint(dialect: Dialect, files: &[PathBuf]) -> Result<u8> {
    let mut clean = true;
    for file in files {
        let text = std::fs::read(file)
            .map_err(|e| Usage(format!("cannot read {}: {e}", file.display())))?;
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
        let problems = shforge::template_lint::check_dir(dir)
            .map_err(|e| Usage(format!("cannot read {}: {e}", dir.display())))?;
        for p in &problems {
            println!("{p}");
        }
        clean &= problems.is_empty();
    }
    Ok(if clean { 0 } else { 1 })
}

fn read_input(file: Option<&Path>) -> Result<String> {
    let mut s = String::new();
    match file {
        None => std::io::stdin().read_to_string(&mut s).map(drop),
        Some(p) if p == Path::new("-") => std::io::stdin().read_to_string(&mut s).map(drop),
        Some(p) => std::fs::read_to_string(p).map(|t| s = t),
    }
    .map_err(|e| {
        let what = file.map_or("standard input".into(), |p| p.display().to_string());
        Usage(format!("cannot read {what}: {e}"))
    })?;
    Ok(s)
}
