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

pub(super) fn profile(ctx: &Ctx<'_>) -> Profile {
    let l = &ctx.layout;
    let home = l.path("codex");
    let mut provider = toml::Table::new();
    provider.insert("name".into(), "shforge".into());
    provider.insert("base_url".into(), ctx.v1().into());
    provider.insert("wire_api".into(), "responses".into());
    provider.insert("env_key".into(), ctx.key_env.into());
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
