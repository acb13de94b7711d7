//! Attacks on an install from outside its archives: the source dir and the
//! environment.
//!
//! An archive in `--source-dir` is read in place, with no copy, when only
//! root or the installer's own user can change it, and copied as before
//! when anyone else could (or `/proc/self/fd` cannot be read): the bytes
//! that are decompressed are the ones whose digest was checked either way.
//! The attack each of those tests makes is real: a `sha256sum`, `openssl`
//! or `gzip` on PATH that first renames another archive over the source,
//! then runs the real tool; a `cp` that logs its use.
//!
//! Functions exported by the environment, named like the tools and builtins
//! the installer uses, are gone before it runs anything.
//!
//! Every test runs under every bash of the matrix.

use crate::support;

use std::fs;
use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::{Digest as _, Sha256};
use shforge::installer::{Artifact, Installer, Libc};
use support::{Shell, code, text, which};

/// The tools an installer may use, linked into a PATH directory.
const TOOLS: &[&str] = &[
    "tar",
    "gzip",
    "mkdir",
    "rm",
    "mv",
    "cp",
    "ln",
    "readlink",
    "chmod",
    "uname",
    "sleep",
    "cat",
    "sha256sum",
    "flock",
    "timeout",
    "rmdir",
    "sh",
    "printf",
    "awk",
    "find",
    "ls",
    "wc",
    "head",
];

/// A tar.gz whose `bin/fake` prints `says` and lists its own open
/// descriptors into `fds` (which must never show an artifact).
fn runtime_tgz(dir: &Path, name: &str, says: &str, fds: &Path) -> Vec<u8> {
    let src = dir.join(format!("tree-{name}"));
    fs::create_dir_all(src.join("bin")).unwrap();
    let script = format!(
        "#!/bin/sh\nls -l /proc/$$/fd/ > '{}' 2>&1\nprintf '%s\\n' '{says}'\n",
        fds.display()
    );
    fs::write(src.join("bin/fake"), script).unwrap();
    fs::set_permissions(src.join("bin/fake"), fs::Permissions::from_mode(0o755)).unwrap();
    support::tar_gz_dir(&src, &dir.join(name))
}

