//! OpenAI Responses: `POST /v1/responses` (Pi's `openai-responses`,
//! OpenCode's `@ai-sdk/openai`, Codex).

use serde_json::{Value, json};

use super::decide::{Conversation, Decision};
use super::wire::{Body, Ctx, openai_function, sse_event, texts_of};

/// Read the parts of a Responses request the decision needs.
pub fn conversation(body: &Value) -> Conversation {
    let mut conv = Conversation::default();
    match &body["input"] {
        Value::String(s) => conv.user_texts.push(s.clone()),
        Value::Array(items) => {
            for item in items {
                let ty = item["type"].as_str().unwrap_or("message");
                if ty.ends_with("_call_output") {
                    conv.has_tool_result = true;
                } else if ty == "message" && item["role"] == "user" {
                    conv.user_texts.extend(texts_of(&item["content"]));
                }
            }
        }
        _ => {}
    }
    // Flat `{type:"function", name, parameters}`; built-in tools
    // (`web_search`, freeform `custom` ones) are not candidates.
    let tools = body["tools"].as_array().into_iter().flatten();
    let functions = tools.filter(|t| matches!(t["type"].as_str(), Some("function") | None));
    conv.tools.extend(functions.filter_map(openai_function));
    conv
}

/// The answer, whole or as the `response.*` event sequence.
pub fn reply(conv: &Conversation, decision: &Decision, ctx: &Ctx, _body: &Value) -> Body {
    let resp_id = format!("resp_shforge_{}", ctx.n);
    let response = |status: &str, output: Value, usage: Value| {
        json!({
            "id": resp_id,
            "object": "response",
            "created_at": ctx.created,
            "status": status,
            "error": null,
            "incomplete_details": null,
            "model": conv.model,
            "output": output,
            "parallel_tool_calls": true,
            "tool_choice": "auto",
            "tools": [],
            "usage": usage,
        })
    };
    let usage = json!({
        "input_tokens": ctx.usage.input,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": ctx.usage.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": ctx.usage.input + ctx.usage.output,
    });
    let item = match decision {
        Decision::Tool(call) => json!({
            "type": "function_call",
            "id": format!("fc_shforge_{}", ctx.n),
            "call_id": format!("call_shforge_{}", ctx.n),
            "name": call.name,
            "arguments": Value::Object(call.arguments.clone()).to_string(),
            "status": "completed",
        }),
        _ => json!({
            "type": "message",
            "id": format!("msg_shforge_{}", ctx.n),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": decision.text().unwrap_or_default(), "annotations": []}],
        }),
    };
    if !conv.stream {
        return Body::Json(response("completed", json!([item]), usage));
    }

    let mut events = Vec::new();
    let mut push = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(events.len());
        events.push(sse_event(name, &data));
    };
    push(
        "response.created",
        json!({"response": response("in_progress", json!([]), Value::Null)}),
    );
    push(
        "response.in_progress",
        json!({"response": response("in_progress", json!([]), Value::Null)}),
    );
    let item_id = item["id"].clone();
    let mut added = item.clone();
    added["status"] = json!("in_progress");
    if let Decision::Tool(_) = decision {
        let arguments = item["arguments"].clone();
        added["arguments"] = json!("");
        push(
            "response.output_item.added",
            json!({"output_index": 0, "item": added}),
        );
        push(
            "response.function_call_arguments.delta",
            json!({"item_id": item_id, "output_index": 0, "delta": arguments}),
        );
        push(
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": 0, "arguments": arguments}),
        );
    } else {
        let part = item["content"][0].clone();
        let text = part["text"].clone();
        added["content"] = json!([]);
        push(
            "response.output_item.added",
            json!({"output_index": 0, "item": added}),
        );
        let at = json!({"item_id": item_id, "output_index": 0, "content_index": 0});
        let with = |mut v: Value, k: &str, x: Value| {
            v[k] = x;
            v
        };
        push(
            "response.content_part.added",
            with(
                at.clone(),
                "part",
                json!({"type": "output_text", "text": "", "annotations": []}),
            ),
        );
        push(
            "response.output_text.delta",
            with(at.clone(), "delta", text.clone()),
        );
        push("response.output_text.done", with(at.clone(), "text", text));
        push("response.content_part.done", with(at, "part", part));
    }
    push(
        "response.output_item.done",
        json!({"output_index": 0, "item": item}),
    );
    push(
        "response.completed",
        json!({"response": response("completed", json!([item]), usage)}),
    );
    Body::Sse(events)
}
