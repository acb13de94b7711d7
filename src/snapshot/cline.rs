//! Cline: `sessions/<id>/<id>.messages.json` under its data dir
//! (`CLINE_DIR/data`, with `CLINE_SESSION_BACKEND_MODE=local`), beside the
//! session's manifest `<id>.json`.
//!
//! Both are one pretty-printed JSON document each (not JSONL), rewritten
//! whole as the run goes. The messages document is `{version, updated_at,
//! agent, sessionId, origin {source, mode, sessionId, version}, messages,
//! system_prompt}`; each message `{id, role, content, ts, modelInfo {id,
//! provider}, metrics {inputTokens, outputTokens, cacheReadTokens,
//! cacheWriteTokens}}` (the last two on assistant messages), `content`
//! Anthropic-shaped blocks: `text`, `tool_use {id, name, input}`,
//! `tool_result {tool_use_id, name, content: [{query, result, error?,
//! success}]}` (in a `user` message), `thinking`. The manifest `{version,
//! session_id, started_at, ended_at, exit_code, status, cwd, model, prompt,
//! metadata {title, usage}, messages_path}` gives the title, the working
//! directory and the start; it is read when it is a regular file beside the
//! messages document (nothing else depends on it). A manifest alone (a run
//! stopped before its first message was written) is a session without
//! messages: left out.

use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Foreign, Head, Layout, Line, Parsed, count_at, str_at};
use super::{AgentInfo, Message, Part, PartKind, Tokens};
use crate::files::Bound;

pub(super) const LAYOUT: Layout = Layout {
    harness: "Cline",
    sub: "sessions",
    pattern: "*/*.messages.json",
    depth: 1,
    is_transcript: |name| name.ends_with(".json"),
    recognize,
};

/// A messages document (`sessionId`, `messages` array) or a manifest
/// (`session_id`, `started_at`).
fn recognize(lines: &[Line]) -> Result<(), Foreign> {
    let Some(doc) = lines.first() else {
        return Ok(());
    };
    let v = &doc.value;
    let is_str = |k: &str| v.get(k).is_some_and(Value::is_string);
    let messages = is_str("sessionId") && v.get("messages").is_some_and(Value::is_array);
    let manifest = is_str("session_id") && is_str("started_at");
    if messages || manifest {
        return Ok(());
    }
    Err((
        doc.no,
        "neither a `{\"sessionId\":…,\"messages\":[…]}` document nor a `{\"session_id\":…,\"started_at\":…}` manifest".into(),
    ))
}

pub(super) fn parse(path: &Path, lines: &[Line]) -> Parsed {
    let doc = lines.first().map(|l| &l.value).unwrap_or(&Value::Null);
    let Some(raw) = doc.get("messages").and_then(Value::as_array) else {
        // A manifest: its messages are in the other document.
        return Head::default().finish(path, Tokens::default(), Vec::new());
    };
    let manifest = manifest_beside(path);
    let mut head = Head {
        id: str_at(doc, "sessionId"),
        directory: manifest.as_ref().and_then(|m| str_at(m, "cwd")),
        started: manifest.as_ref().and_then(|m| str_at(m, "started_at")),
        agent: AgentInfo {
            version: doc.get("origin").and_then(|o| str_at(o, "version")),
            model: None,
        },
    };
    let mut tokens = Tokens::default();
    let mut messages = Vec::new();
    for (i, v) in raw.iter().filter(|m| m.is_object()).enumerate() {
        let m = message(v, i);
        if let Some(u) = m.usage {
            tokens += u;
        }
        if head.agent.model.is_none() && m.role == "assistant" {
            head.agent.model = v.get("modelInfo").and_then(|i| str_at(i, "id"));
        }
        messages.push(m);
    }
    if head.started.is_none() {
        // The session id starts with the start in epoch milliseconds, of
        // one width for centuries: it orders like a timestamp.
        head.started = head.id.clone();
    }
    let mut parsed = head.finish(path, tokens, messages);
    parsed.session.title = manifest
        .as_ref()
        .and_then(|m| m.get("metadata"))
        .and_then(|m| str_at(m, "title"));
    parsed
}

/// `<id>.json` beside `<id>.messages.json`, when it is a regular file (a
/// link is not followed) holding a JSON object.
fn manifest_beside(messages: &Path) -> Option<Value> {
    let name = messages.file_name()?.to_str()?;
    let path = messages.with_file_name(format!("{}.json", name.strip_suffix(".messages.json")?));
    if !std::fs::symlink_metadata(&path).ok()?.is_file() {
        return None;
    }
    let bound = Bound {
        what: "a session manifest",
        max: 1 << 20,
    };
    let bytes = crate::copyback::read_file(&path, bound).ok()?;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

fn message(v: &Value, i: usize) -> Message {
    let role = str_at(v, "role").unwrap_or_default();
    Message {
        id: str_at(v, "id").unwrap_or_else(|| format!("message-{i}")),
        role,
        parts: jsonl::content_parts(v.get("content"), block),
        data: v.clone(),
        usage: v.get("metrics").map(tokens_of),
    }
}

/// One content block.
fn block(b: &Value) -> Part {
    let kind = match b.get("type").and_then(Value::as_str) {
        Some("text") => PartKind::Text {
            text: str_at(b, "text").unwrap_or_default(),
        },
        Some("thinking" | "reasoning") => PartKind::Reasoning {
            text: str_at(b, "thinking")
                .or_else(|| str_at(b, "text"))
                .unwrap_or_default(),
        },
        Some("tool_use") => PartKind::ToolCall {
            tool: str_at(b, "name").unwrap_or_default(),
            call_id: str_at(b, "id"),
            status: super::ToolStatus::Running,
            input: b.get("input").cloned().unwrap_or(Value::Null),
            output: None,
        },
        Some("tool_result") => {
            let output = b.get("content").cloned().unwrap_or(Value::Null);
            PartKind::ToolResult {
                call_id: str_at(b, "tool_use_id"),
                is_error: b.get("is_error") == Some(&Value::Bool(true)) || failed(&output),
                output,
            }
        }
        other => PartKind::Other {
            name: other.map(str::to_owned),
        },
    };
    jsonl::part(b, kind)
}

/// A `run_commands`-style result: a list of `{…, success}` entries, one of
/// them `false` (Cline's own timeout: `"error": "Command failed: Command
/// timed out after 30000ms"`).
fn failed(output: &Value) -> bool {
    output.as_array().is_some_and(|items| {
        items
            .iter()
            .any(|r| r.get("success") == Some(&Value::Bool(false)))
    })
}

/// Cline's per-response counts; it records no total, so the total is the
/// sum of the four.
fn tokens_of(m: &Value) -> Tokens {
    let mut t = Tokens {
        input: count_at(m, "inputTokens"),
        output: count_at(m, "outputTokens"),
        reasoning: 0,
        cache_read: count_at(m, "cacheReadTokens"),
        cache_write: count_at(m, "cacheWriteTokens"),
        total: 0,
    };
    t.total = super::sum(&[t.input, t.output, t.cache_read, t.cache_write]);
    t
}
