//! Why a rollout ended: a typed [`Outcome`] from the supervisor's receipt
//! and what the harness printed and recorded.
//!
//! [`classify`] reads the receipt first: the deadline, the runner's own
//! failures (125 runner error, 126 not executable, 127 not found) and a
//! signal death (128+N) are decided there. Otherwise the harness's outputs
//! are searched for error records, structured evidence first: the stream's
//! error events and the session's error records (an error code or type
//! field, an HTTP status field), then the message of such a record matched
//! by words, and only when no record exists, plain text lines (stderr)
//! matched by words. Every [`Evidence`] says which file, which line or
//! record, and on what [`Basis`] it was read.
//!
//! The set of causes is closed ([`Cause`]); one a harness makes impossible
//! to tell is [`Cause::Unknown`] with the evidence there was.

mod scan;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::copyback;
use crate::files::{Bound, FileError};
use crate::harness::Harness;
use crate::host::supervisor::CleanupReceipt;

use scan::{Finding, Item, Record};

/// How the rollout ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The harness exited 0 and its last word was not an error.
    Completed,
    /// The harness (or the runner) failed, or exited 0 after an error.
    Failed,
    /// The supervisor's deadline stopped it.
    TimedOut,
}

/// Why it ended: a closed set (see docs/capture.md, "Rollout outcome").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Nothing went wrong.
    None,
    /// The model API's rate limit (429, `rate_limit_error`).
    RateLimited,
    /// The account's quota or credit is spent (`insufficient_quota`,
    /// "credit balance is too low").
    UsageLimited,
    /// The API is overloaded or unavailable (529, 503).
    Overloaded,
    /// The prompt exceeds the model's context window.
    ContextWindow,
    /// The key was refused (401, 403, `API_KEY_INVALID`).
    Auth,
    /// The model does not exist (404).
    ModelNotFound,
    /// The endpoint could not be reached, or the connection broke mid-answer.
    Network,
    /// The runner found no CLI at the entry (127).
    CliNotFound,
    /// The entry is not executable (126).
    CliNotExecutable,
    /// The CLI died of a signal it was not sent by the supervisor (128+N).
    CliCrashed,
    /// The runner or the supervisor failed (125, or a receipt error).
    RunnerError,
    /// The supervisor's deadline expired.
    Deadline,
    /// The harness failed and nothing it wrote names why.
    Unknown,
}

impl Cause {
    /// Every cause, in documentation order.
    pub const ALL: [Cause; 14] = [
        Cause::None,
        Cause::RateLimited,
        Cause::UsageLimited,
        Cause::Overloaded,
        Cause::ContextWindow,
        Cause::Auth,
        Cause::ModelNotFound,
        Cause::Network,
        Cause::CliNotFound,
        Cause::CliNotExecutable,
        Cause::CliCrashed,
        Cause::RunnerError,
        Cause::Deadline,
        Cause::Unknown,
    ];

    /// The name in the JSON (`rate_limited`).
    pub fn name(self) -> &'static str {
        match self {
            Cause::None => "none",
            Cause::RateLimited => "rate_limited",
            Cause::UsageLimited => "usage_limited",
            Cause::Overloaded => "overloaded",
            Cause::ContextWindow => "context_window",
            Cause::Auth => "auth",
            Cause::ModelNotFound => "model_not_found",
            Cause::Network => "network",
            Cause::CliNotFound => "cli_not_found",
            Cause::CliNotExecutable => "cli_not_executable",
            Cause::CliCrashed => "cli_crashed",
            Cause::RunnerError => "runner_error",
            Cause::Deadline => "deadline",
            Cause::Unknown => "unknown",
        }
    }
}

/// On what a piece of evidence was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The supervisor's receipt (return code, `timed_out`, `error`).
    Receipt,
    /// An error code or type field of a JSON error record
    /// (`"error": "rate_limit"`, `terminal_reason: "prompt_too_long"`).
    ErrorCode,
    /// An HTTP status field the harness recorded (`api_error_status: 400`,
    /// `statusCode: 429`).
    HttpStatus,
    /// Words in the message of a JSON error record or event: the record is
    /// structured, its cause is text matching.
    ErrorMessage,
    /// Words in a line that is not JSON: text matching only.
    Text,
}

