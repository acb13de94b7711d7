//! The checks of one smoke rollout, each a pure function of what the run
//! left on disk and in /proc.

use std::collections::BTreeMap;
use std::path::Path;

use crate::harness::Capture;
use crate::host::CleanupReceipt;

/// One check: its name, whether it passed, and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Short name (a table column).
    pub name: &'static str,
    /// Passed.
    pub ok: bool,
    /// What was seen (shown for failures).
    pub detail: String,
}

impl Check {
    pub(crate) fn new(name: &'static str, ok: bool, detail: impl Into<String>) -> Self {
        Check {
            name,
            ok,
            detail: detail.into(),
        }
    }
}

/// The column names, in table order.
pub const NAMES: [&str; 9] = [
    "exit 0",
    "deliverable",
    "receipt",
    "events",
    "prompt exact",
    "no process left",
    "task HOME untouched",
    "key not written",
    "session captured",
];

/// The supervisor's exit status.
pub fn exit_zero(status: Option<i32>) -> Check {
    Check::new(
        NAMES[0],
        status == Some(0),
        format!("supervisor exit {status:?}"),
    )
}

/// The deliverable holds exactly the token.
pub fn deliverable(path: &Path, token: &str) -> Check {
    // What the agent wrote: bounded, and a FIFO or device there is refused
    // rather than waited on.
    let bound = crate::files::Bound {
        what: "a deliverable",
        max: 1 << 20,
    };
    match crate::files::read_bounded(path, bound).map_err(crate::files::FileError::into_cause) {
        Ok(b) if b == token.as_bytes() => Check::new(NAMES[1], true, "token written"),
        Ok(b) => Check::new(
            NAMES[1],
            false,
            format!(
                "{} holds {:?}",
                path.display(),
                String::from_utf8_lossy(&b[..b.len().min(80)])
            ),
        ),
        Err(e) => Check::new(NAMES[1], false, format!("{}: {e}", path.display())),
    }
}

/// The receipt is confirmed: return_code 0, not timed out, cleanup confirmed.
pub fn receipt(path: &Path) -> Check {
    match CleanupReceipt::from_file(path) {
        Ok(r) => {
            let ok = r.return_code == Some(0) && !r.timed_out && r.is_clean();
            Check::new(
                NAMES[2],
                ok,
                format!(
                    "return_code {:?}, timed_out {}, cleanup_confirmed {}, error {:?}",
                    r.return_code, r.timed_out, r.cleanup_confirmed, r.error
                ),
            )
        }
        Err(e) => Check::new(NAMES[2], false, e.to_string()),
    }
}

/// Parse `text` as a stream of JSON values; the count, or the first error.
fn json_stream(text: &str) -> Result<usize, String> {
    let mut n = 0;
    for v in serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>() {
        v.map_err(|e| e.to_string())?;
        n += 1;
    }
    Ok(n)
}

/// Events mode: every line of the events file is `SECONDS[.FRACTION]\tLINE`
/// and the lines together are JSON values (one per line, or one object
/// over many lines as OpenClaw prints). Direct mode: stdout is JSON values.
/// A `text` harness (`run.output`): at least one line of text instead.
pub fn events(file: &Path, events_mode: bool, json: bool) -> Check {
    let read = crate::files::read_bounded(file, crate::files::Bound::TRANSCRIPT)
        .map_err(crate::files::FileError::into_cause);
    let text = match read {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => return Check::new(NAMES[3], false, format!("{}: {e}", file.display())),
    };
    let payload = if events_mode {
        let mut payload = String::new();
        for (i, line) in text.lines().enumerate() {
            let Some((stamp, rest)) = line.split_once('\t') else {
                return Check::new(NAMES[3], false, format!("line {}: no tab", i + 1));
            };
            let (secs, frac) = stamp.split_once('.').unwrap_or((stamp, "0"));
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if !digits(secs) || !digits(frac) {
                return Check::new(NAMES[3], false, format!("line {}: stamp {stamp:?}", i + 1));
            }
            payload.push_str(rest);
            payload.push('\n');
        }
        payload
    } else {
        text
    };
    if !json {
        let n = payload.lines().filter(|l| !l.trim().is_empty()).count();
        return Check::new(NAMES[3], n > 0, format!("{n} lines of text"));
    }
    match json_stream(&payload) {
        Ok(0) => Check::new(NAMES[3], false, "no JSON value"),
        Ok(n) => Check::new(
            NAMES[3],
            true,
            format!("{n} JSON values, {} lines", payload.lines().count()),
        ),
        Err(e) => Check::new(NAMES[3], false, format!("not JSON: {e}")),
    }
}

