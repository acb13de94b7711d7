//! Answering one request: its route, the log line, and the reply written
//! whole, streamed or cut.

use std::io::{self, Write as _};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::decide::{self, Conversation, Decision};
use super::http::{self, Request};
use super::wire::{Body, Ctx, Usage};
use super::{Shared, Wire, anthropic, chat, fail, gemini, lock, responses};

enum Route {
    Model(Wire),
    Gemini(gemini::Method),
    Models,
    GeminiModels,
    NotFound,
}

fn route(method: &str, path: &str) -> Route {
    if let Some(m) = gemini::method(path).filter(|_| method == "POST") {
        return Route::Gemini(m);
    }
    if matches!(method, "GET" | "HEAD") && matches!(path, "/v1beta/models" | "/v1alpha/models") {
        return Route::GeminiModels;
    }
    let path = path.strip_prefix("/v1").unwrap_or(path);
    match (method, path) {
        ("POST", "/chat/completions") => Route::Model(Wire::Chat),
        ("POST", "/responses") => Route::Model(Wire::Responses),
        ("POST", "/messages") => Route::Model(Wire::Anthropic),
        ("GET" | "HEAD", "/models") => Route::Models,
        _ => Route::NotFound,
    }
}

/// An error body both OpenAI and Anthropic clients can read.
pub(super) fn error_json(message: &str) -> Value {
    json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
}

/// An error in the shape of `wire` (Gemini's differs from the others).
fn wire_error(wire: Wire, status: u16, message: &str) -> Value {
    match wire {
        Wire::Gemini => json!({"error": {
            "code": status, "message": message, "status": fail::google_status(status),
        }}),
        _ => error_json(message),
    }
}

/// What to send back.
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Body,
    /// Send only this many SSE events (or half the JSON body), then close:
    /// a scripted stream cut.
    cut: Option<usize>,
}

impl Reply {
    fn new(status: u16, body: Body) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body,
            cut: None,
        }
    }
}

/// Answer one request. `Ok(true)` when the connection may serve another.
pub(super) fn respond(shared: &Shared, req: &Request, w: &mut TcpStream) -> io::Result<bool> {
    if json_values(&req.body) > MAX_JSON_VALUES {
        let message =
            format!("the body holds more than {MAX_JSON_VALUES} JSON values; it is not parsed");
        let body = error_json(&message).to_string();
        http::write_full(
            w,
            413,
            "application/json",
            &[],
            body.as_bytes(),
            false,
            false,
        )?;
        return Ok(false);
    }
    let parsed: Option<Value> = serde_json::from_slice(&req.body).ok();
    let mut entry = json!({
        "method": req.method,
        "path": req.path,
        "api": "other",
        "stream": false,
        "model": null,
        "tools": [],
        "decision": null,
        "tool": null,
        "arguments": null,
        "reason": null,
    });
    let mut reply = route_reply(shared, req, parsed.as_ref(), &mut entry);
    write_log(shared, req, &entry, parsed.as_ref(), w)?;
    shared.served.fetch_add(1, Ordering::SeqCst);
    let keep_alive = req.keep_alive && reply.cut.is_none();
    if keep_alive {
        // Clients that honour it close an idle connection before the
        // server does, so none sends a request into a closing socket.
        reply.headers.push((
            "Keep-Alive",
            format!("timeout={}", shared.timeout.as_secs().max(1)),
        ));
    }
    send(w, reply, keep_alive, req.method == "HEAD")?;
    Ok(keep_alive)
}

/// Most JSON values a body may hold before it is parsed. A parsed value
/// takes 32 bytes and more, so a 64 MiB body of `[0,0,0,…]` would parse
/// into over a gigabyte (measured: 1.2 GB peak for 60 MiB); two million
/// values bound a parse to about a hundred MiB, and a real agent's request
/// (a megabyte or so of conversation) holds tens of thousands.
const MAX_JSON_VALUES: usize = 2 << 20;

/// An upper bound on the values in a JSON text: its separators and
/// openings outside strings, plus one.
pub(super) fn json_values(body: &[u8]) -> usize {
    let (mut n, mut in_string, mut escaped) = (1usize, false, false);
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b',' | b':' | b'[' | b'{' => n += 1,
                _ => {}
            }
        }
    }
    n
}