impl Basis {
    /// Read from structured fields, not by matching words.
    pub fn structured(self) -> bool {
        matches!(self, Basis::Receipt | Basis::ErrorCode | Basis::HttpStatus)
    }
}

/// One thing the outcome rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// The file it is in, as given.
    pub file: String,
    /// Where in the file: `line 12`, `session S message M`, `return_code`.
    pub record: String,
    /// On what it was read.
    pub basis: Basis,
    /// `basis` is a structured field (not words).
    pub structured: bool,
    /// The field or the words that decided, and a clip of the record.
    pub detail: String,
}

/// The typed outcome of one rollout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// Why.
    pub cause: Cause,
    /// For a deadline: the model-side cause the harness was meeting
    /// (retrying) when it was stopped, if its outputs name one.
    pub underlying: Option<Cause>,
    /// The harness.
    pub harness: String,
    /// The receipt's `return_code`.
    pub return_code: Option<i32>,
    /// The signal that ended the CLI (return code 128+N), if any.
    pub signal: Option<i32>,
    /// What the cause rests on, the deciding piece first; the receipt last.
    pub evidence: Vec<Evidence>,
}

/// What [`classify`] reads: the receipt and the harness's outputs (each
/// optional but the receipt). Paths are the host's copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    /// The supervisor's receipt.
    pub receipt: PathBuf,
    /// The harness.
    pub harness: Harness,
    /// What `capture.json` names: a session dir or DB (see `shforge
    /// snapshot`); OpenClaw's state dir is not read (no reader).
    pub capture: Option<PathBuf>,
    /// The runner's events file (events mode).
    pub events: Option<PathBuf>,
    /// The CLI's stderr file.
    pub stderr: Option<PathBuf>,
    /// The CLI's stdout file (direct mode).
    pub stdout: Option<PathBuf>,
}

