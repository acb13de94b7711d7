//! The fake model server over real loopback HTTP: curl (an independent
//! client) and raw sockets drive it with the request shapes the real CLIs
//! send (as captured from Pi, OpenCode, Kilo, Claude Code, OpenClaw and
//! Codex against this server; docs/fake-model-server.md), and the shell commands it hands out are run
//! under every POSIX shell of the matrix.

use crate::support;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use shforge::model_server::{
    DEFAULT_TARGET, DEFAULT_TOKEN, Directives, PLAIN_TEXT, Prefer, RunningServer, ServerConfig,
};

// ---------------------------------------------------------------- clients

/// curl, or a loud skip (a failure under SHFORGE_REQUIRE_SHELLS=1).
fn have_curl(test: &str) -> bool {
    support::require_tool(test, "curl")
}

/// A response as curl saw it.
#[derive(Debug)]
struct Reply {
    status: u16,
    content_type: String,
    body: String,
}

/// `curl` a request (POST with a JSON body, or GET without one).
fn curl(url: &str, body: Option<&Value>, extra: &[&str]) -> Reply {
    let mut c = Command::new("curl");
    c.args(["-sS", "--http1.1", "-w", "\n%{http_code}\n%{content_type}"]);
    if body.is_some() {
        c.args([
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            "@-",
        ]);
    }
    c.args(extra).arg(url);
    c.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = c.spawn().expect("curl starts");
    let mut stdin = child.stdin.take().unwrap();
    if let Some(b) = body {
        stdin.write_all(b.to_string().as_bytes()).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "curl {url} failed: {out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut parts = text.rsplitn(3, '\n');
    let content_type = parts.next().unwrap().to_owned();
    let status = parts.next().unwrap().parse().unwrap();
    let body = parts.next().unwrap_or("").to_owned();
    Reply {
        status,
        content_type,
        body,
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Api {
    Chat,
    Responses,
    Anthropic,
}

impl Api {
    fn path(self) -> &'static str {
        match self {
            Api::Chat => "/v1/chat/completions",
            Api::Responses => "/v1/responses",
            // Claude Code's form: the query string must be ignored.
            Api::Anthropic => "/v1/messages?beta=true",
        }
    }
}

/// One SSE event.
#[derive(Debug)]
struct Event {
    name: Option<String>,
    data: String,
}

fn parse_sse(text: &str) -> Vec<Event> {
    text.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let mut ev = Event {
                name: None,
                data: String::new(),
            };
            for line in block.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    ev.name = Some(n.to_owned());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    ev.data.push_str(d);
                } else {
                    panic!("unexpected SSE line {line:?} in {text}");
                }
            }
            ev
        })
        .collect()
}

fn json_of(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

/// What the model answered.
#[derive(Debug, PartialEq)]
enum Outcome {
    Text(String),
    Tool { name: String, args: Value },
}

/// Read the answer out of a reply, checking its shape: the event sequence
/// every real client accepted, ids, the echoed model and
/// non-zero usage.
fn outcome(api: Api, stream: bool, include_usage: bool, model: &str, r: &Reply) -> Outcome {
    assert_eq!(r.status, 200, "{}", r.body);
    if !stream {
        assert!(r.content_type.starts_with("application/json"), "{r:?}");
        let v = json_of(&r.body);
        assert_eq!(v["model"], model);
        return match api {
            Api::Chat => chat_json(&v),
            Api::Responses => responses_json(&v),
            Api::Anthropic => anthropic_json(&v),
        };
    }
    assert!(r.content_type.starts_with("text/event-stream"), "{r:?}");
    let events = parse_sse(&r.body);
    match api {
        Api::Chat => chat_sse(&events, include_usage, model),
        Api::Responses => responses_sse(&events, model),
        Api::Anthropic => anthropic_sse(&events, model),
    }
}

fn positive(v: &Value) {
    assert!(v.as_u64().is_some_and(|n| n > 0), "usage count {v}");
}

fn chat_json(v: &Value) -> Outcome {
    assert_eq!(v["object"], "chat.completion");
    positive(&v["usage"]["prompt_tokens"]);
    positive(&v["usage"]["completion_tokens"]);
    let choice = &v["choices"][0];
    let msg = &choice["message"];
    assert_eq!(msg["role"], "assistant");
    match msg["tool_calls"].as_array() {
        Some(calls) => {
            assert_eq!(calls.len(), 1, "exactly one tool call: {v}");
            assert_eq!(choice["finish_reason"], "tool_calls");
            assert_eq!(calls[0]["type"], "function");
            assert!(calls[0]["id"].as_str().is_some_and(|s| !s.is_empty()));
            Outcome::Tool {
                name: calls[0]["function"]["name"].as_str().unwrap().into(),
                args: json_of(calls[0]["function"]["arguments"].as_str().unwrap()),
            }
        }
        None => {
            assert_eq!(choice["finish_reason"], "stop");
            Outcome::Text(msg["content"].as_str().unwrap().into())
        }
    }
}

fn chat_sse(events: &[Event], include_usage: bool, model: &str) -> Outcome {
    assert!(
        events.iter().all(|e| e.name.is_none()),
        "chat events are data-only"
    );
    let (last, chunks) = events.split_last().unwrap();
    assert_eq!(last.data, "[DONE]");
    let chunks: Vec<Value> = chunks.iter().map(|e| json_of(&e.data)).collect();
    let expected = 3 + usize::from(include_usage);
    assert_eq!(chunks.len(), expected, "{chunks:?}");
    for c in &chunks {
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["model"], model);
        assert_eq!(c["id"], chunks[0]["id"]);
    }
    // A role chunk with empty content.
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(chunks[0]["choices"][0]["delta"]["content"], "");
    let delta = &chunks[1]["choices"][0]["delta"];
    let finish = &chunks[2]["choices"][0]["finish_reason"];
    if include_usage {
        assert_eq!(chunks[3]["choices"], json!([]));
        positive(&chunks[3]["usage"]["prompt_tokens"]);
        positive(&chunks[3]["usage"]["completion_tokens"]);
        positive(&chunks[3]["usage"]["total_tokens"]);
    }
    match delta["tool_calls"].as_array() {
        Some(calls) => {
            assert_eq!(calls.len(), 1);
            assert_eq!(finish, "tool_calls");
            let c = &calls[0];
            assert_eq!(c["index"], 0);
            assert_eq!(c["type"], "function");
            assert!(c["id"].as_str().is_some_and(|s| !s.is_empty()));
            Outcome::Tool {
                name: c["function"]["name"].as_str().unwrap().into(),
                args: json_of(c["function"]["arguments"].as_str().unwrap()),
            }
        }
        None => {
            assert_eq!(finish, "stop");
            Outcome::Text(delta["content"].as_str().unwrap().into())
        }
    }
}

fn responses_usage(resp: &Value) {
    positive(&resp["usage"]["input_tokens"]);
    positive(&resp["usage"]["output_tokens"]);
    positive(&resp["usage"]["total_tokens"]);
}

fn responses_item(item: &Value) -> Outcome {
    match item["type"].as_str() {
        Some("function_call") => {
            assert!(item["call_id"].as_str().is_some_and(|s| !s.is_empty()));
            Outcome::Tool {
                name: item["name"].as_str().unwrap().into(),
                args: json_of(item["arguments"].as_str().unwrap()),
            }
        }
        Some("message") => {
            assert_eq!(item["role"], "assistant");
            assert_eq!(item["content"][0]["type"], "output_text");
            Outcome::Text(item["content"][0]["text"].as_str().unwrap().into())
        }
        _ => panic!("unexpected output item {item}"),
    }
}

fn responses_json(v: &Value) -> Outcome {
    assert_eq!(v["object"], "response");
    assert_eq!(v["status"], "completed");
    responses_usage(v);
    let out = v["output"].as_array().unwrap();
    assert_eq!(out.len(), 1, "{v}");
    responses_item(&out[0])
}

