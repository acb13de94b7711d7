//! Start-up cost of supervisor + runner around a trivial CLI (issue 24 part 5),
//! figures only (never a timed test):
//!
//! For each bash, paired rounds: the floor `BASH -c true`, then
//! `BASH process_supervisor.sh --receipt FILE -- BASH harness_runner.sh
//! PARAMS` whose parameter file runs `true` in direct mode, then the runner
//! alone on the same file. Wall time of each; the median of each and the
//! median of the pair ratios are printed, so a machine whose speed drifts
//! between pairs still compares like with like. The supervisor is started
//! as a child of this program (not a group leader), so it regroups itself
//! as it would under any caller without job control.
//!
//! Bashes: the arguments, else `bash` from PATH and 5.3 and 3.2.48 from
//! /work/shared/bashes when present.
//!
//! Run: `cargo run --release --example bench_start [-n ROUNDS] [BASH...]`
//! (default 20 rounds).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use shforge::RunnerParams;

/// Wall milliseconds of one run of `cmd` (it must succeed).
fn ms(cmd: &mut Command, what: &str) -> f64 {
    let t = Instant::now();
    let st = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let took = t.elapsed().as_secs_f64() * 1000.0;
    assert!(st.success(), "{what} failed: {st}");
    took
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn generated(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("generated")
        .join(name)
}

fn run(bash: &str, rounds: usize, dir: &Path) {
    let params = dir.join("true.sh");
    let text = RunnerParams::direct(["true"]).render().unwrap();
    std::fs::write(&params, text.as_str()).unwrap();
    let (sup, runner) = (
        generated("process_supervisor.sh"),
        generated("harness_runner.sh"),
    );
    let receipt = dir.join("receipt.json");
    let (mut floor, mut both, mut alone, mut ratio) = (vec![], vec![], vec![], vec![]);
    for _ in 0..rounds {
        let f = ms(Command::new(bash).args(["-c", "true"]), "bash -c true");
        let s = ms(
            Command::new(bash)
                .arg(&sup)
                .arg("--receipt")
                .arg(&receipt)
                .arg("--")
                .arg(bash)
                .arg(&runner)
                .arg(&params),
            "supervisor + runner",
        );
        let r = ms(Command::new(bash).arg(&runner).arg(&params), "runner");
        floor.push(f);
        both.push(s);
        alone.push(r);
        ratio.push(s / f);
    }
    let version = Command::new(bash)
        .args(["-c", "printf %s \"$BASH_VERSION\""])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    println!(
        "{version}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}",
        median(floor.clone()),
        median(both.clone()),
        median(alone.clone()),
        median(both) - median(floor),
        median(ratio)
    );
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut rounds = 20;
    if args.first().map(String::as_str) == Some("-n") {
        rounds = args[1].parse().expect("-n ROUNDS");
        args.drain(..2);
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
    let dir = tempfile::tempdir().unwrap();
    println!(
        "## supervisor + runner around `true` against `bash -c true`, median of {rounds} rounds"
    );
    println!("bash\tfloor ms\tsupervisor+runner ms\trunner alone ms\tadded ms\tratio");
    for bash in &args {
        run(bash, rounds, dir.path());
    }
}
