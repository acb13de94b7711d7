//! Config formats: how a spec's config file is parsed and written back, and
//! how each string in it is escaped so the harness reads it as data. A spec
//! selects one by name (`format = "opencode-json"`); what cannot be data
//! (a harness's own expansion syntax) lives here, once per format.
//!
//! | format | the harness expands | written |
//! | --- | --- | --- |
//! | `json` | nothing of ours | pretty JSON |
//! | `opencode-json` | `{env:…}`, `{file:…}` anywhere in the text (OpenCode 1.17.11 `ConfigVariable.substitute`, Kilo 7.7.7) | every `{` in a string (keys too) as `\u007b`; `{{key_ref}}` = `{env:VAR}` |
//! | `openclaw-json` | `${NAME}` (`[A-Z_][A-Z0-9_]*`) in string values; `$${NAME}` is literal (OpenClaw 2026.9.6) | `$` before each `${NAME}` in a value; `{{key_ref}}` = `${VAR}`, VAR upper-case |
//! | `toml` | nothing (Codex) | TOML |
//! | `lines` | nothing of ours (Copilot CLI's PEM trust anchor) | a JSON array of strings, each written as one line |
//! | `continue-yaml` | `${{ NAME }}` in every value (Continue CLI 1.5.47 config.yaml: inputs, secrets), after YAML's escapes are decoded, no escape | JSON (a YAML 1.2 document); a string holding `${{` is refused (exit 2); `{{key_ref}}` = `${{ secrets.VAR }}` |

use std::str::FromStr;

use super::HarnessError;
use super::template::{Part, Placeholder, Template};

/// A config file's parsed content.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// A JSON document.
    Json(serde_json::Value),
    /// A TOML table.
    Toml(toml::Table),
}

impl Eq for Content {}

/// A config file format with its escaping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain JSON (Claude Code settings, Pi's models.json).
    Json,
    /// OpenCode/Kilo JSON: `{` escaped, `{env:VAR}` key reference.
    OpencodeJson,
    /// OpenClaw JSON: `${…}` escaped as `$${…}`, `${VAR}` key reference.
    OpenclawJson,
    /// TOML (Codex's config.toml).
    Toml,
    /// Continue CLI's config.yaml, written as JSON (YAML 1.2 reads it): a
    /// value holding `${{` refused, `${{ secrets.VAR }}` key reference.
    ContinueYaml,
    /// Plain text: the content is a JSON array of strings, written one a
    /// line (a PEM file). No key reference.
    Lines,
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "json" => Format::Json,
            "opencode-json" => Format::OpencodeJson,
            "openclaw-json" => Format::OpenclawJson,
            "toml" => Format::Toml,
            "continue-yaml" => Format::ContinueYaml,
            "lines" => Format::Lines,
            _ => {
                return Err(format!(
                    "{s:?} is not a format (known: json, opencode-json, openclaw-json, toml, continue-yaml, lines)"
                ));
            }
        })
    }
}

/// The values a template is filled with, checked by `SessionSpec::build`.
pub(super) struct Values<'a> {
    pub model: &'a str,
    pub base_url: String,
    pub key_env: &'a str,
    pub session: &'a str,
    pub workdir: &'a str,
    pub prompt_file: String,
    pub api_values: &'a [(String, String)],
}

impl Values<'_> {
    /// The template's text. `{{key_ref}}` never reaches here (checked at
    /// load: only whole config strings hold it).
    pub fn fill(&self, t: &Template) -> String {
        let mut out = String::new();
        for p in &t.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                Part::Ph(ph) => out.push_str(match ph {
                    Placeholder::Model => self.model,
                    Placeholder::BaseUrl => &self.base_url,
                    Placeholder::KeyEnv | Placeholder::KeyRef => self.key_env,
                    Placeholder::Session => self.session,
                    Placeholder::Workdir => self.workdir,
                    Placeholder::PromptFile => &self.prompt_file,
                    Placeholder::ApiValue(v) => self
                        .api_values
                        .iter()
                        .find(|(k, _)| k == v)
                        .map(|(_, s)| s.as_str())
                        .expect("checked at load: every api value is defined"),
                }),
            }
        }
        out
    }
}

/// Stands for a `{{key_ref}}` while the JSON is serialized: it holds control
/// characters, which no model, URL or spec text may, so no value can be
/// taken for it.
const KEY_SENTINEL: &str = "\u{1}shforge-key-ref\u{1}";

