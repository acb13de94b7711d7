//! Just enough HTTP/1.1 for the fake model server: read one request
//! (Content-Length or chunked body, `Expect: 100-continue`), write a JSON
//! response with a Content-Length or an SSE stream with chunked encoding.
//!
//! Nothing here trusts the peer: every length is checked arithmetic against
//! a bound, and no buffer is sized from a number the client sent — a body
//! grows only as its bytes arrive, so a client claiming 10 GB and sending
//! ten bytes costs ten bytes (plus one read buffer).

use std::io::{self, BufRead, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Largest header block accepted (request line plus headers); past it, 431.
pub const MAX_HEAD: usize = 64 * 1024;
/// Largest body accepted (decoded); past it, 413. A coding agent's
/// conversation is far smaller.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
/// Largest chunk-size line (size, extensions) of a chunked body.
const MAX_CHUNK_LINE: usize = 4 * 1024;

/// One parsed request.
#[derive(Debug)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The target without its query string (`/v1/messages?beta=true` → `/v1/messages`).
    pub path: String,
    /// The query string without its `?` (empty when there is none).
    pub query: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The decoded body.
    pub body: Vec<u8>,
    /// The client wants the connection kept open after the response.
    pub keep_alive: bool,
}

impl Request {
    /// The first header named `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of query parameter `name` (not percent-decoded).
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }
}

/// Why no request could be read. Each variant but [`HttpError::Gone`]
/// gets an error response before the connection is closed.
#[derive(Debug)]
pub enum HttpError {
    /// The peer went away, reset, or stayed silent past the timeout before
    /// a request began: nothing to answer.
    Gone(io::Error),
    /// Not HTTP as this server reads it: 400.
    Bad(String),
    /// The body is larger than [`MAX_BODY`]: 413.
    TooLarge(String),
    /// The head is larger than [`MAX_HEAD`]: 431.
    HeadTooLarge,
    /// The request began but did not arrive whole within the timeout: 408.
    Timeout,
}

impl HttpError {
    /// The status to answer with; `None` for [`HttpError::Gone`].
    pub fn status(&self) -> Option<u16> {
        match self {
            HttpError::Gone(_) => None,
            HttpError::Bad(_) => Some(400),
            HttpError::TooLarge(_) => Some(413),
            HttpError::HeadTooLarge => Some(431),
            HttpError::Timeout => Some(408),
        }
    }
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Gone(e) => write!(f, "connection gone: {e}"),
            HttpError::Bad(m) => write!(f, "bad HTTP request: {m}"),
            HttpError::TooLarge(m) => write!(f, "request body too large: {m}"),
            HttpError::HeadTooLarge => {
                write!(f, "request head larger than {} KiB", MAX_HEAD / 1024)
            }
            HttpError::Timeout => write!(f, "request not received within the timeout"),
        }
    }
}

impl From<io::Error> for HttpError {
    /// An I/O error once a request has begun: a timeout is 408, the rest
    /// (EOF, reset) leaves nobody to answer.
    fn from(e: io::Error) -> HttpError {
        if is_timeout(&e) {
            HttpError::Timeout
        } else {
            HttpError::Gone(e)
        }
    }
}

/// A socket read timing out (`SO_RCVTIMEO` reports `WouldBlock` on Linux).
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

fn bad(msg: impl Into<String>) -> HttpError {
    HttpError::Bad(msg.into())
}

/// A connection's read side with a deadline: every read waits at most until
/// [`Deadline::reset`]'s instant, so a peer trickling one byte at a time
/// (slowloris) is cut off as surely as a silent one.
#[derive(Debug)]
pub struct Deadline {
    stream: TcpStream,
    timeout: Duration,
    until: Instant,
}

impl Deadline {
    /// Reads from `stream`, each request allowed `timeout` from [`reset`](Self::reset).
    pub fn new(stream: TcpStream, timeout: Duration) -> Deadline {
        Deadline {
            stream,
            timeout,
            until: Instant::now() + timeout,
        }
    }

    /// Start a new allowance of `timeout` (before each request).
    pub fn reset(&mut self) {
        self.until = Instant::now() + self.timeout;
    }

    /// Bring the deadline forward to at most `d` from now.
    pub fn shorten(&mut self, d: Duration) {
        self.until = self.until.min(Instant::now() + d);
    }
}

impl Read for Deadline {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "read deadline passed",
            ));
        }
        self.stream.set_read_timeout(Some(left))?;
        self.stream.read(buf)
    }
}

