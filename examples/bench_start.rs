//! Start-up cost of supervisor + runner around a trivial CLI (issue 24 part 5),
//! figures only (never a timed test):
//!
//! For each bash, paired rounds: the floor `BASH -c true`, then
//! `BASH process_supervisor.sh --receipt FILE -- BASH harness_runner.sh
//! PARAMS` whose parameter file runs `true` in direct mode, then the runner
//! alone on the same file. Wall time of each; the median of each and the
//! median of the pair ratios are printed, so a machine whose speed drifts
//! between pairs still compares like with like. CPU time (user + system of
//! every process of a run, from getrusage) is printed as a mean and a
//! ratio of means: on a loaded machine it says more than the wall. The supervisor is started
//! as a child of this program (not a group leader), so it regroups itself
//! as it would under any caller without job control.
//!
//! Bashes: the arguments, else `bash` from PATH and 5.3 and 3.2.48 from
//! /work/shared/bashes when present. Scripts: `generated/`, or each
//! `--scripts DIR` given (a directory holding process_supervisor.sh and
//! harness_runner.sh, e.g. an older build's), measured in the same rounds
//! so that before and after compare in one run. `--deadline` adds
//! `--deadline 60` (the timer job and the sleep probe) to every run.
//!
//! Run: `cargo run --release --example bench_start [-n ROUNDS]
//! [--deadline] [--scripts DIR]... [BASH...]` (default 20 rounds).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use shforge::RunnerParams;

/// CPU milliseconds (user + system) of every child reaped so far, and of
/// theirs that they reaped.
fn children_cpu_ms() -> f64 {
    // SAFETY: getrusage fills the struct it is given and nothing else.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 * 1000.0 + tv.tv_usec as f64 / 1000.0;
    t(ru.ru_utime) + t(ru.ru_stime)
}

/// Wall and CPU milliseconds of one run of `cmd` (it must succeed).
fn ms(cmd: &mut Command, what: &str) -> (f64, f64) {
    let cpu = children_cpu_ms();
    let t = Instant::now();
    let st = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let took = t.elapsed().as_secs_f64() * 1000.0;
    assert!(st.success(), "{what} failed: {st}");
    (took, children_cpu_ms() - cpu)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Wall milliseconds of one supervisor + runner run of the scripts in `dir`.
fn supervised(bash: &str, dir: &Path, params: &Path, receipt: &Path, deadline: bool) -> (f64, f64) {
    let mut cmd = Command::new(bash);
    cmd.arg(dir.join("process_supervisor.sh"))
        .arg("--receipt")
        .arg(receipt);
    if deadline {
        cmd.args(["--deadline", "60"]);
    }
    cmd.arg("--")
        .arg(bash)
        .arg(dir.join("harness_runner.sh"))
        .arg(params);
    ms(&mut cmd, "supervisor + runner")
}

/// One row per script directory: floor, supervisor + runner, runner alone,
/// the difference and the median ratio (wall), then the mean CPU of the
/// floor and of supervisor + runner and their ratio, all from the same rounds.
fn run(bash: &str, rounds: usize, dirs: &[PathBuf], tmp: &Path, deadline: bool) {
    let params = tmp.join("true.sh");
    let text = RunnerParams::direct(["true"]).render().unwrap();
    std::fs::write(&params, text.as_str()).unwrap();
    let receipt = tmp.join("receipt.json");
    let (mut floor, mut floor_cpu) = (vec![], vec![]);
    let n = dirs.len();
    let (mut both, mut alone, mut ratio, mut cpu) = (
        vec![vec![]; n],
        vec![vec![]; n],
        vec![vec![]; n],
        vec![vec![]; n],
    );
    for _ in 0..rounds {
        let (f, fc) = ms(Command::new(bash).args(["-c", "true"]), "bash -c true");
        floor.push(f);
        floor_cpu.push(fc);
        for (i, dir) in dirs.iter().enumerate() {
            let (s, sc) = supervised(bash, dir, &params, &receipt, deadline);
            let runner = dir.join("harness_runner.sh");
            let (r, _) = ms(Command::new(bash).arg(&runner).arg(&params), "runner");
            both[i].push(s);
            alone[i].push(r);
            ratio[i].push(s / f);
            cpu[i].push(sc);
        }
    }
    let version = Command::new(bash)
        .args(["-c", "printf %s \"$BASH_VERSION\""])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let (floor, floor_cpu) = (median(floor), mean(&floor_cpu));
    for (i, dir) in dirs.iter().enumerate() {
        let s = median(both[i].clone());
        let c = mean(&cpu[i]);
        println!(
            "{version}\t{}\t{floor:.1}\t{s:.1}\t{:.1}\t{:.1}\t{:.1}\t{floor_cpu:.2}\t{c:.2}\t{:.1}",
            dir.display(),
            median(alone[i].clone()),
            s - floor,
            median(ratio[i].clone()),
            c / floor_cpu
        );
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let (mut rounds, mut dirs, mut deadline) = (20, vec![], false);
    loop {
        match args.first().map(String::as_str) {
            Some("-n") => {
                rounds = args[1].parse().expect("-n ROUNDS");
                args.drain(..2);
            }
            Some("--scripts") => {
                dirs.push(PathBuf::from(&args[1]));
                args.drain(..2);
            }
            Some("--deadline") => {
                deadline = true;
                args.remove(0);
            }
            _ => break,
        }
    }
    if dirs.is_empty() {
        dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("generated"));
    }
    if args.is_empty() {
        args.push("bash".into());
        for b in ["5.3/bash", "3.2.48/bash"] {
            let p = Path::new("/work/shared/bashes").join(b);
            if p.exists() {
                args.push(p.to_string_lossy().into_owned());
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let with = if deadline {
        " (with --deadline 60)"
    } else {
        ""
    };
    println!(
        "## supervisor + runner around `true`{with} against `bash -c true`, median of {rounds} rounds"
    );
    println!(
        "bash\tscripts\tfloor ms\tsupervisor+runner ms\trunner alone ms\tadded ms\tratio\tfloor cpu ms\tsupervisor+runner cpu ms\tcpu ratio"
    );
    for bash in &args {
        run(bash, rounds, &dirs, tmp.path(), deadline);
    }
}
