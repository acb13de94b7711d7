//! Data copied back out of a sandbox is hostile (issue 37, class 6):
//! whatever ran there chose every entry of the copy the host reads with
//! `shforge outcome`, `shforge snapshot` and `shforge receipt`, its links
//! too. A link anywhere in a path read (the file named, a directory on the
//! way, the `--dir` or `--db` named) is refused and never followed, so no
//! host file's content reaches the output; FIFOs, devices and oversized
//! files are refused at once. Each refusal is exit 2 with one line naming
//! the path and why.
//!
//! The host here is a directory beside the copy holding a unique secret
//! (a harness output, a receipt, a Claude Code data dir, an OpenCode DB);
//! the copy plants links to it.

use crate::support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Far above any real run of these commands; only a hang reaches it.
const HANG: Duration = Duration::from_secs(60);

/// What lives on the host, outside the copy: files carrying [`Host::secret`].
struct Host {
    _dir: tempfile::TempDir,
    /// A string found nowhere but in the host's files.
    secret: String,
    /// A directory of host files, each named as the copy's would be:
    /// `events.log` (an error record), `receipt.json`, `claude/` (a Claude
    /// Code data dir), `opencode.db` and its `-wal`.
    dir: PathBuf,
}

impl Host {
    fn new() -> Host {
        let tmp = tempfile::tempdir().unwrap();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let secret = format!("host-secret-{}-{nanos}", std::process::id());
        let dir = tmp.path().join("host");
        fs::create_dir(&dir).unwrap();
        let record = format!(
            "{{\"type\":\"error\",\"message\":\"429 Too Many Requests: rate limit {secret}\"}}\n"
        );
        for name in ["events.log", "stdout.log", "stderr.log"] {
            fs::write(dir.join(name), &record).unwrap();
        }
        fs::write(
            dir.join("receipt.json"),
            format!(
                r#"{{"cleanup_confirmed": true, "return_code": 1, "error": "{secret}", "timed_out": false}}"#
            ),
        )
        .unwrap();
        claude_dir_with(&dir.join("claude"), &secret);
        let fixture = support::root().join("tests/fixtures/snapshot/opencode");
        for name in ["opencode.db", "opencode.db-wal"] {
            fs::copy(fixture.join(name), dir.join(name)).unwrap();
        }
        Host {
            _dir: tmp,
            secret,
            dir,
        }
    }
}

/// A Claude Code data dir (the fixture) whose transcript ends with an
/// assistant error carrying `secret`.
fn claude_dir_with(dir: &Path, secret: &str) {
    support::copy_tree(&fixture("claude-code"), dir);
    let slug = dir.join("projects/-tmp-snap-run-cc1-work");
    let file = fs::read_dir(&slug).unwrap().next().unwrap().unwrap().path();
    let mut text = fs::read_to_string(&file).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let line = serde_json::json!({
        "type": "assistant",
        "sessionId": first["sessionId"],
        "uuid": "host-secret",
        "error": "rate_limit",
        "isApiErrorMessage": true,
        "message": {"role": "assistant", "content": [{"type": "text", "text": secret}]},
    });
    text.push_str(&format!("{line}\n"));
    fs::write(&file, text).unwrap();
}

fn fixture(name: &str) -> PathBuf {
    support::root().join("tests/fixtures/snapshot").join(name)
}

/// `shforge ARGS`, stdin from /dev/null, killed (and failed) after [`HANG`].
fn shforge(args: &[&str], what: &str) -> Output {
    let mut child = Command::new(support::shforge())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("shforge starts");
    // Drained while it runs: a snapshot larger than a pipe's buffer (Copilot
    // CLI's, with its system prompt) would otherwise block on its write.
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            r.read_to_end(&mut b).unwrap();
            b
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > HANG {
            child.kill().unwrap();
            panic!("{what}: still running after {HANG:?}: it waits on its input");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// Exit 2, nothing on stdout, one line on stderr naming `named` and
/// saying `why`; the host's secret nowhere.
fn assert_refused(o: &Output, host: &Host, named: &Path, why: &str, what: &str) {
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !out.contains(&host.secret) && !err.contains(&host.secret),
        "{what}: the host's file reached the output:\n{}",
        support::text(o)
    );
    assert_eq!(support::code(o), 2, "{what}: {}", support::text(o));
    assert!(out.is_empty(), "{what}: {out}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    let named = named.display().to_string();
    assert!(
        err.contains(&named) && err.contains(why),
        "{what}: wanted {named:?} and {why:?} in: {err}"
    );
}

/// A character device node like /dev/zero at `p` (root only).
fn mknod_zero(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string; mknod only creates the node.
    unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 5)) == 0 }
}

fn mkfifo(p: &Path) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

