//! Signal bursts against generated/process_supervisor.sh (figures, not tests).
//!
//! `cargo run --release --example stress_signals [RUNS|-] [SUPERVISOR]`
//!
//! Each run starts the supervisor (a session of its own) on a harness that
//! sleeps, and once the harness runs sends 200 × TERM, INT and HUP, one kill
//! at a time (a burst of a few milliseconds, which overlaps the stop's first
//! steps). It counts, per bash, the runs where the supervisor's shell
//! crashed (SIGSEGV or SIGABRT: status 139 or 134), the runs that left no
//! receipt, and the runs that exited 2 (bash jumped to the top level and ran
//! the script's end), and the runs where it hung (lost the stop: KILLed after
//! 30 s). bash 3.2 to 4.2 crashed in their own signal handling;
//! 4.4 and later never did. RUNS defaults to 200 for the bashes before 4.4
//! and a tenth of that for the others; SUPERVISOR defaults to the generated
//! one (pass an older copy to compare).
//!
//! Bashes: every `/work/shared/bashes/*/bash` (or `/opt/bashes`), and the
//! paths in SHFORGE_TEST_BASHES.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Args: BASH SUPERVISOR DIR RUNS. Prints `STATUS run status receipt hung`.
const DRIVER: &str = r#"
b=$1 sup=$2 dir=$3 runs=$4
alive() {
    local st
    read -r st 2>/dev/null <"/proc/$1/stat" || return 1
    st=${st##*) }
    [ "${st%% *}" != Z ]
}
for ((r = 0; r < runs; r++)); do
    d=$dir/run$r
    mkdir -p "$d"
    setsid "$b" "$sup" --receipt "$d/r.json" --cgroup none -- \
        bash -c ': >"$1/ready"; exec sleep 30' harness "$d" 2>"$d/err" &
    s=$!
    while [ ! -e "$d/ready" ]; do sleep 0.005; done
    for ((k = 0; k < 200; k++)); do
        for sig in TERM INT HUP; do kill -s $sig "$s" 2>/dev/null; done
    done
    # Until the supervisor's shell is gone (a zombie: not yet waited for);
    # one that lost the stop hangs: KILLed after 30 s (counted as hung).
    for ((t = 0; t < 300; t++)); do
        alive "$s" || break
        sleep 0.1
    done
    hung=no
    alive "$s" && hung=yes
    # A receipt from the stop helper comes a moment after a crash.
    for ((t = 0; t < 500; t++)); do
        [ -e "$d/r.json" ] && break
        [ $hung = yes ] && break
        sleep 0.01
    done
    pkill -KILL -s "$s" 2>/dev/null
    wait "$s" 2>/dev/null
    st=$?
    rec=no
    [ -s "$d/r.json" ] && rec=yes
    echo "STATUS $r $st $rec $hung"
    rm -rf "$d"
done
"#;

fn bashes() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for base in ["/work/shared/bashes", "/opt/bashes"] {
        if let Ok(rd) = std::fs::read_dir(base) {
            let mut found: Vec<PathBuf> = rd
                .filter_map(|e| e.ok())
                .map(|e| e.path().join("bash"))
                .filter(|p| p.exists())
                .collect();
            found.sort();
            v.extend(found);
            break;
        }
    }
    if let Ok(extra) = std::env::var("SHFORGE_TEST_BASHES") {
        for p in extra.split(':').filter(|p| !p.is_empty()) {
            let p = PathBuf::from(p);
            if !v.contains(&p) {
                v.push(p);
            }
        }
    }
    v
}

fn version(bash: &Path) -> (u32, String) {
    let out = Command::new(bash)
        .args([
            "-c",
            "echo $((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1])) $BASH_VERSION",
        ])
        .output()
        .expect("bash runs");
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let (n, name) = text.split_once(' ').unwrap_or(("0", "?"));
    (n.parse().unwrap_or(0), name.to_owned())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // RUNS "-" (or none): the defaults.
    let runs: Option<u32> = args
        .get(1)
        .filter(|a| *a != "-")
        .map(|a| a.parse().expect("RUNS is a number or -"));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let sup = args
        .get(2)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("generated/process_supervisor.sh"));
    println!("supervisor: {}", sup.display());
    println!("bash        runs  crashed  no receipt  exit 2  hung");
    for bash in bashes() {
        let (v, name) = version(&bash);
        let n = runs.unwrap_or(if v < 404 { 200 } else { 20 });
        let dir = tempdir();
        let out = Command::new("bash")
            .args(["-c", DRIVER, "driver"])
            .arg(&bash)
            .arg(&sup)
            .arg(&dir)
            .arg(n.to_string())
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .expect("driver runs");
        let _ = std::fs::remove_dir_all(&dir);
        let (mut crashed, mut missing, mut two, mut hung, mut seen) = (0, 0, 0, 0, 0);
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() != 5 || f[0] != "STATUS" {
                continue;
            }
            seen += 1;
            match f[2] {
                "134" | "139" => crashed += 1,
                "2" => two += 1,
                _ => {}
            }
            if f[3] != "yes" {
                missing += 1;
            }
            if f[4] == "yes" {
                hung += 1;
            }
        }
        println!(
            "{name:<11} {seen:>4}  {crashed:>3}/{seen:<4} {missing:>5}/{seen:<4} {two:>3}/{seen:<4} {hung:>2}/{seen}"
        );
    }
}

fn tempdir() -> PathBuf {
    let base = std::env::temp_dir().join(format!("stress_signals.{}", std::process::id()));
    std::fs::create_dir_all(&base).expect("temp dir");
    base
}
