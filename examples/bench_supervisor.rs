//! Benchmarks of generated/process_supervisor.sh (figures, not tests).
//!
//! `cargo run --release --example bench_supervisor [RUNS]` (root: each bash
//! runs in a PID namespace of its own).
//!
//! 1. Forced stop: a harness tree of 10 processes while ~1,100 unrelated
//!    processes exist; wall time from the TERM sent to the supervisor to its
//!    exit (the receipt is written just before), median over RUNS (default 7),
//!    next to one `ps -e -o pid,ppid,pgid` timed in the same run.
//! 2. Idle cost: CPU ticks of the supervisor's processes between 1 s and 9 s
//!    of a harness that sleeps 10 s (the waiting itself), and the whole run's
//!    CPU (start, wait, sweep of ~1,100 processes) as a share of one core.
//! 3. `--end-services` on a 1 MB receipt (4,000 services whose PIDs hold
//!    nobody): wall time, median of RUNS, next to a bare
//!    `while IFS= read -r l; do :; done` over the same file by the same bash.
//!
//! Bashes: the `bash` on PATH, bash 3.2.48 from /work/shared/bashes (or
//! /opt/bashes) when present, and every path in SHFORGE_TEST_BASHES.

use std::path::PathBuf;
use std::process::Command;

/// Runs inside the namespace. Args: SUPERVISOR_BASH SUPERVISOR DIR RUNS MODE
/// (MODE `nowindow`: a file mounted over /proc/loadavg turns the supervisor's
/// PID window off, so every scan reads every /proc entry).
/// Prints `RUN stop_ms ps_ms` per run, `PROCS n`, `WAITTICKS ticks ms` (the
/// supervisor's processes between 1 s and 9 s), `FIXEDCPU ms` and
/// `CHILDCPU ms wall_ms` (the whole 10 s run).
const DRIVER: &str = r#"
sup_bash=$1 sup=$2 dir=$3 runs=$4 mode=$5
cd "$dir" || exit 1
if [ "$mode" = nowindow ]; then
    mount --bind /dev/null /proc/loadavg || echo "NOTE cannot mount over /proc/loadavg"
fi
for ((i = 0; i < 1100; i++)); do sleep 100000 & done
cat >harness.sh <<'EOF'
for i in 1 2 3 4 5 6 7 8 9; do sleep 100000 & done
: >"$1/ready"
wait
EOF
ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
for ((r = 0; r < runs; r++)); do
    rm -f ready receipt.json
    "$sup_bash" "$sup" --receipt "$dir/receipt.json" -- bash "$dir/harness.sh" "$dir" &
    s=$!
    while [ ! -e ready ]; do sleep 0.01; done
    sleep 0.2
    t0=${EPOCHREALTIME/./}
    kill -s TERM "$s"
    wait "$s"
    t1=${EPOCHREALTIME/./}
    [ -e receipt.json ] || echo "NO RECEIPT"
    grep -q '"cleanup_confirmed": true' receipt.json || echo "NOT CONFIRMED $(cat receipt.json)"
    p0=${EPOCHREALTIME/./}
    ps -e -o pid,ppid,pgid >/dev/null
    p1=${EPOCHREALTIME/./}
    echo "RUN $(((t1 - t0) / 1000)).$(((t1 - t0) % 1000 / 100)) $(((p1 - p0) / 1000)).$(((p1 - p0) % 1000 / 100))"
