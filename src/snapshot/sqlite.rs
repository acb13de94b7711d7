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
use rusqlite::{Connection, OpenFlags, ffi};
use serde_json::Value;

use super::{
    AgentInfo, Kind, Message, Part, PartKind, SessionRecord, SnapshotError, Tokens, ToolStatus,
};
use super::{signal, wal};
use crate::copyback;
use crate::files::{Bound, FileError};

/// How many times the files are copied again when one changed during the
/// copy (a live database with a writer).
const COPY_ATTEMPTS: usize = 5;

/// What one harness keeps in its database: the columns read from each
/// table (checked, before any row is read, to be plain columns of plain
/// tables) and the reader of the rows.
pub(super) struct Schema {
    /// Table → the columns read from it.
    pub columns: &'static [(&'static str, &'static [&'static str])],
    /// Reads the sessions from the checked copy.
    pub rows: fn(&Path, &Connection) -> Result<Vec<SessionRecord>, SnapshotError>,
    /// A WAL that needs pages of the main file is checked on the tables
    /// read only (`PRAGMA quick_check(TABLE)` each), not on the whole
    /// file: a schema with virtual tables elsewhere (Hermes's FTS5 index)
    /// is then readable, those tables never touched.
    pub check_read_tables_only: bool,
}

/// OpenCode's and Kilo's tables.
const OPENCODE: Schema = Schema {
    columns: &COLUMNS,
    rows: read_tables,
    check_read_tables_only: false,
};

pub(super) fn read(kind: Kind, db: &Path) -> Result<Vec<SessionRecord>, SnapshotError> {
    read_with(kind, db, &OPENCODE)
}

/// [`read`] for `schema`'s tables: the same private copy, WAL checks,
/// defensive connection and schema checks for every harness.
pub(super) fn read_with(
    kind: Kind,
    db: &Path,
    schema: &Schema,
) -> Result<Vec<SessionRecord>, SnapshotError> {
    check_header(db)?;
    let copy = PrivateCopy::take(db)?;
    let verdict = match &copy.wal {
        Some(wal) => wal::check(&copy.db, wal, &sibling(db, "-wal"))?,
        None => wal::Verdict::Empty,
    };
    let conn = open_copy(db, &copy)?;
    // One read transaction: every SELECT sees the same state.
    conn.execute_batch("BEGIN DEFERRED")
        .map_err(|e| sql_err(db, e))?;
    if verdict == wal::Verdict::Mixed && schema.check_read_tables_only {
        // The tables read must be plain tables with plain columns first:
        // quick_check then walks only their b-trees.
        check_schema(kind, db, &copy, &conn, schema.columns)?;
        check_mixed_tables(db, &conn, schema.columns)?;
    } else if verdict == wal::Verdict::Mixed {
        check_mixed(db, &conn)?;
    }
    check_schema(kind, db, &copy, &conn, schema.columns)?;
    let sessions = (schema.rows)(db, &conn)?;
    conn.execute_batch("COMMIT").map_err(|e| sql_err(db, e))?;
    Ok(sessions)
}

/// How far a statement on the copy may go: values to the value bound, and
/// far below SQLite's own maxima for what a session schema never needs.
const LIMITS: [(i32, i32); 13] = [
    (ffi::SQLITE_LIMIT_LENGTH, Bound::SQLITE_VALUE.max as i32),
    (ffi::SQLITE_LIMIT_SQL_LENGTH, 100_000),
    (ffi::SQLITE_LIMIT_COLUMN, 1000),
    (ffi::SQLITE_LIMIT_EXPR_DEPTH, 100),
    (ffi::SQLITE_LIMIT_COMPOUND_SELECT, 10),
    (ffi::SQLITE_LIMIT_VDBE_OP, 100_000),
    (ffi::SQLITE_LIMIT_FUNCTION_ARG, 8),
    (ffi::SQLITE_LIMIT_ATTACHED, 0),
    (ffi::SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 100),
    (ffi::SQLITE_LIMIT_VARIABLE_NUMBER, 10),
    (ffi::SQLITE_LIMIT_TRIGGER_DEPTH, 1),
    (ffi::SQLITE_LIMIT_WORKER_THREADS, 0),
    // SQLITE_LIMIT_SCHEMA: objects in the schema (OpenCode has about 60).
    (13, 10_000),
];

