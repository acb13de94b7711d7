//! Install speed against the hand floor (issue 24), figures only:
//!
//! For each named shipped spec whose pinned artifacts (x86_64 glibc) are in
//! $SHFORGE_ARTIFACTS (default /var/cache/shforge/artifacts), paired runs,
//! floor then installer, each into a fresh directory:
//!
//! - floor: `sha256sum` of the artifacts, `tar -xzf` of each into one
//!   directory, then the installed entry's check (`--version`), all in one
//!   `sh -c`;
//! - fresh: the generated installer (`--source-dir`) into an empty
//!   prefix;
//! - reuse: the installer again on that prefix, against the bare entry check
//!   run by hand, three of each, interleaved (the installer's own reuse cost
//!   is the difference of their medians: a Node entry's own start varies by
//!   more than the installer's whole reuse costs).
//!
//! Every timed command starts after a sync(2), so neither side pays for
//! the writeback of what the other wrote or removed, and the pairs alternate
//! which side runs first.
//!
//! CPU is user + sys of the children (getrusage), printed with user time
//! alone too: the system time of creating tens of thousands of files varies
//! several-fold between identical runs on a shared disk, the user time does
//! not. Wall is elapsed; each
//! ratio is taken pair by pair and the median printed, so a machine whose
//! speed drifts between pairs still compares like with like.
//!
//! $SHFORGE_INSTALLERS names another directory of generated installers.
//!
//! Run: `cargo run --release --example bench_install [-n RUNS] [SPEC...]`
//! (default: pi opencode, 3 pairs).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use shforge::installer::Installer;

/// Wall and CPU seconds of one finished command.
#[derive(Clone, Copy)]
struct Cost {
    wall: f64,
    cpu: f64,
    user: f64,
}

/// CPU seconds (user + sys, and user alone) of all reaped children so far.
fn children_cpu() -> (f64, f64) {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (t(ru.ru_utime) + t(ru.ru_stime), t(ru.ru_utime))
}

