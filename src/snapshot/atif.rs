//! A [`Snapshot`] as an Agent Trajectory Interchange Format document
//! (Harbor's RFC 0001, `ATIF-v1.8` as the pinned `atif` models implement
//! it): `shforge snapshot … --format atif`.
//!
//! The mapping, the same for every harness (what each harness leaves out is
//! in docs/capture.md's table):
//!
//! * each `user` message with text → a `user` step; `system`/`developer`
//!   messages → `system` steps;
//! * each model response → one `agent` step: its text as `message`, its
//!   reasoning as `reasoning_content`, its tool calls as `tool_calls`, the
//!   tokens the harness recorded for it as `metrics`. A response the
//!   harness split over several messages (Claude Code: one line per
//!   content block with the same `message.id`; Codex: one item per line,
//!   closed by a `token_usage_record`) is merged back into one step;
//! * each tool result → an `observation` result of the step whose tool
//!   call it answers (`source_call_id`); OpenCode keeps the result on the
//!   call itself, which gives the same;
//! * a tool call that never finished (the run was killed mid-tool) keeps
//!   its step, has no observation result, and is marked
//!   `extra.status = "unfinished"` (with the harness's own status in
//!   `extra.harness_status`);
//! * subagent sessions (OpenCode's `parent_id`) → `subagent_trajectories`;
//! * the root `extra.shforge` says what the snapshot knows of how the run
//!   ended (see [`ShforgeExtra`]); its `outcome` is where a typed outcome
//!   (`shforge outcome`) goes: [`to_atif`] takes it as an argument.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Kind, Message, PartKind, SessionRecord, Snapshot, Tokens, ToolStatus};

/// The `schema_version` written: the version the pinned `atif` package
/// (`.ci/python-tools.sh`) validates.
pub const SCHEMA_VERSION: &str = "ATIF-v1.8";

/// The root document.
#[derive(Debug, Serialize)]
struct Trajectory {
    schema_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trajectory_id: Option<String>,
    agent: Agent,
    steps: Vec<Step>,
    #[serde(skip_serializing_if = "Option::is_none")]
    notes: Option<String>,
    final_metrics: FinalMetrics,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subagent_trajectories: Vec<Trajectory>,
}

#[derive(Debug, Serialize)]
struct Agent {
    name: String,
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_name: Option<String>,
}

#[derive(Debug, Default, Serialize)]
struct Step {
    step_id: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
    source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_name: Option<String>,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<ToolCall>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    observation: Option<Observation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metrics: Option<Metrics>,
    extra: Map<String, Value>,
}

#[derive(Debug, Serialize)]
struct ToolCall {
    tool_call_id: String,
    function_name: String,
    arguments: Map<String, Value>,
    extra: Map<String, Value>,
}

#[derive(Debug, Default, Serialize)]
struct Observation {
    results: Vec<ObservationResult>,
}

#[derive(Debug, Serialize)]
struct ObservationResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    source_call_id: Option<String>,
    content: String,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
}

#[derive(Debug, Serialize)]
struct Metrics {
    prompt_tokens: u64,
    completion_tokens: u64,
    cached_tokens: u64,
    extra: Value,
}

#[derive(Debug, Serialize)]
struct FinalMetrics {
    total_prompt_tokens: u64,
    total_completion_tokens: u64,
    total_cached_tokens: u64,
    total_steps: usize,
    extra: Value,
}

/// What the root's `extra.shforge` holds.
#[derive(Debug, Serialize)]
pub struct ShforgeExtra {
    /// The harness's CLI name (`opencode`, `kilo`, `claude-code`, `pi`,
    /// `codex`).
    pub harness: String,
    /// Where the snapshot read it: `db` (SQLite) or `dir` (JSONL).
    pub source: &'static str,
    /// Whether the session looks finished: no tool call left unfinished and
    /// the last assistant message has text. A killed run is `false`; a run
    /// that ended by itself on an error may still be `true`: the typed
    /// `outcome` tells those apart.
    pub finished: bool,
    /// The tool calls left without a result (`{tool, tool_call_id,
    /// harness_status}`), in order.
    pub unfinished_tool_calls: Vec<Value>,
    /// Number of sessions in the snapshot (the root plus subagents).
    pub sessions: usize,
    /// The typed outcome of the run (`shforge outcome`'s object) when the
    /// caller has one, else `null`.
    pub outcome: Value,
}

