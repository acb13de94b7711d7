//! A reader family for one JSON document holding an OpenAI chat-messages
//! list, the shape most Python agent loops keep (litellm's and the OpenAI
//! SDK's `messages`): `{role: "system"|"user", content}`, `{role:
//! "assistant", content, tool_calls: [{id, function: {name, arguments (a
//! JSON string)}}]}`, `{role: "tool", tool_call_id, content}`, where
//! `content` is a string or a list of `{type: "text", text}` blocks.
//!
//! A harness of this shape is one [`ChatDoc`] row: where its document is
//! (a [`Layout`]), where the list is in it, and the few places it records
//! what the list does not (the model, the CLI's version, per-answer token
//! usage, a tool's exit code, the run's end). The reader itself is shared.
//!
//! Rows:
//! * mini-swe-agent ([`MINI_SWE_AGENT`]): `mini-swe-agent-state/
//!   trajectory.json`, written by the agent after every step (atomically,
//!   by the bundle's boot.py): `{info: {mini_version, exit_status,
//!   submission, model_stats, config: {model: {model_name}}}, messages,
//!   trajectory_format}`. Each message has an `extra`: an answer's
//!   `response` (litellm's, with `usage` and `model`) and `timestamp`
//!   (seconds since the epoch), a `tool` message's `returncode` (non-zero,
//!   or -1 for a timeout: an error) and `raw_output`; the run ends with a
//!   `{role: "exit", content, extra: {exit_status, submission}}` message,
//!   kept with an `exit` part (no text: it is not a user turn). A run cut
//!   off mid-command leaves its last call without a result.
//! * Kimi CLI ([`KIMI_CLI`]): `sessions/<md5(workdir)>/<id>/context.jsonl`
//!   under its `KIMI_SHARE_DIR`, the messages one a line (kosong's
//!   `Message`: `content` a list of `text`/`think` blocks), appended as the
//!   run goes, with the CLI's own bookkeeping lines among them (roles
//!   starting with `_`: `_system_prompt` is kept as the system message,
//!   `_checkpoint` and `_usage` are left out).
//! * Mistral Vibe ([`MISTRAL_VIBE`]): `logs/session/session_*/
//!   messages.jsonl` under VIBE_HOME, one chat message a line, appended as
//!   the session goes (the family's JSONL form: [`parse_lines`] reads the
//!   lines as the document's list). A `tool` message's `tool_result.output`
//!   holds what the tool returned (`returncode` for `bash`). The session's
//!   id, start, working directory, model and token totals are in the
//!   `meta.json` beside it (its `stats`: Vibe keeps no per-answer usage),
//!   read as the document's `meta`; the model is the `shforge` alias of the
//!   harness spec's config.toml. A failed tool's message is a
//!   `<tool_error>` element with no `tool_result`: an error.

use std::path::Path;

use serde_json::Value;

use super::jsonl::{self, Foreign, Head, Layout, Line, Parsed, count_at, str_at};
use super::{Message, Part, PartKind, Tokens, ToolStatus};

/// One harness of the family: where its document is and what it records
/// beyond the messages. Pointers are JSON pointers (RFC 6901).
pub(super) struct ChatDoc {
    /// Where the document is below the data dir.
    pub layout: Layout,
    /// The messages list in the document.
    pub messages: &'static str,
    /// The model name in the document, when it records one there.
    pub model: Option<&'static str>,
    /// The CLI's version in the document.
    pub version: Option<&'static str>,
    /// An assistant message's token usage (OpenAI's `usage` object:
    /// `prompt_tokens`, `completion_tokens`, `total_tokens`,
    /// `prompt_tokens_details.cached_tokens`,
    /// `completion_tokens_details.reasoning_tokens`), from the message.
    pub usage: Option<&'static str>,
    /// A tool message's exit code, from the message: non-zero is an error.
    pub returncode: Option<&'static str>,
    /// The final answer in the document, added as text to the last
    /// assistant message when it is not empty (its trailing newlines
    /// dropped: mini-swe-agent's is a command's output).
    pub answer: Option<&'static str>,
    /// A role that marks the run's end (kept as an `Other` part named so).
    pub end_role: Option<&'static str>,
    /// In the end message, where the run's status is and the value that
    /// means the agent finished by its own choice.
    pub end_ok: Option<(&'static str, &'static str)>,
    /// In a tool message, where and what marks a result the harness padded
    /// in for a call it stopped at: when the end message says finished
    /// ([`ChatDoc::end_ok`]), such results right before it are the ending
    /// call's, completed, with the end message's content as output.
    pub unrun: Option<(&'static str, &'static str)>,
    /// The messages are the file's lines (JSONL) rather than a list in one
    /// document ([`ChatDoc::messages`] is then unused).
    pub lines: bool,
    /// Roles starting with this are the harness's bookkeeping, left out
    /// but for those renamed by [`ChatDoc::rename`].
    pub internal: Option<&'static str>,
    /// Roles kept under another name (Kimi's `_system_prompt` → `system`).
    pub rename: &'static [(&'static str, &'static str)],
    /// The session's id is the name of the file's directory (Kimi:
    /// `<id>/context.jsonl`), not the file's stem.
    pub id_from_dir: bool,
}

