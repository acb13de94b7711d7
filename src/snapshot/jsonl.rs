//! What the JSONL harnesses share: finding the transcripts under a data
//! directory, reading them line by line, and pairing tool calls with their
//! results. The per-harness parsers (`claude`, `pi`, `codex`) only map
//! lines to messages.

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{AgentInfo, Message, Part, PartKind, SessionRecord, SnapshotError, Tokens, ToolStatus};
use crate::copyback;
use crate::files::{self, Bound, FileError};

/// The most transcripts one snapshot reads (a run makes one to a few).
pub(super) const MAX_FILES: usize = 10_000;
/// The most directory entries one snapshot looks at.
pub(super) const MAX_ENTRIES: usize = 100_000;
/// The most bytes of transcripts one snapshot reads, all files together
/// (each file is also held to [`Bound::TRANSCRIPT`], each line to
/// [`Bound::JSONL_LINE`]).
pub(super) const MAX_TOTAL: u64 = 1 << 30;

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
    /// Whether the lines of a file are this harness's: the first line that
    /// is not, with why (a file of another harness with the same name
    /// pattern, e.g. Qwen Code's chats, which look like Claude Code's).
    pub recognize: fn(&[Line]) -> Result<(), Foreign>,
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
    pub session: SessionRecord,
    /// When it started (an ISO 8601 timestamp from the file), for ordering.
    pub started: Option<String>,
}

pub(super) type Parser = fn(&Path, &[Line]) -> Parsed;

/// A line that is not the harness's: its number and why.
pub(super) type Foreign = (usize, String);

/// What a transcript's lines say of its session as a whole.
#[derive(Default)]
pub(super) struct Head {
    /// The harness's session id.
    pub id: Option<String>,
    /// The working directory.
    pub directory: Option<String>,
    /// When it started.
    pub started: Option<String>,
    /// The CLI's version and model, where a line names them.
    pub agent: AgentInfo,
}

impl Head {
    /// The transcript parsed: its tool calls paired with their results
    /// ([`pair_tool_results`]), and the file's stem as the id when no line
    /// gave one.
    pub fn finish(self, path: &Path, tokens: Tokens, mut messages: Vec<Message>) -> Parsed {
        pair_tool_results(&mut messages);
        Parsed {
            session: SessionRecord {
                id: self.id.unwrap_or_else(|| file_stem(path)),
                title: None,
                directory: self.directory,
                parent_id: None,
                tokens,
                messages,
                agent: self.agent,
            },
            started: self.started,
        }
    }
}

/// Every transcript under `dir` (or under `dir` itself when it is the
/// `sub` directory), parsed, in start order; sessions without a message are
/// left out.
///
/// Refused (exit 2): a `dir` without `sub` that is not `sub` itself; a
/// link, FIFO, device or socket where a transcript or a directory of the
/// layout is expected (never followed, never opened); no transcript but
/// entries of another layout; a transcript whose lines are not the
/// harness's. Exit 1 (no session data): the layout is there and empty.
pub(super) fn read(
    dir: &Path,
    layout: &Layout,
    parse: Parser,
) -> Result<Vec<SessionRecord>, SnapshotError> {
    read_with(dir, layout, read_lines, parse)
}

/// How a transcript file becomes lines: [`read_lines`] (JSONL), or
/// [`read_document`] (one JSON document, Cline's).
pub(super) type Loader = fn(&Path, &mut u64) -> Result<Vec<Line>, SnapshotError>;

