//! Just enough HTTP/1.1 for the fake model server: read one request
//! (Content-Length or chunked body, `Expect: 100-continue`), write a JSON
//! response with a Content-Length or an SSE stream with chunked encoding.

use std::io::{self, BufRead, Read, Write};

/// Largest header block accepted (request line plus headers).
const MAX_HEAD: usize = 64 * 1024;
/// Largest body accepted; a coding agent's conversation is far smaller.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One parsed request.
#[derive(Debug)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The target without its query string (`/v1/messages?beta=true` → `/v1/messages`).
    pub path: String,
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
}

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Read one line ending in `\n` (CR stripped), counting it against `budget`.
/// `Ok(None)` at a clean end of stream before any byte.
fn read_line(r: &mut impl BufRead, budget: &mut usize) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    let n = r.take(*budget as u64 + 1).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if n > *budget {
        return Err(bad("request head too large"));
    }
    *budget -= n;
    if line.last() != Some(&b'\n') {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed mid-line",
        ));
    }
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| bad("header is not UTF-8"))
}

/// Read the next request from a connection. `Ok(None)` when the client closed
/// it between requests. `w` is where `100 Continue` goes.
pub fn read_request(r: &mut impl BufRead, w: &mut impl Write) -> io::Result<Option<Request>> {
    let mut budget = MAX_HEAD;
    // Tolerate blank lines between requests (RFC 9112 §2.2).
    let line = loop {
        match read_line(r, &mut budget)? {
            None => return Ok(None),
            Some(l) if l.is_empty() => continue,
            Some(l) => break l,
        }
    };
    let mut parts = line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(format!("bad request line {line:?}")));
    };
    let path = target.split(['?', '#']).next().unwrap_or("").to_owned();
    let mut headers = Vec::new();
    loop {
        let Some(h) = read_line(r, &mut budget)? else {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed in headers",
            ));
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
        path,
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
    if req
        .header("expect")
        .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        w.flush()?;
    }
    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    req.body = if chunked {
        read_chunked(r)?
    } else if let Some(len) = req.header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| bad(format!("bad Content-Length {len:?}")))?;
        if len > MAX_BODY {
            return Err(bad("body too large"));
        }
        let mut body = vec![0; len];
        r.read_exact(&mut body)?;
        body
    } else {
        Vec::new()
    };
    Ok(Some(req))
}

/// Decode a chunked body, skipping chunk extensions and trailers.
fn read_chunked(r: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut budget = MAX_HEAD;
        let line = read_line(r, &mut budget)?.ok_or_else(|| bad("missing chunk size"))?;
        let size = line.split(';').next().unwrap_or("").trim();
        let size =
            usize::from_str_radix(size, 16).map_err(|_| bad(format!("bad chunk size {line:?}")))?;
        if size == 0 {
            // Trailers, up to the blank line.
            while read_line(r, &mut budget)?.is_some_and(|l| !l.is_empty()) {}
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(bad("body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..])?;
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
        404 => "Not Found",
        _ => "Error",
    }
}

/// Write a complete response with a Content-Length (its head only when
/// `head_only`, the answer to a `HEAD`).
pub fn write_full(
    w: &mut impl Write,
    status: u16,
    content_type: &str,
    body: &[u8],
    keep_alive: bool,
    head_only: bool,
) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
        reason(status),
        body.len(),
        if keep_alive { "keep-alive" } else { "close" },
    );
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
    events: impl IntoIterator<Item = &'a str>,
    keep_alive: bool,
) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: {}\r\n\r\n",
        if keep_alive { "keep-alive" } else { "close" },
    );
    w.write_all(head.as_bytes())?;
    w.flush()?;
    for event in events {
        write!(w, "{:x}\r\n{event}\r\n", event.len())?;
        w.flush()?;
    }
    w.write_all(b"0\r\n\r\n")?;
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

    #[test]
    fn truncated_and_bad_input_are_errors() {
        let mut sink = Vec::new();
        for raw in [
            &b"POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"[..],
            b"POST /x HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"GARBAGE\r\n\r\n",
        ] {
            assert!(read_request(&mut &raw[..], &mut sink).is_err(), "{raw:?}");
        }
        assert!(read_request(&mut &b""[..], &mut sink).unwrap().is_none());
        let huge_head = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        let e = read_request(&mut huge_head.as_bytes(), &mut sink).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let huge_body = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY + 1
        );
        let e = read_request(&mut huge_body.as_bytes(), &mut sink).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }
}
