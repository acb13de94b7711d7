//! Anthropic Messages: `POST /v1/messages` (Claude Code, Pi's and OpenCode's
//! Anthropic providers).

use serde_json::{Value, json};

use super::decide::{Conversation, Decision, Tool};
use super::wire::{Body, Ctx, sse_event, texts_of};

/// Read the parts of a Messages request the decision needs. Entries with
/// other roles (Claude Code puts a `{"role":"system"}` one in `messages`)
/// are tolerated and skipped.
pub fn conversation(body: &Value) -> Conversation {
    let mut conv = Conversation::default();
    for msg in body["messages"].as_array().into_iter().flatten() {
        if msg["role"] != "user" {
            continue;
        }
        conv.user_texts.extend(texts_of(&msg["content"]));
        if msg["content"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|b| b["type"] == "tool_result")
        {
            conv.has_tool_result = true;
        }
    }
    // Client tools have an `input_schema`; server tools (`web_search_…`) do not.
    for t in body["tools"].as_array().into_iter().flatten() {
        if let (Some(name), Some(schema)) = (t["name"].as_str(), t.get("input_schema")) {
            conv.tools.push(Tool {
                name: name.to_owned(),
                schema: schema.clone(),
            });
        }
    }
    conv
}

/// The answer, whole or as the `message_*`/`content_block_*` event sequence.
pub fn reply(conv: &Conversation, decision: &Decision, ctx: &Ctx, _body: &Value) -> Body {
    let (block, stop_reason) = match decision {
        Decision::Tool(call) => (
            json!({
                "type": "tool_use",
                "id": format!("toolu_shforge_{}", ctx.n),
                "name": call.name,
                "input": Value::Object(call.arguments.clone()),
            }),
            "tool_use",
        ),
        _ => (
            json!({"type": "text", "text": decision.text().unwrap_or_default()}),
            "end_turn",
        ),
    };
    let message = |content: Value, stop: Value, output_tokens: u64| {
        json!({
            "id": format!("msg_shforge_{}", ctx.n),
            "type": "message",
            "role": "assistant",
            "model": conv.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": null,
            "usage": {
                "input_tokens": ctx.usage.input,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        })
    };
    if !conv.stream {
        return Body::Json(message(
            json!([block]),
            json!(stop_reason),
            ctx.usage.output,
        ));
    }
    let mut events = Vec::new();
    let mut push = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        events.push(sse_event(name, &data));
    };
    push(
        "message_start",
        json!({"message": message(json!([]), Value::Null, 1)}),
    );
    let (start, delta) = if block["type"] == "tool_use" {
        let mut start = block.clone();
        start["input"] = json!({});
        let whole = block["input"].to_string();
        (
            start,
            json!({"type": "input_json_delta", "partial_json": whole}),
        )
    } else {
        (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": block["text"]}),
        )
    };
    push(
        "content_block_start",
        json!({"index": 0, "content_block": start}),
    );
    push("content_block_delta", json!({"index": 0, "delta": delta}));
    push("content_block_stop", json!({"index": 0}));
    push(
        "message_delta",
        json!({
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"input_tokens": ctx.usage.input, "output_tokens": ctx.usage.output},
        }),
    );
    push("message_stop", json!({}));
    Body::Sse(events)
}
