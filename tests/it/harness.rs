//! `shforge harness`: every profile × every API it allows (params, config,
//! capture.json), API mismatches, hostile prompts delivered byte for byte
//! through the real runner, and the API key never written anywhere;
//! `--base-url` row by row; and, against the real pinned CLIs, a model
//! full of config references (`{file:…}`, `{env:…}`, `${…}`, `!cmd`) sent
//! verbatim with no secret read.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use shforge::harness::{Api, Harness};

const SECRET: &str = "sk-shforge-test-SECRET-9f8e7d";

fn shforge_harness<S: AsRef<std::ffi::OsStr>>(args: &[S], envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new(support::shforge());
    c.arg("harness").args(args);
    for (k, v) in envs {
        c.env(k, v);
    }
    support::run(c)
}

struct Made {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    work: PathBuf,
}

/// Write a session for `h`/`api` into a fresh temp dir; the session dir
/// inside the "sandbox" is the host dir itself, so the runner can use it.
fn make(h: Harness, api: Option<Api>, mode: &str, prompt_file: &Path, entry: &str) -> Made {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("session");
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut args = vec![
        h.name().to_owned(),
        "--out".into(),
        dir.display().to_string(),
        "--session-dir".into(),
        dir.display().to_string(),
        "--workdir".into(),
        work.display().to_string(),
        "--entry".into(),
        entry.into(),
        "--base-url".into(),
        "http://127.0.0.1:4321/".into(),
        "--model".into(),
        "fake-model".into(),
        "--mode".into(),
        mode.into(),
        "--prompt-file".into(),
        prompt_file.display().to_string(),
    ];
    if let Some(api) = api {
        args.extend(["--api".into(), api.name().into()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // The key is in shforge's own environment under every name it could
    // read: it must still never be written.
    let out = shforge_harness(
        &args,
        &[("OPENAI_API_KEY", SECRET), ("ANTHROPIC_API_KEY", SECRET)],
    );
    assert!(
        out.status.success(),
        "{h} {api:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Made {
        _tmp: tmp,
        dir,
        work,
    }
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Source params.sh under bash and print each RUNNER_* value NUL-separated.
fn sourced(params: &Path) -> Vec<(String, Vec<String>)> {
    let script = r#"
set -u
source "$1"
for n in RUNNER_ARGV RUNNER_ENV; do
  eval "set -- \"\${$n[@]}\""
  printf '%s\0' "$n" "$#"; printf '%s\0' "$@"
done
for n in RUNNER_MODE RUNNER_CWD RUNNER_STDIN RUNNER_ARG_FILE RUNNER_STDOUT RUNNER_STDERR RUNNER_EVENTS; do
  if [[ -n ${!n+set} ]]; then printf '%s\0' "$n" 1 "${!n}"; fi
done
"#;
    let out = Command::new("bash")
        .args(["-c", script, "x"])
        .arg(params)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut fields = out
        .stdout
        .split(|b| *b == 0)
        .map(|f| String::from_utf8(f.to_vec()).unwrap());
    let mut vars = Vec::new();
    while let Some(name) = fields.next() {
        if name.is_empty() {
            break;
        }
        let n: usize = fields.next().unwrap().parse().unwrap();
        vars.push((name, (0..n).map(|_| fields.next().unwrap()).collect()));
    }
    vars
}

fn var<'a>(vars: &'a [(String, Vec<String>)], name: &str) -> Option<&'a [String]> {
    vars.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_slice())
}

fn env_of(vars: &[(String, Vec<String>)], name: &str) -> Option<String> {
    var(vars, "RUNNER_ENV")?
        .iter()
        .rev()
        .find_map(|e| e.strip_prefix(&format!("{name}=")).map(String::from))
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Only RUNNER_* names are assigned in `params` (a line that assigns no
/// name is the body of a quoted RUNNER_SETUP: the key copy of a CLI whose
/// key variable is not the API's default, e.g. Copilot CLI's
/// COPILOT_PROVIDER_API_KEY).
fn only_runner_names(params: &Path, ctx: &str) {
    let text = std::fs::read_to_string(params).unwrap();
    let is_name =
        |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    for line in text.lines() {
        let assigns = line
            .split_once(['=', '['])
            .is_some_and(|(name, _)| is_name(name));
        assert!(!assigns || line.starts_with("RUNNER_"), "{ctx}: {line}");
    }
    assert!(text.starts_with("RUNNER_"), "{ctx}");
}

#[test]
fn every_profile_and_api_writes_params_config_and_capture() {
    let tmp = tempfile::tempdir().unwrap();
    let prompt = tmp.path().join("prompt");
    std::fs::write(&prompt, "write the token").unwrap();
    for h in Harness::ALL {
        for &api in h.apis() {
            for mode in ["events", "direct"] {
                let m = make(h, Some(api), mode, &prompt, "/opt/harness/bin/cli");
                let d = m.dir.display().to_string();
                let vars = sourced(&m.dir.join("params.sh"));
                let ctx = format!("{h} {api} {mode}");
                only_runner_names(&m.dir.join("params.sh"), &ctx);
                let argv = var(&vars, "RUNNER_ARGV").unwrap();
                assert_eq!(argv[0], "/opt/harness/bin/cli", "{ctx}");
                assert!(
                    !argv.iter().any(|a| a.contains("write the token")),
                    "{ctx}: prompt in argv"
                );
                assert_eq!(var(&vars, "RUNNER_MODE").unwrap(), [mode], "{ctx}");
                assert_eq!(
                    var(&vars, "RUNNER_CWD").unwrap(),
                    [m.work.display().to_string()],
                    "{ctx}"
                );
                assert_eq!(
                    var(&vars, "RUNNER_STDERR").unwrap(),
                    [format!("{d}/stderr.log")],
                    "{ctx}"
                );
                match mode {
                    "events" => {
                        assert_eq!(
                            var(&vars, "RUNNER_EVENTS").unwrap(),
                            [format!("{d}/events.log")]
                        );
                        assert!(var(&vars, "RUNNER_STDOUT").is_none());
                    }
                    _ => assert_eq!(
                        var(&vars, "RUNNER_STDOUT").unwrap(),
                        [format!("{d}/stdout.log")]
                    ),
                }
                // The prompt reaches the CLI from prompt.txt: as stdin, as
                // OpenClaw's message file, or read into Cline's last argv
                // word by the runner (never in params.sh).
                let prompt_path = format!("{d}/prompt.txt");
                if h == Harness::Cline {
                    assert!(var(&vars, "RUNNER_STDIN").is_none(), "{ctx}");
                    assert_eq!(
                        var(&vars, "RUNNER_ARG_FILE").unwrap(),
                        std::slice::from_ref(&prompt_path),
                        "{ctx}"
                    );
                } else if matches!(
                    h,
                    Harness::OpenClaw
                        | Harness::Hermes
                        | Harness::Stirrup
                        | Harness::Nooa
                        | Harness::MiniSweAgent
                ) {
                    assert!(var(&vars, "RUNNER_STDIN").is_none(), "{ctx}");
                    let flag = ["--message-file", "--prompt-file"];
                    let i = argv
                        .iter()
                        .position(|a| flag.contains(&a.as_str()))
                        .unwrap();
                    assert_eq!(argv[i + 1], prompt_path);
                } else {
                    assert_eq!(
                        var(&vars, "RUNNER_STDIN").unwrap(),
                        std::slice::from_ref(&prompt_path),
                        "{ctx}"
                    );
                }
                assert_eq!(std::fs::read(&prompt_path).unwrap(), b"write the token");
                // Isolated dirs exist, are empty, and the env points at them.
                for (name, rel) in [
                    ("HOME", "home"),
                    ("TMPDIR", "tmp"),
                    ("XDG_CONFIG_HOME", "xdg/config"),
                    ("XDG_CACHE_HOME", "xdg/cache"),
                    ("XDG_DATA_HOME", "xdg/data"),
                    ("XDG_STATE_HOME", "xdg/state"),
                ] {
                    assert_eq!(
                        env_of(&vars, name).unwrap(),
                        format!("{d}/{rel}"),
                        "{ctx} {name}"
                    );
                    // Empty, but for the (empty) dir of OpenCode's/Kilo's DB.
                    for e in std::fs::read_dir(m.dir.join(rel)).unwrap() {
                        let p = e.unwrap().path();
                        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
                        assert!(
                            rel == "xdg/data" && name == h.name(),
                            "{ctx}: {} in {rel}",
                            p.display()
                        );
                        assert_eq!(std::fs::read_dir(&p).unwrap().count(), 0, "{ctx}");
                    }
                }
                // Every path in the params points into the session dir, the
                // workdir, or is the entry.
                for v in argv.iter().chain(var(&vars, "RUNNER_ENV").unwrap()) {
                    let v = v.split_once('=').map_or(v.as_str(), |(_, v)| v);
                    if v.starts_with('/') {
                        assert!(
                            v.starts_with(&d)
                                || v == m.work.to_str().unwrap()
                                || v.starts_with("/opt/harness"),
                            "{ctx}: {v} outside the session dir"
                        );
                    }
                }
                check_profile(h, api, &m.dir, &vars, &ctx);
            }
        }
    }
}

/// Hermes: the prompt by file (boot.py turns it into -z in-process),
/// HERMES_HOME and its config.yaml, written as JSON (which YAML reads).
fn check_hermes(
    d: &str,
    argv: &[String],
    vars: &[(String, Vec<String>)],
    dir: &Path,
    capture: &serde_json::Value,
    ctx: &str,
) {
    let flag = ["--prompt-file".to_owned(), format!("{d}/prompt.txt")];
    assert!(argv.windows(2).any(|w| w == flag), "{ctx}");
    assert_eq!(
        env_of(vars, "HERMES_HOME").unwrap(),
        format!("{d}/hermes-home")
    );
    let cfg = json(&dir.join("hermes-home/config.yaml"));
    assert_eq!(cfg["model"]["provider"], "custom");
    assert_eq!(cfg["model"]["base_url"], "http://127.0.0.1:4321/v1");
    assert_eq!(cfg["model"]["default"], serde_json::Value::Null);
    assert_eq!(cfg["model"]["api_key"], "");
    // No env probe running the task's python3/pip, no lazy `uv pip install`.
    assert_eq!(cfg["agent"]["environment_probe"], false);
    assert_eq!(cfg["security"]["allow_lazy_installs"], false);
    // The model in argv: Hermes expands ${VAR} in config values, not argv.
    assert!(argv.iter().any(|a| a == "--model=fake-model"), "{ctx}");
    assert_eq!(capture["kind"], "hermes");
    assert_eq!(capture["dir"], format!("{d}/hermes-home"));
}

/// Stirrup and NOOA: boot.py's options carry the prompt file, the provider
/// and the state dir `STATE` (their files and transcript, the capture,
/// read by the snapshot kind `kind`); no config file, no provider variable
/// in the environment.
fn check_boot_py(
    d: &str,
    argv: &[String],
    vars: &[(String, Vec<String>)],
    capture: &serde_json::Value,
    ctx: &str,
    (state, kind): (&str, serde_json::Value),
) {
    let pairs = [
        ["--prompt-file".to_owned(), format!("{d}/prompt.txt")],
        ["--model".to_owned(), "fake-model".to_owned()],
        [
            "--base-url".to_owned(),
            "http://127.0.0.1:4321/v1".to_owned(),
        ],
        ["--state-dir".to_owned(), format!("{d}/{state}")],
    ];
    for pair in &pairs {
        assert!(
            argv.windows(2).any(|w| w == pair),
            "{ctx}: {pair:?} in {argv:?}"
        );
    }
    for name in ["OPENAI_BASE_URL", "OPENROUTER_API_KEY"] {
        assert!(env_of(vars, name).is_none(), "{ctx}: {name}");
    }
    assert_eq!(capture["kind"], kind, "{ctx}");
    assert_eq!(capture["dir"], format!("{d}/{state}"));
}

/// Per-harness config and capture.json.
fn check_profile(h: Harness, api: Api, dir: &Path, vars: &[(String, Vec<String>)], ctx: &str) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    let capture = json(&dir.join("capture.json"));
    assert_eq!(capture["harness"], h.name(), "{ctx}");
    match h {
        Harness::ClaudeCode => check_claude_code(dir, vars, &capture, ctx),
        Harness::OpenCode | Harness::Kilo => {
            check_opencode_or_kilo(h, api, dir, vars, &capture, ctx)
        }
        Harness::Pi => check_pi(api, dir, vars, &capture, ctx),
        Harness::OpenClaw => check_openclaw(api, dir, vars, &capture, ctx),
        Harness::Codex => check_codex(api, dir, vars, &capture, ctx),
        Harness::QwenCode => check_qwen_code(api, dir, vars, ctx),
        Harness::GeminiCli => check_gemini_cli(dir, vars, &capture, ctx),
        Harness::Cline => check_cline(api, dir, vars, &capture, ctx),
        Harness::Hermes => check_hermes(&d, argv, vars, dir, &capture, ctx),
        Harness::Stirrup => {
            let state = ("stirrup-state", "stirrup".into());
            check_boot_py(&d, argv, vars, &capture, ctx, state);
        }
        Harness::Nooa => {
            let state = ("nooa-state", "nooa".into());
            check_boot_py(&d, argv, vars, &capture, ctx, state);
        }
        Harness::ContinueCli => check_continue_cli(api, dir, vars, &capture, ctx),
        Harness::CopilotCli => check_copilot_cli(api, dir, vars, &capture, ctx),
        Harness::MiniSweAgent => {
            let state = ("mini-swe-agent-state", "mini-swe-agent".into());
            check_boot_py(&d, argv, vars, &capture, ctx, state);
        }
        Harness::KimiCli => check_kimi_cli(dir, vars, &capture, ctx),
        Harness::MistralVibe => check_mistral_vibe(api, dir, vars, &capture, ctx),
    }
    no_secret_written(dir, ctx);
}

/// Continue CLI's part of [`check_profile`]: `cn -p` with its config.yaml
/// (JSON, which YAML reads), the key a `${{ secrets.VAR }}` reference.
fn check_continue_cli(
    api: Api,
    dir: &Path,
    vars: &[(String, Vec<String>)],
    capture: &Value,
    ctx: &str,
) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    let config = format!("{d}/continue/config.yaml");
    let want = ["-p", "--auto", "--format=json", "--config", config.as_str()];
    assert_eq!(&argv[1..], want, "{ctx}");
    let home = format!("{d}/continue");
    assert_eq!(env_of(vars, "CONTINUE_GLOBAL_DIR").unwrap(), home);
    assert_eq!(env_of(vars, "CONTINUE_METRICS_ENABLED").unwrap(), "0");
    // Set, so that a task's .env cannot set it (dotenv keeps what is set).
    assert_eq!(env_of(vars, "OTEL_EXPORTER_OTLP_ENDPOINT").unwrap(), "");
    let text = std::fs::read_to_string(&config).unwrap();
    let model = &serde_json::from_str::<Value>(&text).unwrap()["models"][0];
    assert_eq!(model["provider"], "openai", "{ctx}");
    assert_eq!(model["apiBase"], "http://127.0.0.1:4321/v1", "{ctx}");
    let reference = format!("${{{{ secrets.{} }}}}", api.default_key_env());
    assert_eq!(model["apiKey"], reference, "{ctx}");
    assert_eq!(capture["kind"], "continue-cli");
    assert_eq!(capture["dir"], home);
}

/// Copilot CLI's part of [`check_profile`]: BYOK through its environment,
/// offline, the key in `COPILOT_PROVIDER_API_KEY`.
fn check_copilot_cli(
    api: Api,
    dir: &Path,
    vars: &[(String, Vec<String>)],
    capture: &Value,
    ctx: &str,
) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    let has = |flags: &[&str]| argv.windows(flags.len()).any(|w| w == flags);
    assert!(has(&["--yolo", "--output-format=json"]), "{ctx}");
    assert!(has(&["--no-custom-instructions"]), "{ctx}");
    assert!(has(&["--model=fake-model"]), "{ctx}");
    assert!(
        !argv.iter().any(|a| a == "-p"),
        "{ctx}: the prompt is stdin"
    );
    let home = format!("{d}/copilot");
    assert_eq!(env_of(vars, "COPILOT_HOME").unwrap(), home);
    assert_eq!(env_of(vars, "COPILOT_OFFLINE").unwrap(), "true");
    assert_eq!(
        env_of(vars, "COPILOT_PROVIDER_BASE_URL").unwrap(),
        "http://127.0.0.1:4321/v1"
    );
    let wire = if api == Api::Responses {
        "responses"
    } else {
        "completions"
    };
    assert_eq!(env_of(vars, "COPILOT_PROVIDER_WIRE_API").unwrap(), wire);
    assert_eq!(
        env_of(vars, "COPILOT_PROVIDER_API_KEY_COMMAND").unwrap(),
        ""
    );
    assert_eq!(env_of(vars, "COPILOT_CLI_DIST_DIR").unwrap(), "");
    assert_eq!(capture["kind"], "copilot-cli");
    assert_eq!(capture["dir"], home);
}