/// The copy, opened read-write (recovering a hot rollback journal needs
/// it; a WAL is recovered either way) but `query_only`: no statement may
/// write. No checkpoint at close (work for nothing on a copy about to be
/// removed). The file came out of a sandbox: defensive mode, a schema that
/// is not trusted to call functions with side effects, no extension
/// loading, and the limits above.
fn open_copy(db: &Path, copy: &PrivateCopy) -> Result<Connection, SnapshotError> {
    let conn = Connection::open_with_flags(
        &copy.db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| sql_err(db, e))?;
    for (limit, value) in LIMITS {
        // SAFETY: a valid open handle; sqlite3_limit only reads and sets
        // an integer of the connection.
        unsafe { ffi::sqlite3_limit(conn.handle(), limit, value) };
    }
    (|| {
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false)?;
        conn.pragma_update(None, "trusted_schema", false)?;
        conn.pragma_update(None, "query_only", true)?;
        Ok(())
    })()
    .map_err(|e| sql_err(db, e))?;
    Ok(conn)
}

/// A SQLite file starts with this; an empty file is an empty database.
/// The main file must be a regular file reached without a link
/// ([`copyback::open_file`]), within the bounds (see [`check_size`]).
fn check_header(db: &Path) -> Result<(), SnapshotError> {
    let (file, meta) = copyback::open_file(db).map_err(SnapshotError::File)?;
    check_size(db, &meta, 0)?;
    let mut head = Vec::with_capacity(16);
    file.take(16)
        .read_to_end(&mut head)
        .map_err(|source| SnapshotError::Unreadable {
            path: db.to_owned(),
            source,
        })?;
    if !head.is_empty() && head != b"SQLite format 3\0" {
        return Err(SnapshotError::NotSqlite(db.to_owned()));
    }
    Ok(())
}

/// Files above this are checked for holes.
const SPARSE_FROM: u64 = 1 << 20;

/// Refuse a file that, with the `already` bytes of the files copied before
/// it, passes [`Bound::SQLITE_DB`], and a sparse file (less than half of its
/// length on disk): a few blocks that read as a gigabyte of zeros must not
/// be copied into `$TMPDIR`.
fn check_size(path: &Path, meta: &fs::Metadata, already: u64) -> Result<(), SnapshotError> {
    use std::os::unix::fs::MetadataExt as _;
    let len = meta.len();
    if len.saturating_add(already) > Bound::SQLITE_DB.max {
        return Err(SnapshotError::File(FileError::TooLarge {
            path: path.to_owned(),
            bound: Bound::SQLITE_DB,
        }));
    }
    if len > SPARSE_FROM && meta.blocks().saturating_mul(512) < len / 2 {
        return Err(SnapshotError::BadInput(format!(
            "{}: a sparse file ({} bytes long, {} on disk): refused, a harness never writes one",
            path.display(),
            len,
            meta.blocks().saturating_mul(512)
        )));
    }
    Ok(())
}

/// `FILE` and its `-wal`/`-journal` copied into a temporary directory that
/// is removed on drop (and on TERM/INT, see `signal.rs`).
struct PrivateCopy {
    // Dropped in this order: the directory is removed while a signal would
    // still remove it too, then forgotten.
    _dir: tempfile::TempDir,
    _signal: signal::Registration,
    db: PathBuf,
    /// The copy of `FILE-wal`, when it existed beside the original.
    wal: Option<PathBuf>,
}

