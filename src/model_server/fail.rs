//! Scripted failures, for measuring how a harness meets a rate limit, a bad
//! key, an unknown model, an overflowing context, an outage or a broken
//! stream: the word `shforge-fail=KIND[:times=N][:retry-after=SECS][:after=K]`
//! in a conversation's user text makes the server answer the first `N`
//! (default 1) model requests of that conversation with that failure
//! instead of a reply.
//!
//! Each failure is answered in the exact error shape of the API asked
//! (see [`Failure::answer`]): OpenAI's `{"error":{"message","type","param",
//! "code"}}`, Anthropic's `{"type":"error","error":{"type","message"},
//! "request_id"}`, Gemini's `{"error":{"code","message","status",
//! "details"}}`, with the status, type, code and wording the real services
//! use for that case, so a client's own classification of errors runs as
//! it would against the real thing.
//!
//! A conversation is known by its user texts: a client retrying a request, or
//! sending the next turn after a tool result, repeats them, so the count runs
//! across retries and turns. A malformed word is ignored (no failure).

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use serde_json::{Value, json};

use super::Wire;

/// The directive word's prefix.
pub const WORD: &str = "shforge-fail=";

/// What goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// An HTTP error status, 400..=599, in the shape the API gives it
    /// (429 a rate limit, 401 a bad key, 404 an unknown model, 529/503
    /// overloaded, ...).
    Status(u16),
    /// `context`: 400, the prompt is longer than the model's context window.
    Context,
    /// `model`: 404, the model does not exist.
    Model,
    /// `overloaded`: the API's own overload answer (Anthropic 529, OpenAI
    /// and Gemini 503).
    Overloaded,
    /// `quota`: the account's usage quota or credit is spent (OpenAI 429
    /// `insufficient_quota`, Gemini 429 quota, Anthropic 400 credit balance).
    Quota,
    /// `auth`: the API's answer to an invalid key (Gemini answers 400
    /// `API_KEY_INVALID`, the others 401).
    Auth,
    /// `cut`: a 200 whose stream (or body) stops part way: the connection
    /// is closed after some events, without the stream's end.
    Cut,
}

/// One scripted failure: what, how many times, and its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// What goes wrong.
    pub kind: Fault,
    /// How many of the conversation's first requests fail (at least 1).
    pub times: u32,
    /// Seconds for a `Retry-After` header (and Gemini's `RetryInfo`); none
    /// without it.
    pub retry_after: Option<u32>,
    /// For `cut`: how many SSE events are sent before the close (default
    /// half of them; always fewer than all).
    pub after: Option<u32>,
}

impl std::str::FromStr for Failure {
    type Err = String;

    /// `KIND[:times=N][:retry-after=SECS][:after=K]`, the options in any
    /// order; KIND is a status 400..=599 or `context`, `model`,
    /// `overloaded`, `quota`, `auth`, `cut`.
    fn from_str(s: &str) -> Result<Failure, String> {
        let mut parts = s.split(':');
        let head = parts.next().unwrap_or("");
        let kind = match head {
            "context" => Fault::Context,
            "model" => Fault::Model,
            "overloaded" => Fault::Overloaded,
            "quota" => Fault::Quota,
            "auth" => Fault::Auth,
            "cut" => Fault::Cut,
            _ => head
                .parse()
                .ok()
                .filter(|s| (400..=599).contains(s))
                .map(Fault::Status)
                .ok_or_else(|| {
                    format!(
                        "expected an HTTP error status 400..=599 or context, model, \
                         overloaded, quota, auth, cut in {s:?}"
                    )
                })?,
        };
        let mut failure = Failure {
            kind,
            times: 1,
            retry_after: None,
            after: None,
        };
        for part in parts {
            let bad = || format!("bad option {part:?} in {s:?}");
            match part.split_once('=') {
                Some(("times", n)) => {
                    failure.times = n.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?;
                }
                Some(("retry-after", n)) => {
                    failure.retry_after = Some(n.parse().map_err(|_| bad())?);
                }
                Some(("after", n)) if kind == Fault::Cut => {
                    failure.after = Some(n.parse().map_err(|_| bad())?);
                }
                _ => return Err(bad()),
            }
        }
        Ok(failure)
    }
}