/// PIDs of live processes whose environment holds `VAR=marker`.
///
/// A process caught inside `execve` reads with an empty environment (the new
/// image's `env_start`/`env_end` are not set yet), so an empty one is read
/// again until it is settled, as the supervisor's scan does: an environment
/// in place (stat fields 50 and 51), a kernel thread, or the process gone.
pub fn marked_processes(var: &str, marker: &str) -> Vec<u32> {
    let needle = format!("{var}={marker}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            (0..300).find_map(|_| {
                let verdict = marked(*pid, &needle);
                if verdict.is_none() {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                verdict
            }) == Some(true)
        })
        .collect()
}

/// Whether PID `pid` is alive, not a zombie, and carries `needle`; `None`
/// while its environment reads empty and is not settled.
fn marked(pid: u32, needle: &str) -> Option<bool> {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Some(false);
    };
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .map_or(Vec::new(), |(_, rest)| rest.split(' ').collect());
    if fields.first().is_some_and(|s| s.starts_with('Z')) {
        return Some(false);
    }
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return Some(false);
    };
    if env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) {
        return Some(true);
    }
    // Fields counted from the state (field 3): flags is field 9, env_start 50.
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    let kernel_thread = field(9).is_some_and(|flags| flags & 0x20_0000 != 0);
    let env_in_place = field(50).is_some_and(|a| a != 0) || field(51).is_some_and(|b| b != 0);
    (!env.is_empty() || kernel_thread || env_in_place).then_some(false)
}

/// No process of the run is alive: none carries the run's marker.
pub fn no_process_left(var: &str, marker: &str) -> Check {
    let left = marked_processes(var, marker);
    Check::new(
        NAMES[5],
        left.is_empty(),
        if left.is_empty() {
            "no marked process".to_owned()
        } else {
            format!("alive: {left:?}")
        },
    )
}

/// What a directory tree holds: path → (kind, size, sha256, mode, mtime).
pub type Tree = BTreeMap<String, String>;

/// Record a tree (files hashed; symlinks by target), to compare later.
pub fn tree(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            use std::os::unix::fs::MetadataExt as _;
            let stamp = format!(
                "mode {:o} mtime {}.{}",
                meta.mode(),
                meta.mtime(),
                meta.mtime_nsec()
            );
            if meta.is_dir() {
                out.insert(rel, format!("dir {stamp}"));
                walk(root, &p, out);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap_or_default();
                out.insert(rel, format!("link {} {stamp}", target.display()));
            } else {
                let digest = super::artifacts::sha256_file(&p).unwrap_or_default();
                out.insert(rel, format!("file {} {digest} {stamp}", meta.len()));
            }
        }
    }
    let mut out = Tree::new();
    walk(root, root, &mut out);
    out
}

/// The task's HOME is as it was: same entries, contents, modes and mtimes.
pub fn home_untouched(before: &Tree, after: &Tree) -> Check {
    let mut changes = Vec::new();
    for (k, v) in after {
        match before.get(k) {
            None => changes.push(format!("new {k}")),
            Some(b) if b != v => changes.push(format!("changed {k}")),
            Some(_) => {}
        }
    }
    for k in before.keys() {
        if !after.contains_key(k) {
            changes.push(format!("removed {k}"));
        }
    }
    Check::new(
        NAMES[6],
        changes.is_empty(),
        if changes.is_empty() {
            format!("{} entries unchanged", before.len())
        } else {
            changes.join(", ")
        },
    )
}

/// The prompt reached the model unchanged: `prompt.txt` holds it byte for
/// byte, and a string of a request the fake server logged (`server_log`,
/// one JSON line per request with its `body`) holds it whole, but for the
/// leading and trailing whitespace some CLIs trim (Pi, Cline) or add (Qwen
/// Code's `\n\n`).
pub fn prompt_exact(prompt_file: &Path, prompt: &str, server_log: &Path) -> Check {
    let fail = |why: String| Check::new(NAMES[4], false, why);
    match crate::files::read_bounded(prompt_file, crate::files::Bound::PROMPT) {
        Ok(b) if b == prompt.as_bytes() => {}
        Ok(b) => return fail(format!("prompt.txt holds {} other bytes", b.len())),
        Err(e) => return fail(e.to_string()),
    }
    let log = match crate::files::read_bounded(server_log, crate::files::Bound::TRANSCRIPT) {
        Ok(b) => b,
        Err(e) => return fail(e.to_string()),
    };
    let needle = prompt.trim();
    let (mut requests, mut holding) = (0, 0);
    for line in log.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        requests += 1;
        let Ok(entry) = serde_json::from_slice::<serde_json::Value>(line) else {
            return fail(format!("server log line {requests} is not JSON"));
        };
        if holds(&entry["body"], needle) {
            holding += 1;
        }
    }
    Check::new(
        NAMES[4],
        holding > 0,
        format!("{holding} of {requests} logged requests hold the prompt"),
    )
}