/// Kimi CLI's part of [`check_profile`]: `kimi --print` (prompt on stdin),
/// its share dir in the session, our endpoint and model over every
/// `KIMI_*` override of the task's, config.toml naming no key.
fn check_kimi_cli(dir: &Path, vars: &[(String, Vec<String>)], capture: &Value, ctx: &str) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    assert!(
        argv.windows(3)
            .any(|w| w == ["--print", "--output-format", "stream-json"]),
        "{ctx}"
    );
    let share = format!("{d}/kimi-share");
    assert_eq!(env_of(vars, "KIMI_SHARE_DIR").unwrap(), share, "{ctx}");
    assert_eq!(
        env_of(vars, "KIMI_BASE_URL").unwrap(),
        "http://127.0.0.1:4321/v1"
    );
    assert_eq!(env_of(vars, "KIMI_MODEL_NAME").unwrap(), "fake-model");
    for v in [
        "KIMI_SCRIPTED_ECHO_SCRIPTS",
        "KIMI_CODE_BASE_URL",
        "KIMI_OAUTH_HOST",
    ] {
        assert_eq!(env_of(vars, v).unwrap(), "", "{ctx}: {v}");
    }
    let config = std::fs::read_to_string(dir.join("kimi-share/config.toml")).unwrap();
    let config: toml::Value = toml::from_str(&config).unwrap();
    assert_eq!(config["telemetry"].as_bool(), Some(false), "{ctx}");
    assert_eq!(config["providers"]["shforge"]["api_key"].as_str(), Some(""));
    assert_eq!(capture["kind"], "kimi-cli");
    assert_eq!(capture["dir"], share);
}