/// Read one line ending in `\n` (CR stripped), counting it against `budget`;
/// `over` is the error when the line does not fit. `Ok(None)` at a clean end
/// of stream before any byte.
fn read_line(
    r: &mut impl BufRead,
    budget: &mut usize,
    over: fn() -> HttpError,
) -> Result<Option<String>, HttpError> {
    let mut line = Vec::new();
    let limit = budget.saturating_add(1) as u64;
    let n = r.take(limit).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if n > *budget {
        return Err(over());
    }
    *budget -= n;
    if line.last() != Some(&b'\n') {
        return Err(HttpError::Gone(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed mid-line",
        )));
    }
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| bad("header is not UTF-8"))
}

/// Read the next request from a connection. `Ok(None)` when the client closed
/// it, or stayed silent past the timeout, between requests. `w` is where
/// `100 Continue` goes.
pub fn read_request(
    r: &mut impl BufRead,
    w: &mut impl Write,
) -> Result<Option<Request>, HttpError> {
    let mut budget = MAX_HEAD;
    let head_over = || HttpError::HeadTooLarge;
    // Tolerate blank lines between requests (RFC 9112 §2.2).
    let line = loop {
        match read_line(r, &mut budget, head_over) {
            Ok(None) => return Ok(None),
            // Idle between requests: close without a word.
            Err(HttpError::Timeout) if budget == MAX_HEAD => return Ok(None),
            Err(e) => return Err(e),
            Ok(Some(l)) if l.is_empty() => continue,
            Ok(Some(l)) => break l,
        }
    };
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(format!("bad request line {line:?}")));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad(format!("unsupported version {version:?}")));
    }
    let target = target.split('#').next().unwrap_or("");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut headers = Vec::new();
    loop {
        let Some(h) = read_line(r, &mut budget, head_over)? else {
            return Err(HttpError::Gone(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed in headers",
            )));
        };
        if h.is_empty() {
            break;
        }
        let Some((name, value)) = h.split_once(':') else {
            return Err(bad(format!("bad header line {h:?}")));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut req = Request {
        method: method.to_owned(),
        path: path.to_owned(),
        query: query.to_owned(),
        headers,
        body: Vec::new(),
        keep_alive: false,
    };
    let connection = req.header("connection").unwrap_or("").to_ascii_lowercase();
    req.keep_alive = if version == "HTTP/1.0" {
        connection.contains("keep-alive")
    } else {
        !connection.contains("close")
    };
    let framing = body_framing(&req)?;
    if req
        .header("expect")
        .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
        && framing != Framing::Length(0)
    {
        w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        w.flush()?;
    }
    req.body = match framing {
        Framing::Chunked => read_chunked(r)?,
        Framing::Length(len) => read_exactly(r, len)?,
    };
    Ok(Some(req))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Chunked,
    Length(usize),
}

/// How the body is delimited, refused before a byte of it is read when it
/// is larger than [`MAX_BODY`] or ambiguous (both framings, two lengths).
fn body_framing(req: &Request) -> Result<Framing, HttpError> {
    let chunked = req
        .header("transfer-encoding")
        .map(|t| t.to_ascii_lowercase().contains("chunked"));
    let lengths: Vec<&str> = req
        .headers
        .iter()
        .filter(|(n, _)| n == "content-length")
        .map(|(_, v)| v.as_str())
        .collect();
    match (chunked, lengths.as_slice()) {
        (Some(true), []) => Ok(Framing::Chunked),
        (Some(_), _) => Err(bad(
            "Transfer-Encoding other than chunked, or with Content-Length",
        )),
        (None, []) => Ok(Framing::Length(0)),
        (None, [one]) => {
            // Digits only: `parse` would take a leading `+`.
            if one.is_empty() || !one.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(format!("bad Content-Length {one:?}")));
            }
            match one.parse::<u64>() {
                Ok(n) if n <= MAX_BODY as u64 => Ok(Framing::Length(n as usize)),
                _ => Err(HttpError::TooLarge(format!(
                    "Content-Length {one} is over the {} MiB bound",
                    MAX_BODY >> 20
                ))),
            }
        }
        (None, _) => Err(bad("more than one Content-Length")),
    }
}

/// Append exactly `len` bytes from `r` to a new buffer, growing it only as
/// bytes arrive (`len` is at most [`MAX_BODY`], checked by the caller).
fn read_exactly(r: &mut impl BufRead, len: usize) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    append_exactly(r, len, &mut body)?;
    Ok(body)
}