/// One log line: `entry` with the request's `body` added — the parsed
/// JSON, else the text, else null — serialized from the parse in place
/// rather than copied into `entry` (a hostile 64 MiB body can parse into
/// a gigabyte of values; once is enough).
fn log_line(entry: &Value, parsed: Option<&Value>, raw: &[u8]) -> Vec<u8> {
    let mut line = entry.to_string().into_bytes();
    line.pop(); // the closing brace of a non-empty object
    line.extend_from_slice(b",\"body\":");
    let body = match parsed {
        Some(v) => serde_json::to_vec(v),
        None if raw.is_empty() => Ok(b"null".to_vec()),
        None => serde_json::to_vec(&String::from_utf8_lossy(raw)),
    };
    line.extend(body.unwrap_or_else(|_| b"null".to_vec()));
    line.extend_from_slice(b"}\n");
    line
}

/// The answer to a model request of `wire` (for Gemini, the path's method
/// and whether `alt=sse` was asked): a scripted failure or the script's
/// decision, with the log entry filled in.
fn model_reply(
    shared: &Shared,
    req: &Request,
    parsed: Option<&Value>,
    wire: Wire,
    gemini_path: Option<(&gemini::Method, bool)>,
    entry: &mut Value,
) -> Reply {
    entry["api"] = json!(wire.name());
    let Some(v) = parsed.filter(|v| v.is_object()) else {
        return Reply::new(
            400,
            Body::Json(wire_error(wire, 400, "the body is not a JSON object")),
        );
    };
    let conv = conversation(wire, v, gemini_path.map(|(m, _)| m));
    entry["stream"] = json!(conv.stream);
    entry["model"] = json!(conv.model);
    entry["tools"] = json!(conv.tools.iter().map(|t| &t.name).collect::<Vec<_>>());
    let failure = fail::Failure::from_texts(conv.user_texts.iter().map(String::as_str))
        .and_then(|f| Some((f, shared.failures.fails(&conv.user_texts, &f)?)));
    if let Some((f, n)) = failure
        && let Some(err) = f.answer(wire, &conv.model, n)
    {
        entry["decision"] = json!("fail");
        entry["reason"] = json!(err.message);
        return Reply {
            status: err.status,
            headers: err.headers,
            body: Body::Json(err.body),
            cut: None,
        };
    }
    let sse = gemini_path.is_some_and(|(_, sse)| sse);
    let (body, decision) = answer(shared, wire, &conv, v, req.body.len(), sse);
    entry["decision"] = json!(decision.label());
    match &decision {
        Decision::Tool(call) => {
            entry["tool"] = json!(call.name);
            entry["arguments"] = Value::Object(call.arguments.clone());
        }
        Decision::Done { reason } => entry["reason"] = json!(reason),
        Decision::Text => {}
    }
    let mut reply = Reply::new(200, body);
    // A scripted cut: the decision is made (and logged) but only part of it
    // is sent.
    if let Some((f, _)) = failure {
        let events = match &reply.body {
            Body::Sse(events) => events.len(),
            Body::Json(_) => 2,
        };
        if let Some(n) = f.cut_after(events) {
            entry["decision"] = json!("fail");
            entry["reason"] = json!(match &reply.body {
                Body::Sse(_) => format!("shforge-fail: stream cut after {n} of {events} events"),
                Body::Json(_) => "shforge-fail: body cut half way".to_owned(),
            });
            reply.cut = Some(n);
        }
    }
    reply
}

/// What a model request asks, whatever its wire format. Gemini names the
/// model and the streaming in the path.
fn conversation(wire: Wire, body: &Value, gemini_path: Option<&gemini::Method>) -> Conversation {
    let mut conv = match wire {
        Wire::Chat => chat::conversation(body),
        Wire::Responses => responses::conversation(body),
        Wire::Anthropic => anthropic::conversation(body),
        Wire::Gemini => gemini::conversation(body),
    };
    match gemini_path {
        Some(m) => {
            conv.model = m.model.clone();
            conv.stream = m.stream;
        }
        None => {
            conv.model = body["model"].as_str().unwrap_or("fake-model").to_owned();
            conv.stream = body["stream"] == json!(true);
        }
    }
    conv
}

