//! A scripted fake model server on 127.0.0.1, for driving real harness CLIs
//! (and adapters' own tests) without a model provider.
//!
//! It speaks OpenAI Chat Completions (`/v1/chat/completions`), OpenAI
//! Responses (`/v1/responses`) and Anthropic Messages (`/v1/messages`), as
//! JSON or as SSE when the body says `"stream": true`, and lists one model at
//! `GET /v1/models`. Every answer follows [`script::decide`]: text when no
//! tools are offered, `done` once a tool result is in the conversation, and
//! otherwise exactly one tool call that writes a token to a target file.
//!
//! * [`http`] — reading requests and writing responses;
//! * [`script`] — the decision and the tool arguments;
//! * [`chat`], [`responses`], [`anthropic`] — one wire format each;
//! * [`wire`] — what the formats share;
//! * [`cli`] — `shforge fake-model-server`.
//!
//! ```no_run
//! use shforge::model_server::{Directives, RunningServer, ServerConfig};
//! let server = RunningServer::start(ServerConfig {
//!     defaults: Directives { token: Some("tok".into()), target: Some("/tmp/out".into()), prefer: None },
//!     ..ServerConfig::default()
//! })?;
//! println!("point the harness at {}/v1", server.base_url());
//! # Ok::<(), std::io::Error>(())
//! ```

pub mod anthropic;
pub mod chat;
pub mod cli;
pub mod http;
pub mod responses;
pub mod script;
pub mod wire;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

pub use script::{Decision, Directives, Prefer};

use http::Request;
use script::Conversation;
use wire::{Body, Ctx, Usage};

/// How to run a server.
#[derive(Debug, Clone, Default)]
pub struct ServerConfig {
    /// TCP port on 127.0.0.1; 0 picks a free one (see [`RunningServer::port`]).
    pub port: u16,
    /// Append one JSON line per request here.
    pub log: Option<PathBuf>,
    /// Token, target and preference used when the conversation names none.
    pub defaults: Directives,
}

/// A server answering on 127.0.0.1 from background threads. Dropping it
/// stops accepting, closes open connections and joins the accept thread.
pub struct RunningServer {
    port: u16,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

/// State the connection threads share.
struct Shared {
    defaults: Directives,
    log: Option<Mutex<File>>,
    /// Requests answered (after their log line was written).
    served: AtomicUsize,
    /// Request numbers, for unique ids.
    next: AtomicUsize,
    stop: AtomicBool,
    /// Open connections, so Drop can shut them down.
    conns: Mutex<HashMap<usize, TcpStream>>,
}

impl RunningServer {
    /// Bind 127.0.0.1:`cfg.port`, open the log, and start serving.
    ///
    /// Errors name what failed: `cannot listen on 127.0.0.1:PORT: …` or
    /// `cannot open log FILE: …`.
    pub fn start(cfg: ServerConfig) -> io::Result<RunningServer> {
        let listener = TcpListener::bind(("127.0.0.1", cfg.port)).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot listen on 127.0.0.1:{}: {e}", cfg.port),
            )
        })?;
        let port = listener.local_addr()?.port();
        let log = match &cfg.log {
            None => None,
            Some(path) => Some(Mutex::new(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| {
                        io::Error::new(e.kind(), format!("cannot open log {}: {e}", path.display()))
                    })?,
            )),
        };
        let shared = Arc::new(Shared {
            defaults: cfg.defaults,
            log,
            served: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("shforge-fake-accept".into())
                .spawn(move || accept_loop(&listener, &shared))?
        };
        Ok(RunningServer {
            port,
            shared,
            accept: Some(accept),
        })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// How many requests were answered so far (each one's log line is
    /// written before it counts, and it counts before its response is sent).
    pub fn requests(&self) -> usize {
        self.shared.served.load(Ordering::SeqCst)
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept().
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        // No connection is added after the accept thread ended.
        for conn in lock(&self.shared.conns).values() {
            let _ = conn.shutdown(Shutdown::Both);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    let mut ids = 0usize;
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(conn) = conn else {
            // Out of descriptors, say: wait instead of spinning.
            std::thread::sleep(std::time::Duration::from_millis(50));
            continue;
        };
        ids += 1;
        let id = ids;
        if let Ok(c) = conn.try_clone() {
            lock(&shared.conns).insert(id, c);
        }
        let mine = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name("shforge-fake-conn".into())
            .spawn(move || {
                serve_connection(&mine, conn);
                lock(&mine.conns).remove(&id);
            });
        if spawned.is_err() {
            lock(&shared.conns).remove(&id);
        }
    }
}

/// Answer requests on one connection until the client closes it, asks to,
/// or sends something that is not HTTP.
fn serve_connection(shared: &Shared, conn: TcpStream) {
    let _ = conn.set_nodelay(true);
    let Ok(read_half) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = conn;
    loop {
        match http::read_request(&mut reader, &mut writer) {
            Ok(None) => return,
            Ok(Some(req)) => {
                if respond(shared, &req, &mut writer).is_err() || !req.keep_alive {
                    return;
                }
            }
            Err(e) => {
                if e.kind() == io::ErrorKind::InvalidData {
                    let body = error_json(&format!("bad HTTP request: {e}"));
                    let _ = http::write_full(
                        &mut writer,
                        400,
                        "application/json",
                        body.to_string().as_bytes(),
                        false,
                        false,
                    );
                }
                return;
            }
        }
    }
}

/// The model APIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Chat,
    Responses,
    Anthropic,
}

