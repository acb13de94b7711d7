//! Each `shforge` command, from its parsed arguments to an exit code (or
//! an error [`super::exit_code`] turns into one).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{Command, HarnessArgs, LaunchArgs, SnapshotFormat, Usage};
use crate::catalog::catalog;
use crate::dialect::{self, Dialect};
use crate::files::{self, Bound};
use crate::generate;
use crate::model_server::{self, Directives, ServerConfig};
use crate::params;

/// One parsed command: its exit code, or an error that
/// [`super::exit_code`] turns into one.
pub(super) fn run(command: Command) -> Result<u8> {
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
            spec,
            capture,
            events,
            stderr,
            stdout,
        } => outcome(crate::outcome::Inputs {
            receipt,
            harness: harness_or_spec(harness, spec.as_deref())?,
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
            let argv = crate::host::end_services_launch(&supervisor, &bash, &receipt, grace)
                .map_err(|e| Usage(e.to_string()))?;
            print_json(&argv)
        }
        Command::Receipt { file } => receipt(&file),
        Command::Fetch {
            names,
            into,
            all,
            arch,
            every_arch,
            spec,
        } => {
            let rows = crate::fetch::Rows::new(all, &arch, every_arch).map_err(Usage)?;
            fetch(&names, &spec, &into, &rows)
        }
        Command::Pin {
            target,
            out,
            arch,
            artifacts,
            from,
        } => pin(&target, out, &arch, artifacts, from.as_deref()),
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
            crate::smoke::Options {
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
    use crate::host::{CgroupChoice, SupervisorOptions};
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
    let argv = crate::host::supervised_launch(&a.supervisor, &opts, &a.command)
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
pub(super) fn seconds(text: &str) -> Result<std::time::Duration, String> {
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
fn smoke(names: Vec<String>, specs: &[PathBuf], mut opts: crate::smoke::Options) -> Result<u8> {
    use crate::harness::Harness;
    use crate::smoke::Subject;
    let shipped: Vec<Harness> = if names.is_empty() && specs.is_empty() {
        crate::smoke::DEFAULT.to_vec()
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
    let rows = crate::smoke::run(&opts, &mut |line| eprintln!("smoke: {line}"))?;
    print!("{}", crate::smoke::table::render(&rows));
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
    rows: &crate::fetch::Rows,
) -> Result<u8> {
    use crate::installer::{InstallerSpec, shipped_specs};
    let known = || {
        shipped_specs()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    };
    // `uv` is the tool the Python bundles' recipe needs, not a spec.
    if names.iter().any(|n| n == "uv") {
        let uv = crate::fetch::ensure_uv(into, &mut |line| eprintln!("fetch: {line}"))
            .map_err(|e| anyhow::anyhow!(e))?;
        println!("{}", uv.display());
        if names.len() == 1 && spec_files.is_empty() {
            return Ok(0);
        }
    }
    let names: Vec<String> = names.iter().filter(|n| *n != "uv").cloned().collect();
    let names = names.as_slice();
    let chosen: Vec<&str> = if names.is_empty() && !spec_files.is_empty() {
        Vec::new()
    } else if names.is_empty() {
        shipped_specs().map(|(n, _)| *n).collect()
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
        pool.extend(crate::fetch::all(&spec));
        wanted.extend(pick(&spec));
    }
    for (n, text) in shipped_specs() {
        let spec = InstallerSpec::from_toml(text).map_err(|e| Usage(format!("{n}: {e}")))?;
        pool.extend(crate::fetch::all(&spec));
    }
    for name in chosen {
        let text = shipped_specs()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| Usage(format!("unknown harness {name:?} (known: {})", known())))?;
        let spec = InstallerSpec::from_toml(text).map_err(|e| Usage(format!("{name}: {e}")))?;
        wanted.extend(pick(&spec));
    }
    let rows = crate::fetch::fetch(&wanted, &pool, into, &mut |line| eprintln!("fetch: {line}"))
        .map_err(|e| Usage(e.to_string()))?;
    print!("{}", crate::fetch::render(&rows));
    let ok = rows
        .iter()
        .all(|r| !matches!(r.status, crate::fetch::Status::Failed(_)));
    Ok(if ok { 0 } else { 1 })
}

fn harness(a: HarnessArgs) -> Result<u8> {
    use crate::harness::SessionSpec;
    let prompt = match (a.prompt, a.prompt_file) {
        (Some(p), _) => p,
        (None, Some(file)) => files::read_text_or_stdin(&file, Bound::PROMPT)?,
        (None, None) => unreachable!("clap requires one of --prompt and --prompt-file"),
    };
    let harness = match (&a.name, &a.spec) {
        // An adapter's spec: a bad file or spec is exit 2 naming it.
        (_, Some(file)) => crate::harness::read_spec_file(file).map_err(Usage)?.into(),
        (Some(name), None) => name.parse::<crate::harness::Harness>()?.into(),
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
        keep_env: a.keep_env,
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

/// `shforge receipt`: a receipt copied out of the sandbox, read as
/// `outcome` reads it (no link followed anywhere in its path: `copyback`),
/// printed normalised.
fn receipt(file: &Path) -> Result<u8> {
    let reading = |cause: String| Usage(format!("reading receipt {}: {cause}", file.display()));
    let text = crate::copyback::read_text(file, Bound::RECEIPT)
        .map_err(|e| reading(e.into_cause().to_string()))?;
    let receipt = crate::host::CleanupReceipt::from_json(&text)
        .map_err(|e| Usage(format!("{}: {e}", file.display())))?;
    print_json(&receipt)
}

/// `--harness NAME` or `--spec FILE` (an adapter's spec: a bad file or
/// spec is exit 2 naming it).
fn harness_or_spec(
    harness: Option<crate::harness::Harness>,
    spec: Option<&Path>,
) -> Result<crate::harness::HarnessRef> {
    Ok(match (harness, spec) {
        (_, Some(file)) => crate::harness::read_spec_file(file).map_err(Usage)?.into(),
        (Some(h), None) => h.into(),
        (None, None) => unreachable!("clap requires --harness or --spec"),
    })
}

/// `shforge outcome`: the rollout's outcome as one JSON object.
fn outcome(inputs: crate::outcome::Inputs) -> Result<u8> {
    let outcome = crate::outcome::classify(&inputs).map_err(|e| Usage(e.to_string()))?;
    let mut json = serde_json::to_vec_pretty(&outcome)?;
    json.push(b'\n');
    write_stdout(&json)?;
    Ok(0)
}

/// The catalog and the adapter's specs of `--spec DIR`, each finished.
fn render(specs: &[PathBuf]) -> Result<Vec<generate::Output>> {
    use crate::catalog::RenderAllError;
    crate::catalog::render_with_adapter_specs(specs).map_err(|e| match e {
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
        crate::provenance::refuse_stale_binary(&dir, command).map_err(|e| Usage(e.to_string()))?;
    }
    Ok(())
}

fn snapshot(
    kind: crate::snapshot::Kind,
    db: Option<&Path>,
    dir: Option<&Path>,
    out: Option<&Path>,
    format: SnapshotFormat,
) -> Result<u8> {
    use crate::snapshot;
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
    let inst = crate::installer::Installer::from_toml(&text)
        .map_err(|e| Usage(format!("{}: {e}", spec.display())))?;
    let script = inst.script_from_spec(spec)?;
    match out {
        None => print!("{script}"),
        Some(path) => crate::installer::write_script(path, &script)?,
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
        let problems = crate::template_lint::check_dir(dir)?;
        for p in &problems {
            println!("{p}");
        }
        clean &= problems.is_empty();
    }
    Ok(if clean { 0 } else { 1 })
}

fn pin(
    target: &str,
    out: Option<PathBuf>,
    arch: &[String],
    artifacts: PathBuf,
    from: Option<&Path>,
) -> Result<u8> {
    let (name, version) = crate::pin::parse_target(target)?;
    let arches = match crate::fetch::Rows::new(false, arch, false).map_err(Usage)? {
        crate::fetch::Rows::Arches(v) => v,
        _ => Vec::new(),
    };
    let from = match from {
        Some(f) => Some(files::read_text(f, Bound::INSTALLER_SPEC)?),
        None => None,
    };
    let checkout =
        std::env::current_dir().map_err(|e| Usage(format!("the current directory: {e}")))?;
    let req = crate::pin::Request {
        name,
        version,
        out,
        checkout,
        arches,
        artifacts,
        from,
    };
    let done = crate::pin::pin(&req, &mut |line| eprintln!("pin: {line}"))?;
    for (path, size, sha) in &done.artifacts {
        println!("{path}  {size}  {sha}");
    }
    println!("wrote {}", done.installer.display());
    match &done.harness {
        Some(h) => println!("wrote {}", h.display()),
        None => println!("now run `cargo run -- generate` and commit the spec with generated/"),
    }
    Ok(0)
}
