//! OpenCode and Kilo: the `session`, `message` and `part` tables of a SQLite
//! database in WAL mode, read from a private copy.
//!
//! Why a copy: SQLite applies `FILE-wal` only through a `-shm` index it
//! builds and writes, and the last connection to close checkpoints the WAL
//! into the main file. Opening the given files would rewrite them; opening
//! them `immutable=1` would ignore the WAL, where every row of a fresh run
//! is. So `FILE` and `FILE-wal` (and a rollback `FILE-journal`) are copied
//! into a temporary directory, and SQLite recovers the copy as it would
//! after a crash: committed frames applied, a torn or uncommitted tail
//! ignored.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rusqlite::config::DbConfig;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use super::{Kind, Message, Part, PartKind, Session, SnapshotError, Tokens, ToolStatus};

/// The tables a session is read from, in the order they are checked.
const TABLES: [&str; 3] = ["session", "message", "part"];

/// How many times the files are copied again when one changed during the
/// copy (a live database with a writer).
const COPY_ATTEMPTS: usize = 5;

pub(super) fn read(kind: Kind, db: &Path) -> Result<Vec<Session>, SnapshotError> {
    check_header(db)?;
    let copy = PrivateCopy::take(db)?;
    // Read-write, on the copy only: recovering a hot rollback journal needs
    // it (a WAL is recovered either way). No checkpoint at close (work for
    // nothing on a copy about to be removed), and no statement may write.
    // The file came out of a sandbox: defensive mode, and a schema that is
    // not trusted to call functions with side effects.
    let conn = Connection::open_with_flags(
        &copy.db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .and_then(|c| {
        c.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        c.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        c.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
        c.pragma_update(None, "query_only", true)?;
        Ok(c)
    })
    .map_err(|e| sql_err(db, e))?;
    // One read transaction: every SELECT sees the same state.
    conn.execute_batch("BEGIN DEFERRED")
        .map_err(|e| sql_err(db, e))?;
    let sessions = read_tables(kind, db, &copy, &conn)?;
    conn.execute_batch("COMMIT").map_err(|e| sql_err(db, e))?;
    Ok(sessions)
}

/// A SQLite file starts with this; an empty file is an empty database.
fn check_header(db: &Path) -> Result<(), SnapshotError> {
    let unreadable = |source| SnapshotError::Unreadable {
        path: db.to_owned(),
        source,
    };
    let meta = fs::metadata(db).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(SnapshotError::BadInput(format!(
            "{} is not a regular file",
            db.display()
        )));
    }
    let mut head = Vec::with_capacity(16);
    fs::File::open(db)
        .and_then(|f| f.take(16).read_to_end(&mut head))
        .map_err(unreadable)?;
    if !head.is_empty() && head != b"SQLite format 3\0" {
        return Err(SnapshotError::NotSqlite(db.to_owned()));
    }
    Ok(())
}

/// `FILE` and its `-wal`/`-journal` copied into a temporary directory that
/// is removed on drop.
struct PrivateCopy {
    _dir: tempfile::TempDir,
    db: PathBuf,
    /// Whether `FILE-wal` existed beside the original.
    had_wal: bool,
}

impl PrivateCopy {
    fn take(db: &Path) -> Result<Self, SnapshotError> {
        let dir = tempfile::Builder::new()
            .prefix("shforge-snapshot-")
            .tempdir()
            .map_err(|e| {
                SnapshotError::BadInput(format!(
                    "cannot make a temporary directory in {}: {e}",
                    std::env::temp_dir().display()
                ))
            })?;
        let target = dir.path().join("session.db");
        let sources = [
            (db.to_owned(), target.clone()),
            (sibling(db, "-wal"), sibling(&target, "-wal")),
            (sibling(db, "-journal"), sibling(&target, "-journal")),
        ];
        let mut had_wal = false;
        for attempt in 1..=COPY_ATTEMPTS {
            let before = stamps(&sources)?;
            for ((from, to), stamp) in sources.iter().zip(&before) {
                // A sibling that is absent now must not linger from an
                // earlier attempt.
                let _ = fs::remove_file(to);
                if stamp.is_some() {
                    copy_private(from, to)?;
                }
            }
            had_wal = before[1].is_some();
            if stamps(&sources)? == before || attempt == COPY_ATTEMPTS {
                break;
            }
        }
        Ok(PrivateCopy {
            _dir: dir,
            db: target,
            had_wal,
        })
    }
}

