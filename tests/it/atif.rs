//! `shforge snapshot … --format atif` on every real fixture
//! (tests/fixtures/snapshot), validated by the real `atif` Pydantic models
//! (installed by .ci/python-tools.sh), and what the export says of runs
//! killed mid-tool.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;
use serde_json::{Value, json};
use shforge::snapshot::{self, Kind};

/// Every fixture directory with its harness, from the directory's name.
fn fixtures() -> Vec<(String, Kind, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/snapshot");
    let mut out = Vec::new();
    for e in fs::read_dir(&root).unwrap() {
        let dir = e.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let kind = Kind::ALL
            .into_iter()
            .filter(|k| name == k.name() || name.starts_with(&format!("{}-", k.name())))
            .max_by_key(|k| k.name().len())
            .unwrap_or_else(|| panic!("fixture {name}: no harness of that name"));
        let source = match kind {
            Kind::OpenCode => dir.join("opencode.db"),
            Kind::Kilo => dir.join("kilo.db"),
            _ => dir.clone(),
        };
        out.push((name, kind, source));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 10, "fixtures: {out:?}");
    out
}

/// `shforge snapshot KIND --db|--dir SOURCE EXTRA…`: its standard output.
fn cli(kind: Kind, source: &Path, extra: &[&str]) -> Vec<u8> {
    let flag = match kind {
        Kind::OpenCode | Kind::Kilo => "--db",
        _ => "--dir",
    };
    let o = Command::new(env!("CARGO_BIN_EXE_shforge"))
        .arg("snapshot")
        .arg(kind.name())
        .arg(flag)
        .arg(source)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{kind} {}: {}",
        source.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

fn export(kind: Kind, source: &Path) -> Value {
    serde_json::from_slice(&cli(kind, source, &["--format", "atif"])).unwrap()
}

/// Fixtures of runs killed mid-tool.
fn killed(name: &str) -> bool {
    name.ends_with("-midtool") || name.ends_with("-killed")
}

/// The python of the venv .ci/python-tools.sh makes, when it has `atif`;
/// else a loud skip, or a failure under SHFORGE_REQUIRE_SHELLS=1.
fn atif_python(test: &str) -> Option<PathBuf> {
    let py = std::env::var_os("SHFORGE_ATIF_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/shforge/venv-atif/bin/python"));
    let ok = Command::new(&py)
        .args(["-c", "import atif; atif.Trajectory"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(py);
    }
    let what = format!(
        "the `atif` Python package at {} (run .ci/python-tools.sh, or set SHFORGE_ATIF_PYTHON)",
        py.display()
    );
    if std::env::var("SHFORGE_REQUIRE_SHELLS").as_deref() == Ok("1") {
        panic!("{test} needs {what} (SHFORGE_REQUIRE_SHELLS=1 forbids skipping)");
    }
    support::loud(&format!("SKIPPING {test}: needs {what}"));
    None
}

/// Load each file into `atif.Trajectory` (the package's top-level model);
/// one line per file, `ok PATH` or `FAIL PATH: why`.
const VALIDATE: &str = r#"
import sys, atif
bad = 0
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as f:
            t = atif.Trajectory.model_validate_json(f.read())
        assert t.schema_version.startswith("ATIF-v"), t.schema_version
        print("ok", path)
    except Exception as e:
        bad += 1
        print("FAIL", path + ":", str(e).replace("\n", " | "))
sys.exit(1 if bad else 0)
"#;

/// Validate documents with the real models: panics naming each one refused.
fn validate(py: &Path, docs: &[(String, Vec<u8>)]) {
    let tmp = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, bytes) in docs {
        let p = tmp.path().join(format!("{name}.atif.json"));
        fs::write(&p, bytes).unwrap();
        paths.push(p);
    }
    let o = Command::new(py)
        .arg("-c")
        .arg(VALIDATE)
        .args(&paths)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "atif refused:\n{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("ok ")).count(),
        docs.len()
    );
}