impl PrivateCopy {
    fn take(db: &Path) -> Result<Self, SnapshotError> {
        let (dir, registration) = signal::held(|| {
            let dir = tempfile::Builder::new()
                .prefix("shforge-snapshot-")
                .tempdir()
                .map_err(|e| {
                    SnapshotError::BadInput(format!(
                        "cannot make a temporary directory in {}: {e}",
                        std::env::temp_dir().display()
                    ))
                })?;
            let made = [
                "session.db",
                "session.db-wal",
                "session.db-journal",
                "session.db-shm",
            ]
            .map(|name| dir.path().join(name));
            let registration = signal::register(dir.path(), &made);
            Ok::<_, SnapshotError>((dir, registration))
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
            let mut copied = 0u64;
            for ((from, to), stamp) in sources.iter().zip(&before) {
                // A sibling that is absent now must not linger from an
                // earlier attempt.
                let _ = fs::remove_file(to);
                if stamp.is_some() {
                    copied += copy_private(from, to, copied)?;
                }
            }
            had_wal = before[1].is_some();
            if stamps(&sources)? == before || attempt == COPY_ATTEMPTS {
                break;
            }
        }
        Ok(PrivateCopy {
            _signal: registration,
            _dir: dir,
            wal: had_wal.then(|| sibling(&target, "-wal")),
            db: target,
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

/// Size and mtime of each source (None: absent). Each must be a regular
/// file, never followed as a link (the main file was checked already).
fn stamps(sources: &[(PathBuf, PathBuf)]) -> Result<Vec<Stamp>, SnapshotError> {
    sources
        .iter()
        .enumerate()
        .map(|(i, (from, _))| match fs::symlink_metadata(from) {
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
        })
        .collect()
}

/// Copy `from` to `to`, readable and writable by us only whatever the
/// original's mode (SQLite must be able to build the copy's `-shm`). The
/// copy reads from the descriptor that was checked (a regular file, opened
/// without waiting, within the bound with the `already` bytes copied, not
/// sparse), and stops at the bound should the file grow meanwhile. The
/// number of bytes copied.
fn copy_private(from: &Path, to: &Path, already: u64) -> Result<u64, SnapshotError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let (file, meta) = copyback::open_file(from).map_err(SnapshotError::File)?;
    check_size(from, &meta, already)?;
    let unreadable = |source| SnapshotError::Unreadable {
        path: from.to_owned(),
        source,
    };
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to)
        .map_err(unreadable)?;
    let room = Bound::SQLITE_DB.max - already;
    let n = std::io::copy(&mut file.take(room + 1), &mut out).map_err(unreadable)?;
    if n > room {
        return Err(SnapshotError::File(FileError::TooLarge {
            path: from.to_owned(),
            bound: Bound::SQLITE_DB,
        }));
    }
    Ok(n)
}

pub(super) fn sql_err(db: &Path, e: rusqlite::Error) -> SnapshotError {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => return SnapshotError::NotSqlite(db.to_owned()),
        Some(rusqlite::ErrorCode::TooBig) => {
            return SnapshotError::BadInput(format!(
                "{}: a value larger than {}, the most shforge reads of {}: refused",
                db.display(),
                Bound::SQLITE_VALUE,
                Bound::SQLITE_VALUE.what
            ));
        }
        _ => {}
    }
    SnapshotError::BadInput(format!("{}: {e}", db.display()))
}

/// The columns read from each table, checked before any row is read.
const COLUMNS: [(&str, &[&str]); 3] = [
    (
        "session",
        &["id", "title", "directory", "parent_id", "time_created"],
    ),
    ("message", &["id", "session_id", "time_created", "data"]),
    ("part", &["id", "message_id", "data"]),
];

/// Every table of the schema, by name and kind (`table`, `view`; virtual
/// tables are `table` rows whose SQL says so). Reading `sqlite_schema`
/// evaluates nothing the file defines.
struct SchemaEntry {
    name: String,
    kind: String,
    virtual_table: bool,
}

fn schema_entries(conn: &Connection) -> rusqlite::Result<Vec<SchemaEntry>> {
    conn.prepare(
        "SELECT name, type, coalesce(sql, '') FROM sqlite_schema WHERE type IN ('table', 'view')",
    )?
    .query_map([], |r| {
        let sql: String = r.get(2)?;
        Ok(SchemaEntry {
            name: r.get(0)?,
            kind: r.get(1)?,
            virtual_table: sql
                .trim_start()
                .get(..14)
                .is_some_and(|h| h.eq_ignore_ascii_case("create virtual")),
        })
    })?
    .collect()
}

/// Refuse what would make reading the copy run code the file defines or
/// read something other than the harness's tables: the tables read must be
/// plain tables (not views, not virtual tables) with the columns read, none
/// of them generated.
fn check_schema(
    kind: Kind,
    db: &Path,
    copy: &PrivateCopy,
    conn: &Connection,
    tables: &[(&'static str, &[&str])],
) -> Result<(), SnapshotError> {
    let entries = schema_entries(conn).map_err(|e| sql_err(db, e))?;
    if entries.is_empty() {
        let why = if copy.wal.is_some() {
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
    for &(table, _) in tables {
        let Some(entry) = entries.iter().find(|e| e.name.eq_ignore_ascii_case(table)) else {
            return Err(SnapshotError::MissingTable {
                path: db.to_owned(),
                table,
                kind,
            });
        };
        if entry.kind != "table" || entry.virtual_table {
            let what = if entry.virtual_table {
                "a virtual table"
            } else {
                "a view"
            };
            return Err(SnapshotError::BadInput(format!(
                "{}: `{}` is {what}, not a table: refused (its rows would be computed by code the file defines)",
                db.display(),
                entry.name
            )));
        }
    }
    for &(table, columns) in tables {
        check_columns(kind, db, conn, table, columns)?;
    }
    Ok(())
}

/// `table` has every column of `columns`, none of them generated (a
/// generated column is an expression the file defines, run on every read).
fn check_columns(
    kind: Kind,
    db: &Path,
    conn: &Connection,
    table: &str,
    columns: &[&str],
) -> Result<(), SnapshotError> {
    let found: Vec<(String, i64)> = conn
        .prepare(&format!(
            "SELECT name, hidden FROM pragma_table_xinfo('{table}')"
        ))
        .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
        .map_err(|e| sql_err(db, e))?;
    for column in columns {
        match found.iter().find(|(n, _)| n.eq_ignore_ascii_case(column)) {
            None => {
                return Err(SnapshotError::BadInput(format!(
                    "{}: table `{table}` has no column `{column}`: not a {kind} session database, or a schema this version does not know",
                    db.display()
                )));
            }
            Some((name, hidden)) if *hidden != 0 => {
                let what = if matches!(hidden, 2 | 3) {
                    "a generated column"
                } else {
                    "a hidden column"
                };
                return Err(SnapshotError::BadInput(format!(
                    "{}: `{table}.{name}` is {what}: refused (its value is computed by code the file defines)",
                    db.display()
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A WAL that needs pages of the main file is only read when SQLite finds
/// the b-trees of the two whole (`PRAGMA quick_check`): a WAL of another
/// database leaves pointers into pages that are not what they point to.
/// quick_check walks every b-tree; so that it runs no expression the file
/// defines, CHECK constraints are ignored and a schema with generated
/// columns or virtual tables anywhere is refused (OpenCode's has none).
fn check_mixed(db: &Path, conn: &Connection) -> Result<(), SnapshotError> {
    // The mix can be broken before quick_check runs: SQLite finds the
    // schema itself malformed.
    let mismatch = |why: &str| {
        SnapshotError::BadInput(format!(
            "{}: its -wal does not fit the main file ({why}): a WAL of another database, or the two copied at different moments: refused",
            db.display()
        ))
    };
    let err = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => {
            mismatch("the database they make is malformed")
        }
        _ => sql_err(db, e),
    };
    let entries = schema_entries(conn).map_err(err)?;
    for entry in entries.iter().filter(|e| e.kind == "table") {
        let refuse = |what: &str| {
            SnapshotError::BadInput(format!(
                "{}: its -wal needs pages of the main file, and `{}` has {what}: the mix cannot be checked without running code the file defines: refused",
                db.display(),
                entry.name
            ))
        };
        if entry.virtual_table {
            return Err(refuse("a virtual table"));
        }
        let generated: i64 = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_xinfo(?1) WHERE hidden IN (2, 3)",
                [&entry.name],
                |r| r.get(0),
            )
            .map_err(err)?;
        if generated > 0 {
            return Err(refuse("generated columns"));
        }
    }
    conn.pragma_update(None, "ignore_check_constraints", true)
        .map_err(err)?;
    let verdict: String = conn
        .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
        .map_err(err)?;
    if verdict != "ok" {
        return Err(mismatch(&verdict));
    }
    Ok(())
}

/// [`check_mixed`] for the tables read only: `PRAGMA quick_check(TABLE)`
/// walks that table's b-tree and its indexes, nothing of the others.
fn check_mixed_tables(
    db: &Path,
    conn: &Connection,
    tables: &[(&'static str, &[&str])],
) -> Result<(), SnapshotError> {
    let mismatch = |why: &str| {
        SnapshotError::BadInput(format!(
            "{}: its -wal does not fit the main file ({why}): a WAL of another database, or the two copied at different moments: refused",
            db.display()
        ))
    };
    let err = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => {
            mismatch("the database they make is malformed")
        }
        _ => sql_err(db, e),
    };
    conn.pragma_update(None, "ignore_check_constraints", true)
        .map_err(err)?;
    for &(table, _) in tables {
        // The name is one of ours (a constant), never the file's.
        let verdict: String = conn
            .query_row(&format!("PRAGMA quick_check('{table}')"), [], |r| r.get(0))
            .map_err(err)?;
        if verdict != "ok" {
            return Err(mismatch(&format!("{table}: {verdict}")));
        }
    }
    Ok(())
}

fn read_tables(db: &Path, conn: &Connection) -> Result<Vec<SessionRecord>, SnapshotError> {
    let err = |e| sql_err(db, e);
    let mut sessions: Vec<SessionRecord> = conn
        .prepare("SELECT id, title, directory, parent_id FROM session ORDER BY time_created, id")
        .and_then(|mut s| {
            s.query_map([], |r| {
                Ok(SessionRecord {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    directory: r.get(2)?,
                    parent_id: r.get(3)?,
                    tokens: Tokens::default(),
                    messages: Vec::new(),
                    agent: AgentInfo::default(),
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
        let usage = (role == "assistant").then(|| message_tokens(&data));
        if let Some(t) = usage {
            sessions[i].tokens += t;
        }
        sessions[i].messages.push(Message {
            parts: parts.remove(&id).unwrap_or_default(),
            id,
            role,
            data,
            usage,
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