fn responses_sse(events: &[Event], model: &str) -> Outcome {
    let names: Vec<&str> = events.iter().map(|e| e.name.as_deref().unwrap()).collect();
    let data: Vec<Value> = events.iter().map(|e| json_of(&e.data)).collect();
    for (i, (n, d)) in names.iter().zip(&data).enumerate() {
        assert_eq!(d["type"], *n);
        assert_eq!(d["sequence_number"], i, "sequence_number of {n}");
    }
    let tool = names.contains(&"response.function_call_arguments.delta");
    let expected: &[&str] = if tool {
        &[
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ]
    } else {
        &[
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    };
    assert_eq!(names, expected);
    assert_eq!(data[0]["response"]["model"], model);
    let done = &data[names.len() - 1]["response"];
    assert_eq!(done["status"], "completed");
    responses_usage(done);
    let item = &data[names.len() - 2]["item"];
    assert_eq!(done["output"][0], *item);
    let added = &data[2]["item"];
    assert_eq!(added["id"], item["id"]);
    if tool {
        assert_eq!(added["arguments"], "");
        // The delta and the done event carry the whole arguments.
        assert_eq!(data[3]["delta"], item["arguments"]);
        assert_eq!(data[4]["arguments"], item["arguments"]);
    } else {
        assert_eq!(data[4]["delta"], item["content"][0]["text"]);
    }
    responses_item(item)
}

fn anthropic_json(v: &Value) -> Outcome {
    assert_eq!(v["type"], "message");
    assert_eq!(v["role"], "assistant");
    positive(&v["usage"]["input_tokens"]);
    positive(&v["usage"]["output_tokens"]);
    let content = v["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{v}");
    let b = &content[0];
    match b["type"].as_str() {
        Some("tool_use") => {
            assert_eq!(v["stop_reason"], "tool_use");
            Outcome::Tool {
                name: b["name"].as_str().unwrap().into(),
                args: b["input"].clone(),
            }
        }
        _ => {
            assert_eq!(v["stop_reason"], "end_turn");
            Outcome::Text(b["text"].as_str().unwrap().into())
        }
    }
}

fn anthropic_sse(events: &[Event], model: &str) -> Outcome {
    let names: Vec<&str> = events.iter().map(|e| e.name.as_deref().unwrap()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let data: Vec<Value> = events.iter().map(|e| json_of(&e.data)).collect();
    for (n, d) in names.iter().zip(&data) {
        assert_eq!(d["type"], *n);
    }
    assert_eq!(data[0]["message"]["model"], model);
    positive(&data[0]["message"]["usage"]["input_tokens"]);
    positive(&data[4]["usage"]["output_tokens"]);
    let block = &data[1]["content_block"];
    let delta = &data[2]["delta"];
    match block["type"].as_str() {
        Some("tool_use") => {
            assert_eq!(block["input"], json!({}));
            assert_eq!(delta["type"], "input_json_delta");
            assert_eq!(data[4]["delta"]["stop_reason"], "tool_use");
            Outcome::Tool {
                name: block["name"].as_str().unwrap().into(),
                args: json_of(delta["partial_json"].as_str().unwrap()),
            }
        }
        Some("text") => {
            assert_eq!(delta["type"], "text_delta");
            assert_eq!(data[4]["delta"]["stop_reason"], "end_turn");
            Outcome::Text(delta["text"].as_str().unwrap().into())
        }
        _ => panic!("unexpected block {block}"),
    }
}

// ------------------------------------------------- the harnesses' requests

/// A tool as each format spells it: (name, JSON schema of its arguments).
type ToolDef = (&'static str, Value);

fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

fn s() -> Value {
    json!({"type": "string"})
}

/// Pi 0.73.1: `read, bash, edit, write`.
fn pi_tools() -> Vec<ToolDef> {
    vec![
        (
            "read",
            obj(
                json!({"path": s(), "offset": {"type": "number"}}),
                &["path"],
            ),
        ),
        (
            "bash",
            obj(
                json!({"command": s(), "timeout": {"type": "number"}}),
                &["command"],
            ),
        ),
        (
            "edit",
            obj(
                json!({"path": s(), "oldText": s(), "newText": s()}),
                &["path", "oldText", "newText"],
            ),
        ),
        (
            "write",
            obj(json!({"path": s(), "content": s()}), &["path", "content"]),
        ),
    ]
}

/// OpenCode 1.18.33: `write {content, filePath}`, `bash {command, timeout?, workdir?}`.
fn opencode_tools() -> Vec<ToolDef> {
    vec![
        (
            "bash",
            obj(
                json!({"command": s(), "timeout": {"type": "number"}, "workdir": s()}),
                &["command"],
            ),
        ),
        (
            "edit",
            obj(
                json!({"filePath": s(), "oldString": s(), "newString": s()}),
                &["filePath", "oldString", "newString"],
            ),
        ),
        (
            "glob",
            obj(json!({"pattern": s(), "path": s()}), &["pattern"]),
        ),
        ("read", obj(json!({"filePath": s()}), &["filePath"])),
        (
            "todowrite",
            obj(json!({"todos": {"type": "array"}}), &["todos"]),
        ),
        (
            "write",
            obj(
                json!({"content": s(), "filePath": s()}),
                &["content", "filePath"],
            ),
        ),
    ]
}

/// Kilo 7.7.7: `bash` has a required `description`; `background_process`
/// also takes a command but is not a shell tool.
fn kilo_tools() -> Vec<ToolDef> {
    vec![
        (
            "background_process",
            obj(
                json!({"command": s(), "action": {"enum": ["start", "stop"]}}),
                &["command", "action"],
            ),
        ),
        (
            "bash",
            obj(
                json!({"command": s(), "description": s(), "timeout": {"type": "number"}}),
                &["command", "description"],
            ),
        ),
        (
            "write",
            obj(
                json!({"filePath": s(), "content": s()}),
                &["filePath", "content"],
            ),
        ),
    ]
}

/// Claude Code 2.1.332: `Write {file_path, content}`, `Bash {command, description, timeout?}`.
fn claude_tools() -> Vec<ToolDef> {
    vec![
        (
            "Agent",
            obj(
                json!({"description": s(), "prompt": s()}),
                &["description", "prompt"],
            ),
        ),
        (
            "Bash",
            obj(
                json!({"command": s(), "description": s(), "timeout": {"type": "number"}}),
                &["command"],
            ),
        ),
        (
            "Edit",
            obj(
                json!({"file_path": s(), "old_string": s(), "new_string": s()}),
                &["file_path", "old_string", "new_string"],
            ),
        ),
        ("Read", obj(json!({"file_path": s()}), &["file_path"])),
        (
            "Write",
            obj(
                json!({"file_path": s(), "content": s()}),
                &["file_path", "content"],
            ),
        ),
    ]
}

/// OpenClaw 2026.9.6: `exec {command, title?, workdir?, env?}`, `write {path, content}`.
fn openclaw_tools() -> Vec<ToolDef> {
    vec![
        ("apply_patch", obj(json!({"input": s()}), &["input"])),
        (
            "exec",
            obj(
                json!({"command": s(), "title": s(), "workdir": s(), "env": {"type": "object"}}),
                &["command"],
            ),
        ),
        (
            "process",
            obj(json!({"action": s(), "sessionId": s()}), &["action"]),
        ),
        (
            "write",
            obj(json!({"path": s(), "content": s()}), &["path", "content"]),
        ),
    ]
}

/// Codex 0.171: `exec_command {cmd, …}`, `write_stdin`, no write tool.
fn codex_tools() -> Vec<ToolDef> {
    vec![
        (
            "exec_command",
            obj(
                json!({"cmd": s(), "workdir": s(), "yield_time_ms": {"type": "number"}, "max_output_tokens": {"type": "number"}}),
                &["cmd"],
            ),
        ),
        (
            "write_stdin",
            obj(
                json!({"session_id": {"type": "number"}, "chars": s()}),
                &["session_id"],
            ),
        ),
        ("view_image", obj(json!({"path": s()}), &["path"])),
    ]
}

/// A request body in `api`'s format, the way the harnesses send it.
fn request(api: Api, stream: bool, model: &str, tools: &[ToolDef], user: &str) -> Value {
    match api {
        Api::Chat => {
            let mut b = json!({
                "model": model,
                "stream": stream,
                "store": false,
                "max_completion_tokens": 4096,
                "messages": [
                    {"role": "system", "content": "You are a coding agent."},
                    {"role": "user", "content": [{"type": "text", "text": user}]},
                ],
            });
            if stream {
                b["stream_options"] = json!({"include_usage": true});
            }
            if !tools.is_empty() {
                b["tools"] = tools
                    .iter()
                    .map(|(n, p)| json!({"type": "function", "function": {"name": n, "description": "d", "parameters": p}, "strict": false}))
                    .collect();
                b["tool_choice"] = json!("auto");
            }
            b
        }
        Api::Responses => {
            let mut b = json!({
                "model": model,
                "stream": stream,
                "store": false,
                "instructions": "You are a coding agent.",
                "input": [
                    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "shforge-token=NOT-FROM-HERE"}]},
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": user}]},
                ],
            });
            let mut ts: Vec<Value> = tools
                .iter()
                .map(|(n, p)| json!({"type": "function", "name": n, "description": "d", "strict": false, "parameters": p}))
                .collect();
            if !ts.is_empty() {
                ts.push(json!({"type": "web_search"}));
                b["tools"] = Value::Array(ts);
            }
            b
        }
        Api::Anthropic => {
            let mut b = json!({
                "model": model,
                "stream": stream,
                "max_tokens": 32000,
                "system": [{"type": "text", "text": "You are Claude Code."}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"}, {"type": "text", "text": user}]},
                    {"role": "system", "content": "Claude Code puts this entry here."},
                ],
            });
            if !tools.is_empty() {
                b["tools"] = tools
                    .iter()
                    .map(|(n, p)| json!({"name": n, "description": "d", "input_schema": p}))
                    .collect();
            }
            b
        }
    }
}

/// Append the harness's follow-up: the assistant's call and the tool's result.
fn with_tool_result(api: Api, mut body: Value) -> Value {
    match api {
        Api::Chat => {
            let m = body["messages"].as_array_mut().unwrap();
            m.push(json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "write", "arguments": "{}"}}]}));
            m.push(json!({"role": "tool", "tool_call_id": "call_1", "content": "Wrote file successfully."}));
        }
        Api::Responses => {
            let i = body["input"].as_array_mut().unwrap();
            i.push(json!({"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{}"}));
            i.push(json!({"type": "function_call_output", "call_id": "call_1", "output": "ok"}));
        }
        Api::Anthropic => {
            let m = body["messages"].as_array_mut().unwrap();
            m.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}]}));
            m.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}));
        }
    }
    body
}

