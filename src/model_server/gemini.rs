//! Google Gemini API: `POST /v1beta/models/MODEL:generateContent` and
//! `:streamGenerateContent` (SSE with `?alt=sse`, else a JSON array of
//! chunks), as Gemini CLI (`@google/genai`) sends them.
//!
//! The model is named by the path, not the body; function declarations
//! come in `tools[].functionDeclarations[]` with `parametersJsonSchema`
//! (JSON Schema) or `parameters` (Gemini's OpenAPI subset, upper-case
//! types); a function's result comes back as a `functionResponse` part.

use serde_json::{Value, json};

use super::decide::{Conversation, Decision, Tool};
use super::wire::{Body, Ctx, sse_data};

/// What a Gemini path asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    /// The model named by the path (`gemini-2.5-pro`).
    pub model: String,
    /// `streamGenerateContent` rather than `generateContent`.
    pub stream: bool,
    /// `countTokens`.
    pub count: bool,
}

/// Parse `/v1beta/models/MODEL:METHOD` (also `/v1/…`, `/v1alpha/…`; the
/// colon may come percent-encoded). `None` for other paths and methods.
pub fn method(path: &str) -> Option<Method> {
    let rest = ["/v1beta/models/", "/v1/models/", "/v1alpha/models/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))?;
    let rest = rest.replace("%3A", ":").replace("%3a", ":");
    let (model, verb) = rest.rsplit_once(':')?;
    if model.is_empty() {
        return None;
    }
    let (stream, count) = match verb {
        "generateContent" => (false, false),
        "streamGenerateContent" => (true, false),
        "countTokens" => (false, true),
        _ => return None,
    };
    Some(Method {
        model: model.to_owned(),
        stream,
        count,
    })
}

/// Read the parts of a request the decision needs.
pub fn conversation(body: &Value) -> Conversation {
    let mut conv = Conversation::default();
    for content in body["contents"].as_array().into_iter().flatten() {
        let parts = content["parts"].as_array().into_iter().flatten();
        let user = matches!(content["role"].as_str(), None | Some("user"));
        for part in parts {
            if part.get("functionResponse").is_some() {
                conv.has_tool_result = true;
            } else if user
                && part.get("thought") != Some(&json!(true))
                && let Some(text) = part["text"].as_str()
            {
                conv.user_texts.push(text.to_owned());
            }
        }
    }
    let tools = body["tools"].as_array().into_iter().flatten();
    let decls = tools.flat_map(|t| t["functionDeclarations"].as_array().into_iter().flatten());
    conv.tools.extend(decls.filter_map(|d| {
        let schema = d
            .get("parametersJsonSchema")
            .or_else(|| d.get("parameters"))
            .cloned()
            .unwrap_or(json!({}));
        Some(Tool {
            name: d["name"].as_str()?.to_owned(),
            schema,
        })
    }));
    conv
}

/// The `usageMetadata` object.
fn usage(ctx: &Ctx) -> Value {
    json!({
        "promptTokenCount": ctx.usage.input,
        "candidatesTokenCount": ctx.usage.output,
        "totalTokenCount": ctx.usage.input + ctx.usage.output,
    })
}

/// The answer: one `GenerateContentResponse`, or for a stream the same as
/// chunks — SSE events when `sse`, else a JSON array (what the API sends
/// without `alt=sse`). A text streams as its text then an empty final part
/// with `finishReason` and usage, the way the real API ends a stream; a
/// function call arrives whole in one chunk, as the real API sends it.
pub fn reply(conv: &Conversation, decision: &Decision, ctx: &Ctx, sse: bool) -> Body {
    let response = |parts: Value, finish: Option<&str>, with_usage: bool| {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(f) = finish {
            candidate["finishReason"] = json!(f);
        }
        let mut r = json!({
            "candidates": [candidate],
            "modelVersion": conv.model,
            "responseId": format!("shforge-gemini-{}", ctx.n),
        });
        if with_usage {
            r["usageMetadata"] = usage(ctx);
        }
        r
    };
    let chunks = match decision {
        Decision::Tool(call) => {
            let part = json!({"functionCall": {
                "name": call.name,
                "args": Value::Object(call.arguments.clone()),
            }});
            vec![response(json!([part]), Some("STOP"), true)]
        }
        _ => {
            let text = decision.text().unwrap_or_default();
            if !conv.stream {
                return Body::Json(response(json!([{"text": text}]), Some("STOP"), true));
            }
            vec![
                response(json!([{"text": text}]), None, false),
                response(json!([{"text": ""}]), Some("STOP"), true),
            ]
        }
    };
    if !conv.stream {
        return Body::Json(chunks.into_iter().next().unwrap_or_default());
    }
    if sse {
        Body::Sse(chunks.iter().map(sse_data).collect())
    } else {
        Body::Json(Value::Array(chunks))
    }
}

/// The answer to `:countTokens`: about a quarter of the body's bytes.
pub fn count_tokens(body_len: usize) -> Value {
    json!({"totalTokens": (body_len as u64 / 4).max(1)})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            method("/v1beta/models/gemini-2.5-pro:streamGenerateContent"),
            Some(Method {
                model: "gemini-2.5-pro".into(),
                stream: true,
                count: false
            })
        );
        assert_eq!(
            method("/v1/models/m%3AgenerateContent").map(|m| (m.model, m.stream)),
            Some(("m".into(), false))
        );
        assert!(method("/v1beta/models/m:countTokens").is_some_and(|m| m.count));
        for bad in [
            "/v1beta/models/:generateContent",
            "/v1beta/models/m",
            "/v1beta/models/m:embedContent",
            "/v2/models/m:generateContent",
        ] {
            assert_eq!(method(bad), None, "{bad}");
        }
    }

    #[test]
    fn conversation_reads_parts_declarations_and_results() {
        let body = json!({
            "contents": [
                {"role": "user", "parts": [{"text": "do it shforge-token=t"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "write_file", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "write_file", "response": {"output": "ok"}}}]},
            ],
            "tools": [
                {"functionDeclarations": [
                    {"name": "write_file", "parametersJsonSchema": {"type": "object", "properties": {"file_path": {"type": "string"}}}},
                    {"name": "old_style", "parameters": {"type": "OBJECT", "properties": {}}},
                ]},
                {"googleSearch": {}},
            ],
        });
        let conv = conversation(&body);
        assert_eq!(conv.user_texts, ["do it shforge-token=t"]);
        assert!(conv.has_tool_result);
        let names: Vec<_> = conv.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["write_file", "old_style"]);
        assert_eq!(conv.tools[1].schema["type"], "OBJECT");
    }
}
