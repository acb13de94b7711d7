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
//!
//! # Retries (measured with Codex 0.171.0 against `shforge-fail=`)
//!
//! The provider sets [`STREAM_MAX_RETRIES`], [`REQUEST_MAX_RETRIES`] and
//! [`STREAM_IDLE_TIMEOUT_MS`]; Codex accepts all three silently (an unknown
//! key is ignored, with an `error` item "Codex is ignoring 1 unrecognized
//! configuration setting" in its JSON events and exit 0).
//!
//! * 429 with `Retry-After: N`: Codex waits N s (uncapped: 120 s is waited
//!   out) and reconnects, one `error` event `Reconnecting... k/10` each time;
//!   10 failures in a row are survived, the 11th ends the run with exit 1.
//! * 5xx: re-sent silently up to `request_max_retries` times with a short
//!   backoff, then counted as a stream reconnection.
//! * 429 without `Retry-After`: no retry at all. One request, then the events
//!   `error` and `turn.failed` with "exceeded retry limit, last status: 429
//!   Too Many Requests", exit 1, 0.5 s for the whole run.
//!
//! Decision: the runtime adds no retry proxy. Codex already retries every
//! 429 that says when to come back; one that does not is the endpoint's
//! bug, and it surfaces as the harness's exit 1 with the reason in its
//! events. A proxy would be a second long-lived process per rollout, and
//! bash cannot listen on a socket, so it would need Python or a binary the
//! task image may lack.
//!
//! # Outside `CODEX_HOME`
//!
//! In this mode (bypass, plugins and analytics off) a rollout writes only
//! under `CODEX_HOME` (per run a `tmp/arg0-linux/codex-arg0XXXXXX/` of
//! symlinks to the binary, the previous one removed; `sessions/`, SQLite
//! state and logs, `shell_snapshots/`) plus what its tools do: strace shows
//! no write to HOME, TMPDIR, `/tmp` or the install dir. Its sandboxed modes
//! (`-s workspace-write`) also create `/tmp/codex-daemon-UID`, whatever
//! TMPDIR says; the bypass flag avoids them and the bubblewrap sandbox they
//! need user namespaces for.

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
