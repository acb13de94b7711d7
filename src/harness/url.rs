//! `--base-url`: the model server's root, checked by hand (no URL crate:
//! the grammar a harness config needs is small, and every refusal names
//! what is wrong in one line).
//!
//! Accepted: `http` or `https` in any letter case (written lower-case),
//! a host that is a DNS name (letters, digits, `-`, `_`, dots between
//! labels), an IPv4 address or a bracketed IPv6 address (written
//! lower-case), an optional port 1–65535, and a path of RFC 3986 path
//! characters (`%HH` escapes included). A trailing `/` and a trailing
//! `/v1` are dropped (each profile adds `/v1` where its client wants it).
//!
//! Refused: other schemes, credentials (`user:pass@`: the key goes through
//! `--api-key-env`, never a file), queries, fragments, spaces and control
//! characters, an empty or malformed host, IPv6 without brackets, a bad
//! port, `.`/`..` path segments. None of `{`, `}` or `\` can pass, so no
//! accepted URL holds a config substitution (`{env:…}`, `{file:…}`, `${…}`).

use std::net::{Ipv4Addr, Ipv6Addr};

/// The normalised server root of `raw`, or why it is refused.
pub(super) fn server_root(raw: &str) -> Result<String, String> {
    if let Some(c) = raw.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{raw:?} contains {c:?} (no spaces or control characters in a URL)"
        ));
    }
    let (scheme, rest) = raw
        .split_once("://")
        .ok_or_else(|| format!("{raw:?} is not an http:// or https:// URL"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!("{raw:?}: scheme {scheme:?} is not http or https"));
    }
    if rest.contains('#') {
        return Err(format!("{raw:?} has a fragment (#…); give the server root"));
    }
    if rest.contains('?') {
        return Err(format!("{raw:?} has a query (?…); give the server root"));
    }
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    if authority.contains('@') {
        return Err(format!(
            "{raw:?} has credentials (…@); name the key's variable with --api-key-env instead"
        ));
    }
    let host_port = authority_of(authority).map_err(|why| format!("{raw:?}: {why}"))?;
    check_path(path).map_err(|why| format!("{raw:?}: {why}"))?;
    let path = path.trim_end_matches('/');
    let path = path
        .strip_suffix("/v1")
        .unwrap_or(path)
        .trim_end_matches('/');
    Ok(format!("{scheme}://{host_port}{path}"))
}

/// `host[:port]` checked and written back normalised.
fn authority_of(authority: &str) -> Result<String, String> {
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let (addr, after) = inner
            .split_once(']')
            .ok_or("an IPv6 address has no closing ]")?;
        addr.parse::<Ipv6Addr>()
            .map_err(|_| format!("[{addr}] is not an IPv6 address"))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| format!("{after:?} after the IPv6 address"))?,
            ),
        };
        (format!("[{}]", addr.to_ascii_lowercase()), port)
    } else {
        if authority.matches(':').count() > 1 {
            return Err(format!(
                "host {authority:?} looks like an IPv6 address without brackets (write [::1])"
            ));
        }
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        check_host(host)?;
        (host.to_ascii_lowercase(), port)
    };
    match port {
        None => Ok(host),
        Some(p) => {
            let n = (!p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse::<u32>().ok())
                .flatten()
                .filter(|n| (1..=65535).contains(n))
                .ok_or_else(|| format!("port {p:?} is not a number from 1 to 65535"))?;
            Ok(format!("{host}:{n}"))
        }
    }
}

/// A DNS name or an IPv4 address.
fn check_host(host: &str) -> Result<(), String> {
    if host.is_empty() {
        return Err("the URL has no host".into());
    }
    if host.len() > 253 {
        return Err("the host is longer than 253 characters".into());
    }
    if let Some(c) = host
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!("host {host:?} has the character {c:?}"));
    }
    let labels: Vec<&str> = host.split('.').collect();
    for label in &labels {
        if label.is_empty() || label.len() > 63 || label.starts_with('-') || label.ends_with('-') {
            return Err(format!(
                "host {host:?} has an empty, over-long or dash-edged label"
            ));
        }
    }
    // All-digit labels are an IPv4 address or nothing (999.1.1.1, 1.2.3).
    if labels.iter().all(|l| l.bytes().all(|b| b.is_ascii_digit()))
        && host.parse::<Ipv4Addr>().is_err()
    {
        return Err(format!("host {host:?} is not an IPv4 address"));
    }
    Ok(())
}