/// An error answer: status, extra headers and body.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorAnswer {
    /// The HTTP status.
    pub status: u16,
    /// Headers to add (`Retry-After`, Anthropic's `request-id`).
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub body: Value,
    /// The message inside the body (for the log).
    pub message: String,
}

/// What one case is called by each API: OpenAI's `type` and `code`,
/// Anthropic's `type`, and the wording.
struct Case {
    status: u16,
    openai_type: &'static str,
    openai_code: Option<&'static str>,
    openai_param: Option<&'static str>,
    anthropic_type: &'static str,
    message: String,
}

impl Failure {
    /// The last well-formed `shforge-fail=` word in `texts`, if any.
    pub fn from_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> Option<Failure> {
        texts
            .into_iter()
            .flat_map(str::split_whitespace)
            .filter_map(|w| w.trim_matches('"').strip_prefix(WORD)?.parse().ok())
            .last()
    }

    /// The error answer to request number `attempt` of `self.times`, for
    /// `wire`, where the client asked for `model`. `None` for [`Fault::Cut`],
    /// which is a 200 (see [`Failure::cut_after`]).
    pub fn answer(&self, wire: Wire, model: &str, attempt: u32) -> Option<ErrorAnswer> {
        let case = self.case(wire, model)?;
        let tag = format!("(shforge-fail: scripted, {attempt} of {})", self.times);
        let message = format!("{} {tag}", case.message);
        let mut headers = Vec::new();
        if let Some(secs) = self.retry_after {
            headers.push(("Retry-After", secs.to_string()));
        }
        let body = match wire {
            Wire::Chat | Wire::Responses => json!({"error": {
                "message": message,
                "type": case.openai_type,
                "param": case.openai_param,
                "code": case.openai_code,
            }}),
            Wire::Anthropic => {
                let id = format!("req_shforge_{attempt}");
                headers.push(("request-id", id.clone()));
                json!({
                    "type": "error",
                    "error": {"type": case.anthropic_type, "message": message},
                    "request_id": id,
                })
            }
            Wire::Gemini => {
                let mut error = json!({
                    "code": case.status,
                    "message": message,
                    "status": google_status(case.status),
                });
                let details = self.google_details(&case);
                if !details.is_empty() {
                    error["details"] = Value::Array(details);
                }
                json!({"error": error})
            }
        };
        Some(ErrorAnswer {
            status: case.status,
            headers,
            body,
            message,
        })
    }

    /// For [`Fault::Cut`]: how many of `events` SSE events to send before
    /// closing (`after`, else half; always fewer than `events`).
    pub fn cut_after(&self, events: usize) -> Option<usize> {
        (self.kind == Fault::Cut).then(|| {
            let wanted = self.after.map_or(events / 2, |a| a as usize);
            wanted.min(events.saturating_sub(1))
        })
    }

    /// The HTTP status of this failure on `wire` (none for a cut stream).
    fn status(&self, wire: Wire) -> Option<u16> {
        Some(match self.kind {
            Fault::Cut => return None,
            Fault::Status(s) => s,
            Fault::Context => 400,
            Fault::Model => 404,
            Fault::Overloaded if wire == Wire::Anthropic => 529,
            Fault::Overloaded => 503,
            Fault::Quota if wire == Wire::Anthropic => 400,
            Fault::Quota => 429,
            Fault::Auth if wire == Wire::Gemini => 400,
            Fault::Auth => 401,
        })
    }

