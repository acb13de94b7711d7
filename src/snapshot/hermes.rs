//! Hermes Agent: `state.db` in `HERMES_HOME` (the capture dir), SQLite in
//! WAL mode, read like OpenCode's database (a private copy, the WAL
//! applied; see `sqlite.rs`).
//!
//! Facts from Hermes 0.19.0's own runs (tests/fixtures/snapshot/hermes*):
//! * `sessions`: one row per conversation: `id` (`YYYYMMDD_HHMMSS_hex`),
//!   `title`, `cwd`, `parent_session_id`, `model`, `started_at` (seconds
//!   since the epoch, a float), and the session's token totals
//!   (`input_tokens`, `output_tokens`, `cache_read_tokens`,
//!   `cache_write_tokens`, `reasoning_tokens`); no per-response counts.
//! * `messages`: OpenAI chat messages, one row each, in `id` order: `role`
//!   (`user`, `assistant`, `tool`), `content` (text; a tool's is its JSON
//!   result, the terminal's `{"output", "exit_code", "error"}`),
//!   `tool_calls` (the OpenAI `tool_calls` array as JSON text), `tool_call_id`
//!   and `tool_name` on a tool row, `reasoning`, `timestamp` (seconds).
//! * A run killed mid-tool leaves the assistant row with the call and no
//!   `tool` row: the call is `running` (unfinished). The main file is then a
//!   12 KiB header and the rows are in `state.db-wal`.
//! * The full-text tables (`messages_fts*`, FTS5 virtual tables) are never
//!   read.

use std::path::Path;

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use super::sqlite::{self, Schema, sql_err};
use super::{
    AgentInfo, Kind, Message, Part, PartKind, SessionRecord, SnapshotError, Tokens, ToolStatus,
};

/// The columns read, checked before any row is.
const COLUMNS: [(&str, &[&str]); 2] = [
    (
        "sessions",
        &[
            "id",
            "title",
            "cwd",
            "parent_session_id",
            "model",
            "started_at",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "reasoning_tokens",
        ],
    ),
    (
        "messages",
        &[
            "id",
            "session_id",
            "role",
            "content",
            "tool_call_id",
            "tool_calls",
            "tool_name",
            "timestamp",
            "finish_reason",
            "reasoning",
        ],
    ),
];

const SCHEMA: Schema = Schema {
    columns: &COLUMNS,
    rows: read_tables,
    check_read_tables_only: true,
};

/// The file Hermes keeps its sessions in, inside `HERMES_HOME`.
const DB: &str = "state.db";

/// Read `dir` (a `HERMES_HOME`): its `state.db` and `state.db-wal`.
/// Refused (exit 2): `dir` not a directory, or without a `state.db`
/// regular file (an empty or foreign dir: the message names what was
/// expected); a link on the way to `dir`; a `state.db` that is a link, a
/// FIFO or another harness's.
pub(super) fn read(dir: &Path) -> Result<Vec<SessionRecord>, SnapshotError> {
    super::jsonl::open_data_dir(
        dir,
        &format!(" (expected Hermes's HERMES_HOME, holding {DB})"),
    )?;
    let db = dir.join(DB);
    match std::fs::symlink_metadata(&db) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(SnapshotError::BadInput(format!(
                "{}: no {DB}: not a Hermes HERMES_HOME (expected {DB}, Hermes's SQLite sessions and messages)",
                dir.display()
            )))
        }
        Err(source) => Err(SnapshotError::Unreadable { path: db, source }),
        Ok(m) if !m.file_type().is_file() => Err(SnapshotError::BadInput(format!(
            "{}: not a regular file (a link, directory, FIFO or device): refused",
            db.display()
        ))),
        Ok(_) => sqlite::read_with(Kind::Hermes, &db, &SCHEMA),
    }
}

fn read_tables(db: &Path, conn: &Connection) -> Result<Vec<SessionRecord>, SnapshotError> {
    let err = |e| sql_err(db, e);
    let mut sessions: Vec<SessionRecord> = conn
        .prepare(
            "SELECT id, title, cwd, parent_session_id, model, input_tokens, output_tokens, \
             cache_read_tokens, cache_write_tokens, reasoning_tokens \
             FROM sessions ORDER BY started_at, id",
        )
        .and_then(|mut s| s.query_map([], session_row)?.collect())
        .map_err(err)?;
    if sessions.is_empty() {
        return Err(SnapshotError::NoData(format!(
            "table sessions of {} has no rows",
            db.display()
        )));
    }
    let mut stmt = conn
        .prepare(
            "SELECT id, session_id, role, content, tool_call_id, tool_calls, tool_name, \
             timestamp, finish_reason, reasoning FROM messages ORDER BY id",
        )
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(row) = rows.next().map_err(err)? {
        let (session_id, message) = message_row(row).map_err(err)?;
        // A message of a session that is gone belongs to no session here.
        if let Some(s) = sessions.iter_mut().find(|s| s.id == session_id) {
            s.messages.push(message);
        }
    }
    for s in &mut sessions {
        super::jsonl::pair_tool_results(&mut s.messages);
    }
    Ok(sessions)
}