/// mini-swe-agent's `trajectory.json` (see the module doc).
pub(super) const MINI_SWE_AGENT: ChatDoc = ChatDoc {
    layout: Layout {
        harness: "mini-swe-agent",
        sub: "mini-swe-agent-state",
        pattern: "trajectory.json",
        depth: 0,
        is_transcript: |name| name == "trajectory.json",
        recognize: recognize_mini_swe_agent,
    },
    messages: "/messages",
    model: Some("/info/config/model/model_name"),
    version: Some("/info/mini_version"),
    usage: Some("/extra/response/usage"),
    returncode: Some("/extra/returncode"),
    answer: Some("/info/submission"),
    end_role: Some("exit"),
    end_ok: Some(("/extra/exit_status", "Submitted")),
    unrun: Some(("/extra/exception_info", "action was not executed")),
    lines: false,
    internal: None,
    rename: &[],
    id_from_dir: false,
};

/// Kimi CLI's `context.jsonl` (see the module doc).
pub(super) const KIMI_CLI: ChatDoc = ChatDoc {
    layout: Layout {
        harness: "kimi-cli",
        sub: "sessions",
        pattern: "*/*/context.jsonl",
        depth: 2,
        is_transcript: |name| name == "context.jsonl",
        recognize: recognize_kimi_cli,
    },
    messages: "",
    model: None,
    version: None,
    usage: None,
    returncode: None,
    answer: None,
    end_role: None,
    end_ok: None,
    unrun: None,
    lines: true,
    internal: Some("_"),
    rename: &[("_system_prompt", "system")],
    id_from_dir: true,
};

/// The parser of Kimi CLI's rows (a [`jsonl::Parser`]). context.jsonl holds
/// no token counts; the `wire.jsonl` beside it does, one `StatusUpdate` per
/// answer (`payload.token_usage`: `input_other`, `input_cache_read`,
/// `input_cache_creation`, `output`): their sums are the session's totals.
pub(super) fn parse_kimi_cli(path: &Path, lines: &[Line]) -> Parsed {
    let mut parsed = parse(&KIMI_CLI, path, lines);
    if parsed.session.tokens == Tokens::default() {
        parsed.session.tokens = kimi_wire_usage(path);
    }
    parsed
}

/// The sum of the `StatusUpdate` token counts of the `wire.jsonl` beside
/// `transcript` (nothing when it is missing or unreadable).
fn kimi_wire_usage(transcript: &Path) -> Tokens {
    let mut t = Tokens::default();
    let Some(file) = transcript.parent().map(|d| d.join("wire.jsonl")) else {
        return t;
    };
    let mut budget = jsonl::MAX_TOTAL;
    for l in jsonl::read_lines(&file, &mut budget).unwrap_or_default() {
        if l.value.pointer("/message/type").and_then(Value::as_str) != Some("StatusUpdate") {
            continue;
        }
        let Some(u) = l.value.pointer("/message/payload/token_usage") else {
            continue;
        };
        let read = count_at(u, "input_cache_read");
        let write = count_at(u, "input_cache_creation");
        t.input += count_at(u, "input_other") + read + write;
        t.output += count_at(u, "output");
        t.cache_read += read;
        t.cache_write += write;
    }
    t.total = t.input + t.output;
    t
}

fn recognize_kimi_cli(lines: &[Line]) -> Result<(), Foreign> {
    recognize(&KIMI_CLI, lines)
}

/// The parser of mini-swe-agent's rows (a [`jsonl::Parser`]).
pub(super) fn parse_mini_swe_agent(path: &Path, lines: &[Line]) -> Parsed {
    parse(&MINI_SWE_AGENT, path, lines)
}

fn recognize_mini_swe_agent(lines: &[Line]) -> Result<(), Foreign> {
    recognize(&MINI_SWE_AGENT, lines)
}

/// Mistral Vibe's `session_*/messages.jsonl` (see the module doc).
pub(super) const MISTRAL_VIBE: ChatDoc = ChatDoc {
    layout: Layout {
        harness: "mistral-vibe",
        sub: "session",
        pattern: "session_*/messages.jsonl",
        depth: 1,
        is_transcript: |name| name == "messages.jsonl",
        recognize: recognize_lines,
    },
    messages: "/messages",
    model: Some("/meta/config/models/shforge/name"),
    version: None,
    usage: None,
    returncode: Some("/tool_result/output/returncode"),
    answer: None,
    end_role: None,
    end_ok: None,
    unrun: None, // parse_lines wraps the lines as `/messages` beside `/meta`.
    lines: false,
    internal: None,
    rename: &[],
    id_from_dir: false,
};