impl Api {
    fn name(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Responses => "responses",
            Api::Anthropic => "anthropic",
        }
    }
}

enum Route {
    Model(Api),
    Models,
    NotFound,
}

fn route(method: &str, path: &str) -> Route {
    let path = path.strip_prefix("/v1").unwrap_or(path);
    match (method, path) {
        ("POST", "/chat/completions") => Route::Model(Api::Chat),
        ("POST", "/responses") => Route::Model(Api::Responses),
        ("POST", "/messages") => Route::Model(Api::Anthropic),
        ("GET" | "HEAD", "/models") => Route::Models,
        _ => Route::NotFound,
    }
}

/// An error body both OpenAI and Anthropic clients can read.
fn error_json(message: &str) -> Value {
    json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
}

fn respond(shared: &Shared, req: &Request, w: &mut TcpStream) -> io::Result<()> {
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
        "body": match &parsed {
            Some(v) => v.clone(),
            None if req.body.is_empty() => Value::Null,
            None => Value::String(String::from_utf8_lossy(&req.body).into_owned()),
        },
    });
    let (status, body) = match route(&req.method, &req.path) {
        Route::NotFound => (
            404,
            Body::Json(error_json(&format!(
                "no route for {} {}",
                req.method, req.path
            ))),
        ),
        Route::Models => (
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
        Route::Model(api) => {
            entry["api"] = json!(api.name());
            match parsed.as_ref().filter(|v| v.is_object()) {
                None => (400, Body::Json(error_json("the body is not a JSON object"))),
                Some(v) => {
                    let (body, conv, decision) = answer(shared, api, v, req.body.len());
                    entry["stream"] = json!(conv.stream);
                    entry["model"] = json!(conv.model);
                    entry["tools"] = json!(conv.tools.iter().map(|t| &t.name).collect::<Vec<_>>());
                    entry["decision"] = json!(decision.label());
                    match &decision {
                        Decision::Tool(call) => {
                            entry["tool"] = json!(call.name);
                            entry["arguments"] = Value::Object(call.arguments.clone());
                        }
                        Decision::Done { reason } => entry["reason"] = json!(reason),
                        Decision::Text => {}
                    }
                    (200, body)
                }
            }
        }
    };
    if let Some(log) = &shared.log {
        let mut line = entry.to_string();
        line.push('\n');
        let mut f = lock(log);
        // One write per line so concurrent requests never interleave.
        f.write_all(line.as_bytes())?;
        f.flush()?;
    }
    shared.served.fetch_add(1, Ordering::SeqCst);
    match body {
        Body::Json(v) => http::write_full(
            w,
            status,
            "application/json",
            v.to_string().as_bytes(),
            req.keep_alive,
            req.method == "HEAD",
        ),
        Body::Sse(events) => http::write_sse(w, events.iter().map(String::as_str), req.keep_alive),
    }
}

/// Decide and render one model request.
fn answer(
    shared: &Shared,
    api: Api,
    body: &Value,
    body_len: usize,
) -> (Body, Conversation, Decision) {
    let mut conv = match api {
        Api::Chat => chat::conversation(body),
        Api::Responses => responses::conversation(body),
        Api::Anthropic => anthropic::conversation(body),
    };
    conv.model = body["model"].as_str().unwrap_or("fake-model").to_owned();
    conv.stream = body["stream"] == json!(true);
    let decision = script::decide(&conv, &shared.defaults);
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
    let rendered = match api {
        Api::Chat => chat::reply(&conv, &decision, &ctx, body),
        Api::Responses => responses::reply(&conv, &decision, &ctx, body),
        Api::Anthropic => anthropic::reply(&conv, &decision, &ctx, body),
    };
    (rendered, conv, decision)
}
