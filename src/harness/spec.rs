//! Harness specs: one TOML file per harness (`harnesses/NAME.toml`), read
//! into a checked [`HarnessDef`]. The six shipped harnesses are such files
//! (compiled in); an adapter gives its own with `shforge harness --spec FILE`.
//!
//! Everything taken from a spec is data: argv words and environment values
//! go through [`RunnerParams`](crate::host::runner::RunnerParams) (quoted
//! by shforge), config files are parsed as JSON or TOML and written back by
//! a named [`Format`] that escapes each string for the harness's own
//! expansion syntax, and what is substituted into them is a closed set of
//! typed [`Placeholder`]s. A spec cannot add shell code: the one piece of
//! setup code (copying a named key variable, `[key] reads`) is built here.
//!
//! Every refusal names the field (`run.args[3]`, `file[0].content`) and
//! why, in one line.

use std::collections::BTreeSet;
use std::fmt;

use super::Api;
use super::format::Format;

mod key;
pub use key::KeyReads;

/// A checked harness spec: made only by [`HarnessDef::from_toml`], so every
/// one holds the rules of the module doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarnessDef {
    /// The harness's name (`[a-z][a-z0-9-]*`), written to `capture.json`.
    pub(crate) name: String,
    /// One line saying what it is.
    pub(crate) description: String,
    /// Its installer spec, relative to the crate root (`installers/NAME.toml`).
    pub(crate) installer: Option<String>,
    /// The APIs it speaks; the first is the default.
    pub(crate) apis: Vec<Api>,
    /// argv after the entry program, unless a mode or API replaces it.
    pub(crate) args: Vec<Template>,
    /// argv per mode (`[run.mode.direct] args`), replacing [`HarnessDef::args`].
    pub(crate) mode_args: Vec<(super::Mode, Vec<Template>)>,
    /// Environment for the CLI, in order.
    pub(crate) env: Vec<(String, Template)>,
    /// Extra empty directories, relative to the session dir.
    pub(crate) dirs: Vec<String>,
    /// How the prompt reaches the CLI.
    pub(crate) prompt: PromptVia,
    /// What the CLI prints on stdout (`run.output`, default JSON).
    pub(crate) output: Output,
    /// Per API: the base URL's path, named values, argv and extra env.
    pub(crate) per_api: Vec<ApiProfile>,
    /// The fixed variable the CLI reads the key from, per API, if any:
    /// another named variable is copied into it by the runner's setup (by
    /// name).
    pub(crate) key_reads: KeyReads,
    /// Config and other files.
    pub(crate) files: Vec<FileDef>,
    /// Where the session data lands.
    pub(crate) capture: CaptureDef,
}

/// How the prompt reaches the CLI (through argv only as a last resort).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptVia {
    /// `prompt.txt` is the CLI's stdin.
    Stdin,
    /// argv names the file (`{{prompt_file}}`, e.g. `--message-file`).
    File,
    /// `prompt.txt`'s content is the last argv word, read by the runner at
    /// exec time (`RUNNER_ARG_FILE`), for a CLI that takes its prompt no
    /// other way (Cline's `--json`): at most 131071 bytes, no NUL, and
    /// visible in `/proc/PID/cmdline`.
    Arg,
}

/// What a harness prints on stdout (`run.output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// JSON values (one per line, or one object over many lines).
    Json,
    /// Plain text: the final answer only (Hermes's `-z`).
    Text,
}

impl HarnessDef {
    /// What the CLI prints on stdout.
    pub fn output(&self) -> Output {
        self.output
    }
}

/// What a spec says for one API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiProfile {
    /// The API.
    pub(crate) api: Api,
    /// Appended to the server root for `{{base_url}}` (`/v1` or empty).
    pub(crate) url_path: String,
    /// `{{api.NAME}}` values (spec text, escaped like any literal).
    pub(crate) values: Vec<(String, String)>,
    /// argv replacing the default for this API.
    pub(crate) args: Option<Vec<Template>>,
    /// Environment appended for this API.
    pub(crate) env: Vec<(String, Template)>,
}

/// One file of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDef {
    /// Path relative to the session dir.
    pub(crate) path: String,
    /// How its content is written.
    pub(crate) format: Format,
    /// The content, parsed: a JSON value or TOML table with templates in
    /// its strings.
    pub(crate) content: Content,
}