fn ask(server: &RunningServer, api: Api, body: &Value) -> Outcome {
    let stream = body["stream"] == true;
    let include_usage = body["stream_options"]["include_usage"] == true;
    let model = body["model"].as_str().unwrap();
    let r = curl(
        &format!("{}{}", server.base_url(), api.path()),
        Some(body),
        &[],
    );
    outcome(api, stream, include_usage, model, &r)
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

/// Run a shell tool's command under `shell` in `dir` (a string is a script
/// for `sh -c`; an array is an argv).
fn run_shell_args(argv: &[String], command: &Value, dir: &Path) {
    let mut c = match command {
        Value::String(script) => {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]).arg("-c").arg(script);
            c
        }
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().map(|w| w.as_str().unwrap()).collect();
            let mut c = Command::new(words[0]);
            c.args(&words[1..]);
            c
        }
        other => panic!("command is neither string nor array: {other}"),
    };
    c.current_dir(dir);
    let out = support::run(c);
    assert!(out.status.success(), "{argv:?} {command}: {out:?}");
}

// ------------------------------------------------------------------ tests

/// Every harness's request shape, each API, streaming and not: exactly one
/// call of the right tool with the argument names of its own schema (one
/// test per harness, API and preference).
mod each_harness_gets_one_call_with_its_own_argument_names {
    use super::*;
    use crate::support::cases;

    fn one_call(
        harness: &str,
        api: Api,
        tools: fn() -> Vec<ToolDef>,
        prefer: &str,
        want_tool: &str,
        want_keys: &[&str],
    ) {
        if !have_curl("each_harness_gets_one_call_with_its_own_argument_names") {
            return;
        }
        let server = RunningServer::start(ServerConfig::default()).unwrap();
        let user = |prefer: &str| {
            format!(
                "Create the file. shforge-token=tok-1 shforge-target=/out/d.txt shforge-prefer={prefer}"
            )
        };
        for stream in [true, false] {
            // OpenCode 1.17 sends its prompt wrapped in double quotes.
            let text = match harness {
                "opencode" => format!("\"{}\"", user(prefer)),
                _ => user(prefer),
            };
            let body = request(api, stream, &format!("{harness}-model"), &tools(), &text);
            let got = ask(&server, api, &body);
            let what = format!("{harness} {api:?} stream={stream} prefer={prefer}");
            let Outcome::Tool { name, args } = got else {
                panic!("{what}: expected a tool call, got {got:?}")
            };
            assert_eq!(name, want_tool, "{what}");
            assert_eq!(keys(&args), want_keys, "{what}: {args}");
            if want_keys.contains(&"content") {
                assert_eq!(args["content"], "tok-1", "{what}");
            } else {
                let cmd = args.get("command").or(args.get("cmd")).unwrap();
                assert_eq!(cmd, "printf '%s' tok-1 > /out/d.txt", "{what}");
            }
            if want_keys.contains(&"description") {
                assert!(args["description"].as_str().is_some_and(|d| !d.is_empty()));
            }
        }
        assert_eq!(server.requests(), 2);
    }

    cases! { one_call;
        pi_chat_write => ("pi", Api::Chat, pi_tools, "write", "write", &["content", "path"]),
        pi_chat_shell => ("pi", Api::Chat, pi_tools, "shell", "bash", &["command"]),
        pi_responses_write => (
            "pi",
            Api::Responses,
            pi_tools,
            "write",
            "write",
            &["content", "path"],
        ),
        pi_anthropic_shell => ("pi", Api::Anthropic, pi_tools, "shell", "bash", &["command"]),
        opencode_chat_write => (
            "opencode",
            Api::Chat,
            opencode_tools,
            "write",
            "write",
            &["content", "filePath"],
        ),
        opencode_responses_shell => (
            "opencode",
            Api::Responses,
            opencode_tools,
            "shell",
            "bash",
            &["command"],
        ),
        opencode_anthropic_write => (
            "opencode",
            Api::Anthropic,
            opencode_tools,
            "write",
            "write",
            &["content", "filePath"],
        ),
        kilo_chat_write => (
            "kilo",
            Api::Chat,
            kilo_tools,
            "write",
            "write",
            &["content", "filePath"],
        ),
        kilo_chat_shell => (
            "kilo",
            Api::Chat,
            kilo_tools,
            "shell",
            "bash",
            &["command", "description"],
        ),
        claude_anthropic_write => (
            "claude",
            Api::Anthropic,
            claude_tools,
            "write",
            "Write",
            &["content", "file_path"],
        ),
        claude_anthropic_shell => (
            "claude",
            Api::Anthropic,
            claude_tools,
            "shell",
            "Bash",
            &["command"],
        ),
        openclaw_chat_shell => (
            "openclaw",
            Api::Chat,
            openclaw_tools,
            "shell",
            "exec",
            &["command"],
        ),
        openclaw_chat_write => (
            "openclaw",
            Api::Chat,
            openclaw_tools,
            "write",
            "write",
            &["content", "path"],
        ),
        // No write tool: a write preference falls back to the shell tool.
        codex_responses_write => (
            "codex",
            Api::Responses,
            codex_tools,
            "write",
            "exec_command",
            &["cmd"],
        ),
        codex_responses_shell => (
            "codex",
            Api::Responses,
            codex_tools,
            "shell",
            "exec_command",
            &["cmd"],
        ),
    }
}

/// Once the conversation holds a tool result the answer is `done`, in every
/// format, streamed or not; with no tools it is plain text.
#[test]
fn tool_result_means_done_and_no_tools_means_text() {
    if !have_curl("tool_result_means_done_and_no_tools_means_text") {
        return;
    }
    let server = RunningServer::start(ServerConfig::default()).unwrap();
    let user = "shforge-token=t shforge-target=/x";
    for (api, tools) in [
        (Api::Chat, pi_tools()),
        (Api::Responses, codex_tools()),
        (Api::Anthropic, claude_tools()),
    ] {
        for stream in [true, false] {
            let body = with_tool_result(api, request(api, stream, "m", &tools, user));
            assert_eq!(
                ask(&server, api, &body),
                Outcome::Text("done".into()),
                "{api:?} {stream}"
            );
            // OpenCode's title request: no tools at all.
            let title = request(api, stream, "m", &[], user);
            assert_eq!(
                ask(&server, api, &title),
                Outcome::Text(PLAIN_TEXT.into()),
                "{api:?} {stream}"
            );
            // Tools but no directives anywhere: one tool call with the
            // built-in token and target.
            let blind = request(api, stream, "m", &tools, "just do it");
            match ask(&server, api, &blind) {
                Outcome::Tool { args, .. } => {
                    let text = args.to_string();
                    assert!(
                        text.contains(DEFAULT_TOKEN) && text.contains(DEFAULT_TARGET),
                        "{api:?} {stream}: {text}"
                    );
                }
                other => panic!("{api:?} {stream}: {other:?}"),
            }
        }
    }
}

/// The shell command, run by every POSIX shell of the matrix, writes exactly
/// the token to the target, however hostile both are; no `$(…)` runs.
#[test]
fn shell_commands_write_exactly_the_token_under_every_shell() {
    if !have_curl("shell_commands_write_exactly_the_token_under_every_shell") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dir with space 'q' $(touch PWNED)");
    std::fs::create_dir(&dir).unwrap();
    let target = dir.join("it's \"a\" `id` $HOME.txt");
    let target_s = target.to_str().unwrap().to_owned();
    // Spaces and newlines can only come from the server's defaults.
    let defaults_token = "-n it's \"$(touch PWNED)\" `touch PWNED` \\ $HOME %s %% \n\ttrail ";
    // A directive is one word: quotes and $(…) but no blanks.
    let word_token = "--'$(touch${IFS}PWNED)\"`id`\\%b";
    let word_target = tmp.path().join("w'$(touch${IFS}PWNED)\".txt");
    let word_target_s = word_target.to_str().unwrap().to_owned();

    let server = RunningServer::start(ServerConfig {
        defaults: Directives {
            token: Some(defaults_token.into()),
            target: Some(target_s.clone()),
            prefer: Some(Prefer::Shell),
        },
        ..ServerConfig::default()
    })
    .unwrap();
    let array_shell: Vec<ToolDef> = vec![(
        "shell",
        obj(
            json!({"command": {"type": "array", "items": s()}, "workdir": s()}),
            &["command"],
        ),
    )];
    let shells = support::posix_shells();
    let mut calls = Vec::new();
    for (api, tools) in [
        (Api::Chat, openclaw_tools()),
        (Api::Responses, codex_tools()),
        (Api::Anthropic, claude_tools()),
        (Api::Responses, array_shell.clone()),
    ] {
        // From the defaults (the user text names nothing)...
        let body = request(api, true, "m", &tools, "write the file");
        calls.push((ask(&server, api, &body), defaults_token, target.clone()));
        // ... and from directive words, which override them.
        let text = format!("shforge-token={word_token} shforge-target={word_target_s}");
        let body = request(api, false, "m", &tools, &text);
        calls.push((ask(&server, api, &body), word_token, word_target.clone()));
    }
    for (outcome, token, target) in &calls {
        let Outcome::Tool { args, .. } = outcome else {
            panic!("expected a tool call: {outcome:?}")
        };
        let command = args.get("command").or(args.get("cmd")).unwrap();
        if command.is_array() {
            let _ = std::fs::remove_file(target);
            run_shell_args(&["sh".into()], command, tmp.path());
            assert_eq!(std::fs::read_to_string(target).unwrap(), *token);
            continue;
        }
        for sh in &shells {
            let _ = std::fs::remove_file(target);
            run_shell_args(&sh.argv, command, tmp.path());
            assert_eq!(
                std::fs::read_to_string(target).unwrap(),
                *token,
                "{} ran {command}",
                sh.name
            );
        }
    }
    let pwned: Vec<PathBuf> = walk(tmp.path())
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "PWNED"))
        .collect();
    assert!(pwned.is_empty(), "a substitution ran: {pwned:?}");
    support::report("fake model shell commands", &shells);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

