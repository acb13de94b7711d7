//! GitHub Copilot CLI: `session-state/<id>/events.jsonl` under its home
//! (`COPILOT_HOME`, `~/.copilot`), one event a line, appended as the run
//! goes (the same events `--output-format json` prints, less the ephemeral
//! ones).
//!
//! Every line is `{type, data, id, timestamp, parentId}` (Copilot CLI
//! 1.0.102). The first is `session.start` `{sessionId, copilotVersion,
//! startTime, selectedModel, context {cwd}}`. Messages: `user.message
//! {content, transformedContent}`, `system.message {role, content}`,
//! `assistant.message {messageId, model, content, toolRequests:
//! [{toolCallId, name, arguments (an object)}]}`; a tool's result is
//! `tool.execution_complete {toolCallId, success, result {content}, error?}`
//! (a message of its own here, role `tool`). `session.usage_record {usage
//! {model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens}}`
//! comes before the assistant message of the response it counts, and is
//! put on it. Other events (turn markers, `tool.execution_start`,
//! `session.shutdown`, …) are not messages.

use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Foreign, Head, Layout, Line, Parsed, count_at, str_at};
use super::{AgentInfo, Message, PartKind, Tokens, ToolStatus};

pub(super) const LAYOUT: Layout = Layout {
    harness: "Copilot CLI",
    sub: "session-state",
    pattern: "*/events.jsonl",
    depth: 1,
    is_transcript: |name| name == "events.jsonl",
    recognize,
};

/// Every line typed, the first a `session.start`.
fn recognize(lines: &[Line]) -> Result<(), Foreign> {
    jsonl::first_typed(lines, "session.start")
}

pub(super) fn parse(path: &Path, lines: &[Line]) -> Parsed {
    let mut head = Head::default();
    let mut tokens = Tokens::default();
    let mut pending: Option<Tokens> = None;
    let mut messages = Vec::new();
    for line in lines {
        let v = &line.value;
        let data = v.get("data").unwrap_or(&Value::Null);
        let id = || str_at(v, "id").unwrap_or_else(|| jsonl::line_id(line));
        match v.get("type").and_then(Value::as_str).unwrap_or_default() {
            "session.start" => {
                head.id = str_at(data, "sessionId");
                head.started = str_at(data, "startTime");
                head.directory = data.get("context").and_then(|c| str_at(c, "cwd"));
                head.agent = AgentInfo {
                    version: str_at(data, "copilotVersion"),
                    model: str_at(data, "selectedModel"),
                };
            }
            "session.usage_record" => {
                let u = data.get("usage").unwrap_or(&Value::Null);
                let t = tokens_of(u);
                tokens += t;
                pending = Some(t);
            }
            "user.message" | "system.message" => {
                let role = if v["type"] == "user.message" {
                    "user"
                } else {
                    "system"
                };
                messages.push(text_message(v, id(), role, data));
            }
            "assistant.message" => {
                let mut parts = Vec::new();
                if let Some(text) = str_at(data, "content").filter(|t| !t.is_empty()) {
                    parts.push(jsonl::part(data, PartKind::Text { text }));
                }
                let calls = data.get("toolRequests").and_then(Value::as_array);
                for c in calls.into_iter().flatten() {
                    parts.push(jsonl::part(
                        c,
                        PartKind::ToolCall {
                            tool: str_at(c, "name").unwrap_or_default(),
                            call_id: str_at(c, "toolCallId"),
                            status: ToolStatus::Running,
                            input: c.get("arguments").cloned().unwrap_or(Value::Null),
                            output: None,
                        },
                    ));
                }
                messages.push(Message {
                    id: id(),
                    role: "assistant".into(),
                    parts,
                    data: v.clone(),
                    usage: pending.take(),
                });
            }
            "tool.execution_complete" => {
                let output = data
                    .get("result")
                    .or_else(|| data.get("error"))
                    .cloned()
                    .unwrap_or(Value::Null);
                let part = jsonl::part(
                    data,
                    PartKind::ToolResult {
                        call_id: str_at(data, "toolCallId"),
                        is_error: data.get("success") != Some(&Value::Bool(true)),
                        output,
                    },
                );
                messages.push(Message {
                    id: id(),
                    role: "tool".into(),
                    parts: vec![part],
                    data: v.clone(),
                    usage: None,
                });
            }
            _ => {}
        }
    }
    head.finish(path, tokens, messages)
}

fn text_message(v: &Value, id: String, role: &str, data: &Value) -> Message {
    let text = str_at(data, "content").unwrap_or_default();
    Message {
        id,
        role: role.into(),
        parts: vec![jsonl::part(data, PartKind::Text { text })],
        data: v.clone(),
        usage: None,
    }
}

/// Copilot's per-response counts (input includes cached input); it
/// records no total, so the total is input plus output.
fn tokens_of(u: &Value) -> Tokens {
    let mut t = Tokens {
        input: count_at(u, "inputTokens"),
        output: count_at(u, "outputTokens"),
        reasoning: 0,
        cache_read: count_at(u, "cacheReadTokens"),
        cache_write: count_at(u, "cacheWriteTokens"),
        total: 0,
    };
    t.total = super::sum(&[t.input, t.output]);
    t
}
