//! Hostile files around every command that writes or reads one (issue 19,
//! classes 1 and 2): links planted at a temp name or at the target, FIFOs,
//! device nodes and sockets where an output or input is expected, a
//! read-only directory, oversized and sparse inputs, and a memory limit.
//!
//! Every output must be written through an exclusive temp file (or dir)
//! and a rename, never through a link; a target that is not a regular file
//! is exit 2 and left as it was; a failed write is exit 1, one line naming
//! the path once. Every input must be a regular file within its bound:
//! anything else is exit 2 at once (a FIFO without a writer must not hang).

use crate::support;

use std::fs;
use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _, symlink};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Far above any real run of these commands; only a hang reaches it.
const HANG: Duration = Duration::from_secs(60);

/// One command that writes `--out`: the arguments before `--out`.
struct Writer {
    name: &'static str,
    args: Vec<String>,
    /// The name old shforge gave its temporary file beside `--out`, given
    /// the target's name and the pid: `.NAME.tmpPID` (generate, snapshot,
    /// installer) or `.NAME.partialPID` (harness).
    old_temp: &'static str,
    /// Whether `--out` names a directory (generate, harness).
    dir: bool,
}

fn writers() -> Vec<Writer> {
    let root = support::root();
    let s = |v: &[&str]| v.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    vec![
        Writer {
            name: "snapshot",
            args: s(&[
                "snapshot",
                "pi",
                "--dir",
                root.join("tests/fixtures/snapshot/pi").to_str().unwrap(),
            ]),
            old_temp: "tmp",
            dir: false,
        },
        Writer {
            name: "installer",
            args: s(&[
                "installer",
                "--spec",
                root.join("installers/pi.toml").to_str().unwrap(),
            ]),
            old_temp: "tmp",
            dir: false,
        },
        Writer {
            name: "generate",
            args: s(&["generate"]),
            old_temp: "tmp",
            dir: true,
        },
        Writer {
            name: "harness",
            args: s(&[
                "harness",
                "pi",
                "--session-dir",
                "/s/session",
                "--workdir",
                "/w",
                "--entry",
                "/opt/pi/bin/pi",
                "--base-url",
                "http://127.0.0.1:9",
                "--model",
                "m",
                "--prompt",
                "hello",
            ]),
            old_temp: "partial",
            dir: true,
        },
    ]
}

