//! A scripted fake model server on 127.0.0.1, for driving real harness CLIs
//! (and adapters' own tests) without a model provider.
//!
//! It speaks OpenAI Chat Completions (`/v1/chat/completions`), OpenAI
//! Responses (`/v1/responses`) and Anthropic Messages (`/v1/messages`), as
//! JSON or as SSE when the body says `"stream": true`, the Gemini API
//! (`/v1beta/models/M:generateContent`, `:streamGenerateContent?alt=sse`),
//! and lists one model at `GET /v1/models` (and `GET /v1beta/models`). Every answer follows [`decide::decide`]: text when no
//! tools are offered, `done` once a tool result is in the conversation, and
//! otherwise exactly one tool call that writes a token to a target file.
//!
//! * [`http`] — reading requests and writing responses;
//! * [`decide`] — the decision and the tool arguments;
//! * [`chat`], [`responses`], [`anthropic`], [`gemini`] — one wire format each;
//! * [`wire`] — what the formats share;
//! * [`fail`] — scripted error answers in each API's own shape
//!   (`shforge-fail=429:retry-after=1`, `context`, `cut`, ...);
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

mod anthropic;
mod chat;
pub mod cli;
pub mod decide;
mod fail;
mod gemini;
mod http;
mod responses;
mod wire;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

pub use decide::{Decision, Directives, Prefer};

use decide::Conversation;
use http::Request;
use wire::{Body, Ctx, Usage};

/// How long one request may take to arrive, and a kept-alive connection may
/// sit idle, before the server closes it (see [`ServerConfig::timeout`]).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// How many connections are served at once (see [`ServerConfig::max_connections`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;

/// How to run a server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// TCP port on 127.0.0.1; 0 picks a free one (see [`RunningServer::port`]).
    pub port: u16,
    /// Append one JSON line per request here.
    pub log: Option<PathBuf>,
    /// Token, target and preference used when the conversation names none.
    pub defaults: Directives,
    /// Each request must arrive whole within this time from the end of the
    /// previous one (or from the connection's start), and each write may
    /// block this long; past it the connection is closed (a request begun
    /// gets a 408 first). Default [`DEFAULT_TIMEOUT`].
    pub timeout: Duration,
    /// Connections served at once; further ones wait in the listen queue
    /// until one ends. Default [`DEFAULT_MAX_CONNECTIONS`].
    pub max_connections: usize,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            port: 0,
            log: None,
            defaults: Directives::default(),
            timeout: DEFAULT_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
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
    port: u16,
    defaults: Directives,
    timeout: Duration,
    max_connections: usize,
    log: Option<Log>,
    /// Requests answered (after their log line was written).
    served: AtomicUsize,
    /// Request numbers, for unique ids.
    next: AtomicUsize,
    /// Requests seen per conversation, for `shforge-fail=`.
    failures: fail::Counter,
    stop: AtomicBool,
    /// Open connections, so Drop can shut them down; its length is the
    /// number being served, which `slots` waits on.
    conns: Mutex<HashMap<usize, TcpStream>>,
    slots: Condvar,
    /// The error that stopped the server (its log could not be written).
    fatal: Mutex<Option<String>>,
    fatal_set: Condvar,
}

/// The request log: the file and the name to report it by.
struct Log {
    file: Mutex<File>,
    path: PathBuf,
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
            Some(path) => Some(Log {
                file: Mutex::new(
                    OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                        .map_err(|e| {
                            io::Error::new(
                                e.kind(),
                                format!("cannot open log {}: {e}", path.display()),
                            )
                        })?,
                ),
                path: path.clone(),
            }),
        };
        let shared = Arc::new(Shared::new(port, cfg, log));
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

    /// Connections being served right now.
    pub fn connections(&self) -> usize {
        lock(&self.shared.conns).len()
    }

    /// The error that stopped the server, if one did: its log could not be
    /// written (`cannot write log FILE: …`). The server then accepts nothing
    /// more.
    pub fn error(&self) -> Option<String> {
        lock(&self.shared.fatal).clone()
    }

    /// Block until an error stops the server, and return it.
    pub fn wait(&self) -> io::Error {
        let mut fatal = lock(&self.shared.fatal);
        loop {
            if let Some(e) = fatal.as_ref() {
                return io::Error::other(e.clone());
            }
            fatal = self
                .shared
                .fatal_set
                .wait(fatal)
                .unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.shared.stop_accepting();
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        // No connection is added after the accept thread ended.
        for conn in lock(&self.shared.conns).values() {
            let _ = conn.shutdown(Shutdown::Both);
        }
    }
}