/// A source dir holding `fake.tgz` (the pinned archive) and, beside the
/// source dir, `evil.tgz` (another archive an attacker renames over it).
struct World {
    dir: tempfile::TempDir,
    script: PathBuf,
    size: usize,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let fds = dir.path().join("fds.txt");
        fs::create_dir_all(dir.path().join("src")).unwrap();
        let good = runtime_tgz(dir.path(), "fake.tgz", "fake 1.0", &fds);
        runtime_tgz(dir.path(), "evil.tgz", "evil 1.0", &fds);
        let w = World {
            script: dir.path().join("install_fake.sh"),
            size: good.len(),
            dir,
        };
        fs::write(w.artifact(), &good).unwrap();
        w.set_mode(0o644);
        let sha: String = Sha256::digest(&good)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let inst = Installer::builder("fake", "1.0")
            .entry("bin/fake")
            .check(["--version"], "fake 1.0")
            .artifact(
                Artifact::tar_gz("fake.tgz", sha)
                    .arch(std::env::consts::ARCH)
                    .libc(Libc::Glibc),
            )
            .build()
            .unwrap();
        fs::write(&w.script, inst.script().unwrap()).unwrap();
        w
    }
    fn src(&self) -> PathBuf {
        self.dir.path().join("src")
    }
    fn artifact(&self) -> PathBuf {
        self.src().join("fake.tgz")
    }
    fn evil(&self) -> PathBuf {
        self.dir.path().join("evil.tgz")
    }
    fn log(&self) -> PathBuf {
        self.dir.path().join("tools.log")
    }
    fn entry(&self) -> PathBuf {
        self.dir.path().join("prefix/fake-1.0/bin/fake")
    }
    fn set_mode(&self, mode: u32) {
        fs::set_permissions(self.artifact(), fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A PATH of the real tools, where each of `wrapped` is a sh script
    /// that runs `before` (with `$LOG`, `$EVIL` and `$SRC` set), logs its
    /// name and then execs the real tool.
    fn tools(&self, wrapped: &[&str], before: &str) -> PathBuf {
        let bin = self.dir.path().join("bin");
        let _ = fs::remove_dir_all(&bin);
        fs::create_dir_all(&bin).unwrap();
        // A wrapped tool outside TOOLS (openssl) is on PATH only when wrapped.
        let extra = wrapped.iter().filter(|w| !TOOLS.contains(w));
        for name in TOOLS.iter().chain(extra) {
            let Some(real) = which(name) else { continue };
            if wrapped.contains(name) {
                let body = format!(
                    "#!/bin/sh\nLOG='{}' EVIL='{}' SRC='{}'\n{before}\necho {name} >> \"$LOG\"\nexec '{}' \"$@\"\n",
                    self.log().display(),
                    self.evil().display(),
                    self.artifact().display(),
                    real.display()
                );
                fs::write(bin.join(name), body).unwrap();
                fs::set_permissions(bin.join(name), fs::Permissions::from_mode(0o755)).unwrap();
            } else {
                symlink(real, bin.join(name)).unwrap();
            }
        }
        bin
    }

    /// `c` (a shell and what comes before the script) with the installer,
    /// `--prefix` and `--source-dir` appended and PATH `path`; the prefix
    /// and the tools' log of an earlier run are removed first.
    fn command(&self, mut c: Command, path: &Path) -> Command {
        let _ = fs::remove_dir_all(self.dir.path().join("prefix"));
        let _ = fs::remove_file(self.log());
        c.arg(&self.script)
            .arg("--prefix")
            .arg(self.dir.path().join("prefix"))
            .arg("--source-dir")
            .arg(self.src())
            .env("PATH", path)
            .env_remove("SHELLOPTS")
            .env_remove("BASH_ENV");
        c
    }

    fn install(&self, sh: &Shell, path: &Path) -> Output {
        let mut c = Command::new(sh.program());
        c.args(&sh.argv[1..]);
        support::run(self.command(c, path))
    }

    fn logged(&self) -> String {
        fs::read_to_string(self.log()).unwrap_or_default()
    }

    /// The install succeeded with the pinned archive's entry, and no
    /// descriptor of the installer's reached the entry check.
    fn assert_pinned_installed(&self, sh: &Shell, o: &Output) {
        assert_eq!(code(o), 0, "{}: {}", sh.name, text(o));
        // Written by the entry check; read before the entry runs again here.
        let fds = fs::read_to_string(self.dir.path().join("fds.txt")).unwrap();
        assert!(
            !fds.contains(".tgz"),
            "{}: the entry check inherited an artifact's descriptor:\n{fds}",
            sh.name
        );
        let out = support::run(Command::new(self.entry()));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "fake 1.0\n",
            "{}",
            sh.name
        );
    }

    /// The `get` progress line of the archive, without its elapsed time.
    fn get_line(&self, o: &Output) -> String {
        let err = String::from_utf8_lossy(&o.stderr);
        let line = err
            .lines()
            .find(|l| l.starts_with("install_fake: get fake.tgz: "))
            .unwrap_or_else(|| panic!("no get line in:\n{err}"));
        let (head, _) = line.rsplit_once(", ").unwrap();
        head.strip_prefix("install_fake: ").unwrap().to_owned()
    }
}

#[test]
fn an_archive_only_root_or_its_owner_can_write_is_read_in_place() {
    let shells = support::bashes();
    for sh in &shells {
        let w = World::new();
        // A cp that is used fails the install.
        let path = w.tools(&["cp"], "echo cp >> \"$LOG\"; exit 1");
        let o = w.install(sh, &path);
        w.assert_pinned_installed(sh, &o);
        assert_eq!(w.logged(), "", "{}: cp was used", sh.name);
        assert_eq!(
            w.get_line(&o),
            format!(
                "get fake.tgz: {} bytes, read in place from {}",
                w.size,
                w.src().display()
            ),
            "{}",
            sh.name
        );
    }
    support::report(
        "an_archive_only_root_or_its_owner_can_write_is_read_in_place",
        &shells,
    );
}

#[test]
fn an_archive_anyone_else_could_change_is_copied() {
    let shells = support::bashes();
    for sh in &shells {
        let w = World::new();
        let path = w.tools(&["cp"], "");
        let mut cases = vec![
            (0o664, "group or others can write it"),
            (0o646, "group or others can write it"),
        ];
        if support::is_root() {
            cases.push((0o644, "it is owned by uid 65534"));
        } else {
            support::loud("SKIPPING the foreign-owner case: chown needs root");
        }
        for (mode, why) in cases {
            w.set_mode(mode);
            if why.contains("65534") {
                std::os::unix::fs::chown(w.artifact(), Some(65534), Some(65534)).unwrap();
            }
            let o = w.install(sh, &path);
            w.assert_pinned_installed(sh, &o);
            assert_eq!(w.logged(), "cp\n", "{}: mode {mode:o}", sh.name);
            assert_eq!(
                w.get_line(&o),
                format!(
                    "get fake.tgz: {} bytes, copied from {} ({why})",
                    w.size,
                    w.src().display()
                ),
                "{}",
                sh.name
            );
        }
    }
    support::report("an_archive_anyone_else_could_change_is_copied", &shells);
}

