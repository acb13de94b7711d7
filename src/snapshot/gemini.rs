//! Gemini CLI: `tmp/<project>/chats/session-<time>-<id>.jsonl` under its
//! `.gemini` dir (`GEMINI_CLI_HOME/.gemini`).
//!
//! The first line is the header `{sessionId, projectHash, startTime,
//! lastUpdated, kind}` (no `type`). Then message lines `{id, timestamp,
//! type, content, …}` and `{"$set": {…}}` patch lines. A message line whose
//! `id` was seen replaces that message in place (Gemini CLI writes a model
//! turn again once its tool calls are recorded); a `$set` with `messages`
//! replaces the whole list (it carries the session-context turn). Types:
//! `user` (content `[{text}]` or `[{functionResponse {id, name,
//! response}}]`), `gemini` (the model: `content` text, `thoughts`,
//! `toolCalls [{id, name, args, result, status}]`, `tokens {input, output,
//! cached, thoughts, tool, total}`, `model`), and `info`/`error`/`warning`
//! notes. `gemini` is the summary's `assistant`; the raw type stays in
//! `data`.

use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Foreign, Head, Layout, Line, Parsed, count_at, str_at};
use super::{AgentInfo, Message, Part, PartKind, Tokens, ToolStatus};

pub(super) const LAYOUT: Layout = Layout {
    harness: "Gemini CLI",
    sub: "tmp",
    pattern: "*/chats/session-*.jsonl",
    depth: 2,
    is_transcript: |name| name.starts_with("session-") && name.ends_with(".jsonl"),
    recognize,
};

/// The header first, then only message and `$set` lines.
fn recognize(lines: &[Line]) -> Result<(), Foreign> {
    let Some(first) = lines.first() else {
        return Ok(());
    };
    let is_str = |v: &Value, k: &str| v.get(k).is_some_and(Value::is_string);
    let header = is_str(&first.value, "sessionId")
        && is_str(&first.value, "projectHash")
        && first.value.get("type").is_none();
    if !header {
        return Err((
            first.no,
            "its first line is not a `{\"sessionId\":…,\"projectHash\":…}` header".into(),
        ));
    }
    for l in &lines[1..] {
        let v = &l.value;
        let patch = v.get("$set").is_some_and(Value::is_object);
        let message = is_str(v, "id") && is_str(v, "type");
        if !(patch || message) {
            return Err((l.no, "a line that is neither a message nor a `$set`".into()));
        }
    }
    Ok(())
}

pub(super) fn parse(path: &Path, lines: &[Line]) -> Parsed {
    let mut head = Head::default();
    let mut raw: Vec<Value> = Vec::new();
    for line in lines {
        let v = &line.value;
        if head.id.is_none() && v.get("sessionId").is_some() {
            head.id = str_at(v, "sessionId");
            head.started = str_at(v, "startTime");
        } else if let Some(set) = v.get("$set") {
            if let Some(Value::Array(all)) = set.get("messages") {
                raw = all.iter().filter(|m| m.is_object()).cloned().collect();
            }
        } else {
            match raw.iter_mut().find(|m| m.get("id") == v.get("id")) {
                Some(m) => *m = v.clone(),
                None => raw.push(v.clone()),
            }
        }
    }
    let mut tokens = Tokens::default();
    let mut messages = Vec::new();
    for (i, v) in raw.iter().enumerate() {
        let m = message(v, i);
        if let Some(u) = m.usage {
            tokens += u;
        }
        if head.agent.model.is_none() && m.role == "assistant" {
            head.agent = AgentInfo {
                version: None,
                model: str_at(v, "model"),
            };
        }
        messages.push(m);
    }
    head.finish(path, tokens, messages)
}

fn message(v: &Value, i: usize) -> Message {
    let kind = str_at(v, "type").unwrap_or_default();
    let mut parts = Vec::new();
    let mut usage = None;
    if kind == "gemini" {
        for t in v
            .get("thoughts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let text = [str_at(t, "subject"), str_at(t, "description")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n");
            parts.push(jsonl::part(t, PartKind::Reasoning { text }));
        }
        if let Some(text) = v.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            parts.push(jsonl::part(
                &v["content"],
                PartKind::Text { text: text.into() },
            ));
        }
        for c in v
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            parts.push(tool_call(c));
        }
        usage = v.get("tokens").map(tokens_of);
    } else {
        match v.get("content") {
            Some(Value::Array(blocks)) => parts.extend(blocks.iter().map(block)),
            Some(text @ Value::String(s)) => {
                parts.push(jsonl::part(text, PartKind::Text { text: s.clone() }));
            }
            _ => {}
        }
    }
    Message {
        id: str_at(v, "id").unwrap_or_else(|| format!("message-{i}")),
        role: if kind == "gemini" {
            "assistant".into()
        } else {
            kind
        },
        parts,
        data: v.clone(),
        usage,
    }
}

/// A user turn's block: text, or a tool's `functionResponse`.
fn block(b: &Value) -> Part {
    if let Some(text) = b.get("text").and_then(Value::as_str) {
        return jsonl::part(b, PartKind::Text { text: text.into() });
    }
    if let Some(r) = b.get("functionResponse") {
        let response = r.get("response").cloned().unwrap_or(Value::Null);
        return jsonl::part(
            b,
            PartKind::ToolResult {
                call_id: str_at(r, "id"),
                is_error: response.get("error").is_some(),
                output: response,
            },
        );
    }
    jsonl::part(b, PartKind::Other { name: None })
}

/// A recorded call; its status is set again from the result that answers
/// it ([`jsonl::pair_tool_results`]): a call without one was cut off.
fn tool_call(c: &Value) -> Part {
    let status = match c.get("status").and_then(Value::as_str) {
        Some("success") => ToolStatus::Completed,
        Some("error" | "cancelled") => ToolStatus::Error,
        _ => ToolStatus::Running,
    };
    jsonl::part(
        c,
        PartKind::ToolCall {
            tool: str_at(c, "name").unwrap_or_default(),
            call_id: str_at(c, "id"),
            status,
            input: c.get("args").cloned().unwrap_or(Value::Null),
            output: c.get("result").cloned(),
        },
    )
}

/// Gemini's counts: `input` is the prompt with its cached part (like
/// OpenAI's), `thoughts` the reasoning, `output` the rest of the reply.
fn tokens_of(u: &Value) -> Tokens {
    let mut t = Tokens {
        input: count_at(u, "input"),
        output: count_at(u, "output"),
        reasoning: count_at(u, "thoughts"),
        cache_read: count_at(u, "cached"),
        cache_write: 0,
        total: count_at(u, "total"),
    };
    if t.total == 0 {
        t.total = super::sum(&[t.input, t.output, t.reasoning]);
    }
    t
}
