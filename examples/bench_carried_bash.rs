//! The carried bash's cost, in figures (not a test): its artifact size, and
//! the time of the bootstrap with `--carried-bash` plus the install of the
//! carried bash into a fresh prefix (run by the carried file itself, as the
//! host does) against the bootstrap alone, on this host; the bootstrap's
//! PATH holds no bash (only `env`, `timeout` and `printf`), the installer's
//! is /usr/bin:/bin.
//!
//! `cargo run --release --example bench_carried_bash [-n ROUNDS]`
//! The artifact comes from `/var/cache/shforge/artifacts` (or
//! `SHFORGE_SMOKE_ARTIFACTS`): `shforge fetch bash --into DIR` makes it.
//! Each figure is the median of ROUNDS (default 9) wall times.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pinned artifact of this arch: (its path in the spec, the file).
fn artifact() -> (String, PathBuf) {
    let (_, text) = shforge::installer::RUNTIME_SPECS
        .iter()
        .find(|(n, _)| *n == "bash")
        .expect("the bash spec");
    let spec = shforge::installer::InstallerSpec::from_toml(text).expect("bash.toml parses");
    let a = spec
        .artifacts
        .iter()
        .find(|a| a.arch == std::env::consts::ARCH)
        .expect("an artifact for this arch");
    let dir = std::env::var_os("SHFORGE_SMOKE_ARTIFACTS").map_or_else(
        || PathBuf::from("/var/cache/shforge/artifacts"),
        PathBuf::from,
    );
    let file = dir.join(&a.path);
    assert!(
        file.is_file(),
        "{} missing: `shforge fetch bash --into {}`",
        file.display(),
        dir.display()
    );
    (a.path.clone(), file)
}

/// Run `argv` with only PATH set; panics on a non-zero status.
fn run(argv: &[&Path], path: &Path) {
    let st = Command::new(argv[0])
        .args(&argv[1..])
        .env_clear()
        .env("PATH", path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("starts");
    assert!(st.success(), "{argv:?}: {st}");
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = match args.as_slice() {
        [n, r] if n == "-n" => r.parse().expect("-n ROUNDS"),
        [] => 9,
        _ => panic!("usage: bench_carried_bash [-n ROUNDS]"),
    };
    let (art_path, art) = artifact();
    let size = std::fs::metadata(&art).expect("artifact").len();
    let work = tempfile::tempdir().expect("tempdir");
    // A PATH without bash: env and timeout (the probe's), printf.
    let bin = work.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for t in ["env", "timeout", "printf"] {
        std::os::unix::fs::symlink(Path::new("/usr/bin").join(t), bin.join(t)).unwrap();
    }
    let src = work.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::copy(&art, src.join(&art_path)).unwrap();
    let carried = src.join(&art_path);
    let boot = root().join("generated/bootstrap.sh");
    let inst = root().join("generated/installers/bash.sh");
    let sh = Path::new("/bin/sh");
    // The installer needs the image's tools (mkdir, sha256sum, ...).
    let tools = Path::new("/usr/bin:/bin");
    let opt = Path::new("--carried-bash");
    let (mut alone, mut with, mut reuse) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..rounds {
        let t = Instant::now();
        run(&[sh, &boot, opt, &carried], &bin);
        alone.push(t.elapsed().as_secs_f64());
        let prefix = work.path().join(format!("p{i}"));
        let t = Instant::now();
        run(&[sh, &boot, opt, &carried], &bin);
        run(
            &[
                &carried,
                &inst,
                Path::new("--prefix"),
                &prefix,
                Path::new("--source-dir"),
                &src,
            ],
            tools,
        );
        with.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        run(&[sh, &boot, opt, &carried], &bin);
        run(
            &[
                &carried,
                &inst,
                Path::new("--prefix"),
                &prefix,
                Path::new("--source-dir"),
                &src,
            ],
            tools,
        );
        reuse.push(t.elapsed().as_secs_f64());
    }
    let (a, w, r) = (median(alone), median(with), median(reuse));
    println!("carried bash {art_path}: {size} bytes");
    println!("bootstrap alone (carried bash chosen): {:.1} ms", a * 1e3);
    println!(
        "bootstrap + fresh install of the carried bash: {:.1} ms ({:.2}x the bootstrap alone)",
        w * 1e3,
        w / a
    );
    println!(
        "bootstrap + reused install: {:.1} ms ({:.2}x the bootstrap alone)",
        r * 1e3,
        r / a
    );
}
