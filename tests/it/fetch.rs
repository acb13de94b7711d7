//! `shforge fetch`: artifacts made exactly as their spec's `source` says,
//! verified, skipped when present, nothing left behind on a mismatch. A
//! fake `npm` first on PATH (a shell script writing a known file where
//! `npm pack --pack-destination DIR` would) keeps everything offline; the
//! spec comes from `--spec FILE` so its digest is the fake's file.

use crate::support::output::{code, run, shforge};

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output};

use sha2::{Digest as _, Sha256};

const BODY: &[u8] = b"fake tarball bytes\n";
const FILE: &str = "fake-tool-1.0.tgz";

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A dir with `npm` (writes BODY to DEST/FILE, counts its calls in
/// `calls`) and a spec pinning `sha256`.
fn world(sha256: &str) -> tempfile::TempDir {
    let w = tempfile::tempdir().unwrap();
    let bin = w.path().join("bin");
    fs::create_dir(&bin).unwrap();
    let npm = bin.join("npm");
    let script = format!(
        "#!/bin/sh\n\
         # npm pack --loglevel=warn PKG --pack-destination DEST\n\
         [ \"$1 $3\" = 'pack fake-tool@1.0' ] && [ \"$4\" = --pack-destination ] || exit 9\n\
         echo x >> '{calls}'\n\
         printf 'fake tarball bytes\\n' > \"$5/{FILE}\"\n",
        calls = w.path().join("calls").display()
    );
    fs::write(&npm, script).unwrap();
    fs::set_permissions(&npm, fs::Permissions::from_mode(0o755)).unwrap();
    let spec = format!(
        "name = \"fake-tool\"\nversion = \"1.0\"\nentry = \"bin/tool\"\n\n\
         [[artifact]]\npath = \"{FILE}\"\nsha256 = \"{sha256}\"\nsize = {size}\n\
         unpack = \"tar.gz\"\narch = \"{arch}\"\nlibc = \"any\"\n\
         source = \"npm pack fake-tool@1.0\"\n",
        size = BODY.len(),
        arch = std::env::consts::ARCH
    );
    fs::write(w.path().join("spec.toml"), spec).unwrap();
    w
}

fn fetch(w: &Path, into: &Path) -> Output {
    let path = format!(
        "{}:{}",
        w.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new(shforge());
    c.env("PATH", path)
        .arg("fetch")
        .arg("--spec")
        .arg(w.join("spec.toml"))
        .arg("--into")
        .arg(into);
    run(c)
}

fn calls(w: &Path) -> usize {
    fs::read_to_string(w.join("calls"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn table_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .find(|l| l.starts_with(FILE))
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn fetch_runs_the_source_then_skips_the_verified_file() {
    let w = world(&hex(BODY));
    let into = w.path().join("artifacts");
    let o = fetch(w.path(), &into);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(table_line(&o), format!("{FILE} {} fetched", BODY.len()));
    assert_eq!(fs::read(into.join(FILE)).unwrap(), BODY);
    assert_eq!(entries(&into), [FILE], "the stage dir is gone");
    assert_eq!(calls(w.path()), 1);

    let o = fetch(w.path(), &into);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(table_line(&o), format!("{FILE} {} present", BODY.len()));
    assert_eq!(calls(w.path()), 1, "a verified file is not fetched again");
}

#[test]
fn a_corrupted_file_present_is_refused_and_left_alone() {
    let w = world(&hex(BODY));
    let into = w.path().join("artifacts");
    fs::create_dir(&into).unwrap();
    fs::write(into.join(FILE), b"fake tarball bytez\n").unwrap();
    let o = fetch(w.path(), &into);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 1, "{out}");
    assert!(table_line(&o).ends_with(" FAILED"), "{out}");
    assert!(out.contains(&hex(b"fake tarball bytez\n")), "{out}");
    assert!(out.contains(&hex(BODY)), "{out}");
    assert_eq!(fs::read(into.join(FILE)).unwrap(), b"fake tarball bytez\n");
    assert_eq!(calls(w.path()), 0);
}

#[test]
fn a_digest_mismatch_names_both_digests_and_leaves_nothing() {
    let pinned = hex(b"what the spec pins\n");
    let w = world(&pinned);
    let into = w.path().join("artifacts");
    let o = fetch(w.path(), &into);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 1, "{out}");
    let why = out
        .lines()
        .find(|l| l.contains("sha256"))
        .unwrap_or_default();
    assert!(why.contains(FILE), "{out}");
    assert!(why.contains(&pinned) && why.contains(&hex(BODY)), "{out}");
    assert_eq!(calls(w.path()), 1);
    assert!(entries(&into).is_empty(), "left: {:?}", entries(&into));
}

#[test]
fn an_unknown_harness_exits_2() {
    let w = world(&hex(BODY));
    let mut c = Command::new(shforge());
    c.args(["fetch", "no-such-harness", "--into"])
        .arg(w.path().join("a"));
    let o = run(c);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no-such-harness"), "{err}");
    assert!(!w.path().join("a").exists());
}

#[test]
fn a_dir_that_is_a_file_fifo_or_link_exits_2() {
    let w = world(&hex(BODY));
    let file = w.path().join("file");
    fs::write(&file, b"").unwrap();
    let fifo = w.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let real = w.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = w.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    for bad in [&file, &fifo, &link] {
        let o = fetch(w.path(), bad);
        assert_eq!(code(&o), 2, "{}", bad.display());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("not a directory"), "{err}");
    }
    assert!(entries(&real).is_empty());
    assert_eq!(calls(w.path()), 0);
}

/// `fetch` for a spec whose one artifact is made by `source`, with a PATH
/// of only the basic tools' dirs (no npm) and no uv.
fn fetch_without_npm(source: &str, file: &str) -> Output {
    let w = tempfile::tempdir().unwrap();
    let spec = format!(
        "name = \"fake-tool\"\nversion = \"1.0\"\nentry = \"bin/tool\"\n\n\
         [[artifact]]\npath = \"{file}\"\nsha256 = \"{sha}\"\nsize = 1\n\
         unpack = \"tar.gz\"\narch = \"{arch}\"\nlibc = \"any\"\n\
         source = \"{source}\"\n",
        sha = "0".repeat(64),
        arch = std::env::consts::ARCH
    );
    fs::write(w.path().join("spec.toml"), spec).unwrap();
    let bin = w.path().join("bin");
    fs::create_dir(&bin).unwrap();
    for tool in ["sh", "dirname", "pwd", "cat", "printf"] {
        if let Some(p) = crate::support::which(tool) {
            std::os::unix::fs::symlink(p, bin.join(tool)).unwrap();
        }
    }
    let mut c = Command::new(shforge());
    c.env("PATH", &bin)
        .env("SHFORGE_UV", w.path().join("no-uv"))
        .arg("fetch")
        .arg("--spec")
        .arg(w.path().join("spec.toml"))
        .arg("--into")
        .arg(w.path().join("artifacts"));
    let o = run(c);
    assert_eq!(entries(&w.path().join("artifacts")), Vec::<String>::new());
    o
}

#[test]
fn only_a_node_bundle_needs_npm() {
    let o = fetch_without_npm("sh installers/bundle.sh pi pi-b.tar.gz", "pi-b.tar.gz");
    // The failure is the table's row (stdout).
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(code(&o), 1, "{err}");
    assert!(err.contains("no npm on PATH"), "{err}");

    // A Bun graph's packages are `npm pack`ed: it needs npm too.
    let o = fetch_without_npm(
        "sh installers/bundle.sh cline-arm64 cl-b.tar.gz",
        "cl-b.tar.gz",
    );
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(code(&o), 1, "{err}");
    // Said by fetch itself, before the recipe runs.
    assert!(err.contains("no npm on PATH to run"), "{err}");

    // A Python bundle is built with uv: it fails on the missing uv, not npm.
    let o = fetch_without_npm("sh installers/bundle.sh stirrup st-b.tar.gz", "st-b.tar.gz");
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(code(&o), 1, "{err}");
    assert!(!err.contains("npm"), "{err}");
    assert!(err.contains("no uv at"), "{err}");
}
