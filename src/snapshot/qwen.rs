//! Qwen Code: `projects/<cwd, / as ->/chats/<session id>.jsonl` under
//! `QWEN_HOME`.
//!
//! Lines have Claude Code's keys (`uuid`, `parentUuid`, `sessionId`,
//! `timestamp`, `type`, `cwd`, `version`), but a `user`, `assistant` or
//! `tool_result` line's `message` is a Gemini API content: `{role, parts}`
//! with parts `{text}` (`thought: true` for reasoning), `{functionCall {id,
//! name, args}}` and `{functionResponse {id, name, response}}`. Tokens are
//! the line's `usageMetadata` (Gemini's names), one per model reply.
//! `system` lines (`ui_telemetry`, `attribution_snapshot`) are bookkeeping.

use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Foreign, Head, Layout, Line, Parsed, count_at, str_at};
use super::{Message, Part, PartKind, Tokens, ToolStatus};

pub(super) const LAYOUT: Layout = Layout {
    harness: "Qwen Code",
    sub: "projects",
    pattern: "*/chats/*.jsonl",
    depth: 2,
    is_transcript: |name| name.ends_with(".jsonl"),
    recognize,
};

/// Every line has a `type` and the `sessionId`, and a message line's
/// `message` has `parts` (an array): Claude Code's have `content` instead.
fn recognize(lines: &[Line]) -> Result<(), Foreign> {
    jsonl::untyped(lines)?;
    for l in lines {
        let v = &l.value;
        if !v["sessionId"].is_string() {
            return Err((l.no, "a line without a `sessionId`".into()));
        }
        if v.get("message").is_some() && !v["message"]["parts"].is_array() {
            return Err((l.no, "a `message` without `parts` (an array)".into()));
        }
    }
    Ok(())
}

pub(super) fn parse(path: &Path, lines: &[Line]) -> Parsed {
    let mut head = Head::default();
    let mut messages = Vec::new();
    let mut total = Tokens::default();
    for line in lines {
        let v = &line.value;
        head.id = head.id.or_else(|| str_at(v, "sessionId"));
        head.directory = head.directory.or_else(|| str_at(v, "cwd"));
        head.started = head.started.or_else(|| str_at(v, "timestamp"));
        head.agent.version = head.agent.version.take().or_else(|| str_at(v, "version"));
        let Some(message) = v.get("message") else {
            continue;
        };
        let role = match str_at(message, "role").as_deref() {
            Some("model") => "assistant".to_owned(),
            Some(r) => r.to_owned(),
            None => str_at(v, "type").unwrap_or_default(),
        };
        let usage = v.get("usageMetadata").map(tokens);
        if let Some(t) = usage {
            total += t;
        }
        let parts = message["parts"]
            .as_array()
            .map(|ps| ps.iter().map(part).collect())
            .unwrap_or_default();
        messages.push(Message {
            id: str_at(v, "uuid").unwrap_or_else(|| jsonl::line_id(line)),
            role,
            parts,
            data: v.clone(),
            usage,
        });
    }
    head.finish(path, total, messages)
}

fn part(p: &Value) -> Part {
    let kind = if let Some(call) = p.get("functionCall") {
        PartKind::ToolCall {
            tool: str_at(call, "name").unwrap_or_default(),
            call_id: str_at(call, "id"),
            status: ToolStatus::Running,
            input: call.get("args").cloned().unwrap_or(Value::Null),
            output: None,
        }
    } else if let Some(resp) = p.get("functionResponse") {
        let response = resp.get("response").cloned().unwrap_or(Value::Null);
        PartKind::ToolResult {
            call_id: str_at(resp, "id"),
            is_error: response.get("error").is_some_and(|e| !e.is_null()),
            output: response,
        }
    } else if let Some(text) = str_at(p, "text") {
        if p.get("thought").and_then(Value::as_bool) == Some(true) {
            PartKind::Reasoning { text }
        } else {
            PartKind::Text { text }
        }
    } else {
        PartKind::Other { name: None }
    };
    jsonl::part(p, kind)
}

/// Gemini `usageMetadata`: the prompt count includes the cached tokens,
/// the candidates exclude the thoughts; the total is Qwen's own.
fn tokens(u: &Value) -> Tokens {
    let cache_read = count_at(u, "cachedContentTokenCount");
    Tokens {
        input: count_at(u, "promptTokenCount").saturating_sub(cache_read),
        output: count_at(u, "candidatesTokenCount"),
        reasoning: count_at(u, "thoughtsTokenCount"),
        cache_read,
        cache_write: 0,
        total: count_at(u, "totalTokenCount"),
    }
}
