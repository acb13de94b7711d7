//! OpenClaw (`openclaw agent exec`).
//!
//! * argv: `agent exec --config PATH/openclaw.json --model shforge/MODEL
//!   --json --cwd WORKDIR --state-dir PATH/openclaw-state --message-file
//!   PATH/prompt.txt`: the prompt is read from the file, never argv.
//! * Config: `models.mode = "replace"` with one provider `shforge`
//!   (`openai-completions` / `openai-responses` with `ROOT/v1`,
//!   `anthropic-messages` with the root), `"apiKey": "${VAR}"` (OpenClaw's
//!   env substitution), primary model `shforge/MODEL`, update checks off.
//! * `--state-dir` keeps the run's sessions in `PATH/openclaw-state` (it must
//!   exist; without it OpenClaw deletes a temporary one). That is the
//!   capture dir; `shforge snapshot` has no OpenClaw reader (kind null).
//! * Quirks: `exec` confines its `write` tool to `--cwd`, so a write outside
//!   the workdir must go through its shell tool `exec`; `--json` prints one
//!   JSON object over many lines; OpenClaw writes `/tmp/openclaw/` (its log;
//!   `logging.file` in the `--config` file did not move it) and
//!   `/tmp/openclaw-state-locks-UID/` (hard-coded) whatever TMPDIR says.

use serde_json::json;

use super::{Api, Ctx, PROVIDER, Profile, json_file};

pub(super) fn profile(ctx: &Ctx<'_>) -> Profile {
    let l = &ctx.layout;
    let state = l.path("openclaw-state");
    let config = l.path("openclaw.json");
    let model = &ctx.spec.model;
    let (api, base) = match ctx.api {
        Api::Chat => ("openai-completions", ctx.v1()),
        Api::Responses => ("openai-responses", ctx.v1()),
        Api::Anthropic => ("anthropic-messages", ctx.spec.base_url.clone()),
    };
    let cfg = json!({
        "models": {
            "mode": "replace",
            "providers": {
                PROVIDER: {
                    "baseUrl": base,
                    "apiKey": format!("${{{}}}", ctx.key_env),
                    "api": api,
                    "models": [{
                        "id": model,
                        "name": model,
                        "reasoning": false,
                        "input": ["text"],
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                        "contextWindow": 128000,
                        "maxTokens": 4096
                    }]
                }
            }
        },
        "agents": {"defaults": {"model": {"primary": format!("{PROVIDER}/{model}")}}},
        "update": {"checkOnStart": false}
    });
    let args = [
        "agent",
        "exec",
        "--config",
        &config,
        "--model",
        &format!("{PROVIDER}/{model}"),
        "--json",
        "--cwd",
        &ctx.spec.workdir,
        "--state-dir",
        &state,
        "--message-file",
        &l.path("prompt.txt"),
    ]
    .map(String::from)
    .to_vec();
    Profile {
        args,
        env: vec![("OPENCLAW_STATE_DIR", state.clone())],
        prompt_on_stdin: false,
        files: vec![json_file("openclaw.json", &cfg)],
        dirs: vec!["openclaw-state".into()],
        capture: ctx.capture_dir(None, state),
        setup: None,
    }
}