/// Some string in `v` (keys aside) contains `needle`.
fn holds(v: &serde_json::Value, needle: &str) -> bool {
    match v {
        serde_json::Value::String(s) => s.contains(needle),
        serde_json::Value::Array(a) => a.iter().any(|x| holds(x, needle)),
        serde_json::Value::Object(o) => o.values().any(|x| holds(x, needle)),
        _ => false,
    }
}

/// The API key's value is in no file under `dir` (the rollout's session
/// dir, workdir, deliverable dir, task HOME and receipt): every regular
/// file is read in bounded chunks (links are not followed; FIFOs and
/// devices are not opened).
pub fn key_not_written(dir: &Path, key: &str) -> Check {
    let mut hits = Vec::new();
    let mut files = 0;
    scan(dir, key.as_bytes(), &mut files, &mut hits);
    Check::new(
        NAMES[7],
        hits.is_empty(),
        if hits.is_empty() {
            format!("{files} files, none holds the key's value")
        } else {
            format!("the key's value is in {}", hits.join(", "))
        },
    )
}

fn scan(dir: &Path, needle: &[u8], files: &mut usize, hits: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            scan(&p, needle, files, hits);
        } else if t.is_file() {
            *files += 1;
            if file_holds(&p, needle) {
                hits.push(p.display().to_string());
            }
        }
    }
}

/// `needle` is in the file: read 1 MiB at a time, the chunks overlapping by
/// the needle's length so a match across two is found.
fn file_holds(path: &Path, needle: &[u8]) -> bool {
    use std::io::Read as _;
    let Ok((mut f, _)) = crate::files::open_regular(path) else {
        return false;
    };
    let keep = needle.len().saturating_sub(1);
    let mut buf: Vec<u8> = Vec::with_capacity((1 << 20) + keep);
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = match f.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(needle.len()).any(|w| w == needle) {
            return true;
        }
        let cut = buf.len().saturating_sub(keep);
        buf.drain(..cut);
    }
}

