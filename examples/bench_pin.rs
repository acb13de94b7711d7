//! `shforge pin` for a Node harness against the plain `npm pack` of the
//! same packages: wall time, as a ratio (the floor is 1.0: pin packs the
//! same tarballs, then checks the registry's integrity, the layout, and
//! writes the specs).
//!
//! `cargo run --release --example bench_pin [-- NAME@VERSION [ARCH] [RUNS]]`
//! (default `gemini-cli@0.60.0 x86_64 3`). `SHFORGE_BIN` names the binary
//! (default: `target/release/shforge`, build it first). Both sides share
//! one private npm cache (`npm_config_cache`), warmed by a first untimed
//! run of each, so the figures compare the work, not the network; a
//! fresh empty artifacts dir per pin run. Needs npm and the registry.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let target = args.first().map_or("gemini-cli@0.60.0", String::as_str);
    let arch = args.get(1).map_or("x86_64", String::as_str);
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(3);
    let bin = std::env::var_os("SHFORGE_BIN").map_or_else(
        || {
            let t = std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(|| PathBuf::from("target"), PathBuf::from);
            t.join("release/shforge")
        },
        PathBuf::from,
    );
    let work = tempfile::tempdir().expect("a temp dir");
    let cache = work.path().join("npm-cache");

    // What the pin packs: its `source` lines say so; ask it once.
    let first_out = work.path().join("first");
    let art0 = work.path().join("a0");
    let o = Command::new(&bin)
        .args(["pin", target, "--arch", arch, "--out"])
        .arg(&first_out)
        .arg("--artifacts")
        .arg(&art0)
        .env("npm_config_cache", &cache)
        .output()
        .expect("run shforge pin");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let name = target.split('@').next().unwrap_or_default();
    let spec = std::fs::read_to_string(first_out.join(format!("installers/{name}.toml"))).unwrap();
    let version = target.rsplit('@').next().unwrap_or_default();
    let packages: Vec<String> = spec
        .lines()
        .filter_map(|l| l.trim().strip_prefix("source = \"npm pack "))
        .map(|s| s.trim_end_matches('"').to_owned())
        .filter(|s| s.ends_with(&format!("@{version}")))
        .collect();
    println!("bench_pin: {target} --arch {arch}: packages {packages:?}");

    let mut pin_t = Vec::new();
    let mut npm_t = Vec::new();
    for i in 0..=runs {
        let dest = work.path().join(format!("npm{i}"));
        std::fs::create_dir_all(&dest).unwrap();
        let t = Instant::now();
        for p in &packages {
            let s = Command::new("npm")
                .args(["pack", "--loglevel=warn", p, "--pack-destination"])
                .arg(&dest)
                .env("npm_config_cache", &cache)
                .output()
                .expect("npm pack");
            assert!(s.status.success());
        }
        let npm = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let s = Command::new(&bin)
            .args(["pin", target, "--arch", arch, "--out"])
            .arg(work.path().join(format!("out{i}")))
            .arg("--artifacts")
            .arg(work.path().join(format!("a{}", i + 1)))
            .env("npm_config_cache", &cache)
            .output()
            .expect("shforge pin");
        assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
        let pin = t.elapsed().as_secs_f64();
        if i > 0 {
            println!(
                "run {i}: npm pack {npm:.2} s, shforge pin {pin:.2} s, ratio {:.2}",
                pin / npm
            );
            npm_t.push(npm);
            pin_t.push(pin);
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (n, p) = (med(&mut npm_t), med(&mut pin_t));
    println!(
        "median: npm pack {n:.2} s, shforge pin {p:.2} s: pin/npm-pack = {:.2} (floor 1.0)",
        p / n
    );
}
