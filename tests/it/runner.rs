//! generated/harness_runner.sh under every bash of the matrix, in the C and a
//! UTF-8 locale, with parameter files written by the real `shforge params`
//! and fake harness CLIs from tests/fixtures/runner/.

use crate::support;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use support::{Shell, code, late_read};

/// A hang guard, not a timing assertion: a runner that went quadratic on the
/// 16 MiB line would otherwise run for hours.
const HANG_GUARD: Duration = Duration::from_secs(300);

fn runner_script() -> PathBuf {
    support::root().join("generated/harness_runner.sh")
}

fn fixture(name: &str) -> String {
    support::root()
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
    support::write_params(&dir.join("params.sh"), json)
}

/// The bash major version from the matrix label (`bash-5.2.15(1)-release (...)`).
fn major(shell: &Shell) -> u32 {
    shell.name["bash-".len()..]
        .split('.')
        .next()
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
        .flat_map(|s| support::LOCALES.iter().map(move |l| (s, *l)))
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

/// The shape of an event's stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamp {
    /// `SECONDS.FFFFFF`: every bash where a clock with a fraction exists.
    Fraction,
    /// `SECONDS`: bash 3.2 to 4.4 without /proc/uptime or `date +%N`.
    Whole,
}

/// Split an events file into timestamps and the rest, checking each stamp's
/// shape (`SECONDS.FFFFFF` on every bash: this machine has /proc and GNU
/// date), range and order.
fn check_events(events: &[u8], shell: &Shell, t0: f64, t1: f64, what: &str) -> Vec<u8> {
    check_stamped(events, shell, Stamp::Fraction, (t0, t1), what)
}

