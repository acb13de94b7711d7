//! Claude Code (`claude -p`), Anthropic Messages only.
//!
//! * argv: `-p --output-format stream-json --verbose --model MODEL
//!   --allowedTools "Bash Write Edit Read" --settings PATH/claude/settings.json`;
//!   the prompt comes on stdin. `--allowedTools` works as root, where
//!   `--dangerously-skip-permissions` is refused; it takes a variable number
//!   of values, so another option follows it (never the prompt).
//! * `CLAUDE_CONFIG_DIR=PATH/claude`: `.claude.json`, `settings.json` and the
//!   transcripts (`projects/-<cwd>/<uuid>.jsonl`) live there; it is the
//!   capture dir (kind `claude-code`).
//! * `ANTHROPIC_BASE_URL` is the server root (the SDK adds `/v1/messages`).
//! * Telemetry, auto-update, error reporting and nonessential traffic off.
//! * The key: Claude Code reads `ANTHROPIC_API_KEY`. When another variable
//!   is named, the runner setup copies it (`${!name}`: the code holds the
//!   variable's name, never its value).

use serde_json::json;

use super::{Ctx, Profile, json_file};
use crate::quote::{Raw, quote};

pub(super) fn profile(ctx: &Ctx<'_>) -> Profile {
    let l = &ctx.layout;
    let config = l.path("claude");
    let settings = l.path("claude/settings.json");
    let args = [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        &ctx.spec.model,
        "--allowedTools",
        "Bash Write Edit Read",
        "--settings",
        &settings,
    ]
    .map(String::from)
    .to_vec();
    let settings_json = json!({
        "permissions": {
            "allow": ["Bash", "Write", "Edit", "Read"],
            "defaultMode": "acceptEdits"
        },
        "autoUpdates": false,
        "includeCoAuthoredBy": false,
        "env": {
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"
        }
    });
    let setup = (ctx.key_env != "ANTHROPIC_API_KEY").then(|| {
        let mut code = Raw::code("shforge_key_var=");
        code.push_word(&quote(ctx.key_env).expect("a checked variable name quotes"));
        code.push_code(
            "\nif [[ -n ${!shforge_key_var+set} ]]; then export ANTHROPIC_API_KEY=\"${!shforge_key_var}\"; fi\nunset shforge_key_var",
        );
        code
    });
    Profile {
        args,
        env: vec![
            ("CLAUDE_CONFIG_DIR", config.clone()),
            ("ANTHROPIC_BASE_URL", ctx.spec.base_url.clone()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ],
        prompt_on_stdin: true,
        files: vec![json_file("claude/settings.json", &settings_json)],
        dirs: vec![],
        capture: ctx.capture_dir(Some("claude-code"), config),
        setup,
    }
}
