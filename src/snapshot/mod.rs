//! Host-side session capture: what a harness recorded of a run, as one JSON
//! document.
//!
//! The inputs are copies taken out of a task sandbox:
//!
//! * OpenCode and Kilo keep a SQLite database in WAL mode ([`snapshot_db`]).
//!   After a run the main file is often a bare 4 KiB header and every row is
//!   in `FILE-wal`, so the file is read as SQLite would after a crash (WAL
//!   applied), from a private copy: the files given are never opened by
//!   SQLite, so they are never checkpointed or rewritten.
//! * Claude Code, Pi, Codex, Qwen Code and Gemini CLI write JSONL
//!   transcripts under their data directory, Cline one JSON document per
//!   session, Stirrup one per run ([`snapshot_dir`]).
//!
//! The copies are read as hostile (`crate::copyback`): no link is followed
//! anywhere in a path, only regular files are read, each to its bound.
//!
//! Every harness gives the same [`Snapshot`]: sessions → messages → parts,
//! the raw JSON of each message and part kept as JSON, and a [`Summary`]
//! (tool calls with their status, the final text, the tokens) built in one
//! place from the parts.

pub mod atif;
mod claude;
mod cline;
mod codex;
mod continue_cli;
mod copilot_cli;
mod gemini;
mod hermes;
mod jsonl;
mod messages;
mod nooa;
mod pi;
mod qwen;
mod signal;
mod sqlite;
mod stirrup;
mod summary;
mod wal;

pub use signal::remove_private_copies_on_signal;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The harnesses whose session data can be captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// OpenCode: `opencode.db` (SQLite, WAL).
    OpenCode,
    /// Kilo Code CLI, an OpenCode fork: `kilo.db` (same tables).
    Kilo,
    /// Claude Code: `projects/<slug>/<uuid>.jsonl` under its config dir.
    ClaudeCode,
    /// Pi: `sessions/--<cwd>--/<time>_<uuid>.jsonl` under its agent dir.
    Pi,
    /// Codex: `sessions/YYYY/MM/DD/rollout-*.jsonl` under `CODEX_HOME`.
    Codex,
    /// Qwen Code: `projects/<slug>/chats/<id>.jsonl` under `QWEN_HOME`.
    QwenCode,
    /// Gemini CLI: `tmp/<project>/chats/session-*.jsonl` under its
    /// `.gemini` dir.
    GeminiCli,
    /// Cline: `sessions/<id>/<id>.messages.json` under `CLINE_DIR/data`.
    Cline,
    /// Hermes Agent: `state.db` (SQLite, WAL) in its `HERMES_HOME`.
    Hermes,
    /// Stirrup: `stirrup-state/transcript.json` (written by its boot.py).
    Stirrup,
    /// NOOA: `nooa-state/transcript.json` (written by its boot.py).
    Nooa,
    /// Continue CLI: `sessions/<id>.json` under `CONTINUE_GLOBAL_DIR`.
    ContinueCli,
    /// GitHub Copilot CLI: `session-state/<id>/events.jsonl` under
    /// `COPILOT_HOME`.
    CopilotCli,
    /// mini-swe-agent: `mini-swe-agent-state/trajectory.json` (the
    /// chat-messages reader family, `messages.rs`).
    MiniSweAgent,
    /// Kimi CLI: `sessions/<md5(workdir)>/<id>/context.jsonl` under
    /// `KIMI_SHARE_DIR` (the chat-messages reader family, `messages.rs`).
    KimiCli,
    /// Mistral Vibe: `logs/session/session_*/messages.jsonl` under
    /// `VIBE_HOME` (the chat-messages reader family, `messages.rs`).
    MistralVibe,
}

/// What a harness's session data is: one SQLite file or a data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// `--db FILE`.
    Db,
    /// `--dir DIR`.
    Dir,
}

impl SourceKind {
    /// The command-line flag with its argument, for messages.
    pub fn flag(self) -> &'static str {
        match self {
            SourceKind::Db => "--db FILE",
            SourceKind::Dir => "--dir DIR",
        }
    }
}

