//! Reading a spec's TOML tables into checked parts: each key taken is
//! remembered (what is left over is refused), and each part names its
//! field when it refuses.

use super::*;

/// Paths of the session dir a spec may not write or name as its own.
pub(super) const RESERVED: [&str; 7] = [
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
pub(super) fn check_rel(field: &str, p: &str) -> Result<(), SpecError> {
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
pub(super) struct Table<'a> {
    path: String,
    t: &'a toml::Table,
    seen: BTreeSet<&'a str>,
}

impl<'a> Table<'a> {
    pub(super) fn new(path: impl Into<String>, t: &'a toml::Table) -> Self {
        Table {
            path: path.into(),
            t,
            seen: BTreeSet::new(),
        }
    }

    pub(super) fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.into()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub(super) fn get(&mut self, key: &'a str) -> Option<&'a toml::Value> {
        self.seen.insert(key);
        self.t.get(key)
    }

    pub(super) fn opt_str(&mut self, key: &'a str) -> Result<Option<&'a str>, SpecError> {
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(err(
                self.field(key),
                format!("must be a string, not {}", v.type_str()),
            )),
        }
    }

    pub(super) fn str(&mut self, key: &'a str) -> Result<&'a str, SpecError> {
        self.opt_str(key)?
            .ok_or_else(|| err(self.field(key), "is missing"))
    }

    pub(super) fn opt_bool(&mut self, key: &'a str) -> Result<Option<bool>, SpecError> {
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(err(
                self.field(key),
                format!("must be true or false, not {}", v.type_str()),
            )),
        }
    }

    pub(super) fn opt_table(&mut self, key: &'a str) -> Result<Option<Table<'a>>, SpecError> {
        let field = self.field(key);
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::Table(t)) => Ok(Some(Table::new(field, t))),
            Some(v) => Err(err(field, format!("must be a table, not {}", v.type_str()))),
        }
    }

    pub(super) fn opt_array(
        &mut self,
        key: &'a str,
    ) -> Result<Option<&'a [toml::Value]>, SpecError> {
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(err(
                self.field(key),
                format!("must be an array, not {}", v.type_str()),
            )),
        }
    }

    pub(super) fn opt_strings(
        &mut self,
        key: &'a str,
    ) -> Result<Option<Vec<(String, &'a str)>>, SpecError> {
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

    pub(super) fn done(self) -> Result<(), SpecError> {
        match self.t.keys().find(|k| !self.seen.contains(k.as_str())) {
            Some(k) => Err(err(self.field(k), "is not a field of a harness spec")),
            None => Ok(()),
        }
    }
}

pub(super) fn template(field: &str, text: &str) -> Result<Template, SpecError> {
    Template::parse(text).map_err(|why| err(field, why))
}

/// argv templates; `{{key_ref}}` has no meaning outside a config.
pub(super) fn args_of(
    t: &mut Table<'_>,
    key: &'static str,
) -> Result<Option<Vec<Template>>, SpecError> {
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

pub(super) fn no_key_ref(field: &str, tpl: &Template) -> Result<(), SpecError> {
    if tpl.placeholders().any(|p| *p == Placeholder::KeyRef) {
        return Err(err(
            field,
            "{{key_ref}} is only for config files (argv and env name the variable with {{key_env}})",
        ));
    }
    Ok(())
}

/// `env = [["NAME", "value"], …]`.
pub(super) fn env_of(
    t: &mut Table<'_>,
    key: &'static str,
) -> Result<Vec<(String, Template)>, SpecError> {
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

pub(super) fn apis_of(t: &mut Table<'_>) -> Result<Vec<Api>, SpecError> {
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
            .map_err(|e: crate::harness::HarnessError| err(&f, e.to_string()))?;
        if apis.contains(&api) {
            return Err(err(f, format!("{api} is listed twice")));
        }
        apis.push(api);
    }
    Ok(apis)
}

pub(super) fn per_api_of(t: &mut Table<'_>, apis: &[Api]) -> Result<Vec<ApiProfile>, SpecError> {
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

pub(super) fn files_of(t: &mut Table<'_>) -> Result<Vec<FileDef>, SpecError> {
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

pub(super) fn capture_of(t: &mut Table<'_>) -> Result<CaptureDef, SpecError> {
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

/// `[outcome]`: whether the reader's records are scanned for causes, and
/// what the CLI's exit status can mean. `records` needs a reader.
pub(super) fn outcome_of(t: &mut Table<'_>, capture: &CaptureDef) -> Result<OutcomeDef, SpecError> {
    let Some(mut o) = t.opt_table("outcome")? else {
        return Ok(OutcomeDef::default());
    };
    let records = o.opt_bool("records")?.unwrap_or(false);
    if records && capture.reader.is_none() {
        return Err(err(
            o.field("records"),
            "scans the reader's records, and capture.reader names none",
        ));
    }
    let exit_status = match o.opt_str("exit_status")? {
        None | Some("plain") => ExitStatus::Plain,
        Some("http-mod-256") => ExitStatus::HttpMod256,
        Some(other) => {
            return Err(err(
                o.field("exit_status"),
                format!("{other:?} is not plain or http-mod-256"),
            ));
        }
    };
    o.done()?;
    Ok(OutcomeDef {
        records,
        exit_status,
    })
}

/// `[smoke] tool`: which tool the fake model has the CLI write the
/// deliverable with.
pub(super) fn smoke_of(t: &mut Table<'_>) -> Result<SmokeTool, SpecError> {
    let Some(mut s) = t.opt_table("smoke")? else {
        return Ok(SmokeTool::Write);
    };
    let tool = match s.opt_str("tool")? {
        None | Some("write") => SmokeTool::Write,
        Some("shell") => SmokeTool::Shell,
        Some(other) => {
            return Err(err(
                s.field("tool"),
                format!("{other:?} is not write or shell"),
            ));
        }
    };
    s.done()?;
    Ok(tool)
}

/// Every `{{api.NAME}}` used must be defined for every API.
pub(super) fn check_api_values(def: &HarnessDef) -> Result<(), SpecError> {
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