/// Run `c` with stdin from /dev/null, killing it (and failing) if it has
/// not ended within [`HANG`].
fn run_bounded(mut c: Command, what: &str) -> Output {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("command starts");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > HANG {
            child.kill().unwrap();
            panic!("{what}: still running after {HANG:?}: it waits on its input");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn shforge(args: &[String], what: &str) -> Output {
    let mut c = Command::new(support::shforge());
    c.args(args);
    run_bounded(c, what)
}

fn with_out(w: &Writer, out: &Path) -> Vec<String> {
    let mut args = w.args.clone();
    args.push("--out".into());
    args.push(out.to_str().unwrap().into());
    args
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit `code` with exactly one line on stderr.
fn assert_one_line(o: &Output, code: i32, what: &str) -> String {
    let err = stderr(o);
    assert_eq!(support::code(o), code, "{what}: {}", support::text(o));
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    err
}

/// A file only root may change, to be kept as it is: content and mode.
struct Victim {
    path: PathBuf,
}

impl Victim {
    fn new(dir: &Path) -> Victim {
        let path = dir.join("victim");
        fs::write(&path, "the victim's own bytes\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        Victim { path }
    }

    fn assert_untouched(&self, what: &str) {
        assert_eq!(
            fs::read_to_string(&self.path).unwrap(),
            "the victim's own bytes\n",
            "{what}: the victim was written"
        );
        let mode = fs::metadata(&self.path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600, "{what}: the victim's mode changed");
    }
}

/// The file inside a directory output that the link is planted for.
fn inner(w: &Writer) -> &'static str {
    if w.name == "generate" {
        "manifest.json"
    } else {
        ""
    }
}

/// A link at the name old shforge used for its temp file (`$$` of the `sh`
/// that execs shforge is shforge's own pid) must not be followed.
#[test]
fn a_link_at_the_old_temp_name_is_never_followed() {
    for w in writers() {
        let d = tempfile::tempdir().unwrap();
        let victim = Victim::new(d.path());
        let out_dir = d.path().join("o");
        fs::create_dir(&out_dir).unwrap();
        let out = out_dir.join("target");
        // The temp file sat beside the file written: beside `--out`, or
        // inside it for generate's files.
        let (beside, name) = match inner(&w) {
            "" => (out_dir.clone(), "target"),
            file => (out.clone(), file),
        };
        fs::create_dir_all(&beside).unwrap();
        let plant = format!(
            "ln -s \"$1\" \"$2/.{name}.{}$$\" && shift 2 && exec \"$@\"",
            w.old_temp
        );
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(plant)
            .arg("sh")
            .arg(&victim.path)
            .arg(&beside)
            .arg(support::shforge())
            .args(with_out(&w, &out));
        let o = run_bounded(c, w.name);
        assert_eq!(support::code(&o), 0, "{}: {}", w.name, support::text(&o));
        victim.assert_untouched(w.name);
        let written = if w.dir {
            out.join("prompt.txt")
        } else {
            out.clone()
        };
        let written = if w.name == "generate" {
            out.join("manifest.json")
        } else {
            written
        };
        assert!(
            fs::symlink_metadata(&written).unwrap().is_file(),
            "{}: {} is not a regular file",
            w.name,
            written.display()
        );
    }
}

/// A link at the target itself: a file output replaces the link (the
/// victim keeps its bytes and mode); a directory output refuses it.
#[test]
fn a_link_at_the_target_never_writes_the_victim() {
    for w in writers() {
        let d = tempfile::tempdir().unwrap();
        let victim = Victim::new(d.path());
        let out = d.path().join("target");
        let link_at = match inner(&w) {
            "" => out.clone(),
            file => {
                fs::create_dir(&out).unwrap();
                out.join(file)
            }
        };
        symlink(&victim.path, &link_at).unwrap();
        let o = shforge(&with_out(&w, &out), w.name);
        victim.assert_untouched(w.name);
        if w.name == "harness" {
            let err = assert_one_line(&o, 2, w.name);
            assert!(err.contains("refusing to replace a symlink"), "{err}");
            assert_eq!(fs::read_link(&link_at).unwrap(), victim.path);
        } else {
            assert_eq!(support::code(&o), 0, "{}: {}", w.name, support::text(&o));
            let meta = fs::symlink_metadata(&link_at).unwrap();
            assert!(meta.is_file(), "{}: the link is still there", w.name);
        }
    }
}

/// Make a character device like /dev/null at `p` (root only).
fn mknod_null(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    let dev = libc::makedev(1, 3);
    unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, dev) == 0 }
}

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// What kind of file is at `p` (not following a link).
fn kind(p: &Path) -> &'static str {
    let t = fs::symlink_metadata(p).unwrap().file_type();
    if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "char"
    } else if t.is_symlink() {
        "link"
    } else {
        "other"
    }
}

