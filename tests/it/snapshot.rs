//! `shforge::snapshot` and `shforge snapshot` on real session data made by
//! the real harness CLIs (tests/fixtures/snapshot/README.md says how).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use crate::support::copy_tree;
use serde_json::Value;
use shforge::snapshot::{
    self, Kind, PartKind, Snapshot, SnapshotError, Tokens, ToolCallSummary, ToolStatus,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/snapshot")
        .join(name)
}

/// Every file under `dir` with its bytes and mtime, to show nothing changed.
fn state(dir: &Path) -> Vec<(PathBuf, Vec<u8>, SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), fs::read(&p).unwrap(), meta.modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn shforge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shforge"))
        .arg("snapshot")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tools(snap: &Snapshot) -> Vec<(String, ToolStatus)> {
    snap.summary
        .tool_calls
        .iter()
        .map(|ToolCallSummary { tool, status, .. }| (tool.clone(), *status))
        .collect()
}

fn take(kind: Kind, path: &Path) -> Result<Snapshot, SnapshotError> {
    snapshot::snapshot(kind, path)
}

/// The source path of a fixture directory for its kind.
fn source(kind: Kind, name: &str) -> PathBuf {
    match kind {
        Kind::OpenCode => fixture(name).join("opencode.db"),
        Kind::Kilo => fixture(name).join("kilo.db"),
        _ => fixture(name),
    }
}

