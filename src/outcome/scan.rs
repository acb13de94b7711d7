//! Finding error records in what a harness printed or recorded, and the
//! cause each one names.
//!
//! A file is read as a stream of JSON values (JSONL, or one object spread
//! over many lines as OpenClaw prints it), the runner's `SECONDS<TAB>` stamp
//! taken off each line first; what is not JSON is kept as text lines. A JSON
//! value is an *error record* when it says so itself (a `type` naming an
//! error or a failure, `is_error: true`, `stopReason: "error"`, an `error`
//! field, a retry notice); its cause comes from, in this order, an error
//! code or type field, an HTTP status field, then the words of its message.

use serde_json::{Map, Value};

use super::{Basis, Cause};

/// One JSON value or text line of a file, with the line it starts on.
pub(super) enum Item {
    /// A JSON value.
    Json(usize, Value),
    /// A line that is not JSON.
    Text(usize, String),
}

/// Take the runner's `SECONDS[.FRACTION]<TAB>` stamp off a line, if any.
fn unstamp(line: &str) -> &str {
    match line.split_once('\t') {
        Some((stamp, rest))
            if !stamp.is_empty()
                && stamp.split_once('.').map_or_else(
                    || digits(stamp),
                    |(whole, frac)| digits(whole) && digits(frac),
                ) =>
        {
            rest
        }
        _ => line,
    }
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Split `text` into JSON values and text lines. A value may span lines;
/// a line where no value starts is text.
pub(super) fn items(text: &str) -> Vec<Item> {
    let lines: Vec<&str> = text.lines().map(unstamp).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if !line.starts_with('{') {
            if !line.is_empty() {
                out.push(Item::Text(i + 1, line.to_owned()));
            }
            i += 1;
            continue;
        }
        match parse_from(&lines, i) {
            Some((value, used)) => {
                out.push(Item::Json(i + 1, value));
                i += used;
            }
            None => {
                out.push(Item::Text(i + 1, line.to_owned()));
                i += 1;
            }
        }
    }
    out
}

/// The most lines one JSON value may span (OpenClaw's envelope is a few
/// hundred); past it the start is taken as text.
const MAX_SPAN: usize = 20_000;

/// Parse one JSON value starting at line `start`: the line alone first
/// (JSONL, the common case), then growing line by line for a value printed
/// over many lines. Returns the value and how many lines it took.
fn parse_from(lines: &[&str], start: usize) -> Option<(Value, usize)> {
    if let Ok(v) = serde_json::from_str::<Value>(lines[start]) {
        return Some((v, 1));
    }
    let mut text = String::from(lines[start]);
    let end = lines.len().min(start + MAX_SPAN);
    for (n, line) in lines.iter().enumerate().take(end).skip(start + 1) {
        text.push('\n');
        text.push_str(line);
        // Only a closing brace at the start of a line can end a
        // pretty-printed object: parse only then, so the cost stays linear.
        if line.starts_with('}') {
            match serde_json::from_str::<Value>(&text) {
                Ok(v) => return Some((v, n - start + 1)),
                Err(e) if e.is_eof() => {}
                Err(_) => return None,
            }
        }
    }
    None
}

/// What one record says.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Finding {
    /// The cause, `None` for an error whose cause nothing names.
    pub cause: Option<Cause>,
    /// What named it.
    pub basis: Basis,
    /// The words or field that decided, for the evidence.
    pub detail: String,
    /// A retry notice (the harness goes on after it).
    pub transient: bool,
}

/// What a JSON record is, for the outcome.
pub(super) enum Record {
    /// An error record and what it names.
    Error(Finding),
    /// A record saying a turn or run ended well.
    Success,
    /// Anything else.
    Other,
}

/// Classify one JSON record.
pub(super) fn record(v: &Value) -> Record {
    let Some(obj) = v.as_object() else {
        return Record::Other;
    };
    if !is_error(obj) {
        return if is_success(obj) {
            Record::Success
        } else {
            Record::Other
        };
    }
    let transient = is_transient(obj);
    let mut fields = Fields::default();
    fields.collect(v, 0);
    Record::Error(fields.finding(transient))
}

fn str_of<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// The record says it is an error, a failure or a retry notice.
fn is_error(obj: &Map<String, Value>) -> bool {
    let ty = str_of(obj, "type").unwrap_or("");
    ty.contains("error")
        || ty.contains("failed")
        || ty == "auto_retry_start"
        || obj.get("is_error") == Some(&Value::Bool(true))
        || str_of(obj, "subtype") == Some("api_retry")
        || obj.get("success") == Some(&Value::Bool(false))
        || last_message(obj).is_some_and(|m| str_of(m, "stopReason") == Some("error"))
        || obj.get("error").is_some_and(|e| !e.is_null())
        || obj.get("errorMessage").is_some_and(Value::is_string)
        // Continue CLI's `--format json` failure: {"status":"error","message":…}.
        || str_of(obj, "status") == Some("error")
}