    fn case(&self, wire: Wire, model: &str) -> Option<Case> {
        let status = self.status(wire)?;
        let case = |openai_type, openai_code, anthropic_type, message: String| Case {
            status,
            openai_type,
            openai_code,
            openai_param: None,
            anthropic_type,
            message,
        };
        let gemini = wire == Wire::Gemini;
        Some(match (self.kind, status) {
            (Fault::Context, _) => {
                let (param, message) = context_message(wire);
                Case {
                    openai_param: param,
                    ..case(
                        "invalid_request_error",
                        Some("context_length_exceeded"),
                        "invalid_request_error",
                        message,
                    )
                }
            }
            (Fault::Quota, _) => case(
                "insufficient_quota",
                Some("insufficient_quota"),
                "invalid_request_error",
                quota_message(wire),
            ),
            (Fault::Auth, _) if gemini => case(
                "invalid_request_error",
                None,
                "authentication_error",
                "API key not valid. Please pass a valid API key.".to_owned(),
            ),
            (_, 401) => case(
                "invalid_request_error",
                Some("invalid_api_key"),
                "authentication_error",
                key_message(wire),
            ),
            (_, 403) => case(
                "invalid_request_error",
                Some("unsupported_country_region_territory"),
                "permission_error",
                if gemini {
                    "The caller does not have permission".to_owned()
                } else {
                    "Your API key does not have permission to use the specified resource."
                        .to_owned()
                },
            ),
            (_, 404) => case(
                "invalid_request_error",
                Some("model_not_found"),
                "not_found_error",
                model_message(wire, model),
            ),
            (_, 413) => case(
                "invalid_request_error",
                None,
                "request_too_large",
                "Request exceeds the maximum allowed number of bytes.".to_owned(),
            ),
            (_, 429) => case(
                "requests",
                Some("rate_limit_exceeded"),
                "rate_limit_error",
                rate_message(wire, model),
            ),
            (_, 500) => case("server_error", None, "api_error", server_message(wire)),
            (_, 503 | 529) => case(
                "server_error",
                None,
                "overloaded_error",
                overloaded_message(wire),
            ),
            (_, s) if s >= 500 => case(
                "server_error",
                None,
                "api_error",
                format!("Internal server error ({s})."),
            ),
            (_, _) => case(
                "invalid_request_error",
                None,
                "invalid_request_error",
                "Invalid request.".to_owned(),
            ),
        })
    }

    /// Gemini's `details`: an `ErrorInfo` for a bad key, quota and retry
    /// information for 429.
    fn google_details(&self, case: &Case) -> Vec<Value> {
        let mut details = Vec::new();
        if self.kind == Fault::Auth {
            details.push(json!({
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }));
        }
        if case.status == 429 {
            let quota = if self.kind == Fault::Quota {
                "generativelanguage.googleapis.com/generate_content_free_tier_requests"
            } else {
                "generativelanguage.googleapis.com/generate_requests_per_model_per_minute"
            };
            details.push(json!({
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"quotaMetric": quota, "quotaId": "GenerateRequestsPerMinutePerProjectPerModel"}],
            }));
            if let Some(secs) = self.retry_after {
                details.push(json!({
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": format!("{secs}s"),
                }));
            }
        }
        details
    }
}

/// The context-length message on `wire`, and the parameter OpenAI names.
fn context_message(wire: Wire) -> (Option<&'static str>, String) {
    match wire {
        Wire::Chat => (
            Some("messages"),
            "This model's maximum context length is 128000 tokens. However, your \
             messages resulted in 131072 tokens. Please reduce the length of the \
             messages."
                .to_owned(),
        ),
        Wire::Responses => (
            Some("input"),
            "Your input exceeds the context window of this model. Please adjust \
             your input and try again."
                .to_owned(),
        ),
        Wire::Anthropic => (
            None,
            "prompt is too long: 210000 tokens > 200000 maximum".to_owned(),
        ),
        Wire::Gemini => (
            None,
            "The input token count (1200000) exceeds the maximum number of tokens \
             allowed (1048576)."
                .to_owned(),
        ),
    }
}

/// The quota message on `wire`.
fn quota_message(wire: Wire) -> String {
    match wire {
        Wire::Anthropic => "Your credit balance is too low to access the Anthropic \
                            API. Please go to Plans & Billing to upgrade or purchase \
                            credits."
            .to_owned(),
        Wire::Gemini => "You exceeded your current quota, please check your plan \
                         and billing details."
            .to_owned(),
        _ => "You exceeded your current quota, please check your plan and billing \
              details."
            .to_owned(),
    }
}