#[test]
fn every_fixture_exports_a_trajectory_the_atif_models_accept() {
    let Some(py) = atif_python("every_fixture_exports_a_trajectory_the_atif_models_accept") else {
        return;
    };
    let docs: Vec<(String, Vec<u8>)> = fixtures()
        .into_iter()
        .map(|(name, kind, source)| {
            let bytes = cli(kind, &source, &["--format", "atif"]);
            (name, bytes)
        })
        .collect();
    for kind in Kind::ALL {
        assert!(
            docs.iter().any(|(n, _)| n.starts_with(kind.name())),
            "no fixture for {kind}"
        );
    }
    validate(&py, &docs);
}

#[test]
fn the_default_format_is_json_and_unchanged() {
    for (name, kind, source) in fixtures() {
        let default = cli(kind, &source, &[]);
        assert_eq!(default, cli(kind, &source, &["--format", "json"]), "{name}");
        let v: Value = serde_json::from_slice(&default).unwrap();
        assert!(v.get("schema_version").is_none(), "{name}");
        let calls = v["summary"]["tool_calls"].as_array().unwrap().clone();
        let marked: Vec<&Value> = calls
            .iter()
            .filter(|c| c.get("unfinished").is_some())
            .collect();
        if kind == Kind::GeminiCli && killed(&name) {
            // Gemini CLI records a tool call only once it has finished:
            // its killed run has no call at all.
            assert!(calls.is_empty(), "{name}: {calls:?}");
        } else if killed(&name) {
            // Exactly the last call is cut off, and says so.
            assert_eq!(marked.len(), 1, "{name}: {calls:?}");
            assert_eq!(calls.last().unwrap()["unfinished"], true, "{name}");
        } else {
            // A finished run's document has no such key at all.
            assert!(marked.is_empty(), "{name}: {calls:?}");
        }
    }
}