/// Claude Code's part of [`check_profile`].
fn check_claude_code(dir: &Path, vars: &[(String, Vec<String>)], capture: &Value, ctx: &str) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    let has = |flags: &[&str]| argv.windows(flags.len()).any(|w| w == flags);
    assert!(
        has(&["-p", "--output-format", "stream-json", "--verbose"]),
        "{ctx}"
    );
    // The variadic --allowedTools is followed by another option.
    let i = argv.iter().position(|a| a == "--allowedTools").unwrap();
    assert!(argv[i + 2].starts_with("--"), "{ctx}");
    assert_eq!(
        env_of(vars, "ANTHROPIC_BASE_URL").unwrap(),
        "http://127.0.0.1:4321"
    );
    assert_eq!(
        env_of(vars, "CLAUDE_CONFIG_DIR").unwrap(),
        format!("{d}/claude")
    );
    assert_eq!(env_of(vars, "DISABLE_TELEMETRY").unwrap(), "1");
    let settings = json(&dir.join("claude/settings.json"));
    assert!(
        settings["permissions"]["allow"]
            .as_array()
            .unwrap()
            .contains(&"Write".into())
    );
    assert_eq!(capture["kind"], "claude-code");
    assert_eq!(capture["dir"], format!("{d}/claude"));
}

/// OpenCode's and Kilo's part of [`check_profile`].
fn check_opencode_or_kilo(
    h: Harness,
    api: Api,
    dir: &Path,
    vars: &[(String, Vec<String>)],
    capture: &Value,
    ctx: &str,
) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    let has = |flags: &[&str]| argv.windows(flags.len()).any(|w| w == flags);
    let key = api.default_key_env();
    let (name, up) = if h == Harness::Kilo {
        ("kilo", "KILO")
    } else {
        ("opencode", "OPENCODE")
    };
    assert!(has(&["run", "--format", "json"]), "{ctx}");
    assert!(has(&["-m", "shforge/fake-model"]), "{ctx}");
    assert_eq!(
        env_of(vars, &format!("{up}_CONFIG")).unwrap(),
        format!("{d}/{name}.json")
    );
    let db = format!("{d}/xdg/data/{name}/{name}.db");
    assert_eq!(env_of(vars, &format!("{up}_DB")).unwrap(), db);
    assert_eq!(
        env_of(vars, &format!("{up}_DISABLE_AUTOUPDATE")).unwrap(),
        "1"
    );
    assert_eq!(
        env_of(vars, &format!("{up}_DISABLE_MODELS_FETCH")).unwrap(),
        "1"
    );
    let cfg = json(&dir.join(format!("{name}.json")));
    let p = &cfg["provider"]["shforge"];
    let npm = match api {
        Api::Chat => "@ai-sdk/openai-compatible",
        Api::Responses => "@ai-sdk/openai",
        Api::Anthropic => "@ai-sdk/anthropic",
        Api::Gemini => unreachable!("{ctx}"),
    };
    assert_eq!(p["npm"], npm, "{ctx}");
    assert_eq!(p["options"]["baseURL"], "http://127.0.0.1:4321/v1");
    assert_eq!(p["options"]["apiKey"], format!("{{env:{key}}}"));
    assert!(p["models"]["fake-model"].is_object());
    assert_eq!(cfg["permission"]["external_directory"], "allow");
    assert_eq!(cfg["permission"]["bash"], "allow");
    assert_eq!(cfg["permission"]["edit"], "allow");
    assert_eq!(cfg["autoupdate"], false);
    if h == Harness::Kilo {
        assert_eq!(env_of(vars, "KILO_TELEMETRY_LEVEL").unwrap(), "off");
    }
    assert_eq!(capture["kind"], name);
    assert_eq!(capture["db"], db);
}

/// Pi's part of [`check_profile`].
fn check_pi(api: Api, dir: &Path, vars: &[(String, Vec<String>)], capture: &Value, ctx: &str) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    let has = |flags: &[&str]| argv.windows(flags.len()).any(|w| w == flags);
    let key = api.default_key_env();
    assert!(
        has(&[
            "--provider",
            "shforge",
            "--model",
            "fake-model",
            "--mode",
            "json",
            "-p"
        ]),
        "{ctx}"
    );
    assert_eq!(
        env_of(vars, "PI_CODING_AGENT_DIR").unwrap(),
        format!("{d}/pi-agent")
    );
    assert_eq!(env_of(vars, "PI_OFFLINE").unwrap(), "1");
    let models = json(&dir.join("pi-agent/models.json"));
    let p = &models["providers"]["shforge"];
    let (wire, base) = pi_wire(api);
    assert_eq!(p["api"], wire, "{ctx}");
    assert_eq!(p["baseUrl"], base, "{ctx}");
    assert_eq!(p["apiKey"], key);
    assert_eq!(p["models"][0]["id"], "fake-model");
    assert_eq!(capture["kind"], "pi");
    assert_eq!(capture["dir"], format!("{d}/pi-agent"));
}

/// OpenClaw's part of [`check_profile`].
fn check_openclaw(
    api: Api,
    dir: &Path,
    vars: &[(String, Vec<String>)],
    capture: &Value,
    ctx: &str,
) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    let has = |flags: &[&str]| argv.windows(flags.len()).any(|w| w == flags);
    let key = api.default_key_env();
    assert!(
        has(&["agent", "exec", "--config", &format!("{d}/openclaw.json")]),
        "{ctx}"
    );
    assert!(
        has(&["--state-dir", &format!("{d}/openclaw-state")]),
        "{ctx}"
    );
    assert!(dir.join("openclaw-state").is_dir());
    let cfg = json(&dir.join("openclaw.json"));
    let p = &cfg["models"]["providers"]["shforge"];
    let (wire, base) = pi_wire(api);
    assert_eq!(p["api"], wire, "{ctx}");
    assert_eq!(p["baseUrl"], base, "{ctx}");
    assert_eq!(p["apiKey"], format!("${{{key}}}"));
    assert_eq!(cfg["models"]["mode"], "replace");
    assert_eq!(
        cfg["agents"]["defaults"]["model"]["primary"],
        "shforge/fake-model"
    );
    assert_eq!(capture["kind"], Value::Null);
    assert_eq!(capture["dir"], format!("{d}/openclaw-state"));
}