/// The message a record carries (`message`, or the last of `messages`).
fn last_message(obj: &Map<String, Value>) -> Option<&Map<String, Value>> {
    obj.get("message")
        .and_then(Value::as_object)
        .or_else(|| {
            obj.get("messages")
                .and_then(Value::as_array)?
                .last()?
                .as_object()
        })
        .or(Some(obj))
}

/// A notice that the harness retries (it goes on after it).
fn is_transient(obj: &Map<String, Value>) -> bool {
    str_of(obj, "subtype") == Some("api_retry")
        || str_of(obj, "type") == Some("auto_retry_start")
        || str_of(obj, "message").is_some_and(|m| m.starts_with("Reconnecting..."))
        || obj
            .get("error")
            .and_then(|e| e.get("data"))
            .and_then(|d| d.get("isRetryable"))
            == Some(&Value::Bool(true))
            && str_of(obj, "type") == Some("session.error")
}

/// The record says a turn or the run ended well.
fn is_success(obj: &Map<String, Value>) -> bool {
    matches!(
        str_of(obj, "type"),
        Some("turn.completed" | "step_finish" | "result" | "agent_end" | "auto_retry_end")
    ) || last_message(obj)
        .and_then(|m| str_of(m, "stopReason"))
        .is_some_and(|r| r != "error" && r != "aborted")
}

/// The fields of an error record that can name a cause.
#[derive(Default)]
struct Fields {
    codes: Vec<String>,
    statuses: Vec<(String, u16)>,
    messages: Vec<String>,
}

/// How deep nested objects are searched (OpenCode's error sits three deep).
const MAX_DEPTH: usize = 6;