#[test]
fn steps_are_numbered_and_every_result_answers_a_call_of_its_step() {
    for (name, kind, source) in fixtures() {
        let t = export(kind, &source);
        assert_eq!(t["schema_version"], snapshot::atif::SCHEMA_VERSION);
        assert_eq!(t["agent"]["name"], kind.name(), "{name}");
        // What each harness records of itself (docs/capture.md's table).
        let version = match kind {
            Kind::ClaudeCode => "2.1.332",
            Kind::Codex => "0.171.0",
            Kind::QwenCode => "0.24.4",
            Kind::Cline => "3.0.65",
            Kind::CopilotCli => "1.0.102",
            Kind::MiniSweAgent => "2.4.6",
            _ => "unknown",
        };
        assert_eq!(t["agent"]["version"], version, "{name}");
        // Kimi CLI's context.jsonl names no model (its config.toml does).
        let model = if kind == Kind::KimiCli {
            Value::Null
        } else {
            "fake-model".into()
        };
        assert_eq!(t["agent"]["model_name"], model, "{name}");
        let steps = t["steps"].as_array().unwrap();
        assert!(!steps.is_empty(), "{name}");
        for (i, s) in steps.iter().enumerate() {
            assert_eq!(s["step_id"], i + 1, "{name}");
            let ids: Vec<&Value> = s["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| &c["tool_call_id"])
                .collect();
            for r in s["observation"]["results"].as_array().into_iter().flatten() {
                assert!(ids.contains(&&r["source_call_id"]), "{name}: {r}");
            }
        }
        assert_eq!(t["final_metrics"]["total_steps"], steps.len(), "{name}");
        // The first step is what the user (or Codex's developer prompt) said.
        assert!(
            matches!(steps[0]["source"].as_str(), Some("user" | "system")),
            "{name}"
        );
    }
}

#[test]
fn a_run_killed_mid_tool_exports_its_last_call_unfinished() {
    let all = fixtures();
    // Gemini CLI writes a tool call only once it finished: a run killed
    // mid-tool has no call to mark (see the_default_format_is_json…).
    // Continue CLI writes its session only when the run ends: a run killed
    // mid-tool leaves no session file (checked with the real CLI).
    // Kimi CLI: no run killed mid-tool has been captured yet (left open).
    // Mistral Vibe: none captured yet either (left open).
    let no_cut = [
        Kind::GeminiCli,
        Kind::ContinueCli,
        Kind::KimiCli,
        Kind::MistralVibe,
    ];
    for kind in Kind::ALL.into_iter().filter(|k| !no_cut.contains(k)) {
        // Each harness has a run KILLed and one TERMinated mid-tool; Qwen
        // Code answers its running call on TERM (an error result,
        // "[Operation Cancelled]"), so only its KILLed run is unfinished.
        // Cline goes on through TERM (its tool's own 30 s timeout ends
        // it, then it answers): that run is cline-toolerror.
        let ends: &[&str] = match kind {
            // Only a KILLed run was captured (no TERM fixture yet).
            Kind::CopilotCli => &["midtool"],
            // mini-swe-agent is KILLed only: boot.py's save after each
            // answer is all a TERM would leave too (no handler of its own).
            Kind::QwenCode | Kind::Cline | Kind::MiniSweAgent => &["midtool"],
            _ => &["midtool", "killed"],
        };
        for end in ends {
            let want = format!("{}-{end}", kind.name());
            assert!(all.iter().any(|(n, ..)| *n == want), "no fixture {want}");
        }
    }
    let cut = |n: &String, k: Kind| killed(n) && k != Kind::GeminiCli;
    for (name, kind, source) in fixtures().into_iter().filter(|(n, k, _)| cut(n, *k)) {
        let t = export(kind, &source);
        let shforge = &t["extra"]["shforge"];
        assert_eq!(shforge["finished"], false, "{name}");
        assert_eq!(shforge["harness"], kind.name(), "{name}");
        assert_eq!(shforge["outcome"], Value::Null, "{name}");
        let steps = t["steps"].as_array().unwrap();
        let last = steps.last().unwrap();
        assert_eq!(last["source"], "agent", "{name}");
        let call = last["tool_calls"].as_array().unwrap().last().unwrap();
        assert_eq!(call["extra"]["status"], "unfinished", "{name}");
        let id = &call["tool_call_id"];
        // No result for it anywhere, and the root lists it.
        for s in steps {
            for r in s["observation"]["results"].as_array().into_iter().flatten() {
                assert_ne!(&r["source_call_id"], id, "{name}");
            }
        }
        let listed = shforge["unfinished_tool_calls"].as_array().unwrap();
        assert_eq!(listed.len(), 1, "{name}");
        assert_eq!(&listed[0]["tool_call_id"], id, "{name}");
        assert_eq!(listed[0]["tool"], call["function_name"], "{name}");
    }
}

#[test]
fn a_finished_run_has_every_call_answered_and_per_step_metrics() {
    for (name, kind, source) in fixtures().into_iter().filter(|(n, ..)| !killed(n)) {
        let t = export(kind, &source);
        // A run whose every request was refused (mistral-vibe-auth) never
        // finished: the user's message alone, no answer.
        if name.ends_with("-auth") {
            assert_eq!(t["extra"]["shforge"]["finished"], false, "{name}");
            continue;
        }
        assert_eq!(t["extra"]["shforge"]["finished"], true, "{name}");
        let steps = t["steps"].as_array().unwrap();
        let mut prompt = 0;
        let mut completion = 0;
        for s in steps {
            for c in s["tool_calls"].as_array().into_iter().flatten() {
                assert_ne!(c["extra"]["status"], "unfinished", "{name}");
                let answered = s["observation"]["results"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r["source_call_id"] == c["tool_call_id"]);
                assert!(answered, "{name}: {c}");
            }
            prompt += s["metrics"]["prompt_tokens"].as_u64().unwrap_or(0);
            completion += s["metrics"]["completion_tokens"].as_u64().unwrap_or(0);
        }
        // The fake model answered two requests of 120 in / 7 out: each
        // agent step carries its own, and they add up to the total.
        // Qwen Code's and Gemini CLI's fixtures were made later, when the
        // fake server counted the request's size.
        let want = match (kind, name.as_str()) {
            (Kind::QwenCode, _) => (38168, 23),
            (Kind::GeminiCli, _) => (24367, 25),
            (Kind::Cline, "cline") => (11057, 25),
            (Kind::Cline, _) => (11058, 27),
            (Kind::Hermes, _) => (23022, 24),
            (Kind::Stirrup, _) => (1055, 34),
            // NOOA's r2 boot.py records litellm's usage of each answer;
            // the r1 fixtures (`nooa`, …) have none.
            (Kind::Nooa, "nooa-usage") => (10777, 57),
            (Kind::Nooa, _) => (0, 0),
            (Kind::ContinueCli, _) => (4088, 26),
            (Kind::CopilotCli, _) => (24128, 26),
            // litellm's usage of the fake server's two answers.
            (Kind::MiniSweAgent, _) => (1775, 39),
            // Kimi CLI's wire.jsonl StatusUpdate sums (context.jsonl has none).
            (Kind::KimiCli, _) => (24649, 34),
            // Mistral Vibe's meta.json session totals (no per-answer usage).
            (Kind::MistralVibe, "mistral-vibe") => (10200, 25),
            (Kind::MistralVibe, _) => (10226, 25),
            _ => (240, 14),
        };
        // Hermes records its tokens per session only: no step has metrics.
        // So do Mistral Vibe (meta.json's stats) and Kimi CLI (wire.jsonl).
        let per_step = if matches!(kind, Kind::Hermes | Kind::MistralVibe | Kind::KimiCli) {
            (0, 0)
        } else {
            want
        };
        assert_eq!((prompt, completion), per_step, "{name}");
        assert_eq!(t["final_metrics"]["total_prompt_tokens"], want.0, "{name}");
        assert_eq!(
            t["final_metrics"]["total_completion_tokens"], want.1,
            "{name}"
        );
        let last = steps.last().unwrap();
        assert_eq!(last["source"], "agent", "{name}");
        assert_eq!(last["message"], "done", "{name}");
    }
}

#[test]
fn an_outcome_given_lands_in_the_extra_field_and_stays_valid() {
    let (_, kind, source) = fixtures()
        .into_iter()
        .find(|(n, ..)| n == "opencode-midtool")
        .unwrap();
    let snap = snapshot::snapshot(kind, &source).unwrap();
    let outcome = json!({"status": "timed_out", "cause": "deadline"});
    let bytes = snapshot::atif::to_atif(&snap, Some(&outcome));
    let t: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(t["extra"]["shforge"]["outcome"], outcome);
    assert_eq!(snap.to_atif(), snapshot::atif::to_atif(&snap, None));
    if let Some(py) = atif_python("an_outcome_given_lands_in_the_extra_field_and_stays_valid") {
        validate(&py, &[("with-outcome".into(), bytes)]);
    }
}

/// A transcript with what a harness could write but ATIF cannot take as
/// is: a timestamp that is not ISO 8601, tool arguments that are a string,
/// a result whose call is not in the transcript. The export leaves the
/// timestamp out, wraps the arguments, and makes the orphan result a
/// system observation, so it still validates.
#[test]
fn odd_transcripts_still_export_valid_trajectories() {
    let (_, _, source) = fixtures()
        .into_iter()
        .find(|(n, ..)| n == "claude-code")
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    support::copy_tree(&source, tmp.path());
    let file = walk_jsonl(tmp.path());
    let text = fs::read_to_string(&file).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for v in &mut lines {
        if v["type"] == "assistant" {
            v["timestamp"] = json!("yesterday at noon");
            if let Some(blocks) = v["message"]["content"].as_array_mut() {
                for b in blocks {
                    if b["type"] == "tool_use" {
                        b["input"] = json!("echo hi");
                    }
                }
            }
        }
        if v["type"] == "user"
            && let Some(blocks) = v["message"]["content"].as_array_mut()
        {
            for b in blocks {
                if b["type"] == "tool_result" {
                    b["tool_use_id"] = json!("toolu_not_in_this_transcript");
                }
            }
        }
    }
    let out: String = lines.iter().map(|v| format!("{v}\n")).collect();
    fs::write(&file, out).unwrap();
    let t = export(Kind::ClaudeCode, tmp.path());
    let steps = t["steps"].as_array().unwrap();
    let agent = steps.iter().find(|s| s["tool_calls"].is_array()).unwrap();
    assert!(agent.get("timestamp").is_none(), "{agent}");
    assert_eq!(
        agent["tool_calls"][0]["arguments"],
        json!({"input": "echo hi"})
    );
    let orphan = steps
        .iter()
        .find(|s| s["source"] == "system")
        .expect("the orphan result's step");
    let r = &orphan["observation"]["results"][0];
    assert!(r.get("source_call_id").is_none(), "{r}");
    assert_eq!(r["extra"]["orphan_call_id"], "toolu_not_in_this_transcript");
    if let Some(py) = atif_python("odd_transcripts_still_export_valid_trajectories") {
        validate(&py, &[("odd".into(), serde_json::to_vec(&t).unwrap())]);
    }
}

fn walk_jsonl(dir: &Path) -> PathBuf {
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                return p;
            }
        }
    }
    panic!("no transcript under {}", dir.display());
}