fn append_exactly(r: &mut impl BufRead, len: usize, body: &mut Vec<u8>) -> Result<(), HttpError> {
    let mut left = len;
    while left > 0 {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Err(HttpError::Gone(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed in the body",
            )));
        }
        let n = buf.len().min(left);
        body.extend_from_slice(&buf[..n]);
        r.consume(n);
        left -= n;
    }
    Ok(())
}

/// Decode a chunked body, skipping chunk extensions and trailers. The sizes
/// are the peer's numbers: parsed as at most 16 hex digits and added with
/// checked arithmetic against [`MAX_BODY`].
fn read_chunked(r: &mut impl BufRead) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    // Trailers share the head's bound.
    let mut trailer_budget = MAX_HEAD;
    loop {
        let mut budget = MAX_CHUNK_LINE;
        let line = read_line(r, &mut budget, || bad("chunk-size line too long"))?
            .ok_or_else(|| bad("missing chunk size"))?;
        let digits = line.split(';').next().unwrap_or("").trim();
        if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(bad(format!("bad chunk size {line:?}")));
        }
        let size =
            u64::from_str_radix(digits, 16).map_err(|_| bad(format!("bad chunk size {line:?}")))?;
        if size == 0 {
            // Trailers, up to the blank line.
            while read_line(r, &mut trailer_budget, || HttpError::HeadTooLarge)?
                .is_some_and(|l| !l.is_empty())
            {}
            return Ok(body);
        }
        let total = u64::try_from(body.len())
            .ok()
            .and_then(|have| have.checked_add(size))
            .filter(|&t| t <= MAX_BODY as u64)
            .ok_or_else(|| {
                HttpError::TooLarge(format!(
                    "chunked body over the {} MiB bound",
                    MAX_BODY >> 20
                ))
            })?;
        append_exactly(r, (total as usize) - body.len(), &mut body)?;
        let mut crlf = [0; 2];
        r.read_exact(&mut crlf)?;
        if &crlf != b"\r\n" {
            return Err(bad("chunk not followed by CRLF"));
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Error",
    }
}

/// Write a complete response with a Content-Length and the extra `headers`
/// (its head only when `head_only`, the answer to a `HEAD`).
pub fn write_full(
    w: &mut impl Write,
    status: u16,
    content_type: &str,
    headers: &[(&str, String)],
    body: &[u8],
    keep_alive: bool,
    head_only: bool,
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: {}\r\n",
        reason(status),
        body.len(),
        if keep_alive { "keep-alive" } else { "close" },
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    if !head_only {
        out.extend_from_slice(body);
    }
    w.write_all(&out)?;
    w.flush()
}

/// Write a `text/event-stream` response, one chunk per event, flushed as it
/// goes, so a client sees the events arrive one by one.
pub fn write_sse<'a>(
    w: &mut impl Write,
    headers: &[(&str, String)],
    events: impl IntoIterator<Item = &'a str>,
    keep_alive: bool,
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: {}\r\n",
        if keep_alive { "keep-alive" } else { "close" },
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    w.write_all(head.as_bytes())?;
    w.flush()?;
    for event in events {
        write!(w, "{:x}\r\n{event}\r\n", event.len())?;
        w.flush()?;
    }
    w.write_all(b"0\r\n\r\n")?;
    w.flush()
}

/// A scripted cut: the head of a chunked `text/event-stream` and `events`,
/// then nothing more (no terminating chunk); the caller closes.
pub fn write_cut_sse<'a>(
    w: &mut impl Write,
    headers: &[(&str, String)],
    events: impl IntoIterator<Item = &'a str>,
) -> io::Result<()> {
    let mut head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n".to_owned();
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    w.write_all(head.as_bytes())?;
    for event in events {
        write!(w, "{:x}\r\n{event}\r\n", event.len())?;
    }
    w.flush()
}

