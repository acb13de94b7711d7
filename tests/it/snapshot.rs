//! `shforge::snapshot` and `shforge snapshot` on real session data made by
//! the real harness CLIs (tests/fixtures/snapshot/README.md says how).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use crate::support::copy_tree;
use serde_json::Value;
use shforge::snapshot::{
    self, Kind, PartKind, Snapshot, SnapshotError, ToolCallSummary, ToolStatus,
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
        .map(|ToolCallSummary { tool, status }| (tool.clone(), *status))
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
             CREATE TABLE message (id TEXT); CREATE TABLE part (id TEXT);",
        )
        .unwrap();
    let o = shforge(&["opencode", "--db", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("table session"), "{}", stderr(&o));

    for (kind, looked) in [
        ("claude-code", "projects/*/*.jsonl"),
        ("pi", "sessions/*/*.jsonl"),
        ("codex", "sessions/YYYY/MM/DD/rollout-*.jsonl"),
    ] {
        let empty = tempfile::tempdir().unwrap();
        let o = shforge(&[kind, "--dir", empty.path().to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{kind}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
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
    std::os::unix::fs::symlink(&real, sub.join("a.jsonl")).unwrap();
    std::os::unix::fs::symlink(fixture("pi/sessions"), dir.path().join("sessions/linked")).unwrap();
    let err = snapshot::snapshot_dir(Kind::Pi, dir.path()).unwrap_err();
    assert_eq!(err.exit_code(), 1, "{err}");
    // Nor a `sessions` that is a link.
    let linked = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(fixture("pi/sessions"), linked.path().join("sessions")).unwrap();
    let err = snapshot::snapshot_dir(Kind::Pi, linked.path()).unwrap_err();
    assert_eq!(err.exit_code(), 1, "{err}");
    // The directory named by the caller may be a link.
    let named = linked.path().join("named");
    std::os::unix::fs::symlink(fixture("pi"), &named).unwrap();
    assert_eq!(
        snapshot::snapshot_dir(Kind::Pi, &named)
            .unwrap()
            .summary
            .messages,
        4
    );

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
    fs::write(sub.join("s.jsonl"), format!("{line}\n{line}\n")).unwrap();
    let snap = snapshot::snapshot_dir(Kind::Pi, dir.path()).unwrap();
    assert_eq!(snap.summary.tokens.input, u64::MAX);
    assert_eq!(snap.summary.tokens.total, u64::MAX);
    assert_eq!(snap.summary.final_text.as_deref(), Some("hi"));
}
