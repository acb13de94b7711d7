//! Running commands and reading what they did.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Path of the built `shforge` binary.
pub fn shforge() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_shforge"))
}

/// Run a command to completion with stdin from /dev/null.
pub fn run(mut c: Command) -> Output {
    c.stdin(Stdio::null()).output().expect("command starts")
}

/// `shforge ARGS...`, run to completion.
pub fn run_shforge(args: &[&str]) -> Output {
    let mut c = Command::new(shforge());
    c.args(args);
    run(c)
}

/// The exit status as a shell reports it: the code, or 128+N after signal N.
pub fn code(o: &Output) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    o.status
        .code()
        .unwrap_or_else(|| 128 + o.status.signal().unwrap_or(0))
}

/// Status, stdout and stderr, for an assertion message.
pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Write the parameter file `file` with the real `shforge params` from
/// `json`; `file` is returned.
pub fn write_params(file: &std::path::Path, json: &serde_json::Value) -> PathBuf {
    use std::io::Write as _;
    let mut child = Command::new(shforge())
        .args(["params", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("shforge params starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "shforge params {json}: {}",
        text(&out)
    );
    std::fs::write(file, &out.stdout).unwrap();
    file.to_path_buf()
}

/// The sha256 of `bytes`, in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest as _, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `shforge fake-model-server` with `args` as a child (stdout piped) and the
/// URL its first line names ("listening on URL"). The caller kills it.
pub fn spawn_fake_model_server<I, S>(args: I) -> (std::process::Child, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    use std::io::BufRead as _;
    let mut child = Command::new(shforge())
        .arg("fake-model-server")
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("server said {line:?}"))
        .to_owned();
    (child, url)
}