impl Format {
    /// Parse a spec's `content` text.
    pub(super) fn parse_content(self, text: &str) -> Result<Content, String> {
        match self {
            Format::Toml => text
                .parse::<toml::Table>()
                .map(Content::Toml)
                .map_err(|e| format!("not TOML: {}", e.message().trim())),
            Format::Lines => match serde_json::from_str(text) {
                Ok(serde_json::Value::Array(a)) if a.iter().all(|v| v.is_string()) => {
                    Ok(Content::Json(serde_json::Value::Array(a)))
                }
                Ok(_) => Err("not a JSON array of strings (format lines)".into()),
                Err(e) => Err(format!("not JSON: {e}")),
            },
            _ => serde_json::from_str(text)
                .map(Content::Json)
                .map_err(|e| format!("not JSON: {e}")),
        }
    }

    fn has_key_ref(self) -> bool {
        matches!(
            self,
            Format::OpencodeJson | Format::OpenclawJson | Format::ContinueYaml
        )
    }

    /// Call `f` on every string (keys too) of `content`, parsed.
    pub(super) fn for_each_template(self, content: &Content, f: &mut dyn FnMut(&Template)) {
        let _ = self.walk(content, &mut |t, _| {
            f(&t);
            Ok(())
        });
    }

    /// Every string parses as a template; `{{key_ref}}` only as a whole
    /// value, in a format that has a key reference.
    pub(super) fn check_templates(self, content: &Content) -> Result<(), String> {
        self.walk(content, &mut |t, is_key| {
            if t.placeholders().any(|p| *p == Placeholder::KeyRef) {
                if !self.has_key_ref() {
                    return Err(
                        "{{key_ref}}: this format has no key reference (name the variable with {{key_env}})"
                            .into(),
                    );
                }
                if is_key || !t.is_key_ref() {
                    return Err("{{key_ref}} must be a whole string value".into());
                }
            }
            Ok(())
        })
    }

    /// Visit every string as a template (`true` for an object key).
    fn walk(
        self,
        content: &Content,
        f: &mut dyn FnMut(Template, bool) -> Result<(), String>,
    ) -> Result<(), String> {
        fn json(
            v: &serde_json::Value,
            f: &mut dyn FnMut(Template, bool) -> Result<(), String>,
        ) -> Result<(), String> {
            match v {
                serde_json::Value::String(s) => f(Template::parse(s)?, false),
                serde_json::Value::Array(a) => a.iter().try_for_each(|v| json(v, f)),
                serde_json::Value::Object(m) => m.iter().try_for_each(|(k, v)| {
                    f(Template::parse(k)?, true)?;
                    json(v, f)
                }),
                _ => Ok(()),
            }
        }
        fn toml_value(
            v: &toml::Value,
            f: &mut dyn FnMut(Template, bool) -> Result<(), String>,
        ) -> Result<(), String> {
            match v {
                toml::Value::String(s) => f(Template::parse(s)?, false),
                toml::Value::Array(a) => a.iter().try_for_each(|v| toml_value(v, f)),
                toml::Value::Table(t) => t.iter().try_for_each(|(k, v)| {
                    f(Template::parse(k)?, true)?;
                    toml_value(v, f)
                }),
                _ => Ok(()),
            }
        }
        match content {
            Content::Json(v) => json(v, f),
            Content::Toml(t) => t.iter().try_for_each(|(k, v)| {
                f(Template::parse(k)?, true)?;
                toml_value(v, f)
            }),
        }
    }

    /// The file's text, every value filled in and escaped for the harness.
    pub(super) fn render(
        self,
        content: &Content,
        vals: &Values<'_>,
    ) -> Result<String, HarnessError> {
        match (self, content) {
            (Format::Toml, Content::Toml(t)) => {
                let t = fill_toml_table(t, vals)?;
                Ok(toml::to_string(&t).expect("a TOML table serializes"))
            }
            (Format::Lines, Content::Json(serde_json::Value::Array(a))) => {
                let mut text = String::new();
                for line in a.iter().filter_map(|v| v.as_str()) {
                    text.push_str(&self.fill_value(line, vals)?);
                    text.push('\n');
                }
                Ok(text)
            }
            (_, Content::Json(v)) => {
                let filled = self.fill_json(v, vals)?;
                Ok(match self {
                    Format::OpencodeJson => {
                        let text = no_braces_pretty(&filled);
                        let sentinel = serde_json::to_string(KEY_SENTINEL).expect("a string");
                        let reference = format!("\"{{env:{}}}\"", vals.key_env);
                        text.replace(&sentinel, &reference)
                    }
                    Format::ContinueYaml => {
                        // Continue expands `${{ NAME }}` in the parsed
                        // values, after YAML's own escapes are decoded
                        // (checked with cn 1.5.47: a model `m\u0024{{
                        // secrets.K }}` was sent as `m` + the key), and has
                        // no escape for it: a value holding `${{` is refused.
                        // JSON escapes neither `$` nor `{`, so any string
                        // (key or value) holding it shows in the text.
                        let mut text = serde_json::to_string_pretty(&filled)
                            .expect("JSON values always serialize");
                        if text.contains("${{") {
                            return Err(HarnessError::Invalid {
                                what: "--model",
                                why: "Continue CLI expands `${{ … }}` in its config and has no escape for it: a value holding `${{` would reach it as a template".into(),
                            });
                        }
                        text.push('\n');
                        let sentinel = serde_json::to_string(KEY_SENTINEL).expect("a string");
                        let reference = format!("\"${{{{ secrets.{} }}}}\"", vals.key_env);
                        text.replace(&sentinel, &reference)
                    }
                    _ => {
                        let mut text = serde_json::to_string_pretty(&filled)
                            .expect("JSON values always serialize");
                        text.push('\n');
                        text
                    }
                })
            }
            _ => unreachable!("parse_content gives each format its own content"),
        }
    }