/// Subagent sessions (OpenCode's `parent_id`) become embedded
/// `subagent_trajectories` with their own `trajectory_id`; several
/// top-level sessions are concatenated with `notes` saying so. Made from
/// the real OpenCode fixture's session, copied under other ids.
#[test]
fn subagents_and_several_sessions_export_valid_trajectories() {
    let (_, kind, source) = fixtures()
        .into_iter()
        .find(|(n, ..)| n == "opencode")
        .unwrap();
    let mut snap = snapshot::snapshot(kind, &source).unwrap();
    let parent = snap.sessions[0].clone();
    let mut child = parent.clone();
    child.id = "ses_child".into();
    child.parent_id = Some(parent.id.clone());
    let mut second = parent.clone();
    second.id = "ses_second".into();
    snap.sessions.extend([child, second]);
    let bytes = snap.to_atif();
    let t: Value = serde_json::from_slice(&bytes).unwrap();
    let subs = t["subagent_trajectories"].as_array().unwrap();
    assert_eq!(subs.len(), 1);
    assert_eq!(subs[0]["trajectory_id"], "ses_child");
    assert_eq!(
        subs[0]["extra"]["shforge"]["parent_session_id"],
        parent.id.as_str()
    );
    let steps = t["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6, "two top-level sessions of 3 steps");
    assert_eq!(steps[5]["extra"]["session_id"], "ses_second");
    assert!(
        t["notes"]
            .as_str()
            .unwrap()
            .contains("2 top-level sessions")
    );
    assert_eq!(t["extra"]["shforge"]["sessions"], 3);
    if let Some(py) = atif_python("subagents_and_several_sessions_export_valid_trajectories") {
        validate(&py, &[("subagents".into(), bytes)]);
    }
}

/// `--out` writes the ATIF document whole, the same bytes as stdout.
#[test]
fn out_writes_the_atif_document() {
    let (_, kind, source) = fixtures()
        .into_iter()
        .find(|(n, ..)| n == "codex-killed")
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("t.json");
    let stdout = cli(
        kind,
        &source,
        &["--format", "atif", "--out", out.to_str().unwrap()],
    );
    assert!(stdout.is_empty());
    assert_eq!(
        fs::read(&out).unwrap(),
        cli(kind, &source, &["--format", "atif"])
    );
}

#[test]
fn an_unknown_format_is_a_usage_error() {
    let (_, _, source) = fixtures().into_iter().find(|(n, ..)| n == "pi").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_shforge"))
        .args(["snapshot", "pi", "--dir"])
        .arg(&source)
        .args(["--format", "yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("json") && err.contains("atif"), "{err}");
}
