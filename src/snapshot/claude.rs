//! Claude Code: `projects/<cwd slug>/<session uuid>.jsonl`.
//!
//! Lines of type `user` and `assistant` carry an Anthropic Messages API
//! `message` (`content`: a string, or blocks `text`, `thinking`,
//! `tool_use {id, name, input}`, `tool_result {tool_use_id, content,
//! is_error}`); every other line (`attachment`, `api-request`,
//! `cost-state`, `queue-operation`, …) is bookkeeping. One API message
//! can be spread over several lines with the same `message.id`, each
//! repeating its `usage`, so tokens are counted once per `message.id`.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Foreign, Head, Layout, Line, Parsed, count_at, str_at};
use super::{Message, Part, PartKind, Tokens, ToolStatus};

pub(super) const LAYOUT: Layout = Layout {
    harness: "Claude Code",
    sub: "projects",
    pattern: "*/*.jsonl",
    depth: 1,
    is_transcript: |name| name.ends_with(".jsonl"),
    recognize,
};

/// Every line has a `type` and the `sessionId` (but an older `summary`
/// line), and a `user`/`assistant` line's `message` has `content` (a string
/// or blocks): Qwen Code writes the same keys with `message.parts` instead,
/// Pi's lines have no `sessionId`.
fn recognize(lines: &[Line]) -> Result<(), Foreign> {
    jsonl::untyped(lines)?;
    for l in lines {
        let v = &l.value;
        if !v["sessionId"].is_string() && v["type"] != "summary" {
            return Err((l.no, "a line without a `sessionId`".into()));
        }
        if matches!(v["type"].as_str(), Some("user" | "assistant"))
            && !matches!(v["message"]["content"], Value::String(_) | Value::Array(_))
        {
            return Err((
                l.no,
                "a user/assistant line whose `message` has no `content` (string or blocks)".into(),
            ));
        }
    }
    Ok(())
}

pub(super) fn parse(path: &Path, lines: &[Line]) -> Parsed {
    let mut head = Head::default();
    let mut messages = Vec::new();
    let mut usage: HashMap<String, Tokens> = HashMap::new();
    for line in lines {
        let v = &line.value;
        head.id = head.id.or_else(|| str_at(v, "sessionId"));
        head.directory = head.directory.or_else(|| str_at(v, "cwd"));
        head.started = head.started.or_else(|| str_at(v, "timestamp"));
        head.agent.version = head.agent.version.take().or_else(|| str_at(v, "version"));
        let kind = v.get("type").and_then(Value::as_str);
        let Some(message) = v
            .get("message")
            .filter(|_| matches!(kind, Some("user" | "assistant")))
        else {
            continue;
        };
        let role = str_at(message, "role")
            .or_else(|| kind.map(str::to_owned))
            .unwrap_or_default();
        let mut line_usage = None;
        if role == "assistant"
            && let Some(u) = message.get("usage")
        {
            let key = str_at(message, "id").unwrap_or_else(|| jsonl::line_id(line));
            line_usage = Some(tokens(u));
            usage.insert(key, tokens(u));
        }
        messages.push(Message {
            id: str_at(v, "uuid").unwrap_or_else(|| jsonl::line_id(line)),
            role,
            parts: jsonl::content_parts(message.get("content"), part),
            data: v.clone(),
            usage: line_usage,
        });
    }
    let mut total = Tokens::default();
    for t in usage.into_values() {
        total += t;
    }
    head.finish(path, total, messages)
}

fn part(block: &Value) -> Part {
    let kind = match block.get("type").and_then(Value::as_str) {
        Some("text") => PartKind::Text {
            text: str_at(block, "text").unwrap_or_default(),
        },
        Some("thinking") => PartKind::Reasoning {
            text: str_at(block, "thinking").unwrap_or_default(),
        },
        Some("redacted_thinking") => PartKind::Reasoning {
            text: String::new(),
        },
        Some("tool_use" | "server_tool_use") => PartKind::ToolCall {
            tool: str_at(block, "name").unwrap_or_default(),
            call_id: str_at(block, "id"),
            status: ToolStatus::Running,
            input: block.get("input").cloned().unwrap_or(Value::Null),
            output: None,
        },
        Some("tool_result") => PartKind::ToolResult {
            call_id: str_at(block, "tool_use_id"),
            is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
            output: block.get("content").cloned().unwrap_or(Value::Null),
        },
        other => PartKind::Other {
            name: other.map(str::to_owned),
        },
    };
    jsonl::part(block, kind)
}

/// Anthropic `usage`: input excludes the cache reads and writes, so the
/// total is the sum of all four.
fn tokens(u: &Value) -> Tokens {
    let mut t = Tokens {
        input: count_at(u, "input_tokens"),
        output: count_at(u, "output_tokens"),
        reasoning: u
            .get("output_tokens_details")
            .map_or(0, |d| count_at(d, "thinking_tokens")),
        cache_read: count_at(u, "cache_read_input_tokens"),
        cache_write: count_at(u, "cache_creation_input_tokens"),
        total: 0,
    };
    t.total = super::sum(&[t.input, t.output, t.cache_read, t.cache_write]);
    t
}