impl Kind {
    /// Every kind, in CLI order.
    pub const ALL: [Kind; 16] = [
        Kind::OpenCode,
        Kind::Kilo,
        Kind::ClaudeCode,
        Kind::Pi,
        Kind::Codex,
        Kind::QwenCode,
        Kind::GeminiCli,
        Kind::Cline,
        Kind::Hermes,
        Kind::Stirrup,
        Kind::Nooa,
        Kind::ContinueCli,
        Kind::CopilotCli,
        Kind::MiniSweAgent,
        Kind::KimiCli,
        Kind::MistralVibe,
    ];

    /// The CLI name (`opencode`, `kilo`, `claude-code`, `pi`, `codex`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::OpenCode => "opencode",
            Kind::Kilo => "kilo",
            Kind::ClaudeCode => "claude-code",
            Kind::Pi => "pi",
            Kind::Codex => "codex",
            Kind::QwenCode => "qwen-code",
            Kind::GeminiCli => "gemini-cli",
            Kind::Cline => "cline",
            Kind::Hermes => "hermes",
            Kind::Stirrup => "stirrup",
            Kind::Nooa => "nooa",
            Kind::ContinueCli => "continue-cli",
            Kind::CopilotCli => "copilot-cli",
            Kind::MiniSweAgent => "mini-swe-agent",
            Kind::KimiCli => "kimi-cli",
            Kind::MistralVibe => "mistral-vibe",
        }
    }

    /// Whether this harness is read from a DB file or a data directory.
    pub fn source(self) -> SourceKind {
        match self {
            Kind::OpenCode | Kind::Kilo => SourceKind::Db,
            Kind::ClaudeCode
            | Kind::Pi
            | Kind::Codex
            | Kind::QwenCode
            | Kind::GeminiCli
            | Kind::Cline => SourceKind::Dir,
            Kind::Hermes | Kind::Stirrup | Kind::Nooa => SourceKind::Dir,
            Kind::ContinueCli | Kind::CopilotCli => SourceKind::Dir,
            Kind::MiniSweAgent | Kind::KimiCli | Kind::MistralVibe => SourceKind::Dir,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown harness name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown harness {0:?} (expected one of {known})", known = Kind::ALL.map(Kind::name).join(", "))]
pub struct UnknownKind(pub String);

impl FromStr for Kind {
    type Err = UnknownKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownKind(s.to_owned()))
    }
}

/// One capture: every session found, and the summary of them all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The harness's CLI name ([`Kind::name`]).
    pub harness: String,
    /// Sessions in the order they were started.
    pub sessions: Vec<SessionRecord>,
    /// What every consumer needs without walking the parts.
    pub summary: Summary,
}

/// One conversation of a harness.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The harness's own session id.
    pub id: String,
    /// The title the harness gave it, if it keeps one.
    pub title: Option<String>,
    /// The working directory the session ran in.
    pub directory: Option<String>,
    /// The session that started this one (an OpenCode subagent's parent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Tokens the harness recorded for this session.
    pub tokens: Tokens,
    /// Messages in order.
    pub messages: Vec<Message>,
    /// What the harness recorded of itself outside the messages (not
    /// serialized: the JSON document keeps its shape; the ATIF export puts
    /// it in `agent`).
    #[serde(skip)]
    pub agent: AgentInfo,
}

/// Equal when the documents are: `agent`, which the JSON document does not
/// carry, is left out, so a snapshot equals itself read back.
impl PartialEq for SessionRecord {
    fn eq(&self, o: &Self) -> bool {
        self.id == o.id
            && self.title == o.title
            && self.directory == o.directory
            && self.parent_id == o.parent_id
            && self.tokens == o.tokens
            && self.messages == o.messages
    }
}

/// The harness's version and model where its session data names them
/// apart from the messages (Claude Code: `version` on its lines; Codex:
/// `session_meta.cli_version`, `turn_context.model`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentInfo {
    /// The CLI's version.
    pub version: Option<String>,
    /// The model the session ran with.
    pub model: Option<String>,
}

