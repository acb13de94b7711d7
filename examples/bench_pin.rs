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
//!
//! A Python harness (`mini-swe-agent@2.4.5 x86_64 1`: its bundle is built
//! from a wheel lock) is measured against `pip download` of the same
//! locked wheels (`--require-hashes --no-deps --only-binary :all:`, no
//! cache, the lock pin wrote): the floor is getting the bytes; pin also
//! locks, installs, compiles the .pyc files and writes the gzip -9 bundle.
//! Both sides start cold (pin's uv cache is private to each run).

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

    let name = target.split('@').next().unwrap_or_default();
    let shipped_lock = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("installers/bundles/{name}/requirements.txt"));
    if shipped_lock.is_file() {
        return python(&bin, target, arch, runs, work.path());
    }
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

/// The Python side: `shforge pin` against `pip download` of `lock`'s wheels.
fn python(bin: &std::path::Path, target: &str, arch: &str, runs: usize, work: &std::path::Path) {
    let name = target.split('@').next().unwrap_or_default();
    println!("bench_pin: {target} --arch {arch}: a Python bundle");
    let mut pin_t = Vec::new();
    let mut dl_t = Vec::new();
    for i in 0..runs {
        // The pin first: the wheels pip downloads are those of its lock.
        let art = work.join(format!("pa{i}"));
        let out = work.join(format!("pout{i}"));
        std::fs::create_dir_all(&art).unwrap();
        let t = Instant::now();
        let s = Command::new(bin)
            .args(["pin", target, "--arch", arch, "--out"])
            .arg(&out)
            .arg("--artifacts")
            .arg(&art)
            .output()
            .expect("shforge pin");
        assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
        let pin = t.elapsed().as_secs_f64();
        let _ = std::fs::remove_dir_all(&art);
        let lock = out.join(format!("installers/bundles/{name}/requirements.txt"));
        let dest = work.join(format!("wheels{i}"));
        let t = Instant::now();
        let s = Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-cache-dir",
                "--no-deps",
                "--require-hashes",
                "--only-binary",
                ":all:",
                "--python-version",
                "3.11",
                // pip takes only the tags named: manylinux_2_28 and the
                // older ones it covers.
                "--platform",
                "manylinux_2_28_x86_64",
                "--platform",
                "manylinux_2_17_x86_64",
                "--platform",
                "manylinux2014_x86_64",
                "--platform",
                "manylinux_2_5_x86_64",
                "--platform",
                "manylinux1_x86_64",
                "-r",
            ])
            .arg(&lock)
            .arg("-d")
            .arg(&dest)
            .output()
            .expect("pip download");
        assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
        let dl = t.elapsed().as_secs_f64();
        let _ = std::fs::remove_dir_all(&dest);
        println!(
            "run {}: pip download {dl:.2} s, shforge pin {pin:.2} s, ratio {:.2}",
            i + 1,
            pin / dl
        );
        dl_t.push(dl);
        pin_t.push(pin);
    }
    dl_t.sort_by(f64::total_cmp);
    pin_t.sort_by(f64::total_cmp);
    let (d, p) = (dl_t[dl_t.len() / 2], pin_t[pin_t.len() / 2]);
    println!(
        "median: pip download {d:.2} s, shforge pin {p:.2} s: pin/pip-download = {:.2} (floor 1.0)",
        p / d
    );
}
