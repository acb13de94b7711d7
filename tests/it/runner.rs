//! generated/harness_runner.sh under every bash of the matrix, in the C and a
//! UTF-8 locale, with parameter files written by the real `shforge params`
//! and fake harness CLIs from tests/fixtures/runner/.

use crate::support as common;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{Shell, code};
use serde_json::json;

/// A hang guard, not a timing assertion: a runner that went quadratic on the
/// 16 MiB line would otherwise run for hours.
const HANG_GUARD: Duration = Duration::from_secs(300);

fn runner_script() -> PathBuf {
    common::root().join("generated/harness_runner.sh")
}

fn fixture(name: &str) -> String {
    common::root()
        .join("tests/fixtures/runner")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

fn p(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Write a parameter file with the real `shforge params`.
fn params(dir: &Path, json: &serde_json::Value) -> PathBuf {
    let mut child = Command::new(common::shforge())
        .arg("params")
        .arg("-")
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
        String::from_utf8_lossy(&out.stderr)
    );
    let file = dir.join("params.sh");
    std::fs::write(&file, &out.stdout).unwrap();
    file
}

/// The bash major version from the matrix label (`bash-5.2.15(1)-release (...)`).
fn major(shell: &Shell) -> u32 {
    shell.name["bash-".len()..]
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("no version in {}", shell.name))
}

/// The bash minor version from the matrix label.
fn minor(shell: &Shell) -> u32 {
    shell.name["bash-".len()..]
        .split('.')
        .nth(1)
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("no version in {}", shell.name))
}

/// Run a command with a clean environment: PATH, HOME, LC_ALL and `env`.
fn run_env(mut cmd: Command, locale: &str, env: &[(&str, &str)], cwd: &Path) -> Output {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", cwd)
        .env("LC_ALL", locale)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("bash starts");
    let pid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        stdout.read_to_end(&mut v).ok();
        v
    });
    let err_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        stderr.read_to_end(&mut v).ok();
        v
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > HANG_GUARD {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("the runner did not finish within {HANG_GUARD:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: out_thread.join().unwrap(),
        stderr: err_thread.join().unwrap(),
    }
}

/// `SHELL harness_runner.sh PARAMS` in `cwd`.
fn run(shell: &Shell, locale: &str, params: &Path, cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = shell.command(&runner_script());
    cmd.arg(params);
    run_env(cmd, locale, env, cwd)
}

/// Every bash with every locale.
fn pairs(shells: &[Shell]) -> Vec<(&Shell, &'static str)> {
    shells
        .iter()
        .flat_map(|s| common::LOCALES.iter().map(move |l| (s, *l)))
        .collect()
}

fn err(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What the events file must hold after the timestamps: each line with one
/// trailing CR removed, a final unterminated line kept.
fn expected_events(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() + 64);
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

/// Split an events file into timestamps and the rest, checking each stamp's
/// shape (fractional from bash 5.0 on), range and order.
fn check_events(events: &[u8], shell: &Shell, t0: f64, t1: f64, what: &str) -> Vec<u8> {
    let fractional = major(shell) >= 5;
    let mut rest = Vec::with_capacity(events.len());
    let mut last = 0.0f64;
    assert!(
        events.is_empty() || events.ends_with(b"\n"),
        "{what}: events file does not end with a newline"
    );
    for line in events.split_inclusive(|&b| b == b'\n') {
        let tab = line
            .iter()
            .position(|&b| b == b'\t')
            .unwrap_or_else(|| panic!("{what}: event line without a tab"));
        let stamp = std::str::from_utf8(&line[..tab]).expect("ASCII stamp");
        let (secs, frac) = match stamp.split_once('.') {
            Some((s, f)) => (s, Some(f)),
            None => (stamp, None),
        };
        assert!(
            !secs.is_empty() && secs.bytes().all(|b| b.is_ascii_digit()),
            "{what}: bad stamp {stamp:?}"
        );
        match (fractional, frac) {
            (true, Some(f)) => assert!(
                f.len() == 6 && f.bytes().all(|b| b.is_ascii_digit()),
                "{what}: bad fraction in {stamp:?}"
            ),
            (false, None) => {}
            _ => panic!(
                "{what} under {}: stamp {stamp:?} has the wrong shape",
                shell.name
            ),
        }
        let t: f64 = stamp.parse().unwrap();
        assert!(t >= last, "{what}: stamps out of order ({t} after {last})");
        assert!(
            t >= t0 - 2.0 && t <= t1 + 2.0,
            "{what}: stamp {t} outside the run [{t0}, {t1}]"
        );
        last = t;
        rest.extend_from_slice(&line[tab + 1..]);
    }
    rest
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// The mixed input: JSON, CRLF, two CRs, a lone CR, tabs, empty lines,
/// invalid UTF-8, every byte but NUL and newline, shell metacharacters, and a
/// final line without a newline.
fn mixed_input() -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(b"{\"type\":\"start\",\"n\":1}\n");
    v.extend_from_slice("{\"text\":\"caf\u{e9} \u{2615}\"}\r\n".as_bytes());
    v.extend_from_slice(b"plain text, not JSON\n");
    v.extend_from_slice(b"\ttab\tseparated\t\n");
    v.extend_from_slice(b"two CRs\r\r\n");
    v.extend_from_slice(b"lone\rCR inside\n");
    v.extend_from_slice(b"\n");
    v.extend_from_slice(b"\r\n");
    v.extend_from_slice(b"invalid utf8 \xff\xfe\xc3\x28 \xe2\x82\n");
    v.extend((1u8..=255).filter(|&b| b != b'\n'));
    v.push(b'\n');
    v.extend_from_slice(b"* ? [a] $HOME `id` $(id) \\ -e -n %s %d '\"\n");
    v.extend_from_slice(b"final line without newline");
    v
}

#[test]
fn events_mode_passes_every_byte_through() {
    let shells = common::bashes();
    let input = mixed_input();
    let want = expected_events(&input);
    for shell in &shells {
        for locale in common::LOCALES {
            let d = tmp();
            let data = d.path().join("cli-output");
            std::fs::write(&data, &input).unwrap();
            let events = d.path().join("events.log");
            let stderr = d.path().join("stderr.log");
            let file = params(
                d.path(),
                &json!({
                    "RUNNER_ARGV": [fixture("replay.sh"), p(&data), "3", "to stderr"],
                    "RUNNER_MODE": "events",
                    "RUNNER_EVENTS": p(&events),
                    "RUNNER_STDERR": p(&stderr),
                }),
            );
            let what = format!("{} {locale}", shell.name);
            let t0 = now();
            let out = run(shell, locale, &file, d.path(), &[]);
            let t1 = now();
            assert_eq!(code(&out), 3, "{what}: {}", err(&out));
            assert!(out.stdout.is_empty(), "{what}: runner stdout not empty");
            let got = check_events(&std::fs::read(&events).unwrap(), shell, t0, t1, &what);
            assert!(
                got == want,
                "{what}: events differ:\n got {:?}\nwant {:?}",
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want)
            );
            assert_eq!(
                std::fs::read_to_string(&stderr).unwrap(),
                "to stderr\n",
                "{what}"
            );
        }
    }
    common::report("events_mode_passes_every_byte_through", &shells);
}