/// [`read`] with another [`Loader`]: the same layout walk, bounds and
/// refusals.
pub(super) fn read_with(
    dir: &Path,
    layout: &Layout,
    load: Loader,
    parse: Parser,
) -> Result<Vec<SessionRecord>, SnapshotError> {
    open_data_dir(dir, "")?;
    let root = root(dir, layout)?;
    let mut walk = Walk::default();
    walk.dir(&root, layout, 0)?;
    let looked_for = || {
        format!(
            "no {} transcript ({}/{}) under {}",
            layout.harness,
            layout.sub,
            layout.pattern,
            dir.display()
        )
    };
    if walk.files.is_empty() {
        if let Some(other) = walk.foreign {
            return Err(SnapshotError::BadInput(format!(
                "{}: expected {}'s {}/{} transcripts, found {} instead: not {}'s data",
                dir.display(),
                layout.harness,
                layout.sub,
                layout.pattern,
                other.display(),
                layout.harness
            )));
        }
        return Err(SnapshotError::NoData(looked_for()));
    }
    let mut parsed = Vec::new();
    let mut budget = MAX_TOTAL;
    for file in &walk.files {
        let lines = load(file, &mut budget)?;
        (layout.recognize)(&lines).map_err(|(no, why)| {
            SnapshotError::BadInput(format!(
                "{}:{no}: not a {} transcript: {why}",
                file.display(),
                layout.harness
            ))
        })?;
        let p = parse(file, &lines);
        if !p.session.messages.is_empty() {
            parsed.push((p.started, file, p.session));
        }
    }
    if parsed.is_empty() {
        return Err(SnapshotError::NoData(format!(
            "{}: {} file(s) found, none holds a message",
            looked_for(),
            walk.files.len()
        )));
    }
    parsed.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    Ok(parsed.into_iter().map(|(_, _, s)| s).collect())
}

/// Check that the `dir` named is a directory reached without a link
/// ([`copyback::open_dir`]); `expected` is added to the message when it is
/// not a directory (what the harness's dir holds).
pub(super) fn open_data_dir(dir: &Path, expected: &str) -> Result<(), SnapshotError> {
    match copyback::open_dir(dir) {
        Ok(_) => Ok(()),
        Err(FileError::NotDirectory { .. }) => Err(SnapshotError::BadInput(format!(
            "{} is not a directory{expected}",
            dir.display()
        ))),
        Err(FileError::Read { source, .. }) => Err(SnapshotError::Unreadable {
            path: dir.to_owned(),
            source,
        }),
        Err(e) => Err(SnapshotError::File(e)),
    }
}

/// `dir/sub`, or `dir` itself when it is named `sub`; anything else is not
/// this harness's data directory.
fn root(dir: &Path, layout: &Layout) -> Result<PathBuf, SnapshotError> {
    let nested = dir.join(layout.sub);
    // No link on the way to `dir` ([`open_data_dir`]), nor at `dir/sub`.
    match fs::symlink_metadata(&nested) {
        Ok(m) if m.is_dir() => return Ok(nested),
        Ok(m) => {
            return Err(SnapshotError::BadInput(format!(
                "{}: {}, where {}'s {} directory was expected{}",
                nested.display(),
                crate::files::kind_of(&m),
                layout.harness,
                layout.sub,
                if m.file_type().is_symlink() {
                    " (links in a data directory are not followed)"
                } else {
                    ""
                }
            )));
        }
        Err(_) => {}
    }
    // By its real name: `--dir .` inside `sessions/` is `sessions/` too.
    let named = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
    if named.file_name().is_some_and(|n| n == layout.sub) {
        return Ok(dir.to_owned());
    }
    Err(SnapshotError::BadInput(format!(
        "{}: expected {}'s data directory (holding {}/{}) or its {} directory itself; it has no {}/",
        dir.display(),
        layout.harness,
        layout.sub,
        layout.pattern,
        layout.sub,
        layout.sub
    )))
}

/// The transcripts found, and the first entry that does not fit the
/// layout (reported when no transcript is found).
#[derive(Default)]
struct Walk {
    files: Vec<PathBuf>,
    foreign: Option<PathBuf>,
    entries: usize,
}