    fn fill_json(
        self,
        v: &serde_json::Value,
        vals: &Values<'_>,
    ) -> Result<serde_json::Value, HarnessError> {
        use serde_json::Value;
        Ok(match v {
            Value::String(s) => Value::String(self.fill_value(s, vals)?),
            Value::Array(a) => Value::Array(
                a.iter()
                    .map(|v| self.fill_json(v, vals))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(m) => {
                let mut out = serde_json::Map::new();
                for (k, v) in m {
                    let key = fill_key(k, vals)?;
                    let value = self.fill_json(v, vals)?;
                    if out.insert(key.clone(), value).is_some() {
                        return Err(key_collision(&key));
                    }
                }
                Value::Object(out)
            }
            other => other.clone(),
        })
    }

    /// One string value, escaped for this format.
    fn fill_value(self, s: &str, vals: &Values<'_>) -> Result<String, HarnessError> {
        let t = Template::parse(s).expect("checked at load");
        if t.is_key_ref() {
            return match self {
                Format::OpencodeJson | Format::ContinueYaml => Ok(KEY_SENTINEL.into()),
                Format::OpenclawJson => {
                    if !openclaw_substitutes(vals.key_env) {
                        return Err(HarnessError::Invalid {
                            what: "--api-key-env",
                            why: format!(
                                "OpenClaw substitutes only upper-case names ([A-Z_][A-Z0-9_]*) in ${{…}}: {:?} would reach it as the key itself",
                                vals.key_env
                            ),
                        });
                    }
                    Ok(format!("${{{}}}", vals.key_env))
                }
                _ => unreachable!("checked at load: no key_ref in this format"),
            };
        }
        let text = vals.fill(&t);
        Ok(match self {
            Format::OpenclawJson => openclaw_literal(&text),
            // opencode-json escapes in the serializer (keys too).
            _ => text,
        })
    }
}

fn fill_key(k: &str, vals: &Values<'_>) -> Result<String, HarnessError> {
    Ok(vals.fill(&Template::parse(k).expect("checked at load")))
}

fn key_collision(key: &str) -> HarnessError {
    HarnessError::Invalid {
        what: "--model",
        why: format!("makes two config keys {key:?}"),
    }
}

fn fill_toml_table(t: &toml::Table, vals: &Values<'_>) -> Result<toml::Table, HarnessError> {
    let mut out = toml::Table::new();
    for (k, v) in t {
        let key = fill_key(k, vals)?;
        if out.insert(key.clone(), fill_toml(v, vals)?).is_some() {
            return Err(key_collision(&key));
        }
    }
    Ok(out)
}

fn fill_toml(v: &toml::Value, vals: &Values<'_>) -> Result<toml::Value, HarnessError> {
    use toml::Value;
    Ok(match v {
        Value::String(s) => Value::String(vals.fill(&Template::parse(s).expect("checked at load"))),
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|v| fill_toml(v, vals))
                .collect::<Result<_, _>>()?,
        ),
        Value::Table(t) => Value::Table(fill_toml_table(t, vals)?),
        other => other.clone(),
    })
}

/// Whether OpenClaw substitutes `${name}`: `[A-Z_][A-Z0-9_]*`.
pub(super) fn openclaw_substitutes(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_uppercase() || b == b'_')
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// `value` written so OpenClaw's substitution gives it back unchanged:
/// `$` before every `${NAME}` it would replace (`$${NAME}` is its escape
/// for the literal `${NAME}`; a `$` not starting a reference stays as is).
pub(super) fn openclaw_literal(value: &str) -> String {
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
        .is_some_and(|(name, _)| openclaw_substitutes(name))
}