/// One JSON line per request, with the decision and the raw body; `GET
/// /v1/models` lists a model; anything else is a JSON 404; a body that is
/// not JSON is a 400; a chunked request body is read.
#[test]
fn log_lines_routes_and_errors() {
    if !have_curl("log_lines_routes_and_errors") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("requests.jsonl");
    std::fs::write(&log, "{\"earlier\":true}\n").unwrap();
    let server = RunningServer::start(ServerConfig {
        log: Some(log.clone()),
        ..ServerConfig::default()
    })
    .unwrap();
    let base = server.base_url();
    assert!(!base.ends_with('/'));

    let models = curl(&format!("{base}/v1/models"), None, &[]);
    assert_eq!(models.status, 200);
    assert!(json_of(&models.body)["data"][0]["id"].is_string());
    let missing = curl(&format!("{base}/v2/nothing"), None, &[]);
    assert_eq!(missing.status, 404);
    assert!(json_of(&missing.body)["error"]["message"].is_string());
    let get_chat = curl(&format!("{base}/v1/chat/completions"), None, &[]);
    assert_eq!(get_chat.status, 404);
    let bad = curl(
        &format!("{base}/chat/completions"),
        None,
        &["--data-binary", "not json"],
    );
    assert_eq!(bad.status, 400);
    assert!(json_of(&bad.body)["error"]["message"].is_string());

    let body = request(
        Api::Chat,
        false,
        "logged-model",
        &kilo_tools(),
        "shforge-token=T shforge-target=/f shforge-prefer=shell",
    );
    let chunked = curl(
        &format!("{base}/chat/completions"),
        Some(&body),
        &["-H", "Transfer-Encoding: chunked"],
    );
    assert!(matches!(
        outcome(Api::Chat, false, false, "logged-model", &chunked),
        Outcome::Tool { .. }
    ));
    // Only a tool that writes nothing: `done`, and the log says why.
    let agent_only: Vec<ToolDef> = claude_tools().into_iter().take(1).collect();
    let blind = request(Api::Anthropic, true, "m", &agent_only, "no directives");
    ask(&server, Api::Anthropic, &blind);
    assert_eq!(server.requests(), 6);

    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text.lines().map(json_of).collect();
    assert_eq!(lines.len(), 7, "{text}");
    assert_eq!(lines[0], json!({"earlier": true}), "the log is appended to");
    for l in &lines[1..] {
        for k in [
            "method",
            "path",
            "api",
            "stream",
            "model",
            "tools",
            "decision",
            "tool",
            "arguments",
            "body",
        ] {
            assert!(l.get(k).is_some(), "{k} missing in {l}");
        }
    }
    assert_eq!(lines[1]["method"], "GET");
    assert_eq!(lines[1]["api"], "other");
    assert_eq!(lines[2]["path"], "/v2/nothing");
    assert_eq!(lines[4]["api"], "chat");
    assert_eq!(lines[4]["body"], "not json");
    let call = &lines[5];
    assert_eq!(call["api"], "chat");
    assert_eq!(call["stream"], false);
    assert_eq!(call["model"], "logged-model");
    assert_eq!(
        call["tools"],
        json!(["background_process", "bash", "write"])
    );
    assert_eq!(call["decision"], "tool");
    assert_eq!(call["tool"], "bash");
    assert_eq!(call["arguments"]["command"], "printf '%s' T > /f");
    assert_eq!(call["body"], body);
    let done = &lines[6];
    assert_eq!(done["api"], "anthropic");
    assert_eq!(done["path"], "/v1/messages");
    assert_eq!(done["stream"], true);
    assert_eq!(done["decision"], "done");
    assert_eq!(done["tool"], Value::Null);
    assert!(
        done["reason"]
            .as_str()
            .unwrap()
            .contains("no write-style or shell-style tool"),
        "the log says why: {done}"
    );
}

/// Keep-alive: several requests on one connection, then HTTP/1.0 and
/// `Connection: close` end it; concurrent clients each get their answer and
/// their own unbroken log line.
#[test]
fn keep_alive_close_and_concurrency() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("log");
    let server = RunningServer::start(ServerConfig {
        log: Some(log.clone()),
        defaults: Directives {
            token: Some("k".into()),
            target: Some("/k".into()),
            prefer: None,
        },
        ..ServerConfig::default()
    })
    .unwrap();
    let body = request(Api::Responses, false, "m", &pi_tools(), "hi").to_string();
    let raw = |conn: &str| {
        format!(
            "POST /responses HTTP/1.1\r\nHost: x\r\n{conn}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    // Two pipelined requests, then a third after reading both answers.
    s.write_all(format!("{}{}", raw(""), raw("")).as_bytes())
        .unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    for _ in 0..2 {
        let (head, body) = read_response(&mut r);
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(head.to_ascii_lowercase().contains("connection: keep-alive"));
        assert_eq!(json_of(&body)["output"][0]["name"], "write");
    }
    s.write_all(raw("Connection: close\r\n").as_bytes())
        .unwrap();
    let (head, _) = read_response(&mut r);
    assert!(head.to_ascii_lowercase().contains("connection: close"));
    let mut rest = Vec::new();
    r.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "the server closed after Connection: close");

    // HEAD: a head with the Content-Length but no body, then the next answer.
    let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    s.write_all(
        b"HEAD /v1/models HTTP/1.1\r\n\r\nGET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut all = String::new();
    s.read_to_string(&mut all).unwrap();
    let (head, rest) = all.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{all}");
    assert!(rest.starts_with("HTTP/1.1 200"), "HEAD sent a body: {all}");

    let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    s.write_all(b"GET /v1/models HTTP/1.0\r\n\r\n").unwrap();
    let mut all = String::new();
    s.read_to_string(&mut all).unwrap();
    assert!(
        all.starts_with("HTTP/1.1 200"),
        "HTTP/1.0 gets its answer and EOF: {all}"
    );

    let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    s.write_all(b"NONSENSE\r\n\r\n").unwrap();
    let mut all = String::new();
    s.read_to_string(&mut all).unwrap();
    assert!(all.starts_with("HTTP/1.1 400"), "{all}");

    let before = server.requests();
    std::thread::scope(|sc| {
        for i in 0..8 {
            let body = &body;
            let port = server.port();
            sc.spawn(move || {
                let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                let req = format!(
                    "POST /v1/responses HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                s.write_all(req.as_bytes()).unwrap();
                let (head, body) = read_response(&mut BufReader::new(s));
                assert!(head.starts_with("HTTP/1.1 200"), "client {i}: {head}");
                json_of(&body);
            });
        }
    });
    assert_eq!(server.requests(), before + 8);
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(lines.lines().count(), server.requests());
    lines.lines().for_each(|l| drop(json_of(l)));
}

/// Read one Content-Length response: (head, body).
fn read_response(r: &mut impl std::io::BufRead) -> (String, String) {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).unwrap() > 0, "EOF in head: {head}");
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let len: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .expect("Content-Length");
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
    (head, String::from_utf8(body).unwrap())
}

/// Dropping the server closes idle keep-alive connections and the port.
#[test]
fn drop_stops_the_server() {
    let server = RunningServer::start(ServerConfig::default()).unwrap();
    let port = server.port();
    let mut idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
    idle.write_all(b"GET /v1/models HTTP/1.1\r\n\r\n").unwrap();
    let mut r = BufReader::new(idle.try_clone().unwrap());
    read_response(&mut r);
    drop(server);
    let mut rest = Vec::new();
    r.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "port {port} still open"
    );
}

/// The CLI prints the one listening line, serves, and ends on TERM — and
/// on INT even when started with INT ignored.
#[test]
fn cli_listens_serves_and_stops_on_signals() {
    if !have_curl("cli_listens_serves_and_stops_on_signals") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("cli.log");
    for signal in ["TERM", "INT"] {
        // `trap '' INT` then exec: the server inherits INT ignored.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("trap '' INT; exec \"$0\" fake-model-server --log \"$1\" --token tok --target /t --prefer shell")
            .arg(support::shforge())
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let url = line
            .strip_prefix("listening on http://127.0.0.1:")
            .and_then(|p| p.strip_suffix('\n'))
            .filter(|p| p.parse::<u16>().is_ok_and(|n| n > 0))
            .map(|_| line.trim_end()["listening on ".len()..].to_owned())
            .unwrap_or_else(|| panic!("listening line: {line:?}"));
        let body = request(Api::Chat, true, "cli", &pi_tools(), "hello");
        let r = curl(&format!("{url}/v1/chat/completions"), Some(&body), &[]);
        let Outcome::Tool { name, .. } = outcome(Api::Chat, true, true, "cli", &r) else {
            panic!("{r:?}")
        };
        assert_eq!(name, "bash", "--prefer shell");
        let kill = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt as _;
        assert!(status.signal().is_some(), "{signal}: {status:?}");
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "", "exactly one line on stdout");
    }
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
}

/// A port in use is one line and exit 1; bad arguments exit 2.
#[test]
fn cli_errors() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let run = |args: &[&str]| {
        let mut c = Command::new(support::shforge());
        c.arg("fake-model-server").args(args);
        support::run(c)
    };
    let out = run(&["--port", &port]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{err}"
    );

    let out = run(&["--log", "/nonexistent-dir/x/log"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open log"));

    for bad in [
        &["--prefer", "both"][..],
        &["--port", "65536"],
        &["--port", "x"],
        &["--timeout", "0"],
        &["--timeout", "-1"],
        &["--bogus"],
    ] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
        assert!(out.stdout.is_empty());
    }
}