impl Walk {
    /// Regular files `layout.depth` directories below `dir` whose names
    /// match; links are never followed (a copied sandbox must not lead the
    /// reader elsewhere) and are refused where the layout expects a
    /// directory or a transcript, as are FIFOs, devices and sockets.
    fn dir(&mut self, dir: &Path, layout: &Layout, level: usize) -> Result<(), SnapshotError> {
        let unreadable = |source| SnapshotError::Unreadable {
            path: dir.to_owned(),
            source,
        };
        // Listed from the directory opened without a link on the way:
        // what is listed is what was checked.
        let listed = copyback::open_dir(dir).map_err(SnapshotError::File)?;
        let mut names = listed
            .names(MAX_ENTRIES - self.entries)
            .map_err(unreadable)?;
        self.entries += names.len();
        if self.entries > MAX_ENTRIES {
            return Err(SnapshotError::BadInput(format!(
                "{}: more than {MAX_ENTRIES} directory entries, the most shforge looks at in one snapshot",
                dir.display()
            )));
        }
        names.sort();
        for name in names {
            let path = dir.join(&name);
            // What the entry is, for the layout; every open below goes
            // through `copyback` again, so a link swapped in meanwhile is
            // refused there.
            let meta = fs::symlink_metadata(&path).map_err(|source| SnapshotError::Unreadable {
                path: path.clone(),
                source,
            })?;
            let refuse = || {
                SnapshotError::BadInput(format!(
                    "{}: {}, where the layout has {}: refused (not followed, not opened)",
                    path.display(),
                    crate::files::kind_of(&meta),
                    if level < layout.depth {
                        "a directory"
                    } else {
                        "a transcript"
                    }
                ))
            };
            if level < layout.depth {
                if meta.is_dir() {
                    self.dir(&path, layout, level + 1)?;
                } else if meta.file_type().is_symlink() {
                    return Err(refuse());
                } else {
                    self.foreign.get_or_insert(path);
                }
            } else if name.to_str().is_some_and(layout.is_transcript) {
                if !meta.is_file() {
                    return Err(refuse());
                }
                if self.files.len() == MAX_FILES {
                    return Err(SnapshotError::BadInput(format!(
                        "{}: more than {MAX_FILES} transcripts, the most shforge reads in one snapshot",
                        dir.display()
                    )));
                }
                self.files.push(path);
            } else {
                self.foreign.get_or_insert(path);
            }
        }
        Ok(())
    }
}

/// The JSON lines of a transcript, each read up to its bound, the file up
/// to its own and to what is left of `budget` (all files together). A last
/// line without its newline that is not JSON is a write cut off by the
/// harness's end, and is dropped; any other line that is not JSON is bad
/// input.
pub(super) fn read_lines(file: &Path, budget: &mut u64) -> Result<Vec<Line>, SnapshotError> {
    let (handle, meta) = copyback::open_file(file).map_err(SnapshotError::File)?;
    let too_large = || {
        SnapshotError::File(FileError::TooLarge {
            path: file.to_owned(),
            bound: Bound::TRANSCRIPT,
        })
    };
    let over_budget = || {
        SnapshotError::BadInput(format!(
            "{}: the transcripts add up to more than {} MiB, the most shforge reads in one snapshot",
            file.display(),
            MAX_TOTAL >> 20
        ))
    };
    if meta.len() > Bound::TRANSCRIPT.max {
        return Err(too_large());
    }
    if meta.len() > *budget {
        return Err(over_budget());
    }
    let unreadable = |source| SnapshotError::Unreadable {
        path: file.to_owned(),
        source,
    };
    let mut reader = BufReader::new(handle);
    let mut lines = Vec::new();
    let mut buf = Vec::new();
    let mut total = 0u64;
    for no in 1.. {
        buf.clear();
        // One byte past the bound and the newline: a longer line is seen
        // without reading the rest of it.
        let n = (&mut reader)
            .take(Bound::JSONL_LINE.max + 2)
            .read_until(b'\n', &mut buf)
            .map_err(unreadable)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > Bound::TRANSCRIPT.max {
            return Err(too_large());
        }
        if total > *budget {
            return Err(over_budget());
        }
        let complete = buf.last() == Some(&b'\n');
        let text = if complete { &buf[..n - 1] } else { &buf[..] };
        if text.len() as u64 > Bound::JSONL_LINE.max {
            return Err(SnapshotError::BadInput(format!(
                "{}:{no}: longer than {}, the most shforge reads of {}",
                file.display(),
                Bound::JSONL_LINE,
                Bound::JSONL_LINE.what
            )));
        }
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed = std::str::from_utf8(text)
            .map_err(|e| format!("not UTF-8: {e}"))
            .and_then(|t| serde_json::from_str(t).map_err(|e| format!("not JSON: {e}")));
        match parsed {
            Ok(value) => lines.push(Line { no, value }),
            Err(_) if !complete => {}
            Err(why) => {
                return Err(SnapshotError::BadInput(format!(
                    "{}:{no}: {why}",
                    file.display()
                )));
            }
        }
    }
    *budget -= total;
    Ok(lines)
}