/// `path` with `suffix` appended to its file name (`x.db` → `x.db-wal`).
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = OsString::from(path.as_os_str());
    s.push(suffix);
    PathBuf::from(s)
}

type Stamp = Option<(u64, Option<SystemTime>)>;

/// Size and mtime of each source (None: absent). The main file was checked
/// already; a sibling must be a regular file, never followed as a link.
fn stamps(sources: &[(PathBuf, PathBuf)]) -> Result<Vec<Stamp>, SnapshotError> {
    sources
        .iter()
        .enumerate()
        .map(|(i, (from, _))| {
            let meta = if i == 0 {
                fs::metadata(from)
            } else {
                fs::symlink_metadata(from)
            };
            match meta {
                Ok(m) if m.is_file() => Ok(Some((m.len(), m.modified().ok()))),
                Ok(_) => Err(SnapshotError::BadInput(format!(
                    "{} is not a regular file",
                    from.display()
                ))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && i > 0 => Ok(None),
                Err(source) => Err(SnapshotError::Unreadable {
                    path: from.clone(),
                    source,
                }),
            }
        })
        .collect()
}

/// Copy `from` to `to`, readable and writable by us only whatever the
/// original's mode (SQLite must be able to build the copy's `-shm`).
fn copy_private(from: &Path, to: &Path) -> Result<(), SnapshotError> {
    use std::os::unix::fs::PermissionsExt as _;
    fs::copy(from, to)
        .and_then(|_| fs::set_permissions(to, fs::Permissions::from_mode(0o600)))
        .map_err(|source| SnapshotError::Unreadable {
            path: from.to_owned(),
            source,
        })
}

fn sql_err(db: &Path, e: rusqlite::Error) -> SnapshotError {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) {
        return SnapshotError::NotSqlite(db.to_owned());
    }
    SnapshotError::BadInput(format!("{}: {e}", db.display()))
}

fn read_tables(
    kind: Kind,
    db: &Path,
    copy: &PrivateCopy,
    conn: &Connection,
) -> Result<Vec<Session>, SnapshotError> {
    let err = |e| sql_err(db, e);
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(err)?;
    if tables.is_empty() {
        let why = if copy.had_wal {
            format!(
                "{} and its -wal hold no tables (was the -wal copied at the same moment as the file?)",
                db.display()
            )
        } else {
            format!(
                "{} has no tables and no {} beside it: its -wal was probably not copied",
                db.display(),
                sibling(db, "-wal").display()
            )
        };
        return Err(SnapshotError::NoData(why));
    }
    if let Some(table) = TABLES.into_iter().find(|t| !tables.iter().any(|n| n == t)) {
        return Err(SnapshotError::MissingTable {
            path: db.to_owned(),
            table,
            kind,
        });
    }

    let mut sessions: Vec<Session> = conn
        .prepare("SELECT id, title, directory, parent_id FROM session ORDER BY time_created, id")
        .and_then(|mut s| {
            s.query_map([], |r| {
                Ok(Session {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    directory: r.get(2)?,
                    parent_id: r.get(3)?,
                    tokens: Tokens::default(),
                    messages: Vec::new(),
                })
            })?
            .collect()
        })
        .map_err(err)?;
    if sessions.is_empty() {
        return Err(SnapshotError::NoData(format!(
            "table session of {} has no rows",
            db.display()
        )));
    }
    let index: HashMap<String, usize> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.clone(), i))
        .collect();

    let mut parts = read_parts(db, conn)?;
    let mut stmt = conn
        .prepare("SELECT id, session_id, data FROM message ORDER BY time_created, id")
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(row) = rows.next().map_err(err)? {
        let id: String = row.get(0).map_err(err)?;
        let session_id: String = row.get(1).map_err(err)?;
        let data = json_column(db, "message", &id, row.get_ref(2).map_err(err)?)?;
        // A message of a session that is gone (deleted mid-run) belongs to
        // no session of the snapshot.
        let Some(&i) = index.get(&session_id) else {
            continue;
        };
        let role = data
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned();
        if role == "assistant" {
            sessions[i].tokens += message_tokens(&data);
        }
        sessions[i].messages.push(Message {
            parts: parts.remove(&id).unwrap_or_default(),
            id,
            role,
            data,
        });
    }
    Ok(sessions)
}