/// The snapshot as one ATIF document (compact JSON, final newline).
/// `outcome` is put as is in `extra.shforge.outcome` (`null` when `None`).
pub fn to_atif(snapshot: &Snapshot, outcome: Option<&Value>) -> Vec<u8> {
    let kind: Option<Kind> = snapshot.harness.parse().ok();
    let top: Vec<&SessionRecord> = snapshot
        .sessions
        .iter()
        .filter(|s| s.parent_id.is_none())
        .collect();
    let subs: Vec<&SessionRecord> = snapshot
        .sessions
        .iter()
        .filter(|s| s.parent_id.is_some())
        .collect();
    let mut root = trajectory(kind, &snapshot.harness, &top);
    root.subagent_trajectories = subs
        .iter()
        .map(|s| {
            let mut t = trajectory(kind, &snapshot.harness, &[*s]);
            t.trajectory_id = Some(s.id.clone());
            t.extra = Some(serde_json::json!({
                "shforge": {"parent_session_id": s.parent_id, "title": s.title},
            }));
            t
        })
        .collect();
    if top.len() > 1 {
        root.notes = Some(format!(
            "{} top-level sessions, their steps concatenated in start order; \
             each step's extra.session_id names its session",
            top.len()
        ));
    }
    let unfinished = unfinished_calls(&snapshot.sessions);
    let shforge = ShforgeExtra {
        harness: snapshot.harness.clone(),
        source: kind.map_or("unknown", |k| match k.source() {
            super::SourceKind::Db => "db",
            super::SourceKind::Dir => "dir",
        }),
        finished: unfinished.is_empty() && snapshot.summary.final_text.is_some(),
        unfinished_tool_calls: unfinished,
        sessions: snapshot.sessions.len(),
        outcome: outcome.cloned().unwrap_or(Value::Null),
    };
    root.extra = Some(serde_json::json!({ "shforge": shforge }));
    let mut out = serde_json::to_vec(&root).expect("a trajectory always serializes");
    out.push(b'\n');
    out
}

fn unfinished_calls(sessions: &[SessionRecord]) -> Vec<Value> {
    let mut out = Vec::new();
    for part in sessions
        .iter()
        .flat_map(|s| &s.messages)
        .flat_map(|m| &m.parts)
    {
        if let PartKind::ToolCall {
            tool,
            call_id,
            status,
            ..
        } = &part.kind
            && status.is_unfinished()
        {
            out.push(serde_json::json!({
                "tool": tool, "tool_call_id": call_id, "harness_status": status.name(),
            }));
        }
    }
    out
}

/// One trajectory from some sessions (their steps concatenated).
fn trajectory(kind: Option<Kind>, harness: &str, sessions: &[&SessionRecord]) -> Trajectory {
    let mut b = Builder::new(kind);
    let several = sessions.len() > 1;
    for s in sessions {
        b.session = several.then(|| s.id.clone());
        for m in &s.messages {
            b.message(m);
        }
    }
    let steps = b.finish();
    let mut tokens = Tokens::default();
    for s in sessions {
        tokens += s.tokens;
    }
    let model_name = steps
        .iter()
        .find_map(|s| s.model_name.clone())
        .or_else(|| sessions.iter().find_map(|s| s.agent.model.clone()));
    let version = sessions
        .iter()
        .find_map(|s| s.agent.version.clone())
        .unwrap_or_else(|| "unknown".to_owned());
    let (prompt, completion, cached) = atif_counts(kind, &tokens);
    Trajectory {
        schema_version: SCHEMA_VERSION,
        session_id: sessions.first().map(|s| s.id.clone()),
        trajectory_id: None,
        agent: Agent {
            name: harness.to_owned(),
            version,
            model_name,
        },
        final_metrics: FinalMetrics {
            total_prompt_tokens: prompt,
            total_completion_tokens: completion,
            total_cached_tokens: cached,
            total_steps: steps.len(),
            extra: serde_json::to_value(tokens).expect("tokens serialize"),
        },
        steps,
        notes: None,
        extra: None,
        subagent_trajectories: Vec::new(),
    }
}