/// Plant each special file at `at`: FIFO, socket, device node (root
/// only; skipped loudly otherwise), a link to /dev/null. Returns the
/// listener that keeps the socket alive and the kinds planted.
fn specials(dir: &Path) -> (Vec<(PathBuf, &'static str)>, UnixListener) {
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let sock = dir.join("sock");
    let listener = UnixListener::bind(&sock).unwrap();
    let null_link = dir.join("null-link");
    symlink("/dev/null", &null_link).unwrap();
    let mut out = vec![
        (fifo, "a FIFO"),
        (sock, "a socket"),
        (null_link, "a symlink to a character device"),
    ];
    if support::require_root("hostile_files: a device node as a target") {
        let node = dir.join("null");
        assert!(mknod_null(&node), "mknod {}", node.display());
        out.push((node, "a character device"));
    }
    (out, listener)
}

/// A FIFO, socket, device node or link to a device at the target: exit 2,
/// one line, and the thing is still there, unchanged in kind.
#[test]
fn a_target_that_is_not_a_regular_file_is_refused_and_left() {
    for w in writers() {
        let d = tempfile::tempdir().unwrap();
        let (planted, _listener) = specials(d.path());
        for (at, what) in planted {
            let before = kind(&at);
            let out = match inner(&w) {
                "" => at.clone(),
                file => {
                    // generate: the special file sits where a file goes.
                    let dir = d.path().join(format!("gen-{}", before));
                    fs::create_dir_all(&dir).unwrap();
                    let p = dir.join(file);
                    fs::rename(&at, &p).unwrap();
                    p
                }
            };
            let target = if inner(&w).is_empty() {
                out.clone()
            } else {
                out.parent().unwrap().to_path_buf()
            };
            let o = shforge(&with_out(&w, &target), w.name);
            let label = format!("{}: {what}", w.name);
            let err = assert_one_line(&o, 2, &label);
            assert!(
                err.contains(&format!("refusing to replace {what}")),
                "{label}: {err}"
            );
            assert_eq!(kind(&out), before, "{label}: the target changed");
            if !inner(&w).is_empty() {
                // Refused before any file was written: DIR holds only it.
                assert_eq!(fs::read_dir(&target).unwrap().count(), 1, "{label}");
                fs::rename(&out, &at).unwrap();
            }
        }
        let left: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(left.is_empty(), "{}: temp files left: {left:?}", w.name);
    }
}

/// A directory this user cannot write: exit 1, one line, naming the path
/// once. Root writes anywhere, so as root the command runs as nobody.
#[test]
fn a_read_only_directory_is_exit_1_naming_the_path_once() {
    use std::os::unix::process::CommandExt as _;
    let d = tempfile::tempdir().unwrap();
    fs::set_permissions(d.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let ro = d.path().join("ro");
    fs::create_dir(&ro).unwrap();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
    for w in writers() {
        let out = ro.join("out");
        let mut c = Command::new(support::shforge());
        c.args(with_out(&w, &out));
        if support::is_root() {
            c.uid(65534).gid(65534);
        }
        let o = run_bounded(c, w.name);
        let err = assert_one_line(&o, 1, w.name);
        let shown = out.display().to_string();
        assert_eq!(err.matches(&shown).count(), 1, "{}: {err}", w.name);
        assert_eq!(err.matches(d.path().to_str().unwrap()).count(), 1, "{err}");
        assert!(err.contains("Permission denied"), "{}: {err}", w.name);
        assert_eq!(fs::read_dir(&ro).unwrap().count(), 0, "{}", w.name);
    }
}

/// One command that reads a file: the arguments, with `{}` for the file.
fn readers(dir: &Path) -> Vec<(&'static str, Vec<String>)> {
    let out = dir.join("never-written").to_str().unwrap().to_owned();
    let s = |v: &[&str]| v.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    vec![
        ("params", s(&["params", "{}"])),
        ("installer", s(&["installer", "--spec", "{}"])),
        (
            "harness",
            s(&[
                "harness",
                "pi",
                "--out",
                &out,
                "--session-dir",
                "/s/session",
                "--workdir",
                "/w",
                "--entry",
                "/opt/pi",
                "--base-url",
                "http://127.0.0.1:9",
                "--model",
                "m",
                "--prompt-file",
                "{}",
            ]),
        ),
        ("lint", s(&["lint", "--dialect", "bash", "{}"])),
    ]
}

fn reading(args: &[String], file: &Path) -> Vec<String> {
    args.iter()
        .map(|a| {
            if a == "{}" {
                file.to_str().unwrap().to_owned()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// FIFOs without a writer, /dev/zero, /dev/null, a link to /dev/zero, a
/// socket and a directory as inputs: exit 2 at once, one line, nothing
/// written.
#[test]
fn an_input_that_is_not_a_regular_file_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    mkfifo(&fifo);
    let zero_link = d.path().join("zero-link");
    symlink("/dev/zero", &zero_link).unwrap();
    let sock = d.path().join("sock");
    let _listener = UnixListener::bind(&sock).unwrap();
    let inputs: [(&Path, &str); 6] = [
        (&fifo, "a FIFO"),
        (Path::new("/dev/zero"), "a character device"),
        (Path::new("/dev/null"), "a character device"),
        (&zero_link, "a character device"),
        (&sock, "a socket"),
        (d.path(), "a directory"),
    ];
    for (name, args) in readers(d.path()) {
        for (input, what) in inputs {
            let label = format!("{name} {}", input.display());
            let o = shforge(&reading(&args, input), &label);
            let err = assert_one_line(&o, 2, &label);
            // A socket cannot be opened at all: its open error is the refusal.
            if what != "a socket" {
                assert!(
                    err.contains(&format!("not a regular file ({what})")),
                    "{label}: {err}"
                );
            }
            assert!(o.stdout.is_empty(), "{label}");
            assert!(!d.path().join("never-written").exists(), "{label}");
        }
    }
    // lint-templates and check read every file under a directory.
    let t = d.path().join("templates");
    fs::create_dir(&t).unwrap();
    mkfifo(&t.join("x.sh"));
    let o = shforge(
        &["lint-templates".into(), t.display().to_string()],
        "lint-templates",
    );
    let err = assert_one_line(&o, 2, "lint-templates");
    assert!(err.contains("x.sh: not a regular file (a FIFO)"), "{err}");
    let g = d.path().join("gen");
    fs::create_dir(&g).unwrap();
    mkfifo(&g.join("manifest.json"));
    let o = shforge(
        &["check".into(), "--out".into(), g.display().to_string()],
        "check",
    );
    let err = assert_one_line(&o, 2, "check");
    assert!(
        err.contains("manifest.json: not a regular file (a FIFO)"),
        "{err}"
    );
    // generate does not wait on a FIFO old manifest either: it refuses to
    // replace it.
    let o = shforge(
        &["generate".into(), "--out".into(), g.display().to_string()],
        "generate",
    );
    assert_one_line(&o, 2, "generate");
    assert_eq!(kind(&g.join("manifest.json")), "fifo");
}

/// The receipt reader (the library call behind `--end-services` and the
/// smoke) refuses a FIFO and a device at once.
#[test]
fn a_receipt_that_is_not_a_regular_file_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("receipt.json");
    mkfifo(&fifo);
    for p in [fifo, PathBuf::from("/dev/zero")] {
        let (tx, rx) = std::sync::mpsc::channel();
        let q = p.clone();
        std::thread::spawn(move || {
            let r = shforge::host::CleanupReceipt::from_file(&q).map(drop);
            tx.send(r.map_err(|e| e.to_string())).unwrap();
        });
        let err = rx
            .recv_timeout(HANG)
            .unwrap_or_else(|_| panic!("{}: from_file waits on it", p.display()))
            .unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        assert_eq!(err.matches(&*p.display().to_string()).count(), 1, "{err}");
    }
}

/// A sparse file one byte over each bound: refused from its size, before
/// a byte is read (set_len makes it at once, on any file system).
#[test]
fn an_input_one_byte_over_its_bound_is_refused() {
    use shforge::Bound;
    let d = tempfile::tempdir().unwrap();
    let sparse = |name: &str, bound: Bound| {
        let p = d.path().join(name);
        fs::File::create(&p)
            .unwrap()
            .set_len(bound.max + 1)
            .unwrap();
        p
    };
    let bounds = [
        ("params", Bound::PARAMS),
        ("installer", Bound::INSTALLER_SPEC),
        ("harness", Bound::PROMPT),
        ("lint", Bound::SCRIPT),
    ];
    let readers = readers(d.path());
    for (name, bound) in bounds {
        let file = sparse(name, bound);
        let args = &readers.iter().find(|(n, _)| *n == name).unwrap().1;
        let o = shforge(&reading(args, &file), name);
        let err = assert_one_line(&o, 2, name);
        assert!(
            err.contains(&format!(
                "larger than {bound}, the most shforge reads of {}",
                bound.what
            )),
            "{name}: {err}"
        );
        // One byte less is read (and then judged on its content).
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(bound.max)
            .unwrap();
        let o = shforge(&reading(args, &file), name);
        assert!(
            !stderr(&o).contains("larger than"),
            "{name}: {}",
            stderr(&o)
        );
        fs::remove_file(&file).unwrap();
    }
    let receipt = sparse("receipt.json", Bound::RECEIPT);
    let err = shforge::host::CleanupReceipt::from_file(&receipt)
        .map(drop)
        .unwrap_err()
        .to_string();
    assert!(err.contains("larger than 16 MiB"), "{err}");
    let t = d.path().join("templates");
    fs::create_dir(&t).unwrap();
    fs::File::create(t.join("big.sh"))
        .unwrap()
        .set_len(Bound::TEMPLATE.max + 1)
        .unwrap();
    let o = shforge(
        &["lint-templates".into(), t.display().to_string()],
        "lint-templates",
    );
    let err = assert_one_line(&o, 2, "lint-templates");
    assert!(err.contains("larger than"), "{err}");
}

/// Under an address-space limit far below what reading them would take, a
/// 100 GiB sparse parameter file is refused (from its size), and endless
/// standard input is read only to its bound: exit 2, not an abort.
#[test]
fn huge_inputs_are_refused_under_a_memory_limit() {
    if !support::require_tool("huge_inputs_are_refused_under_a_memory_limit", "prlimit") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let huge = d.path().join("huge.json");
    fs::File::create(&huge).unwrap().set_len(100 << 30).unwrap();
    let limited = |limit: &str, args: &[&str]| {
        let mut c = Command::new("prlimit");
        c.arg(format!("--as={limit}"))
            .arg("--")
            .arg(support::shforge())
            .args(args);
        c
    };
    // 256 MiB: a tenth of a percent of the file.
    let o = run_bounded(
        limited("268435456", &["params", huge.to_str().unwrap()]),
        "huge",
    );
    let err = assert_one_line(&o, 2, "huge file");
    assert!(err.contains("larger than 256 MiB"), "{err}");
    // Endless stdin: the 256 MiB bound plus the program fit in 1 GiB; an
    // unbounded read would exhaust it and abort.
    let mut c = limited("1073741824", &["params", "-"]);
    c.stdin(fs::File::open("/dev/zero").unwrap());
    let o = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = assert_one_line(&o, 2, "endless stdin");
    assert!(err.contains("standard input: larger than 256 MiB"), "{err}");
}

/// `--prompt-file -` reads the prompt from standard input.
#[test]
fn a_prompt_file_of_dash_is_standard_input() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("session");
    let args = readers(d.path()).remove(2).1;
    let args: Vec<String> = reading(&args, Path::new("-"))
        .into_iter()
        .map(|a| {
            if a.ends_with("never-written") {
                out.display().to_string()
            } else {
                a
            }
        })
        .collect();
    let mut child = Command::new(support::shforge())
        .args(&args)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"it's $(not) run\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(support::code(&o), 0, "{}", support::text(&o));
    assert_eq!(
        fs::read(out.join("prompt.txt")).unwrap(),
        b"it's $(not) run\n"
    );
}