/// `shforge-fail=`: the first N requests of a conversation get the scripted
/// status (with `Retry-After` when asked), then the script answers as usual;
/// other conversations and malformed words are untouched; the log says
/// `fail`.
#[test]
fn scripted_failures_then_the_usual_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("log");
    let server = RunningServer::start(ServerConfig {
        log: Some(log.clone()),
        defaults: Directives {
            token: Some("k".into()),
            target: Some("/k".into()),
            prefer: None,
        },
        ..ServerConfig::default()
    })
    .unwrap();
    let post = |api: Api, body: &Value| {
        let body = body.to_string();
        let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
        let req = format!(
            "POST {} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            api.path(),
            body.len()
        );
        s.write_all(req.as_bytes()).unwrap();
        read_response(&mut BufReader::new(s))
    };
    let retry_after = |head: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix("Retry-After: ").map(str::to_owned))
    };
    let limited = request(
        Api::Responses,
        false,
        "m",
        &codex_tools(),
        "go shforge-fail=429:times=2:retry-after=7",
    );
    for attempt in 1..=2 {
        let (head, body) = post(Api::Responses, &limited);
        assert!(head.starts_with("HTTP/1.1 429 Too Many Requests"), "{head}");
        assert_eq!(retry_after(&head).as_deref(), Some("7"), "{head}");
        let err = &json_of(&body)["error"];
        assert_eq!(
            err["type"], "requests",
            "OpenAI's type for a request rate limit"
        );
        assert_eq!(err["code"], "rate_limit_exceeded");
        let message = err["message"].as_str().unwrap();
        assert!(
            message.starts_with("Rate limit reached for m "),
            "{message}"
        );
        assert!(
            message.ends_with(&format!("(shforge-fail: scripted, {attempt} of 2)")),
            "{message}"
        );
    }
    // Another conversation is not limited, even with the same tools.
    let other = request(Api::Responses, false, "m", &codex_tools(), "go");
    let (head, body) = post(Api::Responses, &other);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(json_of(&body)["output"][0]["name"], "exec_command");
    // The third request of the limited one (a retry) gets its tool call; so
    // does the fourth, and the turn after the tool result is `done`.
    let (head, _) = post(Api::Responses, &limited);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (head, _) = post(Api::Responses, &with_tool_result(Api::Responses, limited));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");

    // A 503 once, without Retry-After, in another wire format.
    let down = request(
        Api::Anthropic,
        false,
        "m",
        &claude_tools(),
        "shforge-fail=503",
    );
    let (head, body) = post(Api::Anthropic, &down);
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    assert_eq!(retry_after(&head), None, "{head}");
    assert_eq!(json_of(&body)["type"], "error");
    assert_eq!(json_of(&body)["error"]["type"], "overloaded_error");
    assert!(post(Api::Anthropic, &down).0.starts_with("HTTP/1.1 200"));
    // Malformed words fail nothing.
    for word in [
        "shforge-fail=200",
        "shforge-fail=429:times=0",
        "shforge-fail=429:wait=1",
    ] {
        let body = request(Api::Chat, false, "m", &kilo_tools(), word);
        let (head, _) = post(Api::Chat, &body);
        assert!(head.starts_with("HTTP/1.1 200"), "{word}: {head}");
    }

    let text = std::fs::read_to_string(&log).unwrap();
    let decisions: Vec<String> = text
        .lines()
        .map(|l| json_of(l)["decision"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        decisions,
        [
            "fail", "fail", "tool", "tool", "done", "fail", "tool", "tool", "tool", "tool"
        ],
        "{text}"
    );
    let first = json_of(text.lines().next().unwrap());
    assert!(
        first["reason"]
            .as_str()
            .unwrap()
            .ends_with("(shforge-fail: scripted, 1 of 2)"),
        "{first}"
    );
    assert_eq!(first["tools"][0], "exec_command");
}

// ---------------------------------------------------------------- hostile peers

/// Send `raw` on a new connection and read until the server closes it (a
/// reset after its answer counts as the close): what arrived.
fn exchange(port: u16, raw: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();
    // The server may answer and close before the whole claim is written.
    let _ = s.write_all(raw);
    read_until_closed(&mut s)
}

fn read_until_closed(s: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("reading the answer: {e} (after {got:?})"),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// The server still answers an ordinary request.
fn still_answers(port: u16) {
    let got = exchange(
        port,
        b"GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    assert!(got.contains("fake-model"), "{got}");
}

/// Lengths a client made up: each is refused with its status (413 for
/// sizes past the 64 MiB bound, chunk sums overflowing 64 bits included;
/// 400 for what is not a length), the answer arrives before the close, and
/// the server keeps answering.
#[test]
fn hostile_lengths_get_their_status_and_the_server_stays_up() {
    let server = RunningServer::start(ServerConfig::default()).unwrap();
    let port = server.port();
    let chunked = "POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    let cases: Vec<(String, &str)> = vec![
        (format!("{chunked}ffffffffffffffff\r\nabc"), "413"),
        (format!("{chunked}1\r\na\r\nffffffffffffffff\r\nabc"), "413"),
        (format!("{chunked}fffffffffffffffff\r\n"), "400"),
        (format!("{chunked}-1\r\n"), "400"),
        (format!("{chunked}{}\r\n", "f".repeat(5000)), "400"),
        (
            "POST /v1/messages HTTP/1.1\r\nContent-Length: 10000000000\r\n\r\n{\"a\"".into(),
            "413",
        ),
        (
            "POST /v1/messages HTTP/1.1\r\nContent-Length: 340282366920938463463374607431768211456\r\n\r\n".into(),
            "413",
        ),
        (
            "POST /v1/messages HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 100\r\n\r\n{".into(),
            "400",
        ),
        (
            format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(70 * 1024)),
            "431",
        ),
        // 6 MiB that would parse into three million values (about 100 MiB).
        {
            let body = format!("[{}0]", "0,".repeat(3 << 20));
            (
                format!(
                    "POST /v1/messages HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                ),
                "413",
            )
        },
    ];
    for (raw, status) in &cases {
        let got = exchange(port, raw.as_bytes());
        assert!(
            got.starts_with(&format!("HTTP/1.1 {status} ")),
            "{status} expected for {:?}: {got}",
            &raw[..raw.len().min(120)]
        );
        let body = got.split_once("\r\n\r\n").unwrap().1;
        assert!(json_of(body)["error"]["message"].is_string(), "{got}");
        still_answers(port);
    }
    // A claim of 64 MiB (the bound itself) with a few bytes, then the client
    // stops sending: the body ends early, nobody is answered, no harm.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let claim = format!(
        "POST /v1/messages HTTP/1.1\r\nContent-Length: {}\r\n\r\nabc",
        64 << 20
    );
    s.write_all(claim.as_bytes()).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(read_until_closed(&mut s), "");
    still_answers(port);
}