/// Decide and render one model request.
fn answer(
    shared: &Shared,
    wire: Wire,
    conv: &Conversation,
    body: &Value,
    body_len: usize,
    sse: bool,
) -> (Body, Decision) {
    let decision = decide::decide(conv, &shared.defaults);
    let out_len = match &decision {
        Decision::Tool(call) => Value::Object(call.arguments.clone()).to_string().len() + 16,
        other => other.text().unwrap_or_default().len(),
    };
    let ctx = Ctx {
        n: shared.next.fetch_add(1, Ordering::SeqCst) + 1,
        created: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        usage: Usage {
            input: (body_len as u64 / 4).max(1),
            output: (out_len as u64 / 4).max(1),
        },
    };
    let rendered = match wire {
        Wire::Chat => chat::reply(conv, &decision, &ctx, body),
        Wire::Responses => responses::reply(conv, &decision, &ctx, body),
        Wire::Anthropic => anthropic::reply(conv, &decision, &ctx, body),
        Wire::Gemini => gemini::reply(conv, &decision, &ctx, sse),
    };
    (rendered, decision)
}

/// The reply `req` gets by its route, with the log entry filled in.
fn route_reply(shared: &Shared, req: &Request, parsed: Option<&Value>, entry: &mut Value) -> Reply {
    match route(&req.method, &req.path) {
        Route::NotFound => Reply::new(
            404,
            Body::Json(error_json(&format!(
                "no route for {} {}",
                req.method, req.path
            ))),
        ),
        Route::Models => Reply::new(
            200,
            Body::Json(json!({
                "object": "list",
                "data": [{"id": "fake-model", "object": "model", "type": "model", "created": 0,
                          "created_at": "1970-01-01T00:00:00Z", "display_name": "Fake Model",
                          "owned_by": "shforge"}],
                "has_more": false,
                "first_id": "fake-model",
                "last_id": "fake-model",
            })),
        ),
        Route::GeminiModels => Reply::new(
            200,
            Body::Json(json!({"models": [{
                "name": "models/fake-model", "displayName": "Fake Model",
                "inputTokenLimit": 1_048_576, "outputTokenLimit": 65_536,
                "supportedGenerationMethods": ["generateContent", "countTokens"],
            }]})),
        ),
        Route::Gemini(m) if m.count => {
            entry["api"] = json!(Wire::Gemini.name());
            entry["model"] = json!(m.model);
            entry["decision"] = json!("count");
            Reply::new(200, Body::Json(gemini::count_tokens(req.body.len())))
        }
        Route::Gemini(m) => {
            let sse = req.query_param("alt") == Some("sse");
            model_reply(shared, req, parsed, Wire::Gemini, Some((&m, sse)), entry)
        }
        Route::Model(wire) => model_reply(shared, req, parsed, wire, None, entry),
    }
}

/// Log the request (`entry` and its body), one write per line. A log that
/// cannot be written ends the server: the client gets a 500 first.
fn write_log(
    shared: &Shared,
    req: &Request,
    entry: &Value,
    parsed: Option<&Value>,
    w: &mut TcpStream,
) -> io::Result<()> {
    let Some(log) = &shared.log else {
        return Ok(());
    };
    let line = log_line(entry, parsed, &req.body);
    let mut f = lock(&log.file);
    // One write per line so concurrent requests never interleave.
    if let Err(e) = f.write_all(&line).and_then(|()| f.flush()) {
        drop(f);
        // A request that cannot be logged is not answered as if it had
        // been: the client gets a 500 and the server stops (the CLI
        // exits 1), so a test never passes on a log that lies.
        let message = format!("cannot write log {}: {e}", log.path.display());
        // The answer first: the CLI exits as soon as the error is known.
        let body = error_json(&message).to_string();
        let _ = http::write_full(
            w,
            500,
            "application/json",
            &[],
            body.as_bytes(),
            false,
            false,
        );
        shared.fail_for_good(message.clone());
        return Err(io::Error::other(message));
    }
    Ok(())
}

/// Write `reply` (cut short if scripted so); `head` sends no body.
fn send(w: &mut TcpStream, reply: Reply, keep_alive: bool, head: bool) -> io::Result<()> {
    match (reply.body, reply.cut) {
        (Body::Json(v), None) => http::write_full(
            w,
            reply.status,
            "application/json",
            &reply.headers,
            v.to_string().as_bytes(),
            keep_alive,
            head,
        )?,
        (Body::Sse(events), None) => http::write_sse(
            w,
            &reply.headers,
            events.iter().map(String::as_str),
            keep_alive,
        )?,
        (Body::Json(v), Some(_)) => {
            http::write_cut_json(w, reply.status, &reply.headers, v.to_string().as_bytes())?;
        }
        (Body::Sse(events), Some(n)) => {
            http::write_cut_sse(w, &reply.headers, events.iter().take(n).map(String::as_str))?;
        }
    }
    Ok(())
}
