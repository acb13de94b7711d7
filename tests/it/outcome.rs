//! `shforge outcome` against the real pinned CLIs: one test per harness ×
//! cause, each a real rollout through the generated supervisor and runner
//! against the fake model server (the `shforge-fail=` directive in the
//! prompt), or with a broken entry, a signal, a deadline. The expected
//! cell is docs/capture.md's "Rollout outcome" table; where a harness hides a
//! cause the cell expects the documented fallback.
//!
//! Cases of one harness run one at a time (a lock per harness), so the
//! two cores are not flooded; each case starts its own server.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use shforge::harness::{Harness, Mode, SessionSpec};
use shforge::host::supervisor::{SupervisorOptions, supervised_launch};
use shforge::model_server::{RunningServer, ServerConfig};

/// How a case breaks the rollout.
#[derive(Clone, Copy)]
enum Fault {
    /// `shforge-fail=DIRECTIVE` in the prompt.
    Fail(&'static str),
    /// The base URL names a port nothing listens on.
    ClosedPort,
    /// The entry does not exist.
    MissingEntry,
    /// The entry is a regular file without execute permission.
    NotExecutable,
    /// The CLI is KILLed (signal 9) while it waits on a retried fault.
    Killed,
}

/// What the case expects: status, cause, and for a deadline the cause the
/// harness was retrying (None: its outputs name none).
struct Expect {
    status: &'static str,
    cause: &'static str,
    underlying: Option<&'static str>,
}

/// One lock per harness: its cases run one after the other.
static LOCKS: [Mutex<()>; Harness::ALL.len()] = [const { Mutex::new(()) }; Harness::ALL.len()];

fn lock(h: Harness) -> std::sync::MutexGuard<'static, ()> {
    let i = Harness::ALL.iter().position(|&x| x == h).unwrap();
    LOCKS[i].lock().unwrap_or_else(|e| e.into_inner())
}

/// The variable carrying the key: Qwen Code reads only its own
/// (OPENAI_API_KEY for chat), the others are given another name.
fn key_env(h: Harness) -> &'static str {
    match h {
        Harness::QwenCode => "OPENAI_API_KEY",
        _ => "SHFORGE_TEST_KEY",
    }
}

/// A port nothing listens on: bound, then closed.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The group leader carrying `marker`: in direct mode, the CLI the runner
/// exec'd.
fn marked_leader(marker: &str) -> Option<i32> {
    let needle = format!("NEMO_GYM_SUPERVISOR={marker}");
    for e in std::fs::read_dir("/proc").ok()? {
        let name = e.ok()?.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if !env.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
            continue;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let pgrp: i32 = after.split_whitespace().nth(2)?.parse().ok()?;
        if pgrp == pid {
            return Some(pid);
        }
    }
    None
}

