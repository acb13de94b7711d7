//! The shell matrix shared by every integration test, and the other things
//! a test may find missing on this machine (root, a tool).
//!
//! `posix_shells()` are the shells a `posix` script must run under; `bashes()`
//! the bash binaries a `bash` script must run under (the `bash` on PATH,
//! `/bin/bash` when it is another binary, and every path in
//! `SHFORGE_TEST_BASHES`, colon-separated). A shell that is not installed is
//! skipped with a loud line on the real stderr (not captured by the test
//! harness); with `SHFORGE_REQUIRE_SHELLS=1` a missing shell fails the test.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::world::root;

/// Whether a shell runs only POSIX scripts or also bash ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A POSIX sh (dash, busybox, …, `bash --posix`).
    Posix,
    /// A real bash (any release), which also runs POSIX scripts.
    Bash,
}

/// One shell of the matrix.
#[derive(Debug, Clone)]
pub struct Shell {
    /// Short label for messages (`dash`, `bash-5.2.15`, `zsh --emulate sh`).
    pub name: String,
    /// The program and the options that come before the script.
    pub argv: Vec<String>,
    /// Posix or bash.
    pub kind: Kind,
}

impl Shell {
    /// `SHELL [ARGV...] script args...`
    pub fn command(&self, script: &Path) -> Command {
        let mut c = Command::new(&self.argv[0]);
        c.args(&self.argv[1..]).arg(script);
        c
    }

    /// `SHELL [ARGV...] -c code` (for small snippets).
    pub fn command_c(&self, code: &str) -> Command {
        let mut c = Command::new(&self.argv[0]);
        c.args(&self.argv[1..]).arg("-c").arg(code);
        c
    }

    /// The program path.
    pub fn program(&self) -> &str {
        &self.argv[0]
    }
}

/// Print a line that a passing test cannot swallow.
pub fn loud(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

fn require_all() -> bool {
    std::env::var("SHFORGE_REQUIRE_SHELLS").is_ok_and(|v| v == "1")
}

/// The first executable `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn bash_version(program: &str) -> Option<String> {
    let out = Command::new(program)
        .args(["-c", "printf %s \"$BASH_VERSION\""])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let v = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.success() && !v.is_empty()).then_some(v)
}

/// The bash releases beside the checkout (`../shared/bashes/*/bash`), used
/// when `SHFORGE_TEST_BASHES` is not set, so a developer's plain `cargo test`
/// runs the same bash matrix as CI wherever that directory exists.
fn shared_bashes() -> Vec<PathBuf> {
    let dir = root().join("../shared/bashes");
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bash"))
        .filter(|p| is_executable(p))
        .collect();
    found.sort();
    found
}

/// The bash binaries beyond the one on PATH: `SHFORGE_TEST_BASHES` when set
/// (an empty value means none), else `../shared/bashes`; each with a label.
fn extra_bashes() -> Vec<(String, PathBuf)> {
    match std::env::var("SHFORGE_TEST_BASHES") {
        Ok(list) => list
            .split(':')
            .filter(|p| !p.is_empty())
            .map(|p| (format!("SHFORGE_TEST_BASHES entry {p}"), PathBuf::from(p)))
            .collect(),
        Err(_) => {
            let found = shared_bashes();
            if found.is_empty() {
                loud(
                    "SHELL MATRIX: no SHFORGE_TEST_BASHES and no ../shared/bashes: bash scripts run only under the bash on PATH (and /bin/bash)",
                );
            }
            found
                .into_iter()
                .map(|p| (format!("../shared/bashes entry {}", p.display()), p))
                .collect()
        }
    }
}