/// A transcript that is one JSON document (a pretty-printed file, not
/// JSONL): one [`Line`] numbered 1, read up to [`Bound::TRANSCRIPT`] and
/// what is left of `budget`. A file that is not JSON (a write cut off, or
/// another program's file) is bad input.
pub(super) fn read_document(file: &Path, budget: &mut u64) -> Result<Vec<Line>, SnapshotError> {
    let (handle, meta) = copyback::open_file(file).map_err(SnapshotError::File)?;
    if meta.len() > *budget {
        return Err(SnapshotError::BadInput(format!(
            "{}: the transcripts add up to more than {} MiB, the most shforge reads in one snapshot",
            file.display(),
            MAX_TOTAL >> 20
        )));
    }
    let bytes =
        files::read_opened(file, handle, &meta, Bound::TRANSCRIPT).map_err(SnapshotError::File)?;
    *budget = budget.saturating_sub(bytes.len() as u64);
    let value = std::str::from_utf8(&bytes)
        .map_err(|e| format!("not UTF-8: {e}"))
        .and_then(|t| serde_json::from_str(t).map_err(|e| format!("not JSON: {e}")))
        .map_err(|why| SnapshotError::BadInput(format!("{}: {why}", file.display())))?;
    Ok(vec![Line { no: 1, value }])
}

/// The first line without a string `type` (every line of the three
/// harnesses has one).
pub(super) fn untyped(lines: &[Line]) -> Result<(), Foreign> {
    match lines
        .iter()
        .find(|l| !l.value.get("type").is_some_and(Value::is_string))
    {
        Some(l) => Err((l.no, "a line without a string `type`".into())),
        None => Ok(()),
    }
}

/// The first line must have `type` `wanted` (Pi's `session` header,
/// Codex's `session_meta`).
pub(super) fn first_typed(lines: &[Line], wanted: &str) -> Result<(), Foreign> {
    untyped(lines)?;
    match lines.first() {
        Some(l) if l.value["type"] != wanted => Err((
            l.no,
            format!("its first line is not a `{{\"type\":\"{wanted}\",…}}` header"),
        )),
        _ => Ok(()),
    }
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

/// A part without an id of its own, keeping the JSON it was read from.
pub(super) fn part(data: &Value, kind: PartKind) -> Part {
    Part {
        id: None,
        kind,
        data: data.clone(),
    }
}

/// Message `content` as Anthropic shapes it (Claude Code and Pi alike): a
/// plain string is one text part, an array is one part per block.
pub(super) fn content_parts(content: Option<&Value>, block: fn(&Value) -> Part) -> Vec<Part> {
    match content {
        Some(text @ Value::String(s)) => vec![part(text, PartKind::Text { text: s.clone() })],
        Some(Value::Array(blocks)) => blocks.iter().map(block).collect(),
        _ => Vec::new(),
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
