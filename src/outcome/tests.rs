//! Records as the pinned CLIs wrote them (copied from real runs against
//! the fake model server), classified from files.

use super::*;
use crate::harness::Harness;

fn run(receipt: &str, events: &str, stderr: &str) -> Outcome {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let inputs = Inputs {
        receipt: write("receipt.json", receipt),
        harness: Harness::Codex.into(),
        capture: None,
        events: Some(write("events.log", events)),
        stderr: Some(write("stderr.log", stderr)),
        stdout: None,
    };
    classify(&inputs).unwrap()
}

fn receipt(rc: Option<i32>, timed_out: bool) -> String {
    let rc = rc.map_or("null".into(), |c| c.to_string());
    format!(
        r#"{{"cleanup_confirmed": true, "return_code": {rc}, "error": null, "timed_out": {timed_out}}}"#
    )
}

#[test]
fn codex_turn_failed_names_its_status_in_words() {
    let ev = "1796158344.632133\t{\"type\":\"error\",\"message\":\"exceeded retry limit, last status: 429 Too Many Requests\"}\n\
              1796158344.632133\t{\"type\":\"turn.failed\",\"error\":{\"message\":\"exceeded retry limit, last status: 429 Too Many Requests\"}}\n";
    let o = run(&receipt(Some(1), false), ev, "");
    assert_eq!((o.status, o.cause), (Status::Failed, Cause::RateLimited));
    assert_eq!(o.evidence[0].basis, Basis::ErrorMessage);
    assert!(o.evidence[0].record.starts_with("line 2:"), "{o:?}");
    assert_eq!(o.evidence.last().unwrap().basis, Basis::Receipt);
}

#[test]
fn a_retry_then_success_is_completed() {
    let ev = "1\t{\"type\":\"error\",\"message\":\"Reconnecting... 1/10 (unexpected status 401 Unauthorized: Incorrect API key provided)\"}\n\
              2\t{\"type\":\"turn.completed\",\"usage\":{}}\n";
    let o = run(&receipt(Some(0), false), ev, "");
    assert_eq!((o.status, o.cause), (Status::Completed, Cause::None));
}

#[test]
fn the_deadline_names_what_the_harness_was_retrying() {
    let ev = "1\t{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":3,\"error_status\":529,\"error\":\"overloaded\"}\n";
    let o = run(&receipt(Some(143), true), ev, "");
    assert_eq!((o.status, o.cause), (Status::TimedOut, Cause::Deadline));
    assert_eq!(o.underlying, Some(Cause::Overloaded));
    assert_eq!(o.evidence[0].basis, Basis::ErrorCode);
    assert!(o.evidence[0].structured);
}

#[test]
fn claude_result_with_a_400_reads_the_words_and_its_terminal_reason() {
    let quota = r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":400,"api_error_type":"invalid_request_error","terminal_reason":"api_error","result":"Credit balance is too low"}"#;
    let o = run(&receipt(Some(1), false), quota, "");
    assert_eq!(o.cause, Cause::UsageLimited);
    let ctx = r#"{"type":"result","is_error":true,"api_error_status":400,"terminal_reason":"prompt_too_long","result":"Prompt is too long"}"#;
    let o = run(&receipt(Some(1), false), ctx, "");
    assert_eq!(o.cause, Cause::ContextWindow);
    assert_eq!(o.evidence[0].basis, Basis::ErrorCode);
}

/// Qwen Code 0.24.4's result event when its key variable is empty (its
/// message verbatim, from a run whose session named another variable).
#[test]
fn qwen_code_without_its_key_is_auth() {
    let ev = "1\t{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"is_error\":true,\"duration_ms\":0,\"duration_api_ms\":0,\"error\":{\"message\":\"Missing API key for OpenAI-compatible auth. Set settings.security.auth.apiKey, or set the 'OPENAI_API_KEY' environment variable.\"}}\n";
    let o = run(&receipt(Some(1), false), ev, "");
    assert_eq!(o.cause, Cause::Auth);
}

#[test]
fn pi_exits_0_after_giving_up_and_is_failed() {
    let ev = r#"{"type":"auto_retry_start","attempt":1,"errorMessage":"429 Rate limit reached for fake-model"}
{"type":"agent_end","messages":[{"role":"assistant","stopReason":"error","errorMessage":"429 Rate limit reached for fake-model"}]}
"#;
    let o = run(&receipt(Some(0), false), ev, "");
    assert_eq!((o.status, o.cause), (Status::Failed, Cause::RateLimited));
}

