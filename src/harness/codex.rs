//! Codex (`codex exec`), Responses only (Codex no longer speaks chat).
//!
//! * argv: `exec --json --dangerously-bypass-approvals-and-sandbox
//!   --skip-git-repo-check --disable plugins -c analytics.enabled=false -`:
//!   `-` reads the prompt from stdin. Without a bypass its tools run
//!   read-only and the run still exits 0; `--disable plugins` and analytics
//!   off stop its `git ls-remote` to GitHub and its ChatGPT lookups.
//! * `CODEX_HOME=PATH/codex` holds `config.toml` (provider `shforge`,
//!   `base_url = ROOT/v1`, `wire_api = "responses"`, `env_key = VAR`) and the
//!   transcripts `sessions/YYYY/MM/DD/rollout-*.jsonl`: the capture dir,
//!   kind `codex`.

use super::{Ctx, PROVIDER, Profile, SessionFile};

/// Reconnections of a turn's stream: after a 429 that carries `Retry-After`
/// (waiting that long), a dropped stream, or exhausted request retries.
/// Codex's default is 5; 10 rides out a longer rate limit.
pub const STREAM_MAX_RETRIES: i64 = 10;
/// Quick re-sends of one request after a 5xx or a failed connection
/// (Codex's default, written down so a new release cannot change it).
pub const REQUEST_MAX_RETRIES: i64 = 4;
/// A stream silent this long counts as dropped (Codex's default, 5 min).
pub const STREAM_IDLE_TIMEOUT_MS: i64 = 300_000;

pub(super) fn profile(ctx: &Ctx<'_>) -> Profile {
    let l = &ctx.layout;
    let home = l.path("codex");
    let mut provider = toml::Table::new();
    provider.insert("name".into(), "shforge".into());
    provider.insert("base_url".into(), ctx.v1().into());
    provider.insert("wire_api".into(), "responses".into());
    provider.insert("env_key".into(), ctx.key_env.into());
    provider.insert("stream_max_retries".into(), STREAM_MAX_RETRIES.into());
    provider.insert("request_max_retries".into(), REQUEST_MAX_RETRIES.into());
    provider.insert(
        "stream_idle_timeout_ms".into(),
        STREAM_IDLE_TIMEOUT_MS.into(),
    );
    let mut providers = toml::Table::new();
    providers.insert(PROVIDER.into(), provider.into());
    let mut analytics = toml::Table::new();
    analytics.insert("enabled".into(), false.into());
    let mut config = toml::Table::new();
    config.insert("model".into(), ctx.spec.model.clone().into());
    config.insert("model_provider".into(), PROVIDER.into());
    config.insert("check_for_update_on_startup".into(), false.into());
    config.insert("analytics".into(), analytics.into());
    config.insert("model_providers".into(), providers.into());
    let text = toml::to_string(&config).expect("a TOML table serializes");
    let args = [
        "exec",
        "--json",
        "--dangerously-bypass-approvals-and-sandbox",
        "--skip-git-repo-check",
        "--disable",
        "plugins",
        "-c",
        "analytics.enabled=false",
        "-",
    ]
    .map(String::from)
    .to_vec();
    Profile {
        args,
        env: vec![("CODEX_HOME", home.clone())],
        prompt_on_stdin: true,
        files: vec![SessionFile {
            path: "codex/config.toml".into(),
            content: text.into_bytes(),
        }],
        dirs: vec![],
        capture: ctx.capture_dir(Some("codex"), home),
        setup: None,
    }
}