/// ATIF's counts from the harness's: `prompt_tokens` includes the cached
/// input. The harnesses that record OpenAI-style usage (Codex, Gemini CLI,
/// NOOA, Continue CLI, Copilot CLI, and the chat-messages family:
/// mini-swe-agent, Kimi CLI, Mistral Vibe) already count it in `input`;
/// the others (Anthropic style, and OpenCode/Kilo/Pi, which subtract it)
/// do not. `completion_tokens` includes reasoning: OpenCode/Kilo count it
/// apart.
fn atif_counts(kind: Option<Kind>, t: &Tokens) -> (u64, u64, u64) {
    let prompt = match kind {
        Some(
            Kind::Codex
            | Kind::GeminiCli
            | Kind::Nooa
            | Kind::ContinueCli
            | Kind::CopilotCli
            | Kind::MiniSweAgent
            | Kind::KimiCli
            | Kind::MistralVibe,
        ) => t.input,
        _ => super::sum(&[t.input, t.cache_read, t.cache_write]),
    };
    let completion = match kind {
        Some(Kind::OpenCode | Kind::Kilo | Kind::GeminiCli) => t.output.saturating_add(t.reasoning),
        _ => t.output,
    };
    (prompt, completion, t.cache_read)
}

/// Builds the steps of one trajectory, message by message.
struct Builder {
    kind: Option<Kind>,
    steps: Vec<Step>,
    /// Tool call id → index of the step that made it.
    calls: HashMap<String, usize>,
    /// The key of the model response the last agent step holds, while
    /// more of it may follow.
    open: Option<String>,
    /// The session id to write on each step, when several are concatenated.
    session: Option<String>,
    /// Synthesized call ids so far (calls the harness gave no id).
    synthesized: usize,
}

impl Builder {
    fn new(kind: Option<Kind>) -> Self {
        Builder {
            kind,
            steps: Vec::new(),
            calls: HashMap::new(),
            open: None,
            session: None,
            synthesized: 0,
        }
    }

    fn message(&mut self, m: &Message) {
        let texts = join(m.parts.iter().filter_map(|p| match &p.kind {
            PartKind::Text { text } => Some(text.as_str()),
            _ => None,
        }));
        match m.role.as_str() {
            "assistant" => self.agent(m, texts),
            role => {
                self.open = None;
                self.results(m);
                if let Some(text) = texts {
                    let source = match role {
                        "system" | "developer" => "system",
                        _ => "user",
                    };
                    let mut step = self.step(source, m);
                    step.message = text;
                    self.steps.push(step);
                }
            }
        }
    }

    /// A new step with what every step carries.
    fn step(&self, source: &'static str, m: &Message) -> Step {
        let mut extra = Map::new();
        extra.insert("message_ids".into(), Value::from(vec![m.id.clone()]));
        extra.insert("harness_role".into(), Value::from(m.role.clone()));
        if let Some(s) = &self.session {
            extra.insert("session_id".into(), Value::from(s.clone()));
        }
        Step {
            step_id: self.steps.len() + 1,
            timestamp: timestamp(self.kind, &m.data),
            source,
            extra,
            ..Step::default()
        }
    }