/// A scripted cut of a whole response: the head announces all of `body`,
/// half of it is sent; the caller closes.
pub fn write_cut_json(
    w: &mut impl Write,
    status: u16,
    headers: &[(&str, String)],
    body: &[u8],
) -> io::Result<()> {
    let mut out = Vec::new();
    write_full(
        &mut out,
        status,
        "application/json",
        headers,
        body,
        false,
        true,
    )?;
    out.extend_from_slice(&body[..body.len() / 2]);
    w.write_all(&out)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &[u8]) -> (Request, Vec<u8>) {
        let mut out = Vec::new();
        let req = read_request(&mut &raw[..], &mut out).unwrap().unwrap();
        (req, out)
    }

    #[test]
    fn content_length_body_and_query_dropped() {
        let (req, out) =
            parse(b"POST /v1/messages?beta=true HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
        assert_eq!(req.path, "/v1/messages");
        assert_eq!(req.body, b"{}");
        assert!(req.keep_alive);
        assert!(out.is_empty());
    }

    #[test]
    fn chunked_body_with_extension_and_trailer() {
        let (req, _) = parse(
            b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\na\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n",
        );
        assert_eq!(req.body, b"abc0123456789");
    }

    #[test]
    fn expect_continue_and_close() {
        let (req, out) = parse(
            b"POST /x HTTP/1.1\r\nExpect: 100-continue\r\nConnection: close\r\nContent-Length: 1\r\n\r\nz",
        );
        assert_eq!(out, b"HTTP/1.1 100 Continue\r\n\r\n");
        assert!(!req.keep_alive);
    }

    fn status_of(raw: &[u8]) -> Option<u16> {
        let mut sink = Vec::new();
        match read_request(&mut &raw[..], &mut sink) {
            Ok(r) => panic!("{raw:?} parsed: {r:?}"),
            Err(e) => e.status(),
        }
    }

    #[test]
    fn truncated_and_bad_input_are_errors() {
        let mut sink = Vec::new();
        for (raw, status) in [
            (
                &b"POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"[..],
                None,
            ),
            (b"POST /x HTTP/1.1\r\nContent-Length: x\r\n\r\n", Some(400)),
            (
                b"POST /x HTTP/1.1\r\nContent-Length: +1\r\n\r\nz",
                Some(400),
            ),
            (
                b"POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nzz",
                Some(400),
            ),
            (
                b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n",
                Some(400),
            ),
            (
                b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                Some(400),
            ),
            (
                b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n+1\r\nz\r\n0\r\n\r\n",
                Some(400),
            ),
            (
                b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nzXY",
                Some(400),
            ),
            (b"GARBAGE\r\n\r\n", Some(400)),
            (b"GET / HTTP/2\r\n\r\n", Some(400)),
            (b"GET / HTTP/1.1 extra\r\n\r\n", Some(400)),
        ] {
            assert_eq!(status_of(raw), status, "{raw:?}");
        }
        assert!(read_request(&mut &b""[..], &mut sink).unwrap().is_none());
        let huge_head = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(status_of(huge_head.as_bytes()), Some(431));
    }

    /// Hostile lengths are refused by arithmetic, before any allocation:
    /// these claims, if allocated, would abort the test process.
    #[test]
    fn hostile_lengths_are_413_without_allocating() {
        for raw in [
            format!(
                "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
                MAX_BODY + 1
            ),
            "POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n".into(),
            "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n".into(),
            // The chunk sizes of the reported panic: each alone past the bound,
            // and a sum that overflows 64 bits.
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n".into(),
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\nffffffffffffffff\r\n"
                .into(),
            format!(
                "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n",
                MAX_BODY + 1
            ),
        ] {
            assert_eq!(status_of(raw.as_bytes()), Some(413), "{raw:?}");
        }
        // 17 hex digits cannot be a size at all.
        let raw = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n";
        assert_eq!(status_of(raw), Some(400));
        // A claim of 10 GB with three bytes: the connection ends, nothing allocated.
        let raw = b"POST / HTTP/1.1\r\nContent-Length: 10000000000\r\n\r\nabc";
        assert_eq!(status_of(raw), Some(413));
        let raw = format!("POST / HTTP/1.1\r\nContent-Length: {MAX_BODY}\r\n\r\nabc");
        assert_eq!(status_of(raw.as_bytes()), None, "EOF after 3 of 64 MiB");
    }

    #[test]
    fn query_parameters() {
        let (req, _) =
            parse(b"POST /v1beta/models/m:streamGenerateContent?alt=sse&key=k HTTP/1.1\r\n\r\n");
        assert_eq!(req.path, "/v1beta/models/m:streamGenerateContent");
        assert_eq!(req.query_param("alt"), Some("sse"));
        assert_eq!(req.query_param("key"), Some("k"));
        assert_eq!(req.query_param("x"), None);
    }
}