/// One message (OpenCode/Kilo: a `message` row; JSONL harnesses: one
/// transcript line that carries a message).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Message {
    /// The harness's id for it (or `line-N` when the line has none).
    pub id: String,
    /// The harness's role name (`user`, `assistant`, `toolResult`, `tool`, …).
    pub role: String,
    /// The message's content, in order.
    pub parts: Vec<Part>,
    /// The raw JSON: OpenCode/Kilo `message.data`, or the whole JSONL line.
    pub data: Value,
    /// The tokens of the model response this message belongs to, where the
    /// harness recorded them per response (OpenCode/Kilo `tokens`, Claude
    /// Code and Pi `usage`, Codex's `token_usage_record` after the
    /// response's last item). Not serialized: the JSON document keeps its
    /// shape; the ATIF export puts it in each step's `metrics`.
    #[serde(skip)]
    pub usage: Option<Tokens>,
}

/// Equal when the documents are: `usage`, which the JSON document does not
/// carry, is left out, so a snapshot equals itself read back.
impl PartialEq for Message {
    fn eq(&self, o: &Self) -> bool {
        self.id == o.id && self.role == o.role && self.parts == o.parts && self.data == o.data
    }
}

/// One piece of a message: the normalized fields of its kind plus the raw
/// JSON it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// The harness's id for the part (OpenCode/Kilo `part.id`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What the part is.
    #[serde(flatten)]
    pub kind: PartKind,
    /// The raw JSON: OpenCode/Kilo `part.data`, or the content block.
    pub data: Value,
}

/// The kinds of part every harness has, serialized as `"type"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PartKind {
    /// Text shown to or written by the user or model.
    Text {
        /// The text.
        text: String,
    },
    /// The model's reasoning or thinking.
    Reasoning {
        /// The reasoning text (empty when the harness keeps it encrypted).
        text: String,
    },
    /// A tool the model called, with its status.
    ToolCall {
        /// The tool's name as the model called it.
        tool: String,
        /// The id pairing the call with its result.
        call_id: Option<String>,
        /// Where the call stands.
        status: ToolStatus,
        /// The arguments (JSON when the harness kept them as JSON).
        input: Value,
        /// The result, once there is one.
        output: Option<Value>,
    },
    /// A tool's result, in a message of its own (JSONL harnesses).
    ToolResult {
        /// The id of the call it answers.
        call_id: Option<String>,
        /// Whether the harness marked the result as an error.
        is_error: bool,
        /// The result as the harness recorded it.
        output: Value,
    },
    /// Anything else (step markers, images, attachments, …): see `data`.
    Other {
        /// The harness's own type name for it, if it has one.
        name: Option<String>,
    },
}

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    /// Requested, not started (OpenCode/Kilo `pending`).
    Pending,
    /// Started and not finished: a run cut off mid-tool leaves this.
    Running,
    /// Finished with a result.
    Completed,
    /// Finished with an error result.
    Error,
    /// A status name this version does not know (see the part's `data`).
    Unknown,
}

impl ToolStatus {
    /// The lower-case name, as serialized.
    pub fn name(self) -> &'static str {
        match self {
            ToolStatus::Pending => "pending",
            ToolStatus::Running => "running",
            ToolStatus::Completed => "completed",
            ToolStatus::Error => "error",
            ToolStatus::Unknown => "unknown",
        }
    }
}

impl ToolStatus {
    /// Whether a call in this state never finished (`pending`, `running`):
    /// in a snapshot taken after the run, the tool was cut off.
    pub fn is_unfinished(self) -> bool {
        matches!(self, ToolStatus::Pending | ToolStatus::Running)
    }
}

impl fmt::Display for ToolStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Token counts as the harness recorded them (each harness's own meaning of
/// `input`: OpenAI-style counts include cached input, Anthropic-style do not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Input (prompt) tokens.
    pub input: u64,
    /// Output (completion) tokens.
    pub output: u64,
    /// Reasoning/thinking tokens, where reported separately.
    pub reasoning: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read: u64,
    /// Input tokens written to the provider's cache.
    pub cache_write: u64,
    /// The harness's total (its own sum where it reports one).
    pub total: u64,
}