/// How the copy is made hostile at one input.
#[derive(Debug, Clone, Copy)]
enum Plant {
    /// The input is a link to the host's file of that name.
    Link,
    /// A directory on the way (`via/`) is a link to the host's directory.
    LinkOnTheWay,
    /// The input is a FIFO without a writer.
    Fifo,
    /// The input is a device node like /dev/zero (root only).
    Device,
    /// The input is a sparse file one byte over `bound`.
    Sparse,
}

const PLANTS: [Plant; 5] = [
    Plant::Link,
    Plant::LinkOnTheWay,
    Plant::Fifo,
    Plant::Device,
    Plant::Sparse,
];

/// Plant `how` for the input `name` in the copy `copy`: the path to give
/// and the path and words the refusal must name; None when it cannot be
/// made here (a device node without root).
fn plant(
    copy: &Path,
    host: &Host,
    name: &str,
    how: Plant,
    bound: u64,
) -> Option<(PathBuf, PathBuf, &'static str)> {
    let at = copy.join(name);
    match how {
        Plant::Link => {
            symlink(host.dir.join(name), &at).unwrap();
            Some((at.clone(), at, "a symlink"))
        }
        Plant::LinkOnTheWay => {
            let via = copy.join("via");
            symlink(&host.dir, &via).unwrap();
            Some((via.join(name), via, "a symlink on the way"))
        }
        Plant::Fifo => {
            mkfifo(&at);
            Some((at.clone(), at, "a FIFO"))
        }
        Plant::Device => mknod_zero(&at).then(|| (at.clone(), at, "a character device")),
        Plant::Sparse => {
            fs::File::create(&at).unwrap().set_len(bound + 1).unwrap();
            Some((at.clone(), at, "larger than"))
        }
    }
}

/// The most `shforge outcome` reads of a harness output, and of a receipt.
const OUTPUT_BOUND: u64 = 256 << 20;
const RECEIPT_BOUND: u64 = 16 << 20;

/// A copy holding a real receipt (exit 1), the other inputs planted.
fn copy_with_receipt() -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    fs::write(
        copy.path().join("receipt.json"),
        r#"{"cleanup_confirmed": true, "return_code": 1, "error": null, "timed_out": false}"#,
    )
    .unwrap();
    copy
}

/// `--events`, `--stdout` and `--stderr` of `shforge outcome`: a link to a
/// host file (the known defect: its record was quoted as evidence), a link
/// on the way, a FIFO, a device and an oversized file are each refused.
#[test]
fn outcome_refuses_hostile_harness_outputs() {
    let host = Host::new();
    for (flag, name) in [
        ("--events", "events.log"),
        ("--stdout", "stdout.log"),
        ("--stderr", "stderr.log"),
    ] {
        for how in PLANTS {
            let copy = copy_with_receipt();
            let Some((given, named, why)) = plant(copy.path(), &host, name, how, OUTPUT_BOUND)
            else {
                continue;
            };
            let receipt = copy.path().join("receipt.json");
            let o = shforge(
                &[
                    "outcome",
                    "--receipt",
                    receipt.to_str().unwrap(),
                    "--harness",
                    "codex",
                    flag,
                    given.to_str().unwrap(),
                ],
                &format!("{flag} {how:?}"),
            );
            assert_refused(&o, &host, &named, why, &format!("outcome {flag} {how:?}"));
        }
    }
}

/// The receipt, read by `shforge outcome --receipt` and `shforge receipt`
/// (the Python API's `read_receipt`): the same refusals.
#[test]
fn outcome_and_receipt_refuse_a_hostile_receipt() {
    let host = Host::new();
    for how in PLANTS {
        for command in ["outcome", "receipt"] {
            let copy = tempfile::tempdir().unwrap();
            let Some((given, named, why)) =
                plant(copy.path(), &host, "receipt.json", how, RECEIPT_BOUND)
            else {
                continue;
            };
            let given = given.to_str().unwrap();
            let args: Vec<&str> = match command {
                "outcome" => vec!["outcome", "--receipt", given, "--harness", "codex"],
                _ => vec!["receipt", given],
            };
            let o = shforge(&args, &format!("{command} {how:?}"));
            // `shforge receipt` says "reading receipt PATH: CAUSE", a link
            // on the way named in CAUSE as "a symlink at LINK".
            let why = match how {
                Plant::LinkOnTheWay if command == "receipt" => "a symlink at",
                _ => why,
            };
            assert_refused(
                &o,
                &host,
                &named,
                why,
                &format!("{command} receipt {how:?}"),
            );
        }
    }
}