/// The bad-key message on `wire`.
fn key_message(wire: Wire) -> String {
    match wire {
        Wire::Anthropic => "invalid x-api-key".to_owned(),
        Wire::Gemini => "Request had invalid authentication credentials. Expected \
                         OAuth 2 access token, login cookie or other valid \
                         authentication credential."
            .to_owned(),
        _ => "Incorrect API key provided: sk-shfor*****. You can find your API key \
              at https://platform.openai.com/account/api-keys."
            .to_owned(),
    }
}

/// The unknown-model message on `wire`.
fn model_message(wire: Wire, model: &str) -> String {
    match wire {
        Wire::Anthropic => format!("model: {model}"),
        Wire::Gemini => format!(
            "models/{model} is not found for API version v1beta, or is not \
             supported for generateContent. Call ListModels to see the list of \
             available models and their supported methods."
        ),
        _ => format!("The model `{model}` does not exist or you do not have access to it."),
    }
}

/// The rate-limit message on `wire`.
fn rate_message(wire: Wire, model: &str) -> String {
    match wire {
        Wire::Anthropic => "This request would exceed the rate limit for your \
                            organization of 50 requests per minute. Please try again \
                            later."
            .to_owned(),
        Wire::Gemini => "Resource has been exhausted (e.g. check quota).".to_owned(),
        _ => format!(
            "Rate limit reached for {model} on requests per min (RPM): Limit 3, \
             Used 3, Requested 1. Please try again in 20s."
        ),
    }
}

/// The internal-error message on `wire`.
fn server_message(wire: Wire) -> String {
    match wire {
        Wire::Gemini => "An internal error has occurred. Please retry or report in \
                         https://developers.generativeai.google/guide/troubleshooting"
            .to_owned(),
        Wire::Anthropic => "Internal server error".to_owned(),
        _ => "The server had an error while processing your request. Sorry about \
              that!"
            .to_owned(),
    }
}

/// The overloaded message on `wire`.
fn overloaded_message(wire: Wire) -> String {
    match wire {
        Wire::Anthropic => "Overloaded".to_owned(),
        Wire::Gemini => "The model is overloaded. Please try again later.".to_owned(),
        _ => "The server is overloaded or not ready yet.".to_owned(),
    }
}

/// The `google.rpc.Code` name Google APIs put in `error.status` for an
/// HTTP status.
pub fn google_status(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        412 => "FAILED_PRECONDITION",
        413 => "INVALID_ARGUMENT",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        501 => "NOT_IMPLEMENTED",
        503 | 529 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        s if s >= 500 => "INTERNAL",
        _ => "INVALID_ARGUMENT",
    }
}

/// Requests seen per conversation (a hash of its user texts).
#[derive(Debug, Default)]
pub struct Counter {
    seen: Mutex<HashMap<u64, u32>>,
}