/// The `major.minor` releases `SHFORGE_REQUIRE_BASHES` (space-separated, e.g.
/// `3.2 4.0 5.3`) says the bash matrix must hold; CI sets all eight.
pub fn required_bash_releases() -> Vec<String> {
    std::env::var("SHFORGE_REQUIRE_BASHES")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

struct Matrix {
    posix: Vec<Shell>,
    bashes: Vec<Shell>,
    missing: Vec<String>,
}

fn discover() -> Matrix {
    let mut missing = Vec::new();
    let mut bashes = Vec::new();
    let mut seen = BTreeSet::new();
    let mut candidates: Vec<(String, Option<PathBuf>)> = vec![
        ("bash on PATH".into(), which("bash")),
        (
            "/bin/bash".into(),
            Some(PathBuf::from("/bin/bash")).filter(|p| is_executable(p)),
        ),
    ];
    for (label, path) in extra_bashes() {
        let found = is_executable(&path).then_some(path);
        candidates.push((label, found));
    }
    for (label, path) in candidates {
        let Some(path) = path else {
            missing.push(label);
            continue;
        };
        let canon = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.insert(canon) {
            continue;
        }
        let program = path.to_string_lossy().into_owned();
        match bash_version(&program) {
            Some(v) => bashes.push(Shell {
                name: format!("bash-{v} ({program})"),
                argv: vec![program],
                kind: Kind::Bash,
            }),
            None => missing.push(format!("{label}: {program} does not run as bash")),
        }
    }

    let mut posix = Vec::new();
    let specs: [(&str, &str, &[&str]); 8] = [
        ("dash", "dash", &[]),
        ("busybox sh", "busybox", &["sh"]),
        ("mksh", "mksh", &[]),
        ("posh", "posh", &[]),
        ("yash", "yash", &[]),
        ("ksh93", "ksh", &[]),
        ("zsh --emulate sh", "zsh", &["--emulate", "sh"]),
        ("bash --posix", "bash", &["--posix"]),
    ];
    for (name, program, args) in specs {
        match which(program) {
            Some(p) => {
                let mut argv = vec![p.to_string_lossy().into_owned()];
                argv.extend(args.iter().map(|s| s.to_string()));
                posix.push(Shell {
                    name: name.into(),
                    argv,
                    kind: Kind::Posix,
                });
            }
            None => missing.push(name.into()),
        }
    }
    posix.extend(bashes.iter().cloned());
    Matrix {
        posix,
        bashes,
        missing,
    }
}

fn matrix() -> &'static Matrix {
    static M: OnceLock<Matrix> = OnceLock::new();
    M.get_or_init(|| {
        let m = discover();
        for name in &m.missing {
            loud(&format!("SHELL MATRIX: SKIPPING {name}: not installed (set SHFORGE_REQUIRE_SHELLS=1 to fail instead)"));
        }
        let names: Vec<&str> = m.bashes.iter().map(|s| s.name.as_str()).collect();
        loud(&format!(
            "SHELL MATRIX: bash scripts run under {} bashes: {}",
            names.len(),
            names.join(", ")
        ));
        m
    })
}

fn checked(shells: &[Shell]) -> Vec<Shell> {
    let m = matrix();
    if require_all() && !m.missing.is_empty() {
        panic!(
            "SHFORGE_REQUIRE_SHELLS=1 but these shells are missing: {}",
            m.missing.join(", ")
        );
    }
    shells.to_vec()
}

/// Every shell a POSIX script must run under (bashes included).
pub fn posix_shells() -> Vec<Shell> {
    checked(&matrix().posix)
}

/// Every bash of the matrix.
pub fn bashes() -> Vec<Shell> {
    checked(&matrix().bashes)
}

/// Print which shells a test ran under.
pub fn report(test: &str, shells: &[Shell]) {
    let names: Vec<&str> = shells.iter().map(|s| s.name.as_str()).collect();
    loud(&format!(
        "SHELL MATRIX: {test} ran under {} shells: {}",
        shells.len(),
        names.join(", ")
    ));
}

/// The locales every round trip runs in: C and a UTF-8 one.
pub const LOCALES: [&str; 2] = ["C", "C.UTF-8"];

/// Whether this process is root (chroot, unshare and namespaces need it).
pub fn is_root() -> bool {
    // SAFETY-free check: read our own effective uid from /proc.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// Skip (loudly) a test that needs root, or fail when shells are required.
pub fn require_root(test: &str) -> bool {
    if is_root() {
        return true;
    }
    if require_all() {
        panic!("{test} needs root (SHFORGE_REQUIRE_SHELLS=1 forbids skipping)");
    }
    loud(&format!("SKIPPING {test}: needs root"));
    false
}

/// Skip (loudly) a test that needs `tool` (a name looked up on PATH, or an
/// absolute path), or fail when `SHFORGE_REQUIRE_SHELLS=1` forbids skipping.
pub fn require_tool(test: &str, tool: &str) -> bool {
    let found = if tool.starts_with('/') {
        is_executable(Path::new(tool))
    } else {
        which(tool).is_some()
    };
    require(test, found, tool)
}

/// Skip (loudly) a test whose need `what` is not `met`, or fail when
/// `SHFORGE_REQUIRE_SHELLS=1` forbids skipping.
pub fn require(test: &str, met: bool, what: &str) -> bool {
    if met {
        return true;
    }
    if require_all() {
        panic!("{test} needs {what} (SHFORGE_REQUIRE_SHELLS=1 forbids skipping)");
    }
    loud(&format!(
        "SKIPPING {test}: needs {what}, which is not installed (set SHFORGE_REQUIRE_SHELLS=1 to fail instead)"
    ));
    false
}
