//! Continue CLI: `sessions/<id>.json` under its global dir
//! (`CONTINUE_GLOBAL_DIR`, `~/.continue`), one pretty-printed JSON document
//! per session, rewritten whole as the run goes, beside `sessions.json` (an
//! index: a list of `{sessionId, title, dateCreated, workspaceDirectory,
//! messageCount}`, not read).
//!
//! The document (Continue 1.5.47, `package/src/session.ts`) is `{sessionId, title,
//! workspaceDirectory, history, usage}`; each history item `{message,
//! contextItems, toolCallStates?}` with an OpenAI-chat-shaped `message`
//! `{role, content, toolCalls?: [{id, type, function {name, arguments (a
//! JSON string)}}], usage?: {prompt_tokens, completion_tokens,
//! total_tokens, model}}`; `content` is a string or a list of
//! `{type: "text", text}` / `{type: "imageUrl", …}` parts. Tool results
//! are not messages of their own: they are the assistant item's
//! `toolCallStates` `[{toolCallId, toolCall, status, parsedArgs, output:
//! [{content, name, description}]}]`, `status` one of `generating`,
//! `generated`, `calling`, `done`, `errored`, `canceled`. Here the states
//! that ended (`done`, `errored`, `canceled`) are a `tool` message of their
//! own after the assistant's, as the OpenAI shape has them; a state that
//! did not leaves its call `running`.
//!
//! No timestamps and no CLI version are recorded: sessions are ordered by
//! their file name, and the model is the one named in a response's `usage`.

use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Foreign, Head, Layout, Line, Parsed, count_at, str_at};
use super::{Message, Part, PartKind, Tokens, ToolStatus};

pub(super) const LAYOUT: Layout = Layout {
    harness: "Continue CLI",
    sub: "sessions",
    pattern: "<id>.json",
    depth: 0,
    is_transcript: |name| name.ends_with(".json") && name != "sessions.json",
    recognize,
};

/// A `{"sessionId": …, "history": […]}` document.
fn recognize(lines: &[Line]) -> Result<(), Foreign> {
    let Some(doc) = lines.first() else {
        return Ok(());
    };
    let v = &doc.value;
    if v.get("sessionId").is_some_and(Value::is_string)
        && v.get("history").is_some_and(Value::is_array)
    {
        return Ok(());
    }
    Err((
        doc.no,
        "not a `{\"sessionId\":…,\"history\":[…]}` session document".into(),
    ))
}

pub(super) fn parse(path: &Path, lines: &[Line]) -> Parsed {
    let doc = lines.first().map(|l| &l.value).unwrap_or(&Value::Null);
    let mut head = Head {
        id: str_at(doc, "sessionId"),
        directory: str_at(doc, "workspaceDirectory"),
        ..Head::default()
    };
    let mut tokens = Tokens::default();
    let mut messages = Vec::new();
    let items = doc.get("history").and_then(Value::as_array);
    for (i, item) in items.into_iter().flatten().enumerate() {
        let Some(m) = item.get("message").filter(|m| m.is_object()) else {
            continue;
        };
        let msg = message(item, m, i);
        if let Some(u) = msg.usage {
            tokens += u;
        }
        if head.agent.model.is_none() {
            head.agent.model = m.get("usage").and_then(|u| str_at(u, "model"));
        }
        messages.push(msg);
        let states = item.get("toolCallStates").and_then(Value::as_array);
        let results: Vec<Part> = states
            .into_iter()
            .flatten()
            .filter_map(tool_result)
            .collect();
        if !results.is_empty() {
            messages.push(Message {
                id: format!("message-{i}-results"),
                role: "tool".into(),
                parts: results,
                data: item.get("toolCallStates").cloned().unwrap_or(Value::Null),
                usage: None,
            });
        }
    }
    let mut parsed = head.finish(path, tokens, messages);
    parsed.session.title = str_at(doc, "title");
    parsed
}

fn message(item: &Value, m: &Value, i: usize) -> Message {
    let mut parts = jsonl::content_parts(m.get("content"), content_part);
    parts.retain(|p| !matches!(&p.kind, PartKind::Text { text } if text.is_empty()));
    let calls = m.get("toolCalls").and_then(Value::as_array);
    parts.extend(calls.into_iter().flatten().map(tool_call));
    Message {
        id: str_at(m, "id").unwrap_or_else(|| format!("message-{i}")),
        role: str_at(m, "role").unwrap_or_default(),
        parts,
        data: item.clone(),
        usage: m.get("usage").map(tokens_of),
    }
}

/// One part of a `content` list.
fn content_part(b: &Value) -> Part {
    let kind = match b.get("type").and_then(Value::as_str) {
        Some("text") => PartKind::Text {
            text: str_at(b, "text").unwrap_or_default(),
        },
        other => PartKind::Other {
            name: other.map(str::to_owned),
        },
    };
    jsonl::part(b, kind)
}

/// An OpenAI-shaped tool call: `{id, function {name, arguments}}`.
fn tool_call(c: &Value) -> Part {
    let f = c.get("function").unwrap_or(&Value::Null);
    let input = match f.get("arguments") {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        other => other.cloned().unwrap_or(Value::Null),
    };
    jsonl::part(
        c,
        PartKind::ToolCall {
            tool: str_at(f, "name").unwrap_or_default(),
            call_id: str_at(c, "id"),
            status: ToolStatus::Running,
            input,
            output: None,
        },
    )
}

/// A tool call state that ended, as its result; `None` while it runs.
fn tool_result(s: &Value) -> Option<Part> {
    let is_error = match s.get("status").and_then(Value::as_str)? {
        "done" => false,
        "errored" | "canceled" => true,
        _ => return None,
    };
    let output = s.get("output").cloned().unwrap_or(Value::Null);
    Some(jsonl::part(
        s,
        PartKind::ToolResult {
            call_id: str_at(s, "toolCallId"),
            is_error,
            output,
        },
    ))
}

/// OpenAI-style counts (input includes cached input).
fn tokens_of(u: &Value) -> Tokens {
    let details = u.get("prompt_tokens_details").unwrap_or(&Value::Null);
    let mut t = Tokens {
        input: count_at(u, "prompt_tokens"),
        output: count_at(u, "completion_tokens"),
        reasoning: 0,
        cache_read: count_at(details, "cached_tokens"),
        cache_write: 0,
        total: count_at(u, "total_tokens"),
    };
    if t.total == 0 {
        t.total = super::sum(&[t.input, t.output]);
    }
    t
}