#[test]
fn events_mode_handles_json_streams_and_empty_output() {
    let shells = common::bashes();
    let mut input = Vec::new();
    for i in 0..2000 {
        input.extend_from_slice(
            format!("{{\"type\":\"message\",\"n\":{i},\"text\":\"line {i}\"}}\n").as_bytes(),
        );
    }
    for shell in &shells {
        for locale in common::LOCALES {
            for (name, data_bytes, status) in [("json", &input[..], 0), ("empty", &b""[..], 4)] {
                let d = tmp();
                let data = d.path().join("cli-output");
                std::fs::write(&data, data_bytes).unwrap();
                let events = d.path().join("events.log");
                let file = params(
                    d.path(),
                    &json!({
                        "RUNNER_ARGV": [fixture("replay.sh"), p(&data), status.to_string()],
                        "RUNNER_MODE": "events",
                        "RUNNER_EVENTS": p(&events),
                    }),
                );
                let what = format!("{name} {} {locale}", shell.name);
                let t0 = now();
                let out = run(shell, locale, &file, d.path(), &[]);
                let t1 = now();
                assert_eq!(code(&out), status, "{what}: {}", err(&out));
                let got = check_events(&std::fs::read(&events).unwrap(), shell, t0, t1, &what);
                assert!(got == expected_events(data_bytes), "{what}: events differ");
            }
        }
    }
    common::report("events_mode_handles_json_streams_and_empty_output", &shells);
}

/// NUL cannot live in a bash variable, and `read` differs by version:
/// bash 4.4 and later drop each NUL and keep the rest of the line; 3.2 to
/// 4.2 keep the line up to its first NUL and lose the rest of it (bash 4.3
/// is not in the matrix: either is accepted). The lines after it are intact
/// either way. No fork-free, streaming way makes old bashes drop the NUL:
/// `read -d ''` would stop at NUL but not at newline, so nothing would be
/// stamped until the next NUL or the end of the stream.
#[test]
fn nul_bytes_do_not_break_the_stream() {
    let shells = common::bashes();
    for (shell, locale) in pairs(&shells) {
        let d = tmp();
        let data = d.path().join("data");
        std::fs::write(&data, b"a\0b\0\0c\r\n\0\n{\"next\":1}\n").unwrap();
        let events = d.path().join("ev");
        let file = params(
            d.path(),
            &json!({
                "RUNNER_ARGV": [fixture("replay.sh"), p(&data)],
                "RUNNER_MODE": "events",
                "RUNNER_EVENTS": p(&events),
            }),
        );
        let out = run(shell, locale, &file, d.path(), &[]);
        assert_eq!(code(&out), 0, "{}: {}", shell.name, err(&out));
        let got = check_events(
            &std::fs::read(&events).unwrap(),
            shell,
            0.0,
            f64::MAX,
            &shell.name,
        );
        let dropped: &[u8] = b"abc\n\n{\"next\":1}\n";
        let cut: &[u8] = b"a\n\n{\"next\":1}\n";
        let version = (major(shell), minor(shell));
        let ok = match version {
            (4, 3) => got == dropped || got == cut,
            v if v >= (4, 4) => got == dropped,
            _ => got == cut,
        };
        assert!(
            ok,
            "{} {locale}: {:?}",
            shell.name,
            String::from_utf8_lossy(&got)
        );
    }
    common::report("nul_bytes_do_not_break_the_stream", &shells);
}

