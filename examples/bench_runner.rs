//! Figures for generated/harness_runner.sh (printed, not asserted):
//!
//! * events mode on one 16 MiB line without CR (and 8 MiB, for the 2x-input
//!   time ratio) in a UTF-8 locale;
//! * events mode on 200,000 short JSON lines;
//! * each against `cat FILE | cat` of the same input;
//! * start-up cost around `true` (direct and events mode) against starting
//!   the CLI directly;
//! * a parameter file holding a 4 MiB value full of single quotes (`x'y`
//!   repeated), as `shforge params` writes it: sourced by bash (`. FILE`),
//!   and read by the runner (its line check and eval; the value is
//!   RUNNER_EVENTS, which direct mode ignores, and the CLI is `true`).
//!
//! Runs under the bashes named on the command line, else those in
//! BENCH_BASHES (colon-separated), else `bash` from PATH. Each figure is the
//! best of three runs (the machine is shared); user+system CPU time of the
//! run is printed too, as it says more than wall time on a loaded machine.
//!
//! `cargo run --release --example bench_runner -- /path/to/bash ...`
//! (`BENCH_EVENTS_ONLY=1` prints the events figures only.)
//! (`BENCH_RUNNER=FILE` measures another copy of the runner.)

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shforge::RunnerParams;

const RUNS: usize = 3;

fn best_of<F: FnMut() -> Duration>(mut f: F) -> Duration {
    (0..RUNS).map(|_| f()).min().unwrap()
}

fn timed(mut cmd: Command) -> Duration {
    cmd.stdin(Stdio::null()).stdout(Stdio::null());
    let start = Instant::now();
    let status = cmd.status().expect("command starts");
    let took = start.elapsed();
    assert!(status.success(), "{cmd:?} failed: {status}");
    took
}

/// CPU time (user + system) of finished children so far, from /proc.
fn children_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // Fields 16 and 17 (cutime, cstime) are at 13 and 14 after the name.
    let ticks: u64 = [13, 14]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<u64>().ok()))
        .sum();
    Duration::from_millis(ticks * 10)
}

/// Best wall time of three runs, and the CPU time of that run.
fn best_with_cpu<F: FnMut() -> Duration>(mut f: F) -> (Duration, Duration) {
    (0..RUNS)
        .map(|_| {
            let cpu0 = children_cpu();
            let wall = f();
            (wall, children_cpu().saturating_sub(cpu0))
        })
        .min()
        .unwrap()
}

/// generated/harness_runner.sh, or the script named by BENCH_RUNNER (to
/// measure an older copy against it in the same conditions).
fn runner() -> PathBuf {
    match std::env::var_os("BENCH_RUNNER") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("generated/harness_runner.sh"),
    }
}

/// Events mode: the CLI is `cat INPUT`; the events file is checked for the
/// expected number of lines so a broken run cannot pass as a fast one.
fn events_time(bash: &str, dir: &Path, input: &Path, lines: usize) -> (Duration, Duration) {
    let events = dir.join("events.log");
    let params = dir.join("params.sh");
    let file = RunnerParams::events(["cat", &input.to_string_lossy()], events.to_string_lossy())
        .render()
        .expect("params render");
    std::fs::write(&params, file.as_str()).unwrap();
    best_with_cpu(|| {
        let mut cmd = Command::new(bash);
        cmd.arg(runner()).arg(&params).env("LC_ALL", "C.UTF-8");
        let took = timed(cmd);
        let written = std::fs::read(&events).unwrap();
        assert_eq!(
            written.iter().filter(|&&b| b == b'\n').count(),
            lines,
            "events file incomplete"
        );
        took
    })
}

fn cat_time(dir: &Path, input: &Path) -> Duration {
    let out = dir.join("cat.out");
    best_of(|| {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("cat \"$1\" | cat > \"$2\"")
            .arg("sh")
            .arg(input)
            .arg(&out)
            .env("LC_ALL", "C.UTF-8");
        timed(cmd)
    })
}

/// Mean time of 20 runs of the runner around `true`, in direct or events
/// mode, and of `true` alone.
fn startup_time(bash: &str, dir: &Path, events: bool) -> (Duration, Duration) {
    let params = dir.join("true.sh");
    let p = if events {
        RunnerParams::events(["true"], dir.join("true.events").to_string_lossy())
    } else {
        RunnerParams::direct(["true"])
    };
    std::fs::write(&params, p.render().unwrap().as_str()).unwrap();
    let n = 20u32;
    let through = best_of(|| {
        (0..n)
            .map(|_| {
                let mut cmd = Command::new(bash);
                cmd.arg(runner()).arg(&params);
                timed(cmd)
            })
            .sum::<Duration>()
            / n
    });
    let direct = best_of(|| {
        (0..n)
            .map(|_| timed(Command::new("true")))
            .sum::<Duration>()
            / n
    });
    (through, direct)
}