/// A config file's parsed content.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// A JSON document.
    Json(serde_json::Value),
    /// A TOML table.
    Toml(toml::Table),
}

impl Eq for Content {}

/// Where `capture.json` says the session data is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureDef {
    /// The `shforge snapshot` kind (the same names as `snapshot::Kind`),
    /// or `None` when no reader exists.
    pub(crate) reader: Option<String>,
    /// A database file (`db`) or a directory (`dir`).
    pub(crate) source: CaptureSource,
    /// Path relative to the session dir.
    pub(crate) path: String,
}

/// Whether the capture is one database file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureSource {
    /// `"db": FILE`.
    Db,
    /// `"dir": DIR`.
    Dir,
}

/// What may be substituted into a spec's text: a closed set, each written
/// per [`Format`] as data.
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

/// A bad spec: the field and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("harness spec: {field}: {why}")]
pub struct SpecError {
    /// The field's path (`run.args[2]`, `capture.reader`).
    pub field: String,
    /// What is wrong.
    pub why: String,
}

fn err(field: impl fmt::Display, why: impl Into<String>) -> SpecError {
    SpecError {
        field: field.to_string(),
        why: why.into(),
    }
}

fn is_ident(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == b'_')
        && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}

fn is_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_lowercase())
        && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
}

/// Variables every session sets itself (see `assemble`).
pub(super) const SESSION_VARS: [&str; 8] = [
    "HOME",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "NO_UPDATE_NOTIFIER",
    "NPM_CONFIG_UPDATE_NOTIFIER",
];

/// Paths of the session dir a spec may not write or name as its own.
const RESERVED: [&str; 7] = [
    "params.sh",
    "prompt.txt",
    "capture.json",
    "events.log",
    "stdout.log",
    "stderr.log",
    "receipt.json",
];

/// A relative path inside the session dir: no empty, `.` or `..`
/// component, no leading `/`, printable.
fn check_rel(field: &str, p: &str) -> Result<(), SpecError> {
    if p.is_empty() || p.starts_with('/') {
        return Err(err(field, format!("{p:?} is not a relative path")));
    }
    if p.chars().any(|c| c.is_control()) {
        return Err(err(field, format!("{p:?} contains a control character")));
    }
    if p.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Err(err(field, format!("{p:?} has an empty, . or .. component")));
    }
    Ok(())
}

/// A spec table being read: every key taken is remembered, and what is
/// left over is refused by [`Table::done`].
struct Table<'a> {
    path: String,
    t: &'a toml::Table,
    seen: BTreeSet<&'a str>,
}

impl<'a> Table<'a> {
    fn new(path: impl Into<String>, t: &'a toml::Table) -> Self {
        Table {
            path: path.into(),
            t,
            seen: BTreeSet::new(),
        }
    }

    fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.into()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn get(&mut self, key: &'a str) -> Option<&'a toml::Value> {
        self.seen.insert(key);
        self.t.get(key)
    }

    fn opt_str(&mut self, key: &'a str) -> Result<Option<&'a str>, SpecError> {
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(err(
                self.field(key),
                format!("must be a string, not {}", v.type_str()),
            )),
        }
    }

    fn str(&mut self, key: &'a str) -> Result<&'a str, SpecError> {
        self.opt_str(key)?
            .ok_or_else(|| err(self.field(key), "is missing"))
    }

    fn opt_table(&mut self, key: &'a str) -> Result<Option<Table<'a>>, SpecError> {
        let field = self.field(key);
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::Table(t)) => Ok(Some(Table::new(field, t))),
            Some(v) => Err(err(field, format!("must be a table, not {}", v.type_str()))),
        }
    }

    fn opt_array(&mut self, key: &'a str) -> Result<Option<&'a [toml::Value]>, SpecError> {
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(err(
                self.field(key),
                format!("must be an array, not {}", v.type_str()),
            )),
        }
    }

    fn opt_strings(&mut self, key: &'a str) -> Result<Option<Vec<(String, &'a str)>>, SpecError> {
        let field = self.field(key);
        let Some(items) = self.opt_array(key)? else {
            return Ok(None);
        };
        items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let f = format!("{field}[{i}]");
                match v {
                    toml::Value::String(s) => Ok((f, s.as_str())),
                    v => Err(err(f, format!("must be a string, not {}", v.type_str()))),
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    fn done(self) -> Result<(), SpecError> {
        match self.t.keys().find(|k| !self.seen.contains(k.as_str())) {
            Some(k) => Err(err(self.field(k), "is not a field of a harness spec")),
            None => Ok(()),
        }
    }
}

fn template(field: &str, text: &str) -> Result<Template, SpecError> {
    Template::parse(text).map_err(|why| err(field, why))
}

/// argv templates; `{{key_ref}}` has no meaning outside a config.
fn args_of(t: &mut Table<'_>, key: &'static str) -> Result<Option<Vec<Template>>, SpecError> {
    let Some(items) = t.opt_strings(key)? else {
        return Ok(None);
    };
    items
        .into_iter()
        .map(|(f, s)| {
            let tpl = template(&f, s)?;
            no_key_ref(&f, &tpl)?;
            Ok(tpl)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn no_key_ref(field: &str, tpl: &Template) -> Result<(), SpecError> {
    if tpl.placeholders().any(|p| *p == Placeholder::KeyRef) {
        return Err(err(
            field,
            "{{key_ref}} is only for config files (argv and env name the variable with {{key_env}})",
        ));
    }
    Ok(())
}

/// `env = [["NAME", "value"], …]`.
fn env_of(t: &mut Table<'_>, key: &'static str) -> Result<Vec<(String, Template)>, SpecError> {
    let field = t.field(key);
    let Some(items) = t.opt_array(key)? else {
        return Ok(Vec::new());
    };
    let mut out: Vec<(String, Template)> = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let pair = match v {
            toml::Value::Array(a) => a.as_slice(),
            v => {
                return Err(err(
                    f,
                    format!("must be [\"NAME\", \"value\"], not {}", v.type_str()),
                ));
            }
        };
        let [toml::Value::String(name), toml::Value::String(value)] = pair else {
            return Err(err(f, "must be [\"NAME\", \"value\"] (two strings)"));
        };
        if crate::names::VarName::new(name.as_str()).is_err() {
            return Err(err(&f, format!("{name:?} is not a variable name")));
        }
        if name.starts_with("RUNNER_") || SESSION_VARS.contains(&name.as_str()) {
            return Err(err(
                &f,
                format!("{name} is set by the session itself (or the runner's)"),
            ));
        }
        let tpl = template(&f, value)?;
        no_key_ref(&f, &tpl)?;
        out.push((name.clone(), tpl));
    }
    Ok(out)
}

fn apis_of(t: &mut Table<'_>) -> Result<Vec<Api>, SpecError> {
    let field = t.field("apis");
    let items = t
        .opt_strings("apis")?
        .ok_or_else(|| err(&field, "is missing"))?;
    if items.is_empty() {
        return Err(err(field, "names no API"));
    }
    let mut apis = Vec::new();
    for (f, s) in items {
        let api: Api = s
            .parse()
            .map_err(|e: super::HarnessError| err(&f, e.to_string()))?;
        if apis.contains(&api) {
            return Err(err(f, format!("{api} is listed twice")));
        }
        apis.push(api);
    }
    Ok(apis)
}

fn per_api_of(t: &mut Table<'_>, apis: &[Api]) -> Result<Vec<ApiProfile>, SpecError> {
    let mut section = t.opt_table("api")?;
    let mut out = Vec::new();
    let stray = |k: &&String| k.parse::<Api>().map_or(true, |a| !apis.contains(&a));
    if let Some(s) = &section
        && let Some(k) = s.t.keys().find(stray)
    {
        return Err(err(
            s.field(k),
            format!("{k:?} is not one of this harness's apis"),
        ));
    }
    for &api in apis {
        let mut p = ApiProfile {
            api,
            url_path: String::new(),
            values: Vec::new(),
            args: None,
            env: Vec::new(),
        };
        let sub = match section.as_mut() {
            Some(s) => s.opt_table(api.name())?,
            None => None,
        };
        if let Some(mut a) = sub {
            if let Some(path) = a.opt_str("url_path")? {
                let ok = path.is_empty()
                    || (path.starts_with('/')
                        && !path.ends_with('/')
                        && path
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"/-._~".contains(&b)));
                if !ok {
                    return Err(err(
                        a.field("url_path"),
                        format!("{path:?} is not empty or a path like /v1"),
                    ));
                }
                p.url_path = path.into();
            }
            if let Some(mut v) = a.opt_table("values")? {
                let keys: Vec<&String> = v.t.keys().collect();
                for k in keys {
                    let f = v.field(k);
                    if !is_ident(k) {
                        return Err(err(f, "a value name is [a-z_][a-z0-9_]*"));
                    }
                    let s = v.str(k)?;
                    if s.contains("{{") || s.chars().any(|c| c.is_control()) {
                        return Err(err(
                            f,
                            "a value is plain text (no {{ or control characters)",
                        ));
                    }
                    p.values.push((k.clone(), s.into()));
                }
                v.done()?;
            }
            p.args = args_of(&mut a, "args")?;
            p.env = env_of(&mut a, "env")?;
            a.done()?;
        }
        out.push(p);
    }
    if let Some(s) = section {
        s.done()?;
    }
    Ok(out)
}

fn files_of(t: &mut Table<'_>) -> Result<Vec<FileDef>, SpecError> {
    let Some(items) = t.opt_array("file")? else {
        return Ok(Vec::new());
    };
    let mut out: Vec<FileDef> = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let path = format!("file[{i}]");
        let toml::Value::Table(ft) = v else {
            return Err(err(path, "must be a table ([[file]])"));
        };
        let mut f = Table::new(path, ft);
        let rel = f.str("path")?;
        check_rel(&f.field("path"), rel)?;
        if RESERVED.contains(&rel) {
            return Err(err(
                f.field("path"),
                format!("{rel} is written by the session itself"),
            ));
        }
        if out.iter().any(|o| o.path == rel) {
            return Err(err(f.field("path"), format!("{rel} is listed twice")));
        }
        let fmt_name = f.str("format")?;
        let format: Format = fmt_name
            .parse()
            .map_err(|why: String| err(f.field("format"), why))?;
        let text = f.str("content")?;
        let field = f.field("content");
        let content = format.parse_content(text).map_err(|why| err(&field, why))?;
        format
            .check_templates(&content)
            .map_err(|why| err(&field, why))?;
        f.done()?;
        out.push(FileDef {
            path: rel.into(),
            format,
            content,
        });
    }
    Ok(out)
}

fn capture_of(t: &mut Table<'_>) -> Result<CaptureDef, SpecError> {
    let mut c = t
        .opt_table("capture")?
        .ok_or_else(|| err("capture", "is missing"))?;
    let reader = c.opt_str("reader")?;
    if let Some(r) = reader
        && !is_name(r)
    {
        return Err(err(
            c.field("reader"),
            format!("{r:?} is not a reader name"),
        ));
    }
    let (source, path, key) = match (c.opt_str("db")?, c.opt_str("dir")?) {
        (Some(p), None) => (CaptureSource::Db, p, "db"),
        (None, Some(p)) => (CaptureSource::Dir, p, "dir"),
        (Some(_), Some(_)) => return Err(err("capture", "give db or dir, not both")),
        (None, None) => return Err(err("capture", "give db (a database file) or dir")),
    };
    check_rel(&c.field(key), path)?;
    #[cfg(feature = "snapshot")]
    if let Some(r) = reader {
        use crate::snapshot::{Kind, SourceKind};
        let kind: Kind = r.parse().map_err(|_| {
            let known = Kind::ALL.map(Kind::name).join(", ");
            err(
                c.field("reader"),
                format!("no snapshot reader is named {r:?} (known: {known}; omit it for none)"),
            )
        })?;
        let wants = match kind.source() {
            SourceKind::Db => CaptureSource::Db,
            SourceKind::Dir => CaptureSource::Dir,
        };
        if wants != source {
            return Err(err(
                c.field(key),
                format!("the {r} reader takes {}", kind.source().flag()),
            ));
        }
    }
    c.done()?;
    Ok(CaptureDef {
        reader: reader.map(Into::into),
        source,
        path: path.into(),
    })
}

/// Every `{{api.NAME}}` used must be defined for every API.
fn check_api_values(def: &HarnessDef) -> Result<(), SpecError> {
    let mut used: Vec<(String, String)> = Vec::new();
    let mut note = |field: String, tpl: &Template| {
        for p in tpl.placeholders() {
            if let Placeholder::ApiValue(v) = p {
                used.push((field.clone(), v.clone()));
            }
        }
    };
    for (i, a) in def.args.iter().enumerate() {
        note(format!("run.args[{i}]"), a);
    }
    for (m, args) in &def.mode_args {
        for (i, a) in args.iter().enumerate() {
            note(format!("run.mode.{}.args[{i}]", m.name()), a);
        }
    }
    for (n, v) in &def.env {
        note(format!("run.env {n}"), v);
    }
    for (i, f) in def.files.iter().enumerate() {
        f.format
            .for_each_template(&f.content, &mut |t| note(format!("file[{i}].content"), t));
    }
    for (field, v) in used {
        for p in &def.per_api {
            if !p.values.iter().any(|(k, _)| *k == v) {
                return Err(err(
                    field,
                    format!(
                        "{{{{api.{v}}}}} has no value for api {} (api.{}.values.{v})",
                        p.api, p.api
                    ),
                ));
            }
        }
    }
    Ok(())
}

impl HarnessDef {
    /// Read and check a spec's TOML text.
    pub fn from_toml(text: &str) -> Result<HarnessDef, SpecError> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let at = e.span().map_or(String::new(), |s| {
                let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                format!("line {line}: ")
            });
            err("(file)", format!("{at}{}", e.message().trim()))
        })?;
        let mut t = Table::new("", &table);
        let name = t.str("name")?;
        if !is_name(name) {
            return Err(err("name", format!("{name:?} is not [a-z][a-z0-9-]*")));
        }
        let description = t.opt_str("description")?.unwrap_or("").to_owned();
        let installer = t.opt_str("installer")?;
        if let Some(i) = installer {
            check_rel("installer", i)?;
            if !i.ends_with(".toml") {
                return Err(err(
                    "installer",
                    format!("{i:?} is not a .toml installer spec"),
                ));
            }
        }
        let apis = apis_of(&mut t)?;
        let mut run = t
            .opt_table("run")?
            .ok_or_else(|| err("run", "is missing"))?;
        let args = args_of(&mut run, "args")?.ok_or_else(|| err("run.args", "is missing"))?;
        let mut mode_args = Vec::new();
        if let Some(mut modes) = run.opt_table("mode")? {
            for mode in [super::Mode::Direct, super::Mode::Events] {
                if let Some(mut m) = modes.opt_table(mode.name())? {
                    if let Some(a) = args_of(&mut m, "args")? {
                        mode_args.push((mode, a));
                    }
                    m.done()?;
                }
            }
            modes.done()?;
        }
        let env = env_of(&mut run, "env")?;
        let mut dirs = Vec::new();
        for (f, d) in run.opt_strings("dirs")?.unwrap_or_default() {
            check_rel(&f, d)?;
            dirs.push(d.to_owned());
        }
        let prompt = match run.str("prompt")? {
            "stdin" => PromptVia::Stdin,
            "file" => PromptVia::File,
            "arg" => PromptVia::Arg,
            other => {
                return Err(err(
                    "run.prompt",
                    format!("{other:?} is not stdin, file or arg"),
                ));
            }
        };
        let output = match run.opt_str("output")? {
            None | Some("json") => Output::Json,
            Some("text") => Output::Text,
            Some(other) => {
                return Err(err("run.output", format!("{other:?} is not json or text")));
            }
        };
        run.done()?;
        let per_api = per_api_of(&mut t, &apis)?;
        if !mode_args.is_empty() && per_api.iter().any(|p| p.args.is_some()) {
            return Err(err(
                "run.mode",
                "argv is replaced per mode or per API, not both",
            ));
        }
        let key_reads = key::key_reads_of(&mut t, &apis)?;
        let files = files_of(&mut t)?;
        let capture = capture_of(&mut t)?;
        t.done()?;
        let def = HarnessDef {
            name: name.into(),
            description,
            installer: installer.map(Into::into),
            apis,
            args,
            mode_args,
            env,
            dirs,
            prompt,
            output,
            per_api,
            key_reads,
            files,
            capture,
        };
        def.check_prompt()?;
        def.check_env()?;
        def.check_paths()?;
        check_api_values(&def)?;
        Ok(def)
    }

