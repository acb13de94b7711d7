//! Figures for generated/harness_runner.sh (printed, not asserted):
//!
//! * events mode on one 16 MiB line without CR (and 8 MiB, for the 2x-input
//!   time ratio) in a UTF-8 locale;
//! * events mode on 200,000 short JSON lines;
//! * each against `cat FILE | cat` of the same input;
//! * direct-mode start-up cost against starting the CLI directly.
//!
//! Runs under bash 5.x from PATH and, when present, /opt/bashes/3.2.48/bin/bash
//! (or the bashes named in BENCH_BASHES, colon-separated). Each figure is the
//! best of three runs: the machine is shared.
//!
//! `cargo run --release --example bench_runner`

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shforge::scripts::runner::RunnerParams;

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

fn runner() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("generated/harness_runner.sh")
}

/// Events mode: the CLI is `cat INPUT`; the events file is checked for the
/// expected number of lines so a broken run cannot pass as a fast one.
fn events_time(bash: &str, dir: &Path, input: &Path, lines: usize) -> Duration {
    let events = dir.join("events.log");
    let params = dir.join("params.sh");
    let file = RunnerParams::events(["cat", &input.to_string_lossy()], events.to_string_lossy())
        .render()
        .expect("params render");
    std::fs::write(&params, file.as_str()).unwrap();
    best_of(|| {
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

fn startup_time(bash: &str, dir: &Path) -> (Duration, Duration) {
    let params = dir.join("true.sh");
    std::fs::write(
        &params,
        RunnerParams::direct(["true"]).render().unwrap().as_str(),
    )
    .unwrap();
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

fn line_file(dir: &Path, name: &str, size: usize) -> PathBuf {
    let unit = "{\"k\":\"caf\u{e9} \u{2615} x\"},".as_bytes();
    let mut data: Vec<u8> = unit.iter().copied().cycle().take(size).collect();
    data.push(b'\n');
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

fn json_lines(dir: &Path, n: usize) -> PathBuf {
    let mut data = String::with_capacity(n * 64);
    for i in 0..n {
        data.push_str(&format!(
            "{{\"type\":\"message\",\"n\":{i},\"text\":\"hello world\"}}\n"
        ));
    }
    let path = dir.join("json");
    std::fs::write(&path, data).unwrap();
    path
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut bashes: Vec<String> = match std::env::var("BENCH_BASHES") {
        Ok(list) => list
            .split(':')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
        Err(_) => vec!["bash".into(), "/opt/bashes/3.2.48/bin/bash".into()],
    };
    bashes.retain(|b| {
        Command::new(b)
            .args(["-c", "true"])
            .status()
            .is_ok_and(|s| s.success())
    });

    let mib16 = line_file(dir, "16mib", 16 << 20);
    let mib8 = line_file(dir, "8mib", 8 << 20);
    let json = json_lines(dir, 200_000);
    let cat16 = cat_time(dir, &mib16);
    let cat_json = cat_time(dir, &json);
    println!("harness_runner.sh events mode, LC_ALL=C.UTF-8, best of {RUNS}");
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
        let t16 = events_time(bash, dir, &mib16, 1);
        let t8 = events_time(bash, dir, &mib8, 1);
        let tj = events_time(bash, dir, &json, 200_000);
        let (through, direct) = startup_time(bash, dir);
        println!("bash {version} ({bash}):");
        println!(
            "  16 MiB line:        {} ({:.0}x cat; goal <= 5 s)",
            secs(t16),
            t16.as_secs_f64() / cat16.as_secs_f64()
        );
        println!(
            "  8 MiB line:         {} (16 MiB / 8 MiB time = {:.2}; goal <= 2.2)",
            secs(t8),
            t16.as_secs_f64() / t8.as_secs_f64()
        );
        println!(
            "  200,000 JSON lines: {} ({:.0}x cat, {:.1} us per line)",
            secs(tj),
            tj.as_secs_f64() / cat_json.as_secs_f64(),
            tj.as_secs_f64() * 1e6 / 200_000.0
        );
        println!(
            "  direct-mode start:  {:.1} ms through the runner, {:.1} ms for the CLI alone",
            through.as_secs_f64() * 1e3,
            direct.as_secs_f64() * 1e3
        );
    }
}