/// The source is renamed over (by whoever can write its directory) once
/// the installer has it: when the digest is taken, and when the
/// decompression starts. The pinned archive is installed all the same,
/// read in place and copied alike; a reader by name would check or unpack
/// the other one.
#[test]
fn a_source_renamed_over_once_held_changes_nothing() {
    let shells = support::bashes();
    for sh in &shells {
        for mode in [0o644, 0o664] {
            // The digest by sha256sum (openssl is not on PATH then) and by
            // openssl (the first digest tool where it exists), then gzip.
            for tool in ["sha256sum", "openssl", "gzip"] {
                let w = World::new();
                w.set_mode(mode);
                let path = w.tools(
                    &[tool],
                    "cp \"$EVIL\" \"$SRC.new\" && mv \"$SRC.new\" \"$SRC\" || exit 9",
                );
                let o = w.install(sh, &path);
                w.assert_pinned_installed(sh, &o);
                assert!(
                    w.logged().contains(tool),
                    "{}: {tool} was not run: {}",
                    sh.name,
                    text(&o)
                );
                assert_eq!(
                    fs::read(w.artifact()).unwrap(),
                    fs::read(w.evil()).unwrap(),
                    "{}: the swap did not happen",
                    sh.name
                );
            }
        }
    }
    support::report("a_source_renamed_over_once_held_changes_nothing", &shells);
}

/// Where `/proc/self/fd` cannot be read (here /proc is an empty tmpfs in a
/// private mount namespace), the archive is copied.
#[test]
fn without_proc_self_fd_the_archive_is_copied() {
    let test = "without_proc_self_fd_the_archive_is_copied";
    if !support::require_root(test) || !support::require_tool(test, "unshare") {
        return;
    }
    let shells = support::bashes();
    for sh in &shells {
        let w = World::new();
        let path = w.tools(&["cp"], "");
        let mut c = Command::new(which("unshare").unwrap());
        c.args(["--mount", "--propagation", "private", "--"])
            .arg(which("sh").unwrap())
            .arg("-c")
            .arg("\"$0\" -t tmpfs none /proc && exec \"$@\"")
            .arg(which("mount").unwrap())
            .args(&sh.argv);
        let o = support::run(w.command(c, &path));
        assert_eq!(code(&o), 0, "{}: {}", sh.name, text(&o));
        assert_eq!(w.logged(), "cp\n", "{}", sh.name);
        assert_eq!(
            w.get_line(&o),
            format!(
                "get fake.tgz: {} bytes, copied from {} (/proc/self/fd cannot be read)",
                w.size,
                w.src().display()
            ),
            "{}",
            sh.name
        );
        let out = support::run(Command::new(w.entry()));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "fake 1.0\n",
            "{}",
            sh.name
        );
    }
    support::report(test, &shells);
}

/// Exported functions named like the installer's tools and builtins, in
/// both forms (`BASH_FUNC_NAME%%`, and `NAME=() {` as bash 3.2.48 imports
/// them): none runs, the install is the pinned one and nothing is left
/// beside it (an `rm` of its own would leave the stage).
#[test]
fn inherited_functions_never_run_in_an_install() {
    const NAMES: &[&str] = &[
        "rm",
        "mv",
        "cp",
        "mkdir",
        "tar",
        "gzip",
        "sha256sum",
        "find",
        "ls",
        "chmod",
        "set",
        "exec",
        "cd",
        "command",
        "printf",
        "unset",
        "local",
        "read",
        "kill",
        "wait",
        "trap",
        "compgen",
        "builtin",
    ];
    let shells = support::bashes();
    for sh in &shells {
        let w = World::new();
        let path = w.tools(&[], "");
        let mut c = Command::new(sh.program());
        c.args(&sh.argv[1..]);
        let mut c = w.command(c, &path);
        for name in NAMES {
            let body = format!("() {{ echo hijacked-{name}; echo hijacked-{name} >&2; }}");
            c.env(format!("BASH_FUNC_{name}%%"), &body);
        }
        c.env(
            "rm",
            "() { echo hijacked-old-rm; echo hijacked-old-rm >&2; }",
        );
        let o = support::run(c);
        w.assert_pinned_installed(sh, &o);
        assert!(!text(&o).contains("hijacked"), "{}: {}", sh.name, text(&o));
        let mut left: Vec<String> = fs::read_dir(w.dir.path().join("prefix"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".lock") && !n.ends_with(".lockq"))
            .collect();
        left.sort();
        assert_eq!(left, ["fake-1.0"], "{}", sh.name);
    }
    support::report("inherited_functions_never_run_in_an_install", &shells);
}
