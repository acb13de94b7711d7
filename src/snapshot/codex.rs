//! Codex: `CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`.
//!
//! Each line is `{timestamp, type, payload}`:
//! * `session_meta`: `payload {id, cwd, timestamp, cli_version, …}`;
//! * `response_item`: the Responses API items the model saw: `message
//!   {role, content: [input_text|output_text]}`, `reasoning`,
//!   `function_call {name, arguments (a JSON string), call_id}`,
//!   `custom_tool_call`, `function_call_output {call_id, output}`, …;
//! * `event_msg`: the UI's events (`task_started`, `item_completed`,
//!   `token_count`, …), which repeat the items: only an `item_completed`
//!   whose item `status` is `failed`/`declined` is used, to mark that
//!   call's result as an error;
//! * `token_usage_record`: one per model response, `payload.usage
//!   {input_tokens, cached_input_tokens, cache_write_input_tokens,
//!   output_tokens, reasoning_output_tokens, total_tokens}`;
//! * `turn_context`, `world_state`: settings, not messages.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Head, Layout, Line, Parsed, count_at, str_at};
use super::{AgentInfo, Message, Part, PartKind, Tokens, ToolStatus};

pub(super) const LAYOUT: Layout = Layout {
    harness: "Codex",
    sub: "sessions",
    pattern: "YYYY/MM/DD/rollout-*.jsonl",
    depth: 3,
    is_transcript: |name| name.starts_with("rollout-") && name.ends_with(".jsonl"),
    recognize: |lines| jsonl::first_typed(lines, "session_meta"),
};

pub(super) fn parse(path: &Path, lines: &[Line]) -> Parsed {
    let mut head = Head::default();
    let mut messages = Vec::new();
    let mut recorded = Tokens::default();
    let mut any_record = false;
    let mut last_count = None;
    let mut failed = HashSet::new();
    for line in lines {
        let v = &line.value;
        let payload = v.get("payload").unwrap_or(&Value::Null);
        match v.get("type").and_then(Value::as_str) {
            Some("session_meta") if head.id.is_none() => {
                head = Head {
                    id: str_at(payload, "id"),
                    directory: str_at(payload, "cwd"),
                    started: str_at(payload, "timestamp").or_else(|| str_at(v, "timestamp")),
                    agent: AgentInfo {
                        version: str_at(payload, "cli_version"),
                        model: head.agent.model.take(),
                    },
                };
            }
            Some("turn_context") if head.agent.model.is_none() => {
                head.agent.model = str_at(payload, "model");
            }
            Some("response_item") => messages.push(item_message(line, payload)),
            Some("token_usage_record") => {
                if let Some(u) = payload.get("usage") {
                    recorded += usage(u);
                    any_record = true;
                    // The record follows the response's last item.
                    if let Some(last) = messages.last_mut()
                        && last.role == "assistant"
                        && last.usage.is_none()
                    {
                        last.usage = Some(usage(u));
                    }
                }
            }
            Some("event_msg") => match payload.get("type").and_then(Value::as_str) {
                Some("token_count") => {
                    last_count = payload
                        .get("info")
                        .and_then(|i| i.get("total_token_usage"))
                        .map(usage)
                        .or(last_count);
                }
                Some("item_completed") => {
                    let item = payload.get("item").unwrap_or(&Value::Null);
                    if matches!(
                        item.get("status").and_then(Value::as_str),
                        Some("failed" | "declined")
                    ) && let Some(call) = str_at(item, "id")
                    {
                        failed.insert(call);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    mark_failed(&mut messages, &failed);
    let tokens = if any_record {
        recorded
    } else {
        last_count.unwrap_or_default()
    };
    head.finish(path, tokens, messages)
}

/// One `response_item` as a message. Items without a role (calls,
/// reasoning) are the assistant's; call outputs are the `tool` role's.
fn item_message(line: &Line, item: &Value) -> Message {
    let kind = item.get("type").and_then(Value::as_str);
    let (role, parts) = match kind {
        Some("message") => (
            str_at(item, "role").unwrap_or_default(),
            item.get("content")
                .and_then(Value::as_array)
                .map(|blocks| blocks.iter().map(content_part).collect())
                .unwrap_or_default(),
        ),
        Some("function_call_output" | "custom_tool_call_output") => (
            "tool".to_owned(),
            vec![jsonl::part(item, tool_result(item))],
        ),
        _ => (
            "assistant".to_owned(),
            vec![jsonl::part(item, item_kind(kind, item))],
        ),
    };
    Message {
        id: str_at(item, "id").unwrap_or_else(|| jsonl::line_id(line)),
        role,
        parts,
        data: line.value.clone(),
        usage: None,
    }
}

fn content_part(block: &Value) -> Part {
    let kind = match block.get("type").and_then(Value::as_str) {
        Some("input_text" | "output_text" | "text") => PartKind::Text {
            text: str_at(block, "text").unwrap_or_default(),
        },
        other => PartKind::Other {
            name: other.map(str::to_owned),
        },
    };
    jsonl::part(block, kind)
}

fn item_kind(kind: Option<&str>, item: &Value) -> PartKind {
    let call = |input: Value| PartKind::ToolCall {
        tool: str_at(item, "name").unwrap_or_default(),
        call_id: str_at(item, "call_id"),
        status: ToolStatus::Running,
        input,
        output: None,
    };
    match kind {
        // The arguments are a JSON document in a string.
        Some("function_call") => call(match item.get("arguments") {
            Some(Value::String(s)) => {
                serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
            }
            Some(other) => other.clone(),
            None => Value::Null,
        }),
        Some("custom_tool_call") => call(item.get("input").cloned().unwrap_or(Value::Null)),
        Some("reasoning") => {
            let texts = |key| {
                item.get(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
            };
            let mut text = texts("summary");
            text.extend(texts("content"));
            PartKind::Reasoning {
                text: text.join("\n"),
            }
        }
        other => PartKind::Other {
            name: other.map(str::to_owned),
        },
    }
}

fn tool_result(item: &Value) -> PartKind {
    PartKind::ToolResult {
        call_id: str_at(item, "call_id"),
        is_error: false,
        output: item.get("output").cloned().unwrap_or(Value::Null),
    }
}

/// Results whose call Codex reported as failed or declined are errors.
fn mark_failed(messages: &mut [Message], failed: &HashSet<String>) {
    for part in messages.iter_mut().flat_map(|m| &mut m.parts) {
        if let PartKind::ToolResult {
            call_id: Some(id),
            is_error,
            ..
        } = &mut part.kind
            && failed.contains(id.as_str())
        {
            *is_error = true;
        }
    }
}

/// OpenAI-style usage: `input_tokens` includes the cached ones.
fn usage(u: &Value) -> Tokens {
    let mut t = Tokens {
        input: count_at(u, "input_tokens"),
        output: count_at(u, "output_tokens"),
        reasoning: count_at(u, "reasoning_output_tokens"),
        cache_read: count_at(u, "cached_input_tokens"),
        cache_write: count_at(u, "cache_write_input_tokens"),
        total: count_at(u, "total_tokens"),
    };
    if t.total == 0 {
        t.total = super::sum(&[t.input, t.output]);
    }
    t
}