/// Pretty JSON with every `{` inside a string escaped as `\u007b`, and a
/// final newline.
fn no_braces_pretty(value: &serde_json::Value) -> String {
    use serde::Serialize as _;
    let mut bytes = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut bytes, NoBraces::default());
    value
        .serialize(&mut ser)
        .expect("JSON values always serialize");
    let mut text = String::from_utf8(bytes).expect("serde_json writes UTF-8");
    text.push('\n');
    text
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

#[cfg(test)]
mod tests {
    use super::{Format, Values, openclaw_literal, openclaw_substitutes};

    fn vals<'a>(model: &'a str, key_env: &'a str) -> Values<'a> {
        Values {
            model,
            base_url: "http://h/v1".into(),
            key_env,
            session: "/s",
            workdir: "/w",
            prompt_file: "/s/prompt.txt".into(),
            api_values: &[],
        }
    }

    #[test]
    fn lines_writes_each_string_as_a_line_and_refuses_anything_else() {
        let f = Format::Lines;
        let c = f
            .parse_content(r#"["-----BEGIN X-----", "{{model}}", ""]"#)
            .unwrap();
        f.check_templates(&c).unwrap();
        let text = f.render(&c, &vals("m", "K")).unwrap();
        assert_eq!(text, "-----BEGIN X-----\nm\n\n");
        for bad in [r#"{"a": "b"}"#, r#"["a", 1]"#, "[", r#""a""#] {
            assert!(f.parse_content(bad).is_err(), "{bad}");
        }
        let c = f.parse_content(r#"["{{key_ref}}"]"#).unwrap();
        assert!(f.check_templates(&c).is_err());
    }

    #[test]
    fn opencode_json_escapes_every_brace_and_writes_one_key_reference() {
        let f = Format::OpencodeJson;
        let c = f
            .parse_content(
                r#"{"model": "shforge/{{model}}", "{{model}}": ["{", "a{b"], "options": {"apiKey": "{{key_ref}}"}}"#,
            )
            .unwrap();
        f.check_templates(&c).unwrap();
        let text = f
            .render(&c, &vals("{file:/etc/passwd}\"{env:X}\"", "MY_KEY"))
            .unwrap();
        assert_eq!(text.matches("{env:").count(), 1, "{text}");
        assert!(!text.contains("{file:"), "{text}");
        assert!(text.contains("\"apiKey\": \"{env:MY_KEY}\""), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["model"], "shforge/{file:/etc/passwd}\"{env:X}\"");
        assert_eq!(back["{file:/etc/passwd}\"{env:X}\""][1], "a{b");
    }

    /// A model equal to the old plain placeholder text is only a model.
    #[test]
    fn no_model_is_taken_for_the_key_reference() {
        let f = Format::OpencodeJson;
        let c = f
            .parse_content(r#"{"a": "{{model}}", "b": {"{{model}}": 1}, "k": "{{key_ref}}"}"#)
            .unwrap();
        let text = f
            .render(&c, &vals("shforge-api-key-reference", "K"))
            .unwrap();
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["a"], "shforge-api-key-reference");
        assert_eq!(back["k"], "{env:K}");
    }

    #[test]
    fn key_ref_only_whole_and_only_where_a_format_has_one() {
        for (format, content) in [
            (Format::Json, r#"{"k": "{{key_ref}}"}"#),
            (Format::Toml, "k = \"{{key_ref}}\""),
            (Format::OpencodeJson, r#"{"k": "Bearer {{key_ref}}"}"#),
            (Format::OpenclawJson, r#"{"{{key_ref}}": 1}"#),
        ] {
            let c = format.parse_content(content).unwrap();
            assert!(format.check_templates(&c).is_err(), "{format:?} {content}");
        }
    }

    /// OpenClaw 2026.9.6's `substituteString`, transcribed: what it makes
    /// of a config string, given one variable `SECRET`.
    fn openclaw_reads(value: &str) -> String {
        let token = |i: usize, open: &str| {
            let start = i + open.len();
            value[i..].starts_with(open).then_some(())?;
            let end = start + value[start..].find('}')?;
            let name = &value[start..end];
            openclaw_substitutes(name).then_some((end, name))
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
    fn openclaw_literal_values_read_back_unchanged() {
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
            let lit = openclaw_literal(v);
            assert_eq!(openclaw_reads(&lit), v, "{v:?} -> {lit:?}");
        }
        assert_eq!(openclaw_literal("${SECRET}"), "$${SECRET}");
        assert_eq!(openclaw_literal("a$b"), "a$b");
    }
}