/// Codex's part of [`check_profile`].
fn check_codex(api: Api, dir: &Path, vars: &[(String, Vec<String>)], capture: &Value, ctx: &str) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    let has = |flags: &[&str]| argv.windows(flags.len()).any(|w| w == flags);
    let key = api.default_key_env();
    assert!(
        has(&[
            "exec",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox"
        ]),
        "{ctx}"
    );
    assert_eq!(argv.last().unwrap(), "-");
    assert_eq!(env_of(vars, "CODEX_HOME").unwrap(), format!("{d}/codex"));
    let cfg: toml::Table =
        toml::from_str(&std::fs::read_to_string(dir.join("codex/config.toml")).unwrap()).unwrap();
    assert_eq!(cfg["model"].as_str(), Some("fake-model"));
    assert_eq!(cfg["model_provider"].as_str(), Some("shforge"));
    let p = &cfg["model_providers"]["shforge"];
    assert_eq!(p["base_url"].as_str(), Some("http://127.0.0.1:4321/v1"));
    assert_eq!(p["wire_api"].as_str(), Some("responses"));
    assert_eq!(p["env_key"].as_str(), Some(key));
    // Retries written down (keys Codex 0.171 accepts without its
    // "unrecognized configuration setting" warning).
    assert_eq!(p["stream_max_retries"].as_integer(), Some(10));
    assert_eq!(p["request_max_retries"].as_integer(), Some(4));
    assert_eq!(p["stream_idle_timeout_ms"].as_integer(), Some(300_000));
    assert_eq!(cfg["analytics"]["enabled"].as_bool(), Some(false));
    assert_eq!(cfg["check_for_update_on_startup"].as_bool(), Some(false));
    assert!(has(&["--disable", "plugins"]), "{ctx}");
    assert_eq!(capture["kind"], "codex");
    assert_eq!(capture["dir"], format!("{d}/codex"));
}

/// Mistral Vibe's part of [`check_profile`]: `vibe -p` (the prompt on
/// stdin) with its config.toml in VIBE_HOME: one generic provider at the
/// session's URL keyed by variable name, Mistral's hosted services off, no
/// `--trust` (the workdir's `.vibe/` and AGENTS.md stay unread).
fn check_mistral_vibe(
    api: Api,
    dir: &Path,
    vars: &[(String, Vec<String>)],
    capture: &Value,
    ctx: &str,
) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    assert_eq!(
        argv[1..],
        ["-p", "--auto-approve", "--output", "text"],
        "{ctx}"
    );
    assert!(!argv.iter().any(|a| a == "--trust"), "{ctx}");
    assert_eq!(env_of(vars, "VIBE_HOME").unwrap(), format!("{d}/vibe-home"));
    let cfg: toml::Table =
        toml::from_str(&std::fs::read_to_string(dir.join("vibe-home/config.toml")).unwrap())
            .unwrap();
    assert_eq!(cfg["active_model"].as_str(), Some("shforge"));
    let p = &cfg["providers"][0];
    assert_eq!(p["api_base"].as_str(), Some("http://127.0.0.1:4321/v1"));
    assert_eq!(p["api_key_env_var"].as_str(), Some(api.default_key_env()));
    assert_eq!(p["backend"].as_str(), Some("generic"));
    assert_eq!(cfg["models"][0]["name"].as_str(), Some("fake-model"));
    for off in [
        "enable_telemetry",
        "enable_otel",
        "enable_update_checks",
        "enable_auto_update",
        "enable_connectors",
        "vibe_code_enabled",
        "include_project_context",
    ] {
        assert_eq!(cfg[off].as_bool(), Some(false), "{ctx}: {off}");
    }
    assert_eq!(cfg["experiments"]["enable"].as_bool(), Some(false));
    assert_eq!(
        cfg["session_logging"]["save_dir"].as_str(),
        Some(format!("{d}/vibe-home/logs/session").as_str())
    );
    assert_eq!(capture["kind"], "mistral-vibe");
    assert_eq!(capture["dir"], format!("{d}/vibe-home/logs"));
}

/// The key's value is in no written file (it was in shforge's env).
fn no_secret_written(dir: &Path, ctx: &str) {
    for f in files(dir) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
            "{ctx}: the key is in {}",
            f.display()
        );
    }
}

/// Qwen Code's part of [`check_profile`].
fn check_qwen_code(api: Api, dir: &Path, vars: &[(String, Vec<String>)], ctx: &str) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    let capture = json(&dir.join("capture.json"));
    let has = |flags: &[&str]| argv.windows(flags.len()).any(|w| w == flags);
    let auth = match api {
        Api::Chat => "openai",
        Api::Responses => "openai-responses",
        Api::Anthropic => "anthropic",
        Api::Gemini => unreachable!("qwen-code's spec lists no gemini API"),
    };
    assert!(
        has(&["--yolo", "-o", "stream-json", "--auth-type", auth]),
        "{ctx}"
    );
    assert_eq!(env_of(vars, "QWEN_HOME").unwrap(), format!("{d}/qwen"));
    assert_eq!(
        env_of(vars, "QWEN_USAGE_STATISTICS_ENABLED").unwrap(),
        "false"
    );
    let base = match api {
        Api::Anthropic => "http://127.0.0.1:4321",
        _ => "http://127.0.0.1:4321/v1",
    };
    // Every endpoint and model variable a workdir `.env` could set is
    // set (non-empty: Qwen takes an empty one as unset).
    for name in [
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "GOOGLE_GEMINI_BASE_URL",
    ] {
        assert_eq!(env_of(vars, name).unwrap(), base, "{ctx} {name}");
    }
    for name in [
        "OPENAI_MODEL",
        "ANTHROPIC_MODEL",
        "GEMINI_MODEL",
        "QWEN_MODEL",
    ] {
        assert_eq!(env_of(vars, name).unwrap(), "fake-model", "{ctx} {name}");
    }
    assert_eq!(env_of(vars, "QWEN_DEFAULT_AUTH_TYPE").unwrap(), auth);
    // The key is the CLI's own variable, never set by the session.
    assert!(env_of(vars, "OPENAI_API_KEY").is_none(), "{ctx}");
    assert!(env_of(vars, "ANTHROPIC_API_KEY").is_none(), "{ctx}");
    let settings = json(&dir.join("qwen/settings.json"));
    assert_eq!(settings["privacy"]["usageStatisticsEnabled"], false);
    assert_eq!(settings["general"]["enableAutoUpdate"], false);
    assert!(dir.join("qwen/projects").is_dir());
    assert_eq!(capture["kind"], "qwen-code");
    assert_eq!(capture["dir"], format!("{d}/qwen"));
}

/// Gemini CLI's argv, environment (the variables a task's `.env` could
/// set are set), settings.json and capture.
fn check_gemini_cli(dir: &Path, vars: &[(String, Vec<String>)], capture: &Value, ctx: &str) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    let has = |flags: &[&str]| argv.windows(flags.len()).any(|w| w == flags);
    assert!(
        has(&["--yolo", "--skip-trust", "-m", "fake-model"]),
        "{ctx}"
    );
    let out = if ctx.ends_with("events") {
        "stream-json"
    } else {
        "json"
    };
    assert_eq!(&argv[argv.len() - 2..], ["-o", out], "{ctx}");
    assert!(
        !argv.iter().any(|a| a == "-p"),
        "{ctx}: the prompt is stdin"
    );
    let home = format!("{d}/gemini");
    assert_eq!(env_of(vars, "GEMINI_CLI_HOME").unwrap(), home);
    assert_eq!(env_of(vars, "GEMINI_CLI_NO_RELAUNCH").unwrap(), "1");
    assert_eq!(
        env_of(vars, "GOOGLE_GEMINI_BASE_URL").unwrap(),
        "http://127.0.0.1:4321"
    );
    // Set, so that a task's .env cannot set them (the process wins).
    assert_eq!(env_of(vars, "GEMINI_MODEL").unwrap(), "fake-model");
    assert_eq!(env_of(vars, "GOOGLE_API_KEY").unwrap(), "");
    assert_eq!(env_of(vars, "GEMINI_SANDBOX").unwrap(), "false");
    assert_eq!(Api::Gemini.default_key_env(), "GEMINI_API_KEY");
    let settings = json(&dir.join("gemini/.gemini/settings.json"));
    assert_eq!(
        settings["security"]["auth"]["selectedType"],
        "gemini-api-key"
    );
    assert_eq!(settings["privacy"]["usageStatisticsEnabled"], false);
    assert_eq!(settings["advanced"]["ignoreLocalEnv"], true);
    assert_eq!(capture["kind"], "gemini-cli");
    assert_eq!(capture["dir"], format!("{home}/.gemini"));
}

