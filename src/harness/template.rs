//! A spec's strings: literal text and a closed set of typed placeholders
//! (`{{model}}`, `{{key_ref}}`, ...), which the spec reads
//! (`spec.rs`) and each config [`Format`](super::Format) fills as data
//! (`format.rs`).

/// What may be substituted into a spec's text: a closed set, each written
/// per [`Format`](super::Format) as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placeholder {
    /// `{{model}}`: the model ID.
    Model,
    /// `{{base_url}}`: the server root plus the API's `url_path`.
    BaseUrl,
    /// `{{key_env}}`: the name of the variable carrying the key.
    KeyEnv,
    /// `{{key_ref}}`: the config format's own reference to that variable
    /// (`{env:VAR}`, `${VAR}`); a whole string, in a format that has one.
    KeyRef,
    /// `{{session}}`: the session dir inside the sandbox.
    Session,
    /// `{{workdir}}`: the task's workdir.
    Workdir,
    /// `{{prompt_file}}`: `{{session}}/prompt.txt`.
    PromptFile,
    /// `{{api.NAME}}`: a value of the API in use (`[api.X.values]`).
    ApiValue(String),
}

impl Placeholder {
    fn parse(name: &str) -> Option<Placeholder> {
        Some(match name {
            "model" => Placeholder::Model,
            "base_url" => Placeholder::BaseUrl,
            "key_env" => Placeholder::KeyEnv,
            "key_ref" => Placeholder::KeyRef,
            "session" => Placeholder::Session,
            "workdir" => Placeholder::Workdir,
            "prompt_file" => Placeholder::PromptFile,
            _ => {
                let v = name.strip_prefix("api.")?;
                if !is_ident(v) {
                    return None;
                }
                Placeholder::ApiValue(v.into())
            }
        })
    }
}

/// A string of a spec: literal text and placeholders.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Template {
    /// The parts, in order.
    pub parts: Vec<Part>,
}

/// One part of a [`Template`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text of the spec.
    Lit(String),
    /// A value from the session's inputs.
    Ph(Placeholder),
}

/// Placeholder names, for messages.
const PLACEHOLDERS: &str =
    "model, base_url, key_env, key_ref, session, workdir, prompt_file, api.NAME";

impl Template {
    /// Parse `{{name}}` placeholders out of `text`.
    pub fn parse(text: &str) -> Result<Template, String> {
        if let Some(c) = text.chars().find(|c| c.is_control()) {
            return Err(format!("{text:?} contains the control character {c:?}"));
        }
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(i) = rest.find("{{") {
            if i > 0 {
                parts.push(Part::Lit(rest[..i].into()));
            }
            let after = &rest[i + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| format!("{text:?} has {{{{ without }}}}"))?;
            let name = &after[..end];
            let ph = Placeholder::parse(name).ok_or_else(|| {
                format!("{{{{{name}}}}} is not a placeholder (known: {PLACEHOLDERS})")
            })?;
            parts.push(Part::Ph(ph));
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            parts.push(Part::Lit(rest.into()));
        }
        Ok(Template { parts })
    }

    /// The placeholders it uses.
    pub fn placeholders(&self) -> impl Iterator<Item = &Placeholder> {
        self.parts.iter().filter_map(|p| match p {
            Part::Ph(ph) => Some(ph),
            Part::Lit(_) => None,
        })
    }

    /// Whether the template is exactly `{{key_ref}}`.
    pub fn is_key_ref(&self) -> bool {
        matches!(self.parts.as_slice(), [Part::Ph(Placeholder::KeyRef)])
    }
}

/// A lower-case identifier (`api.NAME`, a `[api.X.values]` key).
pub(super) fn is_ident(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == b'_')
        && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}
