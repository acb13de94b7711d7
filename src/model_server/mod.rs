//! A scripted fake model server on 127.0.0.1, for driving real harness CLIs
//! (and adapters' own tests) without a model provider.
//!
//! It speaks OpenAI Chat Completions (`/v1/chat/completions`), OpenAI
//! Responses (`/v1/responses`) and Anthropic Messages (`/v1/messages`), as
//! JSON or as SSE when the body says `"stream": true`, the Gemini API
//! (`/v1beta/models/M:generateContent`, `:streamGenerateContent?alt=sse`),
//! and lists one model at `GET /v1/models` (and `GET /v1beta/models`). Every answer follows `decide::decide`: text when no
//! tools are offered, `done` once a tool result is in the conversation, and
//! otherwise exactly one tool call that writes a token to a target file.
//!
//! * `http` — reading requests and writing responses;
//! * `respond` — answering one request: its route, its log line, the
//!   reply;
//! * `decide` — the decision and the tool arguments;
//! * `chat`, `responses`, `anthropic`, `gemini` — one wire format each;
//! * `wire` — what the formats share;
//! * `fail` — scripted error answers in each API's own shape
//!   (`shforge-fail=429:retry-after=1`, `context`, `cut`, ...);
//! * `cli` — `shforge fake-model-server`.
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
#[cfg(feature = "cli")]
pub(crate) mod cli;
mod decide;
mod fail;
mod gemini;
mod http;
mod respond;
mod responses;
mod wire;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub use decide::{
    DEFAULT_TARGET, DEFAULT_TOKEN, DONE_TEXT, Decision, Directives, PLAIN_TEXT, Prefer, ToolCall,
};

use respond::{error_json, respond};

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

#[cfg(test)]
mod tests {
    use super::*;
    use respond::json_values;

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