/// Pi's and OpenClaw's wire name and base URL for `api`.
fn pi_wire(api: Api) -> (&'static str, &'static str) {
    match api {
        Api::Chat => ("openai-completions", "http://127.0.0.1:4321/v1"),
        Api::Responses => ("openai-responses", "http://127.0.0.1:4321/v1"),
        Api::Anthropic => ("anthropic-messages", "http://127.0.0.1:4321"),
        Api::Gemini => unreachable!("neither speaks gemini"),
    }
}

/// Cline's argv, environment, providers.json and capture.
fn check_cline(api: Api, dir: &Path, vars: &[(String, Vec<String>)], capture: &Value, ctx: &str) {
    let d = dir.display().to_string();
    let argv = var(vars, "RUNNER_ARGV").unwrap();
    // The prompt follows `--` (the runner appends it).
    assert_eq!(argv[1..], ["--json", "--auto-approve", "true", "--"]);
    assert_eq!(env_of(vars, "CLINE_DIR").unwrap(), format!("{d}/cline"));
    // No hub daemon outliving the run, no update check.
    assert_eq!(env_of(vars, "CLINE_SESSION_BACKEND_MODE").unwrap(), "local");
    assert_eq!(env_of(vars, "CLINE_NO_AUTO_UPDATE").unwrap(), "1");
    let providers = json(&dir.join("cline/data/settings/providers.json"));
    let id = match api {
        Api::Chat => "openai-compatible",
        Api::Responses => "openai-native",
        Api::Anthropic => "anthropic",
        Api::Gemini => unreachable!("cline's spec lists no gemini API"),
    };
    assert_eq!(providers["lastUsedProvider"], id, "{ctx}");
    let p = &providers["providers"][id];
    assert_eq!(p["settings"]["model"], "fake-model");
    assert_eq!(p["settings"]["baseUrl"], "http://127.0.0.1:4321/v1");
    // The key only from the environment: no apiKey field at all.
    assert!(p["settings"].get("apiKey").is_none(), "{ctx}");
    let global = json(&dir.join("cline/data/settings/global-settings.json"));
    assert_eq!(global["telemetryOptOut"], true);
    assert_eq!(capture["kind"], "cline", "{ctx}");
    assert_eq!(capture["dir"], format!("{d}/cline/data"));
}

/// A valid `shforge harness` command line for `name` into `out`: `set`
/// replaces the value of a flag that is there, or adds the flag at the end.
fn harness_args(name: &str, out: &Path, set: &[(&str, &str)]) -> Vec<String> {
    let mut flags = vec![
        ("--session-dir", "/s"),
        ("--workdir", "/w"),
        ("--entry", "/e"),
        ("--base-url", "http://h"),
        ("--model", "m"),
        ("--prompt", "p"),
    ];
    for &(flag, value) in set {
        match flags.iter_mut().find(|(f, _)| *f == flag) {
            Some(pair) => pair.1 = value,
            None => flags.push((flag, value)),
        }
    }
    let mut v = vec![
        name.to_owned(),
        "--out".to_owned(),
        out.display().to_string(),
    ];
    for (flag, value) in flags {
        v.extend([flag.to_owned(), value.to_owned()]);
    }
    v
}

/// `--base-url` with `/v1` (as HARNESS-NOTES writes OpenAI-style URLs) and
/// with a trailing slash means the server root: every file is the same.
#[test]
fn base_url_with_v1_means_the_root() {
    for h in Harness::ALL {
        let tmp = tempfile::tempdir().unwrap();
        let write = |url: &str, out: &str| {
            let out = tmp.path().join(out);
            let run = shforge_harness(&harness_args(h.name(), &out, &[("--base-url", url)]), &[]);
            assert!(run.status.success(), "{h} {url}: {run:?}");
            let mut all: Vec<_> = files(&out)
                .into_iter()
                .map(|f| {
                    (
                        f.strip_prefix(&out).unwrap().to_owned(),
                        std::fs::read(&f).unwrap(),
                    )
                })
                .collect();
            all.sort();
            all
        };
        let root = write("http://127.0.0.1:4321", "root");
        assert!(!root.is_empty(), "{h}");
        let others = [
            "http://127.0.0.1:4321/v1",
            "http://127.0.0.1:4321/v1/",
            "http://127.0.0.1:4321/",
        ];
        for (i, url) in others.into_iter().enumerate() {
            assert_eq!(write(url, &format!("other{i}")), root, "{h} {url}");
        }
    }
}