/// `--capture` of a Claude Code run: the data dir named is a link to the
/// host's, or a directory on the way to it is; a FIFO or device stands
/// where the data dir should be.
#[test]
fn outcome_refuses_a_hostile_capture_dir() {
    let host = Host::new();
    for how in [Plant::Link, Plant::LinkOnTheWay, Plant::Fifo, Plant::Device] {
        let copy = copy_with_receipt();
        let Some((given, named, why)) = plant(copy.path(), &host, "claude", how, 0) else {
            continue;
        };
        let why = match how {
            Plant::Fifo | Plant::Device => "is not a directory",
            _ => why,
        };
        let receipt = copy.path().join("receipt.json");
        let o = shforge(
            &[
                "outcome",
                "--receipt",
                receipt.to_str().unwrap(),
                "--harness",
                "claude-code",
                "--capture",
                given.to_str().unwrap(),
            ],
            &format!("capture {how:?}"),
        );
        assert_refused(
            &o,
            &host,
            &named,
            why,
            &format!("outcome --capture {how:?}"),
        );
    }
}

/// `--capture` of an OpenCode run (the DB): linked, reached through a
/// linked directory, a FIFO, a device, a sparse file; and its `-wal` a
/// device or a FIFO (never read, never waited on).
#[test]
fn outcome_and_snapshot_refuse_a_hostile_database() {
    let host = Host::new();
    for how in PLANTS {
        for command in ["outcome", "snapshot"] {
            let copy = copy_with_receipt();
            let Some((given, named, why)) = plant(copy.path(), &host, "opencode.db", how, 1 << 30)
            else {
                continue;
            };
            let o = db_command(command, copy.path(), &given);
            assert_refused(&o, &host, &named, why, &format!("{command} db {how:?}"));
        }
    }
    for how in [Plant::Link, Plant::Fifo, Plant::Device] {
        let copy = copy_with_receipt();
        let db = copy.path().join("opencode.db");
        fs::copy(fixture("opencode/opencode.db"), &db).unwrap();
        let Some((_, named, _)) = plant(copy.path(), &host, "opencode.db-wal", how, 0) else {
            continue;
        };
        let o = db_command("snapshot", copy.path(), &db);
        assert_refused(
            &o,
            &host,
            &named,
            "not a regular file",
            &format!("-wal {how:?}"),
        );
    }
    // A `-shm` is never read: a link planted there changes nothing.
    let copy = tempfile::tempdir().unwrap();
    for name in ["opencode.db", "opencode.db-wal"] {
        fs::copy(fixture("opencode").join(name), copy.path().join(name)).unwrap();
    }
    symlink(
        host.dir.join("events.log"),
        copy.path().join("opencode.db-shm"),
    )
    .unwrap();
    let o = db_command("snapshot", copy.path(), &copy.path().join("opencode.db"));
    assert_eq!(support::code(&o), 0, "{}", support::text(&o));
    assert!(!support::text(&o).contains(&host.secret));
}

/// `shforge outcome --capture DB` (OpenCode), or `shforge snapshot opencode --db DB`.
fn db_command(command: &str, copy: &Path, db: &Path) -> Output {
    let receipt = copy.join("receipt.json");
    let db = db.to_str().unwrap();
    let args: Vec<&str> = match command {
        "outcome" => vec![
            "outcome",
            "--receipt",
            receipt.to_str().unwrap(),
            "--harness",
            "opencode",
            "--capture",
            db,
        ],
        _ => vec!["snapshot", "opencode", "--db", db],
    };
    shforge(&args, &format!("{command} --db {db}"))
}

/// `shforge snapshot KIND --dir DIR` for every directory harness: `DIR` a
/// link to the host's data dir, or reached through a linked directory.
/// Nothing of the host's data is printed.
#[test]
fn snapshot_refuses_a_data_dir_reached_through_a_link() {
    let host = Host::new();
    let kinds = [
        "claude-code",
        "pi",
        "codex",
        "qwen-code",
        "gemini-cli",
        "cline",
        "hermes",
        "stirrup",
        "nooa",
        "continue-cli",
        "copilot-cli",
    ];
    for kind in kinds {
        let data = host.dir.join(format!("data-{kind}"));
        if kind == "claude-code" {
            claude_dir_with(&data, &host.secret);
        } else {
            support::copy_tree(&fixture(kind), &data);
        }
        // The host's copy is readable as it is.
        let o = shforge(&["snapshot", kind, "--dir", data.to_str().unwrap()], kind);
        assert_eq!(support::code(&o), 0, "{kind}: {}", support::text(&o));
        for how in [Plant::Link, Plant::LinkOnTheWay] {
            let copy = tempfile::tempdir().unwrap();
            let name = format!("data-{kind}");
            let (given, named, why) = plant(copy.path(), &host, &name, how, 0).unwrap();
            let o = shforge(
                &["snapshot", kind, "--dir", given.to_str().unwrap()],
                &format!("{kind} {how:?}"),
            );
            assert_refused(&o, &host, &named, why, &format!("snapshot {kind} {how:?}"));
        }
    }
}