/// A count column: NULL or a negative value (not Hermes's) as 0.
fn count(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<u64> {
    Ok(r.get::<_, Option<i64>>(i)?
        .and_then(|v| u64::try_from(v).ok())
        .unwrap_or(0))
}

fn session_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRecord> {
    let (input, output) = (count(r, 5)?, count(r, 6)?);
    let (cache_read, cache_write, reasoning) = (count(r, 7)?, count(r, 8)?, count(r, 9)?);
    Ok(SessionRecord {
        id: r.get(0)?,
        title: r.get(1)?,
        directory: r.get(2)?,
        parent_id: r.get(3)?,
        tokens: Tokens {
            input,
            output,
            reasoning,
            cache_read,
            cache_write,
            // Hermes keeps no total: its counts, summed.
            total: super::sum(&[input, output, cache_read, cache_write]),
        },
        messages: Vec::new(),
        agent: AgentInfo {
            version: None,
            model: r.get::<_, Option<String>>(4)?.filter(|m| !m.is_empty()),
        },
    })
}

/// A text column, NULL or empty as None.
fn text(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    Ok(r.get::<_, Option<String>>(i)?.filter(|s| !s.is_empty()))
}

/// Text that holds JSON as that JSON, else as the string itself.
fn json_or_text(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_owned()))
}

fn message_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, Message)> {
    let id: i64 = r.get(0)?;
    let session_id: String = r.get(1)?;
    let role: String = r.get(2)?;
    let content = text(r, 3)?;
    let tool_call_id = text(r, 4)?;
    let tool_calls = text(r, 5)?.map(|t| json_or_text(&t));
    let tool_name = text(r, 6)?;
    let timestamp: Option<f64> = r.get(7)?;
    let finish_reason = text(r, 8)?;
    let reasoning = text(r, 9)?;
    let mut parts = Vec::new();
    if let Some(t) = &reasoning {
        parts.push(part(json!(t), PartKind::Reasoning { text: t.clone() }));
    }
    match (&content, role.as_str()) {
        (Some(c), "tool") => {
            let output = json_or_text(c);
            let is_error = output.get("error").is_some_and(|e| !e.is_null());
            parts.push(part(
                output.clone(),
                PartKind::ToolResult {
                    call_id: tool_call_id.clone(),
                    is_error,
                    output,
                },
            ));
        }
        (Some(c), _) => parts.push(part(json!(c), PartKind::Text { text: c.clone() })),
        (None, _) => {}
    }
    for call in tool_calls.iter().filter_map(Value::as_array).flatten() {
        parts.push(tool_call(call));
    }
    let mut data = Map::new();
    data.insert("id".into(), json!(id));
    data.insert("session_id".into(), json!(session_id));
    data.insert("role".into(), json!(role));
    data.insert("content".into(), json!(content));
    data.insert("tool_call_id".into(), json!(tool_call_id));
    data.insert("tool_calls".into(), tool_calls.unwrap_or(Value::Null));
    data.insert("tool_name".into(), json!(tool_name));
    data.insert("timestamp".into(), json!(timestamp));
    data.insert("finish_reason".into(), json!(finish_reason));
    data.insert("reasoning".into(), json!(reasoning));
    let message = Message {
        id: id.to_string(),
        role,
        parts,
        data: Value::Object(data),
        usage: None,
    };
    Ok((session_id, message))
}

/// One OpenAI `tool_calls` entry: `{id, function: {name, arguments}}`,
/// the arguments a JSON text.
fn tool_call(call: &Value) -> Part {
    let f = &call["function"];
    let input = match &f["arguments"] {
        Value::String(s) => json_or_text(s),
        other => other.clone(),
    };
    part(
        call.clone(),
        PartKind::ToolCall {
            tool: f["name"].as_str().unwrap_or_default().to_owned(),
            call_id: call["id"].as_str().map(str::to_owned),
            status: ToolStatus::Running,
            input,
            output: None,
        },
    )
}

fn part(data: Value, kind: PartKind) -> Part {
    Part {
        id: None,
        kind,
        data,
    }
}