/// `--base-url` through the CLI, one row each: refused ones exit 2 with one
/// line naming the flag and write nothing; accepted ones land normalised
/// (lower-case scheme and host, no `/v1`) in every harness's files.
#[test]
fn base_url_table() {
    let refused: &[(&str, &str)] = &[
        ("non-http scheme", "ftp://h"),
        ("no scheme", "127.0.0.1:4321"),
        ("credentials", "http://user:pass@127.0.0.1:4321"),
        ("query", "http://127.0.0.1:4321/v1?x=1"),
        ("fragment", "http://127.0.0.1:4321/#f"),
        ("empty host", "http:///v1"),
        ("space in host", "http://a b"),
        ("invalid host character", "http://a!b"),
        ("bad port", "http://h:99999"),
        ("empty port", "http://h:/v1"),
        ("ipv6 without brackets", "http://::1:4321"),
        ("config substitution in the path", "http://h/{env:HOME}"),
        ("newline", "http://h\n"),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (name, url) in refused {
        for h in Harness::ALL {
            let out_dir = tmp.path().join("s");
            let run = shforge_harness(
                &harness_args(h.name(), &out_dir, &[("--base-url", url)]),
                &[],
            );
            let err = String::from_utf8_lossy(&run.stderr);
            assert_eq!(run.status.code(), Some(2), "{name} {h}: {err}");
            assert!(err.contains("--base-url"), "{name} {h}: {err}");
            assert_eq!(err.lines().count(), 1, "{name} {h}: {err}");
            assert!(!out_dir.exists(), "{name} {h}: something was written");
        }
    }
    let accepted: &[(&str, &str, &str)] = &[
        (
            "upper-case scheme",
            "HTTP://127.0.0.1:4321/v1",
            "http://127.0.0.1:4321",
        ),
        (
            "mixed-case scheme and host",
            "Https://Model.Example:443/",
            "https://model.example:443",
        ),
        ("bracketed ipv6", "http://[::1]:4321", "http://[::1]:4321"),
    ];
    for (name, url, root) in accepted {
        for h in Harness::ALL {
            let out_dir = tmp.path().join(format!("{h}-{}", name.replace(' ', "-")));
            let run = shforge_harness(
                &harness_args(h.name(), &out_dir, &[("--base-url", url)]),
                &[],
            );
            assert!(run.status.success(), "{name} {h}: {run:?}");
            let all: String = files(&out_dir)
                .iter()
                .map(|f| String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned())
                .collect();
            assert!(all.contains(root), "{name} {h}: {root} not in the session");
            assert!(
                !all.contains(&url.trim_end_matches('/').to_string()) || url == root,
                "{name} {h}"
            );
        }
    }
}

/// OpenClaw substitutes only upper-case `${NAME}`: a lower-case key
/// variable would reach it as the literal key, so it is refused there (and
/// only there).
#[test]
fn openclaw_refuses_a_lower_case_key_variable() {
    let tmp = tempfile::tempdir().unwrap();
    for (h, var, ok) in [
        ("openclaw", "my_key", false),
        ("openclaw", "My_Key", false),
        ("openclaw", "MY_KEY_2", true),
        ("opencode", "my_key", true),
        ("pi", "my_key", true),
    ] {
        let out_dir = tmp.path().join(format!("{h}-{var}"));
        let run = shforge_harness(&harness_args(h, &out_dir, &[("--api-key-env", var)]), &[]);
        let err = String::from_utf8_lossy(&run.stderr);
        if ok {
            assert!(run.status.success(), "{h} {var}: {err}");
        } else {
            assert_eq!(run.status.code(), Some(2), "{h} {var}: {err}");
            assert!(
                err.contains("--api-key-env") && err.contains("upper-case"),
                "{err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(!out_dir.exists(), "{h} {var}: something was written");
        }
    }
}

/// Continue CLI expands `${{ NAME }}` in every config value, YAML escapes
/// decoded first, with no escape of its own: a model holding `${{` is
/// refused with one line and nothing written; `${` alone passes.
#[test]
fn continue_cli_refuses_a_model_its_templates_would_expand() {
    let tmp = tempfile::tempdir().unwrap();
    for (model, ok) in [
        ("m${{ secrets.OPENAI_API_KEY }}", false),
        ("${{x}}", false),
        ("m${SECRET}$${X}{{y}}", true),
    ] {
        let out_dir = tmp.path().join(format!("continue-{ok}-{}", model.len()));
        let args = harness_args("continue-cli", &out_dir, &[("--model", model)]);
        let run = shforge_harness(&args, &[]);
        let err = String::from_utf8_lossy(&run.stderr);
        if ok {
            assert!(run.status.success(), "{model}: {err}");
            let text = std::fs::read_to_string(out_dir.join("continue/config.yaml")).unwrap();
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["models"][0]["model"], model);
        } else {
            assert_eq!(run.status.code(), Some(2), "{model}: {err}");
            assert!(err.contains("${{"), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(!out_dir.exists(), "{model}: something was written");
        }
    }
}

#[test]
fn api_mismatch_exits_2_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    for (h, api) in [
        ("claude-code", "chat"),
        ("claude-code", "responses"),
        ("codex", "chat"),
        ("codex", "anthropic"),
    ] {
        let out_dir = tmp.path().join(format!("{h}-{api}"));
        let args = harness_args(
            h,
            &out_dir,
            &[("--base-url", "http://127.0.0.1:1"), ("--api", api)],
        );
        let out = shforge_harness(&args, &[]);
        assert_eq!(out.status.code(), Some(2), "{h} {api}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(h) && err.contains(api), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!out_dir.exists(), "{h} {api}: something was written");
    }
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("s");
    let pi = |set: &[(&str, &str)]| harness_args("pi", &out_dir, set);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (pi(&[("--session-dir", "rel")]), "absolute"),
        (pi(&[("--session-dir", "/w/s")]), "overlap"),
        (pi(&[("--base-url", "ftp://h")]), "--base-url"),
        (pi(&[("--prompt", "")]), "empty"),
        (pi(&[("--api-key-env", "BAD-NAME")]), "variable"),
        (pi(&[("--mode", "both")]), "mode"),
        (pi(&[("--session-dir", "/s/../w")]), ".."),
        (
            pi(&[("--api-key-env", "PI_CODING_AGENT_DIR")]),
            "set by the session",
        ),
        (harness_args("nope", &out_dir, &[]), "unknown harness"),
    ];
    for (args, what) in cases {
        let out = shforge_harness(&args, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(what), "{what}: {err}");
        assert!(!out_dir.exists(), "{what}: something was written");
    }
    // A device as the prompt file is refused before anything is read.
    let mut args = pi(&[]);
    let at = args.iter().position(|a| a == "--prompt").unwrap();
    args[at] = "--prompt-file".into();
    args[at + 1] = "/dev/zero".into();
    let out = shforge_harness(&args, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "/dev/zero: {err}");
    assert!(err.contains("not a regular file"), "/dev/zero: {err}");
    assert!(!out_dir.exists(), "/dev/zero: something was written");
    // A non-empty --out is refused and left alone.
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::write(out_dir.join("keep"), "x").unwrap();
    let out = shforge_harness(&pi(&[]), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 1);
}

/// A stand-in CLI: copies the prompt it was given (its stdin, the file
/// after --message-file, or the word after `--`: Cline's) and the key
/// variables it sees (ANTHROPIC_API_KEY, OPENAI_API_KEY) into the files
/// named by SHFORGE_TEST_OUT.
const FAKE_CLI: &str = r#"#!/bin/bash
out=$SHFORGE_TEST_OUT
prev=
for a in "$@"; do
  if [[ $prev == --message-file || $prev == --prompt-file ]]; then cat -- "$a" > "$out.prompt"; fi
  if [[ $prev == -- ]]; then printf '%s' "$a" > "$out.prompt"; fi
  prev=$a
done
if [[ ! -e $out.prompt ]]; then cat > "$out.prompt"; fi
printf '%s' "${ANTHROPIC_API_KEY-unset}" > "$out.anthropic"
printf '%s' "${OPENAI_API_KEY-unset}" > "$out.openai"
printf '{"type":"done"}\n'
"#;

fn hostile_prompts() -> Vec<(&'static str, String)> {
    let mut big = String::new();
    while big.len() < 1024 * 1024 {
        big.push_str("line with 'quotes' \"dq\" $(touch /tmp/pwned) `id` \\ ${HOME} é\n");
    }
    big.truncate(1024 * 1024);
    vec![
        ("quotes", "it's \"quoted\" and 'single'".into()),
        ("newlines", "first\nsecond\n\nthird\n".into()),
        (
            "substitution",
            "$(touch /tmp/shforge-pwned) `touch /tmp/shforge-pwned2` ${HOME}".into(),
        ),
        ("leading dash", "--help -p".into()),
        ("leading at", "@/etc/passwd".into()),
        ("control bytes", "\u{1}\u{7f}\t\r\u{1b}[31m".into()),
        ("1 MiB", big),
    ]
}

#[test]
fn hostile_prompts_reach_the_cli_byte_for_byte_through_the_runner() {
    let runner = support::root().join("generated/harness_runner.sh");
    let tmp = tempfile::tempdir().unwrap();
    let cli = tmp.path().join("fake-cli");
    std::fs::write(&cli, FAKE_CLI).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bashes = support::bashes();
    for (what, prompt) in hostile_prompts() {
        let prompt_file = tmp.path().join("prompt");
        std::fs::write(&prompt_file, &prompt).unwrap();
        for h in Harness::ALL {
            if h == Harness::Cline && prompt.len() > shforge::harness::MAX_ARG_BYTES {
                // One argv word cannot hold it: refused when the session
                // is written, not when the CLI would fail to start.
                let out = shforge_harness(
                    &[
                        "cline",
                        "--out",
                        tmp.path().join("refused").to_str().unwrap(),
                        "--session-dir",
                        "/s",
                        "--workdir",
                        "/w",
                        "--entry",
                        "/e",
                        "--base-url",
                        "http://127.0.0.1:1",
                        "--model",
                        "m",
                        "--prompt-file",
                        prompt_file.to_str().unwrap(),
                    ],
                    &[],
                );
                assert_eq!(out.status.code(), Some(2), "{what} {h}");
                let e = String::from_utf8_lossy(&out.stderr);
                assert!(e.contains("--prompt") && e.contains("131071"), "{e}");
                assert!(!tmp.path().join("refused").exists(), "{what} {h}");
                continue;
            }
            let m = make(h, None, "events", &prompt_file, cli.to_str().unwrap());
            for bash in &bashes {
                let out_base = tmp.path().join("seen");
                let _ = std::fs::remove_file(out_base.with_extension("prompt"));
                let mut c = bash.command(&runner);
                c.arg(m.dir.join("params.sh"))
                    .env("SHFORGE_TEST_OUT", &out_base);
                let out = support::run(c);
                assert!(
                    out.status.success(),
                    "{what} {h} {}: {}",
                    bash.name,
                    String::from_utf8_lossy(&out.stderr)
                );
                let seen = std::fs::read(tmp.path().join("seen.prompt")).unwrap();
                assert!(
                    seen == prompt.as_bytes(),
                    "{what} {h} {}: prompt changed",
                    bash.name
                );
                let _ = std::fs::remove_file(tmp.path().join("seen.prompt"));
            }
        }
        assert!(!Path::new("/tmp/shforge-pwned").exists());
    }
    support::report("hostile prompts through harness_runner.sh", &bashes);
}

#[test]
fn claude_code_copies_another_key_variable_without_writing_it() {
    let runner = support::root().join("generated/harness_runner.sh");
    let tmp = tempfile::tempdir().unwrap();
    let cli = tmp.path().join("fake-cli");
    std::fs::write(&cli, FAKE_CLI).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tmp.path().join("s");
    let session = |workdir: &Path| {
        shforge_harness(
            &[
                "claude-code",
                "--out",
                dir.to_str().unwrap(),
                "--session-dir",
                dir.to_str().unwrap(),
                "--workdir",
                workdir.to_str().unwrap(),
                "--entry",
                cli.to_str().unwrap(),
                "--base-url",
                "http://127.0.0.1:1",
                "--model",
                "m",
                "--api-key-env",
                "MY_GATEWAY_KEY",
                "--prompt",
                "p",
            ],
            &[("MY_GATEWAY_KEY", SECRET)],
        )
    };
    // "/" as workdir overlaps every session dir.
    assert_eq!(session(Path::new("/")).status.code(), Some(2));
    let work = tmp.path().join("w");
    std::fs::create_dir(&work).unwrap();
    let out = session(&work);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in files(&dir) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
            "{}",
            f.display()
        );
    }
    for bash in support::bashes() {
        let base = tmp.path().join("seen");
        let mut c = bash.command(&runner);
        c.arg(dir.join("params.sh"))
            .env("SHFORGE_TEST_OUT", &base)
            .env("MY_GATEWAY_KEY", SECRET)
            .env_remove("ANTHROPIC_API_KEY");
        let out = support::run(c);
        assert!(
            out.status.success(),
            "{}: {}",
            bash.name,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("seen.anthropic")).unwrap(),
            SECRET,
            "{}",
            bash.name
        );
        // Without the variable, the CLI gets none (not an empty key).
        let mut c = bash.command(&runner);
        c.arg(dir.join("params.sh"))
            .env("SHFORGE_TEST_OUT", &base)
            .env_remove("MY_GATEWAY_KEY")
            .env_remove("ANTHROPIC_API_KEY");
        let out = support::run(c);
        assert!(
            out.status.success(),
            "{}: {}",
            bash.name,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("seen.anthropic")).unwrap(),
            "unset"
        );
        let _ = std::fs::remove_file(tmp.path().join("seen.prompt"));
    }
}

