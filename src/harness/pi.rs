//! Pi coding agent (`pi -p`).
//!
//! * argv: `--provider shforge --model MODEL --mode json -p`; the prompt comes
//!   on stdin (Pi's parser takes a word starting with `@` as a file to attach
//!   and drops words starting with `-`, so argv cannot carry any prompt; from
//!   stdin Pi trims surrounding whitespace).
//! * `PI_CODING_AGENT_DIR=PATH/pi-agent` holds `models.json` (provider
//!   `shforge`, api `openai-completions` with `ROOT/v1`, `openai-responses`
//!   with `ROOT/v1`, or `anthropic-messages` with the root: the Anthropic SDK
//!   adds `/v1` itself) and `sessions/` (the capture dir, kind `pi`).
//! * `"apiKey": "VAR"`: Pi resolves an environment variable name there.
//! * `PI_OFFLINE=1` (no startup network), `PI_SKIP_VERSION_CHECK=1`,
//!   `PI_TELEMETRY=0`. Pi has no permission system: its tools write anywhere.

use serde_json::json;

use super::{Api, Ctx, PROVIDER, Profile, json_file};

pub(super) fn profile(ctx: &Ctx<'_>) -> Profile {
    let l = &ctx.layout;
    let agent_dir = l.path("pi-agent");
    let (api, base) = match ctx.api {
        Api::Chat => ("openai-completions", ctx.v1()),
        Api::Responses => ("openai-responses", ctx.v1()),
        Api::Anthropic => ("anthropic-messages", ctx.spec.base_url.clone()),
    };
    let models = json!({
        "providers": {
            PROVIDER: {
                "baseUrl": base,
                "api": api,
                "apiKey": ctx.key_env,
                "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
                "models": [{
                    "id": ctx.spec.model,
                    "reasoning": false,
                    "contextWindow": 128000,
                    "maxTokens": 4096
                }]
            }
        }
    });
    let args = [
        "--provider",
        PROVIDER,
        "--model",
        &ctx.spec.model,
        "--mode",
        "json",
        "-p",
    ]
    .map(String::from)
    .to_vec();
    Profile {
        args,
        env: vec![
            ("PI_CODING_AGENT_DIR", agent_dir.clone()),
            ("PI_OFFLINE", "1".into()),
            ("PI_SKIP_VERSION_CHECK", "1".into()),
            ("PI_TELEMETRY", "0".into()),
        ],
        prompt_on_stdin: true,
        files: vec![json_file("pi-agent/models.json", &models)],
        dirs: vec!["pi-agent/sessions".into()],
        capture: ctx.capture_dir(Some("pi"), agent_dir),
        setup: None,
    }
}
