//! Pi: `sessions/--<cwd with / as ->--/<ISO time>_<uuid>.jsonl`.
//!
//! The first line is the header `{type:"session", version, id, timestamp,
//! cwd}`; then `model_change`, `thinking_level_change` and `message` lines.
//! A `message` line's `message` has a `role`: `user` and `assistant`
//! (content blocks `text`, `thinking`, `toolCall {id, name, arguments}`;
//! an assistant's `usage {input, output, cacheRead, cacheWrite,
//! totalTokens}`), or `toolResult {toolCallId, toolName, content,
//! isError}`.

use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Head, Layout, Line, Parsed, count_at, str_at};
use super::{Message, Part, PartKind, Tokens, ToolStatus};

pub(super) const LAYOUT: Layout = Layout {
    harness: "Pi",
    sub: "sessions",
    pattern: "*/*.jsonl",
    depth: 1,
    is_transcript: |name| name.ends_with(".jsonl"),
    recognize: |lines| jsonl::first_typed(lines, "session"),
};

pub(super) fn parse(path: &Path, lines: &[Line]) -> Parsed {
    let mut head = Head::default();
    let mut messages = Vec::new();
    let mut tokens = Tokens::default();
    for line in lines {
        let v = &line.value;
        match v.get("type").and_then(Value::as_str) {
            Some("session") if head.id.is_none() => {
                head = Head {
                    id: str_at(v, "id"),
                    directory: str_at(v, "cwd"),
                    started: str_at(v, "timestamp"),
                    agent: Default::default(),
                };
            }
            Some("message") => {
                let Some(message) = v.get("message") else {
                    continue;
                };
                let role = str_at(message, "role").unwrap_or_default();
                let mut line_usage = None;
                if role == "assistant"
                    && let Some(u) = message.get("usage")
                {
                    tokens += usage(u);
                    line_usage = Some(usage(u));
                }
                let parts = if role == "toolResult" {
                    vec![tool_result(message)]
                } else {
                    jsonl::content_parts(message.get("content"), part)
                };
                messages.push(Message {
                    id: str_at(v, "id").unwrap_or_else(|| jsonl::line_id(line)),
                    role,
                    parts,
                    data: v.clone(),
                    usage: line_usage,
                });
            }
            _ => {}
        }
    }
    head.finish(path, tokens, messages)
}

fn tool_result(message: &Value) -> Part {
    jsonl::part(
        message,
        PartKind::ToolResult {
            call_id: str_at(message, "toolCallId"),
            is_error: message.get("isError").and_then(Value::as_bool) == Some(true),
            output: message.get("content").cloned().unwrap_or(Value::Null),
        },
    )
}

fn part(block: &Value) -> Part {
    let kind = match block.get("type").and_then(Value::as_str) {
        Some("text") => PartKind::Text {
            text: str_at(block, "text").unwrap_or_default(),
        },
        Some("thinking") => PartKind::Reasoning {
            text: str_at(block, "thinking").unwrap_or_default(),
        },
        Some("toolCall") => PartKind::ToolCall {
            tool: str_at(block, "name").unwrap_or_default(),
            call_id: str_at(block, "id"),
            status: ToolStatus::Running,
            input: block.get("arguments").cloned().unwrap_or(Value::Null),
            output: None,
        },
        other => PartKind::Other {
            name: other.map(str::to_owned),
        },
    };
    jsonl::part(block, kind)
}

fn usage(u: &Value) -> Tokens {
    let mut t = Tokens {
        input: count_at(u, "input"),
        output: count_at(u, "output"),
        reasoning: 0,
        cache_read: count_at(u, "cacheRead"),
        cache_write: count_at(u, "cacheWrite"),
        total: count_at(u, "totalTokens"),
    };
    if t.total == 0 {
        t.total = super::sum(&[t.input, t.output, t.cache_read, t.cache_write]);
    }
    t
}