#[test]
fn local_causes_come_from_the_receipt() {
    for (rc, cause) in [
        (Some(127), Cause::CliNotFound),
        (Some(126), Cause::CliNotExecutable),
        (Some(125), Cause::RunnerError),
        (None, Cause::RunnerError),
        (Some(139), Cause::CliCrashed),
    ] {
        let o = run(&receipt(rc, false), "", "");
        assert_eq!((o.status, o.cause), (Status::Failed, cause), "{rc:?}");
        assert_eq!(o.evidence.len(), 1);
    }
    assert_eq!(run(&receipt(Some(139), false), "", "").signal, Some(11));
}

#[test]
fn text_is_used_only_without_records_and_says_so() {
    let o = run(
        &receipt(Some(1), false),
        "",
        "Error: connect ECONNREFUSED 127.0.0.1:9\n",
    );
    assert_eq!(o.cause, Cause::Network);
    assert_eq!(o.evidence[0].basis, Basis::Text);
    assert!(!o.evidence[0].structured);
    let o = run(&receipt(Some(1), false), "", "something odd\n");
    assert_eq!((o.status, o.cause), (Status::Failed, Cause::Unknown));
}

#[test]
fn a_multi_line_object_is_one_record() {
    let ev = "1\t{\n2\t  \"status\": \"error\",\n3\t  \"error\": {\"statusCode\": 404}\n4\t}\n";
    let o = run(&receipt(Some(1), false), ev, "");
    assert_eq!(o.cause, Cause::ModelNotFound);
    assert_eq!(o.evidence[0].basis, Basis::HttpStatus);
    assert!(o.evidence[0].record.starts_with("line 1:"));
}

#[test]
fn a_foreign_receipt_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("r.json");
    std::fs::write(&p, "{\"hello\": 1}").unwrap();
    let inputs = Inputs {
        receipt: p,
        harness: Harness::Pi.into(),
        capture: None,
        events: None,
        stderr: None,
        stdout: None,
    };
    assert!(matches!(
        classify(&inputs),
        Err(OutcomeError::Receipt { .. })
    ));
}

#[test]
fn every_cause_serializes_as_its_name() {
    for c in Cause::ALL {
        assert_eq!(serde_json::to_value(c).unwrap(), c.name());
    }
}

/// Gemini CLI exits with the HTTP status mod 256: 145 is a 401 and 173 a
/// 429 even with no output, while 137 (KILL) and 143 stay signals; for
/// another harness 145 is signal 17.
#[test]
fn gemini_cli_exit_codes_are_http_statuses_mod_256() {
    let gemini = |rc: i32| {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("receipt.json");
        std::fs::write(&p, receipt(Some(rc), false)).unwrap();
        let inputs = Inputs {
            receipt: p,
            harness: Harness::GeminiCli.into(),
            capture: None,
            events: None,
            stderr: None,
            stdout: None,
        };
        classify(&inputs).unwrap()
    };
    assert_eq!(gemini(145).cause, Cause::Auth);
    assert_eq!(gemini(148).cause, Cause::ModelNotFound);
    assert_eq!(gemini(173).cause, Cause::RateLimited);
    assert_eq!(gemini(145).signal, None);
    // A 400 or 500 names no cause on its own (only words do).
    assert_eq!(gemini(144).cause, Cause::Unknown);
    assert_eq!(gemini(244).cause, Cause::Unknown);
    assert_eq!(
        (gemini(137).cause, gemini(137).signal),
        (Cause::CliCrashed, Some(9))
    );
    let other = run(&receipt(Some(145), false), "", "");
    assert_eq!((other.cause, other.signal), (Cause::CliCrashed, Some(17)));
}

/// Kimi CLI's print mode writes the OpenAI Python SDK's APIStatusError as
/// `Error code: 401 - {...}` (wrapped by rich at 80 columns, so its
/// message's words may be split across lines): the status names the cause.
#[test]
fn a_python_sdk_error_code_line_names_its_status() {
    let line = "Error code: 401 - {'error': {'code': 'invalid_api_key', 'message': 'Incorrect AP";
    assert_eq!(
        scan::words_cause(line),
        Some((Cause::Auth, "a status written in the text"))
    );
    assert_eq!(
        scan::words_cause("Error code: 404 - {'error': {}}").map(|c| c.0),
        Some(Cause::ModelNotFound)
    );
    assert_eq!(scan::words_cause("Error code: abc"), None);
}