/// check_events for stamps of the given shape, within the run `t0..t1`.
fn check_stamped(
    events: &[u8],
    shell: &Shell,
    shape: Stamp,
    (t0, t1): (f64, f64),
    what: &str,
) -> Vec<u8> {
    let fractional = shape == Stamp::Fraction;
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
    let shells = support::bashes();
    let input = mixed_input();
    let want = expected_events(&input);
    for shell in &shells {
        for locale in support::LOCALES {
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
    support::report("events_mode_passes_every_byte_through", &shells);
}

/// Output that arrives in pieces, with pauses longer than the recorder's
/// 0.1 s wait: a line and a CR LF pair cut across pieces, a burst longer
/// than a block among them. Every byte comes through as from one piece, and
/// the first and last lines, printed 1.8 s apart, are stamped at least 1 s
/// apart (a recorder that waits for a full block stamps them together).
#[test]
fn events_mode_stamps_slow_output_as_it_arrives() {
    slow_output_events("events_mode_stamps_slow_output_as_it_arrives", false);
}

/// bash 4.4 drops a byte when a timed read's timeout fires as the byte
/// comes, and 4.4 to 5.1 can lose a timeout (here played on purpose, at
/// every timed read of the recorder's pipe): on 4.4 the recorder takes no
/// timed read (dd reads the pipe), so none is played; 5.0 and 5.1 read in
/// timed blocks and lose no byte to a late timeout. The events hold every
/// byte either way.
#[test]
fn events_mode_keeps_every_byte_when_read_timeouts_fire_late() {
    slow_output_events(
        "events_mode_keeps_every_byte_when_read_timeouts_fire_late",
        true,
    );
}

/// Output in pieces with pauses (a CR LF and a line cut across pieces, a
/// burst longer than a block) in events mode: the same bytes, and the first
/// and last line stamped >= 1 s apart. With `late`, every timed read of the
/// recorder's stdin gets its timeout just as its data comes
/// (`support::late_read`).
fn slow_output_events(test: &str, late: bool) {
    let shells = support::bashes();
    let mut burst = Vec::new();
    for i in 0..3000 {
        burst.extend_from_slice(format!("{{\"n\":{i},\"text\":\"burst line {i}\"}}\n").as_bytes());
    }
    let mut tail = b"\nafter the burst".to_vec();
    tail.extend_from_slice(&mixed_input());
    let pieces: Vec<Vec<u8>> = vec![
        b"first line\n".to_vec(),
        b"a line cut in two, ".to_vec(),
        b"and its end with CR\r".to_vec(),
        [
            b"\n".as_slice(),
            &burst,
            b"a line the burst cuts".as_slice(),
        ]
        .concat(),
        tail,
    ];
    let input = pieces.concat();
    let want = expected_events(&input);
    for shell in &shells {
        let d = tmp();
        let mut argv = vec![fixture("drip.sh"), "0.45".to_owned()];
        for (i, piece) in pieces.iter().enumerate() {
            let f = d.path().join(format!("piece{i}"));
            std::fs::write(&f, piece).unwrap();
            argv.push(p(&f));
        }
        let events = d.path().join("events.log");
        let file = params(
            d.path(),
            &json!({"RUNNER_ARGV": argv, "RUNNER_MODE": "events", "RUNNER_EVENTS": p(&events)}),
        );
        let what = shell.name.clone();
        let log = d.path().join("late_reads.log");
        let late_env = if late {
            late_read::env(0, true, &log)
        } else {
            Vec::new()
        };
        let env: Vec<(&str, &str)> = late_env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let t0 = now();
        let out = run(shell, "C.UTF-8", &file, d.path(), &env);
        let t1 = now();
        // 4.4: dd reads the pipe, blocking: no timed read to play. 5.0 and
        // 5.1 time their block reads with a timer: races were played.
        if late && late_read::flag_timer_bash(&what) {
            if what.starts_with("bash-5") {
                assert!(late_read::played(&log) > 0, "{what}: no late read played");
            } else {
                assert_eq!(
                    late_read::played(&log),
                    0,
                    "{what}: a timed read of the pipe"
                );
            }
        }
        assert_eq!(code(&out), 0, "{what}: {}", err(&out));
        let raw = std::fs::read(&events).unwrap();
        let got = check_events(&raw, shell, t0, t1, &what);
        assert!(
            got == want,
            "{what}: events differ:\n got {:?}\nwant {:?}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
        let stamps: Vec<f64> = raw
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                let tab = l.iter().position(|&b| b == b'\t').unwrap();
                std::str::from_utf8(&l[..tab]).unwrap().parse().unwrap()
            })
            .collect();
        let gap = stamps.last().unwrap() - stamps.first().unwrap();
        assert!(
            gap >= 1.0,
            "{what}: first and last line stamped {gap} s apart"
        );
    }
    support::report(test, &shells);
}

#[test]
fn events_mode_handles_json_streams_and_empty_output() {
    let shells = support::bashes();
    let mut input = Vec::new();
    for i in 0..2000 {
        input.extend_from_slice(
            format!("{{\"type\":\"message\",\"n\":{i},\"text\":\"line {i}\"}}\n").as_bytes(),
        );
    }
    for shell in &shells {
        for locale in support::LOCALES {
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
    support::report("events_mode_handles_json_streams_and_empty_output", &shells);
}

/// NUL cannot live in a bash variable: each NUL byte is dropped and the rest
/// of the line kept, on every bash (by the command substitution around dd
/// up to 4.4, by `read -N` from 5.0). A line of NULs alone is an empty line;
/// NULs after the last newline are no line.
#[test]
fn nul_bytes_do_not_break_the_stream() {
    let shells = support::bashes();
    for (shell, locale) in pairs(&shells) {
        let d = tmp();
        let data = d.path().join("data");
        std::fs::write(&data, b"a\0b\0\0c\r\n\0\n{\"next\":1}\n\0\0").unwrap();
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
        assert!(
            got == dropped,
            "{} {locale}: {:?}",
            shell.name,
            String::from_utf8_lossy(&got)
        );
    }
    support::report("nul_bytes_do_not_break_the_stream", &shells);
}

/// One 16 MiB line (multibyte UTF-8 text, no CR) and one 2 MiB line ending
/// in CR: byte-exact, under every bash, in both locales. A quadratic CR
/// check or a per-character locale cost would trip the hang guard.
#[test]
fn events_mode_long_lines() {
    let shells = support::bashes();
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
        .flat_map(|s| support::LOCALES.iter().map(move |l| (s.clone(), *l)))
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
    support::report("events_mode_long_lines", &shells);
}

/// Everything direct mode sets up reaches the CLI: cwd, PATH prefix,
/// RUNNER_ENV, setup, stdin (default /dev/null), stdout and stderr files, and
/// the CLI's exit status.
#[test]
fn direct_mode_sets_up_the_cli() {
    let shells = support::bashes();
    for shell in &shells {
        for locale in support::LOCALES {
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
    support::report("direct_mode_sets_up_the_cli", &shells);
}

/// Events mode gets the same setup: cwd, RUNNER_ENV, stdin, stderr.
#[test]
fn events_mode_sets_up_the_cli() {
    let shells = support::bashes();
    for shell in &shells {
        for locale in support::LOCALES {
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
    support::report("events_mode_sets_up_the_cli", &shells);
}

/// Every RUNNER_* variable from the environment is forgotten: exported
/// scalars, and arrays and exports made by a BASH_ENV file; none of them
/// configures the runner or reaches the CLI.
#[test]
fn inherited_runner_variables_are_cleared() {
    let shells = support::bashes();
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
    support::report("inherited_runner_variables_are_cleared", &shells);
}

/// An inherited errexit (SHELLOPTS, or `bash -e -u -o pipefail`) changes no
/// status and no event: a non-JSON line, a failing CLI, 125, 126, 127.
#[test]
fn inherited_errexit_changes_nothing() {
    let shells = support::bashes();
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
    support::report("inherited_errexit_changes_nothing", &shells);
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
    let shells = support::bashes();
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
    support::report("cli_inherits_no_runner_descriptors", &shells);
}

/// Start the runner in a process group of its own, wait until the CLI
/// (term.sh) has created `ready`, send `signal` to the whole group, as
/// process_supervisor.sh does, and wait for the runner's exit.
fn run_stopped(shell: &Shell, params: &Path, ready: &Path, signal: &str, cwd: &Path) -> Output {
    use std::os::unix::process::CommandExt as _;
    // The stop's signals at their defaults whatever this test inherited
    // (under `nohup` HUP is ignored, and stays ignored for the CLI, as it
    // should: the runner never undoes an ignored signal).
    let mut cmd = Command::new("env");
    cmd.arg("--default-signal=TERM,INT,HUP")
        .args(&shell.argv)
        .arg(runner_script())
        .arg(params)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LC_ALL", "C")
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().expect("bash starts");
    let group = format!("-{}", child.id());
    let start = std::time::Instant::now();
    while !ready.exists() {
        assert!(start.elapsed() < HANG_GUARD, "the CLI never became ready");
        std::thread::sleep(Duration::from_millis(10));
    }
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), "--", &group])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -{signal} {group}");
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > HANG_GUARD {
            let _ = Command::new("kill").args(["-9", "--", &group]).status();
            panic!("the runner did not finish after {signal}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().unwrap()
}

/// A stop of the runner's process group (TERM, INT or HUP, as a supervisor
/// sends): `return_code` means the same in both modes, the CLI's status as
/// the shell reports it. In events mode the runner outlives the signal,
/// records what the CLI writes after it, and exits with the CLI's status:
/// 128+N when the CLI died of it, the CLI's own code when it caught TERM
/// and exited by itself.
#[test]
fn a_stop_of_the_group_gives_the_clis_status_in_both_modes() {
    let shells = support::bashes();
    let cases = [
        ("TERM", "die", 143, "started\n"),
        ("INT", "die", 130, "started\n"),
        ("HUP", "die", 129, "started\n"),
        ("TERM", "catch", 3, "started\nstopping\nstopped\n"),
    ];
    for shell in &shells {
        for (signal, how, status, lines) in cases {
            for mode in ["direct", "events"] {
                let d = tmp();
                let ready = d.path().join("ready");
                let out_f = d.path().join("out");
                let mut json = json!({"RUNNER_ARGV": [fixture("term.sh"), p(&ready), how]});
                if mode == "events" {
                    json["RUNNER_MODE"] = "events".into();
                    json["RUNNER_EVENTS"] = p(&out_f).into();
                } else {
                    json["RUNNER_STDOUT"] = p(&out_f).into();
                }
                let file = params(d.path(), &json);
                let what = format!("{} {signal} {how} {mode}", shell.name);
                let out = run_stopped(shell, &file, &ready, signal, d.path());
                assert_eq!(code(&out), status, "{what}: {}", err(&out));
                let raw = std::fs::read(&out_f).unwrap();
                let text = if mode == "events" {
                    check_events(&raw, shell, 0.0, f64::MAX, &what)
                } else {
                    raw
                };
                assert_eq!(String::from_utf8_lossy(&text), lines, "{what}");
            }
        }
    }
    support::report(
        "a_stop_of_the_group_gives_the_clis_status_in_both_modes",
        &shells,
    );
}

/// Signal dispositions the setup set (caught or ignored) end with it: the
/// CLI starts with the runner's own, the same as without the setup, in both
/// modes (events mode's own ignored TERM, INT and HUP do not reach it).
#[test]
fn setup_traps_do_not_reach_the_cli() {
    let shells = support::bashes();
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
        // Events mode: the runner ignores TERM, INT and HUP, the CLI does
        // not (it gets them as the runner got them).
        let events = d.path().join("events");
        let file = params(
            d.path(),
            &json!({
                "RUNNER_ARGV": argv,
                "RUNNER_MODE": "events",
                "RUNNER_EVENTS": p(&events),
                "RUNNER_SETUP": "trap '' USR1 HUP",
            }),
        );
        let out = run(shell, locale, &file, d.path(), &[]);
        assert_eq!(code(&out), 0, "{what} events: {}", err(&out));
        let text = check_events(
            &std::fs::read(&events).unwrap(),
            shell,
            0.0,
            f64::MAX,
            &what,
        );
        let listed = Output {
            stdout: text,
            ..out
        };
        assert_eq!(sig_lines(&listed), sig_lines(&base), "{what} events");
    }
    support::report("setup_traps_do_not_reach_the_cli", &shells);
}

// ---------------------------------------------------------------- case table

/// A parameter file of a [`Case`], with placeholders (see [`fill`]).
enum Params {
    /// A JSON object, written by the real `shforge params`.
    Json(&'static str),
    /// A file written by hand, as it stands.
    File(&'static str),
}

/// What the runner's stderr must be.
enum Stderr {
    /// One line: `harness_runner: ` and this text in it.
    Runner(&'static str),
    /// The setup's own messages may come first; the runner's one line (with
    /// this text in it) is the last.
    RunnerLast(&'static str),
    /// Exactly this text.
    Exact(&'static str),
}

/// One run of the runner and what must come of it.
struct Case {
    name: &'static str,
    params: Params,
    /// Also run it in events mode (RUNNER_MODE=events, RUNNER_EVENTS=@EV@
    /// added to the file).
    both_modes: bool,
    /// Added to the environment (placeholders filled).
    env: &'static [(&'static str, &'static str)],
    code: i32,
    stderr: Stderr,
    /// Whether the CLI started (probe.sh creates @MARK@ first).
    cli_starts: bool,
    /// Text the CLI's output must hold: its stdout in direct mode, the
    /// events (stamps removed) in events mode.
    output_has: &'static [&'static str],
    /// Text the CLI's output must not hold.
    output_lacks: &'static [&'static str],
    /// A file (placeholders filled) that must not exist afterwards.
    absent: Option<&'static str>,
}

/// A case with the defaults: direct mode only, nothing in the environment,
/// nothing to check in the output.
const CASE: Case = Case {
    name: "",
    params: Params::Json("{}"),
    both_modes: false,
    env: &[],
    code: 0,
    stderr: Stderr::Exact(""),
    cli_starts: true,
    output_has: &[],
    output_lacks: &[],
    absent: None,
};

/// A case the runner must refuse with 125 before the CLI starts.
const fn refused(name: &'static str, params: Params, message: &'static str) -> Case {
    Case {
        name,
        params,
        both_modes: false,
        env: &[],
        code: 125,
        stderr: Stderr::Runner(message),
        cli_starts: false,
        output_has: &[],
        output_lacks: &[],
        absent: None,
    }
}

/// Replace the placeholders: @DIR@ the case's temp dir, @MARK@ the file
/// probe.sh creates, @EV@ the events file, @PROBE@ @REPLAY@ the fixtures,
/// @DATA@ a file of mixed output for replay.sh.
fn fill(text: &str, dir: &Path) -> String {
    text.replace("@PROBE@", &fixture("probe.sh"))
        .replace("@REPLAY@", &fixture("replay.sh"))
        .replace("@MARK@", &p(&dir.join("mark")))
        .replace("@EV@", &p(&dir.join("ev")))
        .replace("@DATA@", &p(&dir.join("data")))
        .replace("@DIR@", &p(dir))
}

/// The files every case may use: a non-executable file (`plain`), a bin
/// dir holding a non-executable `noexec-cli` and a directory `dir-cli`, and
/// `data` for replay.sh.
fn case_dir() -> tempfile::TempDir {
    let d = tmp();
    std::fs::write(d.path().join("plain"), "#!/bin/sh\necho hi\n").unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("noexec-cli"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::create_dir(bin.join("dir-cli")).unwrap();
    std::fs::write(d.path().join("data"), "not json\n{\"a\":1}\r\nlast").unwrap();
    d
}

/// Run every case under every bash, in both locales, in its modes.
fn check_cases(test: &str, cases: &[Case]) {
    let shells = support::bashes();
    for (shell, locale) in pairs(&shells) {
        for case in cases {
            let modes: &[&str] = if case.both_modes {
                &["direct", "events"]
            } else {
                &["direct"]
            };
            for mode in modes {
                check_case(shell, locale, case, mode);
            }
        }
    }
    support::report(test, &shells);
}

fn check_case(shell: &Shell, locale: &str, case: &Case, mode: &str) {
    let d = case_dir();
    let dir = d.path();
    let events = mode == "events";
    let file = match case.params {
        Params::Json(text) => {
            let mut json: serde_json::Value =
                serde_json::from_str(&fill(text, dir)).expect("case JSON");
            if events {
                json["RUNNER_MODE"] = "events".into();
                json["RUNNER_EVENTS"] = p(&dir.join("ev")).into();
            }
            params(dir, &json)
        }
        Params::File(text) => {
            let mut text = fill(text, dir);
            if events {
                text.push_str(&fill("RUNNER_MODE=events\nRUNNER_EVENTS='@EV@'\n", dir));
            }
            let file = dir.join("params.sh");
            std::fs::write(&file, text).unwrap();
            file
        }
    };
    let env: Vec<(String, String)> = case
        .env
        .iter()
        .map(|(k, v)| (k.to_string(), fill(v, dir)))
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let what = format!("{} {locale} {mode} {}", shell.name, case.name);
    let out = run(shell, locale, &file, dir, &env);
    let e = err(&out);
    assert_eq!(code(&out), case.code, "{what}: {e}");
    match case.stderr {
        Stderr::Runner(text) => {
            assert_eq!(e.lines().count(), 1, "{what}: not one line: {e}");
            assert!(
                e.starts_with("harness_runner: ") && e.contains(text),
                "{what}: {e}"
            );
        }
        Stderr::RunnerLast(text) => {
            let ours: Vec<&str> = e
                .lines()
                .filter(|l| l.starts_with("harness_runner: "))
                .collect();
            assert_eq!(ours.len(), 1, "{what}: {e}");
            assert!(
                e.lines().last() == Some(ours[0]) && ours[0].contains(text),
                "{what}: {e}"
            );
        }
        Stderr::Exact(text) => assert_eq!(e, text, "{what}"),
    }
    assert_eq!(
        dir.join("mark").exists(),
        case.cli_starts,
        "{what}: the CLI started (or not): {e}"
    );
    let output = if events && case.code != 125 {
        let ev = std::fs::read(dir.join("ev")).unwrap_or_default();
        check_events(&ev, shell, 0.0, f64::MAX, &what)
    } else {
        out.stdout.clone()
    };
    let output = String::from_utf8_lossy(&output);
    for want in case.output_has {
        assert!(
            output.contains(&fill(want, dir)),
            "{what}: no {want:?} in {output:?}"
        );
    }
    for bad in case.output_lacks {
        assert!(
            !output.contains(&fill(bad, dir)),
            "{what}: {bad:?} in {output:?}"
        );
    }
    if let Some(path) = case.absent {
        assert!(
            !Path::new(&fill(path, dir)).exists(),
            "{what}: {path} exists"
        );
    }
}

/// Bad parameters: 125 with one line naming the problem, and the CLI never
/// starts (one test per case). Also no parameter file, a missing one, two
/// arguments.
mod bad_parameters_exit_125 {
    use super::*;
    use crate::support::cases;
    use Params::Json;

    /// A parameter file of RUNNER_ARGV (the probe) and `extra`.
    fn with(extra: &str) -> &'static str {
        let argv = r#""RUNNER_ARGV": ["@PROBE@", "@MARK@", "0"]"#;
        Box::leak(format!("{{{argv}, {extra}}}").into_boxed_str())
    }

    fn check(name: &'static str, params: Params, message: &'static str) {
        check_cases(
            &format!("bad_parameters_exit_125::{name}"),
            &[refused(name, params, message)],
        );
    }

    cases! { check;
        no_argv => ("no argv", Json("{}"), "RUNNER_ARGV is missing or empty"),
        empty_argv => (
            "empty argv",
            Json(r#"{"RUNNER_ARGV": []}"#),
            "RUNNER_ARGV is missing or empty",
        ),
        argv_scalar => (
            "argv scalar",
            Json(r#"{"RUNNER_ARGV": "probe"}"#),
            "RUNNER_ARGV must be an array",
        ),
        mode_stream => (
            "mode stream",
            Json(with(r#""RUNNER_MODE": "stream""#)),
            "RUNNER_MODE must be direct or events",
        ),
        mode_empty => (
            "mode empty",
            Json(with(r#""RUNNER_MODE": """#)),
            "RUNNER_MODE must be direct or events",
        ),
        mode_array => (
            "mode array",
            Json(with(r#""RUNNER_MODE": ["events"]"#)),
            "RUNNER_MODE must be a string",
        ),
        cwd_array => (
            "cwd array",
            Json(with(r#""RUNNER_CWD": ["/"]"#)),
            "RUNNER_CWD must be a string",
        ),
        setup_array => (
            "setup array",
            Json(with(r#""RUNNER_SETUP": ["true"]"#)),
            "RUNNER_SETUP must be a string",
        ),
        env_scalar => (
            "env scalar",
            Json(with(r#""RUNNER_ENV": "A=1""#)),
            "RUNNER_ENV must be an array",
        ),
        env_1a => (
            "env 1A",
            Json(with(r#""RUNNER_ENV": ["A=1", "1A=2"]"#)),
            "RUNNER_ENV[1] is not NAME=VALUE",
        ),
        env_no => (
            "env no =",
            Json(with(r#""RUNNER_ENV": ["NOEQUALS"]"#)),
            "RUNNER_ENV[0] is not NAME=VALUE",
        ),
        env_a_b => (
            "env A-B",
            Json(with(r#""RUNNER_ENV": ["A-B=1"]"#)),
            "RUNNER_ENV[0] is not NAME=VALUE",
        ),
        env_non_ascii => (
            "env non-ASCII",
            Json(with("\"RUNNER_ENV\": [\"\u{e9}=1\"]")),
            "RUNNER_ENV[0] is not NAME=VALUE",
        ),
        env_read_only => (
            "env read-only",
            Json(with(r#""RUNNER_ENV": ["UID=0"]"#)),
            "cannot export UID",
        ),
        unknown => (
            "unknown",
            Json(with(r#""RUNNER_ARGS": ["x"]"#)),
            "unknown parameter RUNNER_ARGS",
        ),
        events_no_file => (
            "events no file",
            Json(with(r#""RUNNER_MODE": "events""#)),
            "events mode needs RUNNER_EVENTS",
        ),
        events_stdout => (
            "events stdout",
            Json(with(r#""RUNNER_MODE": "events", "RUNNER_EVENTS": "@EV@", "RUNNER_STDOUT": "@DIR@/y""#)),
            "RUNNER_STDOUT does not apply in events mode",
        ),
        stdout_empty => (
            "stdout empty",
            Json(with(r#""RUNNER_STDOUT": """#)),
            "RUNNER_STDOUT is empty",
        ),
        cwd_empty => ("cwd empty", Json(with(r#""RUNNER_CWD": """#)), "RUNNER_CWD is empty"),
        cwd_missing => (
            "cwd missing",
            Json(with(r#""RUNNER_CWD": "/nonexistent/dir""#)),
            "cannot enter RUNNER_CWD",
        ),
        cwd_file => (
            "cwd file",
            Json(with(r#""RUNNER_CWD": "/etc/passwd""#)),
            "cannot enter RUNNER_CWD",
        ),
    }

    #[test]
    fn argv0_empty_in_both_modes() {
        let case = Case {
            both_modes: true,
            ..refused(
                "argv[0] empty",
                Json(r#"{"RUNNER_ARGV": ["", "arg"]}"#),
                "RUNNER_ARGV[0] is empty",
            )
        };
        check_cases(
            "bad_parameters_exit_125::argv0_empty_in_both_modes",
            &[case],
        );
    }

    #[test]
    fn no_file_a_missing_file_or_two_arguments() {
        let shells = support::bashes();
        let d = tmp();
        for (shell, locale) in pairs(&shells) {
            for args in [vec![], vec!["/nonexistent/params.sh"], vec!["a", "b"]] {
                let mut cmd = shell.command(&runner_script());
                cmd.args(&args);
                let out = run_env(cmd, locale, &[], d.path());
                assert_eq!(code(&out), 125, "{} {args:?}: {}", shell.name, err(&out));
                assert_eq!(err(&out).lines().count(), 1, "{} {args:?}", shell.name);
            }
        }
        support::report(
            "bad_parameters_exit_125::no_file_a_missing_file_or_two_arguments",
            &shells,
        );
    }
}

/// The parameter file is read, not sourced: only assignments to RUNNER_*
/// names, each one quoted word, are taken. Anything else is refused (125,
/// one line naming the file's line) before any of the file takes effect,
/// so no command in it runs (probe.sh never creates @MARK@) and no other
/// variable changes. Quoted values may span lines and hold anything.
#[test]
fn parameter_file_assigns_runner_names_only() {
    use Params::{File, Json};
    const ARGV: &str =
        "RUNNER_ARGV=()\nRUNNER_ARGV[0]='@PROBE@'\nRUNNER_ARGV[1]='@MARK@'\nRUNNER_ARGV[2]=3\n";
    let file = |tail: &str| -> Params { File(Box::leak(format!("{ARGV}{tail}").into_boxed_str())) };
    let foreign = "not an assignment to a RUNNER_* name";
    let not_word = "is not one quoted word";
    let mut cases = vec![];
    for name in [
        "PATH",
        "IFS",
        "BASH_ENV",
        "SHELLOPTS",
        "POSIXLY_CORRECT",
        "LC_ALL",
    ] {
        let json =
            format!(r#"{{"RUNNER_ARGV": ["@PROBE@", "@MARK@", "0"], "{name}": "/nonexistent"}}"#);
        cases.push(refused(
            name,
            Json(Box::leak(json.into_boxed_str())),
            foreign,
        ));
    }
    cases.extend([
        // UID is read-only: as the last line it used to fail alone.
        refused("read-only last", file("UID='0'\n"), "line 5: not an assignment to a RUNNER_* name"),
        refused("second command", file("RUNNER_SETUP=x; PATH=/evil\n"), not_word),
        refused("second command quoted", file("RUNNER_SETUP='x'; touch '@MARK@'\n"), not_word),
        refused("command substitution", file("RUNNER_SETUP=$(touch '@MARK@')\n"), not_word),
        refused("command substitution in \"\"", file("RUNNER_SETUP=\"$(touch '@MARK@')\"\n"), not_word),
        refused("backquotes in \"\"", file("RUNNER_SETUP=\"`touch '@MARK@'`\"\n"), not_word),
        refused("after the closing quote", file("RUNNER_SETUP=\"x\"$(touch '@MARK@')\n"), not_word),
        refused("backslash-newline", file("RUNNER_CWD=\"/\\\n\"\n"), not_word),
        refused("heredoc", file("RUNNER_SETUP=<<EOF\ntouch '@MARK@'\nEOF\n"), not_word),
        refused("export", file("export RUNNER_MODE=direct\n"), foreign),
        refused("compound array", File("RUNNER_ARGV=('@PROBE@' '@MARK@' 6)\n"), not_word),
        refused("stray quote", file("RUNNER_SETUP='a'b'\n"), not_word),
        refused("trailing blank", file("RUNNER_SETUP='a' \n"), not_word),
        refused("lower-case name", file("RUNNER_setup='a'\n"), "is not a RUNNER_* name"),
        refused("bad index", file("RUNNER_ENV[a]='A=1'\n"), "is not a RUNNER_* name"),
        refused("index expression", file("RUNNER_ENV[$(touch '@MARK@')]='A=1'\n"), "is not a RUNNER_* name"),
        refused("never ends", file("RUNNER_SETUP='a\n"), "line 5: the quoted value never ends"),
        refused("unescaped $ on a later line", file("RUNNER_SETUP=\"'\n$(touch '@MARK@')\"\n"), "line 6"),
        refused("CRLF line", file("RUNNER_MODE='direct'\r\n"), not_word),
        Case {
            name: "a value spanning lines holds PATH=",
            params: file("RUNNER_ARGV[3]='x\nPATH=/nonexistent\n'\nRUNNER_ARGV[4]=\"it's\nPATH=/nonexistent \\$HOME\"\n"),
            code: 3,
            stderr: Stderr::Exact("probe stderr\n"),
            output_has: &["path="],
            output_lacks: &["path=/nonexistent"],
            both_modes: true,
            ..CASE
        },
        Case {
            name: "comments, blank lines, bare words, '\\'' pieces",
            params: File("# written by hand\n\nRUNNER_ARGV=()\nRUNNER_ARGV[0]='@PROBE@'\nRUNNER_ARGV[1]=@MARK@\nRUNNER_ARGV[2]=6\nRUNNER_ENV[0]='PROBE_X=it'\\''s'\n"),
            code: 6,
            stderr: Stderr::Exact("probe stderr\n"),
            output_has: &["\nPROBE_X=it's\n"],
            output_lacks: &["RUNNER_"],
            both_modes: true,
            ..CASE
        },
        Case {
            name: "exported RUNNER_ names do not reach the CLI",
            params: file("RUNNER_ENV=()\nRUNNER_ENV[0]='PROBE_Y=1'\n"),
            env: &[("RUNNER_LEAK", "1")],
            code: 3,
            stderr: Stderr::Exact("probe stderr\n"),
            output_has: &["\nPROBE_Y=1\n"],
            output_lacks: &["RUNNER_"],
            ..CASE
        },
    ]);
    check_cases("parameter_file_assigns_runner_names_only", &cases);
}

/// Functions exported by the environment are gone before the runner runs
/// anything: `exec` cannot take over events mode, `cd` cannot skip
/// RUNNER_CWD, builtins the runner uses cannot be replaced, and the CLI
/// inherits none of them.
#[test]
fn inherited_functions_are_cleared() {
    const HIJACK: &[(&str, &str)] = &[
        ("BASH_FUNC_exec%%", "() { echo hijacked-exec; }"),
        ("BASH_FUNC_cd%%", "() { echo hijacked-cd; }"),
        ("BASH_FUNC_builtin%%", "() { echo hijacked-builtin; }"),
        ("BASH_FUNC_unset%%", "() { echo hijacked-unset; }"),
        ("BASH_FUNC_printf%%", "() { echo hijacked-printf; }"),
        ("BASH_FUNC_read%%", "() { echo hijacked-read; }"),
        ("BASH_FUNC_set%%", "() { echo hijacked-set; }"),
        ("BASH_FUNC_compgen%%", "() { echo hijacked-compgen; }"),
        ("BASH_FUNC_eval%%", "() { echo hijacked-eval; }"),
        ("BASH_FUNC_local%%", "() { echo hijacked-local; }"),
        ("exec", "() { echo hijacked-old-format; }"),
    ];
    let cases = [Case {
        name: "exported functions",
        params: Params::Json(
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@", "5"], "RUNNER_CWD": "/", "RUNNER_SETUP": "cd /"}"#,
        ),
        both_modes: true,
        env: HIJACK,
        code: 5,
        stderr: Stderr::Exact("probe stderr\n"),
        output_has: &["cwd=/\n"],
        output_lacks: &["hijacked", "BASH_FUNC"],
        ..CASE
    }];
    check_cases("inherited_functions_are_cleared", &cases);
}

/// POSIXLY_CORRECT from the environment: the runner leaves posix mode (its
/// setup guards are functions named like special builtins), a setup runs
/// and fails as without it, and the CLI gets the variable back.
#[test]
fn posixly_correct_is_given_back_to_the_cli() {
    let ok = |name, setup| Case {
        name,
        params: Params::Json(setup),
        both_modes: true,
        env: &[("POSIXLY_CORRECT", "1")],
        code: 4,
        stderr: Stderr::Exact("probe stderr\n"),
        output_has: &["\nPOSIXLY_CORRECT=1\n"],
        ..CASE
    };
    let failed = |name, setup, message| Case {
        env: &[("POSIXLY_CORRECT", "1")],
        both_modes: true,
        ..refused(name, Params::Json(setup), message)
    };
    let cases = [
        ok("no setup", r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@", "4"]}"#),
        ok(
            "setup",
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@", "4"], "RUNNER_SETUP": "true\ntrap 'echo t' USR1"}"#,
        ),
        failed(
            "setup exit",
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@", "4"], "RUNNER_SETUP": "exit 0"}"#,
            "RUNNER_SETUP called exit",
        ),
        failed(
            "setup false",
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@", "4"], "RUNNER_SETUP": "false"}"#,
            "RUNNER_SETUP failed",
        ),
    ];
    check_cases("posixly_correct_is_given_back_to_the_cli", &cases);
}

/// RUNNER_SETUP: a failing command, a non-zero end (also after `set +e`), an
/// `exit` (even `exit 0`, also after the setup replaced the EXIT trap) or a
/// syntax error stop the runner with 125 in both modes; the CLI never starts
/// and the setup's EXIT trap never runs. What a setup may do: `exit` in
/// subshells, `return 0`, `set +e` ending in success, traps of its own.
#[test]
fn setup_cases() {
    let fails = [
        "false\ntrue",
        "cd /nonexistent/dir",
        "exit 0",
        "exit 3",
        "return 4",
        "if then fi",
        "f() { false; echo ran-on; }\nf",
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
    let runs = [
        "(exit 3) || true\nx=$(echo a; exit 4) || true\ntrue | (exit 5) || true",
        "return 0\nfalse",
        "set +e; false; true",
        "trap 'echo mytrap' EXIT INT\ntrap -p EXIT >/dev/null",
        "( trap 'echo sub-trap' EXIT; exit 0 ) >/dev/null",
    ];
    let json = |setup: &str, status: &str| -> Params {
        let v = json!({"RUNNER_ARGV": ["@PROBE@", "@MARK@", status], "RUNNER_SETUP": setup});
        Params::Json(Box::leak(v.to_string().into_boxed_str()))
    };
    let mut cases: Vec<Case> = fails
        .iter()
        .map(|setup| Case {
            both_modes: true,
            stderr: Stderr::RunnerLast("RUNNER_SETUP"),
            output_lacks: &["mytrap", "ran-on"],
            ..refused(setup, json(setup, "0"), "")
        })
        .collect();
    cases.extend(runs.iter().map(|setup| Case {
        name: setup,
        params: json(setup, "6"),
        both_modes: true,
        code: 6,
        stderr: Stderr::Exact("probe stderr\n"),
        output_has: &["cwd="],
        output_lacks: &["trap"],
        ..CASE
    }));
    check_cases("setup_cases", &cases);
}

/// 126 and 127 in both modes without relying on exec (which says 126 for a
/// missing path on bash 3.2 and 4.0); redirections that cannot be opened and
/// an events file that cannot be written are 125; RUNNER_EVENTS means
/// nothing in direct mode (a parameter file shared between modes may carry
/// it, even empty).
#[test]
fn start_and_redirection_cases() {
    let cli = |name, cli: &'static str, code| Case {
        both_modes: true,
        code,
        stderr: Stderr::Runner(""),
        ..refused(name, Params::Json(cli), "")
    };
    // bash's own message about the failed redirection comes first.
    let redirect = |name, json, both_modes| Case {
        both_modes,
        stderr: Stderr::RunnerLast("the CLI was not started"),
        ..refused(name, Params::Json(json), "")
    };
    let cases = [
        cli(
            "missing path",
            r#"{"RUNNER_ARGV": ["@DIR@/missing", "a"]}"#,
            127,
        ),
        cli(
            "not on PATH",
            r#"{"RUNNER_ARGV": ["no-such-cli-anywhere"], "RUNNER_PATH_PREFIX": "@DIR@/bin"}"#,
            127,
        ),
        cli(
            "a directory on PATH",
            r#"{"RUNNER_ARGV": ["dir-cli"], "RUNNER_PATH_PREFIX": "@DIR@/bin"}"#,
            127,
        ),
        cli("not executable", r#"{"RUNNER_ARGV": ["@DIR@/plain"]}"#, 126),
        cli("a directory", r#"{"RUNNER_ARGV": ["@DIR@"]}"#, 126),
        cli(
            "not executable on PATH",
            r#"{"RUNNER_ARGV": ["noexec-cli"], "RUNNER_PATH_PREFIX": "@DIR@/bin"}"#,
            126,
        ),
        redirect(
            "stdin missing",
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@"], "RUNNER_STDIN": "/nonexistent/dir/file"}"#,
            true,
        ),
        redirect(
            "stdin a directory",
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@"], "RUNNER_STDIN": "@DIR@"}"#,
            true,
        ),
        redirect(
            "stderr missing dir",
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@"], "RUNNER_STDERR": "/nonexistent/dir/file"}"#,
            true,
        ),
        redirect(
            "stdout missing dir",
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@"], "RUNNER_STDOUT": "/nonexistent/dir/file"}"#,
            false,
        ),
        redirect(
            "stdout a directory",
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@"], "RUNNER_STDOUT": "@DIR@"}"#,
            false,
        ),
        redirect(
            "events missing dir",
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@"], "RUNNER_MODE": "events", "RUNNER_EVENTS": "/nonexistent/dir/file"}"#,
            false,
        ),
        redirect(
            "events a directory",
            r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@"], "RUNNER_MODE": "events", "RUNNER_EVENTS": "@DIR@"}"#,
            false,
        ),
        Case {
            // The CLI is replay.sh (no mark); bash's printf complains first.
            stderr: Stderr::RunnerLast("writing RUNNER_EVENTS"),
            ..refused(
                "events unwritable",
                Params::Json(
                    r#"{"RUNNER_ARGV": ["@REPLAY@", "@DATA@"], "RUNNER_MODE": "events", "RUNNER_EVENTS": "/dev/full"}"#,
                ),
                "writing RUNNER_EVENTS",
            )
        },
        Case {
            name: "events file ignored in direct mode",
            params: Params::Json(
                r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@", "8"], "RUNNER_EVENTS": "@DIR@/ev2"}"#,
            ),
            code: 8,
            stderr: Stderr::Exact("probe stderr\n"),
            output_has: &["cwd="],
            absent: Some("@DIR@/ev2"),
            ..CASE
        },
        Case {
            name: "empty events file ignored in direct mode",
            params: Params::Json(
                r#"{"RUNNER_ARGV": ["@PROBE@", "@MARK@", "8"], "RUNNER_EVENTS": ""}"#,
            ),
            code: 8,
            stderr: Stderr::Exact("probe stderr\n"),
            output_has: &["cwd="],
            ..CASE
        },
    ];
    check_cases("start_and_redirection_cases", &cases);
}

/// RUNNER_ARG_FILE: the file's bytes become the last argv word exactly
/// (trailing newlines, quotes, `$(…)`, a leading `-`, multibyte text), up to
/// 131071 bytes counted as bytes in every locale; a longer file, a NUL or
/// a missing file stop with 125 before the CLI starts.
#[test]
fn arg_file_becomes_the_last_argument_byte_for_byte() {
    let shells = support::bashes();
    let d = tmp();
    let mark = d.path().join("got");
    // Writes its last argument to `got`, and nothing else.
    let script = "printf '%s' \"$1\" > \"$0\"";
    let big = format!("{}a", "é".repeat(65_535));
    assert_eq!(big.len(), 131_071);
    let cases: Vec<(&str, Vec<u8>, i32)> = vec![
        (
            "mixed",
            "-x write\n\n 'q' \"d\" $(id) `id` \\ é\t\n\n".into(),
            0,
        ),
        ("at the limit", big.clone().into_bytes(), 0),
        ("over the limit", format!("{big}b").into_bytes(), 125),
        ("a NUL", b"a\0b".to_vec(), 125),
    ];
    for (shell, locale) in pairs(&shells) {
        for (what, bytes, want) in &cases {
            let what = format!("{} {locale} {what}", shell.name);
            let f = d.path().join("arg");
            std::fs::write(&f, bytes).unwrap();
            let _ = std::fs::remove_file(&mark);
            let file = params(
                d.path(),
                &json!({
                    "RUNNER_ARGV": ["sh", "-c", script, p(&mark)],
                    "RUNNER_ARG_FILE": p(&f),
                }),
            );
            let out = run(shell, locale, &file, d.path(), &[]);
            assert_eq!(code(&out), *want, "{what}: {}", err(&out));
            if *want == 0 {
                assert_eq!(&std::fs::read(&mark).unwrap(), bytes, "{what}");
            } else {
                assert!(!mark.exists(), "{what}: the CLI ran");
                assert!(
                    err(&out).contains("RUNNER_ARG_FILE"),
                    "{what}: {}",
                    err(&out)
                );
            }
        }
        let file = params(
            d.path(),
            &json!({"RUNNER_ARGV": ["true"], "RUNNER_ARG_FILE": p(&d.path().join("missing"))}),
        );
        let out = run(shell, locale, &file, d.path(), &[]);
        assert_eq!(code(&out), 125, "{}: {}", shell.name, err(&out));
    }
    support::report("arg_file_becomes_the_last_argument_byte_for_byte", &shells);
}

/// The stamps of the events lines, in order.
fn stamps_of(raw: &[u8]) -> Vec<f64> {
    raw.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let tab = l.iter().position(|&b| b == b'\t').unwrap();
            std::str::from_utf8(&l[..tab]).unwrap().parse().unwrap()
        })
        .collect()
}

/// What record_chunks (bash 3.2 to 4.4) meets at the edges of its chunks,
/// each piece arriving 0.7 s after the one before (a chunk of its own): a
/// CR at the end of a chunk before a newline (dropped), before more of the
/// line (kept) and before another CR; a line of 200 KiB across chunks with
/// short lines after it in its last chunk; a chunk of NUL bytes only
/// (nothing, and the output goes on); a long line that the output ends
/// inside, on a CR (dropped, as before a newline). The long line that
/// begins in the first piece and ends in the third is stamped at its first
/// byte from dd (bash < 5.0) and when it ends from `read -N` (bash 5):
/// either way more than a second from one of its neighbours. The
/// recorder's private directory (beside the events file, never in TMPDIR)
/// is gone afterwards.
#[test]
fn events_mode_chunk_edges_and_long_line_stamps() {
    let shells = support::bashes();
    let long: Vec<u8> = b"0123456789abcdef"
        .iter()
        .copied()
        .cycle()
        .take(200 << 10)
        .collect();
    let pieces: Vec<Vec<u8>> = vec![
        [b"first\nCR then newline\r".as_slice(), &long].concat(),
        [&long[..], b"\r"].concat(),
        [b"\nafter long\nCR then text\r".as_slice()].concat(),
        b"text\nCR then CR\r".to_vec(),
        b"\0\0\0".to_vec(),
        [b"\r\nshort 1\nshort 2\n".as_slice(), &long, b"\r"].concat(),
    ];
    // NUL bytes are dropped (nul_bytes_do_not_break_the_stream).
    let input: Vec<u8> = pieces.concat().into_iter().filter(|&b| b != 0).collect();
    let want = expected_events(&input);
    for shell in &shells {
        let d = tmp();
        let tmpdir = d.path().join("tmpdir");
        std::fs::create_dir(&tmpdir).unwrap();
        let mut argv = vec![fixture("drip.sh"), "0.7".to_owned()];
        for (i, piece) in pieces.iter().enumerate() {
            let f = d.path().join(format!("piece{i}"));
            std::fs::write(&f, piece).unwrap();
            argv.push(p(&f));
        }
        let events = d.path().join("events.log");
        let file = params(
            d.path(),
            &json!({"RUNNER_ARGV": argv, "RUNNER_MODE": "events", "RUNNER_EVENTS": p(&events)}),
        );
        let what = shell.name.clone();
        let t0 = now();
        let out = run(
            shell,
            "C.UTF-8",
            &file,
            d.path(),
            &[("TMPDIR", &p(&tmpdir))],
        );
        let t1 = now();
        assert_eq!(code(&out), 0, "{what}: {}", err(&out));
        let raw = std::fs::read(&events).unwrap();
        let got = check_events(&raw, shell, t0, t1, &what);
        assert!(
            got == want,
            "{what}: events differ:\n got {:?}\nwant {:?}",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
        // Lines: first, the long one, after long, ...
        let stamps = stamps_of(&raw);
        let (before, long_at, after) = (stamps[0], stamps[1], stamps[2]);
        if major(shell) < 5 {
            assert!(
                after - long_at >= 1.0,
                "{what}: long line stamped at its end"
            );
        } else {
            assert!(
                long_at - before >= 1.0,
                "{what}: long line stamped at its start"
            );
        }
        let left: Vec<_> = std::fs::read_dir(&tmpdir).unwrap().collect();
        assert!(left.is_empty(), "{what}: left in TMPDIR: {left:?}");
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with(".events-recorder."))
            .collect();
        assert!(left.is_empty(), "{what}: left beside the events: {left:?}");
    }
    support::report("events_mode_chunk_edges_and_long_line_stamps", &shells);
}

/// bash 3.2 to 4.4 need a private directory for the chunks, beside
/// RUNNER_EVENTS: when mktemp cannot make one there (the events file is the
/// runner's stdout, in /proc/self/fd), events mode stops with 125 before
/// the CLI starts; bash 5 needs none and runs the CLI.
#[test]
fn events_mode_without_a_private_directory() {
    let shells = support::bashes();
    for shell in &shells {
        let d = tmp();
        let mark = d.path().join("ran");
        let file = params(
            d.path(),
            &json!({
                "RUNNER_ARGV": ["sh", "-c", "echo ran; : > \"$0\"", p(&mark)],
                "RUNNER_MODE": "events",
                "RUNNER_EVENTS": "/proc/self/fd/1",
            }),
        );
        let out = run(shell, "C", &file, d.path(), &[]);
        let what = shell.name.clone();
        if major(shell) < 5 {
            assert_eq!(code(&out), 125, "{what}: {}", err(&out));
            assert!(
                err(&out).contains("mktemp -d failed"),
                "{what}: {}",
                err(&out)
            );
            assert!(!mark.exists(), "{what}: the CLI ran");
        } else {
            assert_eq!(code(&out), 0, "{what}: {}", err(&out));
            assert!(mark.exists(), "{what}: the CLI did not run");
        }
    }
    support::report("events_mode_without_a_private_directory", &shells);
}

/// How late each event was stamped: its stamp less the time its line says
/// it was written (clock.sh's `{"n":N,"written":T}`), in seconds.
fn lags_of(raw: &[u8], what: &str) -> Vec<f64> {
    raw.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let tab = l.iter().position(|&b| b == b'\t').unwrap();
            let stamp: f64 = std::str::from_utf8(&l[..tab]).unwrap().parse().unwrap();
            let line: serde_json::Value = serde_json::from_slice(&l[tab + 1..])
                .unwrap_or_else(|e| panic!("{what}: event {:?}: {e}", String::from_utf8_lossy(l)));
            stamp - line["written"].as_f64().expect("a written time")
        })
        .collect()
}

/// Every bash stamps a line within 0.1 s of its arrival (issue 24): a CLI
/// prints six lines 0.3 s apart, each carrying the wall-clock time just
/// before it was written (clock.sh, from GNU date). No stamp is earlier than
/// that (less 0.01 s: /proc/uptime counts hundredths) and none is more than
/// 1 s later, on every run; most are within 0.1 s of it. Only that last
/// figure depends on the machine's load (the recorder and the CLI itself,
/// between its date and its write, can be scheduled late), so a run that
/// misses it is tried again, up to three runs in all: a recorder that stamps
/// late misses it every time. Whole-second stamps cannot pass: they are
/// early for nearly every line.
#[test]
fn events_mode_stamps_each_line_within_a_tenth_of_a_second() {
    const LINES: usize = 6;
    const RUNS: usize = 3;
    let shells = support::bashes();
    for shell in &shells {
        let what = shell.name.clone();
        let mut tries = Vec::new();
        for _ in 0..RUNS {
            let lags = clock_lags(shell, LINES);
            for lag in &lags {
                assert!(
                    *lag >= -0.01,
                    "{what}: a line stamped {:.3} s before it was written (lags {lags:?})",
                    -lag
                );
                assert!(
                    *lag <= 1.0,
                    "{what}: a line stamped {lag:.3} s after it was written (lags {lags:?})"
                );
            }
            let close = lags.iter().filter(|&&lag| lag <= 0.1).count();
            tries.push(lags);
            if close * 2 > LINES {
                break;
            }
        }
        let last = tries.last().unwrap();
        assert!(
            last.iter().filter(|&&lag| lag <= 0.1).count() * 2 > LINES,
            "{what}: in each of {RUNS} runs, most lines were stamped over 0.1 s after their writing (lags {tries:?})"
        );
    }
    support::report(
        "events_mode_stamps_each_line_within_a_tenth_of_a_second",
        &shells,
    );
}

/// One run of clock.sh (LINES lines 0.3 s apart) in events mode: each
/// event's stamp less the time its line says it was written.
fn clock_lags(shell: &Shell, lines: usize) -> Vec<f64> {
    let d = tmp();
    let events = d.path().join("events.log");
    let file = params(
        d.path(),
        &json!({
            "RUNNER_ARGV": [fixture("clock.sh"), lines.to_string(), "0.3"],
            "RUNNER_MODE": "events",
            "RUNNER_EVENTS": p(&events),
        }),
    );
    let what = &shell.name;
    let t0 = now();
    let out = run(shell, "C.UTF-8", &file, d.path(), &[]);
    let t1 = now();
    assert_eq!(code(&out), 0, "{what}: {}", err(&out));
    let raw = std::fs::read(&events).unwrap();
    check_events(&raw, shell, t0, t1, what);
    let lags = lags_of(&raw, what);
    assert_eq!(lags.len(), lines, "{what}: {lags:?}");
    lags
}

/// A parameter file that replays INPUT (written to DIR/cli-output) in
/// events mode into DIR/events.log, with BIN first on the CLI's PATH when
/// given: the file and the events path.
fn replay_params(dir: &Path, input: &[u8], bin: Option<&Path>) -> (PathBuf, PathBuf) {
    let data = dir.join("cli-output");
    std::fs::write(&data, input).unwrap();
    let events = dir.join("events.log");
    let mut v = json!({
        "RUNNER_ARGV": [fixture("replay.sh"), p(&data)],
        "RUNNER_MODE": "events",
        "RUNNER_EVENTS": p(&events),
    });
    if let Some(bin) = bin {
        v["RUNNER_PATH_PREFIX"] = json!(p(bin));
    }
    (params(dir, &v), events)
}

/// The stamps where the recorder's clock has no fraction: whole seconds on
/// bash 3.2 to 4.4; bash 5 keeps $EPOCHREALTIME.
fn fallback_shape(shell: &Shell) -> Stamp {
    if major(shell) < 5 {
        Stamp::Whole
    } else {
        Stamp::Fraction
    }
}

/// A replay that exited 0, said nothing on stderr, and left `want` in
/// EVENTS after stamps of SHAPE within SPAN.
fn assert_replayed(
    out: &Output,
    events: &Path,
    (shell, shape, span): (&Shell, Stamp, (f64, f64)),
    what: &str,
    want: &[u8],
) {
    assert_eq!(code(out), 0, "{what}: {}", err(out));
    assert_eq!(err(out), "", "{what}");
    let raw = std::fs::read(events).unwrap();
    let got = check_stamped(&raw, shell, shape, span, what);
    assert!(
        got == want,
        "{what}: events differ ({} bytes, want {}):\n got {:?}\nwant {:?}",
        got.len(),
        want.len(),
        String::from_utf8_lossy(&got[..got.len().min(4096)]),
        String::from_utf8_lossy(&want[..want.len().min(4096)])
    );
}

/// A `date` that does not expand %N (date_without_nano.sh, first on the
/// PATH by way of RUNNER_PATH_PREFIX: busybox's prints "%N", BSD's "N",
/// and one that fails outright): bash 3.2 to 4.4 fall back to whole-second
/// stamps, bash 5 keeps $EPOCHREALTIME, and every byte comes through.
#[test]
fn events_mode_without_a_nanosecond_date_stamps_whole_seconds() {
    let shells = support::bashes();
    let input = mixed_input();
    let want = expected_events(&input);
    for shell in &shells {
        for fake in ["busybox", "bsd", "refuse"] {
            let d = tmp();
            let bin = d.path().join("bin");
            std::fs::create_dir(&bin).unwrap();
            std::os::unix::fs::symlink(fixture("date_without_nano.sh"), bin.join("date")).unwrap();
            let (file, events) = replay_params(d.path(), &input, Some(&bin));
            let what = format!("{} with a {fake} date", shell.name);
            let t0 = now();
            let out = run(shell, "C", &file, d.path(), &[("FAKE_DATE", fake)]);
            let span = (t0, now());
            assert_replayed(
                &out,
                &events,
                (shell, fallback_shape(shell), span),
                &what,
                &want,
            );
        }
    }
    support::report(
        "events_mode_without_a_nanosecond_date_stamps_whole_seconds",
        &shells,
    );
}

/// /proc/uptime unreadable for the recorder (empty: /dev/null mounted over
/// it in a mount namespace of the test's own) or of another shape (no
/// fraction): bash 3.2 to 4.4 fall back to whole-second stamps, bash 5 keeps
/// $EPOCHREALTIME, and every byte comes through. Needs root (unshare, mount).
#[test]
fn events_mode_without_proc_uptime_stamps_whole_seconds() {
    let test = "events_mode_without_proc_uptime_stamps_whole_seconds";
    if !support::require_root(test)
        || !support::require_tool(test, "unshare")
        || !support::require_tool(test, "mount")
    {
        return;
    }
    let shells = support::bashes();
    let input = mixed_input();
    let want = expected_events(&input);
    for shell in &shells {
        for (case, uptime) in [("empty", None), ("no fraction", Some("12345 678\n"))] {
            let d = tmp();
            let fake = match uptime {
                None => "/dev/null".to_owned(),
                Some(text) => {
                    let f = d.path().join("uptime");
                    std::fs::write(&f, text).unwrap();
                    p(&f)
                }
            };
            let (file, events) = replay_params(d.path(), &input, None);
            let mut cmd = Command::new("unshare");
            cmd.args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c"])
                .arg(r#"f=$1; shift; mount --bind "$f" /proc/uptime && exec "$@""#)
                .arg("sh")
                .arg(&fake)
                .args(&shell.argv)
                .arg(runner_script())
                .arg(&file);
            let what = format!("{} with a {case} /proc/uptime", shell.name);
            let t0 = now();
            let out = run_env(cmd, "C", &[], d.path());
            let span = (t0, now());
            assert_replayed(
                &out,
                &events,
                (shell, fallback_shape(shell), span),
                &what,
                &want,
            );
        }
    }
    support::report(test, &shells);
}

/// bash 3.2 to 4.4 record through dd, tr, sed, mktemp, rm and sleep from
/// the PATH the CLI sees: with busybox's applets first on it (an Alpine or
/// slim image with an old bash), every byte comes through as with GNU's,
/// mixed input and a 1 MiB line that spans chunks alike, with no word on
/// stderr. (bash 5 reads the pipe itself: the same events, no tool.)
#[test]
fn events_mode_with_busybox_tools() {
    let test = "events_mode_with_busybox_tools";
    let Some(busybox) = support::which("busybox") else {
        support::require(test, false, "busybox");
        return;
    };
    let shells = support::bashes();
    let mut input = mixed_input();
    input.extend_from_slice(b"\n");
    input.extend((0..1_048_576).map(|i| b"0123456789abcdef"[i % 16]));
    input.extend_from_slice(b"\r\nlast\n");
    let want = expected_events(&input);
    for shell in &shells {
        let d = tmp();
        let bin = d.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for tool in ["dd", "tr", "sed", "mktemp", "rm", "sleep"] {
            std::os::unix::fs::symlink(&busybox, bin.join(tool)).unwrap();
        }
        let (file, events) = replay_params(d.path(), &input, Some(&bin));
        let what = format!("{} with busybox tools", shell.name);
        let t0 = now();
        let out = run(shell, "C.UTF-8", &file, d.path(), &[]);
        let span = (t0, now());
        assert_replayed(&out, &events, (shell, Stamp::Fraction, span), &what, &want);
    }
    support::report(test, &shells);
}