/// Counts come from files a sandbox wrote: sums saturate rather than
/// overflow.
impl std::ops::AddAssign for Tokens {
    fn add_assign(&mut self, o: Tokens) {
        self.input = self.input.saturating_add(o.input);
        self.output = self.output.saturating_add(o.output);
        self.reasoning = self.reasoning.saturating_add(o.reasoning);
        self.cache_read = self.cache_read.saturating_add(o.cache_read);
        self.cache_write = self.cache_write.saturating_add(o.cache_write);
        self.total = self.total.saturating_add(o.total);
    }
}

/// The saturating sum of some counts (a total a harness does not record).
pub(crate) fn sum(counts: &[u64]) -> u64 {
    counts.iter().fold(0, |a, &b| a.saturating_add(b))
}

/// The figures every consumer of a snapshot needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of sessions.
    pub sessions: usize,
    /// Number of messages over all sessions.
    pub messages: usize,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCallSummary>,
    /// The text of the last assistant message of the last top-level
    /// session, when that message has text (null when it ended in a tool
    /// call, e.g. a run cut off mid-tool).
    pub final_text: Option<String>,
    /// Tokens over all sessions.
    pub tokens: Tokens,
}

/// One tool call in the [`Summary`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallSummary {
    /// The tool's name.
    pub tool: String,
    /// Where it stands.
    pub status: ToolStatus,
    /// `true` when the call has no result and its status is `pending` or
    /// `running`: the run stopped (was killed) before the tool finished.
    /// Absent otherwise, so a finished run's document is unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unfinished: bool,
}