/// What the hostile values are made to read: neither may reach the server.
const FILE_SECRET: &str = "shforge-secret-file-content-51c2";
const ENV_SECRET: &str = "shforge-secret-env-content-a7e0";

/// The fake model server as a child, with its request log.
struct FakeServer {
    child: std::process::Child,
    url: String,
}

impl FakeServer {
    fn start(log: &Path, target: &Path) -> FakeServer {
        use std::ffi::OsStr;
        let (child, url) = support::spawn_fake_model_server([
            OsStr::new("--log"),
            log.as_os_str(),
            OsStr::new("--token"),
            OsStr::new("tok"),
            OsStr::new("--target"),
            target.as_os_str(),
        ]);
        FakeServer { child, url }
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Install `h` with its generated installer, build a session whose model
/// is Pi's `!command` (`!cat<SECRET`), `{file:SECRET}`, `{env:VAR}` and
/// `${VAR}` in one, run the real CLI
/// through the runner against the fake server, and check from the
/// server's log that the model it asked for is that text and that neither
/// secret was ever sent.
fn hostile_model_stays_data(h: Harness) {
    hostile_model_stays_data_with(h, "SHFORGE_TEST_KEY", &[]);
}

/// [`hostile_model_stays_data`] with the key in `key_env` and `dotenv`
/// written as the workdir's `.env` first.
fn hostile_model_stays_data_with(h: Harness, key_env: &str, dotenv: &[(&str, &str)]) {
    let Some(artifacts) = support::artifacts::artifacts_for(h, "hostile values") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let entry = support::artifacts::install(h, &artifacts);
    let secret = t.join("secret");
    std::fs::write(&secret, FILE_SECRET).unwrap();
    let model = format!(
        "!cat<{0};m-{{file:{0}}}-{{env:SHFORGE_TEST_SECRET}}-${{SHFORGE_TEST_SECRET}}",
        secret.display()
    );
    let work = t.join("work");
    std::fs::create_dir(&work).unwrap();
    if !dotenv.is_empty() {
        let text: String = dotenv.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        std::fs::write(work.join(".env"), text).unwrap();
    }
    let log = t.join("requests.jsonl");
    let server = FakeServer::start(&log, &work.join("out.txt"));
    let session = t.join("session");
    let made = shforge_harness(
        &[
            h.name(),
            "--out",
            session.to_str().unwrap(),
            "--session-dir",
            session.to_str().unwrap(),
            "--workdir",
            work.to_str().unwrap(),
            "--entry",
            &entry,
            "--base-url",
            &server.url,
            "--model",
            &model,
            "--api-key-env",
            key_env,
            "--prompt",
            "write the token",
        ],
        &[],
    );
    assert!(made.status.success(), "{h}: {made:?}");
    let run = support::run({
        // A guard against a hang, not a time limit: Kilo took over 120 s
        // to its first request at a load of 160.
        let mut c = Command::new("timeout");
        c.arg("400")
            .arg("bash")
            .arg(support::root().join("generated/harness_runner.sh"))
            .arg(session.join("params.sh"))
            .env(key_env, "sk-shforge-test")
            .env("SHFORGE_TEST_SECRET", ENV_SECRET);
        c
    });
    drop(server);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let stderr = std::fs::read_to_string(session.join("stderr.log")).unwrap_or_default();
    let tail: String = stderr.lines().rev().take(5).collect::<Vec<_>>().join("\n");
    for s in [FILE_SECRET, ENV_SECRET] {
        assert!(!text.contains(s), "{h}: the server received {s}");
    }
    let models: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["api"] != "other")
        .map(|e| e["model"].clone())
        .collect();
    assert!(
        !models.is_empty(),
        "{h}: no model request (runner {:?}); stderr: {tail}",
        run.status
    );
    for m in &models {
        // Gemini's model is a path segment (`/v1beta/models/M:…`): its
        // client percent-encodes it, the server logs it as sent.
        let m = match (h, m.as_str()) {
            (Harness::GeminiCli, Some(s)) => Value::String(percent_decoded(s)),
            _ => m.clone(),
        };
        assert_eq!(m, Value::String(model.clone()), "{h}: the model asked for");
    }
    eprintln!(
        "{h}: {} model requests, all for {model:?}; no secret sent",
        models.len()
    );
}

/// `%XX` escapes decoded (the rest kept as is).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match hex.map(|h| u8::from_str_radix(h, 16)) {
            Some(Ok(v)) if b[i] == b'%' => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn hostile_model_stays_data_in_real_opencode() {
    hostile_model_stays_data(Harness::OpenCode);
}

#[test]
fn hostile_model_stays_data_in_real_kilo() {
    hostile_model_stays_data(Harness::Kilo);
}

#[test]
fn hostile_model_stays_data_in_real_openclaw() {
    hostile_model_stays_data(Harness::OpenClaw);
}

#[test]
fn hostile_model_stays_data_in_real_pi() {
    hostile_model_stays_data(Harness::Pi);
}

#[test]
fn hostile_model_stays_data_in_real_codex() {
    hostile_model_stays_data(Harness::Codex);
}

#[test]
fn hostile_model_stays_data_in_real_qwen_code_despite_a_hostile_dotenv() {
    // Qwen reads OPENAI_API_KEY itself (no other name), and loads the
    // workdir's `.env` for every variable unset or empty in its environment:
    // this one points every provider elsewhere (a closed port), at another
    // model, another auth type and another home. The session's environment
    // must win: every request reaches our server, for our model.
    let elsewhere = format!("http://127.0.0.1:{}", closed_port());
    let v1 = format!("{elsewhere}/v1");
    hostile_model_stays_data_with(
        Harness::QwenCode,
        "OPENAI_API_KEY",
        &[
            ("OPENAI_BASE_URL", &v1),
            ("OPENAI_MODEL", "evil-model"),
            ("ANTHROPIC_BASE_URL", &elsewhere),
            ("ANTHROPIC_MODEL", "evil-model"),
            ("GOOGLE_GEMINI_BASE_URL", &elsewhere),
            ("GEMINI_MODEL", "evil-model"),
            ("QWEN_MODEL", "evil-model"),
            ("QWEN_CODE_MODEL", "evil-model"),
            ("QWEN_DEFAULT_AUTH_TYPE", "gemini"),
            ("DASHSCOPE_BASE_URL", &elsewhere),
            ("OPENROUTER_BASE_URL", &elsewhere),
            ("QWEN_HOME", "/tmp/shforge-qwen-evil-home"),
        ],
    );
    assert!(!Path::new("/tmp/shforge-qwen-evil-home").exists());
}

/// A port nothing listens on: bound, then closed.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn hostile_model_stays_data_in_real_claude_code() {
    hostile_model_stays_data(Harness::ClaudeCode);
}