done
n=0
for p in /proc/[0-9]*; do n=$((n + 1)); done
echo "PROCS $n"
# Idle: the supervisor waits 10 s on a sleeping harness. `times` gives the
# CPU of reaped children (the supervisor, its timer and the sleep).
child_cpu_ms() {
    local t m s sec frac cu cs
    times >"$dir/times"
    { read -r _ _; read -r cu cs; } <"$dir/times"
    cpu=0
    for t in "$cu" "$cs"; do
        m=${t%%m*} s=${t#*m}
        s=${s%s} sec=${s%.*} frac=${s#*.}
        cpu=$((cpu + 10#$m * 60000 + 10#$sec * 1000 + 10#$frac))
    done
}
# CPU ticks (utime + stime) of every process running the supervisor script
# (the first shell, the regrouped supervisor, its timer subshell).
sup_ticks() {
    local p a whole rest hit
    ticks=0
    for p in /proc/[0-9]*; do
        [ "$p" = "/proc/$$" ] && continue
        hit=
        while IFS= read -r -d '' a; do [ "$a" = "$sup" ] && hit=1; done 2>/dev/null <"$p/cmdline"
        [ -n "$hit" ] || continue
        whole=
        IFS= read -r -d '' whole 2>/dev/null <"$p/stat"
        rest=${whole##*) }
        set -- $rest
        ticks=$((ticks + ${12} + ${13}))
    done
}
child_cpu_ms
c0=$cpu
w0=${EPOCHREALTIME/./}
"$sup_bash" "$sup" --receipt "$dir/idle.json" --deadline 60 -- sleep 10 &
s=$!
sleep 1
sup_ticks
k0=$ticks t0=${EPOCHREALTIME/./}
sleep 8
sup_ticks
k1=$ticks t1=${EPOCHREALTIME/./}
echo "WAITTICKS $((k1 - k0)) $(((t1 - t0) / 1000))"
wait "$s"
w1=${EPOCHREALTIME/./}
child_cpu_ms
c1=$cpu
# The same with a harness that exits at once: the fixed cost of start and sweep.
"$sup_bash" "$sup" --receipt "$dir/idle.json" --deadline 60 -- true
child_cpu_ms
echo "FIXEDCPU $((cpu - c1))"
cpu=$c1
child_cpu_ms
echo "CHILDCPU $((cpu - c0)) $(((w1 - w0) / 1000))"
"#;

/// Median wall time of `runs` runs of `c()`, in milliseconds.
fn timed(runs: usize, c: impl Fn() -> Command) -> f64 {
    let mut v: Vec<f64> = (0..runs)
        .map(|_| {
            let t = std::time::Instant::now();
            let _ = c().output().expect("bash runs");
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    median(&mut v)
}

/// Section 3: the receipt reader against a bare read loop.
fn bench_reader(bashes: &[String], sup: &std::path::Path, runs: usize) {
    let dir = tempfile::tempdir().expect("scratch dir");
    let receipt = dir.path().join("big.json");
    let mut text = String::from(
        "{\"cleanup_confirmed\": true, \"return_code\": 0, \"error\": null, \"timed_out\": false, \"containment\": \"proc\",\n\"stop\": null,\n\"zombies\": [],\n\"marker\": \"tok\",\n\"services\": [\n",
    );
    for i in 0..4000 {
        let sep = if i < 3999 { "," } else { "" };
        text.push_str(&format!(
            "{{\"pid\": {}, \"start_time\": 1, \"argv0\": \"{}\"}}{sep}\n",
            4_000_000 + i,
            "0".repeat(200)
        ));
    }
    text.push_str("]}\n");
    std::fs::write(&receipt, &text).expect("receipt");
    println!(
        "\n{:<34} {:>12} {:>12} {:>7}  ({} bytes)",
        "bash",
        "reader ms",
        "read loop ms",
        "ratio",
        text.len()
    );
    for bash in bashes {
        let reader = timed(runs, || {
            let mut c = Command::new(bash);
            c.arg(sup).arg("--end-services").arg(&receipt);
            c
        });
        let bare = timed(runs, || {
            let mut c = Command::new(bash);
            c.args(["-c", "while IFS= read -r l; do :; done <\"$1\"", "bare"])
                .arg(&receipt);
            c
        });
        println!(
            "{:<34} {:>12.0} {:>12.0} {:>7.1}",
            bash,
            reader,
            bare,
            reader / bare
        );
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The bashes to measure: `bash`, a 3.2 if one is here, and those of
/// `SHFORGE_TEST_BASHES`.
fn bashes_to_bench() -> Vec<String> {
    let mut bashes = vec!["bash".to_owned()];
    for b in [
        "/work/shared/bashes/3.2.48/bash",
        "/opt/bashes/3.2.48/bin/bash",
    ] {
        if std::path::Path::new(b).exists() {
            bashes.push(b.to_owned());
            break;
        }
    }
    if let Ok(extra) = std::env::var("SHFORGE_TEST_BASHES") {
        for b in extra.split(':').filter(|b| !b.is_empty()) {
            if !bashes.iter().any(|x| x == b) {
                bashes.push(b.to_owned());
            }
        }
    }
    bashes
}

/// The driver's report: each run's stop and ps times, the idle CPU share
/// and the process count; other lines are printed as they come.
fn read_driver(bash: &str, text: &str) -> (Vec<f64>, Vec<f64>, String, String) {
    let (mut stops, mut pss) = (Vec::new(), Vec::new());
    let mut idle = String::from("?");
    let mut procs = String::from("?");
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["RUN", s, p] => {
                stops.push(s.parse::<f64>().unwrap_or(f64::NAN));
                pss.push(p.parse::<f64>().unwrap_or(f64::NAN));
            }
            ["CHILDCPU", cpu, wall] => {
                let cpu: f64 = cpu.parse().unwrap_or(f64::NAN);
                let wall: f64 = wall.parse().unwrap_or(f64::NAN);
                idle = format!("{:.3}%", 100.0 * cpu / wall);
            }
            ["PROCS", n] => procs = n.to_string(),
            ["WAITTICKS", ticks, ms] => {
                let ticks: f64 = ticks.parse().unwrap_or(f64::NAN);
                let ms: f64 = ms.parse().unwrap_or(f64::NAN);
                println!(
                    "  {bash}: while the harness sleeps: {ticks} ticks (10 ms) in {ms} ms = {:.3}% of a core",
                    100.0 * ticks * 10.0 / ms
                );
            }
            ["FIXEDCPU", ms] => {
                println!("  {bash}: start + sweep of an instant harness: {ms} ms CPU")
            }
            _ => println!("  {line}"),
        }
    }
    (stops, pss, idle, procs)
}

fn main() {
    if std::env::args().nth(2).as_deref() == Some("reader") {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let bashes: Vec<String> = std::env::var("SHFORGE_TEST_BASHES")
            .unwrap_or_else(|_| "bash".into())
            .split(':')
            .map(str::to_owned)
            .collect();
        bench_reader(&bashes, &root.join("generated/process_supervisor.sh"), 5);
        return;
    }
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(7)
        .max(5);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let sup = root.join("generated/process_supervisor.sh");
    let bashes = bashes_to_bench();
    println!(
        "{:<34} {:>9} {:>9} {:>7} {:>9} {:>6}",
        "bash", "stop ms", "ps ms", "ratio", "idle cpu", "procs"
    );
    let modes = [("window", ""), ("nowindow", " (no PID window)")];
    for (bash, (mode, label)) in bashes
        .iter()
        .flat_map(|b| modes.iter().map(move |m| (b, *m)))
    {
        let dir = std::env::temp_dir().join(format!("bench_supervisor.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let out = Command::new("unshare")
            .args([
                "--pid",
                "--fork",
                "--mount-proc",
                "bash",
                "-c",
                DRIVER,
                "driver",
            ])
            .arg(bash)
            .arg(&sup)
            .arg(&dir)
            .arg(runs.to_string())
            .arg(mode)
            .output()
            .expect("unshare runs (needs root)");
        let (mut stops, mut pss, idle, procs) =
            read_driver(bash, &String::from_utf8_lossy(&out.stdout));
        let _ = std::fs::remove_dir_all(&dir);
        if stops.is_empty() {
            println!(
                "{bash}: no figures\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            continue;
        }
        let s = median(&mut stops);
        let p = median(&mut pss);
        println!(
            "{:<34} {:>9.1} {:>9.1} {:>7.2} {:>9} {:>6}",
            format!("{bash}{label}"),
            s,
            p,
            s / p,
            idle,
            procs
        );
    }
    println!(
        "stop ms: median wall time, TERM to the supervisor -> its exit (receipt written), over {runs} runs;"
    );
    println!(
        "ps ms: one `ps -e -o pid,ppid,pgid` in the same run; idle cpu: share of one core while the harness sleeps 10 s"
    );
    bench_reader(&bashes, &sup, runs);
}
