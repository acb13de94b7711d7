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
//! * Values are data: OpenCode and Kilo replace `{env:NAME}` and
//!   `{file:PATH}` anywhere in the config *text* before parsing it
//!   (`ConfigVariable.substitute` in OpenCode 1.17.11, the same in Kilo
//!   7.7.7), with no escape of their own. shforge writes every `{` inside a
//!   JSON string as `\u007b`: the text then holds no `{env:`/`{file:` and
//!   the JSON parser gives back the `{` (the model `{file:/etc/passwd}`
//!   reaches the server as itself). Only the key's `"{env:VAR}"` is written
//!   plain; `VAR` is a checked variable name.
//! * Model-list fetches, LSP downloads, autoupdate, telemetry (Kilo's
//!   PostHog) and Kilo's daemon and session ingest are off by variable.

use serde_json::json;

use super::{Api, Ctx, PROVIDER, Profile, SessionFile};

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

/// Stands for the key's `{env:VAR}` until the text is written (it holds
/// no `{`, and no input can produce it: `"` inside a value is escaped).
const KEY_PLACEHOLDER: &str = "shforge-api-key-reference";

/// Pretty JSON with every `{` inside a string escaped as `\u007b`, then the
/// key reference `"{env:VAR}"` put in the placeholder's place.
fn config_text(config: &serde_json::Value, key_env: &str) -> String {
    use serde::Serialize as _;
    let mut bytes = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut bytes, NoBraces::default());
    config
        .serialize(&mut ser)
        .expect("JSON values always serialize");
    let mut text = String::from_utf8(bytes).expect("serde_json writes UTF-8");
    text.push('\n');
    let placeholder = format!("\"{KEY_PLACEHOLDER}\"");
    debug_assert_eq!(text.matches(&placeholder).count(), 1);
    text.replacen(&placeholder, &format!("\"{{env:{key_env}}}\""), 1)
}

/// serde_json's pretty formatter, but a `{` in a string is written `\u007b`.
#[derive(Default)]
struct NoBraces(serde_json::ser::PrettyFormatter<'static>);

impl serde_json::ser::Formatter for NoBraces {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut parts = fragment.split('{');
        if let Some(first) = parts.next() {
            writer.write_all(first.as_bytes())?;
        }
        for part in parts {
            writer.write_all(b"\\u007b")?;
            writer.write_all(part.as_bytes())?;
        }
        Ok(())
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

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
                    "apiKey": KEY_PLACEHOLDER,
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
        files: vec![SessionFile {
            path: config_rel,
            content: config_text(&config, ctx.key_env).into_bytes(),
        }],
        dirs: vec![format!("xdg/data/{name}")],
        capture: ctx.capture_db(name, db),
        setup: None,
    }
}

#[cfg(test)]
mod tests {
    use super::config_text;
    use serde_json::json;

    #[test]
    fn braces_in_values_are_escaped_and_the_json_means_the_same() {
        let v = json!({
            "model": "shforge/{file:/etc/passwd}",
            "{env:HOME}": ["{", "}", "a{b{c", "\"{env:X}\""],
            "options": {"apiKey": super::KEY_PLACEHOLDER},
        });
        let text = config_text(&v, "MY_KEY");
        // The only `{env:`/`{file:` left is the key reference.
        assert_eq!(text.matches("{env:").count(), 1, "{text}");
        assert!(!text.contains("{file:"), "{text}");
        assert!(text.contains("\"apiKey\": \"{env:MY_KEY}\""), "{text}");
        let mut back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["options"]["apiKey"], "{env:MY_KEY}");
        back["options"]["apiKey"] = json!(super::KEY_PLACEHOLDER);
        assert_eq!(back, v);
    }
}
