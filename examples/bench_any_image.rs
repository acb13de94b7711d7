//! Any image, in figures (not a test): a harness's install and rollout in
//! the musl-only test root (the private glibc runtime) against the same on
//! this glibc host, side by side in one run, and the runtime artifact's size.
//!
//! `cargo run --release --example bench_any_image [NAME...] [-- ROOT]`
//! (root: `shforge smoke --root` needs a chroot and a PID namespace).
//! NAME defaults to `pi opencode`; ROOT to `/var/cache/shforge/roots/musl`
//! (`sh tests/roots/build.sh musl`). The artifacts come from
//! `/var/cache/shforge/artifacts` (or `SHFORGE_SMOKE_ARTIFACTS`), fetched
//! there by `shforge fetch` when missing.
//!
//! Each figure is the smoke's own measurement (its table: fresh and reused
//! install, events-mode rollout); the ratio is root / host. Targets of
//! issue 21: install on musl ≤ 1.5× bookworm's, runtime ≤ 3 MB compressed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The smoke table's figures for one harness: (fresh install s, reused s,
/// events rollout s).
type Figures = (f64, f64, f64);

fn shforge() -> PathBuf {
    let exe = std::env::current_exe().expect("the example's path");
    // target/{debug,release}/examples/bench_any_image → target/debug/shforge
    let target = exe.ancestors().nth(3).expect("target dir").to_path_buf();
    let bin = target.join("debug/shforge");
    assert!(
        bin.is_file(),
        "{} missing: run `cargo build` first",
        bin.display()
    );
    bin
}

/// Seconds in "8.2 s" or "8.2 s / 0.0 s" (the first, or the one after `/`).
fn seconds(cell: &str, second: bool) -> f64 {
    let part = if second {
        cell.split('/').nth(1).unwrap_or("")
    } else {
        cell.split('/').next().unwrap_or("")
    };
    part.trim()
        .trim_end_matches('s')
        .trim()
        .parse()
        .unwrap_or(f64::NAN)
}

fn smoke(name: &str, root: Option<&Path>, artifacts: &Path, work: &Path) -> Option<Figures> {
    let mut c = Command::new(shforge());
    c.args(["smoke", name, "--artifacts"])
        .arg(artifacts)
        .arg("--work")
        .arg(work);
    if let Some(r) = root {
        c.arg("--root").arg(r);
    }
    let out = c.output().expect("shforge smoke runs");
    let table = String::from_utf8_lossy(&out.stdout);
    let row = table
        .lines()
        .find(|l| l.starts_with(&format!("| {name} | events |")))?;
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // | name | mode | install fresh / reused | rollout | ...
    Some((
        seconds(cells[3], false),
        seconds(cells[3], true),
        seconds(cells[4], false),
    ))
}

fn runtime_size(artifacts: &Path) -> Option<u64> {
    std::fs::read_dir(artifacts)
        .ok()?
        .flatten()
        .find(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("glibc-runtime-")
        })
        .and_then(|e| e.metadata().ok())
        .map(|m| m.len())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (names, root) = match args.iter().position(|a| a == "--") {
        Some(i) => (args[..i].to_vec(), args.get(i + 1).map(PathBuf::from)),
        None => (args.clone(), None),
    };
    let names = if names.is_empty() {
        vec!["pi".to_owned(), "opencode".to_owned()]
    } else {
        names
    };
    let root = root.unwrap_or_else(|| PathBuf::from("/var/cache/shforge/roots/musl"));
    let artifacts = std::env::var_os("SHFORGE_SMOKE_ARTIFACTS").map_or_else(
        || PathBuf::from("/var/cache/shforge/artifacts"),
        PathBuf::from,
    );
    let work = std::env::temp_dir().join("shforge-bench-any-image");
    match runtime_size(&artifacts) {
        Some(n) => println!(
            "private glibc runtime: {n} bytes compressed ({:.2} MB; target <= 3 MB)",
            n as f64 / 1e6
        ),
        None => println!("private glibc runtime: not in {}", artifacts.display()),
    }
    println!(
        "| harness | host fresh / reused | musl root fresh / reused | fresh ratio | host rollout | root rollout | rollout ratio |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for name in &names {
        let host = smoke(name, None, &artifacts, &work.join(format!("{name}-host")));
        let musl = smoke(
            name,
            Some(&root),
            &artifacts,
            &work.join(format!("{name}-root")),
        );
        match (host, musl) {
            (Some(h), Some(m)) => println!(
                "| {name} | {:.1} s / {:.1} s | {:.1} s / {:.1} s | {:.2}x | {:.1} s | {:.1} s | {:.2}x |",
                h.0,
                h.1,
                m.0,
                m.1,
                m.0 / h.0,
                h.2,
                m.2,
                m.2 / h.2
            ),
            _ => println!(
                "| {name} | smoke failed on the host or in the root: run `shforge smoke` to see why |||||| "
            ),
        }
    }
}
