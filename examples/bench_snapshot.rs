//! Snapshot benchmark (figures, no assertions): the time to capture a real
//! one-session database (tests/fixtures/snapshot/opencode and kilo: a
//! 4 KiB main file, every row in a ~1.2 MB -wal), the whole of
//! `snapshot_db` (private copy, WAL recovery, one read transaction, JSON
//! parsing) plus serializing the document; and the JSONL harnesses for
//! comparison. Goal: <= 50 ms for a one-session DB.
//!
//! Run: `cargo run --release --example bench_snapshot [RUNS]` (default 31).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use shforge::snapshot::{self, Kind};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/snapshot")
        .join(name)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(31);
    let cases = [
        (Kind::OpenCode, fixture("opencode/opencode.db")),
        (Kind::Kilo, fixture("kilo/kilo.db")),
        (Kind::ClaudeCode, fixture("claude-code")),
        (Kind::Pi, fixture("pi")),
        (Kind::Codex, fixture("codex")),
    ];
    println!("{runs} runs each, median (min .. max)");
    for (kind, path) in cases {
        let mut times = Vec::with_capacity(runs);
        let mut bytes = 0;
        for _ in 0..runs {
            let start = Instant::now();
            let snap = match kind {
                Kind::OpenCode | Kind::Kilo => snapshot::snapshot_db(kind, &path),
                _ => snapshot::snapshot_dir(kind, &path),
            }
            .expect("fixture snapshot");
            bytes = snap.to_json().len();
            times.push(start.elapsed());
        }
        let (min, max) = (times.iter().min().copied(), times.iter().max().copied());
        println!(
            "{:<12} {:>8.2} ms  ({:.2} .. {:.2})  document {} bytes",
            kind.name(),
            median(times).as_secs_f64() * 1e3,
            min.unwrap_or_default().as_secs_f64() * 1e3,
            max.unwrap_or_default().as_secs_f64() * 1e3,
            bytes
        );
    }
}