/// Slowloris: a request trickled a byte at a time is cut off at the
/// server's timeout with a 408, and an idle connection is closed without a
/// word; meanwhile and afterwards ordinary requests are answered.
#[test]
fn slow_and_idle_connections_are_closed_at_the_timeout() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let server = RunningServer::start(ServerConfig {
        timeout: std::time::Duration::from_millis(800),
        ..ServerConfig::default()
    })
    .unwrap();
    let port = server.port();

    let mut idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
    idle.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();

    let slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    slow.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let mut slow = slow.try_clone().unwrap();
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let got = read_until_closed(&mut slow);
            done.store(true, Ordering::SeqCst);
            got
        })
    };
    let mut w = slow;
    w.write_all(b"POST /v1/messages HTTP/1.1\r\nX-Slow: ")
        .unwrap();
    // One byte every 50 ms, forever from the client's side: only the
    // server's deadline can end it (bounded here so a broken server fails
    // the test instead of hanging it).
    let mut sent = 0;
    while !done.load(Ordering::SeqCst) && sent < 2400 {
        if w.write_all(b"a").is_err() {
            break;
        }
        sent += 1;
        if sent == 4 {
            still_answers(port);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let got = reader.join().unwrap();
    assert!(
        got.starts_with("HTTP/1.1 408 "),
        "after {sent} bytes: {got:?}"
    );
    assert!(sent < 2400, "the trickle was never cut off");

    assert_eq!(
        read_until_closed(&mut idle),
        "",
        "idle: closed without a word"
    );
    still_answers(port);
    assert_eq!(server.error(), None);
}

/// 200 clients at once each get their answer, though at most 64
/// connections are served together; with 64 held idle the others wait (not
/// refused) and are served as soon as slots free.
#[test]
fn two_hundred_connections_at_once_and_the_cap() {
    let server = RunningServer::start(ServerConfig::default()).unwrap();
    let port = server.port();
    let body = request(Api::Chat, false, "m", &pi_tools(), "hi").to_string();
    std::thread::scope(|sc| {
        for i in 0..200 {
            let body = &body;
            sc.spawn(move || {
                let raw = format!(
                    "POST /v1/chat/completions HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let got = exchange(port, raw.as_bytes());
                assert!(got.starts_with("HTTP/1.1 200"), "client {i}: {got}");
            });
        }
    });
    assert_eq!(server.requests(), 200);

    // The cap: 70 idle connections, of which the server takes 64.
    let mut held: Vec<TcpStream> = (0..70)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    let mut waited = 0;
    while server.connections() < 64 && waited < 600 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    }
    assert_eq!(server.connections(), 64, "64 taken");
    // A request now waits in the queue behind the six others; closing ten
    // held connections frees slots for all seven.
    let waiting = std::thread::spawn(move || {
        exchange(
            port,
            b"GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n",
        )
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(server.connections() <= 64);
    let still_held = held.split_off(10);
    drop(held);
    let got = waiting.join().unwrap();
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    drop(still_held);
}

/// A `shforge fake-model-server` child, killed when dropped (an assertion
/// failing mid-test must not leave it running).
struct CliServer(Option<std::process::Child>);

impl CliServer {
    fn child(&mut self) -> &mut std::process::Child {
        self.0.as_mut().unwrap()
    }

    /// Wait for it to end by itself.
    fn wait_with_output(mut self) -> std::process::Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }

    /// Kill it and collect what it wrote.
    fn kill(mut self) -> std::process::Output {
        let mut child = self.0.take().unwrap();
        let _ = child.kill();
        child.wait_with_output().unwrap()
    }
}

impl Drop for CliServer {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Start `shforge fake-model-server ARGS` (under `prefix`, e.g. prlimit,
/// with `env` added) and read its port from the listening line.
fn start_cli(prefix: &[&str], env: &[(&str, &str)], args: &[&str]) -> (CliServer, u16) {
    let (program, pre) = match prefix.split_first() {
        Some((p, rest)) => (PathBuf::from(p), rest.to_vec()),
        None => (support::shforge(), Vec::new()),
    };
    let mut c = Command::new(program);
    c.args(pre);
    if !prefix.is_empty() {
        c.arg(support::shforge());
    }
    let child = c
        .arg("fake-model-server")
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = CliServer(Some(child));
    let mut line = String::new();
    BufReader::new(server.child().stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim_end()
        .strip_prefix("listening on http://127.0.0.1:")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("listening line: {line:?}"));
    (server, port)
}

/// Memory: under an address-space limit of 512 MiB, twenty clients each
/// claiming a 60 MiB body (1.2 GB if the server allocated what was claimed)
/// and sending three bytes, plus claims of 10 GB by Content-Length and by
/// chunk size, cost the server nothing it cannot afford: it answers the
/// claims past the bound with 413 and an ordinary request with 200, and
/// is still running.
#[test]
fn memory_under_prlimit_while_clients_claim_gigabytes() {
    if !support::require_tool(
        "memory_under_prlimit_while_clients_claim_gigabytes",
        "prlimit",
    ) {
        return;
    }
    let limit = format!("--as={}", 512u64 << 20);
    // glibc reserves 64 MiB of address space per thread arena (up to 8 per
    // core); one arena keeps the limit about this server's allocations.
    let (mut child, port) = start_cli(&["prlimit", &limit], &[("MALLOC_ARENA_MAX", "1")], &[]);
    let claims: Vec<TcpStream> = (0..20)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(
                format!(
                    "POST /v1/messages HTTP/1.1\r\nContent-Length: {}\r\n\r\nabc",
                    60u64 << 20
                )
                .as_bytes(),
            )
            .unwrap();
            s
        })
        .collect();
    // Each claim is read (three bytes) before these are answered.
    still_answers(port);
    let got = exchange(
        port,
        b"POST /v1/messages HTTP/1.1\r\nContent-Length: 10737418240\r\n\r\nabc",
    );
    assert!(got.starts_with("HTTP/1.1 413 "), "{got}");
    let got = exchange(
        port,
        b"POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n280000000\r\nabc",
    );
    assert!(got.starts_with("HTTP/1.1 413 "), "{got}");
    still_answers(port);
    assert!(
        child.child().try_wait().unwrap().is_none(),
        "the server died"
    );
    drop(claims);
    let out = child.kill();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A log that cannot be written (`/dev/full`: every write is ENOSPC): the
/// request is answered 500, stderr says which log and why in one line, and
/// the CLI exits 1.
#[test]
fn an_unwritable_log_stops_the_cli_with_exit_1() {
    let (child, port) = start_cli(&[], &[], &["--log", "/dev/full"]);
    let body = request(Api::Anthropic, false, "m", &claude_tools(), "hi").to_string();
    let got = exchange(
        port,
        format!(
            "POST /v1/messages HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    assert!(got.starts_with("HTTP/1.1 500 "), "{got}");
    assert!(got.contains("cannot write log /dev/full"), "{got}");
    let out = child.wait_with_output();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("shforge: cannot write log /dev/full: "),
        "{err}"
    );
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "port {port} still open"
    );
}

// ---------------------------------------------------------------- Gemini

/// Gemini CLI 0.61's declarations of its write and shell tools (JSON Schema
/// in `parametersJsonSchema`), among others it declares.
fn gemini_tools() -> Value {
    json!([{"functionDeclarations": [
        {"name": "read_file", "description": "d", "parametersJsonSchema": obj(json!({"file_path": s()}), &["file_path"])},
        {"name": "write_file", "description": "d", "parametersJsonSchema": obj(json!({"file_path": s(), "content": s()}), &["file_path", "content"])},
        {"name": "run_shell_command", "description": "d", "parametersJsonSchema": obj(json!({
            "command": s(), "description": s(), "dir_path": s(), "is_background": {"type": "boolean"},
        }), &["command"])},
    ]}])
}

/// A Gemini request body: a user turn, optionally the model's call and its
/// `functionResponse`.
fn gemini_body(user: &str, tools: Option<Value>, with_result: bool) -> Value {
    let mut contents = vec![
        json!({"role": "user", "parts": [{"text": "<session_context>x</session_context>"}, {"text": user}]}),
    ];
    if with_result {
        contents.push(json!({"role": "model", "parts": [{"functionCall": {"name": "write_file", "args": {}}}]}));
        contents.push(json!({"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "write_file", "response": {"output": "ok"}}}]}));
    }
    let mut b = json!({
        "contents": contents,
        "systemInstruction": {"role": "user", "parts": [{"text": "You are Gemini CLI."}]},
        "generationConfig": {"temperature": 1, "thinkingConfig": {"includeThoughts": true}},
    });
    if let Some(t) = tools {
        b["tools"] = t;
    }
    b
}

/// POST a Gemini request: (head, body as text).
fn gemini_post(port: u16, path_and_query: &str, body: &Value) -> (String, String) {
    let body = body.to_string();
    let raw = format!(
        "POST {path_and_query} HTTP/1.1\r\nx-goog-api-key: k\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let got = exchange(port, raw.as_bytes());
    let (head, rest) = got.split_once("\r\n\r\n").unwrap_or((&got, ""));
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    (
        head.to_owned(),
        if chunked {
            dechunk(rest)
        } else {
            rest.to_owned()
        },
    )
}

/// Decode a chunked body (a cut one stops where the bytes stop).
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size, 16) else {
            break;
        };
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].strip_prefix("\r\n").unwrap_or(&tail[n..]);
    }
    out
}

/// The candidates' parts of a Gemini response, checking its shape.
fn gemini_parts(resp: &Value, model: &str) -> Vec<Value> {
    assert_eq!(resp["modelVersion"], model, "{resp}");
    let c = &resp["candidates"][0];
    assert_eq!(c["content"]["role"], "model", "{resp}");
    c["content"]["parts"].as_array().unwrap().clone()
}

/// The last chunk ends the turn: `finishReason: STOP` and non-zero usage.
fn gemini_finished(resp: &Value) {
    assert_eq!(resp["candidates"][0]["finishReason"], "STOP", "{resp}");
    let u = &resp["usageMetadata"];
    for k in [
        "promptTokenCount",
        "candidatesTokenCount",
        "totalTokenCount",
    ] {
        assert!(u[k].as_u64().unwrap() > 0, "{k}: {resp}");
    }
}

fn sse_json(text: &str) -> Vec<Value> {
    parse_sse(text)
        .into_iter()
        .map(|e| {
            assert_eq!(e.name, None, "Gemini's events are data-only");
            json_of(&e.data)
        })
        .collect()
}

/// The Gemini API: generateContent as JSON, streamGenerateContent as SSE
/// (`alt=sse`) and as a JSON array, the model from the path, the tool from
/// the declared schema (write by default, shell on request; the shell
/// command really writes the token), `done` after a `functionResponse`,
/// text without tools, old-style `parameters` schemas, the key as a query
/// parameter, countTokens, the model list and the log's `api`.
#[test]
fn gemini_generate_and_stream_with_tools_and_results() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("log");
    let target = tmp.path().join("out.txt");
    let server = RunningServer::start(ServerConfig {
        log: Some(log.clone()),
        defaults: Directives {
            token: Some("gem-tok".into()),
            target: Some(target.display().to_string()),
            prefer: None,
        },
        ..ServerConfig::default()
    })
    .unwrap();
    let port = server.port();
    let model = "gemini-2.5-pro";
    let base = format!("/v1beta/models/{model}");

    gemini_writes_by_default(port, &base, model, &target);
    gemini_streams_the_shell_on_request(port, &base, model, &target);
    gemini_done_after_the_result(port, &base, model);
    gemini_text_without_tools(port, &base, model);
    gemini_own_schema_dialect(port);
    gemini_tokens_models_and_bad_json(port, &base);

    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(json_of)
        .collect();
    assert_eq!(lines[0]["api"], "gemini");
    assert_eq!(lines[0]["model"], model);
    assert_eq!(lines[0]["stream"], false);
    assert_eq!(lines[1]["stream"], true);
    assert_eq!(lines[1]["tool"], "run_shell_command");
    assert_eq!(lines[2]["decision"], "done");
    assert_eq!(lines[3]["decision"], "text");
}

/// Not streamed, the default preference: one `write_file` call with the
/// declared schema's argument names.
fn gemini_writes_by_default(port: u16, base: &str, model: &str, target: &Path) {
    let (head, body) = gemini_post(
        port,
        &format!("{base}:generateContent"),
        &gemini_body("go", Some(gemini_tools()), false),
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let resp = json_of(&body);
    gemini_finished(&resp);
    let parts = gemini_parts(&resp, model);
    assert_eq!(parts.len(), 1, "{resp}");
    let call = &parts[0]["functionCall"];
    assert_eq!(call["name"], "write_file");
    assert_eq!(
        call["args"],
        json!({"file_path": target.display().to_string(), "content": "gem-tok"})
    );
}

/// Streamed, shell preferred: one chunk with the call, finished; the
/// command really writes the token.
fn gemini_streams_the_shell_on_request(port: u16, base: &str, model: &str, target: &Path) {
    // Streamed, shell preferred: one chunk with the call, finished.
    let (head, body) = gemini_post(
        port,
        &format!("{base}:streamGenerateContent?alt=sse"),
        &gemini_body("go shforge-prefer=shell", Some(gemini_tools()), false),
    );
    assert!(head.contains("text/event-stream"), "{head}");
    let events = sse_json(&body);
    let last = events.last().unwrap();
    gemini_finished(last);
    let call = events
        .iter()
        .flat_map(|e| gemini_parts(e, model))
        .find_map(|p| p.get("functionCall").cloned())
        .expect("a functionCall part");
    assert_eq!(call["name"], "run_shell_command");
    assert_eq!(
        call["args"].as_object().unwrap().len(),
        1,
        "only the required command: {call}"
    );
    let command = call["args"]["command"].as_str().unwrap();
    let ran = Command::new("sh").arg("-c").arg(command).status().unwrap();
    assert!(ran.success());
    assert_eq!(std::fs::read_to_string(target).unwrap(), "gem-tok");
}

/// After the function's result: `done`, streamed as text then the end.
fn gemini_done_after_the_result(port: u16, base: &str, model: &str) {
    // After the function's result: `done`, streamed as text then the end.
    let (_, body) = gemini_post(
        port,
        &format!("{base}:streamGenerateContent?alt=sse"),
        &gemini_body("go", Some(gemini_tools()), true),
    );
    let events = sse_json(&body);
    assert!(events.len() >= 2, "{body}");
    let text: String = events
        .iter()
        .flat_map(|e| gemini_parts(e, model))
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "done");
    gemini_finished(events.last().unwrap());
}

/// No tools: the plain text; streamed without alt=sse: a JSON array.
fn gemini_text_without_tools(port: u16, base: &str, model: &str) {
    // No tools: the plain text; streamed without alt=sse: a JSON array.
    let (head, body) = gemini_post(
        port,
        &format!("{base}:streamGenerateContent?key=k"),
        &gemini_body("hi", None, false),
    );
    assert!(head.contains("application/json"), "{head}");
    let chunks = json_of(&body);
    let chunks = chunks.as_array().unwrap();
    let text: String = chunks
        .iter()
        .flat_map(|e| gemini_parts(e, model))
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, PLAIN_TEXT);
}

/// Gemini's own schema dialect: upper-case types, a required integer.
fn gemini_own_schema_dialect(port: u16) {
    // Gemini's own schema dialect: upper-case types, a required integer.
    let old = json!([{"functionDeclarations": [{"name": "write_file", "parameters": {
        "type": "OBJECT",
        "properties": {"file_path": {"type": "STRING"}, "content": {"type": "STRING"}, "mode": {"type": "INTEGER"}},
        "required": ["file_path", "content", "mode"],
    }}]}]);
    let (_, body) = gemini_post(
        port,
        "/v1/models/m%3AgenerateContent",
        &gemini_body("go", Some(old), false),
    );
    let resp = json_of(&body);
    let args = &gemini_parts(&resp, "m")[0]["functionCall"]["args"];
    assert_eq!(args["content"], "gem-tok");
    assert!(args["mode"].is_number(), "{args}");
}

/// countTokens, the model list, and a body that is not JSON (400 in
/// Gemini's error shape).
fn gemini_tokens_models_and_bad_json(port: u16, base: &str) {
    let (_, body) = gemini_post(
        port,
        &format!("{base}:countTokens"),
        &gemini_body("hi", None, false),
    );
    assert!(json_of(&body)["totalTokens"].as_u64().unwrap() > 0);
    let got = exchange(
        port,
        b"GET /v1beta/models HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    assert!(got.contains("\"models/fake-model\""), "{got}");
    // Not JSON: 400 in Gemini's error shape.
    let got = exchange(
        port,
        format!(
            "POST {base}:generateContent HTTP/1.1\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"
        ).as_bytes(),
    );
    assert!(got.starts_with("HTTP/1.1 400"), "{got}");
    let err = json_of(got.split_once("\r\n\r\n").unwrap().1);
    assert_eq!(err["error"]["status"], "INVALID_ARGUMENT", "{err}");
}