    fn agent(&mut self, m: &Message, text: Option<String>) {
        let key = response_key(self.kind, m);
        let continues = self.open.is_some() && self.open == key;
        if !continues {
            let mut step = self.step("agent", m);
            step.model_name = model_name(self.kind, &m.data);
            self.steps.push(step);
        }
        let index = self.steps.len() - 1;
        // Codex: the record that closes a response sits on its last item.
        self.open = match self.kind {
            Some(Kind::Codex) if m.usage.is_none() => Some("codex-response".into()),
            Some(Kind::Codex) => None,
            _ => key,
        };
        let reasoning = join(m.parts.iter().filter_map(|p| match &p.kind {
            PartKind::Reasoning { text } => Some(text.as_str()),
            _ => None,
        }));
        let mut new_calls = Vec::new();
        let mut inline_results = Vec::new();
        for p in &m.parts {
            if let PartKind::ToolCall {
                tool,
                call_id,
                status,
                input,
                output,
            } = &p.kind
            {
                let id = call_id.clone().unwrap_or_else(|| {
                    self.synthesized += 1;
                    format!("shforge-call-{}", self.synthesized)
                });
                self.calls.insert(id.clone(), index);
                new_calls.push(tool_call(&id, tool, *status, input));
                // OpenCode/Kilo keep the result on the call.
                if self
                    .kind
                    .is_some_and(|k| k.source() == super::SourceKind::Db)
                    && let Some(out) = output
                {
                    inline_results.push(ObservationResult {
                        source_call_id: Some(id),
                        content: content(out),
                        extra: error_extra(*status == ToolStatus::Error),
                    });
                }
            }
        }
        let step = &mut self.steps[index];
        if continues {
            push_id(&mut step.extra, &m.id);
        }
        append(&mut step.message, text);
        if let Some(r) = reasoning {
            let mut current = step.reasoning_content.take().unwrap_or_default();
            append(&mut current, Some(r));
            step.reasoning_content = Some(current);
        }
        if !new_calls.is_empty() {
            step.tool_calls
                .get_or_insert_with(Vec::new)
                .extend(new_calls);
        }
        if !inline_results.is_empty() {
            step.observation
                .get_or_insert_with(Observation::default)
                .results
                .extend(inline_results);
        }
        if let Some(u) = m.usage.filter(recorded) {
            step.metrics = Some(metrics(self.kind, &u));
        }
    }

    /// The tool results a non-assistant message carries, each onto the
    /// step of its call; one whose call is not in this trajectory becomes
    /// a `system` step of its own (a valid observation with no
    /// `source_call_id`, the id kept in `extra`).
    fn results(&mut self, m: &Message) {
        for p in &m.parts {
            let PartKind::ToolResult {
                call_id,
                is_error,
                output,
            } = &p.kind
            else {
                continue;
            };
            let result = |source_call_id| ObservationResult {
                source_call_id,
                content: content(output),
                extra: error_extra(*is_error),
            };
            match call_id.as_ref().and_then(|id| self.calls.get(id)) {
                Some(&i) => {
                    let id = call_id.clone().expect("matched by id");
                    self.steps[i]
                        .observation
                        .get_or_insert_with(Observation::default)
                        .results
                        .push(result(Some(id)));
                }
                None => {
                    let mut step = self.step("system", m);
                    let mut r = result(None);
                    r.extra
                        .insert("orphan_call_id".into(), Value::from(call_id.clone()));
                    step.observation = Some(Observation { results: vec![r] });
                    self.steps.push(step);
                }
            }
        }
    }

    fn finish(self) -> Vec<Step> {
        self.steps
    }
}

/// What makes consecutive assistant messages one response: Claude Code's
/// `message.id` (one line per content block). Codex is handled by its
/// usage records; the other harnesses write one message per response.
fn response_key(kind: Option<Kind>, m: &Message) -> Option<String> {
    match kind {
        Some(Kind::ClaudeCode) => m.data["message"]["id"].as_str().map(str::to_owned),
        Some(Kind::Codex) => Some("codex-response".into()),
        _ => None,
    }
}