/// Every part, grouped by message, in id order (OpenCode's part ids grow
/// with time, and it orders them so itself).
fn read_parts(db: &Path, conn: &Connection) -> Result<HashMap<String, Vec<Part>>, SnapshotError> {
    let err = |e| sql_err(db, e);
    let mut out: HashMap<String, Vec<Part>> = HashMap::new();
    let mut stmt = conn
        .prepare("SELECT id, message_id, data FROM part ORDER BY message_id, id")
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(row) = rows.next().map_err(err)? {
        let id: String = row.get(0).map_err(err)?;
        let message_id: String = row.get(1).map_err(err)?;
        let data = json_column(db, "part", &id, row.get_ref(2).map_err(err)?)?;
        out.entry(message_id).or_default().push(Part {
            kind: part_kind(&data),
            id: Some(id),
            data,
        });
    }
    Ok(out)
}

/// A `data` column: JSON text (or a BLOB holding it).
fn json_column(db: &Path, table: &str, id: &str, v: ValueRef<'_>) -> Result<Value, SnapshotError> {
    let bytes = match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => b,
        other => {
            return Err(SnapshotError::BadInput(format!(
                "{}: {table} {id}: data is {} where JSON text was expected",
                db.display(),
                other.data_type()
            )));
        }
    };
    serde_json::from_slice(bytes).map_err(|e| {
        SnapshotError::BadInput(format!(
            "{}: {table} {id}: data is not JSON: {e}",
            db.display()
        ))
    })
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// OpenCode part types: `text`, `reasoning`, `tool` (`state.status`
/// pending/running/completed/error), and markers (`step-start`, …).
fn part_kind(data: &Value) -> PartKind {
    let text = || str_field(data, "text").unwrap_or_default();
    match data.get("type").and_then(Value::as_str) {
        Some("text") => PartKind::Text { text: text() },
        Some("reasoning") => PartKind::Reasoning { text: text() },
        Some("tool") => {
            let state = data.get("state").unwrap_or(&Value::Null);
            let status = match state.get("status").and_then(Value::as_str) {
                Some("pending") => ToolStatus::Pending,
                Some("running") => ToolStatus::Running,
                Some("completed") => ToolStatus::Completed,
                Some("error") => ToolStatus::Error,
                _ => ToolStatus::Unknown,
            };
            PartKind::ToolCall {
                tool: str_field(data, "tool").unwrap_or_default(),
                call_id: str_field(data, "callID"),
                status,
                input: state.get("input").cloned().unwrap_or(Value::Null),
                output: state.get("output").or_else(|| state.get("error")).cloned(),
            }
        }
        other => PartKind::Other {
            name: other.map(str::to_owned),
        },
    }
}

/// An assistant message's `tokens`: `{total, input, output, reasoning,
/// cache: {read, write}}`.
fn message_tokens(data: &Value) -> Tokens {
    let t = data.get("tokens").unwrap_or(&Value::Null);
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let cache = t.get("cache").unwrap_or(&Value::Null);
    let mut tokens = Tokens {
        input: n(t.get("input")),
        output: n(t.get("output")),
        reasoning: n(t.get("reasoning")),
        cache_read: n(cache.get("read")),
        cache_write: n(cache.get("write")),
        total: n(t.get("total")),
    };
    if tokens.total == 0 {
        tokens.total = super::sum(&[
            tokens.input,
            tokens.output,
            tokens.reasoning,
            tokens.cache_read,
            tokens.cache_write,
        ]);
    }
    tokens
}
