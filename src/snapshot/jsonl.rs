//! What the JSONL harnesses share: finding the transcripts under a data
//! directory, reading them line by line, and pairing tool calls with their
//! results. The per-harness parsers (`claude`, `pi`, `codex`) only map
//! lines to messages.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Message, PartKind, Session, SnapshotError, ToolStatus};

/// Where a harness keeps its transcripts below its data directory.
pub(super) struct Layout {
    /// The harness's name, for messages.
    pub harness: &'static str,
    /// The subdirectory of the data dir holding them (`projects`, `sessions`).
    pub sub: &'static str,
    /// The path pattern below `sub`, for messages (`*/*.jsonl`).
    pub pattern: &'static str,
    /// How many directories down from `sub` the files are.
    pub depth: usize,
    /// Whether a file name is a transcript's.
    pub is_transcript: fn(&str) -> bool,
}

/// One parsed line of a transcript.
pub(super) struct Line {
    /// 1-based line number.
    pub no: usize,
    /// The JSON value.
    pub value: Value,
}

/// What a parser makes of one transcript.
pub(super) struct Parsed {
    /// The session.
    pub session: Session,
    /// When it started (an ISO 8601 timestamp from the file), for ordering.
    pub started: Option<String>,
}

pub(super) type Parser = fn(&Path, &[Line]) -> Parsed;

/// Every transcript under `dir` (or under `dir` itself when it is the
/// `sub` directory), parsed, in start order; sessions without a message are
/// left out.
pub(super) fn read(
    dir: &Path,
    layout: &Layout,
    parse: Parser,
) -> Result<Vec<Session>, SnapshotError> {
    let meta = fs::metadata(dir).map_err(|source| SnapshotError::Unreadable {
        path: dir.to_owned(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(SnapshotError::BadInput(format!(
            "{} is not a directory",
            dir.display()
        )));
    }
    let nested = dir.join(layout.sub);
    // `dir` itself may be a link (the caller named it); `dir/sub` is inside.
    let is_dir = fs::symlink_metadata(&nested).is_ok_and(|m| m.is_dir());
    let root = if is_dir { nested } else { dir.to_owned() };
    let mut files = Vec::new();
    walk(&root, layout, 0, &mut files)?;
    let looked_for = || {
        format!(
            "no {} transcript ({}/{}) under {}",
            layout.harness,
            layout.sub,
            layout.pattern,
            dir.display()
        )
    };
    if files.is_empty() {
        return Err(SnapshotError::NoData(looked_for()));
    }
    let mut parsed = Vec::new();
    for file in &files {
        let lines = read_lines(file)?;
        let p = parse(file, &lines);
        if !p.session.messages.is_empty() {
            parsed.push((p.started, file, p.session));
        }
    }
    if parsed.is_empty() {
        return Err(SnapshotError::NoData(format!(
            "{}: {} file(s) found, none holds a message",
            looked_for(),
            files.len()
        )));
    }
    parsed.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    Ok(parsed.into_iter().map(|(_, _, s)| s).collect())
}

/// Regular files `depth` directories below `root` whose names match; links
/// are not followed (a copied sandbox must not lead the reader elsewhere).
fn walk(
    dir: &Path,
    layout: &Layout,
    level: usize,
    out: &mut Vec<PathBuf>,
) -> Result<(), SnapshotError> {
    let unreadable = |source| SnapshotError::Unreadable {
        path: dir.to_owned(),
        source,
    };
    let mut entries: Vec<_> = fs::read_dir(dir)
        .map_err(unreadable)?
        .collect::<Result<_, _>>()
        .map_err(unreadable)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let kind = entry.file_type().map_err(unreadable)?;
        let path = entry.path();
        if level < layout.depth {
            if kind.is_dir() {
                walk(&path, layout, level + 1, out)?;
            }
        } else if kind.is_file() && entry.file_name().to_str().is_some_and(layout.is_transcript) {
            out.push(path);
        }
    }
    Ok(())
}

/// The JSON lines of a transcript. A last line without its newline that is
/// not JSON is a write cut off by the harness's end, and is dropped; any
/// other line that is not JSON is bad input.
fn read_lines(file: &Path) -> Result<Vec<Line>, SnapshotError> {
    let bytes = fs::read(file).map_err(|source| SnapshotError::Unreadable {
        path: file.to_owned(),
        source,
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|e| SnapshotError::BadInput(format!("{}: not UTF-8: {e}", file.display())))?;
    let torn_tail = !text.ends_with('\n');
    let count = text.lines().count();
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(value) => lines.push(Line { no: i + 1, value }),
            Err(_) if torn_tail && i + 1 == count => {}
            Err(e) => {
                return Err(SnapshotError::BadInput(format!(
                    "{}:{}: not JSON: {e}",
                    file.display(),
                    i + 1
                )));
            }
        }
    }
    Ok(lines)
}

/// Give each tool call the status its result says: `completed`, `error`
/// when the result is marked as one, and `running` while there is none (a
/// run cut off mid-tool). The result's output is copied onto the call.
pub(super) fn pair_tool_results(messages: &mut [Message]) {
    let mut results: HashMap<String, (bool, Value)> = HashMap::new();
    for part in messages.iter().flat_map(|m| &m.parts) {
        if let PartKind::ToolResult {
            call_id: Some(id),
            is_error,
            output,
        } = &part.kind
        {
            results.insert(id.clone(), (*is_error, output.clone()));
        }
    }
    for part in messages.iter_mut().flat_map(|m| &mut m.parts) {
        if let PartKind::ToolCall {
            call_id,
            status,
            output,
            ..
        } = &mut part.kind
        {
            match call_id.as_ref().and_then(|id| results.get(id)) {
                Some((is_error, out)) => {
                    *status = if *is_error {
                        ToolStatus::Error
                    } else {
                        ToolStatus::Completed
                    };
                    *output = Some(out.clone());
                }
                None => *status = ToolStatus::Running,
            }
        }
    }
}

/// `v[key]` as a string.
pub(super) fn str_at(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// `v[key]` as a count (0 when absent or not a count).
pub(super) fn count_at(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The id of a line that has none of its own.
pub(super) fn line_id(line: &Line) -> String {
    format!("line-{}", line.no)
}

/// The file's stem, as a session id of last resort.
pub(super) fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