/// RFC 3986 path characters: unreserved, sub-delims, `:`, `@`, `%HH`.
fn check_path(path: &str) -> Result<(), String> {
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3).unwrap_or_default();
            if hex.len() != 2 || !hex.iter().all(u8::is_ascii_hexdigit) {
                return Err("a % in the path is not followed by two hex digits".into());
            }
            i += 3;
            continue;
        }
        let ok = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&b);
        if !ok {
            let c = path[i..].chars().next().unwrap_or('?');
            return Err(format!("the path has the character {c:?}"));
        }
        i += 1;
    }
    if path.split('/').any(|s| s == "." || s == "..") {
        return Err("the path has a . or .. segment".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::server_root;

    /// (name, input, the root it means).
    const ACCEPTED: &[(&str, &str, &str)] = &[
        ("plain", "http://127.0.0.1:4321", "http://127.0.0.1:4321"),
        (
            "trailing slash",
            "http://127.0.0.1:4321/",
            "http://127.0.0.1:4321",
        ),
        (
            "with /v1",
            "http://127.0.0.1:4321/v1",
            "http://127.0.0.1:4321",
        ),
        (
            "with /v1/",
            "http://127.0.0.1:4321/v1/",
            "http://127.0.0.1:4321",
        ),
        ("upper-case scheme", "HTTP://h:1", "http://h:1"),
        (
            "mixed-case https",
            "Https://Api.Example.COM/v1",
            "https://api.example.com",
        ),
        (
            "no port",
            "https://api.example.com",
            "https://api.example.com",
        ),
        (
            "dns name with dash and underscore",
            "http://model-server_1:80",
            "http://model-server_1:80",
        ),
        (
            "ipv6 bracketed",
            "http://[::1]:8080/v1",
            "http://[::1]:8080",
        ),
        ("ipv6 no port", "http://[FE80::1]", "http://[fe80::1]"),
        ("port with leading zero", "http://h:08080", "http://h:8080"),
        ("highest port", "http://h:65535", "http://h:65535"),
        (
            "gateway path",
            "https://gw.example/openai/v1",
            "https://gw.example/openai",
        ),
        ("percent escape in path", "http://h/a%2Fb", "http://h/a%2Fb"),
        ("dollar in path is data", "http://h/a$b", "http://h/a$b"),
    ];

    /// (name, input, a word of the reason).
    const REFUSED: &[(&str, &str, &str)] = &[
        ("ftp scheme", "ftp://h", "scheme"),
        ("file scheme", "file:///etc/passwd", "scheme"),
        ("no scheme", "127.0.0.1:4321", "not an http"),
        ("single slash", "http:/h", "not an http"),
        ("credentials", "http://user:pass@h", "credentials"),
        ("user only", "http://user@h", "credentials"),
        ("query", "http://h/v1?key=x", "query"),
        ("fragment", "http://h/#frag", "fragment"),
        ("empty host", "http://", "no host"),
        ("empty host with port", "http://:80", "no host"),
        ("space in host", "http://my host", "' '"),
        ("tab", "http://h\t", "'\\t'"),
        ("newline", "http://h\n/v1", "'\\n'"),
        ("brace in host", "http://{env:X}", "character '{'"),
        (
            "brace in path",
            "http://h/{file:/etc/passwd}",
            "character '{'",
        ),
        ("backslash", "http://h\\x", "character '\\\\'"),
        ("percent in host", "http://h%41", "character '%'"),
        ("empty label", "http://a..b", "label"),
        ("leading dot", "http://.h", "label"),
        ("dash-edged label", "http://-h", "label"),
        ("bad ipv4", "http://999.1.1.1", "IPv4"),
        ("short ipv4", "http://1.2.3", "IPv4"),
        ("ipv6 without brackets", "http://::1:8080", "brackets"),
        ("ipv6 unclosed", "http://[::1", "closing"),
        ("ipv6 malformed", "http://[::g]", "IPv6"),
        ("junk after ipv6", "http://[::1]x", "after the IPv6"),
        ("empty port", "http://h:", "port"),
        ("port zero", "http://h:0", "port"),
        ("port too big", "http://h:65536", "port"),
        ("port not a number", "http://h:8o", "port"),
        ("negative port", "http://h:-1", "port"),
        ("bad percent escape", "http://h/%zz", "hex"),
        ("dot-dot segment", "http://h/a/../v1", ".."),
    ];

    #[test]
    fn accepted_urls_normalise_to_the_root() {
        for (name, input, root) in ACCEPTED {
            assert_eq!(
                server_root(input).as_deref(),
                Ok(*root),
                "{name}: {input:?}"
            );
        }
    }

    #[test]
    fn refused_urls_say_why() {
        for (name, input, word) in REFUSED {
            match server_root(input) {
                Ok(root) => panic!("{name}: {input:?} was accepted as {root:?}"),
                Err(why) => {
                    assert!(why.contains(word), "{name}: {input:?}: {why}");
                    assert_eq!(why.lines().count(), 1, "{name}: {why}");
                }
            }
        }
    }
}
