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
    },
    /// Exit 1, with a diff of the stale files, when DIR differs from a fresh generation.
    Check {
        /// Directory to check.
        #[arg(long, default_value = "generated")]
        out: PathBuf,
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
    },
}

/// Bad input from the user: printed as one line, exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Usage(String);

fn main() -> ExitCode {
    let cli = Cli::parse();
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
        Command::Generate { out } => {
            let outputs = generate::render_all(&catalog()?)?;
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
        Command::Check { out } => {
            let outputs = generate::render_all(&catalog()?)?;
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
        Command::FakeModelServer {
            port,
            log,
            token,
            target,
            prefer,
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
            })? {}
        }
    }
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
