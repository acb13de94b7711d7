//! Installer benchmarks (figures, no assertions):
//!
//! 1. Reusing a good cached install, the common case on a warm sandbox: wall
//!    time per run and the number of processes started (counted with
//!    `strace -f -e trace=execve,clone,fork,vfork`), for every bash given in
//!    SHFORGE_TEST_BASHES plus the `bash` on PATH. Goal: <= 20 ms on bash 5.2.
//! 2. 8 installers started at once for one prefix, 50 MB artifact served from
//!    127.0.0.1, versus one installer alone (flock, and the ticket queue with
//!    flock hidden).
//! 3. The real harness specs, from the pinned artifacts in
//!    $SHFORGE_ARTIFACTS (default /var/cache/shforge/artifacts; a spec whose
//!    artifacts are not all there is skipped): a fresh install (archive
//!    judged, unpacked, walked, placed), then the reuse of the cached install
//!    against the bare entry check run by hand, so that the installer's own
//!    reuse cost (its checks, the throwaway check home) shows apart from the
//!    harness's `--version`. Goal: reuse <= 1 s. The caller's HOME and TMPDIR
//!    must stay empty.
//!
//! Run: `cargo run --release --example bench_installer [real]` (`real`: part 3 only)

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use sha2::{Digest as _, Sha256};
use shforge::installer::{Artifact, Installer, Libc};

