//! `shforge params` benchmark (figures, no assertions): the time to turn a
//! JSON object of 10,000 and of 100,000 keys into a parameter file, and
//! their ratio. Linear work gives a ratio near 10; the duplicate-key check
//! it replaced (a scan of the keys seen so far) gave near 100 (100,000 keys
//! took 12 s). Measured on 2 shared cores: 8.9 ms and 128.6 ms, ratio 14.5;
//! the old scan, debug build, through the CLI: 1.1 s and 117 s, ratio 106.
//!
//! Run: `cargo run --release --example bench_params`

use std::time::{Duration, Instant};

/// `{"K0":"v0","K1":["a","b"],...}`: scalars and arrays alternate.
fn object(keys: usize) -> String {
    let mut s = String::from("{");
    for i in 0..keys {
        if i > 0 {
            s.push(',');
        }
        if i % 2 == 0 {
            s.push_str(&format!("\"K{i}\":\"value {i} it's\""));
        } else {
            s.push_str(&format!("\"K{i}\":[\"a\",\"b {i}\"]"));
        }
    }
    s.push('}');
    s
}

/// The best of three runs (the least disturbed by other work on the host).
fn time(json: &str) -> Duration {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            let out = shforge::shell_assignments(json).expect("a valid object");
            std::hint::black_box(out);
            start.elapsed()
        })
        .min()
        .expect("three runs")
}

fn main() {
    let small = time(&object(10_000));
    let large = time(&object(100_000));
    println!(
        "params, 10,000 keys:  {:>8.1} ms",
        small.as_secs_f64() * 1e3
    );
    println!(
        "params, 100,000 keys: {:>8.1} ms",
        large.as_secs_f64() * 1e3
    );
    println!(
        "ratio 100k/10k: {:.1} (linear: about 10; quadratic: about 100)",
        large.as_secs_f64() / small.as_secs_f64()
    );
}