impl Fields {
    fn collect(&mut self, v: &Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        match v {
            Value::Object(obj) => {
                for (k, v) in obj {
                    self.field(k, v);
                    self.collect(v, depth + 1);
                }
            }
            Value::Array(items) => {
                // The last messages say how the run ended.
                for v in items.iter().rev().take(4) {
                    self.collect(v, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn field(&mut self, key: &str, v: &Value) {
        match v {
            Value::Number(n) => {
                let status_key = matches!(
                    key,
                    "status"
                        | "statusCode"
                        | "status_code"
                        | "api_error_status"
                        | "error_status"
                        | "httpStatus"
                        | "code"
                );
                if let Some(s) = n.as_u64().filter(|s| status_key && (400..=599).contains(s)) {
                    self.statuses.push((key.to_owned(), s as u16));
                }
            }
            Value::String(s) => {
                if matches!(
                    key,
                    "type"
                        | "code"
                        | "error"
                        | "name"
                        | "status"
                        | "api_error_type"
                        | "terminal_reason"
                        | "reason"
                        | "kind"
                ) && code_cause(s).is_some()
                {
                    self.codes.push(format!("{key}: {s}"));
                }
                if matches!(
                    key,
                    "message"
                        | "result"
                        | "errorMessage"
                        | "finalError"
                        | "error"
                        | "responseBody"
                        | "text"
                ) {
                    self.messages.push(s.clone());
                }
            }
            _ => {}
        }
    }

    fn finding(self, transient: bool) -> Finding {
        let found = |cause, basis, detail: String| Finding {
            cause: Some(cause),
            basis,
            detail,
            transient,
        };
        for code in &self.codes {
            let value = code.split_once(": ").map_or(code.as_str(), |(_, v)| v);
            if let Some(c) = code_cause(value) {
                // A generic code (RESOURCE_EXHAUSTED, a 429's type) can be
                // either limit: the words tell a quota from a rate.
                let c = refine(c, &self.messages);
                return found(c, Basis::ErrorCode, code.clone());
            }
        }
        for (key, status) in &self.statuses {
            if let Some(c) = status_cause(*status) {
                return found(
                    refine(c, &self.messages),
                    Basis::HttpStatus,
                    format!("{key}: {status}"),
                );
            }
        }
        for m in &self.messages {
            if let Some((c, words)) = words_cause(m) {
                return found(c, Basis::ErrorMessage, format!("{words:?} in {}", clip(m)));
            }
        }
        let detail = self
            .statuses
            .first()
            .map(|(k, s)| format!("{k}: {s}"))
            .or_else(|| self.messages.first().map(|m| clip(m)))
            .unwrap_or_default();
        Finding {
            cause: None,
            basis: Basis::ErrorMessage,
            detail,
            transient,
        }
    }
}

/// A limit named by a status or a generic code is a usage limit when the
/// words say quota, credit or billing.
fn refine(c: Cause, messages: &[String]) -> Cause {
    let words = || {
        messages
            .iter()
            .filter_map(|m| words_cause(m))
            .map(|(c, _)| c)
    };
    match c {
        Cause::RateLimited if words().any(|w| w == Cause::UsageLimited) => Cause::UsageLimited,
        _ => c,
    }
}

/// An error code or type that names one cause. Generic ones
/// (`invalid_request_error`, `api_error`, `server_error`) name none.
pub(super) fn code_cause(code: &str) -> Option<Cause> {
    Some(match code {
        "rate_limit_exceeded" | "rate_limit_error" | "rate_limit" | "RESOURCE_EXHAUSTED" => {
            Cause::RateLimited
        }
        "insufficient_quota" | "billing_error" | "billing" | "credit_balance_too_low" => {
            Cause::UsageLimited
        }
        "overloaded_error" | "overloaded" | "UNAVAILABLE" => Cause::Overloaded,
        "context_length_exceeded"
        | "prompt_too_long"
        | "ContextOverflowError"
        | "context_overflow" => Cause::ContextWindow,
        "invalid_api_key"
        | "authentication_error"
        | "authentication_failed"
        | "permission_error"
        | "UNAUTHENTICATED"
        | "PERMISSION_DENIED"
        | "API_KEY_INVALID" => Cause::Auth,
        "model_not_found" | "not_found_error" | "NOT_FOUND" => Cause::ModelNotFound,
        _ => return None,
    })
}

/// The cause an HTTP status names on its own; 400 and 5xx other than
/// 503/529 name none (a 400 may be a context overflow, a bad key or a spent
/// credit: only the words tell).
pub(super) fn status_cause(status: u16) -> Option<Cause> {
    Some(match status {
        429 => Cause::RateLimited,
        401 | 403 => Cause::Auth,
        404 => Cause::ModelNotFound,
        503 | 529 => Cause::Overloaded,
        _ => return None,
    })
}

/// Words that name a cause, lower-case, most specific first: a quota
/// before a rate (OpenAI's quota is a 429 too), a context overflow before
/// a generic 400.
const WORDS: &[(&str, Cause)] = &[
    ("insufficient_quota", Cause::UsageLimited),
    ("exceeded your current quota", Cause::UsageLimited),
    ("quota exceeded", Cause::UsageLimited),
    ("credit balance is too low", Cause::UsageLimited),
    ("usage limit", Cause::UsageLimited),
    ("billing", Cause::UsageLimited),
    ("context window", Cause::ContextWindow),
    ("context length", Cause::ContextWindow),
    ("context_length_exceeded", Cause::ContextWindow),
    ("prompt is too long", Cause::ContextWindow),
    ("exceeds the maximum number of tokens", Cause::ContextWindow),
    ("rate limit", Cause::RateLimited),
    ("rate_limit", Cause::RateLimited),
    ("too many requests", Cause::RateLimited),
    ("overloaded", Cause::Overloaded),
    ("service unavailable", Cause::Overloaded),
    ("incorrect api key", Cause::Auth),
    ("invalid api key", Cause::Auth),
    ("invalid x-api-key", Cause::Auth),
    ("api key not valid", Cause::Auth),
    // Qwen Code with no key in its variable: "Missing API key for …".
    ("missing api key", Cause::Auth),
    ("authentication", Cause::Auth),
    ("unauthorized", Cause::Auth),
    (
        "does not exist or you do not have access",
        Cause::ModelNotFound,
    ),
    ("model_not_found", Cause::ModelNotFound),
    ("model not found", Cause::ModelNotFound),
    ("not_found_error", Cause::ModelNotFound),
    ("is not found for api version", Cause::ModelNotFound),
    ("connection refused", Cause::Network),
    ("econnrefused", Cause::Network),
    ("unable to connect", Cause::Network),
    ("cannot connect", Cause::Network),
    ("error sending request", Cause::Network),
    ("connection failed", Cause::Network),
    ("connection error", Cause::Network),
    ("stream disconnected", Cause::Network),
    ("socket hang up", Cause::Network),
    ("econnreset", Cause::Network),
    ("connection reset", Cause::Network),
    ("socket connection was closed", Cause::Network),
    ("network error", Cause::Network),
    ("fetch failed", Cause::Network),
    ("premature close", Cause::Network),
    ("terminated", Cause::Network),
];

/// The first cause whose words `text` holds, with the words; then a status
/// written in the text (`429 Rate limit…`, `last status: 429`).
pub(super) fn words_cause(text: &str) -> Option<(Cause, &'static str)> {
    let lower = text.to_ascii_lowercase();
    WORDS
        .iter()
        .find(|(w, _)| lower.contains(w))
        .map(|&(w, c)| (c, w))
        .or_else(|| written_status(&lower))
}

/// A status in text: `status 429`, `status: 401`, `status code 404`, or
/// the OpenAI and Anthropic Python SDKs' `Error code: 401 - {...}` (their
/// APIStatusError as printed, e.g. by Kimi CLI).
fn written_status(lower: &str) -> Option<(Cause, &'static str)> {
    if let Some(at) = lower.find("error code:") {
        let rest = lower[at + 11..].trim_start();
        if let Some(c) = rest
            .get(..3)
            .and_then(|s| s.parse().ok())
            .and_then(status_cause)
        {
            return Some((c, "a status written in the text"));
        }
    }
    let at = lower.find("status")?;
    let rest = lower[at + 6..].trim_start_matches([' ', ':', '=']);
    let rest = rest.strip_prefix("code").unwrap_or(rest).trim_start();
    let status: u16 = rest.get(..3)?.parse().ok()?;
    status_cause(status).map(|c| (c, "a status written in the text"))
}

/// At most 200 characters of `s`, for the evidence.
pub(super) fn clip(s: &str) -> String {
    const MAX: usize = 200;
    match s.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}