fn tool_call(id: &str, tool: &str, status: ToolStatus, input: &Value) -> ToolCall {
    // ATIF wants an object; a harness that kept the arguments as a string
    // or another JSON value gets them under `input`.
    let arguments = match input {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        other => {
            let mut m = Map::new();
            m.insert("input".into(), other.clone());
            m
        }
    };
    let mut extra = Map::new();
    let shown = if status.is_unfinished() {
        "unfinished"
    } else {
        status.name()
    };
    extra.insert("status".into(), Value::from(shown));
    extra.insert("harness_status".into(), Value::from(status.name()));
    ToolCall {
        tool_call_id: id.to_owned(),
        function_name: tool.to_owned(),
        arguments,
        extra,
    }
}

fn error_extra(is_error: bool) -> Map<String, Value> {
    let mut m = Map::new();
    if is_error {
        m.insert("is_error".into(), Value::Bool(true));
    }
    m
}

/// A tool's output as text: a string as is, text blocks (Claude Code, Pi)
/// joined, anything else as its JSON.
fn content(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        Value::Array(blocks) if blocks.iter().all(|b| b["text"].is_string()) => {
            join(blocks.iter().filter_map(|b| b["text"].as_str())).unwrap_or_default()
        }
        other => other.to_string(),
    }
}

/// Whether a response's counts were recorded at all: an OpenCode message
/// cut off before its response ended has all zeros.
fn recorded(t: &Tokens) -> bool {
    *t != Tokens::default()
}

fn metrics(kind: Option<Kind>, t: &Tokens) -> Metrics {
    let (prompt, completion, cached) = atif_counts(kind, t);
    Metrics {
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: cached,
        extra: serde_json::to_value(t).expect("tokens serialize"),
    }
}

fn model_name(kind: Option<Kind>, data: &Value) -> Option<String> {
    let v = match kind? {
        Kind::OpenCode | Kind::Kilo => &data["modelID"],
        Kind::ClaudeCode | Kind::Pi => &data["message"]["model"],
        Kind::QwenCode => &data["model"],
        Kind::GeminiCli => &data["model"],
        Kind::Cline => &data["modelInfo"]["id"],
        Kind::ContinueCli => &data["message"]["usage"]["model"],
        Kind::CopilotCli => &data["data"]["model"],
        // Added by Stirrup's and NOOA's boot.py to each answer (NOOA's r1
        // bundle: to its last answer only).
        Kind::Stirrup | Kind::Nooa => &data["model"],
        // litellm's response, kept in the answer's `extra`.
        Kind::MiniSweAgent => &data["extra"]["response"]["model"],
        // Hermes names the model on the session only (agent.model).
        // Kimi CLI's context.jsonl records no model (the session's is on
        // the agent, from capture.json).
        Kind::Codex | Kind::Hermes | Kind::KimiCli => return None,
        // Mistral Vibe names it in meta.json only (agent.model).
        Kind::MistralVibe => return None,
    };
    v.as_str().filter(|s| !s.is_empty()).map(str::to_owned)
}