    /// Every argv: the default, per mode and per API.
    fn all_argvs(&self) -> Vec<(String, &[Template])> {
        let mut out = vec![("run.args".to_owned(), self.args.as_slice())];
        for (m, a) in &self.mode_args {
            out.push((format!("run.mode.{}.args", m.name()), a));
        }
        for p in &self.per_api {
            if let Some(a) = &p.args {
                out.push((format!("api.{}.args", p.api), a));
            }
        }
        out
    }

    /// `prompt = "file"` needs every argv to name `{{prompt_file}}`;
    /// `stdin` and `arg` need none to.
    fn check_prompt(&self) -> Result<(), SpecError> {
        for (field, argv) in self.all_argvs() {
            let named = argv
                .iter()
                .flat_map(Template::placeholders)
                .any(|p| *p == Placeholder::PromptFile);
            match (self.prompt, named) {
                (PromptVia::File, false) => {
                    return Err(err(
                        field,
                        "run.prompt is \"file\" but no word names {{prompt_file}}",
                    ));
                }
                (PromptVia::Stdin, true) => {
                    return Err(err(
                        field,
                        "names {{prompt_file}} but run.prompt is \"stdin\" (the CLI would read it twice)",
                    ));
                }
                (PromptVia::Arg, true) => {
                    return Err(err(
                        field,
                        "names {{prompt_file}} but run.prompt is \"arg\" (the CLI would get it twice)",
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// No variable set twice (the default env plus one API's), and none
    /// over the one the CLI reads the key from.
    fn check_env(&self) -> Result<(), SpecError> {
        for p in &self.per_api {
            let mut seen = BTreeSet::new();
            for (name, _) in self.env.iter().chain(&p.env) {
                let field = if p.env.iter().any(|(n, _)| n == name) {
                    format!("api.{}.env", p.api)
                } else {
                    "run.env".to_owned()
                };
                if !seen.insert(name.as_str()) {
                    return Err(err(field, format!("{name} is set twice")));
                }
                if self.key_reads.for_api(p.api) == Some(name.as_str()) {
                    return Err(err(
                        field,
                        format!(
                            "{name} is where the CLI reads the key (key.reads): the session must not set it"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The harness's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its one-line description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Its installer spec's path, if it names one.
    pub fn installer(&self) -> Option<&str> {
        self.installer.as_deref()
    }

    /// The APIs it speaks, the default first.
    pub fn apis(&self) -> &[Api] {
        &self.apis
    }

    /// A file must not be a directory of the session, nor lie where one of
    /// its directories is to be.
    fn check_paths(&self) -> Result<(), SpecError> {
        let dirs: Vec<&str> = super::COMMON_DIRS
            .iter()
            .copied()
            .chain(self.dirs.iter().map(String::as_str))
            .collect();
        for (i, f) in self.files.iter().enumerate() {
            let clash = dirs.iter().find(|d| {
                let (d, p) = (std::path::Path::new(d), std::path::Path::new(&f.path));
                d.starts_with(p)
            });
            if let Some(d) = clash {
                return Err(err(
                    format!("file[{i}].path"),
                    format!("{} is a directory of the session ({d})", f.path),
                ));
            }
        }
        Ok(())
    }

    /// What the spec says for `api` (every API of [`HarnessDef::apis`] has one).
    pub fn api_profile(&self, api: Api) -> Option<&ApiProfile> {
        self.per_api.iter().find(|p| p.api == api)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Harness, SHIPPED};

    /// Each row's file parses, and its `name` is the variant's.
    #[test]
    fn every_shipped_spec_parses_under_its_name() {
        for (h, text) in SHIPPED {
            let def = super::HarnessDef::from_toml(text).unwrap_or_else(|e| panic!("{h:?}: {e}"));
            assert_eq!(def.name, h.name());
            assert_eq!(
                def.installer.as_deref(),
                Some(format!("installers/{}.toml", def.name).as_str())
            );
        }
        assert_eq!(
            Harness::ALL.map(|h| h.name()),
            SHIPPED.map(|(h, _)| h.name())
        );
    }

    /// Every `harnesses/*.toml` is a shipped row (none left out of the
    /// table), and each names an installer spec that exists.
    #[test]
    fn the_table_is_the_directory_and_installers_exist() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut on_disk: Vec<String> = std::fs::read_dir(root.join("harnesses"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|n| n.strip_suffix(".toml").map(String::from))
            .collect();
        on_disk.sort();
        let mut shipped: Vec<String> = Harness::ALL.map(|h| h.name().to_owned()).to_vec();
        shipped.sort();
        assert_eq!(on_disk, shipped);
        for h in Harness::ALL {
            let installer = h.def().installer().unwrap();
            assert!(root.join(installer).is_file(), "{h}: {installer}");
        }
    }
}