/// A 4 MiB value of `x'y`: the time bash takes to source the parameter
/// file, and the time the runner takes to read it and start `true`.
fn quote_heavy_times(bash: &str, dir: &Path) -> ((Duration, Duration), (Duration, Duration)) {
    let value = "x'y".repeat((4 << 20) / 3);
    let params = dir.join("quotes.sh");
    let file = RunnerParams::direct(["true"])
        .render()
        .expect("params render")
        .into_string();
    let assign = |name: &str| {
        shforge::shell_assignments(&serde_json::json!({ name: value }).to_string())
            .unwrap()
            .into_string()
    };
    let big = assign("V");
    std::fs::write(&params, &big).unwrap();
    let sourced = best_with_cpu(|| {
        let mut cmd = Command::new(bash);
        cmd.arg("-c")
            .arg("set -e; . \"$1\"; [ \"${#V}\" -eq \"$2\" ]")
            .arg("bash")
            .arg(&params)
            .arg(value.chars().count().to_string());
        timed(cmd)
    });
    let runner_file = dir.join("runner-quotes.sh");
    std::fs::write(&runner_file, file + &assign("RUNNER_EVENTS")).unwrap();
    let read = best_with_cpu(|| {
        let mut cmd = Command::new(bash);
        cmd.arg(runner()).arg(&runner_file);
        timed(cmd)
    });
    (sourced, read)
}

fn line_file(dir: &Path, name: &str, size: usize) -> PathBuf {
    let unit = "{\"k\":\"caf\u{e9} \u{2615} x\"},".as_bytes();
    let mut data: Vec<u8> = unit.iter().copied().cycle().take(size).collect();
    data.push(b'\n');
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

fn json_lines(dir: &Path, name: &str, n: usize) -> PathBuf {
    let mut data = String::with_capacity(n * 64);
    for i in 0..n {
        data.push_str(&format!(
            "{{\"type\":\"message\",\"n\":{i},\"text\":\"hello world\"}}\n"
        ));
    }
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

/// The events figures of one bash: time [CPU] and the ratio to the floor
/// measured beside them, for the 16 MiB line and the 200,000 lines, and the
/// time ratios of twice the input (linear is 2).
fn print_events(
    (t16, c16, cat16): (Duration, Duration, Duration),
    t8: Duration,
    (tj, cj, cat_json): (Duration, Duration, Duration),
    t100k: Duration,
) {
    println!(
        "  16 MiB line:        {} [{}] = {:.0}x cat | cat ({:.1} ms) (goal <= 2 s)",
        secs(t16),
        secs(c16),
        t16.as_secs_f64() / cat16.as_secs_f64(),
        cat16.as_secs_f64() * 1e3
    );
    println!(
        "  8 MiB line:         {} (16 MiB / 8 MiB time = {:.2}; linear is 2)",
        secs(t8),
        t16.as_secs_f64() / t8.as_secs_f64()
    );
    println!(
        "  200,000 JSON lines: {} [{}] = {:.0}x cat | cat ({:.1} ms), {:.1} us per line (goal <= 2 s)",
        secs(tj),
        secs(cj),
        tj.as_secs_f64() / cat_json.as_secs_f64(),
        cat_json.as_secs_f64() * 1e3,
        tj.as_secs_f64() * 1e6 / 200_000.0
    );
    println!(
        "  100,000 JSON lines: {} (200,000 / 100,000 time = {:.2}; linear is 2)",
        secs(t100k),
        tj.as_secs_f64() / t100k.as_secs_f64()
    );
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut bashes: Vec<String> = if !args.is_empty() {
        args
    } else {
        match std::env::var("BENCH_BASHES") {
            Ok(list) => list
                .split(':')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            Err(_) => vec!["bash".into()],
        }
    };
    bashes.retain(|b| {
        Command::new(b)
            .args(["-c", "true"])
            .status()
            .is_ok_and(|s| s.success())
    });

    let mib16 = line_file(dir, "16mib", 16 << 20);
    let mib8 = line_file(dir, "8mib", 8 << 20);
    let json = json_lines(dir, "json", 200_000);
    let json100k = json_lines(dir, "json100k", 100_000);
    let cat16 = cat_time(dir, &mib16);
    let cat_json = cat_time(dir, &json);
    println!(
        "harness_runner.sh events mode, LC_ALL=C.UTF-8, best of {RUNS} (wall; CPU in brackets)"
    );
    println!(
        "cat | cat: 16 MiB line {:.1} ms, 200,000 JSON lines {:.1} ms",
        cat16.as_secs_f64() * 1e3,
        cat_json.as_secs_f64() * 1e3
    );
    for bash in &bashes {
        let version = Command::new(bash)
            .args(["-c", "printf %s \"$BASH_VERSION\""])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        // The floor again, beside this bash's figures: the load of a
        // shared machine moves between bashes.
        let cat16 = cat16.min(cat_time(dir, &mib16));
        let cat_json = cat_json.min(cat_time(dir, &json));
        let (t16, c16) = events_time(bash, dir, &mib16, 1);
        let (t8, _) = events_time(bash, dir, &mib8, 1);
        let (tj, cj) = events_time(bash, dir, &json, 200_000);
        println!("bash {version} ({bash}):");
        print_events(
            (t16, c16, cat16),
            t8,
            (tj, cj, cat_json),
            events_time(bash, dir, &json100k, 100_000).0,
        );
        if std::env::var_os("BENCH_EVENTS_ONLY").is_some() {
            continue;
        }
        let (through, direct) = startup_time(bash, dir, false);
        let (through_events, _) = startup_time(bash, dir, true);
        let ((src, src_cpu), (read, read_cpu)) = quote_heavy_times(bash, dir);
        println!(
            "  start around true:  {:.1} ms direct, {:.1} ms events, {:.1} ms for the CLI alone",
            through.as_secs_f64() * 1e3,
            through_events.as_secs_f64() * 1e3,
            direct.as_secs_f64() * 1e3
        );
        println!(
            "  4 MiB of x'y:       sourced {} [{}], read by the runner {} [{}] (goal <= 2 s)",
            secs(src),
            secs(src_cpu),
            secs(read),
            secs(read_cpu)
        );
    }
}
