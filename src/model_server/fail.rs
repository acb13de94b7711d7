//! Scripted failures, for measuring how a harness meets a rate limit or an
//! outage: the word `shforge-fail=STATUS[:times=N][:retry-after=SECS]` in a
//! conversation's user text makes the server answer the first `N` (default 1)
//! model requests of that conversation with `STATUS` (400..=599) instead of a
//! reply, with a `Retry-After: SECS` header when one is given.
//!
//! A conversation is known by its user texts: a client retrying a request, or
//! sending the next turn after a tool result, repeats them, so the count runs
//! across retries and turns. A malformed word is ignored (no failure).

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use serde_json::{Value, json};

/// The directive word's prefix.
pub const WORD: &str = "shforge-fail=";

/// One scripted failure: which status, how many times, and what Retry-After.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// The HTTP status, 400..=599.
    pub status: u16,
    /// How many of the conversation's first requests fail (at least 1).
    pub times: u32,
    /// Seconds for a `Retry-After` header; none without it.
    pub retry_after: Option<u32>,
}

impl std::str::FromStr for Failure {
    type Err = String;

    /// `STATUS[:times=N][:retry-after=SECS]`, the options in any order.
    fn from_str(s: &str) -> Result<Failure, String> {
        let mut parts = s.split(':');
        let status: u16 = parts
            .next()
            .and_then(|p| p.parse().ok())
            .filter(|s| (400..=599).contains(s))
            .ok_or_else(|| format!("expected an HTTP error status 400..=599 in {s:?}"))?;
        let mut failure = Failure {
            status,
            times: 1,
            retry_after: None,
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
                _ => return Err(bad()),
            }
        }
        Ok(failure)
    }
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

    /// The error body: OpenAI and Anthropic clients both read
    /// `error.message`; a 429 says `rate_limit_error` / `rate_limit_exceeded`.
    pub fn body(&self, attempt: u32) -> Value {
        let (kind, code) = match self.status {
            429 => ("rate_limit_error", "rate_limit_exceeded"),
            s if s >= 500 => ("api_error", "server_error"),
            _ => ("invalid_request_error", "invalid_request"),
        };
        json!({"type": "error", "error": {
            "type": kind,
            "code": code,
            "message": format!("shforge-fail: scripted {} ({attempt} of {})", self.status, self.times),
        }})
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

    #[test]
    fn parses_words_and_rejects_bad_ones() {
        let f = |s: &str| s.parse::<Failure>();
        assert_eq!(
            f("429"),
            Ok(Failure {
                status: 429,
                times: 1,
                retry_after: None
            })
        );
        assert_eq!(
            f("503:retry-after=2:times=3"),
            Ok(Failure {
                status: 503,
                times: 3,
                retry_after: Some(2)
            })
        );
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
    fn counts_per_conversation() {
        let c = Counter::default();
        let two = "429:times=2".parse().unwrap();
        let a = vec!["a".to_owned()];
        let b = vec!["b".to_owned()];
        assert_eq!(c.fails(&a, &two), Some(1));
        assert_eq!(c.fails(&b, &two), Some(1));
        assert_eq!(c.fails(&a, &two), Some(2));
        assert_eq!(c.fails(&a, &two), None);
        assert_eq!(c.fails(&b, &two), Some(2));
    }
}
