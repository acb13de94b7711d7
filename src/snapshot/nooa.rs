//! NOOA: `nooa-state/transcript.json` in the session dir, written by the
//! bundle's boot.py (installers/bundles/nooa/boot.py), since NOOA keeps its
//! conversation in memory (its event manager): after every model response
//! (the chat messages sent and the answer, so a run cut off mid-cell leaves
//! its last call without a result) and at the end. Each write is a rename
//! over the file, so it is always one whole document.
//!
//! The document is `{model, messages, result}`: `messages` are the OpenAI
//! chat messages NOOA's litellm client sent (`system`, `user` with a string
//! or a list of `{type: "text", text}` blocks, `assistant` with `content`
//! and `tool_calls [{id, function: {name, arguments}}]`, `tool` with
//! `tool_call_id`); `result` is the turn's `{kind, explanation}` once it
//! ended, else null.
//!
//! Token usage (boot.py's additive fields; a transcript without them reads
//! the same, with no tokens): each assistant message that was one of the
//! client's answers carries `model` and `usage`, litellm's OpenAI usage
//! with only its integer fields (`prompt_tokens`, which include the cached
//! ones, `completion_tokens`, `total_tokens`,
//! `prompt_tokens_details.cached_tokens`,
//! `completion_tokens_details.reasoning_tokens`), and the document's
//! `usage`, the same fields summed over every answer (those NOOA no longer
//! sends included), is the session's tokens; without it, the messages'
//! usage summed. Older bundles (r1) put `model` on the last answer only.
//!
//! NOOA's CodeAct answers a cell in two messages: a `tool` message
//! (`status: complete`) and a `user` message `<sys tag="N">
//! PythonOutput(tool_call_id='ID', …)` holding the cell's output; the tool
//! result's output is that text when there is one. Its first call
//! (`prefill_…`) is NOOA's own cell printing the task's inputs. The
//! answer is the result's `explanation` (what boot.py prints): the text of
//! the last assistant message. No session id, directory or time is
//! recorded: the session is named by the file (`transcript`). The call
//! that ended the turn has no `tool` message (NOOA stops there): the
//! `result` is its result, as one more `tool` message (id `result`).

use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Foreign, Head, Layout, Line, Parsed, count_at, str_at};
use super::{Message, Part, PartKind, Tokens, ToolStatus};

pub(super) const LAYOUT: Layout = Layout {
    harness: "NOOA",
    sub: "nooa-state",
    pattern: "transcript.json",
    depth: 0,
    is_transcript: |name| name == "transcript.json",
    recognize,
};

/// An object with a `model` string and a `messages` list of objects with a
/// `role`.
fn recognize(lines: &[Line]) -> Result<(), Foreign> {
    let Some(doc) = lines.first() else {
        return Ok(());
    };
    let messages = doc.value.get("messages").and_then(Value::as_array);
    let ok = doc.value.get("model").is_some_and(Value::is_string)
        && messages.is_some_and(|ms| {
            ms.iter()
                .all(|m| m.get("role").is_some_and(Value::is_string))
        });
    if ok {
        return Ok(());
    }
    Err((
        doc.no,
        "not a `{\"model\":…, \"messages\":[{\"role\":…}, …]}` document".into(),
    ))
}

pub(super) fn parse(path: &Path, lines: &[Line]) -> Parsed {
    let doc = lines.first().map(|l| &l.value).unwrap_or(&Value::Null);
    let raw: Vec<&Value> = doc
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|m| m.is_object())
        .collect();
    let mut head = Head::default();
    head.agent.model = str_at(doc, "model").filter(|m| !m.is_empty());
    let mut messages: Vec<Message> = raw
        .iter()
        .enumerate()
        .map(|(i, v)| message(v, i, &raw))
        .collect();
    if let Some(result) = doc.get("result").filter(|r| r.is_object()) {
        finish(&mut messages, result);
    }
    let tokens = match doc.get("usage").filter(|u| u.is_object()) {
        Some(u) => tokens_of(u),
        None => {
            let mut sum = Tokens::default();
            messages
                .iter()
                .filter_map(|m| m.usage)
                .for_each(|u| sum += u);
            sum
        }
    };
    head.finish(path, tokens, messages)
}