/// Runs `cmd` to its end (it must succeed) and returns its cost.
fn timed(cmd: &mut Command, what: &str) -> Cost {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
    let cpu0 = children_cpu();
    let t = Instant::now();
    let o = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).output();
    let wall = t.elapsed().as_secs_f64();
    let o = o.unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        o.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let cpu1 = children_cpu();
    Cost {
        wall,
        cpu: cpu1.0 - cpu0.0,
        user: cpu1.1 - cpu0.1,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The pinned artifacts an x86_64 glibc install of the spec selects (by
/// name: the other builds and the private runtime's are named for theirs).
fn selected(inst: &Installer) -> Vec<String> {
    inst.artifacts()
        .iter()
        .map(|a| a.path().to_owned())
        .filter(|p| {
            !["arm64", "musl", "-prepared", "glibc-runtime"]
                .iter()
                .any(|w| p.contains(w))
        })
        .collect()
}

struct Bench<'a> {
    name: &'a str,
    script: PathBuf,
    artifacts: PathBuf,
    files: Vec<String>,
    dir: tempfile::TempDir,
}

impl Bench<'_> {
    fn home(&self) -> PathBuf {
        let h = self.dir.path().join("home");
        std::fs::create_dir_all(h.join("tmp")).unwrap();
        h
    }

    fn install(&self, prefix: &Path) -> Cost {
        let home = self.home();
        timed(
            Command::new("bash")
                .arg(&self.script)
                .arg("--prefix")
                .arg(prefix)
                .arg("--source-dir")
                .arg(&self.artifacts)
                .env("HOME", &home)
                .env("TMPDIR", home.join("tmp")),
            self.name,
        )
    }

    /// sha256sum + tar -xzf of every artifact + the entry check.
    fn floor(&self, out: &Path, entry: &Path) -> Cost {
        std::fs::create_dir_all(out).unwrap();
        let home = self.home();
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(
                r#"out=$1 entry=$2; shift 2
                sha256sum "$@" >/dev/null || exit 1
                for a; do tar -xzf "$a" -C "$out" || exit 1; done
                exec "$entry" --version"#,
            )
            .arg("floor")
            .arg(out)
            .arg(entry)
            .args(self.files.iter().map(|f| self.artifacts.join(f)))
            .env("HOME", &home)
            .env("TMPDIR", home.join("tmp"));
        timed(&mut cmd, "floor")
    }

    /// The entry's check as the installer runs it on a reuse: in a fresh,
    /// empty home with the XDG dirs and working directory it gives the entry
    /// (the same table as `entry_run` in templates/installer/entry.sh).
    fn entry_check(&self, entry: &Path) -> Cost {
        let fresh = tempfile::tempdir_in(self.dir.path()).unwrap();
        let home = fresh.path();
        std::fs::create_dir_all(home.join("tmp")).unwrap();
        let mut cmd = Command::new(entry);
        cmd.arg("--version").current_dir(home).env("HOME", home);
        for (var, dir) in [
            ("TMPDIR", "tmp"),
            ("TMP", "tmp"),
            ("TEMP", "tmp"),
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_CACHE_HOME", "cache"),
            ("XDG_DATA_HOME", "data"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_RUNTIME_DIR", "runtime"),
        ] {
            cmd.env(var, home.join(dir));
        }
        timed(&mut cmd, "entry check")
    }
}

/// $SHFORGE_INSTALLERS, default generated/installers (another copy, to
/// compare an older script with the same run's floor).
fn installers() -> PathBuf {
    std::env::var_os("SHFORGE_INSTALLERS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("generated/installers"),
        PathBuf::from,
    )
}

fn entry_path(script: &Path, prefix: &Path, artifacts: &Path) -> PathBuf {
    let o = Command::new("bash")
        .arg(script)
        .arg("--prefix")
        .arg(prefix)
        .arg("--source-dir")
        .arg(artifacts)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = String::from_utf8_lossy(&o.stdout);
    PathBuf::from(s.lines().last().unwrap_or_default())
}

fn run(name: &str, runs: usize, artifacts: &Path) {
    let text = shforge::installer::HARNESS_SPECS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no shipped spec {name}"))
        .1;
    let inst = Installer::from_toml(text).unwrap();
    let files = selected(&inst);
    if files.iter().any(|f| !artifacts.join(f).exists()) {
        println!(
            "{name}\tskipped: not all of {files:?} in {}",
            artifacts.display()
        );
        return;
    }
    let b = Bench {
        name,
        script: installers().join(format!("{name}.sh")),
        artifacts: artifacts.to_owned(),
        files,
        dir: tempfile::tempdir().unwrap(),
    };
    // One install kept for the floor's entry check (warms the caches too).
    let kept = b.dir.path().join("kept");
    let entry = entry_path(&b.script, &kept, artifacts);
    let (mut wall, mut cpu, mut user, mut reuse_own, mut fresh_cpu, mut floor_cpu) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for i in 0..runs {
        let out = b.dir.path().join(format!("floor{i}"));
        let prefix = b.dir.path().join(format!("p{i}"));
        let (f, fresh) = if i % 2 == 0 {
            let f = b.floor(&out, &entry);
            (f, b.install(&prefix))
        } else {
            let fresh = b.install(&prefix);
            (b.floor(&out, &entry), fresh)
        };
        std::fs::remove_dir_all(&out).unwrap();
        let (mut reuse, mut bare) = (vec![], vec![]);
        for _ in 0..3 {
            reuse.push(b.install(&prefix).wall);
            bare.push(b.entry_check(&entry).wall);
        }
        std::fs::remove_dir_all(&prefix).unwrap();
        wall.push(fresh.wall / f.wall);
        cpu.push(fresh.cpu / f.cpu);
        user.push(fresh.user / f.user);
        fresh_cpu.push(fresh.cpu);
        floor_cpu.push(f.cpu);
        reuse_own.push((median(reuse) - median(bare)) * 1000.0);
    }
    println!(
        "{name}\t{:.2}\t{:.2}\t{:.2}\t{:.2}\t{:.2}\t{:.0}",
        median(cpu),
        median(user),
        median(wall),
        median(fresh_cpu),
        median(floor_cpu),
        median(reuse_own)
    );
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 3;
    if args.first().map(String::as_str) == Some("-n") {
        runs = args[1].parse().expect("-n RUNS");
        args.drain(..2);
    }
    if args.is_empty() {
        args = vec!["pi".into(), "opencode".into()];
    }
    let artifacts = PathBuf::from(
        std::env::var("SHFORGE_ARTIFACTS")
            .unwrap_or_else(|_| "/var/cache/shforge/artifacts".into()),
    );
    println!(
        "## fresh install / hand floor (sha256sum + tar -xzf + entry --version), median of {runs} pairs"
    );
    println!(
        "spec\tCPU ratio\tuser CPU ratio\twall ratio\tinstall CPU s\tfloor CPU s\treuse, installer's own (ms)"
    );
    for name in &args {
        run(name, runs, &artifacts);
    }
}