fn hex(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// A tar.gz with bin/fake (prints "fake 1.0") and `payload` bytes of noise.
fn artifact(dir: &Path, payload: usize) -> Vec<u8> {
    let src = dir.join("src-tree");
    std::fs::create_dir_all(src.join("bin")).unwrap();
    std::fs::write(src.join("bin/fake"), "#!/bin/sh\necho 'fake 1.0'\n").unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(src.join("bin/fake"))
        .status()
        .unwrap();
    if payload > 0 {
        // Incompressible: xorshift noise.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut data = Vec::with_capacity(payload);
        while data.len() < payload {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            data.extend_from_slice(&x.to_le_bytes());
        }
        std::fs::write(src.join("payload.bin"), &data).unwrap();
    }
    let out = dir.join("a.tgz");
    Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(&src)
        .arg(".")
        .status()
        .unwrap();
    std::fs::read(out).unwrap()
}

fn script(dir: &Path, sha: &str) -> PathBuf {
    let inst = Installer::builder("fake", "1.0")
        .entry("bin/fake")
        .check(["--version"], "fake 1.0")
        .artifact(Artifact::tar_gz("a.tgz", sha).arch("any").libc(Libc::Any))
        .build()
        .unwrap();
    let p = dir.join("install_fake.sh");
    std::fs::write(&p, inst.script().unwrap()).unwrap();
    p
}

fn bashes() -> Vec<String> {
    let mut v = vec!["bash".to_owned()];
    if let Ok(extra) = std::env::var("SHFORGE_TEST_BASHES") {
        v.extend(
            extra
                .split(':')
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
    }
    v
}

fn version(bash: &str) -> String {
    let o = Command::new(bash)
        .args(["-c", "printf %s \"$BASH_VERSION\""])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn reuse_bench() {
    let dir = tempfile::tempdir().unwrap();
    let art = artifact(dir.path(), 0);
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.tgz"), &art).unwrap();
    let s = script(dir.path(), &hex(&art));
    let prefix = dir.path().join("prefix");
    let run = |bash: &str| {
        Command::new(bash)
            .arg(&s)
            .arg("--prefix")
            .arg(&prefix)
            .arg("--source-dir")
            .arg(dir.path().join("src"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
    };
    assert!(run("bash").success());
    println!("## reuse of a good cached install (mean of 100 runs)");
    println!("bash\tms/run\tprocesses (incl. the bash itself)");
    for bash in bashes() {
        for _ in 0..5 {
            run(&bash);
        }
        let n = 100;
        let t = Instant::now();
        for _ in 0..n {
            assert!(run(&bash).success());
        }
        let ms = t.elapsed().as_secs_f64() * 1000.0 / n as f64;
        let procs = count_processes(&bash, &s, &prefix, &dir.path().join("src"));
        println!("{}\t{ms:.1}\t{procs}", version(&bash));
    }
}

/// Processes started by one run: 1 + forks/clones seen by strace.
fn count_processes(bash: &str, s: &Path, prefix: &Path, src: &Path) -> String {
    let log = s.with_extension("strace");
    let st = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=fork,vfork,clone,clone3", "-o"])
        .arg(&log)
        .arg(bash)
        .arg(s)
        .arg("--prefix")
        .arg(prefix)
        .arg("--source-dir")
        .arg(src)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match st {
        Ok(st) if st.success() => {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let forks = text
                .lines()
                .filter(|l| {
                    (l.contains("clone(") || l.contains("clone3(") || l.contains("fork("))
                        && !l.contains("= -1")
                        && !l.contains("resumed>")
                })
                .count();
            format!("{}", 1 + forks)
        }
        _ => "n/a (no strace)".into(),
    }
}

fn serve(mut conn: TcpStream, body: &[u8]) {
    let mut r = BufReader::new(conn.try_clone().unwrap());
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
            break;
        }
    }
    let head = format!(
        "HTTP/1.0 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body);
}

fn tools_without_flock(dir: &Path) -> PathBuf {
    let bin = dir.join("noflock");
    std::fs::create_dir_all(&bin).unwrap();
    for d in ["/usr/bin", "/bin"] {
        for e in std::fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            let name = e.file_name();
            if name == "flock" || bin.join(&name).exists() {
                continue;
            }
            let _ = symlink(e.path(), bin.join(&name));
        }
    }
    bin
}

fn concurrency_bench() {
    let dir = tempfile::tempdir().unwrap();
    let art = Arc::new(artifact(dir.path(), 50 * 1024 * 1024));
    let s = script(dir.path(), &hex(&art));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let a = art.clone();
    std::thread::spawn(move || {
        for c in listener.incoming().flatten() {
            let a = a.clone();
            std::thread::spawn(move || serve(c, &a));
        }
    });
    let url = format!("http://127.0.0.1:{port}");
    let noflock = tools_without_flock(dir.path());
    println!(
        "\n## {} MB artifact from 127.0.0.1: one installer vs 8 at once (bash on PATH)",
        art.len() / (1024 * 1024)
    );
    println!("lock\tone alone (s)\t8 at once (s)\tratio");
    for (label, path) in [
        ("flock", std::env::var("PATH").unwrap()),
        ("ticket queue", noflock.to_string_lossy().into_owned()),
    ] {
        let mut times = Vec::new();
        for n in [1, 8] {
            let prefix = dir.path().join(format!("p-{label}-{n}").replace(' ', "_"));
            let t = Instant::now();
            let children: Vec<_> = (0..n)
                .map(|_| {
                    Command::new("bash")
                        .arg(&s)
                        .arg("--prefix")
                        .arg(&prefix)
                        .arg("--base-url")
                        .arg(&url)
                        .env("PATH", &path)
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect();
            for mut c in children {
                assert!(c.wait().unwrap().success());
            }
            times.push(t.elapsed().as_secs_f64());
        }
        println!(
            "{label}\t{:.2}\t{:.2}\t{:.2}",
            times[0],
            times[1],
            times[1] / times[0]
        );
    }
}

/// Mean wall time of `n` runs of `f`, in ms.
fn mean_ms(n: u32, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_secs_f64() * 1000.0 / f64::from(n)
}

fn real_specs_bench() {
    let artifacts = PathBuf::from(
        std::env::var("SHFORGE_ARTIFACTS")
            .unwrap_or_else(|_| "/var/cache/shforge/artifacts".into()),
    );
    let generated = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("generated/installers");
    println!(
        "\n## real specs from {} (bash on PATH; mean of 5 reuses)",
        artifacts.display()
    );
    println!(
        "spec\tfresh install (s)\treuse (ms)\tbare entry check (ms)\tinstaller's own reuse cost (ms)\tcaller's HOME/TMPDIR"
    );
    for (name, text) in shforge::installer::HARNESS_SPECS {
        let inst = Installer::from_toml(text).unwrap();
        let missing: Vec<&str> = inst
            .artifacts()
            .iter()
            .map(|a| a.path())
            .filter(|p| !artifacts.join(p).exists())
            .collect();
        // Only the x86_64 glibc artifacts are cached: the others may be missing.
        if inst
            .artifacts()
            .iter()
            .all(|a| !artifacts.join(a.path()).exists())
        {
            println!("{name}\tskipped: no artifact in {}", artifacts.display());
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&tmp).unwrap();
        let prefix = dir.path().join("prefix");
        let script = generated.join(format!("{name}.sh"));
        let install = || {
            let o = Command::new("bash")
                .arg(&script)
                .arg("--prefix")
                .arg(&prefix)
                .arg("--source-dir")
                .arg(&artifacts)
                .env("HOME", &home)
                .env("TMPDIR", &tmp)
                .stderr(Stdio::inherit())
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{name}: install failed (missing: {missing:?})"
            );
            String::from_utf8_lossy(&o.stdout).trim_end().to_owned()
        };
        let t = Instant::now();
        let entry = install();
        let fresh = t.elapsed().as_secs_f64();
        let reuse = mean_ms(5, || {
            install();
        });
        // The same check by hand, with a warm home of its own.
        let check_home = dir.path().join("check-home");
        std::fs::create_dir_all(check_home.join("tmp")).unwrap();
        let bare = mean_ms(5, || {
            let st = Command::new(&entry)
                .arg("--version")
                .env("HOME", &check_home)
                .env("TMPDIR", check_home.join("tmp"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap();
            assert!(st.success());
        });
        let clean = std::fs::read_dir(&home).unwrap().count()
            + std::fs::read_dir(&tmp).unwrap().count()
            == 0;
        println!(
            "{name}\t{fresh:.2}\t{reuse:.0}\t{bare:.0}\t{:.0}\t{}",
            reuse - bare,
            if clean { "untouched" } else { "WRITTEN TO" }
        );
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("real") {
        real_specs_bench();
        return;
    }
    reuse_bench();
    concurrency_bench();
    real_specs_bench();
}
