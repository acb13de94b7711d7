//! OpenClaw (`openclaw agent exec`).
//!
//! * argv: `agent exec --config PATH/openclaw.json --model shforge/MODEL
//!   --json --cwd WORKDIR --state-dir PATH/openclaw-state --message-file
//!   PATH/prompt.txt`: the prompt is read from the file, never argv.
//! * Config: `models.mode = "replace"` with one provider `shforge`
//!   (`openai-completions` / `openai-responses` with `ROOT/v1`,
//!   `anthropic-messages` with the root), `"apiKey": "${VAR}"` (OpenClaw's
//!   env substitution), primary model `shforge/MODEL`, update checks off.
//! * Values are data: OpenClaw replaces `${NAME}` (NAME upper-case,
//!   `[A-Z_][A-Z0-9_]*`) in every string value of its config with the
//!   variable, after parsing (`src/config/env-substitution.ts` in 2026.9.6),
//!   and reads `$${NAME}` as the literal `${NAME}`. Every value shforge
//!   writes from its input (the model, the base URL) goes through
//!   [`literal`], which puts one `$` before each `${NAME}`, so OpenClaw reads
//!   back exactly the input; only the key's `${VAR}` is a substitution.
//!   A `--api-key-env` that is not upper-case is refused (OpenClaw would
//!   send `${my_key}` as the key). Keys of the config are not substituted
//!   and none comes from input.
//! * `--state-dir` keeps the run's sessions in `PATH/openclaw-state` (it must
//!   exist; without it OpenClaw deletes a temporary one). That is the
//!   capture dir; `shforge snapshot` has no OpenClaw reader (kind null).
//! * Quirks: `exec` confines its `write` tool to `--cwd`, so a write outside
//!   the workdir must go through its shell tool `exec`; `--json` prints one
//!   JSON object over many lines; OpenClaw writes `/tmp/openclaw/` (its log;
//!   `logging.file` in the `--config` file did not move it) and
//!   `/tmp/openclaw-state-locks-UID/` (hard-coded) whatever TMPDIR says.

use serde_json::json;

use super::{Ctx, PROVIDER, Profile, json_file};

/// Whether OpenClaw substitutes `${name}`: `[A-Z_][A-Z0-9_]*`.
pub(super) fn substitutes(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_uppercase() || b == b'_')
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// `value` written so OpenClaw's substitution gives it back unchanged:
/// `$` before every `${NAME}` it would replace (`$${NAME}` is its escape
/// for the literal `${NAME}`; a `$` not starting a reference stays as is).
pub(super) fn literal(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for (i, c) in value.char_indices() {
        if c == '$' && reference_at(&value[i..]) {
            out.push('$');
        }
        out.push(c);
    }
    out
}

/// `s` starts with `${NAME}` for a name OpenClaw substitutes.
fn reference_at(s: &str) -> bool {
    s.strip_prefix("${")
        .and_then(|rest| rest.split_once('}'))
        .is_some_and(|(name, _)| substitutes(name))
}

pub(super) fn profile(ctx: &Ctx<'_>) -> Profile {
    let l = &ctx.layout;
    let state = l.path("openclaw-state");
    let config = l.path("openclaw.json");
    let model = &literal(&ctx.spec.model);
    let (api, base) = ctx.pi_style_provider();
    let base = literal(&base);
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
        &format!("{PROVIDER}/{}", ctx.spec.model),
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

#[cfg(test)]
mod tests {
    use super::literal;

    /// OpenClaw 2026.9.6's `substituteString`, transcribed: what it makes
    /// of a config string, given one variable `SECRET`.
    fn openclaw_reads(value: &str) -> String {
        // `${`/`$${` at i, then a substituted name up to the first `}`.
        let token = |i: usize, open: &str| {
            let start = i + open.len();
            value[i..].starts_with(open).then_some(())?;
            let end = start + value[start..].find('}')?;
            let name = &value[start..end];
            super::substitutes(name).then_some((end, name))
        };
        let mut out = String::new();
        let mut i = 0;
        while i < value.len() {
            if let Some((end, name)) = token(i, "$${") {
                out.push_str(&format!("${{{name}}}"));
                i = end + 1;
            } else if let Some((end, name)) = token(i, "${") {
                out.push_str(if name == "SECRET" {
                    "<secret>"
                } else {
                    "<other>"
                });
                i = end + 1;
            } else {
                let c = value[i..].chars().next().unwrap();
                out.push(c);
                i += c.len_utf8();
            }
        }
        out
    }

    #[test]
    fn literal_values_read_back_unchanged() {
        for v in [
            "fake-model",
            "${SECRET}",
            "x${SECRET}y",
            "$${SECRET}",
            "$$${SECRET}",
            "$",
            "$$",
            "${",
            "${}",
            "${lower}",
            "${SECRET",
            "${A}${B}",
            "$${A}$",
            "a$b${SECRET}$${SECRET}${x}",
            "é${SECRET}€",
        ] {
            assert_eq!(openclaw_reads(&literal(v)), v, "{v:?} -> {:?}", literal(v));
        }
        assert_eq!(literal("${SECRET}"), "$${SECRET}");
        assert_eq!(literal("a$b"), "a$b");
    }
}