/// One 16 MiB line (multibyte UTF-8 text, no CR) and one 2 MiB line ending
/// in CR: byte-exact, under every bash, in both locales. A quadratic CR
/// check or a per-character locale cost would trip the hang guard.
#[test]
fn events_mode_long_lines() {
    let shells = common::bashes();
    let unit = "{\"k\":\"caf\u{e9} \u{2615} x\"},".as_bytes();
    let mut big: Vec<u8> = unit.iter().copied().cycle().take(16 << 20).collect();
    big.push(b'\n');
    let mut crlf: Vec<u8> = b"abc\t".iter().copied().cycle().take(2 << 20).collect();
    crlf.extend_from_slice(b"\r\n");
    let d = tmp();
    let big_file = d.path().join("big");
    let crlf_file = d.path().join("crlf");
    std::fs::write(&big_file, &big).unwrap();
    std::fs::write(&crlf_file, &crlf).unwrap();
    let jobs: Vec<(Shell, &str)> = shells
        .iter()
        .flat_map(|s| common::LOCALES.iter().map(move |l| (s.clone(), *l)))
        .collect();
    // Two at a time: the machine has two cores and the other tests run too.
    for pair in jobs.chunks(2) {
        std::thread::scope(|scope| {
            for (shell, locale) in pair {
                let (big, crlf, big_file, crlf_file) = (&big, &crlf, &big_file, &crlf_file);
                scope.spawn(move || {
                    for (name, data, input) in
                        [("16MiB", big_file, big), ("2MiB+CR", crlf_file, crlf)]
                    {
                        let d = tmp();
                        let events = d.path().join("events.log");
                        let file = params(
                            d.path(),
                            &json!({
                                "RUNNER_ARGV": [fixture("replay.sh"), p(data)],
                                "RUNNER_MODE": "events",
                                "RUNNER_EVENTS": p(&events),
                            }),
                        );
                        let what = format!("{name} {} {locale}", shell.name);
                        let t0 = now();
                        let out = run(shell, locale, &file, d.path(), &[]);
                        let t1 = now();
                        assert_eq!(code(&out), 0, "{what}: {}", err(&out));
                        let got =
                            check_events(&std::fs::read(&events).unwrap(), shell, t0, t1, &what);
                        assert!(got == expected_events(input), "{what}: events differ");
                    }
                });
            }
        });
    }
    common::report("events_mode_long_lines", &shells);
}

/// Everything direct mode sets up reaches the CLI: cwd, PATH prefix,
/// RUNNER_ENV, setup, stdin (default /dev/null), stdout and stderr files, and
/// the CLI's exit status.
#[test]
fn direct_mode_sets_up_the_cli() {
    let shells = common::bashes();
    for shell in &shells {
        for locale in common::LOCALES {
            let d = tmp();
            let work = d.path().join("work dir");
            let bin = d.path().join("bin");
            std::fs::create_dir(&work).unwrap();
            std::fs::create_dir(&bin).unwrap();
            std::fs::copy(fixture("probe.sh"), bin.join("probe")).unwrap();
            let mark = d.path().join("mark");
            let (out_f, err_f, in_f) = (d.path().join("o"), d.path().join("e"), d.path().join("i"));
            std::fs::write(&in_f, "from stdin file").unwrap();
            let what = format!("{} {locale}", shell.name);
            // RUNNER_ENV values with '=' and quotes; setup sees the prefix and
            // its cd and exports reach the CLI; RUNNER_ENV is applied after it.
            let file = params(
                d.path(),
                &json!({
                    "RUNNER_ARGV": ["probe", p(&mark), "7"],
                    "RUNNER_CWD": p(d.path()),
                    "RUNNER_PATH_PREFIX": p(&bin),
                    "RUNNER_ENV": ["PROBE_A=x=y 'q'", "PROBE_B=", "PROBE_C=from env"],
                    "RUNNER_SETUP": "command -v probe >/dev/null\ncd 'work dir'\nexport PROBE_C=from-setup PROBE_D=from-setup",
                    "RUNNER_STDIN": p(&in_f),
                    "RUNNER_STDOUT": p(&out_f),
                    "RUNNER_STDERR": p(&err_f),
                }),
            );
            let out = run(shell, locale, &file, d.path(), &[]);
            assert_eq!(code(&out), 7, "{what}: {}", err(&out));
            assert!(mark.exists(), "{what}: CLI did not run");
            let got = std::fs::read_to_string(&out_f).unwrap();
            let want = format!(
                "cwd={}\nPROBE_A=x=y 'q'\nPROBE_B=\nPROBE_C=from env\nPROBE_D=from-setup\npath={}:{}\nstdin={}\nstdin-data=from stdin file\n",
                std::fs::canonicalize(&work).unwrap().display(),
                bin.display(),
                std::env::var("PATH").unwrap(),
                std::fs::canonicalize(&in_f).unwrap().display(),
            );
            assert_eq!(got, want, "{what}");
            assert_eq!(
                std::fs::read_to_string(&err_f).unwrap(),
                "probe stderr\n",
                "{what}"
            );
            assert!(
                out.stdout.is_empty() && out.stderr.is_empty(),
                "{what}: {}",
                err(&out)
            );

            // Defaults: stdin is /dev/null, stdout and stderr are inherited.
            let file = params(
                d.path(),
                &json!({"RUNNER_ARGV": [fixture("probe.sh"), p(&mark), "0"]}),
            );
            let out = run(shell, locale, &file, d.path(), &[]);
            assert_eq!(code(&out), 0, "{what}: {}", err(&out));
            let got = String::from_utf8_lossy(&out.stdout);
            assert!(
                got.contains("\nstdin=/dev/null\nstdin-data=\n"),
                "{what}: {got}"
            );
            assert!(!got.contains("RUNNER_"), "{what}: {got}");
            assert_eq!(err(&out), "probe stderr\n", "{what}");
        }
    }
    common::report("direct_mode_sets_up_the_cli", &shells);
}

/// Events mode gets the same setup: cwd, RUNNER_ENV, stdin, stderr.
#[test]
fn events_mode_sets_up_the_cli() {
    let shells = common::bashes();
    for shell in &shells {
        for locale in common::LOCALES {
            let d = tmp();
            let mark = d.path().join("mark");
            let events = d.path().join("ev");
            let err_f = d.path().join("e");
            let what = format!("{} {locale}", shell.name);
            let file = params(
                d.path(),
                &json!({
                    "RUNNER_ARGV": [fixture("probe.sh"), p(&mark), "0"],
                    "RUNNER_MODE": "events",
                    "RUNNER_EVENTS": p(&events),
                    "RUNNER_CWD": "/",
                    "RUNNER_ENV": ["PROBE_A=1", "LC_ALL=POSIX"],
                    "RUNNER_STDERR": p(&err_f),
                }),
            );
            let t0 = now();
            let out = run(shell, locale, &file, d.path(), &[]);
            let t1 = now();
            assert_eq!(code(&out), 0, "{what}: {}", err(&out));
            let got = check_events(&std::fs::read(&events).unwrap(), shell, t0, t1, &what);
            let got = String::from_utf8(got).unwrap();
            assert!(got.starts_with("cwd=/\nPROBE_A=1\npath="), "{what}: {got}");
            assert!(
                got.contains("\nstdin=/dev/null\nstdin-data=\n"),
                "{what}: {got}"
            );
            assert_eq!(
                std::fs::read_to_string(&err_f).unwrap(),
                "probe stderr\n",
                "{what}"
            );
        }
    }
    common::report("events_mode_sets_up_the_cli", &shells);
}

