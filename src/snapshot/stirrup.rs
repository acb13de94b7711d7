//! Stirrup: `stirrup-state/transcript.json` in the session dir, written by
//! the bundle's boot.py (installers/bundles/stirrup/boot.py), since
//! Stirrup itself keeps its history in memory: after every model response
//! (the messages sent and the answer, so a run cut off mid-tool leaves its
//! last call without a result) and, at the end, the whole history. Each
//! write is a rename over the file, so it is always one whole document.
//!
//! The document is a list of groups (Stirrup's history: one group per
//! context, a new one after a summary), each a list of Stirrup's pydantic
//! messages as `model_dump(mode="json")` writes them: `{role: "system",
//! content}`, `{role: "user", kind: "user"|"summary"|"turn_warning",
//! content}`, `{role: "assistant", id, blocks: [{kind: "text", text} |
//! {kind: "reasoning", content} | {kind: "tool_call", name, arguments
//! (a JSON string), tool_call_id}], token_usage {input, answer,
//! reasoning}, request_start_time}` and `{role: "tool", content,
//! tool_call_id, name, success}`. `content` is a string or a list of
//! blocks. boot.py adds `model` (the client's) to each assistant message.
//! No session id, working directory or wall-clock time is recorded
//! (`request_start_time` is a monotonic clock): the session is named by
//! the file (`transcript`).
//!
//! Stirrup's answer is the `reason` of its `finish` tool call (what boot.py
//! prints): it is also the text of the assistant message that calls
//! `finish`, so the summary's final text is the answer.

use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Foreign, Head, Layout, Line, Parsed, count_at, str_at};
use super::{Message, Part, PartKind, Tokens, ToolStatus};

pub(super) const LAYOUT: Layout = Layout {
    harness: "Stirrup",
    sub: "stirrup-state",
    pattern: "transcript.json",
    depth: 0,
    is_transcript: |name| name == "transcript.json",
    recognize,
};

/// A list of groups, each a list of objects with a `role`.
fn recognize(lines: &[Line]) -> Result<(), Foreign> {
    let Some(doc) = lines.first() else {
        return Ok(());
    };
    let ok = doc.value.as_array().is_some_and(|groups| {
        groups.iter().all(|g| {
            g.as_array().is_some_and(|ms| {
                ms.iter()
                    .all(|m| m.get("role").is_some_and(Value::is_string))
            })
        })
    });
    if ok {
        return Ok(());
    }
    Err((
        doc.no,
        "not a `[[{\"role\":…}, …], …]` list of message groups".into(),
    ))
}

pub(super) fn parse(path: &Path, lines: &[Line]) -> Parsed {
    let groups = lines
        .first()
        .and_then(|l| l.value.as_array())
        .cloned()
        .unwrap_or_default();
    let mut head = Head::default();
    let mut tokens = Tokens::default();
    let mut messages = Vec::new();
    let all = groups.iter().filter_map(Value::as_array).flatten();
    for (i, v) in all.filter(|m| m.is_object()).enumerate() {
        let m = message(v, i);
        if let Some(u) = m.usage {
            tokens += u;
        }
        if head.agent.model.is_none() && m.role == "assistant" {
            head.agent.model = str_at(v, "model");
        }
        messages.push(m);
    }
    head.finish(path, tokens, messages)
}

fn message(v: &Value, i: usize) -> Message {
    let role = str_at(v, "role").unwrap_or_default();
    let parts = match role.as_str() {
        "assistant" => assistant_parts(v),
        "tool" => vec![tool_result(v)],
        _ => jsonl::content_parts(v.get("content"), content_block),
    };
    Message {
        id: str_at(v, "id").unwrap_or_else(|| format!("message-{i}")),
        role,
        parts,
        data: v.clone(),
        usage: v.get("token_usage").map(tokens_of),
    }
}

/// The blocks of an assistant message, and the `finish` call's reason as
/// its text (the answer; see the module doc).
fn assistant_parts(v: &Value) -> Vec<Part> {
    let blocks = v.get("blocks").and_then(Value::as_array);
    let mut parts: Vec<Part> = blocks.into_iter().flatten().map(block).collect();
    let answer = parts.iter().find_map(|p| match &p.kind {
        PartKind::ToolCall { tool, input, .. } if tool == "finish" => input
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    });
    if let Some(text) = answer {
        parts.push(jsonl::part(
            &Value::String(text.clone()),
            PartKind::Text { text },
        ));
    }
    parts
}

/// One block of an assistant message.
fn block(b: &Value) -> Part {
    let kind = match b.get("kind").and_then(Value::as_str) {
        Some("text") => PartKind::Text {
            text: str_at(b, "text").unwrap_or_default(),
        },
        Some("reasoning" | "signed_reasoning") => PartKind::Reasoning {
            text: str_at(b, "content").unwrap_or_default(),
        },
        Some("tool_call") => PartKind::ToolCall {
            tool: str_at(b, "name").unwrap_or_default(),
            call_id: str_at(b, "tool_call_id"),
            status: ToolStatus::Running,
            // A JSON string as the model sent it; kept as text when it is
            // not JSON.
            input: match b.get("arguments") {
                Some(Value::String(s)) => {
                    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                }
                other => other.cloned().unwrap_or(Value::Null),
            },
            output: None,
        },
        other => PartKind::Other {
            name: other.map(str::to_owned),
        },
    };
    jsonl::part(b, kind)
}

/// A block of a user or system message's content list.
fn content_block(b: &Value) -> Part {
    match (b.get("kind").and_then(Value::as_str), b.as_str()) {
        (_, Some(s)) => jsonl::part(b, PartKind::Text { text: s.to_owned() }),
        (Some("text"), _) => jsonl::part(
            b,
            PartKind::Text {
                text: str_at(b, "text").unwrap_or_default(),
            },
        ),
        (other, _) => jsonl::part(
            b,
            PartKind::Other {
                name: other.map(str::to_owned),
            },
        ),
    }
}

/// A `tool` message: its result, an error when Stirrup marked it
/// unsuccessful (`success: false`, e.g. arguments that did not validate).
fn tool_result(v: &Value) -> Part {
    let output = v.get("content").cloned().unwrap_or(Value::Null);
    jsonl::part(
        v,
        PartKind::ToolResult {
            call_id: str_at(v, "tool_call_id"),
            is_error: v.get("success") == Some(&Value::Bool(false)),
            output,
        },
    )
}

/// Stirrup's per-response counts (`answer` is the output less reasoning);
/// it records no total, so the total is the sum of the three.
fn tokens_of(u: &Value) -> Tokens {
    let mut t = Tokens {
        input: count_at(u, "input"),
        output: count_at(u, "answer"),
        reasoning: count_at(u, "reasoning"),
        cache_read: 0,
        cache_write: 0,
        total: 0,
    };
    t.total = super::sum(&[t.input, t.output, t.reasoning]);
    t
}