#[test]
fn qwen_code_install_makes_its_vendored_rg_executable() {
    // The package ships its static ripgrep 0644; the installer's
    // [[artifact.chmod]] must leave it runnable (else Qwen logs `rg EACCES`
    // and falls back to its built-in grep).
    let h = Harness::QwenCode;
    let Some(artifacts) = support::artifacts::artifacts_for(h, "vendored rg") else {
        return;
    };
    let entry = support::artifacts::install(h, &artifacts);
    let install = Path::new(&entry).parent().unwrap().parent().unwrap();
    let rg = install.join("cli/package/vendor/ripgrep/x64-linux/rg");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&rg).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755, "{}", rg.display());
    let arm = install.join("cli/package/vendor/ripgrep/arm64-linux/rg");
    let mode = std::fs::metadata(&arm).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755, "{}", arm.display());
    let out = support::run({
        let mut c = Command::new(&rg);
        c.arg("--version");
        c
    });
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ripgrep "));
}

#[test]
fn hostile_model_stays_data_in_real_gemini_cli() {
    hostile_model_stays_data(Harness::GeminiCli);
}

/// Gemini CLI loads the workdir's `.gemini/.env` (and a plain `.env`) and
/// sets every variable the process lacks: a task file could send the
/// prompt to another server, another model or key, a system prompt file,
/// a sandbox or a debug log. The session sets each of them, so the real
/// CLI still asks the session's server for the session's model, the decoy
/// server gets nothing, and nothing is written where the files point.
#[test]
fn gemini_cli_ignores_a_hostile_dotenv_in_the_workdir() {
    let h = Harness::GeminiCli;
    let Some(artifacts) = support::artifacts::artifacts_for(h, "hostile .env") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let entry = support::artifacts::install(h, &artifacts);
    let work = t.join("work");
    // Inside the workdir: Gemini's write_file is confined to it.
    let out = work.join("out.txt");
    let log = t.join("requests.jsonl");
    let decoy_log = t.join("decoy.jsonl");
    let server = FakeServer::start(&log, &out);
    let decoy = FakeServer::start(&decoy_log, &t.join("decoy-out.txt"));
    let trap = t.join("trap");
    let dotenv = format!(
        "GEMINI_MODEL=evil-model\nGOOGLE_GEMINI_BASE_URL={url}\nGEMINI_API_KEY=sk-evil\n\
         GOOGLE_API_KEY=sk-evil\nGOOGLE_GENAI_USE_VERTEXAI=true\nGOOGLE_VERTEX_BASE_URL={url}\n\
         GEMINI_CLI_HOME={trap}/home\nGEMINI_SYSTEM_MD={trap}/system.md\n\
         GEMINI_WRITE_SYSTEM_MD={trap}/written.md\nGEMINI_SANDBOX=docker\n\
         GEMINI_DEBUG_LOG_FILE={trap}/debug.log\nGEMINI_CONTEXT_TRACE_DIR={trap}/trace\n\
         GEMINI_CLI_SYSTEM_SETTINGS_PATH={trap}/settings.json\n",
        url = decoy.url,
        trap = trap.display()
    );
    std::fs::create_dir_all(work.join(".gemini")).unwrap();
    std::fs::write(work.join(".env"), &dotenv).unwrap();
    std::fs::write(work.join(".gemini/.env"), &dotenv).unwrap();
    let session = t.join("session");
    let made = shforge_harness(
        &[
            h.name(),
            "--out",
            session.to_str().unwrap(),
            "--session-dir",
            session.to_str().unwrap(),
            "--workdir",
            work.to_str().unwrap(),
            "--entry",
            &entry,
            "--base-url",
            &server.url,
            "--model",
            "fake-model",
            "--prompt",
            "write the token",
        ],
        &[],
    );
    assert!(made.status.success(), "{made:?}");
    let run = support::run({
        let mut c = Command::new("timeout");
        c.arg("120")
            .arg("bash")
            .arg(support::root().join("generated/harness_runner.sh"))
            .arg(session.join("params.sh"))
            .env("GEMINI_API_KEY", "sk-shforge-test");
        c
    });
    drop((server, decoy));
    let stderr = std::fs::read_to_string(session.join("stderr.log")).unwrap_or_default();
    assert!(run.status.success(), "{run:?}; stderr: {stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "tok", "{stderr}");
    let text = std::fs::read_to_string(&log).unwrap();
    let models: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["api"] == "gemini")
        .map(|e| e["model"].clone())
        .collect();
    assert!(!models.is_empty(), "no Gemini request: {text}");
    assert!(models.iter().all(|m| m == "fake-model"), "{models:?}");
    let decoy_text = std::fs::read_to_string(&decoy_log).unwrap_or_default();
    assert!(
        decoy_text.is_empty(),
        "the decoy server was asked: {decoy_text}"
    );
    assert!(!trap.exists(), "the .env paths were used");
    let chats = session.join("gemini/.gemini/tmp");
    assert!(chats.is_dir(), "no chats in the session's GEMINI_CLI_HOME");
}

/// Qwen Code and Cline read the key from the variable of the API in use
/// (`[key] reads` per API): another `--api-key-env` is copied into
/// OPENAI_API_KEY for chat and Responses and into ANTHROPIC_API_KEY for
/// Anthropic (the other stays unset), by name: no file holds the value.
/// The API's own default variable needs no copy (no setup code).
#[test]
fn qwen_code_and_cline_get_the_key_in_the_variable_of_their_api() {
    use std::os::unix::fs::PermissionsExt;
    let runner = support::root().join("generated/harness_runner.sh");
    let tmp = tempfile::tempdir().unwrap();
    let cli = tmp.path().join("fake-cli");
    std::fs::write(&cli, FAKE_CLI).unwrap();
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    let work = tmp.path().join("w");
    std::fs::create_dir(&work).unwrap();
    let bash = support::bashes().remove(0);
    for h in [Harness::QwenCode, Harness::Cline] {
        for (api, var, other) in [
            ("chat", "openai", "anthropic"),
            ("responses", "openai", "anthropic"),
            ("anthropic", "anthropic", "openai"),
        ] {
            let ctx = format!("{h} {api}");
            for key_env in ["MY_GATEWAY_KEY", &format!("{}_API_KEY", var.to_uppercase())] {
                let dir = tmp.path().join(format!("{h}-{api}-{key_env}"));
                let out = shforge_harness(
                    &[
                        h.name(),
                        "--out",
                        dir.to_str().unwrap(),
                        "--session-dir",
                        dir.to_str().unwrap(),
                        "--workdir",
                        work.to_str().unwrap(),
                        "--entry",
                        cli.to_str().unwrap(),
                        "--base-url",
                        "http://127.0.0.1:1",
                        "--model",
                        "m",
                        "--api",
                        api,
                        "--api-key-env",
                        key_env,
                        "--prompt",
                        "p",
                    ],
                    &[(key_env, SECRET)],
                );
                assert!(
                    out.status.success(),
                    "{ctx}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                no_secret_written(&dir, &ctx);
                let params = std::fs::read_to_string(dir.join("params.sh")).unwrap();
                let copies = key_env == "MY_GATEWAY_KEY";
                assert_eq!(
                    params.contains("RUNNER_SETUP="),
                    copies,
                    "{ctx} {key_env}: {params}"
                );
                let seen = tmp.path().join("seen");
                let mut c = bash.command(&runner);
                c.arg(dir.join("params.sh"))
                    .env("SHFORGE_TEST_OUT", &seen)
                    .env_remove("OPENAI_API_KEY")
                    .env_remove("ANTHROPIC_API_KEY")
                    .env(key_env, SECRET);
                let out = support::run(c);
                assert!(
                    out.status.success(),
                    "{ctx}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let read = |ext: &str| std::fs::read_to_string(seen.with_extension(ext)).unwrap();
                assert_eq!(read(var), SECRET, "{ctx} {key_env}");
                assert_eq!(read(other), "unset", "{ctx} {key_env}");
                let _ = std::fs::remove_file(seen.with_extension("prompt"));
                no_secret_written(&dir, &ctx);
            }
        }
    }
}
