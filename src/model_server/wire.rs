//! What the three wire formats share: the reply body, ids and usage, SSE
//! framing and reading text out of content.

use serde_json::{Value, json};

use super::decide::Tool;

/// A response body: one JSON document, or SSE events (each already framed,
/// ending in a blank line).
#[derive(Debug)]
pub enum Body {
    /// `application/json`.
    Json(Value),
    /// `text/event-stream`.
    Sse(Vec<String>),
}

/// Token counts reported back (never zero: clients divide by them or treat
/// zero as "not reported").
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// Tokens "read": about a quarter of the request body's bytes.
    pub input: u64,
    /// Tokens "written": about a quarter of the reply's payload.
    pub output: u64,
}

/// Per-request facts the formats put into their replies.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    /// The request's number on this server (1, 2, ...), for unique ids.
    pub n: usize,
    /// Unix time of the request.
    pub created: u64,
    /// The token counts.
    pub usage: Usage,
}

/// A `data:`-only event (Chat Completions).
pub fn sse_data(data: &Value) -> String {
    format!("data: {data}\n\n")
}

/// A named event (Responses, Anthropic Messages).
pub fn sse_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// The text of message content: a string, or the `text` of each text block
/// (`text`, `input_text`, `output_text`) in a list; other blocks are skipped.
pub fn texts_of(content: &Value) -> Vec<String> {
    match content {
        Value::String(s) => vec![s.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| {
                matches!(
                    b["type"].as_str(),
                    None | Some("text" | "input_text" | "output_text")
                )
            })
            .filter_map(|b| b["text"].as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// An OpenAI function definition `{name, parameters}` (a Chat tool's
/// `function`, a legacy Chat `functions` entry, a Responses `function`
/// tool) as a tool; `None` without a name.
pub fn openai_function(def: &Value) -> Option<Tool> {
    Some(Tool {
        name: def["name"].as_str()?.to_owned(),
        schema: def.get("parameters").cloned().unwrap_or(json!({})),
    })
}