/// Session data was captured and is not empty: `shforge snapshot` reads
/// at least one session with messages and a tool call from what
/// capture.json names. OpenClaw (no snapshot reader) needs a non-empty file
/// in its state dir.
pub fn captured(capture: &Capture) -> Check {
    let fail = |why: String| Check::new(NAMES[8], false, why);
    let Some(kind) = &capture.kind else {
        let Some(dir) = &capture.dir else {
            return fail("capture.json names no kind and no dir".into());
        };
        let hits = tree(Path::new(dir))
            .values()
            .filter(|d| d.starts_with("file ") && !d.starts_with("file 0 "))
            .count();
        return Check::new(NAMES[8], hits > 0, format!("{dir}: {hits} non-empty files"));
    };
    let kind: crate::snapshot::Kind = match kind.parse() {
        Ok(k) => k,
        Err(e) => return fail(format!("kind {kind:?}: {e}")),
    };
    let taken = match (&capture.db, &capture.dir) {
        (Some(db), _) => crate::snapshot::snapshot_db(kind, Path::new(db)),
        (None, Some(dir)) => crate::snapshot::snapshot_dir(kind, Path::new(dir)),
        (None, None) => return fail("capture.json names no db and no dir".into()),
    };
    match taken {
        Ok(snap) => {
            let s = &snap.summary;
            Check::new(
                NAMES[8],
                s.sessions > 0 && s.messages > 0 && !s.tool_calls.is_empty(),
                format!(
                    "snapshot: {} sessions, {} messages, {} tool calls, final text {:?}",
                    s.sessions,
                    s.messages,
                    s.tool_calls.len(),
                    s.final_text
                ),
            )
        }
        Err(e) => fail(format!("snapshot: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, text).unwrap();
        (d, p)
    }

    #[test]
    fn events_accept_stamped_json_lines_and_one_object_over_many_lines() {
        let (_d, p) = file("1796114862.128665\t{\"type\":\"a\"}\n17\t{\"b\":1}\n");
        assert!(events(&p, true, true).ok);
        let (_d, p) = file("1.5\t{\n1.6\t  \"ok\": true\n1.7\t}\n");
        let c = events(&p, true, true);
        assert!(c.ok, "{}", c.detail);
        let (_d, p) = file("{\"a\":1}\n{\"b\":2}\n");
        assert!(events(&p, false, true).ok);
    }

    #[test]
    fn events_refuse_bad_stamps_non_json_and_nothing() {
        for text in ["x1.5\t{}\n", "1.5 {}\n", "1.\t{}\n", "1.5\tnot json\n", ""] {
            let (_d, p) = file(text);
            assert!(!events(&p, true, true).ok, "{text:?}");
        }
        let (_d, p) = file("Warning: text\n{}\n");
        assert!(!events(&p, false, true).ok);
        assert!(!events(Path::new("/nonexistent/events.log"), true, true).ok);
    }

    #[test]
    fn text_output_needs_one_line_of_text_and_good_stamps() {
        let (_d, p) = file("1.5\tdone\n");
        assert!(events(&p, true, false).ok);
        let (_d, p) = file("done\n");
        assert!(events(&p, false, false).ok);
        for text in ["", "\n  \n"] {
            let (_d, p) = file(text);
            assert!(!events(&p, false, false).ok, "{text:?}");
        }
        let (_d, p) = file("x\tdone\n");
        assert!(!events(&p, true, false).ok);
    }

    #[test]
    fn home_changes_are_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join(".config")).unwrap();
        std::fs::write(d.path().join(".config/marker"), "x").unwrap();
        let before = tree(d.path());
        assert!(home_untouched(&before, &tree(d.path())).ok);
        std::fs::write(d.path().join(".config/marker"), "y").unwrap();
        std::fs::create_dir(d.path().join(".cache")).unwrap();
        let c = home_untouched(&before, &tree(d.path()));
        assert!(!c.ok);
        assert!(c.detail.contains("changed .config/marker"), "{}", c.detail);
        assert!(c.detail.contains("new .cache"), "{}", c.detail);
    }

    #[test]
    fn the_key_is_found_in_any_file_even_across_chunks() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("a/b")).unwrap();
        std::fs::write(d.path().join("a/clean"), "nothing here").unwrap();
        assert!(key_not_written(d.path(), "sk-secret").ok);
        let mut big = vec![b'x'; (1 << 20) - 3];
        big.extend_from_slice(b"sk-secret");
        std::fs::write(d.path().join("a/b/db"), &big).unwrap();
        let c = key_not_written(d.path(), "sk-secret");
        assert!(!c.ok);
        assert!(c.detail.contains("a/b/db"), "{}", c.detail);
    }

    #[test]
    fn the_prompt_must_reach_a_logged_request_whole() {
        let d = tempfile::tempdir().unwrap();
        let (prompt_file, log) = (d.path().join("prompt.txt"), d.path().join("log"));
        let prompt = "Write it.\nshforge-token=t\n";
        std::fs::write(&prompt_file, prompt).unwrap();
        std::fs::write(
            &log,
            "{\"body\":{\"m\":[{\"c\":\"Write it.\\nshforge-token=t\\n\\n\"}]}}\n",
        )
        .unwrap();
        let c = prompt_exact(&prompt_file, prompt, &log);
        assert!(c.ok, "{}", c.detail);
        std::fs::write(&log, "{\"body\":{\"m\":\"Write it. shforge-token=t\"}}\n").unwrap();
        assert!(!prompt_exact(&prompt_file, prompt, &log).ok);
        assert!(!prompt_exact(&prompt_file, "other", &log).ok);
    }

    #[test]
    fn deliverable_must_be_exactly_the_token() {
        let (_d, p) = file("tok");
        assert!(deliverable(&p, "tok").ok);
        assert!(!deliverable(&p, "tok\n").ok);
        assert!(!deliverable(&p, "to").ok);
    }

    #[test]
    fn a_marked_process_is_found_until_it_ends() {
        let marker = format!("unit-{}", std::process::id());
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env("SHFORGE_UNIT_MARK", &marker)
            .spawn()
            .unwrap();
        assert!(!no_process_left("SHFORGE_UNIT_MARK", &marker).ok);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(no_process_left("SHFORGE_UNIT_MARK", &marker).ok);
    }
}