/// Why there is no snapshot.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The input was read but holds no session data (exit 1).
    #[error("no session data: {0}")]
    NoData(String),
    /// A path could not be read (exit 2).
    #[error("cannot read {path}: {source}", path = .path.display())]
    Unreadable {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An input refused by the shared file rules: not a regular file, past
    /// its bound (exit 2).
    #[error("{0}")]
    File(#[from] crate::files::FileError),
    /// The `--db` file is not a SQLite database (exit 2).
    #[error("{path} is not a SQLite database", path = .0.display())]
    NotSqlite(PathBuf),
    /// The database lacks a table the harness keeps sessions in (exit 2).
    #[error("{path}: no table `{table}`: not a {kind} session database, or a schema this version does not know", path = .path.display())]
    MissingTable {
        /// The database.
        path: PathBuf,
        /// The table that is missing.
        table: &'static str,
        /// The harness.
        kind: Kind,
    },
    /// Input that is there but is not what the harness writes (exit 2).
    #[error("{0}")]
    BadInput(String),
    /// A DB harness given a directory or the other way round (exit 2).
    #[error("{kind} takes {wanted}, not {given}", wanted = .kind.source().flag(), given = .given.flag())]
    WrongSource {
        /// The harness.
        kind: Kind,
        /// What was given.
        given: SourceKind,
    },
}

impl SnapshotError {
    /// The CLI's exit code: 1 when there is no session data, 2 for input
    /// that cannot be read or is not what the harness writes.
    pub fn exit_code(&self) -> u8 {
        match self {
            SnapshotError::NoData(_) => 1,
            _ => 2,
        }
    }
}

/// Capture an OpenCode or Kilo database: `db` plus `db-wal` beside it when
/// it exists (`db-shm` is not needed). The files are copied into a private
/// temporary directory and only the copy is opened, in one read
/// transaction; the originals are never modified. Refused before the copy:
/// files that are not regular, a link anywhere in their path (the input
/// came out of a sandbox: `crate::copyback`), over [`crate::Bound::SQLITE_DB`]
/// together, or sparse; before SQLite reads it: a `-wal` that is not this
/// file's (see `wal.rs`); before a row is read: a schema whose tables are
/// views or whose columns read are generated.
pub fn snapshot_db(kind: Kind, db: &Path) -> Result<Snapshot, SnapshotError> {
    if kind.source() != SourceKind::Db {
        return Err(SnapshotError::WrongSource {
            kind,
            given: SourceKind::Db,
        });
    }
    let sessions = sqlite::read(kind, db)?;
    Ok(summary::snapshot(kind, sessions))
}

/// Capture the JSONL transcripts of Claude Code (`dir` holds `projects/`),
/// Pi (`dir` holds `sessions/`) or Codex (`dir` is `CODEX_HOME`, holding
/// `sessions/`). The `projects`/`sessions` directory itself is accepted too.
/// A link anywhere in the path of `dir` (the copy came out of a sandbox:
/// `crate::copyback`) is refused; links, FIFOs, devices and sockets where
/// the layout has a directory or a transcript are refused, never followed
/// or opened; files and lines are
/// bounded ([`crate::Bound::TRANSCRIPT`], `JSONL_LINE`); a `dir` or
/// a transcript that is not the harness's is refused (exit 2), an empty
/// layout is [`SnapshotError::NoData`] (exit 1).
pub fn snapshot_dir(kind: Kind, dir: &Path) -> Result<Snapshot, SnapshotError> {
    let sessions = match kind {
        Kind::ClaudeCode => jsonl::read(dir, &claude::LAYOUT, claude::parse)?,
        Kind::Pi => jsonl::read(dir, &pi::LAYOUT, pi::parse)?,
        Kind::Codex => jsonl::read(dir, &codex::LAYOUT, codex::parse)?,
        Kind::QwenCode => jsonl::read(dir, &qwen::LAYOUT, qwen::parse)?,
        Kind::GeminiCli => jsonl::read(dir, &gemini::LAYOUT, gemini::parse)?,
        Kind::Cline => jsonl::read_with(dir, &cline::LAYOUT, jsonl::read_document, cline::parse)?,
        Kind::Hermes => hermes::read(dir)?,
        Kind::Stirrup => {
            jsonl::read_with(dir, &stirrup::LAYOUT, jsonl::read_document, stirrup::parse)?
        }
        Kind::Nooa => jsonl::read_with(dir, &nooa::LAYOUT, jsonl::read_document, nooa::parse)?,
        Kind::ContinueCli => jsonl::read_with(
            dir,
            &continue_cli::LAYOUT,
            jsonl::read_document,
            continue_cli::parse,
        )?,
        Kind::CopilotCli => jsonl::read(dir, &copilot_cli::LAYOUT, copilot_cli::parse)?,
        Kind::MiniSweAgent => jsonl::read_with(
            dir,
            &messages::MINI_SWE_AGENT.layout,
            jsonl::read_document,
            messages::parse_mini_swe_agent,
        )?,
        Kind::KimiCli => jsonl::read(dir, &messages::KIMI_CLI.layout, messages::parse_kimi_cli)?,
        Kind::MistralVibe => jsonl::read(
            dir,
            &messages::MISTRAL_VIBE.layout,
            messages::parse_mistral_vibe,
        )?,
        Kind::OpenCode | Kind::Kilo => {
            return Err(SnapshotError::WrongSource {
                kind,
                given: SourceKind::Dir,
            });
        }
    };
    Ok(summary::snapshot(kind, sessions))
}

/// [`snapshot_db`] or [`snapshot_dir`], whichever `kind` reads
/// ([`Kind::source`]).
pub fn snapshot(kind: Kind, path: &Path) -> Result<Snapshot, SnapshotError> {
    match kind.source() {
        SourceKind::Db => snapshot_db(kind, path),
        SourceKind::Dir => snapshot_dir(kind, path),
    }
}

impl Snapshot {
    /// The document as written by `shforge snapshot`: compact JSON and a
    /// final newline.
    pub fn to_json(&self) -> Vec<u8> {
        // A tree of strings, numbers and serde_json values cannot fail to
        // serialize.
        let mut out = serde_json::to_vec(self).expect("a snapshot always serializes");
        out.push(b'\n');
        out
    }

    /// The document as written by `shforge snapshot --format atif`: an
    /// ATIF trajectory ([`atif::to_atif`]), with no outcome.
    pub fn to_atif(&self) -> Vec<u8> {
        atif::to_atif(self, None)
    }
}
