//! A tiny HTTP/1.0 file server on 127.0.0.1 for download tests: files put
//! in by the test, a request log, truncated bodies and stalls on demand.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the server serves and what it was asked.
#[derive(Default)]
pub struct ServerState {
    /// URL path -> body.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Paths served with a full Content-Length but only half the body.
    pub truncate: Vec<String>,
    /// While true, requests stall after the headers.
    pub stall: bool,
    /// Every requested path, in order.
    pub log: Vec<String>,
}

/// A tiny HTTP/1.0 file server on 127.0.0.1 with a request log.
pub struct Server {
    port: u16,
    /// Shared with the serving threads.
    pub state: Arc<Mutex<ServerState>>,
}

impl Server {
    /// Listen on a free port; each connection is served by a thread.
    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(ServerState::default()));
        let st = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                std::thread::spawn(move || serve(conn, &st));
            }
        });
        Server { port, state }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Serve `body` at `path`.
    pub fn put(&self, path: &str, body: &[u8]) {
        self.state
            .lock()
            .unwrap()
            .files
            .insert(path.to_owned(), body.to_vec());
    }

    /// How many times `path` was asked for.
    pub fn requests(&self, path: &str) -> usize {
        self.state
            .lock()
            .unwrap()
            .log
            .iter()
            .filter(|p| p.as_str() == path)
            .count()
    }

    /// Hold every response after its headers while `on`.
    pub fn set_stall(&self, on: bool) {
        self.state.lock().unwrap().stall = on;
    }
}

fn serve(mut conn: TcpStream, st: &Mutex<ServerState>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    // Drain the headers.
    loop {
        let mut h = String::new();
        match reader.read_line(&mut h) {
            Ok(0) | Err(_) => break,
            Ok(_) if h == "\r\n" || h == "\n" => break,
            Ok(_) => {}
        }
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
    let (body, truncate) = {
        let mut s = st.lock().unwrap();
        s.log.push(path.clone());
        (s.files.get(&path).cloned(), s.truncate.contains(&path))
    };
    let Some(body) = body else {
        let _ = conn.write_all(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        return;
    };
    let head = format!(
        "HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if conn.write_all(head.as_bytes()).is_err() {
        return;
    }
    let start = Instant::now();
    while st.lock().unwrap().stall && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if st.lock().unwrap().stall {
        return;
    }
    let n = if truncate { body.len() / 2 } else { body.len() };
    let _ = conn.write_all(&body[..n]);
    let _ = conn.flush();
}