/// The pinned Gemini CLI tarball: `SHFORGE_GEMINI_CLI_TGZ`, else
/// `google-gemini-cli-0.61.0.tgz` (from `npm pack @google/gemini-cli@0.61.0`)
/// in the artifact cache (`SHFORGE_SMOKE_ARTIFACTS`, default
/// /var/cache/shforge/artifacts).
fn gemini_cli_tgz() -> PathBuf {
    if let Some(p) = std::env::var_os("SHFORGE_GEMINI_CLI_TGZ") {
        return PathBuf::from(p);
    }
    std::env::var_os("SHFORGE_SMOKE_ARTIFACTS")
        .map_or_else(
            || PathBuf::from("/var/cache/shforge/artifacts"),
            PathBuf::from,
        )
        .join("google-gemini-cli-0.61.0.tgz")
}

/// The real Gemini CLI 0.61.0, headless against the server's Gemini API:
/// it writes the file with `write_file`, then with `run_shell_command` on
/// request, and a scripted context-length 400 in Gemini's shape ends it
/// with its exit code for a 400 (144, the status mod 256) without a retry.
/// Skips loudly without the tarball (as the smoke test does) or node.
#[test]
fn gemini_cli_writes_the_file_against_the_server() {
    let test = "gemini_cli_writes_the_file_against_the_server";
    let tgz = gemini_cli_tgz();
    if !tgz.is_file() {
        // Like the smoke test: a failure under SHFORGE_REQUIRE_SHELLS=1 only
        // when a variable named where the artifact should be.
        let named = std::env::var_os("SHFORGE_GEMINI_CLI_TGZ").is_some()
            || std::env::var_os("SHFORGE_SMOKE_ARTIFACTS").is_some();
        let why = format!("SKIPPING {test}: no {}", tgz.display());
        if named && std::env::var("SHFORGE_REQUIRE_SHELLS").is_ok_and(|v| v == "1") {
            panic!("{why}");
        }
        support::loud(&why);
        return;
    }
    if !support::require_tool(test, "node") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let unpacked = tmp.path().join("cli");
    std::fs::create_dir(&unpacked).unwrap();
    let tar = Command::new("tar")
        .arg("xzf")
        .arg(&tgz)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(tar.success());
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}"#,
    )
    .unwrap();
    let work = tmp.path().join("work");
    let scratch = tmp.path().join("tmp");
    std::fs::create_dir(&work).unwrap();
    std::fs::create_dir(&scratch).unwrap();
    let log = tmp.path().join("log");
    let server = RunningServer::start(ServerConfig {
        log: Some(log.clone()),
        ..ServerConfig::default()
    })
    .unwrap();
    let run = |prompt: &str| {
        let out = Command::new("node")
            .arg(unpacked.join("package/bundle/gemini.js"))
            .args([
                "-p",
                prompt,
                "--yolo",
                "--skip-trust",
                "-m",
                "gemini-2.5-pro",
                "-o",
                "stream-json",
            ])
            .current_dir(&work)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("GEMINI_CLI_HOME", &home)
            .env("TMPDIR", &scratch)
            .env("GOOGLE_GEMINI_BASE_URL", server.base_url())
            .env("GEMINI_API_KEY", "shforge-test-key")
            .env("GEMINI_CLI_NO_RELAUNCH", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    for (prefer, tool) in [("write", "write_file"), ("shell", "run_shell_command")] {
        let target = work.join(format!("{prefer}.txt"));
        let (code, stdout) = run(&format!(
            "Write the file. shforge-token=gem-{prefer} shforge-target={} shforge-prefer={prefer}",
            target.display()
        ));
        assert_eq!(code, Some(0), "{prefer}: {stdout}");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap_or_default(),
            format!("gem-{prefer}"),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("\"tool_name\":\"{tool}\"")),
            "{stdout}"
        );
        assert!(stdout.contains("\"status\":\"success\""), "{stdout}");
    }
    let (code, stdout) = run("Too long. shforge-fail=context");
    assert_eq!(code, Some(144), "{stdout}");
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(json_of)
        .collect();
    assert!(lines.iter().all(|l| l["api"] == "gemini"), "{lines:?}");
    let decisions: Vec<&str> = lines
        .iter()
        .map(|l| l["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        ["tool", "done", "tool", "done", "fail"],
        "one request each, no retry of the 400"
    );
}

// ---------------------------------------------------------------- fault shapes