/// Run one case and check its outcome.
fn case(name: &str, h: Harness, fault: Fault, deadline: u64, want: Expect) {
    let Some(artifacts) = support::artifacts::artifacts_for(h, "outcome") else {
        return;
    };
    let _one_at_a_time = lock(h);
    let real_entry = support::artifacts::install(h, &artifacts);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let work = t.join("work");
    std::fs::create_dir(&work).unwrap();
    let log = t.join("requests.jsonl");
    let server = RunningServer::start(ServerConfig {
        log: Some(log.clone()),
        ..ServerConfig::default()
    })
    .unwrap();
    let base_url = match fault {
        Fault::ClosedPort => format!("http://127.0.0.1:{}", closed_port()),
        _ => server.base_url(),
    };
    let entry = entry_for(fault, t, real_entry);
    let directive = match fault {
        Fault::Fail(d) => format!(" shforge-fail={d}"),
        // Something the CLI keeps retrying, so it is alive when killed.
        Fault::Killed => " shforge-fail=overloaded:times=1000".to_owned(),
        _ => String::new(),
    };
    let mode = match fault {
        Fault::Killed => Mode::Direct,
        _ => Mode::Events,
    };
    let session = t.join("session");
    // `into`: a SessionSpec on main takes a HarnessRef (From<Harness>).
    #[allow(clippy::useless_conversion)]
    let spec = SessionSpec {
        harness: h.into(),
        session_dir: session.display().to_string(),
        workdir: work.display().to_string(),
        entry,
        base_url,
        model: "fake-model".into(),
        api: None,
        api_key_env: Some(key_env(h).into()),
        keep_env: Vec::new(),
        mode,
        prompt: format!(
            "Write the token. shforge-prefer=shell shforge-target={}{directive}",
            work.join("out.txt").display()
        ),
    };
    let built = spec.build().unwrap();
    built.write_into(&session).unwrap();
    let receipt = t.join("receipt.json");
    // One per case: the Killed fault finds its CLI by it, beside others.
    let marker = format!("shforge-outcome-{}-{name}", std::process::id());
    let mut child = launch(h, t, &receipt, &marker, deadline);
    if let Fault::Killed = fault {
        // Once the CLI has asked the model (it is retrying), KILL it.
        for _ in 0..1200 {
            if std::fs::metadata(&log).is_ok_and(|m| m.len() > 0) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let pid = marked_leader(&marker).expect("the CLI is running");
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    child.wait().unwrap();
    drop(server);
    let out = outcome(h, &receipt, None, &session, mode);
    assert_eq!(out.status.code(), Some(0), "{h}: {out:?}");
    let o: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = (
        o["status"].as_str().unwrap_or(""),
        o["cause"].as_str().unwrap_or(""),
        o["underlying"].as_str(),
    );
    // Kept for docs/capture.md's table (which evidence each cell used).
    let cells = Path::new(env!("CARGO_TARGET_TMPDIR")).join("outcome-cells");
    std::fs::create_dir_all(&cells).unwrap();
    std::fs::write(cells.join(format!("{name}.json")), &out.stdout).unwrap();
    assert!(
        got == (want.status, want.cause, want.underlying) || also(name, got),
        "{h}: outcome {o:#}, want {:?}",
        (want.status, want.cause, want.underlying)
    );
    same_with_capture(h, &receipt, &session, mode, got);
    // The evidence names the file and the record it rests on; the receipt
    // is always last.
    let ev = o["evidence"].as_array().unwrap();
    assert_eq!(ev.last().unwrap()["basis"], "receipt", "{o:#}");
    if want.cause != "none" && !ev.is_empty() {
        assert!(ev[0]["file"].as_str().is_some_and(|f| !f.is_empty()));
    }
}

/// The CLI for `fault`: the installed one, none, or a copy without its x bit.
fn entry_for(fault: Fault, t: &Path, real_entry: String) -> String {
    match fault {
        Fault::MissingEntry => t.join("no-such-cli").display().to_string(),
        Fault::NotExecutable => {
            let p = t.join("cli-without-x");
            std::fs::copy(&real_entry, &p).unwrap();
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
            p.display().to_string()
        }
        _ => real_entry,
    }
}

/// The session in `t/session` started under the supervisor, as an adapter
/// starts it: its receipt at `receipt`, its CLI marked with `marker`.
fn launch(h: Harness, t: &Path, receipt: &Path, marker: &str, deadline: u64) -> Child {
    let sup = SupervisorOptions::new(receipt.display().to_string())
        .deadline(Duration::from_secs(deadline))
        .grace(Duration::from_secs(3))
        .marker(marker.to_owned());
    let session = t.join("session");
    let command = [
        "bash".to_owned(),
        "--noprofile".into(),
        "--norc".into(),
        support::root()
            .join("generated/harness_runner.sh")
            .display()
            .to_string(),
        session.join("params.sh").display().to_string(),
    ];
    let supervisor = support::root().join("generated/process_supervisor.sh");
    let argv = supervised_launch(&supervisor.display().to_string(), &sup, &command).unwrap();
    Command::new(&argv[0])
        .args(&argv[1..])
        .env(key_env(h), "sk-shforge-outcome")
        .env("HOME", t)
        .current_dir(t.join("work"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `shforge outcome` on a finished session (with `--capture` if given).
fn outcome(
    h: Harness,
    receipt: &Path,
    capture: Option<&Path>,
    session: &Path,
    mode: Mode,
) -> Output {
    let mut c = Command::new(support::shforge());
    c.args(["outcome", "--harness", h.name(), "--receipt"])
        .arg(receipt);
    if let Some(path) = capture {
        c.arg("--capture").arg(path);
    }
    c.arg("--stderr").arg(session.join("stderr.log"));
    match mode {
        Mode::Events => c.arg("--events").arg(session.join("events.log")),
        Mode::Direct => c.arg("--stdout").arg(session.join("stdout.log")),
    };
    support::run(c)
}

/// With the session data capture.json names added, the outcome is `got`.
fn same_with_capture(h: Harness, receipt: &Path, session: &Path, mode: Mode, got: Got) {
    // With the session data capture.json names (read through the snapshot
    // readers) added, as an adapter would pass it, the outcome is the same.
    let capture: Value =
        serde_json::from_slice(&std::fs::read(session.join("capture.json")).unwrap()).unwrap();
    let captured = capture["db"]
        .as_str()
        .or(capture["dir"].as_str())
        .map(PathBuf::from);
    if let Some(path) = captured.filter(|p| h != Harness::OpenClaw && p.exists()) {
        let out2 = outcome(h, receipt, Some(&path), session, mode);
        assert_eq!(out2.status.code(), Some(0), "{h} --capture: {out2:?}");
        let o2: Value = serde_json::from_slice(&out2.stdout).unwrap();
        assert_eq!(
            (
                o2["status"].as_str().unwrap_or(""),
                o2["cause"].as_str().unwrap_or(""),
                o2["underlying"].as_str()
            ),
            got,
            "{h}: with --capture {o2:#}"
        );
    }
}

/// Cells where the harness's own timing decides between two outcomes, both
/// right: Kilo retries a cut stream, and on a loaded machine may give up
/// (exit 1, "Connection reset by server") before the deadline stops it.
const ALSO: &[(&str, Got)] = &[("kilo_stream_cut", ("failed", "network", None))];

/// An outcome as the tests compare it: status, cause, underlying.
type Got<'a> = (&'a str, &'a str, Option<&'a str>);

fn also(name: &str, got: Got) -> bool {
    ALSO.iter().any(|(n, o)| *n == name && *o == got)
}

/// One `#[test]` per row: `name: HARNESS, FAULT, DEADLINE => STATUS CAUSE [UNDERLYING];`.
macro_rules! cases {
    ($($name:ident: $h:ident, $fault:expr, $deadline:expr => $status:literal $cause:literal $(($under:literal))?;)*) => {
        $(
            #[test]
            fn $name() {
                #[allow(unused_mut, unused_assignments)]
                let mut underlying = None;
                $(underlying = Some($under);)?
                case(stringify!($name), Harness::$h, $fault, $deadline, Expect { status: $status, cause: $cause, underlying });
            }
        )*
    };
}

use Fault::*;

// The harness × cause table (docs/capture.md, "Rollout outcome"). Deadlines are
// where a harness keeps retrying: the fault never ends, the deadline ends
// the run, and `underlying` says what it was retrying, when it says.
cases! {
    codex_rate_limited: Codex, Fail("429"), 60 => "failed" "rate_limited";
    codex_usage_limited: Codex, Fail("quota"), 60 => "failed" "usage_limited";
    codex_auth: Codex, Fail("401:times=1000"), 8 => "timed_out" "deadline" ("auth");
    codex_model_not_found: Codex, Fail("model"), 60 => "failed" "model_not_found";
    codex_context_window: Codex, Fail("context"), 60 => "failed" "context_window";
    codex_overloaded: Codex, Fail("overloaded:times=1000"), 8 => "timed_out" "deadline" ("overloaded");
    codex_network: Codex, ClosedPort, 8 => "timed_out" "deadline" ("network");
    codex_stream_cut: Codex, Fail("cut:times=1000"), 8 => "timed_out" "deadline" ("network");
    codex_cli_not_found: Codex, MissingEntry, 60 => "failed" "cli_not_found";
    codex_cli_not_executable: Codex, NotExecutable, 60 => "failed" "cli_not_executable";
    codex_cli_crashed: Codex, Killed, 60 => "failed" "cli_crashed";
    codex_deadline: Codex, Fail("429:times=1000:retry-after=60"), 5 => "timed_out" "deadline" ("rate_limited");

    claude_code_rate_limited: ClaudeCode, Fail("429:times=1000"), 8 => "timed_out" "deadline" ("rate_limited");
    claude_code_usage_limited: ClaudeCode, Fail("quota"), 60 => "failed" "usage_limited";
    claude_code_auth: ClaudeCode, Fail("401:times=1000"), 8 => "timed_out" "deadline" ("auth");
    claude_code_model_not_found: ClaudeCode, Fail("model:times=1000"), 60 => "failed" "model_not_found";
    claude_code_context_window: ClaudeCode, Fail("context"), 60 => "failed" "context_window";
    claude_code_overloaded: ClaudeCode, Fail("overloaded:times=1000"), 8 => "timed_out" "deadline" ("overloaded");
    claude_code_network: ClaudeCode, ClosedPort, 8 => "timed_out" "deadline";
    claude_code_stream_cut: ClaudeCode, Fail("cut:times=1000"), 8 => "timed_out" "deadline";
    claude_code_cli_not_found: ClaudeCode, MissingEntry, 60 => "failed" "cli_not_found";
    claude_code_cli_not_executable: ClaudeCode, NotExecutable, 60 => "failed" "cli_not_executable";
    claude_code_cli_crashed: ClaudeCode, Killed, 60 => "failed" "cli_crashed";

    pi_rate_limited: Pi, Fail("429:times=1000"), 90 => "failed" "rate_limited";
    pi_usage_limited: Pi, Fail("quota:times=1000"), 90 => "failed" "usage_limited";
    pi_auth: Pi, Fail("401:times=1000"), 90 => "failed" "auth";
    pi_model_not_found: Pi, Fail("model:times=1000"), 90 => "failed" "model_not_found";
    pi_context_window: Pi, Fail("context:times=1000"), 90 => "failed" "context_window";
    pi_overloaded: Pi, Fail("overloaded:times=1000"), 90 => "failed" "overloaded";
    pi_network: Pi, ClosedPort, 90 => "failed" "network";
    pi_stream_cut: Pi, Fail("cut:times=1000"), 90 => "failed" "network";
    pi_cli_not_found: Pi, MissingEntry, 60 => "failed" "cli_not_found";
    pi_cli_not_executable: Pi, NotExecutable, 60 => "failed" "cli_not_executable";
    pi_cli_crashed: Pi, Killed, 60 => "failed" "cli_crashed";

    opencode_rate_limited: OpenCode, Fail("429:times=1000"), 20 => "timed_out" "deadline";
    opencode_usage_limited: OpenCode, Fail("quota:times=1000"), 20 => "timed_out" "deadline";
    opencode_auth: OpenCode, Fail("401:times=1000"), 90 => "failed" "auth";
    opencode_model_not_found: OpenCode, Fail("model:times=1000"), 90 => "failed" "model_not_found";
    opencode_context_window: OpenCode, Fail("context:times=1000"), 90 => "failed" "context_window";
    opencode_overloaded: OpenCode, Fail("overloaded:times=1000"), 20 => "timed_out" "deadline";
    opencode_network: OpenCode, ClosedPort, 20 => "timed_out" "deadline";
    opencode_stream_cut: OpenCode, Fail("cut:times=1000"), 20 => "timed_out" "deadline";
    opencode_cli_not_found: OpenCode, MissingEntry, 60 => "failed" "cli_not_found";
    opencode_cli_not_executable: OpenCode, NotExecutable, 60 => "failed" "cli_not_executable";
    opencode_cli_crashed: OpenCode, Killed, 90 => "failed" "cli_crashed";

    kilo_rate_limited: Kilo, Fail("429:times=1000"), 25 => "timed_out" "deadline";
    kilo_usage_limited: Kilo, Fail("quota:times=1000"), 25 => "timed_out" "deadline";
    kilo_auth: Kilo, Fail("401:times=1000"), 90 => "failed" "auth";
    kilo_model_not_found: Kilo, Fail("model:times=1000"), 90 => "failed" "model_not_found";
    kilo_context_window: Kilo, Fail("context:times=1000"), 90 => "failed" "context_window";
    kilo_overloaded: Kilo, Fail("overloaded:times=1000"), 25 => "timed_out" "deadline";
    kilo_network: Kilo, ClosedPort, 25 => "timed_out" "deadline";
    kilo_stream_cut: Kilo, Fail("cut:times=1000"), 25 => "timed_out" "deadline";
    kilo_cli_not_found: Kilo, MissingEntry, 60 => "failed" "cli_not_found";
    kilo_cli_not_executable: Kilo, NotExecutable, 60 => "failed" "cli_not_executable";
    kilo_cli_crashed: Kilo, Killed, 90 => "failed" "cli_crashed";

    openclaw_rate_limited: OpenClaw, Fail("429:times=1000"), 40 => "timed_out" "deadline" ("rate_limited");
    openclaw_usage_limited: OpenClaw, Fail("quota:times=1000"), 90 => "failed" "usage_limited";
    openclaw_auth: OpenClaw, Fail("401:times=1000"), 90 => "failed" "auth";
    openclaw_model_not_found: OpenClaw, Fail("model:times=1000"), 90 => "failed" "model_not_found";
    openclaw_context_window: OpenClaw, Fail("context:times=1000"), 90 => "failed" "context_window";
    openclaw_overloaded: OpenClaw, Fail("overloaded:times=1000"), 40 => "timed_out" "deadline" ("overloaded");
    openclaw_network: OpenClaw, ClosedPort, 40 => "timed_out" "deadline" ("network");
    openclaw_stream_cut: OpenClaw, Fail("cut:times=1000"), 40 => "timed_out" "deadline" ("network");
    openclaw_cli_not_found: OpenClaw, MissingEntry, 60 => "failed" "cli_not_found";
    openclaw_cli_not_executable: OpenClaw, NotExecutable, 60 => "failed" "cli_not_executable";
    openclaw_cli_crashed: OpenClaw, Killed, 90 => "failed" "cli_crashed";

    // Qwen Code: only causes it reports at once (it retries a 429 for over
    // 5 minutes and a 500 for about 96 s: not cells for cargo test).
    qwen_code_auth: QwenCode, Fail("401:times=1000"), 60 => "failed" "auth";
    qwen_code_model_not_found: QwenCode, Fail("model:times=1000"), 60 => "failed" "model_not_found";
    qwen_code_cli_not_found: QwenCode, MissingEntry, 60 => "failed" "cli_not_found";
    qwen_code_cli_not_executable: QwenCode, NotExecutable, 60 => "failed" "cli_not_executable";
    // Gemini CLI: only causes it reports at once (it retries 429 and 5xx
    // for about 3.5 minutes, too long for `cargo test`).
    gemini_cli_auth: GeminiCli, Fail("401:times=1000"), 60 => "failed" "auth";
    gemini_cli_model_not_found: GeminiCli, Fail("model:times=1000"), 60 => "failed" "model_not_found";
    gemini_cli_context_window: GeminiCli, Fail("context:times=1000"), 60 => "failed" "context_window";
    gemini_cli_cli_not_found: GeminiCli, MissingEntry, 60 => "failed" "cli_not_found";
    gemini_cli_cli_not_executable: GeminiCli, NotExecutable, 60 => "failed" "cli_not_executable";
    // Cline: only the causes it reports at once (it retries 429 and 5xx
    // six times over about two minutes).
    cline_auth: Cline, Fail("401:times=1000"), 60 => "failed" "auth";
    cline_model_not_found: Cline, Fail("model:times=1000"), 60 => "failed" "model_not_found";
    cline_cli_not_found: Cline, MissingEntry, 60 => "failed" "cli_not_found";
    cline_cli_not_executable: Cline, NotExecutable, 60 => "failed" "cli_not_executable";
    // The issue-41 harnesses: the causes each reports at once.
    mini_swe_agent_auth: MiniSweAgent, Fail("401:times=1000"), 60 => "failed" "auth";
    mini_swe_agent_model_not_found: MiniSweAgent, Fail("model:times=1000"), 60 => "failed" "model_not_found";
    mini_swe_agent_cli_not_found: MiniSweAgent, MissingEntry, 60 => "failed" "cli_not_found";
    continue_cli_auth: ContinueCli, Fail("401:times=1000"), 60 => "failed" "auth";
    continue_cli_model_not_found: ContinueCli, Fail("model:times=1000"), 60 => "failed" "model_not_found";
    continue_cli_cli_not_found: ContinueCli, MissingEntry, 60 => "failed" "cli_not_found";
    copilot_cli_auth: CopilotCli, Fail("401:times=1000"), 60 => "failed" "auth";
    copilot_cli_model_not_found: CopilotCli, Fail("model:times=1000"), 60 => "failed" "model_not_found";
    copilot_cli_cli_not_found: CopilotCli, MissingEntry, 60 => "failed" "cli_not_found";
    // Kimi CLI (kimi --print): the causes the brief asks for, from the real
    // CLI against the fake server.
    kimi_cli_auth: KimiCli, Fail("401:times=1000"), 90 => "failed" "auth";
    kimi_cli_rate_limited: KimiCli, Fail("429:times=1000"), 90 => "failed" "rate_limited";
    kimi_cli_cli_not_found: KimiCli, MissingEntry, 60 => "failed" "cli_not_found";
    // Mistral Vibe: the causes it reports at once (it retries a 429 and 5xx
    // with a backoff of 4 s doubling to 60 s, written to its own log only).
    mistral_vibe_auth: MistralVibe, Fail("401:times=1000"), 60 => "failed" "auth";
    mistral_vibe_model_not_found: MistralVibe, Fail("model:times=1000"), 60 => "failed" "model_not_found";
    mistral_vibe_cli_not_found: MistralVibe, MissingEntry, 60 => "failed" "cli_not_found";
}

#[test]
fn a_foreign_or_missing_receipt_exits_2_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let foreign = tmp.path().join("r.json");
    std::fs::write(&foreign, r#"{"status": "ok"}"#).unwrap();
    let missing = tmp.path().join("none.json");
    for r in [&foreign, &missing] {
        let out = support::run_shforge(&[
            "outcome",
            "--harness",
            "pi",
            "--receipt",
            r.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(r.to_str().unwrap()), "{err}");
    }
}

#[test]
fn a_receipt_alone_classifies_the_local_causes() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("r.json");
    std::fs::write(
        &r,
        r#"{"cleanup_confirmed": true, "return_code": 139, "error": null, "timed_out": false}"#,
    )
    .unwrap();
    let out = support::run_shforge(&[
        "outcome",
        "--harness",
        "codex",
        "--receipt",
        r.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let o: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (o["status"].as_str(), o["cause"].as_str()),
        (Some("failed"), Some("cli_crashed"))
    );
    assert_eq!(o["signal"], 11);
}

/// An adapter's spec gets an outcome too (`--spec`), and its `[outcome]`
/// table, not the harness's name, decides how an exit status is read: the
/// same receipt (exit 173) is a rate limit under `exit_status =
/// "http-mod-256"` and SIGSEGV+… (signal 45) without it.
#[test]
fn an_adapters_spec_decides_how_its_exit_status_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("r.json");
    std::fs::write(
        &r,
        r#"{"cleanup_confirmed": true, "return_code": 173, "error": null, "timed_out": false}"#,
    )
    .unwrap();
    let base = Harness::Pi
        .spec_text()
        .replace("name = \"pi\"", "name = \"my-pi\"");
    let classify = |extra: &str| {
        let spec = tmp.path().join("spec.toml");
        // The spec's installer path is relative to it and never read here.
        std::fs::write(&spec, format!("{base}{extra}")).unwrap();
        let out = support::run_shforge(&[
            "outcome",
            "--spec",
            spec.to_str().unwrap(),
            "--receipt",
            r.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let o: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(o["harness"], "my-pi");
        (o["cause"].as_str().unwrap().to_owned(), o["signal"].clone())
    };
    let (cause, signal) = classify("");
    assert_eq!(signal, 45, "{cause}");
    let (cause, signal) = classify("exit_status = \"http-mod-256\"\n");
    assert_eq!((cause.as_str(), signal), ("rate_limited", Value::Null));
    // A bad table is exit 2 naming the field.
    let spec = tmp.path().join("bad.toml");
    std::fs::write(&spec, format!("{base}[smoke]\ntool = \"pen\"\n")).unwrap();
    let out = support::run_shforge(&[
        "outcome",
        "--spec",
        spec.to_str().unwrap(),
        "--receipt",
        r.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("smoke.tool") && err.lines().count() == 1,
        "{err}"
    );
}