/// Every RUNNER_* variable from the environment is forgotten: exported
/// scalars, and arrays and exports made by a BASH_ENV file; none of them
/// configures the runner or reaches the CLI.
#[test]
fn inherited_runner_variables_are_cleared() {
    let shells = common::bashes();
    for (shell, locale) in pairs(&shells) {
        for mode in ["direct", "events"] {
            let d = tmp();
            let mark = d.path().join("mark");
            let hijack = d.path().join("hijack");
            let bash_env = d.path().join("bash_env");
            std::fs::write(
                &bash_env,
                format!(
                    "RUNNER_ENV=(PROBE_EVIL=1)\nRUNNER_ARGV=(/bin/false)\nexport RUNNER_LEAK=1\nRUNNER_STDIN=/nonexistent\ndeclare -a RUNNER_CWD='([0]=\"/\")'\nRUNNER_SETUP='touch {}'\n",
                    p(&hijack)
                ),
            )
            .unwrap();
            let events = d.path().join("ev");
            let out_f = d.path().join("out");
            let mut json = json!({"RUNNER_ARGV": [fixture("probe.sh"), p(&mark), "4"]});
            if mode == "events" {
                json["RUNNER_MODE"] = "events".into();
                json["RUNNER_EVENTS"] = p(&events).into();
            } else {
                json["RUNNER_STDOUT"] = p(&out_f).into();
            }
            let file = params(d.path(), &json);
            let hijack_s = p(&hijack);
            let env = [
                ("BASH_ENV", bash_env.to_str().unwrap()),
                ("RUNNER_ARGV", "/bin/false"),
                (
                    "RUNNER_MODE",
                    if mode == "events" { "direct" } else { "events" },
                ),
                ("RUNNER_EVENTS", hijack_s.as_str()),
                ("RUNNER_STDOUT", hijack_s.as_str()),
                ("RUNNER_SETUP", "exit 9"),
                ("RUNNER_BOGUS", "1"),
                ("RUNNER_PATH_PREFIX", "/nonexistent"),
            ];
            let what = format!("{} {locale} {mode}", shell.name);
            let out = run(shell, locale, &file, d.path(), &env);
            assert_eq!(code(&out), 4, "{what}: {}", err(&out));
            assert!(mark.exists(), "{what}: CLI did not run");
            assert!(
                !hijack.exists(),
                "{what}: an inherited variable configured the runner"
            );
            let got = if mode == "events" {
                let ev = std::fs::read(&events).unwrap();
                check_events(&ev, shell, 0.0, f64::MAX, &what)
            } else {
                std::fs::read(&out_f).unwrap()
            };
            let got = String::from_utf8(got).unwrap();
            assert!(
                !got.contains("RUNNER_") && !got.contains("PROBE_EVIL"),
                "{what}: {got}"
            );
            assert!(!got.contains("/nonexistent"), "{what}: {got}");
        }
    }
    common::report("inherited_runner_variables_are_cleared", &shells);
}

/// A hand-written parameter file (compound array form, an exported
/// scalar) works too, and its RUNNER_* variables do not reach the CLI.
#[test]
fn hand_written_params_file() {
    let shells = common::bashes();
    for (shell, locale) in pairs(&shells) {
        let d = tmp();
        let mark = d.path().join("mark");
        let file = d.path().join("params.sh");
        std::fs::write(
            &file,
            format!(
                "export RUNNER_MODE=direct\nRUNNER_ARGV=('{}' '{}' 6)\nRUNNER_ENV=('PROBE_X=1')\n",
                fixture("probe.sh"),
                p(&mark)
            ),
        )
        .unwrap();
        let out = run(shell, locale, &file, d.path(), &[]);
        assert_eq!(code(&out), 6, "{}: {}", shell.name, err(&out));
        let got = String::from_utf8_lossy(&out.stdout);
        assert!(got.contains("\nPROBE_X=1\n"), "{}: {got}", shell.name);
        assert!(!got.contains("RUNNER_"), "{}: {got}", shell.name);
    }
    common::report("hand_written_params_file", &shells);
}

