//! OpenCode (`opencode run`) and its fork Kilo (`kilo run`): the same CLI
//! and config schema, with `OPENCODE_*` or `KILO_*` variables.
//!
//! * argv: `run --format json --pure -m shforge/MODEL`; the prompt comes on
//!   stdin (`run` reads a non-terminal stdin to its end; argv words holding
//!   a space would be re-quoted by `run` itself).
//! * Config `PATH/opencode.json` (`OPENCODE_CONFIG`) or `PATH/kilo.json`
//!   (`KILO_CONFIG`): one provider `shforge` through the bundled AI SDK
//!   package for the API (`@ai-sdk/openai-compatible` for chat,
//!   `@ai-sdk/openai` for responses, `@ai-sdk/anthropic` for anthropic),
//!   base URL `ROOT/v1`, `"apiKey": "{env:VAR}"`; permissions `edit`,
//!   `bash` and `external_directory` allowed (without them a write outside
//!   the workdir is auto-rejected and the run still exits 0);
//!   autoupdate and sharing off.
//! * The DB path is explicit: `OPENCODE_DB` / `KILO_DB` =
//!   `PATH/xdg/data/NAME/NAME.db` (the default place under XDG_DATA_HOME,
//!   named so a version that ignores the variable lands there too); it is the
//!   capture (kind `opencode` / `kilo`, with its -wal/-shm).
//! * Model-list fetches, LSP downloads, autoupdate, telemetry (Kilo's
//!   PostHog) and Kilo's daemon and session ingest are off by variable.

use serde_json::json;

use super::{Api, Ctx, PROVIDER, Profile, json_file};

/// Which of the two CLIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fork {
    OpenCode,
    Kilo,
}

/// Config file, DB, then the switches set to 1.
const OPENCODE_VARS: [&str; 6] = [
    "OPENCODE_CONFIG",
    "OPENCODE_DB",
    "OPENCODE_DISABLE_AUTOUPDATE",
    "OPENCODE_DISABLE_MODELS_FETCH",
    "OPENCODE_DISABLE_LSP_DOWNLOAD",
    "OPENCODE_DISABLE_SHARE",
];
/// The same for Kilo.
const KILO_VARS: [&str; 6] = [
    "KILO_CONFIG",
    "KILO_DB",
    "KILO_DISABLE_AUTOUPDATE",
    "KILO_DISABLE_MODELS_FETCH",
    "KILO_DISABLE_LSP_DOWNLOAD",
    "KILO_DISABLE_SHARE",
];

pub(super) fn profile(ctx: &Ctx<'_>, fork: Fork) -> Profile {
    let l = &ctx.layout;
    let name = match fork {
        Fork::OpenCode => "opencode",
        Fork::Kilo => "kilo",
    };
    let config_rel = format!("{name}.json");
    let db = l.path(&format!("xdg/data/{name}/{name}.db"));
    let model = &ctx.spec.model;
    let npm = match ctx.api {
        Api::Chat => "@ai-sdk/openai-compatible",
        Api::Responses => "@ai-sdk/openai",
        Api::Anthropic => "@ai-sdk/anthropic",
    };
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "model": format!("{PROVIDER}/{model}"),
        "small_model": format!("{PROVIDER}/{model}"),
        "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"},
        "provider": {
            PROVIDER: {
                "npm": npm,
                "name": "shforge",
                "options": {
                    "baseURL": ctx.v1(),
                    "apiKey": format!("{{env:{}}}", ctx.key_env),
                },
                "models": {
                    model.as_str(): {
                        "name": model,
                        "tool_call": true,
                        "limit": {"context": 128000, "output": 4096}
                    }
                }
            }
        }
    });
    let vars = match fork {
        Fork::OpenCode => &OPENCODE_VARS,
        Fork::Kilo => &KILO_VARS,
    };
    let [config_var, db_var, off @ ..] = vars;
    let mut env: Vec<(&'static str, String)> =
        vec![(*config_var, l.path(&config_rel)), (*db_var, db.clone())];
    env.extend(off.iter().map(|v| (*v, "1".to_owned())));
    if fork == Fork::Kilo {
        env.push(("KILO_TELEMETRY_LEVEL", "off".into()));
        env.push(("KILO_NO_DAEMON", "1".into()));
        env.push(("KILO_DISABLE_SESSION_INGEST", "1".into()));
    }
    let args = [
        "run",
        "--format",
        "json",
        "--pure",
        "-m",
        &format!("{PROVIDER}/{model}"),
    ]
    .map(String::from)
    .to_vec();
    Profile {
        args,
        env,
        prompt_on_stdin: true,
        files: vec![json_file(&config_rel, &config)],
        dirs: vec![format!("xdg/data/{name}")],
        capture: ctx.capture_db(name, db),
        setup: None,
    }
}