impl Counter {
    /// Count one request of the conversation with `user_texts`; its number
    /// (1, 2, ...) when it is to fail under `failure`, `None` otherwise.
    pub fn fails(&self, user_texts: &[String], failure: &Failure) -> Option<u32> {
        let mut h = DefaultHasher::new();
        user_texts.hash(&mut h);
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let n = seen.entry(h.finish()).or_insert(0);
        *n = n.saturating_add(1);
        (*n <= failure.times).then_some(*n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(s: &str) -> Result<Failure, String> {
        s.parse()
    }

    #[test]
    fn parses_words_and_rejects_bad_ones() {
        assert_eq!(
            f("429"),
            Ok(Failure {
                kind: Fault::Status(429),
                times: 1,
                retry_after: None,
                after: None,
            })
        );
        assert_eq!(
            f("503:retry-after=2:times=3"),
            Ok(Failure {
                kind: Fault::Status(503),
                times: 3,
                retry_after: Some(2),
                after: None,
            })
        );
        assert_eq!(f("cut:after=2").unwrap().after, Some(2));
        assert_eq!(f("context").unwrap().kind, Fault::Context);
        for bad in [
            "",
            "200",
            "600",
            "x",
            "429:",
            "429:times=0",
            "429:times=-1",
            "429:wait=1",
            "429:retry-after=",
            "429:retry-after=1.5",
            "429:after=1",
            "cut:after=x",
            "Context",
        ] {
            assert!(f(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Failure::from_texts(["a shforge-fail=429:times=2 b", "shforge-fail=oops"]),
            Some(f("429:times=2").unwrap()),
            "the last well-formed word counts"
        );
        assert_eq!(
            Failure::from_texts(["\"shforge-fail=500\""]),
            Some(f("500").unwrap())
        );
        assert_eq!(Failure::from_texts(["nothing here"]), None);
    }

    #[test]
    fn each_api_gets_its_own_shape() {
        let rate = f("429:retry-after=3").unwrap();
        let a = rate.answer(Wire::Anthropic, "m", 1).unwrap();
        assert_eq!(a.status, 429);
        assert_eq!(a.body["type"], "error");
        assert_eq!(a.body["error"]["type"], "rate_limit_error");
        assert!(a.headers.contains(&("Retry-After", "3".into())));
        let o = rate.answer(Wire::Chat, "m", 1).unwrap();
        assert_eq!(o.body["error"]["code"], "rate_limit_exceeded");
        assert!(o.body.get("type").is_none());
        let g = rate.answer(Wire::Gemini, "m", 1).unwrap();
        assert_eq!(g.body["error"]["code"], 429);
        assert_eq!(g.body["error"]["status"], "RESOURCE_EXHAUSTED");
        assert_eq!(g.body["error"]["details"][1]["retryDelay"], "3s");

        let ctx = f("context").unwrap();
        let a = ctx.answer(Wire::Anthropic, "m", 1).unwrap();
        assert!(a.message.starts_with("prompt is too long"));
        let c = ctx.answer(Wire::Chat, "m", 1).unwrap();
        assert_eq!(c.body["error"]["code"], "context_length_exceeded");
        assert_eq!(c.body["error"]["param"], "messages");
        let r = ctx.answer(Wire::Responses, "m", 1).unwrap();
        assert_eq!(r.body["error"]["param"], "input");

        let over = f("overloaded").unwrap();
        assert_eq!(over.answer(Wire::Anthropic, "m", 1).unwrap().status, 529);
        assert_eq!(
            over.answer(Wire::Gemini, "m", 1).unwrap().body["error"]["status"],
            "UNAVAILABLE"
        );
        assert_eq!(
            f("auth")
                .unwrap()
                .answer(Wire::Gemini, "m", 1)
                .unwrap()
                .status,
            400
        );
        let nf = f("404")
            .unwrap()
            .answer(Wire::Anthropic, "claude-x", 1)
            .unwrap();
        assert_eq!(nf.body["error"]["type"], "not_found_error");
        assert!(nf.message.starts_with("model: claude-x"));
        assert_eq!(f("cut").unwrap().answer(Wire::Chat, "m", 1), None);
    }

    #[test]
    fn cut_points() {
        let cut = f("cut").unwrap();
        assert_eq!(cut.cut_after(6), Some(3));
        assert_eq!(cut.cut_after(1), Some(0));
        assert_eq!(f("cut:after=9").unwrap().cut_after(4), Some(3));
        assert_eq!(f("429").unwrap().cut_after(4), None);
    }

    #[test]
    fn counts_per_conversation() {
        let c = Counter::default();
        let two = f("429:times=2").unwrap();
        let a = vec!["a".to_owned()];
        let b = vec!["b".to_owned()];
        assert_eq!(c.fails(&a, &two), Some(1));
        assert_eq!(c.fails(&b, &two), Some(1));
        assert_eq!(c.fails(&a, &two), Some(2));
        assert_eq!(c.fails(&a, &two), None);
        assert_eq!(c.fails(&b, &two), Some(2));
    }
}