/// Bad parameter files: 125 with one line naming the problem, and the CLI
/// never starts.
#[test]
fn bad_parameters_exit_125() {
    let shells = common::bashes();
    let d = tmp();
    let mark = d.path().join("mark");
    let argv = json!([fixture("probe.sh"), p(&mark), "0"]);
    let cases: Vec<(serde_json::Value, &str)> = vec![
        (json!({}), "RUNNER_ARGV is missing or empty"),
        (
            json!({"RUNNER_ARGV": []}),
            "RUNNER_ARGV is missing or empty",
        ),
        (
            json!({"RUNNER_ARGV": "probe"}),
            "RUNNER_ARGV must be an array",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_MODE": "stream"}),
            "RUNNER_MODE must be direct or events",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_MODE": ""}),
            "RUNNER_MODE must be direct or events",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_MODE": ["events"]}),
            "RUNNER_MODE must be a string",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_CWD": ["/"]}),
            "RUNNER_CWD must be a string",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_SETUP": ["true"]}),
            "RUNNER_SETUP must be a string",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_ENV": "A=1"}),
            "RUNNER_ENV must be an array",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_ENV": ["A=1", "1A=2"]}),
            "RUNNER_ENV[1] is not NAME=VALUE",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_ENV": ["NOEQUALS"]}),
            "RUNNER_ENV[0] is not NAME=VALUE",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_ENV": ["A-B=1"]}),
            "RUNNER_ENV[0] is not NAME=VALUE",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_ENV": ["\u{e9}=1"]}),
            "RUNNER_ENV[0] is not NAME=VALUE",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_ENV": ["UID=0"]}),
            "cannot export UID",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_ARGS": ["x"]}),
            "unknown parameter RUNNER_ARGS",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_MODE": "events"}),
            "events mode needs RUNNER_EVENTS",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_MODE": "events", "RUNNER_EVENTS": "/tmp/x", "RUNNER_STDOUT": "/tmp/y"}),
            "RUNNER_STDOUT does not apply in events mode",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_STDOUT": ""}),
            "RUNNER_STDOUT is empty",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_CWD": ""}),
            "RUNNER_CWD is empty",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_CWD": "/nonexistent/dir"}),
            "cannot enter RUNNER_CWD",
        ),
        (
            json!({"RUNNER_ARGV": argv, "RUNNER_CWD": "/etc/passwd"}),
            "cannot enter RUNNER_CWD",
        ),
    ];
    for shell in &shells {
        for locale in common::LOCALES {
            for (json, want) in &cases {
                let file = params(d.path(), json);
                let what = format!("{} {locale} {json}", shell.name);
                let out = run(shell, locale, &file, d.path(), &[]);
                assert_eq!(code(&out), 125, "{what}: {}", err(&out));
                let e = err(&out);
                assert_eq!(e.lines().count(), 1, "{what}: not one line: {e}");
                assert!(
                    e.starts_with("harness_runner: ") && e.contains(want),
                    "{what}: {e}"
                );
                assert!(!mark.exists(), "{what}: the CLI started");
            }
            // No parameter file, a missing one, two arguments.
            for args in [vec![], vec!["/nonexistent/params.sh"], vec!["a", "b"]] {
                let mut cmd = shell.command(&runner_script());
                cmd.args(&args);
                let out = run_env(cmd, locale, &[], d.path());
                assert_eq!(code(&out), 125, "{} {args:?}: {}", shell.name, err(&out));
                assert_eq!(err(&out).lines().count(), 1, "{} {args:?}", shell.name);
            }
        }
    }
    common::report("bad_parameters_exit_125", &shells);
}

/// RUNNER_SETUP: its effects reach the CLI; a failing command, a non-zero
/// end, an `exit` (even `exit 0`) or a syntax error stop the runner with 125
/// and the CLI never starts, in both modes.
#[test]
fn setup_failures_exit_125() {
    let shells = common::bashes();
    let cases = [
        "false\ntrue",
        "cd /nonexistent/dir",
        "exit 0",
        "exit 3",
        "return 4",
        "if then fi",
        "f() { false; echo ran-on; }\nf",
    ];
    for (shell, locale) in pairs(&shells) {
        for mode in ["direct", "events"] {
            for setup in cases {
                let d = tmp();
                let mark = d.path().join("mark");
                let mut json = json!({
                    "RUNNER_ARGV": [fixture("probe.sh"), p(&mark), "0"],
                    "RUNNER_SETUP": setup,
                });
                if mode == "events" {
                    json["RUNNER_MODE"] = "events".into();
                    json["RUNNER_EVENTS"] = p(&d.path().join("ev")).into();
                }
                let file = params(d.path(), &json);
                let what = format!("{} {locale} {mode} {setup:?}", shell.name);
                let out = run(shell, locale, &file, d.path(), &[]);
                assert_eq!(code(&out), 125, "{what}: {}", err(&out));
                assert!(err(&out).contains("RUNNER_SETUP"), "{what}: {}", err(&out));
                assert!(!err(&out).contains("ran-on"), "{what}");
                assert!(!mark.exists(), "{what}: the CLI started");
            }
        }
    }
    common::report("setup_failures_exit_125", &shells);
}