/// The parser of Mistral Vibe's transcripts (a [`jsonl::Parser`]).
pub(super) fn parse_mistral_vibe(path: &Path, lines: &[Line]) -> Parsed {
    let meta = side_document(path, "meta.json");
    let mut parsed = parse_lines(&MISTRAL_VIBE, path, lines, meta.clone());
    let at = |p: &str| {
        meta.pointer(p)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let s = &mut parsed.session;
    failed_tools(&mut s.messages);
    if let Some(id) = at("/session_id") {
        s.id = id;
    }
    s.directory = s
        .directory
        .take()
        .or_else(|| at("/environment/working_directory"));
    parsed.started = parsed.started.or_else(|| at("/start_time"));
    if let Some(stats) = meta.get("stats").filter(|v| v.is_object())
        && s.tokens == Tokens::default()
    {
        let input = count_at(stats, "session_prompt_tokens");
        let output = count_at(stats, "session_completion_tokens");
        s.tokens = Tokens {
            input,
            output,
            reasoning: 0,
            cache_read: count_at(stats, "session_cached_tokens"),
            cache_write: 0,
            total: count_at(stats, "session_total_llm_tokens").max(input + output),
        };
    }
    parsed
}

/// Vibe records a tool that failed (a non-zero exit, a refused path) as a
/// `tool` message whose content is a `<tool_error>` element and with no
/// `tool_result`: an error, on the result and on its call.
fn failed_tools(messages: &mut [Message]) {
    let mut failed = Vec::new();
    for p in messages.iter_mut().flat_map(|m| m.parts.iter_mut()) {
        if let PartKind::ToolResult {
            call_id,
            is_error,
            output: Value::String(text),
        } = &mut p.kind
            && text.starts_with("<tool_error>")
        {
            *is_error = true;
            failed.extend(call_id.clone());
        }
    }
    for p in messages.iter_mut().flat_map(|m| m.parts.iter_mut()) {
        if let PartKind::ToolCall {
            call_id: Some(id),
            status,
            ..
        } = &mut p.kind
            && failed.contains(id)
        {
            *status = ToolStatus::Error;
        }
    }
}

/// A JSON document beside a transcript (`meta.json`), or null when it is
/// not there or not a JSON object (it is written after the first message).
fn side_document(transcript: &Path, name: &str) -> Value {
    let Some(file) = transcript.parent().map(|d| d.join(name)) else {
        return Value::Null;
    };
    let mut budget = jsonl::MAX_TOTAL;
    jsonl::read_document(&file, &mut budget)
        .ok()
        .and_then(|mut l| l.pop())
        .map(|l| l.value)
        .filter(Value::is_object)
        .unwrap_or(Value::Null)
}

/// The family's JSONL form: each line one message, read as the document
/// `{messages: [LINES], meta: META}` (a row's pointers reach its side
/// document through `/meta`).
pub(super) fn parse_lines(doc: &ChatDoc, path: &Path, lines: &[Line], meta: Value) -> Parsed {
    let list: Vec<Value> = lines.iter().map(|l| l.value.clone()).collect();
    let document = Line {
        no: 1,
        value: serde_json::json!({ "messages": list, "meta": meta }),
    };
    parse(doc, path, std::slice::from_ref(&document))
}

/// Lines that are each a message: an object with a string `role`.
fn recognize_lines(lines: &[Line]) -> Result<(), Foreign> {
    match lines
        .iter()
        .find(|l| !l.value.get("role").is_some_and(Value::is_string))
    {
        None => Ok(()),
        Some(l) => Err((l.no, "not a chat message (an object with a `role`)".into())),
    }
}

/// An object whose messages pointer is a list of objects with a `role`
/// (or, for a JSONL row, lines that each are one).
fn recognize(doc: &ChatDoc, lines: &[Line]) -> Result<(), Foreign> {
    if doc.lines {
        return recognize_lines(lines);
    }
    let Some(first) = lines.first() else {
        return Ok(());
    };
    let ok = first
        .value
        .pointer(doc.messages)
        .and_then(Value::as_array)
        .is_some_and(|ms| {
            ms.iter()
                .all(|m| m.get("role").is_some_and(Value::is_string))
        });
    if ok {
        return Ok(());
    }
    Err((
        first.no,
        format!(
            "not a document with a `{}` list of `{{\"role\":…}}` messages",
            doc.messages
        ),
    ))
}

fn parse(doc: &ChatDoc, path: &Path, lines: &[Line]) -> Parsed {
    let value = lines.first().map(|l| &l.value).unwrap_or(&Value::Null);
    let at = |p: Option<&str>| {
        p.and_then(|p| value.pointer(p))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let mut head = Head::default();
    head.agent.model = at(doc.model);
    head.agent.version = at(doc.version);
    if doc.id_from_dir {
        head.id = path
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned());
    }
    let raw: Vec<&Value> = if doc.lines {
        lines.iter().map(|l| &l.value).collect()
    } else {
        value
            .pointer(doc.messages)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect()
    };
    let mut tokens = Tokens::default();
    let mut messages = Vec::new();
    for (i, v) in raw
        .into_iter()
        .filter(|m| m.is_object())
        .filter_map(|m| kept(doc, m))
        .enumerate()
    {
        let m = message(doc, &v, i);
        if let Some(u) = m.usage {
            tokens += u;
        }
        messages.push(m);
    }
    ended(doc, &mut messages);
    if let Some(text) = at(doc.answer).map(|t| t.trim_end_matches(['\n', '\r']).to_owned())
        && !text.is_empty()
        && let Some(last) = messages.iter_mut().rev().find(|m| m.role == "assistant")
    {
        last.parts.push(jsonl::part(
            &Value::String(text.clone()),
            PartKind::Text { text },
        ));
    }
    head.finish(path, tokens, messages)
}

/// A message as the row keeps it: bookkeeping roles left out, renamed
/// ones under their new role.
fn kept(doc: &ChatDoc, m: &Value) -> Option<Value> {
    let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
    if let Some(&(_, to)) = doc.rename.iter().find(|(from, _)| *from == role) {
        let mut m = m.clone();
        m["role"] = Value::String(to.to_owned());
        return Some(m);
    }
    match doc.internal {
        Some(prefix) if role.starts_with(prefix) => None,
        _ => Some(m.clone()),
    }
}

/// The results padded in before a finished run's end message are the
/// ending call's (see [`ChatDoc::unrun`]).
fn ended(doc: &ChatDoc, messages: &mut [Message]) {
    let (Some(role), Some((status, ok)), Some((mark, unrun))) =
        (doc.end_role, doc.end_ok, doc.unrun)
    else {
        return;
    };
    let Some(end) = messages.iter().rposition(|m| m.role == role) else {
        return;
    };
    if messages[end].data.pointer(status).and_then(Value::as_str) != Some(ok) {
        return;
    }
    let output = messages[end]
        .data
        .get("content")
        .cloned()
        .unwrap_or(Value::Null);
    for m in messages[..end].iter_mut().rev() {
        if m.role != "tool" || m.data.pointer(mark).and_then(Value::as_str) != Some(unrun) {
            break;
        }
        for p in &mut m.parts {
            if let PartKind::ToolResult {
                is_error,
                output: o,
                ..
            } = &mut p.kind
            {
                *is_error = false;
                *o = output.clone();
            }
        }
    }
}

fn message(doc: &ChatDoc, v: &Value, i: usize) -> Message {
    let role = str_at(v, "role").unwrap_or_default();
    let mut usage = None;
    let parts = match role.as_str() {
        "assistant" => {
            let mut parts = jsonl::content_parts(v.get("content"), content_block);
            let calls = v.get("tool_calls").and_then(Value::as_array);
            parts.extend(calls.into_iter().flatten().map(tool_call));
            usage = doc
                .usage
                .and_then(|p| v.pointer(p))
                .filter(|u| u.is_object())
                .map(tokens_of);
            parts
        }
        "tool" => vec![tool_result(doc, v)],
        r if Some(r) == doc.end_role => vec![jsonl::part(
            v,
            PartKind::Other {
                name: Some(r.to_owned()),
            },
        )],
        _ => jsonl::content_parts(v.get("content"), content_block),
    };
    Message {
        id: format!("message-{i}"),
        role,
        parts,
        data: v.clone(),
        usage,
    }
}

/// OpenAI's `usage` object as [`Tokens`] (its `prompt_tokens` include the
/// cached ones).
fn tokens_of(u: &Value) -> Tokens {
    Tokens {
        input: count_at(u, "prompt_tokens"),
        output: count_at(u, "completion_tokens"),
        reasoning: u
            .pointer("/completion_tokens_details/reasoning_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        cache_read: u
            .pointer("/prompt_tokens_details/cached_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        cache_write: 0,
        total: count_at(u, "total_tokens"),
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

/// A `tool` message: its content is the output; an error when the row's
/// exit code is there and not 0.
fn tool_result(doc: &ChatDoc, v: &Value) -> Part {
    let is_error = doc
        .returncode
        .and_then(|p| v.pointer(p))
        .and_then(Value::as_i64)
        .is_some_and(|rc| rc != 0);
    jsonl::part(
        v,
        PartKind::ToolResult {
            call_id: str_at(v, "tool_call_id"),
            is_error,
            output: v.get("content").cloned().unwrap_or(Value::Null),
        },
    )
}