/// Why no outcome could be given: the input itself is bad (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum OutcomeError {
    /// A file could not be read or is over its bound.
    #[error(transparent)]
    File(#[from] FileError),
    /// The receipt is not a supervisor receipt.
    #[error("{}: not a supervisor receipt: {source}", path.display())]
    Receipt {
        /// The receipt given.
        path: PathBuf,
        /// Why.
        source: crate::host::supervisor::ReceiptError,
    },
    /// The capture could not be read.
    #[error("{}: {message}", path.display())]
    Capture {
        /// The capture given.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// The most of one harness output (events, stdout, stderr) read.
pub const OUTPUT: Bound = Bound {
    what: "a harness output",
    max: 256 << 20,
};

/// The runner's own exit codes (see harness_runner.sh).
const RUNNER_FAILED: i32 = 125;
const NOT_EXECUTABLE: i32 = 126;
const NOT_FOUND: i32 = 127;

/// Classify one rollout. Only unreadable or foreign input is an error.
pub fn classify(inputs: &Inputs) -> Result<Outcome, OutcomeError> {
    let text = copyback::read_text(&inputs.receipt, Bound::RECEIPT)?;
    let receipt = CleanupReceipt::from_json(&text).map_err(|source| OutcomeError::Receipt {
        path: inputs.receipt.clone(),
        source,
    })?;
    let found = findings(inputs)?;
    Ok(decide(inputs, &receipt, &found))
}

/// A finding with where it was.
struct Located {
    file: String,
    record: String,
    finding: Finding,
}

impl Located {
    fn evidence(&self) -> Evidence {
        Evidence {
            file: self.file.clone(),
            record: self.record.clone(),
            basis: self.finding.basis,
            structured: self.finding.basis.structured(),
            detail: self.finding.detail.clone(),
        }
    }
}

/// What the outputs say, in order: per file, the error records and
/// whether the last word was an error; text lines apart.
#[derive(Default)]
struct Found {
    /// Error records, in file order (capture, events, stdout, stderr).
    records: Vec<Located>,
    /// A file's last error-or-success record was an error that is not a
    /// retry notice: the run ended on it.
    ended_on_error: Option<usize>,
    /// Text lines that name a cause (only used when no record does).
    text: Vec<Located>,
}

fn findings(inputs: &Inputs) -> Result<Found, OutcomeError> {
    let mut found = Found::default();
    if let Some(capture) = &inputs.capture {
        capture_records(inputs.harness, capture, &mut found)?;
    }
    for path in [&inputs.events, &inputs.stdout, &inputs.stderr]
        .into_iter()
        .flatten()
    {
        // An output that does not exist is empty: the CLI may never have
        // run (a missing entry), so the runner never opened it.
        let bytes = match copyback::read_file(path, OUTPUT) {
            Err(FileError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                continue;
            }
            read => read?,
        };
        let text = String::from_utf8_lossy(&bytes);
        scan_items(&path.display().to_string(), &scan::items(&text), &mut found);
    }
    Ok(found)
}

/// Record what one file's items say.
fn scan_items(file: &str, items: &[Item], found: &mut Found) {
    let mut last: Option<Option<usize>> = None;
    for item in items {
        match item {
            Item::Json(line, v) => match scan::record(v) {
                Record::Error(finding) => {
                    let transient = finding.transient;
                    found.records.push(Located {
                        file: file.to_owned(),
                        record: format!("line {line}: {}", scan::clip(&compact(v))),
                        finding,
                    });
                    if !transient {
                        last = Some(Some(found.records.len() - 1));
                    }
                }
                Record::Success => last = Some(None),
                Record::Other => {}
            },
            Item::Text(line, text) => {
                if let Some((cause, words)) = scan::words_cause(text) {
                    found.text.push(Located {
                        file: file.to_owned(),
                        record: format!("line {line}"),
                        finding: Finding {
                            cause: Some(cause),
                            basis: Basis::Text,
                            detail: format!("{words:?} in {}", scan::clip(text)),
                            transient: false,
                        },
                    });
                }
            }
        }
    }
    if let Some(Some(i)) = last {
        found.ended_on_error = Some(i);
    }
}

fn compact(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The session data capture.json names, through the snapshot readers:
/// each message's and part's raw JSON is a record.
#[cfg(feature = "snapshot")]
fn capture_records(h: Harness, path: &Path, found: &mut Found) -> Result<(), OutcomeError> {
    use crate::snapshot::{self, Kind};
    let kind = match h {
        Harness::ClaudeCode => Kind::ClaudeCode,
        Harness::OpenCode => Kind::OpenCode,
        Harness::Kilo => Kind::Kilo,
        Harness::Pi => Kind::Pi,
        Harness::Codex => Kind::Codex,
        // No reader for OpenClaw's state dir: its outputs are read instead.
        Harness::OpenClaw => return Ok(()),
        Harness::QwenCode => Kind::QwenCode,
        Harness::GeminiCli => Kind::GeminiCli,
        // Cline's sessions have a reader (`cline`), not yet used here: its
        // outputs are read instead (its outcome cells were made so).
        Harness::Cline => return Ok(()),
        // Hermes's state.db has a reader (`shforge snapshot hermes`), but
        // its records are not scanned for outcome causes yet: its outputs
        // are read instead.
        Harness::Hermes => return Ok(()),
        // No reader yet for Stirrup's transcript.json: its outputs are read instead.
        Harness::Stirrup => return Ok(()),
        // NOOA's transcript.json has a reader (`shforge snapshot nooa`),
        // not scanned for outcome causes yet: its outputs are read instead.
        Harness::Nooa => return Ok(()),
        // Its trajectory's records: an API error ends the run with an
        // `exit` message naming the exception.
        Harness::MiniSweAgent => Kind::MiniSweAgent,
    };
    // No session yet: the CLI never ran, or died before writing one. The
    // snapshot readers refuse such a dir as foreign input (it has no
    // transcripts); for an outcome it is simply nothing to read.
    if no_session_yet(path) {
        return Ok(());
    }
    let snap = match snapshot::snapshot(kind, path) {
        Ok(snap) => snap,
        // No session yet (the CLI never ran, or died first): nothing to read.
        Err(snapshot::SnapshotError::NoData(_)) => return Ok(()),
        // A refused file (a link, a FIFO, past its bound) names itself.
        Err(snapshot::SnapshotError::File(e)) => return Err(OutcomeError::File(e)),
        Err(e) => {
            return Err(OutcomeError::Capture {
                path: path.to_owned(),
                message: e.to_string(),
            });
        }
    };
    let file = path.display().to_string();
    for session in &snap.sessions {
        let mut items = Vec::new();
        for (i, m) in session.messages.iter().enumerate() {
            items.push((format!("session {} message {}", session.id, m.id), &m.data));
            for (j, p) in m.parts.iter().enumerate() {
                let id = p.id.clone().unwrap_or_else(|| format!("#{j}"));
                items.push((
                    format!("session {} message {i} part {id}", session.id),
                    &p.data,
                ));
            }
        }
        let mut last = None;
        for (record, data) in items {
            match scan::record(data) {
                Record::Error(finding) => {
                    let transient = finding.transient;
                    found.records.push(Located {
                        file: file.clone(),
                        record,
                        finding,
                    });
                    if !transient {
                        last = Some(found.records.len() - 1);
                    }
                }
                Record::Success => last = None,
                Record::Other => {}
            }
        }
        if last.is_some() {
            found.ended_on_error = last;
        }
    }
    Ok(())
}

/// No session was written yet: `path` does not exist, or is a directory
/// with no transcript (`*.jsonl`) anywhere below it (the session layout
/// makes the harness's data dir and its config files before the CLI runs;
/// a CLI that never started, or died first, leaves no transcript).
/// Directories are opened and listed as the readers do (`copyback`): a
/// link on the way is left for the reader to refuse.
#[cfg(feature = "snapshot")]
fn no_session_yet(path: &Path) -> bool {
    fn holds_transcript(dir: &Path, depth: usize) -> bool {
        let Ok(names) = copyback::open_dir(dir).and_then(|d| {
            d.names(10_000).map_err(|source| FileError::Read {
                path: dir.to_owned(),
                source,
            })
        }) else {
            return false;
        };
        names.iter().any(|name| {
            let p = dir.join(name);
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() => depth < 8 && holds_transcript(&p, depth + 1),
                Ok(m) if m.is_file() => p.extension().is_some_and(|x| x == "jsonl"),
                _ => false,
            }
        })
    }
    match copyback::open_dir(path) {
        Err(FileError::Read { source, .. }) => source.kind() == std::io::ErrorKind::NotFound,
        Err(_) => false,
        Ok(_) => !holds_transcript(path, 0),
    }
}

#[cfg(not(feature = "snapshot"))]
fn capture_records(_: Harness, path: &Path, _: &mut Found) -> Result<(), OutcomeError> {
    Err(OutcomeError::Capture {
        path: path.to_owned(),
        message: "reading a capture needs the `snapshot` feature".into(),
    })
}

fn receipt_evidence(inputs: &Inputs, r: &CleanupReceipt) -> Evidence {
    let code = r
        .return_code
        .map_or_else(|| "null".to_owned(), |c| c.to_string());
    let mut detail = format!("return_code: {code}, timed_out: {}", r.timed_out);
    if let Some(e) = &r.error {
        detail.push_str(&format!(", error: {}", scan::clip(e)));
    }
    Evidence {
        file: inputs.receipt.display().to_string(),
        record: "receipt".into(),
        basis: Basis::Receipt,
        structured: true,
        detail,
    }
}

/// The most telling record: the last error record naming a cause (the run
/// ends on its last error), else the last text line naming one.
fn best(found: &Found, include_transient: bool) -> Option<&Located> {
    let named =
        |l: &&Located| l.finding.cause.is_some() && (include_transient || !l.finding.transient);
    // Structured records first: a code or status over words.
    let structured = found
        .records
        .iter()
        .rev()
        .filter(named)
        .find(|l| l.finding.basis.structured());
    structured
        .or_else(|| found.records.iter().rev().find(named))
        .or_else(|| found.text.last())
}

fn decide(inputs: &Inputs, r: &CleanupReceipt, found: &Found) -> Outcome {
    let receipt = receipt_evidence(inputs, r);
    let mut out = Outcome {
        status: Status::Failed,
        cause: Cause::Unknown,
        underlying: None,
        harness: inputs.harness.name().to_owned(),
        return_code: r.return_code,
        signal: None,
        evidence: Vec::new(),
    };
    let http = http_exit(inputs.harness, r.return_code);
    let signal = r
        .return_code
        .filter(|c| (129..=192).contains(c) && http.is_none())
        .map(|c| c - 128);
    out.signal = signal;
    let local = if r.timed_out {
        Some((Status::TimedOut, Cause::Deadline))
    } else {
        match r.return_code {
            None => Some((Status::Failed, Cause::RunnerError)),
            Some(RUNNER_FAILED) => Some((Status::Failed, Cause::RunnerError)),
            Some(NOT_EXECUTABLE) => Some((Status::Failed, Cause::CliNotExecutable)),
            Some(NOT_FOUND) => Some((Status::Failed, Cause::CliNotFound)),
            Some(_) if signal.is_some() => Some((Status::Failed, Cause::CliCrashed)),
            Some(_) if r.error.is_some() => Some((Status::Failed, Cause::RunnerError)),
            Some(_) => None,
        }
    };
    if let Some((status, cause)) = local {
        out.status = status;
        out.cause = cause;
        if cause == Cause::Deadline {
            // What the harness was meeting when it was stopped: its last
            // error, retry notices included.
            if let Some(l) = best(found, true) {
                out.underlying = l.finding.cause;
                out.evidence.push(l.evidence());
            }
        }
        out.evidence.push(receipt);
        return out;
    }
    let rc = r.return_code.unwrap_or(0);
    if rc == 0 {
        // Exit 0 is a success unless the run's last word was an error (Pi
        // and OpenCode exit 0 after giving up).
        match found.ended_on_error.map(|i| &found.records[i]) {
            None => {
                out.status = Status::Completed;
                out.cause = Cause::None;
            }
            Some(last) => {
                // An error naming nothing: an earlier record may name it.
                let l = match last.finding.cause {
                    Some(_) => last,
                    None => best(found, false).unwrap_or(last),
                };
                out.cause = l.finding.cause.unwrap_or(Cause::Unknown);
                out.evidence.push(l.evidence());
            }
        }
        out.evidence.push(receipt);
        return out;
    }
    // A non-zero exit: the last error naming a cause, retry notices only
    // when nothing else names one.
    if let Some(l) = best(found, false).or_else(|| best(found, true)) {
        out.cause = l.finding.cause.unwrap_or(Cause::Unknown);
        out.evidence.push(l.evidence());
    } else if let Some(l) = found.records.last() {
        out.evidence.push(l.evidence());
    }
    if out.cause == Cause::Unknown
        && let Some(c) = http.and_then(scan::status_cause)
    {
        out.cause = c;
    }
    out.evidence.push(receipt);
    out
}

/// The HTTP status a CLI's exit code stands for, where the CLI exits with
/// it: Gemini CLI exits with the API's status mod 256 in its json modes
/// (401 → 145, 404 → 148, 429 → 173, 500 → 244). Codes 144–255 (statuses
/// 400–511) are read so, 144–192 rather than as signals 16–64, which such
/// a CLI does not die of; 129–143 (SIGHUP…SIGTERM, SIGKILL's 137) stay
/// signals.
fn http_exit(h: Harness, code: Option<i32>) -> Option<u16> {
    let c = code?;
    match h {
        Harness::GeminiCli if (144..=255).contains(&c) => Some(c as u16 + 256),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