/// litellm's OpenAI `usage` as [`Tokens`] (`prompt_tokens` include the
/// cached ones); a total it left out is input plus output.
fn tokens_of(u: &Value) -> Tokens {
    let detail = |at: &str| u.pointer(at).and_then(Value::as_u64).unwrap_or(0);
    let mut t = Tokens {
        input: count_at(u, "prompt_tokens"),
        output: count_at(u, "completion_tokens"),
        reasoning: detail("/completion_tokens_details/reasoning_tokens"),
        cache_read: detail("/prompt_tokens_details/cached_tokens"),
        cache_write: 0,
        total: count_at(u, "total_tokens"),
    };
    if t.total == 0 {
        t.total = super::sum(&[t.input, t.output]);
    }
    t
}

/// The turn ended with `result`: the last call of the last answer (the
/// `return_result` that ended it) gets it as its result, and its
/// explanation is that answer's text (see the module doc).
fn finish(messages: &mut Vec<Message>, result: &Value) {
    let Some(last) = messages.iter_mut().rev().find(|m| m.role == "assistant") else {
        return;
    };
    if let Some(text) = result.get("explanation").and_then(Value::as_str) {
        let text = text.to_owned();
        last.parts.push(jsonl::part(
            &Value::String(text.clone()),
            PartKind::Text { text },
        ));
    }
    let call_id = last.parts.iter().rev().find_map(|p| match &p.kind {
        PartKind::ToolCall { call_id, .. } => call_id.clone(),
        _ => None,
    });
    if call_id.is_none() {
        return;
    }
    let kind = PartKind::ToolResult {
        call_id,
        is_error: false,
        output: result.clone(),
    };
    messages.push(Message {
        id: "result".into(),
        role: "tool".into(),
        parts: vec![jsonl::part(result, kind)],
        data: result.clone(),
        usage: None,
    });
}

fn message(v: &Value, i: usize, all: &[&Value]) -> Message {
    let role = str_at(v, "role").unwrap_or_default();
    let mut parts = jsonl::content_parts(v.get("content"), content_block);
    match role.as_str() {
        "assistant" => {
            let calls = v.get("tool_calls").and_then(Value::as_array);
            parts.extend(calls.into_iter().flatten().map(tool_call));
        }
        "tool" => parts = vec![tool_result(v, all)],
        _ => {}
    }
    let usage = match role.as_str() {
        "assistant" => v.get("usage").filter(|u| u.is_object()).map(tokens_of),
        _ => None,
    };
    Message {
        id: format!("message-{i}"),
        role,
        parts,
        data: v.clone(),
        usage,
    }
}

/// A `{type: "text", text}` block (any other is kept by its type).
fn content_block(b: &Value) -> Part {
    match b.get("type").and_then(Value::as_str) {
        Some("text") => jsonl::part(
            b,
            PartKind::Text {
                text: str_at(b, "text").unwrap_or_default(),
            },
        ),
        other => jsonl::part(
            b,
            PartKind::Other {
                name: other.map(str::to_owned),
            },
        ),
    }
}

/// One `tool_calls` entry: its arguments are a JSON string as the model
/// sent it, kept as text when it is not JSON.
fn tool_call(c: &Value) -> Part {
    let f = &c["function"];
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

/// A `tool` message: its output is the cell's `PythonOutput` (see the
/// module doc), else its own content; an error when the cell's status is
/// not `complete`.
fn tool_result(v: &Value, all: &[&Value]) -> Part {
    let id = str_at(v, "tool_call_id");
    let own = v.get("content").cloned().unwrap_or(Value::Null);
    let printed = id.as_deref().and_then(|id| {
        let needle = format!("PythonOutput(tool_call_id='{id}'");
        all.iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .filter_map(|m| text_of(m.get("content")?))
            .find(|t| t.contains(&needle))
    });
    let is_error = own.as_str().is_some_and(|s| s != "status: complete");
    jsonl::part(
        v,
        PartKind::ToolResult {
            call_id: id,
            is_error,
            output: printed.map_or(own, Value::String),
        },
    )
}

/// A content's text: the string, or its text blocks joined.
fn text_of(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    }
}
