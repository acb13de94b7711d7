//! What generated/bootstrap.sh costs when nothing is missing (the common
//! case: it runs at the start of every session).
//!
//! `cargo run --release --example bench_bootstrap [RUNS]`
//!
//! For each shell found, two runs of the script where every need is met:
//! * `needs`: `--need sh --need cat --musl-lib libstdc++` (not musl here, so
//!   the library check is skipped as it is on glibc images);
//! * `needs+overlap`: the same plus `--workdir A --session-dir B/new`.
//!
//! It prints the mean wall time per run next to the shell's own start-up cost
//! (running an empty script), and the processes each run starts, counted by
//! tracing fork/clone and execve with `strace -f` (skipped when strace is not
//! installed).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn run(argv: &[String], script: &Path, args: &[String]) -> bool {
    Command::new(&argv[0])
        .args(&argv[1..])
        .arg(script)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Mean wall time of one run, in milliseconds.
fn mean_ms(argv: &[String], script: &Path, args: &[String], runs: u32) -> f64 {
    assert!(
        run(argv, script, args),
        "{argv:?} {script:?} {args:?} failed"
    );
    let start = Instant::now();
    for _ in 0..runs {
        run(argv, script, args);
    }
    start.elapsed().as_secs_f64() * 1000.0 / f64::from(runs)
}

/// (children forked, programs executed after the shell itself), from strace.
fn processes(
    argv: &[String],
    script: &Path,
    args: &[String],
    tmp: &Path,
) -> Option<(usize, usize)> {
    let strace = which("strace")?;
    let log = tmp.join("strace.log");
    let status = Command::new(strace)
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=execve,fork,vfork,clone,clone3",
            "-o",
        ])
        .arg(&log)
        .args(argv)
        .arg(script)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    let text = std::fs::read_to_string(&log).ok()?;
    let mut forks = 0usize;
    let mut execs = 0usize;
    for line in text.lines() {
        // Count only calls that succeeded (a child PID, or execve = 0).
        let call = line
            .split_once(' ')
            .map_or(line, |(_, rest)| rest.trim_start());
        let ok = line.rsplit_once(" = ").is_some_and(|(_, r)| {
            let r = r.split_whitespace().next().unwrap_or("");
            r.parse::<i64>().is_ok_and(|n| n >= 0)
        });
        if !ok {
            continue;
        }
        if call.starts_with("execve(") {
            execs += 1;
        } else if ["fork(", "vfork(", "clone(", "clone3("]
            .iter()
            .any(|c| call.starts_with(c))
        {
            forks += 1;
        }
    }
    // The first execve is the shell itself.
    Some((forks, execs.saturating_sub(1)))
}

fn main() {
    let runs: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("generated/bootstrap.sh");
    let tmp = std::env::temp_dir().join(format!("shforge-bench-bootstrap-{}", std::process::id()));
    let work = tmp.join("work dir");
    let sessions = tmp.join("sessions");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&sessions).unwrap();
    let empty = tmp.join("empty.sh");
    std::fs::write(&empty, "").unwrap();

    let needs: Vec<String> = ["--need", "sh", "--need", "cat", "--musl-lib", "libstdc++"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut with_overlap = needs.clone();
    with_overlap.extend([
        "--workdir".to_string(),
        work.to_string_lossy().into_owned(),
        "--session-dir".to_string(),
        sessions.join("new/session").to_string_lossy().into_owned(),
    ]);

    let shells: [(&str, &[&str]); 6] = [
        ("dash", &["dash"]),
        ("busybox sh", &["busybox", "sh"]),
        ("mksh", &["mksh"]),
        ("ksh93", &["ksh"]),
        ("bash --posix", &["bash", "--posix"]),
        ("bash", &["bash"]),
    ];
    println!("generated/bootstrap.sh, nothing missing, {runs} runs each");
    println!(
        "{:<13} {:>10} {:>13} {:>15} {:>8} {:>22}",
        "shell", "empty ms", "needs ms", "+overlap ms", "ratio", "forks/execs needs;+ovl"
    );
    for (name, argv) in shells {
        let Some(program) = which(argv[0]) else {
            println!("{name:<13} (not installed)");
            continue;
        };
        let mut argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        argv[0] = program.to_string_lossy().into_owned();
        let base = mean_ms(&argv, &empty, &[], runs);
        let a = mean_ms(&argv, &script, &needs, runs);
        let b = mean_ms(&argv, &script, &with_overlap, runs);
        let counts = |args: &[String]| {
            processes(&argv, &script, args, &tmp)
                .map_or("n/a".to_string(), |(f, e)| format!("{f}/{e}"))
        };
        println!(
            "{name:<13} {base:>10.2} {a:>13.2} {b:>15.2} {:>8.2} {:>22}",
            b / base,
            format!("{};{}", counts(&needs), counts(&with_overlap))
        );
    }
    println!(
        "ratio = (+overlap ms) / (empty ms): the script's cost over the shell's own start-up."
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