/// 126 and 127 in both modes, without relying on exec (which says 126 for a
/// missing path on bash 3.2 and 4.0).
#[test]
fn cli_not_found_127_not_executable_126() {
    let shells = common::bashes();
    let d = tmp();
    let plain = d.path().join("plain");
    std::fs::write(&plain, "#!/bin/sh\necho hi\n").unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("noexec-cli"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::create_dir(bin.join("dir-cli")).unwrap();
    let cases = [
        (p(&d.path().join("missing")), 127),
        ("no-such-cli-anywhere".to_owned(), 127),
        ("dir-cli".to_owned(), 127),
        (p(&plain), 126),
        (p(d.path()), 126),
        ("noexec-cli".to_owned(), 126),
    ];
    for (shell, locale) in pairs(&shells) {
        for mode in ["direct", "events"] {
            for (cli, want) in &cases {
                let mut json = json!({
                    "RUNNER_ARGV": [cli, "arg"],
                    "RUNNER_PATH_PREFIX": p(&bin),
                });
                if mode == "events" {
                    json["RUNNER_MODE"] = "events".into();
                    json["RUNNER_EVENTS"] = p(&d.path().join("ev")).into();
                }
                let file = params(d.path(), &json);
                let what = format!("{} {locale} {mode} {cli:?}", shell.name);
                let out = run(shell, locale, &file, d.path(), &[]);
                assert_eq!(code(&out), *want, "{what}: {}", err(&out));
                assert!(
                    err(&out).starts_with("harness_runner: "),
                    "{what}: {}",
                    err(&out)
                );
            }
        }
    }
    common::report("cli_not_found_127_not_executable_126", &shells);
}

/// A redirection that cannot be opened stops the runner with 125 before the
/// CLI starts, and never falls through into another mode.
#[test]
fn failed_redirections_exit_125() {
    let shells = common::bashes();
    for (shell, locale) in pairs(&shells) {
        let d = tmp();
        let mark = d.path().join("mark");
        let argv = json!([fixture("probe.sh"), p(&mark), "0"]);
        let events = p(&d.path().join("ev"));
        let bad = "/nonexistent/dir/file";
        let cases = [
            json!({"RUNNER_ARGV": argv, "RUNNER_STDIN": bad}),
            json!({"RUNNER_ARGV": argv, "RUNNER_STDOUT": bad}),
            json!({"RUNNER_ARGV": argv, "RUNNER_STDERR": bad}),
            json!({"RUNNER_ARGV": argv, "RUNNER_STDOUT": p(d.path())}),
            json!({"RUNNER_ARGV": argv, "RUNNER_STDIN": p(d.path())}),
            json!({"RUNNER_ARGV": argv, "RUNNER_MODE": "events", "RUNNER_EVENTS": bad}),
            json!({"RUNNER_ARGV": argv, "RUNNER_MODE": "events", "RUNNER_EVENTS": p(d.path())}),
            json!({"RUNNER_ARGV": argv, "RUNNER_MODE": "events", "RUNNER_EVENTS": events, "RUNNER_STDIN": bad}),
            json!({"RUNNER_ARGV": argv, "RUNNER_MODE": "events", "RUNNER_EVENTS": events, "RUNNER_STDERR": bad}),
        ];
        for json in &cases {
            let file = params(d.path(), json);
            let what = format!("{} {locale} {json}", shell.name);
            let out = run(shell, locale, &file, d.path(), &[]);
            assert_eq!(code(&out), 125, "{what}: {}", err(&out));
            assert!(
                err(&out).contains("the CLI was not started"),
                "{what}: {}",
                err(&out)
            );
            assert!(!mark.exists(), "{what}: the CLI started");
        }
    }
    common::report("failed_redirections_exit_125", &shells);
}

/// An events file that cannot be written (/dev/full) is a runner failure.
#[test]
fn unwritable_events_exit_125() {
    let shells = common::bashes();
    for (shell, locale) in pairs(&shells) {
        let d = tmp();
        let data = d.path().join("data");
        std::fs::write(&data, "{\"a\":1}\n").unwrap();
        let file = params(
            d.path(),
            &json!({
                "RUNNER_ARGV": [fixture("replay.sh"), p(&data)],
                "RUNNER_MODE": "events",
                "RUNNER_EVENTS": "/dev/full",
            }),
        );
        let out = run(shell, locale, &file, d.path(), &[]);
        assert_eq!(code(&out), 125, "{}: {}", shell.name, err(&out));
        assert!(
            err(&out).contains("writing RUNNER_EVENTS"),
            "{}: {}",
            shell.name,
            err(&out)
        );
    }
    common::report("unwritable_events_exit_125", &shells);
}

/// An inherited errexit (SHELLOPTS, or `bash -e -u -o pipefail`) changes no
/// status and no event: a non-JSON line, a failing CLI, 125, 126, 127.
#[test]
fn inherited_errexit_changes_nothing() {
    let shells = common::bashes();
    for (shell, locale) in pairs(&shells) {
        let d = tmp();
        let data = d.path().join("data");
        std::fs::write(&data, "not json\n{\"a\":1}\r\nlast").unwrap();
        let events = d.path().join("ev");
        let plain = d.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        let replay = json!([fixture("replay.sh"), p(&data), "5"]);
        let cases = [
            (
                json!({"RUNNER_ARGV": replay, "RUNNER_MODE": "events", "RUNNER_EVENTS": p(&events)}),
                5,
            ),
            (
                json!({"RUNNER_ARGV": replay, "RUNNER_STDOUT": p(&events)}),
                5,
            ),
            (
                json!({"RUNNER_ARGV": replay, "RUNNER_SETUP": "false || true"}),
                5,
            ),
            (json!({"RUNNER_ARGV": ["no-such-cli"]}), 127),
            (
                json!({"RUNNER_ARGV": ["no-such-cli"], "RUNNER_MODE": "events", "RUNNER_EVENTS": p(&events)}),
                127,
            ),
            (json!({"RUNNER_ARGV": [p(&plain)]}), 126),
            (
                json!({"RUNNER_ARGV": [p(&plain)], "RUNNER_MODE": "events", "RUNNER_EVENTS": p(&events)}),
                126,
            ),
            (
                json!({"RUNNER_ARGV": replay, "RUNNER_CWD": "/nonexistent"}),
                125,
            ),
            (
                json!({"RUNNER_ARGV": replay, "RUNNER_MODE": "events", "RUNNER_EVENTS": "/nonexistent/x"}),
                125,
            ),
        ];
        for (json, want) in &cases {
            let file = params(d.path(), json);
            for how in ["SHELLOPTS", "-euo pipefail"] {
                let what = format!("{} {locale} {how} {json}", shell.name);
                let _ = std::fs::remove_file(&events);
                let out = if how == "SHELLOPTS" {
                    run(
                        shell,
                        locale,
                        &file,
                        d.path(),
                        &[("SHELLOPTS", "errexit:nounset:pipefail")],
                    )
                } else {
                    let mut cmd = Command::new(shell.program());
                    cmd.args(["-e", "-u", "-o", "pipefail"])
                        .arg(runner_script())
                        .arg(&file);
                    run_env(cmd, locale, &[], d.path())
                };
                assert_eq!(code(&out), *want, "{what}: {}", err(&out));
                if *want != 5 {
                    continue;
                }
                let raw = b"not json\n{\"a\":1}\r\nlast".to_vec();
                if json.get("RUNNER_MODE").is_some() {
                    let ev = std::fs::read(&events).unwrap();
                    let got = check_events(&ev, shell, 0.0, f64::MAX, &what);
                    assert!(
                        got == expected_events(&raw),
                        "{what}: {:?}",
                        String::from_utf8_lossy(&got)
                    );
                } else if json.get("RUNNER_STDOUT").is_some() {
                    assert!(std::fs::read(&events).unwrap() == raw, "{what}");
                } else {
                    assert!(out.stdout == raw, "{what}");
                }
            }
        }
    }
    common::report("inherited_errexit_changes_nothing", &shells);
}

/// Open descriptors of a fake CLI (`ls -l /proc/self/fd` after exec), minus
/// the directory ls opens to list them: fd -> target.
fn fd_listing(text: &str) -> Vec<(u32, String)> {
    let mut fds: Vec<(u32, String)> = text
        .lines()
        .filter_map(|l| {
            let (left, target) = l.split_once(" -> ")?;
            let fd = left.rsplit(' ').next()?.parse().ok()?;
            Some((fd, target.to_owned()))
        })
        .filter(|(_, t)| !(t.starts_with("/proc/") && t.ends_with("/fd")))
        .collect();
    fds.sort();
    fds
}

/// The CLI holds no descriptor of the runner's own: the same descriptor
/// numbers as the fake CLI started directly, stdin /dev/null, stdout the
/// events pipe (events mode) or the stdout file (direct mode).
#[test]
fn cli_inherits_no_runner_descriptors() {
    let shells = common::bashes();
    let d = tmp();
    let direct = run_env(Command::new(fixture("fds.sh")), "C", &[], d.path());
    let baseline: Vec<u32> = fd_listing(&String::from_utf8_lossy(&direct.stdout))
        .into_iter()
        .map(|(fd, _)| fd)
        .collect();
    assert!(baseline.starts_with(&[0, 1, 2]), "baseline {baseline:?}");
    for (shell, locale) in pairs(&shells) {
        for mode in ["direct", "events"] {
            let d = tmp();
            let out_f = d.path().join("out");
            let mut json = json!({"RUNNER_ARGV": [fixture("fds.sh")]});
            if mode == "events" {
                json["RUNNER_MODE"] = "events".into();
                json["RUNNER_EVENTS"] = p(&out_f).into();
            } else {
                json["RUNNER_STDOUT"] = p(&out_f).into();
            }
            let file = params(d.path(), &json);
            let what = format!("{} {locale} {mode}", shell.name);
            let out = run(shell, locale, &file, d.path(), &[]);
            assert_eq!(code(&out), 0, "{what}: {}", err(&out));
            let raw = std::fs::read(&out_f).unwrap();
            let text = if mode == "events" {
                check_events(&raw, shell, 0.0, f64::MAX, &what)
            } else {
                raw
            };
            let fds = fd_listing(&String::from_utf8_lossy(&text));
            let numbers: Vec<u32> = fds.iter().map(|(fd, _)| *fd).collect();
            assert_eq!(numbers, baseline, "{what}: {fds:?}");
            assert_eq!(fds[0].1, "/dev/null", "{what}: stdin {fds:?}");
            if mode == "events" {
                assert!(fds[1].1.starts_with("pipe:"), "{what}: stdout {fds:?}");
            } else {
                assert_eq!(fds[1].1, p(&out_f), "{what}: stdout {fds:?}");
            }
            for (_, target) in &fds {
                assert!(
                    !target.contains("params.sh") && !target.contains("harness_runner"),
                    "{what}: the CLI holds {target}"
                );
            }
        }
    }
    common::report("cli_inherits_no_runner_descriptors", &shells);
}

/// A setup that gets around its `set -e` or the runner's EXIT trap still
/// stops the runner with 125, and the CLI never starts: a non-zero final
/// status after `set +e`, an `exit` after the setup installed its own EXIT
/// trap (or removed the runner's), a failing command under a replaced trap.
/// The setup's EXIT trap never runs.
#[test]
fn setup_escaping_errexit_or_the_exit_trap_exits_125() {
    let shells = common::bashes();
    let cases = [
        "set +e; false",
        "set +e; cd /nonexistent/dir",
        "set +e\nreturn 3",
        "trap \"echo mytrap\" EXIT; exit 0",
        "trap 'echo mytrap' EXIT; exit 5",
        "trap - EXIT; exit 0",
        "trap 'echo mytrap' EXIT; false",
        "trap 'exit 0' EXIT; exit 3",
        "trap 'echo mytrap' 0 INT; exit",
    ];
    for (shell, locale) in pairs(&shells) {
        for mode in ["direct", "events"] {
            for setup in cases {
                let d = tmp();
                let mark = d.path().join("mark");
                let mut json = json!({
                    "RUNNER_ARGV": [fixture("probe.sh"), p(&mark), "0"],
                    "RUNNER_SETUP": setup,
                });
                if mode == "events" {
                    json["RUNNER_MODE"] = "events".into();
                    json["RUNNER_EVENTS"] = p(&d.path().join("ev")).into();
                }
                let file = params(d.path(), &json);
                let what = format!("{} {locale} {mode} {setup:?}", shell.name);
                let out = run(shell, locale, &file, d.path(), &[]);
                let e = err(&out);
                assert_eq!(code(&out), 125, "{what}: {e}");
                // The setup's own messages (cd's) may come first; the
                // runner's is one line, the last.
                let ours: Vec<&str> = e
                    .lines()
                    .filter(|l| l.starts_with("harness_runner: "))
                    .collect();
                assert_eq!(ours.len(), 1, "{what}: {e}");
                assert!(
                    e.lines().last() == Some(ours[0]) && ours[0].contains("RUNNER_SETUP"),
                    "{what}: {e}"
                );
                assert!(out.stdout.is_empty(), "{what}: the setup's trap ran");
                assert!(!mark.exists(), "{what}: the CLI started");
            }
        }
    }
    common::report("setup_escaping_errexit_or_the_exit_trap_exits_125", &shells);
}

/// What a setup may do: `exit` in subshells and command substitutions, a
/// `return 0` that ends it early, `set +e` with a final status of 0, traps
/// of its own (which end with the setup: its EXIT trap does not run when an
/// events-mode runner exits). The CLI runs and its status is the runner's.
#[test]
fn setup_subshell_exits_and_traps_are_its_own() {
    let shells = common::bashes();
    let cases = [
        "(exit 3) || true\nx=$(echo a; exit 4) || true\ntrue | (exit 5) || true",
        "return 0\nfalse",
        "set +e; false; true",
        "trap 'echo mytrap' EXIT INT\ntrap -p EXIT >/dev/null",
        "( trap 'echo sub-trap' EXIT; exit 0 ) >/dev/null",
    ];
    for (shell, locale) in pairs(&shells) {
        for mode in ["direct", "events"] {
            for setup in cases {
                let d = tmp();
                let mark = d.path().join("mark");
                let events = d.path().join("ev");
                let mut json = json!({
                    "RUNNER_ARGV": [fixture("probe.sh"), p(&mark), "6"],
                    "RUNNER_SETUP": setup,
                });
                if mode == "events" {
                    json["RUNNER_MODE"] = "events".into();
                    json["RUNNER_EVENTS"] = p(&events).into();
                }
                let file = params(d.path(), &json);
                let what = format!("{} {locale} {mode} {setup:?}", shell.name);
                let out = run(shell, locale, &file, d.path(), &[]);
                assert_eq!(code(&out), 6, "{what}: {}", err(&out));
                assert!(mark.exists(), "{what}: the CLI did not start");
                assert_eq!(err(&out), "probe stderr\n", "{what}");
                let stdout = String::from_utf8_lossy(&out.stdout);
                assert!(!stdout.contains("trap"), "{what}: {stdout}");
                if mode == "events" {
                    let ev = std::fs::read(&events).unwrap();
                    let got = check_events(&ev, shell, 0.0, f64::MAX, &what);
                    let got = String::from_utf8_lossy(&got);
                    assert!(got.starts_with("cwd="), "{what}: {got}");
                    assert!(!got.contains("trap"), "{what}: {got}");
                }
            }
        }
    }
    common::report("setup_subshell_exits_and_traps_are_its_own", &shells);
}

/// RUNNER_EVENTS means nothing in direct mode (a parameter file shared
/// between modes may carry it): it is ignored, even when empty, and no
/// events file appears. RUNNER_STDOUT in events mode stays an error.
#[test]
fn events_file_is_ignored_in_direct_mode() {
    let shells = common::bashes();
    for (shell, locale) in pairs(&shells) {
        for events in ["ev", ""] {
            let d = tmp();
            let mark = d.path().join("mark");
            let ev = if events.is_empty() {
                String::new()
            } else {
                p(&d.path().join(events))
            };
            let file = params(
                d.path(),
                &json!({
                    "RUNNER_ARGV": [fixture("probe.sh"), p(&mark), "8"],
                    "RUNNER_EVENTS": ev,
                }),
            );
            let what = format!("{} {locale} {events:?}", shell.name);
            let out = run(shell, locale, &file, d.path(), &[]);
            assert_eq!(code(&out), 8, "{what}: {}", err(&out));
            assert!(mark.exists(), "{what}: the CLI did not start");
            assert_eq!(err(&out), "probe stderr\n", "{what}");
            assert!(
                String::from_utf8_lossy(&out.stdout).starts_with("cwd="),
                "{what}"
            );
            assert!(!d.path().join("ev").exists(), "{what}: events written");
        }
    }
    common::report("events_file_is_ignored_in_direct_mode", &shells);
}

/// RUNNER_ARGV=("") is a bad parameter (125, one line), not a missing CLI.
#[test]
fn empty_program_name_exits_125() {
    let shells = common::bashes();
    for (shell, locale) in pairs(&shells) {
        for mode in ["direct", "events"] {
            let d = tmp();
            let mut json = json!({"RUNNER_ARGV": ["", "arg"]});
            if mode == "events" {
                json["RUNNER_MODE"] = "events".into();
                json["RUNNER_EVENTS"] = p(&d.path().join("ev")).into();
            }
            let file = params(d.path(), &json);
            let what = format!("{} {locale} {mode}", shell.name);
            let out = run(shell, locale, &file, d.path(), &[]);
            let e = err(&out);
            assert_eq!(code(&out), 125, "{what}: {e}");
            assert_eq!(e, "harness_runner: RUNNER_ARGV[0] is empty\n", "{what}");
            assert!(!d.path().join("ev").exists(), "{what}: events opened");
        }
    }
    common::report("empty_program_name_exits_125", &shells);
}

/// Signal dispositions the setup set (caught or ignored) end with it: the
/// CLI starts with the runner's own, the same as without the setup.
#[test]
fn setup_traps_do_not_reach_the_cli() {
    let shells = common::bashes();
    let sig_lines = |out: &Output| -> String {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("SigIgn:") || l.starts_with("SigCgt:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (shell, locale) in pairs(&shells) {
        let d = tmp();
        let argv = json!(["grep", "^Sig", "/proc/self/status"]);
        let plain = params(d.path(), &json!({ "RUNNER_ARGV": argv }));
        let base = run(shell, locale, &plain, d.path(), &[]);
        assert_eq!(code(&base), 0, "{}: {}", shell.name, err(&base));
        let file = params(
            d.path(),
            &json!({
                "RUNNER_ARGV": argv,
                "RUNNER_SETUP": "trap '' USR1 HUP\ntrap 'echo caught' USR2\ntrap -- '' 0 TERM",
            }),
        );
        let out = run(shell, locale, &file, d.path(), &[]);
        let what = format!("{} {locale}", shell.name);
        assert_eq!(code(&out), 0, "{what}: {}", err(&out));
        assert!(!sig_lines(&base).is_empty(), "{what}");
        assert_eq!(sig_lines(&out), sig_lines(&base), "{what}");
    }
    common::report("setup_traps_do_not_reach_the_cli", &shells);
}