/// One finished run: the prompt, one tool call that completed, "done".
/// The fake model answered 120 input and 7 output tokens per request, two
/// requests.
#[test]
fn every_kind_on_its_real_fixture() {
    let cases = [
        (Kind::OpenCode, "opencode", 3, "write"),
        (Kind::Kilo, "kilo", 3, "write"),
        (Kind::ClaudeCode, "claude-code", 4, "Write"),
        (Kind::Pi, "pi", 4, "write"),
        (Kind::Codex, "codex", 6, "exec_command"),
    ];
    for (kind, name, messages, tool) in cases {
        let before = state(&fixture(name));
        let snap = take(kind, &source(kind, name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(state(&fixture(name)), before, "{name}: fixture changed");
        assert_eq!(snap.harness, kind.name());
        assert_eq!(snap.summary.sessions, 1, "{name}");
        assert_eq!(snap.sessions.len(), 1, "{name}");
        assert_eq!(snap.summary.messages, messages, "{name}");
        assert_eq!(snap.sessions[0].messages.len(), messages, "{name}");
        assert_eq!(
            tools(&snap),
            [(tool.to_owned(), ToolStatus::Completed)],
            "{name}"
        );
        assert_eq!(snap.summary.final_text.as_deref(), Some("done"), "{name}");
        let t = snap.summary.tokens;
        assert_eq!(
            (t.input, t.output, t.total),
            (240, 14, 254),
            "{name}: {t:?}"
        );
        let session = &snap.sessions[0];
        assert!(
            session
                .directory
                .as_deref()
                .is_some_and(|d| d.starts_with("/tmp/snap-run/") && d.ends_with("/work")),
            "{name}: {:?}",
            session.directory
        );
        assert!(!session.id.is_empty());
        // The prompt is the first user text, with its directives.
        let prompt = session
            .messages
            .iter()
            .filter(|m| m.role == "user")
            .flat_map(|m| &m.parts)
            .find_map(|p| match &p.kind {
                PartKind::Text { text } if text.contains("shforge-token=") => Some(text),
                _ => None,
            });
        assert!(prompt.is_some(), "{name}: no prompt text");
        // Raw columns and lines are JSON objects, not strings.
        for m in &session.messages {
            assert!(m.data.is_object(), "{name}: message {} data", m.id);
        }
    }
}

/// Qwen Code 0.24.4's real chat (tests/fixtures/snapshot/README.md): the
/// prompt (with the `\n\n` Qwen appends to stdin), `write_file`
/// completed, "done"; tokens are its `usageMetadata` (the fake server
/// counts Qwen's ~19k-token system prompt).
#[test]
fn qwen_code_on_its_real_fixture() {
    let name = "qwen-code";
    let before = state(&fixture(name));
    let snap = take(Kind::QwenCode, &fixture(name)).unwrap();
    assert_eq!(state(&fixture(name)), before, "fixture changed");
    assert_eq!(snap.harness, "qwen-code");
    assert_eq!(snap.summary.sessions, 1);
    assert_eq!(snap.summary.messages, 4);
    let roles: Vec<&str> = snap.sessions[0]
        .messages
        .iter()
        .map(|m| m.role.as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(
        tools(&snap),
        [("write_file".to_owned(), ToolStatus::Completed)]
    );
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    let t = snap.summary.tokens;
    assert_eq!((t.input, t.output, t.total), (38168, 23, 38191), "{t:?}");
    let session = &snap.sessions[0];
    assert_eq!(session.directory.as_deref(), Some("/tmp/snap-run/qw1/work"));
    assert_eq!(session.id, "1527b0c2-138a-4137-9df4-963e17f108d0");
    let prompt = session.messages[0]
        .parts
        .iter()
        .find_map(|p| match &p.kind {
            PartKind::Text { text } => Some(text.as_str()),
            _ => None,
        });
    assert!(prompt.is_some_and(|p| p.contains("shforge-token=tok-qw1") && p.ends_with("\n\n\n")));
}

/// Claude Code's data, or its lines in Qwen's layout, is not Qwen's: exit
/// 2 naming what was expected.
#[test]
fn foreign_data_is_not_qwen_codes() {
    let claude_line = r#"{"uuid":"u1","sessionId":"s1","type":"user","cwd":"/w","message":{"role":"user","content":"hi"}}"#;
    let moved = tempfile::tempdir().unwrap();
    let chats = moved.path().join("projects/-w/chats");
    fs::create_dir_all(&chats).unwrap();
    fs::write(chats.join("s1.jsonl"), format!("{claude_line}\n")).unwrap();
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            fixture("claude-code"),
            "expected Qwen Code's projects/*/chats/*.jsonl transcripts, found",
        ),
        (
            moved.path().to_owned(),
            "s1.jsonl:1: not a Qwen Code transcript: a `message` without `parts`",
        ),
        (fixture("pi"), "expected Qwen Code's data directory"),
        (fixture("opencode"), "it has no projects/"),
    ];
    for (dir, wanted) in cases {
        let o = shforge(&["qwen-code", "--dir", dir.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
        assert!(
            stderr(&o).contains(wanted),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
    }
}

#[test]
fn opencode_title_and_parts_come_from_the_tables() {
    let snap = snapshot::snapshot_db(Kind::OpenCode, &source(Kind::OpenCode, "opencode")).unwrap();
    let s = &snap.sessions[0];
    assert_eq!(s.title.as_deref(), Some("Snapshot fixture"));
    assert!(s.id.starts_with("ses_"));
    let parts: Vec<_> = s.messages.iter().flat_map(|m| &m.parts).collect();
    assert_eq!(parts.len(), 7);
    assert!(
        parts
            .iter()
            .all(|p| p.id.as_deref().is_some_and(|i| i.starts_with("prt_")))
    );
    assert!(parts.iter().all(|p| p.data.is_object()));
    let call = parts
        .iter()
        .find_map(|p| match &p.kind {
            PartKind::ToolCall { input, output, .. } => Some((input, output)),
            _ => None,
        })
        .unwrap();
    assert_eq!(call.0["content"], "tok-oc-1");
    assert_eq!(call.1.as_ref().unwrap(), "Wrote file successfully.");
}

#[test]
fn the_document_has_the_agreed_shape_and_round_trips() {
    let snap = snapshot::snapshot_dir(Kind::Pi, &source(Kind::Pi, "pi")).unwrap();
    let v: Value = serde_json::from_slice(&snap.to_json()).unwrap();
    for key in ["harness", "sessions", "summary"] {
        assert!(v.get(key).is_some(), "{key}");
    }
    for key in ["id", "title", "directory", "messages"] {
        assert!(v["sessions"][0].get(key).is_some(), "{key}");
    }
    for key in ["id", "role", "parts", "data"] {
        assert!(v["sessions"][0]["messages"][0].get(key).is_some(), "{key}");
    }
    for key in ["sessions", "messages", "tool_calls", "final_text", "tokens"] {
        assert!(v["summary"].get(key).is_some(), "{key}");
    }
    assert_eq!(
        v["summary"]["tool_calls"],
        serde_json::json!([{"tool": "write", "status": "completed"}])
    );
    let back: Snapshot = serde_json::from_value(v).unwrap();
    assert_eq!(back, snap);
}

#[test]
fn rows_all_in_the_wal_are_read_and_a_db_without_its_wal_has_no_data() {
    let db = source(Kind::OpenCode, "opencode");
    // The fixture as the harness left it: a bare header, every row in -wal.
    assert_eq!(fs::metadata(&db).unwrap().len(), 4096);
    let alone = tempfile::tempdir().unwrap();
    let copy = alone.path().join("opencode.db");
    fs::copy(&db, &copy).unwrap();
    let tables: i64 = rusqlite::Connection::open(alone.path().join("probe.db"))
        .and_then(|c| {
            c.execute_batch(&format!(
                "ATTACH 'file:{}?immutable=1' AS f",
                copy.display()
            ))?;
            c.query_row("SELECT count(*) FROM f.sqlite_master", [], |r| r.get(0))
        })
        .unwrap();
    assert_eq!(tables, 0, "the main file alone holds no table");

    let err = snapshot::snapshot_db(Kind::OpenCode, &copy).unwrap_err();
    assert_eq!(err.exit_code(), 1);
    assert!(matches!(err, SnapshotError::NoData(_)));
    assert!(
        err.to_string().contains("-wal was probably not copied"),
        "{err}"
    );

    let o = shforge(&["opencode", "--db", copy.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("-wal was probably not copied"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1);
}

#[test]
fn a_live_db_with_a_writer_is_read_without_being_touched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    fs::copy(fixture("opencode/opencode.db"), &db).unwrap();
    fs::copy(
        fixture("opencode/opencode.db-wal"),
        dir.path().join("opencode.db-wal"),
    )
    .unwrap();

    let writer = rusqlite::Connection::open(&db).unwrap();
    let mode: String = writer
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let session: String = writer
        .query_row("SELECT id FROM session", [], |r| r.get(0))
        .unwrap();
    // A committed message…
    writer
        .execute_batch(&format!(
            "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES
               ('msg_zz_live', '{session}', 9999999999999, 9999999999999,
                '{{\"role\":\"assistant\",\"tokens\":{{\"input\":1,\"output\":2,\"total\":3}}}}');
             INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES
               ('prt_zz_live', 'msg_zz_live', '{session}', 9999999999999, 9999999999999,
                '{{\"type\":\"text\",\"text\":\"committed\"}}');"
        ))
        .unwrap();
    // …and an uncommitted one, big enough with a tiny cache that SQLite
    // spills it into -wal as frames without a commit.
    let wal = dir.path().join("opencode.db-wal");
    let committed_wal = fs::metadata(&wal).unwrap().len();
    writer
        .execute_batch(&format!(
            "PRAGMA cache_size = 2; BEGIN;
             INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES
               ('msg_zz_open', '{session}', 99999999999999, 99999999999999,
                json_object('role', 'assistant', 'pad', printf('%.*c', 2000000, 'x')));"
        ))
        .unwrap();
    assert!(
        fs::metadata(&wal).unwrap().len() > committed_wal + 1_000_000,
        "the open transaction spilled into -wal"
    );

    let before = state(dir.path());
    let snap = snapshot::snapshot_db(Kind::OpenCode, &db).unwrap();
    assert_eq!(state(dir.path()), before, "the live files changed");
    let ids: Vec<&str> = snap.sessions[0]
        .messages
        .iter()
        .map(|m| m.id.as_str())
        .collect();
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert_eq!(ids[3], "msg_zz_live");
    assert!(!ids.contains(&"msg_zz_open"));
    assert_eq!(snap.summary.final_text.as_deref(), Some("committed"));
    assert_eq!(snap.summary.tokens.total, 254 + 3);

    // A copy taken while the writer is open reads the same.
    let copy = tempfile::tempdir().unwrap();
    for name in ["opencode.db", "opencode.db-wal", "opencode.db-shm"] {
        fs::copy(dir.path().join(name), copy.path().join(name)).unwrap();
    }
    let from_copy =
        snapshot::snapshot_db(Kind::OpenCode, &copy.path().join("opencode.db")).unwrap();
    assert_eq!(from_copy, snap);

    writer.execute_batch("ROLLBACK").unwrap();
}

/// A rollback-journal DB copied mid-transaction (the writer's changes
/// already spilled into the file, the old pages in `-journal`) reads as
/// SQLite reads it after a crash: the transaction rolled back.
#[test]
fn a_hot_rollback_journal_is_rolled_back_in_the_copy() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer
        .execute_batch(
            r#"CREATE TABLE session (id TEXT, title TEXT, directory TEXT, parent_id TEXT, time_created INT);
               CREATE TABLE message (id TEXT, session_id TEXT, time_created INT, data TEXT);
               CREATE TABLE part (id TEXT, message_id TEXT, data TEXT);
               INSERT INTO session VALUES ('s1', 't', '/d', NULL, 1);
               INSERT INTO message VALUES ('m1', 's1', 1, '{"role":"assistant"}');
               INSERT INTO part VALUES ('p1', 'm1', '{"type":"text","text":"done"}');
               PRAGMA cache_size = 2; BEGIN;
               UPDATE part SET data = '{"type":"text","text":"torn"}';
               WITH RECURSIVE n(v) AS (SELECT 2 UNION ALL SELECT v + 1 FROM n WHERE v < 2000)
               INSERT INTO message SELECT 'm' || v, 's1', 2, printf('{"role":"user","pad":"%.*c"}', 3000, 'x')
                 FROM n;"#,
        )
        .unwrap();
    let journal = dir.path().join("x.db-journal");
    assert!(fs::metadata(&journal).unwrap().len() > 0, "a hot journal");
    let copy = tempfile::tempdir().unwrap();
    fs::copy(&db, copy.path().join("x.db")).unwrap();
    fs::copy(&journal, copy.path().join("x.db-journal")).unwrap();
    let before = state(copy.path());
    let snap = snapshot::snapshot_db(Kind::OpenCode, &copy.path().join("x.db")).unwrap();
    assert_eq!(state(copy.path()), before, "the copy given was changed");
    assert_eq!(snap.summary.messages, 1);
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    writer.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn runs_stopped_mid_tool_report_the_tool_running() {
    let cases = [
        (Kind::OpenCode, "opencode-midtool", "bash"),
        (Kind::ClaudeCode, "claude-code-midtool", "Bash"),
        (Kind::Pi, "pi-midtool", "bash"),
        (Kind::Codex, "codex-midtool", "exec_command"),
    ];
    for (kind, name, tool) in cases {
        let snap = take(kind, &source(kind, name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            tools(&snap),
            [(tool.to_owned(), ToolStatus::Running)],
            "{name}"
        );
        assert_eq!(snap.summary.final_text, None, "{name}");
        let o = shforge(&[
            kind.name(),
            if kind == Kind::OpenCode {
                "--db"
            } else {
                "--dir"
            },
            source(kind, name).to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["summary"]["tool_calls"][0]["status"], "running", "{name}");
    }
}

#[test]
fn a_tool_result_marked_as_error_is_an_error() {
    // Claude Code refused the fake model's `sleep 60 && …` command.
    let snap = snapshot::snapshot_dir(Kind::ClaudeCode, &fixture("claude-code-toolerror")).unwrap();
    assert_eq!(tools(&snap), [("Bash".to_owned(), ToolStatus::Error)]);
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
}

#[test]
fn the_projects_or_sessions_directory_itself_is_accepted() {
    for (kind, name, sub) in [
        (Kind::ClaudeCode, "claude-code", "projects"),
        (Kind::Pi, "pi", "sessions"),
        (Kind::Codex, "codex", "sessions"),
    ] {
        let whole = snapshot::snapshot_dir(kind, &fixture(name)).unwrap();
        let inner = snapshot::snapshot_dir(kind, &fixture(name).join(sub)).unwrap();
        assert_eq!(whole, inner, "{name}");
        let dot = Command::new(env!("CARGO_BIN_EXE_shforge"))
            .args(["snapshot", kind.name(), "--dir", "."])
            .current_dir(fixture(name).join(sub))
            .output()
            .unwrap();
        assert_eq!(dot.status.code(), Some(0), "{name}: {}", stderr(&dot));
        assert_eq!(dot.stdout, inner.to_json(), "{name}");
    }
}

#[test]
fn not_sqlite_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.db");
    fs::write(&file, "this is not a database, just text long enough").unwrap();
    let err = snapshot::snapshot_db(Kind::Kilo, &file).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(matches!(err, SnapshotError::NotSqlite(_)), "{err}");
    let o = shforge(&["kilo", "--db", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("is not a SQLite database"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_schema_without_a_table_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.db");
    rusqlite::Connection::open(&file)
        .unwrap()
        .execute_batch(
            "CREATE TABLE session (id TEXT); CREATE TABLE message (id TEXT); INSERT INTO session VALUES ('s');",
        )
        .unwrap();
    let err = snapshot::snapshot_db(Kind::OpenCode, &file).unwrap_err();
    assert!(
        matches!(err, SnapshotError::MissingTable { table: "part", .. }),
        "{err}"
    );
    let o = shforge(&["opencode", "--db", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("no table `part`"), "{}", stderr(&o));
}

#[test]
fn empty_tables_and_empty_dirs_are_exit_1_saying_what_was_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.db");
    rusqlite::Connection::open(&file)
        .unwrap()
        .execute_batch(
            "CREATE TABLE session (id TEXT, title TEXT, directory TEXT, parent_id TEXT, time_created INT);
             CREATE TABLE message (id TEXT, session_id TEXT, time_created INT, data TEXT);
             CREATE TABLE part (id TEXT, message_id TEXT, data TEXT);",
        )
        .unwrap();
    let o = shforge(&["opencode", "--db", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("table session"), "{}", stderr(&o));

    // The harness's directory there and empty: no session data (1). No
    // such directory at all: not the harness's data (2, naming it).
    for (kind, sub, looked) in [
        ("claude-code", "projects", "projects/*/*.jsonl"),
        ("pi", "sessions", "sessions/*/*.jsonl"),
        ("codex", "sessions", "sessions/YYYY/MM/DD/rollout-*.jsonl"),
    ] {
        let empty = tempfile::tempdir().unwrap();
        let o = shforge(&[kind, "--dir", empty.path().to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{kind}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
        assert!(
            stderr(&o).contains(&format!("it has no {sub}/")),
            "{kind}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(looked), "{kind}: {}", stderr(&o));
        fs::create_dir(empty.path().join(sub)).unwrap();
        let o = shforge(&[kind, "--dir", empty.path().to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{kind}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
        assert!(
            stderr(&o).contains("no session data"),
            "{kind}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(looked), "{kind}: {}", stderr(&o));
        let kind: Kind = kind.parse().unwrap();
        assert_eq!(
            snapshot::snapshot_dir(kind, empty.path())
                .unwrap_err()
                .exit_code(),
            1
        );
    }
}

#[test]
fn unreadable_input_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let file = dir.path().join("file");
    fs::write(&file, "x").unwrap();
    for args in [
        ["opencode", "--db", missing.to_str().unwrap()],
        ["opencode", "--db", dir.path().to_str().unwrap()],
        ["kilo", "--db", fifo.to_str().unwrap()],
        ["pi", "--dir", missing.to_str().unwrap()],
        ["codex", "--dir", file.to_str().unwrap()],
    ] {
        let o = shforge(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
    }
    // A line that is not JSON in the middle of a transcript names its place.
    let pi = dir.path().join("pi");
    copy_tree(&fixture("pi"), &pi);
    let transcript = fs::read_dir(pi.join("sessions/--tmp-snap-run-pi1-work--"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = fs::read_to_string(&transcript).unwrap();
    fs::write(&transcript, text.replacen('\n', "\n{oops\n", 1)).unwrap();
    let o = shforge(&["pi", "--dir", pi.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(".jsonl:2: not JSON"), "{}", stderr(&o));
}

#[test]
fn a_last_line_cut_off_mid_write_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("pi"), dir.path());
    let sub = dir.path().join("sessions/--tmp-snap-run-pi1-work--");
    let transcript = fs::read_dir(&sub).unwrap().next().unwrap().unwrap().path();
    let mut text = fs::read_to_string(&transcript).unwrap();
    text.push_str("{\"type\":\"message\",\"id\":\"torn\",\"mess");
    fs::write(&transcript, text).unwrap();
    let snap = snapshot::snapshot_dir(Kind::Pi, dir.path()).unwrap();
    assert_eq!(snap.summary.messages, 4);
}

#[test]
fn links_inside_a_data_dir_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sessions/--x--");
    fs::create_dir_all(&sub).unwrap();
    let real = fs::read_dir(fixture("pi/sessions/--tmp-snap-run-pi1-work--"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // A transcript that is a link (here, out of the directory): refused.
    std::os::unix::fs::symlink(&real, sub.join("a.jsonl")).unwrap();
    let err = snapshot::snapshot_dir(Kind::Pi, dir.path()).unwrap_err();
    assert_eq!(err.exit_code(), 2, "{err}");
    assert!(
        err.to_string()
            .contains("a.jsonl: a symlink, where the layout has a transcript"),
        "{err}"
    );
    // A directory of the layout that is a link: refused.
    fs::remove_file(sub.join("a.jsonl")).unwrap();
    std::os::unix::fs::symlink(fixture("pi/sessions"), dir.path().join("sessions/linked")).unwrap();
    let err = snapshot::snapshot_dir(Kind::Pi, dir.path()).unwrap_err();
    assert_eq!(err.exit_code(), 2, "{err}");
    assert!(
        err.to_string()
            .contains("linked: a symlink, where the layout has a directory"),
        "{err}"
    );
    // Nor a `sessions` that is a link.
    let linked = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(fixture("pi/sessions"), linked.path().join("sessions")).unwrap();
    let err = snapshot::snapshot_dir(Kind::Pi, linked.path()).unwrap_err();
    assert_eq!(err.exit_code(), 2, "{err}");
    assert!(err.to_string().contains("sessions: a symlink"), "{err}");
    // Nor the directory named by the caller (issue 37: a copy out of a
    // sandbox may plant one there too; tests/it/hostile_copyback.rs).
    let named = linked.path().join("named");
    std::os::unix::fs::symlink(fixture("pi"), &named).unwrap();
    let err = snapshot::snapshot_dir(Kind::Pi, &named).unwrap_err();
    assert_eq!(err.exit_code(), 2, "{err}");
    assert!(err.to_string().contains("named: a symlink"), "{err}");

    // Nor is a -wal that is a link.
    let db = tempfile::tempdir().unwrap();
    fs::copy(fixture("opencode/opencode.db"), db.path().join("o.db")).unwrap();
    std::os::unix::fs::symlink(
        fixture("opencode/opencode.db-wal"),
        db.path().join("o.db-wal"),
    )
    .unwrap();
    let err = snapshot::snapshot_db(Kind::OpenCode, &db.path().join("o.db")).unwrap_err();
    assert_eq!(err.exit_code(), 2, "{err}");
    assert!(
        err.to_string().contains("o.db-wal is not a regular file"),
        "{err}"
    );
}

#[test]
fn the_wrong_flag_for_a_kind_is_exit_2_naming_both() {
    let o = shforge(&["opencode", "--dir", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--db FILE") && stderr(&o).contains("--dir DIR"),
        "{}",
        stderr(&o)
    );
    let o = shforge(&["pi", "--db", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--db FILE") && stderr(&o).contains("--dir DIR"),
        "{}",
        stderr(&o)
    );
    let o = shforge(&["hermes", "--dir", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(2));
    let o = shforge(&["pi", "--dir", "/a", "--db", "/b"]);
    assert_eq!(o.status.code(), Some(2));
    let o = shforge(&["pi"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn out_is_written_whole_and_an_error_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("snap.json");
    let db = source(Kind::Kilo, "kilo");
    let o = shforge(&[
        "kilo",
        "--db",
        db.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let written = fs::read(&out).unwrap();
    let o = shforge(&["kilo", "--db", db.to_str().unwrap()]);
    assert_eq!(o.stdout, written, "--out and stdout hold the same document");
    let v: Value = serde_json::from_slice(&written).unwrap();
    assert_eq!(v["harness"], "kilo");

    fs::write(&out, "old").unwrap();
    let o = shforge(&[
        "kilo",
        "--db",
        dir.path().join("missing.db").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert_eq!(fs::read_to_string(&out).unwrap(), "old");
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[test]
fn kind_names_round_trip() {
    for kind in Kind::ALL {
        assert_eq!(kind.name().parse::<Kind>().unwrap(), kind);
        assert_eq!(kind.to_string(), kind.name());
    }
    assert!("OpenCode".parse::<Kind>().is_err());
}

#[test]
fn hostile_counts_saturate() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sessions/--x--");
    fs::create_dir_all(&sub).unwrap();
    let huge = u64::MAX;
    let line = format!(
        r#"{{"type":"message","id":"a","message":{{"role":"assistant","content":[{{"type":"text","text":"hi"}}],"usage":{{"input":{huge},"output":{huge},"totalTokens":{huge}}}}}}}"#
    );
    let header = r#"{"type":"session","id":"s","cwd":"/w","timestamp":"2026-12-01T00:00:00Z"}"#;
    fs::write(sub.join("s.jsonl"), format!("{header}\n{line}\n{line}\n")).unwrap();
    let snap = snapshot::snapshot_dir(Kind::Pi, dir.path()).unwrap();
    assert_eq!(snap.summary.tokens.input, u64::MAX);
    assert_eq!(snap.summary.tokens.total, u64::MAX);
    assert_eq!(snap.summary.final_text.as_deref(), Some("hi"));
}

/// Run `shforge snapshot ARGS` with at most 1 GiB of address space and
/// `TMPDIR=tmp`; a run still going after 20 s is killed and fails the test
/// (a guard against a hostile input that hangs it, not a speed check).
fn shforge_guarded(args: &[&str], tmp: &Path) -> (Option<i32>, Vec<u8>, String) {
    use std::os::unix::process::CommandExt as _;
    use std::process::Stdio;
    let out = tempfile::tempfile().unwrap();
    let err = tempfile::tempfile().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_shforge"));
    cmd.arg("snapshot")
        .args(args)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap());
    // SAFETY: setrlimit only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let gib = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &gib) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("shforge snapshot {args:?} still ran after 20 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let read = |mut f: fs::File| {
        use std::io::{Read as _, Seek as _};
        let mut v = Vec::new();
        f.rewind().unwrap();
        f.read_to_end(&mut v).unwrap();
        v
    };
    (
        status.code(),
        read(out),
        String::from_utf8_lossy(&read(err)).into_owned(),
    )
}

/// OpenCode's three tables with the columns the snapshot reads, one
/// session with one message and one part, then `extra` (SQL).
fn opencode_like(path: &Path, extra: &str) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(&format!(
        r#"CREATE TABLE session (id TEXT, title TEXT, directory TEXT, parent_id TEXT, time_created INT);
           CREATE TABLE message (id TEXT, session_id TEXT, time_created INT, data TEXT);
           CREATE TABLE part (id TEXT, message_id TEXT, data TEXT);
           INSERT INTO session VALUES ('s1', 't', '/d', NULL, 1);
           INSERT INTO message VALUES ('m1', 's1', 1, '{{"role":"assistant"}}');
           INSERT INTO part VALUES ('p1', 'm1', '{{"type":"text","text":"done"}}');
           {extra}"#
    ))
    .unwrap();
}

/// One line on stderr containing `wanted`, exit 2, nothing on stdout, and
/// no private copy left in `tmp`.
fn assert_refused(o: &(Option<i32>, Vec<u8>, String), wanted: &str, tmp: &Path, what: &str) {
    assert_eq!(o.0, Some(2), "{what}: {}", o.2);
    assert!(o.1.is_empty(), "{what}");
    assert_eq!(o.2.lines().count(), 1, "{what}: {}", o.2);
    assert!(o.2.contains(wanted), "{what}: {}", o.2);
    assert_eq!(fs::read_dir(tmp).unwrap().count(), 0, "{what}: copy left");
}

#[test]
fn a_schema_that_computes_is_refused_before_it_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "a generated data column",
            r#"CREATE TABLE part (id TEXT, message_id TEXT, data BLOB AS (zeroblob(1000000000)));
               CREATE TABLE message (id TEXT, session_id TEXT, time_created INT, data TEXT);
               CREATE TABLE session (id TEXT, title TEXT, directory TEXT, parent_id TEXT, time_created INT);
               INSERT INTO session VALUES ('s1', 't', '/d', NULL, 1);
               INSERT INTO message VALUES ('m1', 's1', 1, '{"role":"assistant"}');
               INSERT INTO part (id, message_id) VALUES ('p1', 'm1');"#,
            "`part.data` is a generated column",
        ),
        (
            "a stored generated column",
            r#"CREATE TABLE part (id TEXT, message_id TEXT, data TEXT);
               CREATE TABLE message (id TEXT, session_id TEXT,
                 time_created INT AS (length(printf('%.*c', 1000000, 'x'))) STORED, data TEXT);
               CREATE TABLE session (id TEXT, title TEXT, directory TEXT, parent_id TEXT, time_created INT);"#,
            "`message.time_created` is a generated column",
        ),
        (
            "a recursive view",
            r#"CREATE TABLE part (id TEXT, message_id TEXT, data TEXT);
               CREATE TABLE session (id TEXT, title TEXT, directory TEXT, parent_id TEXT, time_created INT);
               INSERT INTO session VALUES ('s1', 't', '/d', NULL, 1);
               CREATE VIEW message AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
                 SELECT n AS id, 's1' AS session_id, n AS time_created,
                        printf('%.*c', 100000000, 'x') AS data FROM r;"#,
            "`message` is a view, not a table",
        ),
        (
            "a view of randomblob",
            r#"CREATE TABLE part (id TEXT, message_id TEXT, data TEXT);
               CREATE TABLE message (id TEXT, session_id TEXT, time_created INT, data TEXT);
               CREATE VIEW session AS SELECT randomblob(1000000000) AS id, 1 AS title, 1 AS directory,
                 1 AS parent_id, 1 AS time_created;"#,
            "`session` is a view, not a table",
        ),
    ];
    for (what, sql, wanted) in cases {
        let db = dir.path().join(format!("{}.db", what.replace(' ', "-")));
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        assert!(fs::metadata(&db).unwrap().len() <= 16 << 10, "{what}");
        let o = shforge_guarded(&["opencode", "--db", db.to_str().unwrap()], tmp.path());
        assert_refused(&o, wanted, tmp.path(), what);
    }
}

/// Code the file defines outside what is read never runs: a generated
/// column, a trigger and a recursive view beside the columns read.
#[test]
fn code_beside_the_columns_read_never_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.db");
    opencode_like(
        &db,
        "ALTER TABLE part ADD COLUMN boom BLOB AS (zeroblob(1000000000));
         CREATE TRIGGER t AFTER INSERT ON part BEGIN SELECT zeroblob(1000000000); END;
         CREATE VIEW v AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r;",
    );
    assert!(fs::metadata(&db).unwrap().len() <= 16 << 10);
    let (code, out, err) = shforge_guarded(&["opencode", "--db", db.to_str().unwrap()], tmp.path());
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["summary"]["final_text"], "done");
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0, "copy left");
}

#[test]
fn a_huge_or_sparse_db_or_wal_is_refused_before_it_is_copied() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let header = b"SQLite format 3\0";
    let sparse = dir.path().join("sparse.db");
    fs::write(&sparse, header).unwrap();
    fs::File::options()
        .write(true)
        .open(&sparse)
        .unwrap()
        .set_len(100 << 20)
        .unwrap();
    let o = shforge_guarded(&["opencode", "--db", sparse.to_str().unwrap()], tmp.path());
    assert_refused(&o, "sparse.db: a sparse file", tmp.path(), "sparse");

    let huge = dir.path().join("huge.db");
    fs::write(&huge, header).unwrap();
    fs::File::options()
        .write(true)
        .open(&huge)
        .unwrap()
        .set_len((1 << 30) + 1)
        .unwrap();
    let o = shforge_guarded(&["kilo", "--db", huge.to_str().unwrap()], tmp.path());
    assert_refused(&o, "huge.db: larger than 1024 MiB", tmp.path(), "huge");

    // The same for a -wal: a sparse one, and a FIFO (never waited on).
    let db = dir.path().join("w.db");
    fs::copy(fixture("opencode/opencode.db"), &db).unwrap();
    let wal = dir.path().join("w.db-wal");
    fs::write(&wal, b"").unwrap();
    fs::File::options()
        .write(true)
        .open(&wal)
        .unwrap()
        .set_len(100 << 20)
        .unwrap();
    let o = shforge_guarded(&["opencode", "--db", db.to_str().unwrap()], tmp.path());
    assert_refused(&o, "w.db-wal: a sparse file", tmp.path(), "sparse wal");
    fs::remove_file(&wal).unwrap();
    assert!(Command::new("mkfifo").arg(&wal).status().unwrap().success());
    let o = shforge_guarded(&["opencode", "--db", db.to_str().unwrap()], tmp.path());
    assert_refused(&o, "w.db-wal is not a regular file", tmp.path(), "fifo wal");
}

/// `from`'s DB and -wal copied into `to` as `name`.
fn copy_db(from: &Path, to: &Path) {
    fs::copy(from, to).unwrap();
    let wal = |p: &Path| PathBuf::from(format!("{}-wal", p.display()));
    fs::copy(wal(from), wal(to)).unwrap();
}

/// A fixture DB checkpointed into its main file, then one more message
/// written by a connection that stays open: the main file holds the
/// tables and the -wal only what changed since. Returns the connection.
fn checkpointed_with_new_message(db: &Path, id: &str) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    let session: String = c
        .query_row("SELECT id FROM session", [], |r| r.get(0))
        .unwrap();
    c.execute_batch(&format!(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES
           ('{id}', '{session}', 9999999999999, 9999999999999, '{{\"role\":\"user\"}}');"
    ))
    .unwrap();
    c
}

#[test]
fn a_wal_that_needs_pages_of_the_main_file_is_read_when_they_fit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    copy_db(&fixture("opencode/opencode.db"), &db);
    let writer = checkpointed_with_new_message(&db, "msg_zz_after_checkpoint");
    let copy = tempfile::tempdir().unwrap();
    let taken = copy.path().join("opencode.db");
    copy_db(&db, &taken);
    assert!(
        fs::metadata(&taken).unwrap().len() > 100_000,
        "tables in the main file"
    );
    let snap = snapshot::snapshot_db(Kind::OpenCode, &taken).unwrap();
    let ids: Vec<&str> = snap.sessions[0]
        .messages
        .iter()
        .map(|m| m.id.as_str())
        .collect();
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert_eq!(ids[3], "msg_zz_after_checkpoint");
    drop(writer);
}

#[test]
fn a_wal_of_another_database_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    // A real OpenCode DB (65 pages) and a real Kilo DB (73 pages), each
    // checkpointed and written to again: one's -wal beside the other's
    // main file, both ways.
    let dir = tempfile::tempdir().unwrap();
    let mut wals = Vec::new();
    for (name, id) in [("opencode", "msg_oc"), ("kilo", "msg_kilo")] {
        let db = dir.path().join(format!("{name}.db"));
        copy_db(&fixture(&format!("{name}/{name}.db")), &db);
        let writer = checkpointed_with_new_message(&db, id);
        let wal = dir.path().join(format!("{name}.wal"));
        fs::copy(dir.path().join(format!("{name}.db-wal")), &wal).unwrap();
        drop(writer);
        wals.push((db, wal));
    }
    for (main_of, wal_of, wanted) in [
        // Kilo's WAL needs pages 66..73 that OpenCode's main file lacks.
        (
            0,
            1,
            "opencode.db-wal: its database has 73 pages and page 66 is neither in it nor in the 65-page database beside it: a WAL of another database",
        ),
        // OpenCode's fits in Kilo's 73 pages, and its b-trees do not.
        (1, 0, "kilo.db: its -wal does not fit the main file"),
    ] {
        let mixed = tempfile::tempdir().unwrap();
        let name = wals[main_of]
            .0
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let main = mixed.path().join(&name);
        fs::copy(&wals[main_of].0, &main).unwrap();
        fs::copy(&wals[wal_of].1, mixed.path().join(format!("{name}-wal"))).unwrap();
        let before = state(mixed.path());
        let o = shforge_guarded(&["opencode", "--db", main.to_str().unwrap()], tmp.path());
        assert_refused(&o, wanted, tmp.path(), &name);
        assert_eq!(state(mixed.path()), before);
    }

    // A WAL with another page size.
    let small = dir.path().join("small.db");
    let c = rusqlite::Connection::open(&small).unwrap();
    c.execute_batch(
        "PRAGMA page_size = 1024; PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);",
    )
    .unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let main = fresh.path().join("opencode.db");
    fs::copy(fixture("opencode/opencode.db"), &main).unwrap();
    fs::copy(
        dir.path().join("small.db-wal"),
        fresh.path().join("opencode.db-wal"),
    )
    .unwrap();
    drop(c);
    let o = shforge_guarded(&["opencode", "--db", main.to_str().unwrap()], tmp.path());
    assert_refused(
        &o,
        "its page size 1024 is not the page size 4096",
        tmp.path(),
        "page size",
    );

    // A WAL whose header was rewritten (new salts, a checksum that holds)
    // without its frames: what a copy taken across a WAL restart can hold.
    let wal = fresh.path().join("opencode.db-wal");
    let mut bytes = fs::read(fixture("opencode/opencode.db-wal")).unwrap();
    bytes[16] ^= 1;
    let sum = wal_checksum(&bytes[..24]);
    bytes[24..28].copy_from_slice(&sum[0].to_be_bytes());
    bytes[28..32].copy_from_slice(&sum[1].to_be_bytes());
    fs::write(&wal, &bytes).unwrap();
    let o = shforge_guarded(&["opencode", "--db", main.to_str().unwrap()], tmp.path());
    assert_refused(
        &o,
        "first frame's salts are not its header's",
        tmp.path(),
        "salts",
    );

    // Not a WAL at all, and a header cut short.
    fs::write(&wal, vec![7u8; 5000]).unwrap();
    let o = shforge_guarded(&["opencode", "--db", main.to_str().unwrap()], tmp.path());
    assert_refused(&o, "not a SQLite WAL", tmp.path(), "magic");
    fs::write(&wal, &bytes[..20]).unwrap();
    let o = shforge_guarded(&["opencode", "--db", main.to_str().unwrap()], tmp.path());
    assert_refused(&o, "shorter than a WAL header", tmp.path(), "short");
}

/// A fresh run leaves a bare 4 KiB main file, the same bytes for every
/// OpenCode and Kilo DB, and a -wal that rewrites every page: such a -wal
/// is a whole database by itself and nothing of the main file is mixed
/// in (docs/capture.md: which -wal is refused).
#[test]
fn a_wal_that_rewrites_every_page_is_the_whole_database() {
    assert_eq!(
        fs::read(fixture("opencode/opencode.db")).unwrap(),
        fs::read(fixture("kilo/kilo.db")).unwrap()
    );
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("opencode.db");
    fs::copy(fixture("opencode/opencode.db"), &main).unwrap();
    fs::copy(
        fixture("kilo/kilo.db-wal"),
        dir.path().join("opencode.db-wal"),
    )
    .unwrap();
    let snap = snapshot::snapshot_db(Kind::OpenCode, &main).unwrap();
    let kilo = snapshot::snapshot_db(Kind::Kilo, &source(Kind::Kilo, "kilo")).unwrap();
    assert_eq!(snap.sessions, kilo.sessions);
}

/// SQLite's WAL header checksum, little-endian words (magic 0x377f0682).
fn wal_checksum(bytes: &[u8]) -> [u32; 2] {
    let (mut s1, mut s2) = (0u32, 0u32);
    for pair in bytes.chunks_exact(8) {
        let w = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        s1 = s1.wrapping_add(w(&pair[0..4])).wrapping_add(s2);
        s2 = s2.wrapping_add(w(&pair[4..8])).wrapping_add(s1);
    }
    [s1, s2]
}

fn mknod_char(path: &Path, major: u32, minor: u32) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a plain mknod(2) on a path in a test's own directory.
    unsafe {
        libc::mknod(
            c.as_ptr(),
            libc::S_IFCHR | 0o600,
            libc::makedev(major, minor),
        ) == 0
    }
}

/// A FIFO, a device, a socket or a link to one where a transcript is
/// expected is refused at once, naming it (never opened, never waited on).
#[test]
fn a_transcript_that_is_not_a_regular_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture("claude-code"), dir.path());
    let slug = dir.path().join("projects/-tmp-snap-run-cc1-work");
    let fifo = dir.path().join("elsewhere.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let mut cases: Vec<(PathBuf, &str)> = Vec::new();
    let named = slug.join("z-fifo.jsonl");
    assert!(
        Command::new("mkfifo")
            .arg(&named)
            .status()
            .unwrap()
            .success()
    );
    cases.push((named, "a FIFO"));
    let link = slug.join("z-link.jsonl");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    cases.push((link, "a symlink"));
    let socket = slug.join("z-socket.jsonl");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    cases.push((socket, "a socket"));
    let device = slug.join("z-zero.jsonl");
    if mknod_char(&device, 1, 5) {
        cases.push((device, "a character device"));
    } else {
        // Not root: a link to the real /dev/zero stands in.
        std::os::unix::fs::symlink("/dev/zero", &device).unwrap();
        cases.push((device, "a symlink"));
    }
    for (path, kind) in &cases {
        let o = shforge_guarded(
            &["claude-code", "--dir", dir.path().to_str().unwrap()],
            tmp.path(),
        );
        assert_eq!(o.0, Some(2), "{kind}: {}", o.2);
        assert!(o.1.is_empty());
        assert_eq!(o.2.lines().count(), 1, "{}", o.2);
        assert!(
            o.2.contains(&format!(
                "{}: {kind}, where the layout has a transcript",
                path.display()
            )),
            "{kind}: {}",
            o.2
        );
        fs::remove_file(path).unwrap();
    }
    let o = shforge_guarded(
        &["claude-code", "--dir", dir.path().to_str().unwrap()],
        tmp.path(),
    );
    assert_eq!(o.0, Some(0), "{}", o.2);
}

#[test]
fn transcripts_and_lines_past_their_bounds_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sessions/--x--");
    fs::create_dir_all(&sub).unwrap();
    let header = r#"{"type":"session","id":"s","cwd":"/w","timestamp":"2026-12-01T00:00:00Z"}"#;
    // A line of 64 MiB + 1 byte, and more after it: refused at its place,
    // in 1 GiB of address space.
    let long = sub.join("long.jsonl");
    {
        use std::io::Write as _;
        let mut f = std::io::BufWriter::new(fs::File::create(&long).unwrap());
        writeln!(f, "{header}").unwrap();
        f.write_all(b"\"").unwrap();
        f.write_all(&vec![b'a'; (64 << 20) - 1]).unwrap();
        f.write_all(b"\"\n").unwrap();
        f.write_all(&vec![b'b'; 16 << 20]).unwrap();
    }
    let o = shforge_guarded(&["pi", "--dir", dir.path().to_str().unwrap()], tmp.path());
    assert_eq!(o.0, Some(2), "{}", o.2);
    assert_eq!(o.2.lines().count(), 1, "{}", o.2);
    assert!(
        o.2.contains(
            "long.jsonl:2: longer than 64 MiB, the most shforge reads of a transcript line"
        ),
        "{}",
        o.2
    );
    // A line of exactly 64 MiB is read.
    {
        let f = fs::OpenOptions::new().write(true).open(&long).unwrap();
        f.set_len(header.len() as u64 + 1 + (64 << 20) - 1).unwrap();
        use std::io::{Seek as _, Write as _};
        let mut f = f;
        f.seek(std::io::SeekFrom::End(-1)).unwrap();
        f.write_all(b"\n").unwrap();
    }
    let o = shforge_guarded(&["pi", "--dir", dir.path().to_str().unwrap()], tmp.path());
    assert_eq!(o.0, Some(2), "{}", o.2);
    assert!(o.2.contains("long.jsonl:2: not JSON"), "{}", o.2);
    fs::remove_file(&long).unwrap();

    // A file past 256 MiB (sparse: no disk spent) is refused before a read.
    let big = sub.join("big.jsonl");
    fs::write(&big, format!("{header}\n")).unwrap();
    fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len((256 << 20) + 1)
        .unwrap();
    let o = shforge_guarded(&["pi", "--dir", dir.path().to_str().unwrap()], tmp.path());
    assert_eq!(o.0, Some(2), "{}", o.2);
    assert!(
        o.2.contains("big.jsonl: larger than 256 MiB, the most shforge reads of a transcript"),
        "{}",
        o.2
    );
}

#[test]
fn more_transcripts_than_the_bound_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sessions/--x--");
    fs::create_dir_all(&sub).unwrap();
    for i in 0..=10_000 {
        fs::write(sub.join(format!("{i:05}.jsonl")), "").unwrap();
    }
    let o = shforge(&["pi", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("more than 10000 transcripts"),
        "{}",
        stderr(&o)
    );
}

/// Issue 26.5: the data of another harness, or of none, is exit 2 naming
/// what was expected, never a snapshot with nothing in it (one test per
/// case).
mod another_harnesss_data_is_refused_naming_what_was_expected {
    use super::{copy_tree, fixture, shforge, stderr};
    use crate::support::cases;
    use std::fs;
    use std::path::Path;
    use tempfile::TempDir;

    const QWEN_LINE: &str = r#"{"uuid":"u1","parentUuid":null,"sessionId":"s1","timestamp":"2026-12-01T00:00:00Z","type":"user","cwd":"/w","version":"0.24.4","message":{"role":"user","parts":[{"text":"hi"}]}}"#;

    /// Qwen Code's home: projects/<slug>/chats/<id>.jsonl.
    fn qwen() -> TempDir {
        let qwen = tempfile::tempdir().unwrap();
        let chats = qwen.path().join("projects/-w/chats");
        fs::create_dir_all(&chats).unwrap();
        fs::write(chats.join("s1.jsonl"), format!("{QWEN_LINE}\n")).unwrap();
        qwen
    }

    /// Qwen Code's chats laid out as Claude Code's.
    fn qwen_moved() -> TempDir {
        let moved = tempfile::tempdir().unwrap();
        fs::create_dir_all(moved.path().join("projects/-w")).unwrap();
        fs::write(
            moved.path().join("projects/-w/s1.jsonl"),
            format!("{QWEN_LINE}\n"),
        )
        .unwrap();
        moved
    }

    /// Pi's lines laid out as Claude Code's.
    fn pi_as_claude() -> TempDir {
        let pi_as_claude = tempfile::tempdir().unwrap();
        copy_tree(
            &fixture("pi/sessions"),
            &pi_as_claude.path().join("projects"),
        );
        pi_as_claude
    }

    /// Gemini CLI's home: projects.json, tmp/<dir>/chats/session-*.jsonl.
    fn gemini() -> TempDir {
        let gemini = tempfile::tempdir().unwrap();
        fs::write(gemini.path().join("projects.json"), "{}").unwrap();
        gemini
    }

    /// `shforge KIND --dir DIR`: exit 2, nothing on stdout, one line on
    /// stderr holding `wanted`.
    fn refused(kind: &str, dir: impl AsRef<Path>, wanted: &str) {
        let dir = dir.as_ref();
        let o = shforge(&[kind, "--dir", dir.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{kind} {}: {}",
            dir.display(),
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(
            stderr(&o).contains(wanted),
            "{kind} {}: {}",
            dir.display(),
            stderr(&o)
        );
    }

    cases! { refused;
        qwen_code_home_as_claude_code => (
            "claude-code",
            qwen(),
            "expected Claude Code's projects/*/*.jsonl transcripts, found",
        ),
        qwen_code_chats_laid_out_as_claude_code => (
            "claude-code",
            qwen_moved(),
            "s1.jsonl:1: not a Claude Code transcript: a user/assistant line whose `message` has no `content`",
        ),
        pi_laid_out_as_claude_code => (
            "claude-code",
            pi_as_claude(),
            ":1: not a Claude Code transcript: a line without a `sessionId`",
        ),
        gemini_cli_home_as_claude_code => (
            "claude-code",
            gemini(),
            "expected Claude Code's data directory (holding projects/*/*.jsonl) or its projects directory itself; it has no projects/",
        ),
        pi_as_codex => (
            "codex",
            fixture("pi"),
            "expected Codex's sessions/YYYY/MM/DD/rollout-*.jsonl transcripts, found",
        ),
        codex_as_pi => (
            "pi",
            fixture("codex"),
            "expected Pi's sessions/*/*.jsonl transcripts, found",
        ),
        claude_code_as_pi => (
            "pi",
            fixture("claude-code"),
            "expected Pi's data directory (holding sessions/*/*.jsonl)",
        ),
        opencode_as_claude_code => ("claude-code", fixture("opencode"), "it has no projects/"),
    }

    /// Codex's rollouts laid out as Pi's sessions: the header is not Pi's.
    #[test]
    fn codex_rollouts_laid_out_as_pi() {
        let codex_as_pi = tempfile::tempdir().unwrap();
        copy_tree(
            &fixture("codex/sessions/2026/12"),
            &codex_as_pi.path().join("sessions"),
        );
        let o = shforge(&["pi", "--dir", codex_as_pi.path().to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(
                ":1: not a Pi transcript: its first line is not a `{\"type\":\"session\",…}` header"
            ),
            "{}",
            stderr(&o)
        );
    }

    /// A SQLite file of no harness, and one with a `session` table of
    /// another shape.
    #[test]
    fn databases_of_no_harness_or_another_shape() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.db");
        rusqlite::Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE notes (x); INSERT INTO notes VALUES (1);")
            .unwrap();
        let o = shforge(&["opencode", "--db", other.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("no table `session`: not a opencode session database"),
            "{}",
            stderr(&o)
        );
        let shaped = dir.path().join("shaped.db");
        rusqlite::Connection::open(&shaped)
            .unwrap()
            .execute_batch(
                "CREATE TABLE session (id, started); CREATE TABLE message (id); CREATE TABLE part (id);",
            )
            .unwrap();
        let o = shforge(&["kilo", "--db", shaped.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("table `session` has no column `title`"),
            "{}",
            stderr(&o)
        );
    }
}

/// TERM or INT while a snapshot reads a database: the private copy in
/// `$TMPDIR` is removed and the process dies of the signal.
#[test]
fn a_snapshot_stopped_by_term_or_int_removes_its_private_copy() {
    use std::os::unix::process::ExitStatusExt as _;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("big.db");
    // About 100 MB of real rows (not sparse): copying and reading them
    // outlasts the wait for the copy to appear.
    opencode_like(
        &db,
        "WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < 100000)
         INSERT INTO part SELECT 'p' || v, 'm1', json_object('type', 'text', 'text', printf('%.*c', 1000, 'x')) FROM n;",
    );
    assert!(fs::metadata(&db).unwrap().len() > 100_000_000);
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_shforge"))
            .args(["snapshot", "opencode", "--db", db.to_str().unwrap()])
            .env("TMPDIR", tmp.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let copy = loop {
            if let Some(e) = fs::read_dir(tmp.path()).unwrap().next() {
                break e.unwrap().path();
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "shforge ended before its copy was seen"
            );
            assert!(std::time::Instant::now() < deadline, "no copy after 20 s");
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        assert!(
            copy.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("shforge-snapshot-")
        );
        // SAFETY: kill(2) of our own child.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
        let status = child.wait().unwrap();
        assert_eq!(
            status.signal(),
            Some(sig),
            "shforge must die of the signal, not end first: {status:?}"
        );
        let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
        assert!(left.is_empty(), "signal {sig}: left {left:?}");
    }
}

#[test]
fn a_value_past_its_bound_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.db");
    opencode_like(
        &db,
        "UPDATE part SET data = '\"' || printf('%.*c', 64 * 1024 * 1024 + 1, 'x') || '\"';",
    );
    let o = shforge_guarded(&["opencode", "--db", db.to_str().unwrap()], tmp.path());
    assert_refused(
        &o,
        "o.db: a value larger than 64 MiB, the most shforge reads of a database value",
        tmp.path(),
        "value",
    );
}

/// The main file copied before a checkpoint and the -wal after it (a copy
/// of a live DB taken file by file at two moments): refused.
#[test]
fn a_wal_newer_than_its_main_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    copy_db(&fixture("opencode/opencode.db"), &db);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    let old = dir.path().join("old.db");
    fs::copy(&db, &old).unwrap();
    let session: String = c
        .query_row("SELECT id FROM session", [], |r| r.get(0))
        .unwrap();
    c.execute_batch(&format!(
        "WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < 300)
         INSERT INTO message (id, session_id, time_created, time_updated, data)
           SELECT 'msg_bulk_' || v, '{session}', v, v, json_object('role', 'user', 'pad', printf('%.*c', 500, 'x')) FROM n;
         PRAGMA wal_checkpoint(TRUNCATE);
         INSERT INTO message (id, session_id, time_created, time_updated, data)
           VALUES ('msg_last', '{session}', 1, 1, '{{\"role\":\"user\"}}');"
    ))
    .unwrap();
    let mixed = tempfile::tempdir().unwrap();
    let main = mixed.path().join("opencode.db");
    fs::copy(&old, &main).unwrap();
    fs::copy(
        dir.path().join("opencode.db-wal"),
        mixed.path().join("opencode.db-wal"),
    )
    .unwrap();
    drop(c);
    let o = shforge_guarded(&["opencode", "--db", main.to_str().unwrap()], tmp.path());
    assert_refused(&o, "a WAL of another database", tmp.path(), "stale main");
}

/// Gemini CLI's chats, from the real CLI (fixtures `gemini-cli/`: its
/// `write_file` completed, then `done`; `gemini-cli-killed/`: TERM while
/// its shell tool blocked on a FIFO, which it records only once finished):
/// message lines written again by id and `$set` patches give one message
/// each; `gemini` turns are the summary's `assistant`.
#[test]
fn gemini_cli_chats_from_the_real_cli() {
    let kind = Kind::GeminiCli;
    let before = state(&fixture("gemini-cli"));
    let snap = take(kind, &fixture("gemini-cli")).unwrap();
    assert_eq!(state(&fixture("gemini-cli")), before, "fixture changed");
    assert_eq!(snap.harness, "gemini-cli");
    assert_eq!((snap.summary.sessions, snap.summary.messages), (1, 5));
    let roles: Vec<&str> = snap.sessions[0]
        .messages
        .iter()
        .map(|m| m.role.as_str())
        .collect();
    assert_eq!(roles, ["user", "user", "assistant", "user", "assistant"]);
    assert_eq!(
        tools(&snap),
        [("write_file".to_owned(), ToolStatus::Completed)]
    );
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    let t = snap.summary.tokens;
    assert_eq!((t.input, t.output, t.total), (24367, 25, 24392), "{t:?}");
    assert!(snap.sessions[0].id.len() == 36, "{}", snap.sessions[0].id);
    let inner = take(kind, &fixture("gemini-cli").join("tmp")).unwrap();
    assert_eq!(snap, inner, "tmp/ itself");

    let killed = take(kind, &fixture("gemini-cli-killed")).unwrap();
    assert_eq!(killed.summary.messages, 3);
    assert_eq!(killed.summary.final_text, None);
    assert!(killed.summary.tool_calls.is_empty());

    // Another harness's data, or chats of another shape under tmp/: exit
    // 2 naming what was expected.
    let qwen = tempfile::tempdir().unwrap();
    let chats = qwen.path().join("tmp/h/chats");
    fs::create_dir_all(&chats).unwrap();
    fs::write(
        chats.join("session-1.jsonl"),
        "{\"uuid\":\"u\",\"sessionId\":\"s\",\"type\":\"user\",\"message\":{}}\n",
    )
    .unwrap();
    for (dir, wanted) in [
        (
            fixture("claude-code"),
            "expected Gemini CLI's data directory",
        ),
        (fixture("pi"), "it has no tmp/"),
        (
            qwen.path().to_owned(),
            "session-1.jsonl:1: not a Gemini CLI transcript: its first line is not",
        ),
    ] {
        let o = shforge(&["gemini-cli", "--dir", dir.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).contains(wanted), "{}", stderr(&o));
    }
    // And the other readers refuse Gemini's.
    let o = shforge(&[
        "claude-code",
        "--dir",
        fixture("gemini-cli").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Cline 3.0.65's real sessions (tests/fixtures/snapshot/README.md): the
/// finished run, the run KILLed mid-tool, and the run given TERM mid-tool
/// that went on until its tool's own timeout (an error result) and
/// answered "done".
#[test]
fn cline_on_its_real_fixtures() {
    for (name, tool_status, final_text, tokens) in [
        ("cline", ToolStatus::Completed, Some("done"), (11057, 25)),
        ("cline-midtool", ToolStatus::Running, None, (5470, 26)),
        (
            "cline-toolerror",
            ToolStatus::Error,
            Some("done"),
            (11058, 27),
        ),
    ] {
        let before = state(&fixture(name));
        let snap = take(Kind::Cline, &fixture(name)).unwrap();
        assert_eq!(state(&fixture(name)), before, "{name}: fixture changed");
        assert_eq!(snap.harness, "cline");
        assert_eq!(snap.summary.sessions, 1, "{name}");
        let session = &snap.sessions[0];
        let roles: Vec<&str> = session.messages.iter().map(|m| m.role.as_str()).collect();
        let want: &[&str] = if final_text.is_some() {
            &["user", "assistant", "user", "assistant"]
        } else {
            &["user", "assistant"]
        };
        assert_eq!(roles, want, "{name}");
        assert_eq!(snap.summary.messages, want.len(), "{name}");
        assert_eq!(
            tools(&snap),
            [("run_commands".to_owned(), tool_status)],
            "{name}"
        );
        assert_eq!(
            snap.summary.tool_calls[0].unfinished,
            tool_status == ToolStatus::Running,
            "{name}"
        );
        assert_eq!(snap.summary.final_text.as_deref(), final_text, "{name}");
        let t = snap.summary.tokens;
        assert_eq!((t.input, t.output), tokens, "{name}: {t:?}");
        assert_eq!(t.total, t.input + t.output, "{name}");
        // From the manifest beside the messages document.
        assert_eq!(
            session.directory.as_deref(),
            Some(format!("/tmp/snap-run/{}/work", name.replace("toolerror", "killed")).as_str()),
            "{name}"
        );
        assert!(session.title.is_some(), "{name}");
        assert_eq!(session.agent.version.as_deref(), Some("3.0.65"), "{name}");
        assert_eq!(session.agent.model.as_deref(), Some("fake-model"), "{name}");
        let prompt = session.messages[0]
            .parts
            .iter()
            .find_map(|p| match &p.kind {
                PartKind::Text { text } => Some(text.as_str()),
                _ => None,
            });
        assert!(
            prompt.is_some_and(|p| p.contains("shforge-token=tok-cline")),
            "{name}"
        );
        // The sessions directory itself is accepted too.
        let inner = take(Kind::Cline, &fixture(name).join("sessions")).unwrap();
        assert_eq!(inner, snap, "{name}");
    }
}

/// Another harness's data, a file of another program in Cline's layout, a
/// cut-off document and an empty directory: exit 2 naming what was
/// expected; a manifest without its messages (a run stopped before the
/// first message): exit 1, no session data. Cline's data is refused by the
/// other dir readers too.
#[test]
fn foreign_or_empty_data_is_not_clines() {
    let other = tempfile::tempdir().unwrap();
    fs::create_dir_all(other.path().join("sessions/s1")).unwrap();
    fs::write(other.path().join("sessions/s1/notes.json"), "{\"a\": 1}\n").unwrap();
    let cut = tempfile::tempdir().unwrap();
    copy_tree(&fixture("cline"), cut.path());
    let doc = fs::read_dir(cut.path().join("sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let messages = fs::read_dir(&doc)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".messages.json"))
        .unwrap();
    let text = fs::read(&messages).unwrap();
    fs::write(&messages, &text[..text.len() / 2]).unwrap();
    let empty = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, PathBuf, &str)> = vec![
        (
            "cline",
            fixture("pi"),
            "expected Cline's sessions/*/*.messages.json transcripts, found",
        ),
        (
            "cline",
            fixture("claude-code"),
            "expected Cline's data directory (holding sessions/*/*.messages.json)",
        ),
        (
            "cline",
            fixture("codex"),
            "expected Cline's sessions/*/*.messages.json transcripts, found",
        ),
        ("cline", fixture("qwen-code"), "it has no sessions/"),
        ("cline", empty.path().to_owned(), "it has no sessions/"),
        (
            "cline",
            other.path().to_owned(),
            "notes.json:1: not a Cline transcript: neither a",
        ),
        ("cline", cut.path().to_owned(), ".messages.json: not JSON"),
        (
            "pi",
            fixture("cline"),
            "expected Pi's sessions/*/*.jsonl transcripts, found",
        ),
        (
            "codex",
            fixture("cline"),
            "expected Codex's sessions/YYYY/MM/DD/rollout-*.jsonl transcripts, found",
        ),
        ("claude-code", fixture("cline"), "it has no projects/"),
    ];
    for (kind, dir, wanted) in cases {
        let o = shforge(&[kind, "--dir", dir.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{kind} {}: {err}", dir.display());
        assert!(o.stdout.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(wanted), "{kind} {}: {err}", dir.display());
    }
    // Only the manifest: the layout is Cline's, with no message in it.
    fs::remove_file(&messages).unwrap();
    let o = shforge(&["cline", "--dir", cut.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("none holds a message"),
        "{}",
        stderr(&o)
    );
}

/// Hermes's `state.db`, from the real CLI (fixtures `hermes/`: its
/// `terminal` tool completed, then `done`; `hermes-midtool/` (KILL) and
/// `hermes-killed/` (TERM) while the tool blocked on a FIFO: the rows are
/// in `state.db-wal`, and the call has no result). The fixture files are
/// never changed; a foreign or empty dir is exit 2 naming `state.db`.
#[test]
fn hermes_state_db_from_the_real_cli() {
    let kind = Kind::Hermes;
    let before = state(&fixture("hermes"));
    let snap = take(kind, &fixture("hermes")).unwrap();
    assert_eq!(state(&fixture("hermes")), before, "fixture changed");
    assert_eq!(snap.harness, "hermes");
    assert_eq!((snap.summary.sessions, snap.summary.messages), (1, 4));
    let roles: Vec<&str> = snap.sessions[0]
        .messages
        .iter()
        .map(|m| m.role.as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(
        tools(&snap),
        [("terminal".to_owned(), ToolStatus::Completed)]
    );
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    let t = snap.summary.tokens;
    assert_eq!((t.input, t.output, t.total), (23022, 24, 23046), "{t:?}");
    assert_eq!(
        snap.sessions[0].directory.as_deref(),
        Some("/tmp/snap-run/hermes/work")
    );
    assert_eq!(snap.sessions[0].agent.model.as_deref(), Some("fake-model"));

    for name in ["hermes-midtool", "hermes-killed"] {
        let before = state(&fixture(name));
        let cut = take(kind, &fixture(name)).unwrap();
        assert_eq!(state(&fixture(name)), before, "{name} changed");
        assert_eq!(cut.summary.messages, 2, "{name}");
        assert_eq!(cut.summary.final_text, None, "{name}");
        assert_eq!(tools(&cut), [("terminal".to_owned(), ToolStatus::Running)]);
        assert!(cut.summary.tool_calls[0].unfinished, "{name}");
    }

    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    // An OpenCode database where Hermes's would be: its tables are not.
    let foreign = tmp.path().join("foreign");
    fs::create_dir(&foreign).unwrap();
    fs::copy(fixture("opencode/opencode.db"), foreign.join("state.db")).unwrap();
    fs::copy(
        fixture("opencode/opencode.db-wal"),
        foreign.join("state.db-wal"),
    )
    .unwrap();
    let linked = tmp.path().join("linked");
    fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(fixture("hermes/state.db"), linked.join("state.db")).unwrap();
    for (dir, wanted) in [
        (empty.clone(), "expected state.db"),
        (fixture("qwen-code"), "expected state.db"),
        (foreign.clone(), "no table `sessions`"),
        (linked.clone(), "not a regular file"),
        (fixture("hermes/state.db"), "not a directory"),
    ] {
        let o = shforge(&["hermes", "--dir", dir.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).contains(wanted), "{}", stderr(&o));
    }
}

/// Stirrup's `stirrup-state/transcript.json` (written by its boot.py),
/// from the real Stirrup (fixtures `stirrup/`: code_exec completed, then
/// finish with `done`; `stirrup-midtool/` (KILL) and `stirrup-killed/`
/// (TERM) while code_exec blocked on a FIFO: the last save holds the call
/// without its result). A foreign or empty dir is exit 2 naming
/// `stirrup-state/transcript.json`; a file that is not Stirrup's is exit 2.
#[test]
fn stirrup_transcript_from_the_real_cli() {
    let kind = Kind::Stirrup;
    let before = state(&fixture("stirrup"));
    let snap = take(kind, &fixture("stirrup")).unwrap();
    assert_eq!(state(&fixture("stirrup")), before, "fixture changed");
    assert_eq!(snap.harness, "stirrup");
    assert_eq!((snap.summary.sessions, snap.summary.messages), (1, 6));
    let roles: Vec<&str> = snap.sessions[0]
        .messages
        .iter()
        .map(|m| m.role.as_str())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "tool"]
    );
    assert_eq!(
        tools(&snap),
        [
            ("code_exec".to_owned(), ToolStatus::Completed),
            ("finish".to_owned(), ToolStatus::Completed)
        ]
    );
    // The finish call's reason is the answer.
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    let t = snap.summary.tokens;
    assert_eq!((t.input, t.output, t.total), (1055, 34, 1089), "{t:?}");
    assert_eq!(snap.sessions[0].agent.model.as_deref(), Some("fake-model"));
    // The session dir and its stirrup-state/ are the same data.
    let inner = take(kind, &fixture("stirrup").join("stirrup-state")).unwrap();
    assert_eq!(inner.summary, snap.summary);

    for name in ["stirrup-midtool", "stirrup-killed"] {
        let cut = take(kind, &fixture(name)).unwrap();
        assert_eq!(cut.summary.messages, 3, "{name}");
        assert_eq!(cut.summary.final_text, None, "{name}");
        assert_eq!(tools(&cut), [("code_exec".to_owned(), ToolStatus::Running)]);
        assert!(cut.summary.tool_calls[0].unfinished, "{name}");
    }

    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let foreign = tmp.path().join("foreign");
    fs::create_dir_all(foreign.join("stirrup-state")).unwrap();
    // Cline's messages document where Stirrup's transcript would be.
    fs::write(
        foreign.join("stirrup-state/transcript.json"),
        r#"{"sessionId":"x","messages":[{"role":"user","content":"hi"}]}"#,
    )
    .unwrap();
    let cut = tmp.path().join("cut");
    fs::create_dir_all(cut.join("stirrup-state")).unwrap();
    let whole = fs::read(fixture("stirrup/stirrup-state/transcript.json")).unwrap();
    fs::write(
        cut.join("stirrup-state/transcript.json"),
        &whole[..whole.len() / 2],
    )
    .unwrap();
    for (dir, wanted) in [
        (empty.clone(), "holding stirrup-state/transcript.json"),
        (fixture("hermes"), "it has no stirrup-state/"),
        (foreign.clone(), "not a Stirrup transcript"),
        (cut.clone(), "transcript.json: not JSON"),
    ] {
        let o = shforge(&["stirrup", "--dir", dir.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).contains(wanted), "{}", stderr(&o));
    }
}

/// NOOA's `nooa-state/transcript.json` (written by its boot.py), from the
/// real NOOA (fixtures `nooa/`: NOOA's prefill cell, the fake model's
/// `execute_python` cell, then `return_result` with `done`;
/// `nooa-midtool/` (KILL) and `nooa-killed/` (TERM) while the cell blocked
/// opening a FIFO: the last save holds the call without its result). A
/// foreign or empty dir is exit 2 naming `nooa-state/transcript.json`.
#[test]
fn nooa_transcript_from_the_real_cli() {
    let kind = Kind::Nooa;
    let before = state(&fixture("nooa"));
    let snap = take(kind, &fixture("nooa")).unwrap();
    assert_eq!(state(&fixture("nooa")), before, "fixture changed");
    assert_eq!(snap.harness, "nooa");
    assert_eq!((snap.summary.sessions, snap.summary.messages), (1, 11));
    let roles: Vec<&str> = snap.sessions[0]
        .messages
        .iter()
        .map(|m| m.role.as_str())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "user",
            "assistant",
            "tool",
            "user",
            "user",
            "assistant",
            "tool"
        ]
    );
    let completed = ToolStatus::Completed;
    assert_eq!(
        tools(&snap),
        [
            ("execute_python".to_owned(), completed),
            ("execute_python".to_owned(), completed),
            ("return_result".to_owned(), completed)
        ]
    );
    // The turn's explanation is the answer; the model is the client's.
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    assert_eq!(snap.sessions[0].agent.model.as_deref(), Some("fake-model"));
    // The fake model's cell: its output is NOOA's PythonOutput message.
    let cell = snap.sessions[0].messages[6].parts[0].clone();
    let out = serde_json::to_value(&cell).unwrap().to_string();
    assert!(
        out.contains("PythonOutput(tool_call_id='call_shforge_1'"),
        "{out}"
    );
    let inner = take(kind, &fixture("nooa").join("nooa-state")).unwrap();
    assert_eq!(inner.summary, snap.summary);

    for name in ["nooa-midtool", "nooa-killed"] {
        let cut = take(kind, &fixture(name)).unwrap();
        assert_eq!(cut.summary.messages, 7, "{name}");
        assert_eq!(cut.summary.final_text, None, "{name}");
        let last = cut.summary.tool_calls.last().unwrap();
        assert!(last.unfinished, "{name}");
        assert_eq!(
            tools(&cut).last(),
            Some(&("execute_python".to_owned(), ToolStatus::Running))
        );
    }

    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let foreign = tmp.path().join("foreign");
    fs::create_dir_all(foreign.join("nooa-state")).unwrap();
    // Stirrup's transcript where NOOA's would be.
    fs::copy(
        fixture("stirrup/stirrup-state/transcript.json"),
        foreign.join("nooa-state/transcript.json"),
    )
    .unwrap();
    for (dir, wanted) in [
        (empty.clone(), "holding nooa-state/transcript.json"),
        (fixture("stirrup"), "it has no nooa-state/"),
        (foreign.clone(), "not a NOOA transcript"),
    ] {
        let o = shforge(&["nooa", "--dir", dir.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).contains(wanted), "{}", stderr(&o));
    }
}

/// NOOA's r2 boot.py records each answer's litellm usage (fixtures
/// `nooa-usage/`, finished, and `nooa-usage-midtool/`, KILLed mid-cell:
/// the save after the answer already carries it); the r1 fixtures have
/// none and read with no tokens. The document's `usage` is the session's
/// tokens, the answers' summed without it; `prompt_tokens` include the
/// cached ones, so ATIF's prompt count is the input as recorded.
#[test]
fn nooa_token_usage_of_each_answer_from_the_real_cli() {
    let kind = Kind::Nooa;
    let snap = take(kind, &fixture("nooa-usage")).unwrap();
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    let t = snap.summary.tokens;
    assert_eq!((t.input, t.output, t.total), (10777, 57, 10834), "{t:?}");
    assert_eq!((t.cache_read, t.reasoning), (0, 0), "{t:?}");
    // One usage per model answer: not NOOA's own prefill cell.
    let per: Vec<(u64, u64)> = snap.sessions[0]
        .messages
        .iter()
        .filter_map(|m| m.usage.map(|u| (u.input, u.output)))
        .collect();
    assert_eq!(per, [(5273, 42), (5504, 15)]);
    let cut = take(kind, &fixture("nooa-usage-midtool")).unwrap();
    assert!(cut.summary.tool_calls.last().unwrap().unfinished);
    let t = cut.summary.tokens;
    assert_eq!((t.input, t.output, t.total), (5287, 46, 5333), "{t:?}");
    for old in ["nooa", "nooa-midtool", "nooa-killed"] {
        let snap = take(kind, &fixture(old)).unwrap();
        assert_eq!(snap.summary.tokens, Tokens::default(), "{old}");
        assert!(snap.sessions[0].messages.iter().all(|m| m.usage.is_none()));
    }

    // Cached input (a provider's `prompt_tokens_details`), and a document
    // without its own `usage`: the answers' summed.
    let text = fs::read_to_string(fixture("nooa-usage/nooa-state/transcript.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let cached = serde_json::json!({"cached_tokens": 4096, "audio_tokens": 0});
    let last = doc["messages"].as_array_mut().unwrap().last_mut().unwrap();
    last["usage"]["prompt_tokens_details"] = cached.clone();
    doc["usage"]["prompt_tokens_details"] = cached;
    let tmp = tempfile::tempdir().unwrap();
    let write = |doc: &Value| {
        fs::create_dir_all(tmp.path().join("nooa-state")).unwrap();
        let text = serde_json::to_string(doc).unwrap();
        fs::write(tmp.path().join("nooa-state/transcript.json"), text).unwrap();
        take(kind, tmp.path()).unwrap()
    };
    let with = write(&doc);
    assert_eq!(with.summary.tokens.cache_read, 4096);
    assert_eq!(with.summary.tokens.input, 10777);
    let atif: Value = serde_json::from_slice(&with.to_atif()).unwrap();
    let fm = &atif["final_metrics"];
    assert_eq!(fm["total_prompt_tokens"], 10777, "{fm}");
    assert_eq!(fm["total_cached_tokens"], 4096, "{fm}");
    doc.as_object_mut().unwrap().remove("usage");
    let summed = write(&doc);
    assert_eq!(summed.summary.tokens, with.summary.tokens);
}

/// Continue CLI 1.5.47's real session (tests/fixtures/snapshot/README.md):
/// the tool results kept in the assistant item's `toolCallStates` become a
/// `tool` message, so the call is completed and answered.
#[test]
fn continue_cli_on_its_real_fixture() {
    let before = state(&fixture("continue-cli"));
    let snap = take(Kind::ContinueCli, &fixture("continue-cli")).unwrap();
    assert_eq!(state(&fixture("continue-cli")), before, "fixture changed");
    assert_eq!(snap.harness, "continue-cli");
    assert_eq!(snap.summary.sessions, 1);
    let session = &snap.sessions[0];
    let roles: Vec<&str> = session.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(tools(&snap), [("Write".to_owned(), ToolStatus::Completed)]);
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    let t = snap.summary.tokens;
    assert_eq!((t.input, t.output, t.total), (4088, 26, 4114), "{t:?}");
    assert_eq!(
        session.directory.as_deref(),
        Some("/tmp/snap-run/continue-cli/work")
    );
    assert_eq!(session.agent.model.as_deref(), Some("fake-model"));
    // The index beside the sessions is not a session.
    assert!(fixture("continue-cli/sessions/sessions.json").is_file());
    // The sessions directory itself is accepted too.
    let inner = take(Kind::ContinueCli, &fixture("continue-cli").join("sessions")).unwrap();
    assert_eq!(inner, snap);
    // Another harness's data is refused.
    let o = shforge(&["continue-cli", "--dir", fixture("cline").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Copilot CLI 1.0.102's real sessions: the finished run, and the run
/// KILLed while its `bash` tool blocked writing to a FIFO.
#[test]
fn copilot_cli_on_its_real_fixtures() {
    for (name, status, final_text, tokens, roles) in [
        (
            "copilot-cli",
            ToolStatus::Completed,
            Some("done"),
            (24128, 26),
            &["user", "system", "assistant", "tool", "assistant"][..],
        ),
        (
            "copilot-cli-midtool",
            ToolStatus::Running,
            None,
            (12022, 42),
            &["user", "system", "assistant"][..],
        ),
    ] {
        let before = state(&fixture(name));
        let snap = take(Kind::CopilotCli, &fixture(name)).unwrap();
        assert_eq!(state(&fixture(name)), before, "{name}: fixture changed");
        assert_eq!(snap.harness, "copilot-cli");
        let session = &snap.sessions[0];
        let got: Vec<&str> = session.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(got, roles, "{name}");
        assert_eq!(tools(&snap).len(), 1, "{name}");
        assert_eq!(tools(&snap)[0].1, status, "{name}");
        assert_eq!(
            snap.summary.tool_calls[0].unfinished,
            status == ToolStatus::Running,
            "{name}"
        );
        assert_eq!(snap.summary.final_text.as_deref(), final_text, "{name}");
        let t = snap.summary.tokens;
        assert_eq!((t.input, t.output), tokens, "{name}: {t:?}");
        assert_eq!(session.agent.version.as_deref(), Some("1.0.102"), "{name}");
        assert_eq!(session.agent.model.as_deref(), Some("fake-model"), "{name}");
        assert_eq!(
            session.directory.as_deref(),
            Some(format!("/tmp/snap-run/{name}/work").as_str()),
            "{name}"
        );
    }
    let o = shforge(&["copilot-cli", "--dir", fixture("codex").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// mini-swe-agent's `mini-swe-agent-state/trajectory.json` (the agent's
/// own trajectory, saved by boot.py after each answer and each step), from
/// the real CLI through the chat-messages reader family (fixtures
/// `mini-swe-agent/`: the fake model's `bash` call writing the token, then
/// `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo done`, which mini
/// answers with a padded "action was not executed" result and its `exit`
/// message; `mini-swe-agent-midtool/` (KILL) while the command blocked
/// opening a FIFO). A foreign or empty dir is exit 2.
#[test]
fn mini_swe_agent_trajectory_from_the_real_cli() {
    let kind = Kind::MiniSweAgent;
    let before = state(&fixture("mini-swe-agent"));
    let snap = take(kind, &fixture("mini-swe-agent")).unwrap();
    assert_eq!(state(&fixture("mini-swe-agent")), before, "fixture changed");
    assert_eq!(snap.harness, "mini-swe-agent");
    let roles: Vec<&str> = snap.sessions[0]
        .messages
        .iter()
        .map(|m| m.role.as_str())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "exit"
        ]
    );
    let completed = ToolStatus::Completed;
    // The submit call's padded result is the submission, not an error.
    assert_eq!(
        tools(&snap),
        [
            ("bash".to_owned(), completed),
            ("bash".to_owned(), completed)
        ]
    );
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    assert_eq!(
        snap.sessions[0].agent.model.as_deref(),
        Some("openai/fake-model")
    );
    assert_eq!(snap.sessions[0].agent.version.as_deref(), Some("2.4.6"));
    assert_eq!(
        (snap.summary.tokens.input, snap.summary.tokens.output),
        (1775, 39)
    );
    let inner = take(
        kind,
        &fixture("mini-swe-agent").join("mini-swe-agent-state"),
    )
    .unwrap();
    assert_eq!(inner.summary, snap.summary);

    let cut = take(kind, &fixture("mini-swe-agent-midtool")).unwrap();
    assert_eq!(cut.summary.messages, 3);
    assert_eq!(cut.summary.final_text, None);
    assert!(cut.summary.tool_calls.last().unwrap().unfinished);

    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let foreign = tmp.path().join("foreign");
    fs::create_dir_all(foreign.join("mini-swe-agent-state")).unwrap();
    // Stirrup's transcript (a list, no `messages`) where mini's would be.
    fs::copy(
        fixture("stirrup/stirrup-state/transcript.json"),
        foreign.join("mini-swe-agent-state/trajectory.json"),
    )
    .unwrap();
    for (dir, wanted) in [
        (empty.clone(), "mini-swe-agent-state/trajectory.json"),
        (fixture("stirrup"), "mini-swe-agent-state"),
        (foreign.clone(), "/messages"),
    ] {
        let o = shforge(&["mini-swe-agent", "--dir", dir.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).contains(wanted), "{}", stderr(&o));
    }
}

/// Kimi CLI's `sessions/<md5(workdir)>/<id>/context.jsonl` (fixture: its share dir)
/// (kimi --print against the fake model, from `shforge smoke kimi-cli`),
/// through the chat-messages family's JSONL row: `_system_prompt` kept as
/// the system message, `_checkpoint` and `_usage` lines left out, the
/// `WriteFile` call paired with its result, the session id the directory's.
/// A foreign or empty dir is exit 2.
#[test]
fn kimi_cli_context_jsonl_from_the_real_cli() {
    let kind = Kind::KimiCli;
    let dir = fixture("kimi-cli");
    let before = state(&dir);
    let snap = take(kind, &dir).unwrap();
    assert_eq!(state(&dir), before, "fixture changed");
    assert_eq!(snap.harness, "kimi-cli");
    let s = &snap.sessions[0];
    assert_eq!(s.id, "c1b5fb37-596f-40c9-9d59-c8a4a1d0189a");
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant"]);
    assert_eq!(
        tools(&snap),
        [("WriteFile".to_owned(), ToolStatus::Completed)]
    );
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    let inner = take(kind, &dir.join("sessions")).unwrap();
    assert_eq!(inner.summary, snap.summary);

    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let foreign = tmp.path().join("foreign/sessions/h/id");
    fs::create_dir_all(&foreign).unwrap();
    fs::write(foreign.join("context.jsonl"), "{\"type\":\"x\"}\n").unwrap();
    for (d, wanted) in [
        (empty.clone(), "sessions"),
        (tmp.path().join("foreign"), "role"),
    ] {
        let o = shforge(&["kimi-cli", "--dir", d.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}: {}", d.display(), stderr(&o));
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).contains(wanted), "{}", stderr(&o));
    }
}

/// Mistral Vibe's `logs/session/session_*/messages.jsonl` (one chat message
/// a line) with `meta.json` beside it, from the real CLI (2.25.5) against
/// the fake model server, through the chat-messages reader family's JSONL
/// form (fixtures: `mistral-vibe/`, the fake model's `bash` call writing the
/// token, then `done`; `mistral-vibe-toolerror/`, the same call failing
/// (its target's dir missing: a `<tool_error>` result); `mistral-vibe-auth/`,
/// every request answered 401: the user message alone). The id, directory,
/// model and token totals come from meta.json. A foreign or empty dir is
/// exit 2.
#[test]
fn mistral_vibe_session_log_from_the_real_cli() {
    let kind = Kind::MistralVibe;
    let before = state(&fixture("mistral-vibe"));
    let snap = take(kind, &fixture("mistral-vibe")).unwrap();
    assert_eq!(state(&fixture("mistral-vibe")), before, "fixture changed");
    assert_eq!(snap.harness, "mistral-vibe");
    let s = &snap.sessions[0];
    let roles: Vec<&str> = s.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(tools(&snap), [("bash".to_owned(), ToolStatus::Completed)]);
    assert_eq!(snap.summary.final_text.as_deref(), Some("done"));
    assert_eq!(s.id, "af9b13a0-c0e3-9b1b-0ada-d6be7305501c");
    assert_eq!(s.directory.as_deref(), Some("/tmp/vibe-dl/s4/work"));
    assert_eq!(s.agent.model.as_deref(), Some("fake-model"));
    assert!(s.tokens.input > 0 && s.tokens.output > 0, "{:?}", s.tokens);
    assert_eq!(s.tokens.total, s.tokens.input + s.tokens.output);
    // The session dir's `session/` itself is the same data.
    let inner = take(kind, &fixture("mistral-vibe").join("session")).unwrap();
    assert_eq!(inner.summary, snap.summary);

    let failed = take(kind, &fixture("mistral-vibe-toolerror")).unwrap();
    assert_eq!(tools(&failed), [("bash".to_owned(), ToolStatus::Error)]);
    let auth = take(kind, &fixture("mistral-vibe-auth")).unwrap();
    assert_eq!(auth.summary.messages, 1);
    assert!(auth.summary.tool_calls.is_empty());

    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let foreign = tmp.path().join("foreign");
    fs::create_dir_all(foreign.join("session/session_1")).unwrap();
    // Copilot CLI's events (lines without a `role`) where Vibe's would be.
    fs::write(
        foreign.join("session/session_1/messages.jsonl"),
        "{\"type\":\"session.start\",\"data\":{}}\n",
    )
    .unwrap();
    for (dir, wanted) in [
        (empty.clone(), "session/session_*/messages.jsonl"),
        (fixture("stirrup"), "session"),
        (foreign.clone(), "not a chat message"),
    ] {
        let o = shforge(&["mistral-vibe", "--dir", dir.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: {}",
            dir.display(),
            stderr(&o)
        );
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).contains(wanted), "{}", stderr(&o));
    }
}