impl Shared {
    fn new(port: u16, cfg: ServerConfig, log: Option<Log>) -> Shared {
        Shared {
            port,
            defaults: cfg.defaults,
            timeout: cfg.timeout.max(Duration::from_millis(1)),
            max_connections: cfg.max_connections.max(1),
            log,
            served: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            failures: fail::Counter::default(),
            stop: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
            slots: Condvar::new(),
            fatal: Mutex::new(None),
            fatal_set: Condvar::new(),
        }
    }

    /// Make the accept loop return: set the flag, wake its wait for a slot
    /// and its blocking accept().
    fn stop_accepting(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.slots.notify_all();
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }

    /// Record the error that ends the server (the first one wins).
    fn fail_for_good(&self, message: String) {
        let mut fatal = lock(&self.fatal);
        if fatal.is_none() {
            *fatal = Some(message);
        }
        self.fatal_set.notify_all();
        drop(fatal);
        self.stop_accepting();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    let mut ids = 0usize;
    loop {
        // At the cap, wait for a connection to end: the next ones queue in
        // the kernel's listen backlog (or retry their SYN) meanwhile.
        {
            let mut conns = lock(&shared.conns);
            while conns.len() >= shared.max_connections && !shared.stop.load(Ordering::SeqCst) {
                conns = shared.slots.wait(conns).unwrap_or_else(|p| p.into_inner());
            }
        }
        let conn = listener.accept();
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok((conn, _)) = conn else {
            // Out of descriptors, say: wait instead of spinning.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        ids += 1;
        let id = ids;
        let Ok(c) = conn.try_clone() else {
            continue;
        };
        lock(&shared.conns).insert(id, c);
        let mine = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name("shforge-fake-conn".into())
            .spawn(move || guarded(&mine, id, conn, serve_connection));
        if spawned.is_err() {
            // No thread (out of memory or tasks): say so without blocking
            // this loop, then close.
            if let Some(c) = lock(&shared.conns).get(&id) {
                let _ = c.set_nonblocking(true);
                let body = error_json("the fake model server cannot start a thread now");
                let mut w: &TcpStream = c;
                let headers = [("Retry-After", "1".to_owned())];
                let body = body.to_string();
                let _ = http::write_full(
                    &mut w,
                    503,
                    "application/json",
                    &headers,
                    body.as_bytes(),
                    false,
                    false,
                );
            }
            release(shared, id);
        }
    }
}

/// Run `handler` on connection `id`; whatever happens in it, a panic
/// included, the connection is shut down (the peer sees it closed), its
/// entry leaves `conns` and its slot is freed. A panic is reported on
/// stderr by the panic hook and stays in this thread.
fn guarded(shared: &Shared, id: usize, conn: TcpStream, handler: fn(&Shared, TcpStream)) {
    struct Slot<'a>(&'a Shared, usize);
    impl Drop for Slot<'_> {
        fn drop(&mut self) {
            release(self.0, self.1);
        }
    }
    let _slot = Slot(shared, id);
    let _ = catch_unwind(AssertUnwindSafe(|| handler(shared, conn)));
}

/// Forget connection `id`: shut its socket down (any clone left anywhere
/// is then dead too) and wake the accept loop.
fn release(shared: &Shared, id: usize) {
    if let Some(c) = lock(&shared.conns).remove(&id) {
        let _ = c.shutdown(Shutdown::Both);
    }
    shared.slots.notify_all();
}