/// The message's time as ISO 8601: the JSONL line's `timestamp` when it
/// is one, OpenCode's `time.created` and Cline's `ts` (ms since the epoch)
/// in UTC.
fn timestamp(kind: Option<Kind>, data: &Value) -> Option<String> {
    match kind? {
        Kind::OpenCode | Kind::Kilo => data["time"]["created"].as_u64().and_then(iso_from_ms),
        Kind::Cline => data["ts"].as_u64().and_then(iso_from_ms),
        // Seconds since the epoch, a float.
        Kind::Hermes => data["timestamp"]
            .as_f64()
            .filter(|t| t.is_finite() && *t >= 0.0)
            .and_then(|t| iso_from_ms((t * 1000.0) as u64)),
        Kind::MiniSweAgent => data["extra"]["timestamp"]
            .as_f64()
            .filter(|t| t.is_finite() && *t >= 0.0)
            .and_then(|t| iso_from_ms((t * 1000.0) as u64)),
        _ => data["timestamp"]
            .as_str()
            .filter(|s| is_iso(s))
            .map(str::to_owned),
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.f{1,9}][Z|±HH:MM]`: what the transcripts write,
/// and what every ISO 8601 reader takes. Anything else is left out rather
/// than written into a document a validator would refuse.
fn is_iso(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r.clone())
            .is_some_and(|d| d.len() == r.len() && d.iter().all(u8::is_ascii_digit))
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && at(10, b'T')
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19))
    {
        return false;
    }
    let mut i = 19;
    if at(i, b'.') {
        let n = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=9).contains(&n) {
            return false;
        }
        i += 1 + n;
    }
    let rest = &b[i..];
    rest.is_empty()
        || rest == b"Z"
        || (rest.len() == 6
            && matches!(rest[0], b'+' | b'-')
            && rest[1..3].iter().all(u8::is_ascii_digit)
            && rest[3] == b':'
            && rest[4..6].iter().all(u8::is_ascii_digit))
}

/// Milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ` (years
/// 1970–9999; later ones are not a real clock and are left out).
fn iso_from_ms(ms: u64) -> Option<String> {
    let secs = ms / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    (y <= 9999).then(|| {
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
            rem / 3600,
            rem / 60 % 60,
            rem % 60,
            ms % 1000
        )
    })
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

fn join<'a>(texts: impl Iterator<Item = &'a str>) -> Option<String> {
    let v: Vec<&str> = texts.filter(|t| !t.is_empty()).collect();
    (!v.is_empty()).then(|| v.join("\n"))
}

fn append(to: &mut String, more: Option<String>) {
    if let Some(more) = more {
        if !to.is_empty() {
            to.push('\n');
        }
        to.push_str(&more);
    }
}

fn push_id(extra: &mut Map<String, Value>, id: &str) {
    if let Some(Value::Array(ids)) = extra.get_mut("message_ids") {
        ids.push(Value::from(id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_input_is_counted_once_in_the_prompt() {
        let t = Tokens {
            input: 100,
            output: 7,
            reasoning: 0,
            cache_read: 60,
            cache_write: 5,
            total: 107,
        };
        // OpenAI-style usage: `input` already holds the cached tokens.
        for kind in [
            Kind::Codex,
            Kind::Nooa,
            Kind::ContinueCli,
            Kind::CopilotCli,
            Kind::MiniSweAgent,
            Kind::KimiCli,
            Kind::MistralVibe,
        ] {
            assert_eq!(atif_counts(Some(kind), &t), (100, 7, 60), "{kind:?}");
        }
        // Anthropic style: the cached tokens are apart from `input`.
        assert_eq!(atif_counts(Some(Kind::ClaudeCode), &t), (165, 7, 60));
    }

    #[test]
    fn epoch_ms_become_utc_iso() {
        assert_eq!(iso_from_ms(0).unwrap(), "1970-01-01T00:00:00.000Z");
        // 2026-12-01T08:42:58.905Z, an OpenCode fixture's time.created.
        assert_eq!(
            iso_from_ms(1_796_114_578_905).unwrap(),
            "2026-12-01T08:42:58.905Z"
        );
        assert_eq!(
            iso_from_ms(951_782_400_000).unwrap(),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(iso_from_ms(u64::MAX), None);
    }

    #[test]
    fn only_iso_timestamps_pass() {
        for ok in [
            "2026-12-01T08:44:06.197Z",
            "2026-12-01T08:44:06",
            "2026-12-01T08:44:06+02:00",
        ] {
            assert!(is_iso(ok), "{ok}");
        }
        for bad in [
            "",
            "yesterday",
            "2026-12-01",
            "2026-12-01T08:44:06.Z",
            "2026-12-01T08:44:06.1234567890Z",
            "2026-12-01T08:44:06Zjunk",
            "2026-12-01 08:44:06",
        ] {
            assert!(!is_iso(bad), "{bad}");
        }
    }
}
