//! OpenAI Chat Completions: `POST /v1/chat/completions`.

use serde_json::{Value, json};

use super::decide::{Conversation, Decision};
use super::wire::{Body, Ctx, openai_function, sse_data, texts_of};

/// Read the parts of a chat request the decision needs.
pub fn conversation(body: &Value) -> Conversation {
    let mut conv = Conversation::default();
    for msg in body["messages"].as_array().into_iter().flatten() {
        match msg["role"].as_str() {
            Some("user") => conv.user_texts.extend(texts_of(&msg["content"])),
            Some("tool" | "function") if !is_prefill(msg) => conv.has_tool_result = true,
            _ => {}
        }
    }
    // `tools: [{type:"function", function:{name, parameters}}]`, or the
    // older `functions: [{name, parameters}]`.
    let tools = body["tools"].as_array().into_iter().flatten();
    let functions = body["functions"].as_array().into_iter().flatten();
    let defs = tools.map(|t| &t["function"]).chain(functions);
    conv.tools.extend(defs.filter_map(openai_function));
    conv
}

/// NOOA's CodeAct runs a cell of its own before the first model call (an
/// `execute_python` call with the id `prefill_…`, printing the task's
/// inputs): its result answers no call the model made.
fn is_prefill(msg: &Value) -> bool {
    msg["tool_call_id"]
        .as_str()
        .is_some_and(|id| id.starts_with("prefill_"))
}

/// The answer, whole or as `chat.completion.chunk` events.
pub fn reply(conv: &Conversation, decision: &Decision, ctx: &Ctx, body: &Value) -> Body {
    let id = format!("chatcmpl-shforge-{}", ctx.n);
    let (message, delta, finish) = match decision {
        Decision::Tool(call) => {
            let tc = json!({
                "id": format!("call_shforge_{}", ctx.n),
                "type": "function",
                "function": {"name": call.name, "arguments": Value::Object(call.arguments.clone()).to_string()},
            });
            let mut streamed = tc.clone();
            streamed["index"] = json!(0);
            (
                json!({"role": "assistant", "content": null, "tool_calls": [tc]}),
                json!({"tool_calls": [streamed]}),
                "tool_calls",
            )
        }
        _ => {
            let text = decision.text().unwrap_or_default();
            (
                json!({"role": "assistant", "content": text}),
                json!({"content": text}),
                "stop",
            )
        }
    };
    let usage = json!({
        "prompt_tokens": ctx.usage.input,
        "completion_tokens": ctx.usage.output,
        "total_tokens": ctx.usage.input + ctx.usage.output,
    });
    if !conv.stream {
        return Body::Json(json!({
            "id": id,
            "object": "chat.completion",
            "created": ctx.created,
            "model": conv.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}],
            "usage": usage,
        }));
    }
    let chunk = |choices: Value| {
        json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": conv.model,
            "choices": choices,
        })
    };
    let mut events = vec![
        sse_data(&chunk(json!([{
            "index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null,
        }]))),
        sse_data(&chunk(
            json!([{"index": 0, "delta": delta, "finish_reason": null}]),
        )),
        sse_data(&chunk(
            json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
        )),
    ];
    if body["stream_options"]["include_usage"] == json!(true) {
        let mut last = chunk(json!([]));
        last["usage"] = usage;
        events.push(sse_data(&last));
    }
    events.push("data: [DONE]\n\n".to_owned());
    Body::Sse(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nooa_prefill_result_is_not_a_tool_result_of_the_model() {
        let body = |id: &str| {
            json!({"messages": [
                {"role": "user", "content": "shforge-token=t"},
                {"role": "assistant", "tool_calls": [{"id": id, "type": "function",
                    "function": {"name": "execute_python", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": id, "content": "status: complete"}
            ]})
        };
        assert!(!conversation(&body("prefill_fa20063a")).has_tool_result);
        assert!(conversation(&body("call_shforge_1")).has_tool_result);
    }
}