/// One model request per API for the fault tests: (path, body), the
/// request streaming or not.
fn fault_request(wire: &str, user: &str, stream: bool) -> (String, Value) {
    match wire {
        "chat" => (
            "/v1/chat/completions".into(),
            request(Api::Chat, stream, "gpt-x", &pi_tools(), user),
        ),
        "responses" => (
            "/v1/responses".into(),
            request(Api::Responses, stream, "gpt-x", &codex_tools(), user),
        ),
        "anthropic" => (
            "/v1/messages".into(),
            request(Api::Anthropic, stream, "claude-x", &claude_tools(), user),
        ),
        _ => (
            format!(
                "/v1beta/models/gemini-x:{}",
                if stream {
                    "streamGenerateContent?alt=sse"
                } else {
                    "generateContent"
                }
            ),
            gemini_body(user, Some(gemini_tools()), false),
        ),
    }
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Every scripted failure in every API's own error shape: the status, the
/// body's layout (OpenAI `{error:{message,type,param,code}}`, Anthropic
/// `{type:"error",error:{type,message},request_id}`, Gemini
/// `{error:{code,message,status}}`), the type/code/status names and the
/// wording clients match on, and Retry-After where asked; the request after
/// the failure gets the usual answer (one test per failure and API).
mod each_failure_in_each_apis_own_shape {
    use super::*;
    use crate::support::cases;

    /// `directive` on `wire`: `status`, the OpenAI type/code | Anthropic
    /// type | Gemini status `name`, and `words` in the message.
    fn fails(directive: &str, wire: &str, status: u16, name: &str, words: &str) {
        let server = RunningServer::start(ServerConfig::default()).unwrap();
        let port = server.port();
        let (path, body) = fault_request(
            wire,
            &format!("go shforge-fail={directive} ({wire})"),
            false,
        );
        let (head, text) = gemini_post(port, &path, &body);
        let what = format!("{directive} on {wire}");
        assert!(
            head.starts_with(&format!("HTTP/1.1 {status} ")),
            "{what}: {head}"
        );
        let v = json_of(&text);
        let err = &v["error"];
        let message = err["message"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: {v}"));
        assert!(message.contains(words), "{what}: {message}");
        match wire {
            "chat" | "responses" => {
                assert_eq!(keys(&v), ["error"], "{what}: {v}");
                assert_eq!(
                    keys(err),
                    ["code", "message", "param", "type"],
                    "{what}: {v}"
                );
                assert!(err["code"] == name || err["type"] == name, "{what}: {v}");
            }
            "anthropic" => {
                assert_eq!(keys(&v), ["error", "request_id", "type"], "{what}: {v}");
                assert_eq!(v["type"], "error");
                assert_eq!(err["type"], name, "{what}: {v}");
                assert!(header(&head, "request-id").is_some(), "{what}: {head}");
            }
            _ => {
                assert_eq!(err["code"], status, "{what}: {v}");
                assert_eq!(err["status"], name, "{what}: {v}");
            }
        }
        let retry = header(&head, "retry-after");
        assert_eq!(
            retry,
            directive.contains("retry-after=5").then_some("5"),
            "{what}: {head}"
        );
        // Once only: the same conversation now gets its tool call.
        let (head, _) = gemini_post(port, &path, &body);
        assert!(head.starts_with("HTTP/1.1 200"), "{what}, again: {head}");
    }

    cases! { fails;
        http_429_retry_after_on_chat => (
            "429:retry-after=5",
            "chat",
            429,
            "rate_limit_exceeded",
            "Rate limit reached",
        ),
        http_429_retry_after_on_responses => (
            "429:retry-after=5",
            "responses",
            429,
            "rate_limit_exceeded",
            "Rate limit reached",
        ),
        http_429_retry_after_on_anthropic => (
            "429:retry-after=5",
            "anthropic",
            429,
            "rate_limit_error",
            "rate limit",
        ),
        http_429_retry_after_on_gemini => (
            "429:retry-after=5",
            "gemini",
            429,
            "RESOURCE_EXHAUSTED",
            "Resource has been exhausted",
        ),
        quota_on_chat => (
            "quota",
            "chat",
            429,
            "insufficient_quota",
            "exceeded your current quota",
        ),
        quota_on_anthropic => (
            "quota",
            "anthropic",
            400,
            "invalid_request_error",
            "credit balance is too low",
        ),
        quota_on_gemini => (
            "quota",
            "gemini",
            429,
            "RESOURCE_EXHAUSTED",
            "exceeded your current quota",
        ),
        http_401_on_chat => ("401", "chat", 401, "invalid_api_key", "Incorrect API key"),
        http_401_on_responses => ("401", "responses", 401, "invalid_api_key", "Incorrect API key"),
        http_401_on_anthropic => (
            "401",
            "anthropic",
            401,
            "authentication_error",
            "invalid x-api-key",
        ),
        http_401_on_gemini => (
            "401",
            "gemini",
            401,
            "UNAUTHENTICATED",
            "invalid authentication credentials",
        ),
        auth_on_gemini => ("auth", "gemini", 400, "INVALID_ARGUMENT", "API key not valid"),
        auth_on_anthropic => (
            "auth",
            "anthropic",
            401,
            "authentication_error",
            "invalid x-api-key",
        ),
        http_404_on_chat => (
            "404",
            "chat",
            404,
            "model_not_found",
            "The model `gpt-x` does not exist",
        ),
        model_on_responses => (
            "model",
            "responses",
            404,
            "model_not_found",
            "The model `gpt-x` does not exist",
        ),
        http_404_on_anthropic => ("404", "anthropic", 404, "not_found_error", "model: claude-x"),
        model_on_gemini => ("model", "gemini", 404, "NOT_FOUND", "models/gemini-x is not found"),
        context_on_chat => (
            "context",
            "chat",
            400,
            "context_length_exceeded",
            "maximum context length",
        ),
        context_on_responses => (
            "context",
            "responses",
            400,
            "context_length_exceeded",
            "exceeds the context window",
        ),
        context_on_anthropic => (
            "context",
            "anthropic",
            400,
            "invalid_request_error",
            "prompt is too long",
        ),
        context_on_gemini => (
            "context",
            "gemini",
            400,
            "INVALID_ARGUMENT",
            "exceeds the maximum number of tokens",
        ),
        http_529_on_anthropic => ("529", "anthropic", 529, "overloaded_error", "Overloaded"),
        overloaded_on_anthropic => (
            "overloaded",
            "anthropic",
            529,
            "overloaded_error",
            "Overloaded",
        ),
        overloaded_on_chat => ("overloaded", "chat", 503, "server_error", "overloaded"),
        http_503_on_gemini => ("503", "gemini", 503, "UNAVAILABLE", "The model is overloaded"),
        http_503_on_responses => ("503", "responses", 503, "server_error", "overloaded"),
        http_500_on_anthropic => ("500", "anthropic", 500, "api_error", "Internal server error"),
        http_500_on_chat => (
            "500",
            "chat",
            500,
            "server_error",
            "error while processing your request",
        ),
    }
}

/// `shforge-fail=cut`: a 200 stream that stops part way — the head, some
/// events, then the connection closes without the stream's end (no final
/// chunk, no `[DONE]`/`message_stop`/`response.completed`/finishReason);
/// curl reports the transfer cut. A JSON answer is cut half way through its
/// Content-Length. The next request of the conversation is whole.
#[test]
fn a_stream_cut_mid_answer() {
    let server = RunningServer::start(ServerConfig::default()).unwrap();
    let port = server.port();
    for wire in ["chat", "responses", "anthropic", "gemini"] {
        for (directive, stream) in [("cut", true), ("cut:after=1", true), ("cut", false)] {
            let user = format!("go shforge-fail={directive} {wire} {stream}");
            let (path, body) = fault_request(wire, &user, stream);
            let what = format!("{directive} on {wire} (stream {stream})");
            let raw = {
                let b = body.to_string();
                format!(
                    "POST {path} HTTP/1.1\r\nContent-Length: {}\r\n\r\n{b}",
                    b.len()
                )
            };
            let got = exchange(port, raw.as_bytes());
            let (head, rest) = got.split_once("\r\n\r\n").unwrap();
            assert!(head.starts_with("HTTP/1.1 200"), "{what}: {head}");
            assert!(
                header(head, "connection") == Some("close"),
                "{what}: {head}"
            );
            if stream {
                assert!(
                    !rest.ends_with("0\r\n\r\n"),
                    "{what}: the stream ended: {rest}"
                );
                let events = parse_sse(&dechunk(rest));
                let whole = {
                    let (_, whole) = gemini_post(
                        port,
                        &path,
                        &fault_request(wire, &format!("{wire} {stream} whole"), stream).1,
                    );
                    parse_sse(&whole).len()
                };
                let expected = if directive.ends_with("after=1") {
                    1.min(whole - 1)
                } else {
                    whole / 2
                };
                assert_eq!(events.len(), expected, "{what}: {rest}");
                assert!(events.len() < whole, "{what}");
            } else {
                let len: usize = header(head, "content-length").unwrap().parse().unwrap();
                assert_eq!(rest.len(), len / 2, "{what}");
            }
            // The same conversation again: whole.
            let (head, text) = gemini_post(port, &path, &body);
            assert!(head.starts_with("HTTP/1.1 200"), "{what}: {head}");
            if stream && wire != "gemini" {
                assert!(
                    text.contains("[DONE]")
                        || text.contains("message_stop")
                        || text.contains("response.completed"),
                    "{what}: {text}"
                );
            }
        }
    }
    // curl, an independent client, sees the cut as an error (18: partial file).
    if have_curl("a_stream_cut_mid_answer") {
        let body = request(
            Api::Anthropic,
            true,
            "m",
            &claude_tools(),
            "shforge-fail=cut curl",
        );
        let mut c = Command::new("curl");
        c.args([
            "-sS",
            "--http1.1",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
        ])
        .arg(body.to_string())
        .arg(format!("{}/v1/messages", server.base_url()));
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(18), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("message_start") && !text.contains("message_stop"),
            "{text}"
        );
    }
}