/// Answer requests on one connection until the client closes it, asks to,
/// stays silent past the timeout, or sends something that is not HTTP.
fn serve_connection(shared: &Shared, conn: TcpStream) {
    let _ = conn.set_nodelay(true);
    let _ = conn.set_write_timeout(Some(shared.timeout));
    let Ok(read_half) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(http::Deadline::new(read_half, shared.timeout));
    let mut writer = conn;
    loop {
        reader.get_mut().reset();
        match http::read_request(&mut reader, &mut writer) {
            Ok(None) => return,
            Ok(Some(req)) => {
                if !respond(shared, &req, &mut writer).unwrap_or(false) {
                    return;
                }
                if shared.stop.load(Ordering::SeqCst) {
                    return;
                }
            }
            Err(e) => {
                if let Some(status) = e.status() {
                    let body = error_json(&e.to_string());
                    let _ = http::write_full(
                        &mut writer,
                        status,
                        "application/json",
                        &[],
                        body.to_string().as_bytes(),
                        false,
                        false,
                    );
                    linger(&writer, &mut reader);
                }
                return;
            }
        }
    }
}

/// Close after an error answer without losing it: a socket closed with
/// unread input sends RST, which can make the peer drop the answer unread.
/// So stop writing, then read and discard for a bounded time and amount.
fn linger(writer: &TcpStream, reader: &mut BufReader<http::Deadline>) {
    let _ = writer.shutdown(Shutdown::Write);
    reader.get_mut().shorten(Duration::from_millis(500));
    let mut sink = [0u8; 16 * 1024];
    let mut left: usize = 1 << 20;
    while left > 0 {
        match reader.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(n) => left = left.saturating_sub(n),
        }
    }
}

/// The wire APIs the server speaks (the session builder's `harness::Api`
/// names the same four).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI Chat Completions.
    Chat,
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `generateContent`.
    Gemini,
}

impl Wire {
    /// `chat`, `responses`, `anthropic` or `gemini`, as logged.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Chat => "chat",
            Wire::Responses => "responses",
            Wire::Anthropic => "anthropic",
            Wire::Gemini => "gemini",
        }
    }
}

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
fn error_json(message: &str) -> Value {
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
fn respond(shared: &Shared, req: &Request, w: &mut TcpStream) -> io::Result<bool> {
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
    let mut reply = match route(&req.method, &req.path) {
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
            model_reply(
                shared,
                req,
                parsed.as_ref(),
                Wire::Gemini,
                Some((&m, sse)),
                &mut entry,
            )
        }
        Route::Model(wire) => model_reply(shared, req, parsed.as_ref(), wire, None, &mut entry),
    };
    if let Some(log) = &shared.log {
        let line = log_line(&entry, parsed.as_ref(), &req.body);
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
    }
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
    match (reply.body, reply.cut) {
        (Body::Json(v), None) => http::write_full(
            w,
            reply.status,
            "application/json",
            &reply.headers,
            v.to_string().as_bytes(),
            keep_alive,
            req.method == "HEAD",
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
fn json_values(body: &[u8]) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The guard around a connection: a handler that panics (after leaking
    /// a clone of its socket, the way the old `conns` entry leaked one)
    /// still leaves the peer with a closed connection, the table empty and
    /// the panic inside the thread.
    #[test]
    fn json_values_counts_outside_strings() {
        assert_eq!(json_values(b"0"), 1);
        assert_eq!(json_values(br#"{"a":[1,2]}"#), 5);
        assert_eq!(json_values(br#"["a,b:[{", "\",["]"#), 3);
    }

    #[test]
    fn a_panicking_connection_is_closed_and_forgotten() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (conn, _) = listener.accept().unwrap();
        let shared = Arc::new(Shared::new(0, ServerConfig::default(), None));
        lock(&shared.conns).insert(7, conn.try_clone().unwrap());
        let mine = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            guarded(&mine, 7, conn, |_, conn| {
                std::mem::forget(conn.try_clone());
                panic!("a forced panic in a connection handler");
            });
        });
        thread.join().expect("the panic stayed inside guarded");
        client
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut rest = Vec::new();
        client.read_to_end(&mut rest).expect("EOF, not a hang");
        assert!(rest.is_empty());
        assert!(lock(&shared.conns).is_empty());
    }
}
