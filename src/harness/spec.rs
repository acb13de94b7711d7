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
pub use super::format::Content;
use super::format::Format;
use super::template::is_ident;
pub use super::template::{Part, Placeholder, Template};

mod key;
mod read;
pub use key::KeyReads;
use read::{
    Table, apis_of, args_of, capture_of, check_api_values, check_rel, env_of, files_of, outcome_of,
    per_api_of, smoke_of,
};

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
    /// The runtime it runs on (`run.runtime`): which of the caller's
    /// variables the runner removes (`runtime.rs`); none named, all.
    pub(crate) runtime: Option<super::Runtime>,
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
    /// What `shforge outcome` reads beyond the outputs (`[outcome]`).
    pub(crate) outcome: OutcomeDef,
    /// The tool the smoke's fake model writes the deliverable with
    /// (`[smoke] tool`).
    pub(crate) smoke_tool: SmokeTool,
}

/// `[outcome]`: how `shforge outcome` reads this harness beyond its
/// outputs, so that no harness needs code of its own there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutcomeDef {
    /// Scan the snapshot reader's records (each message's and part's raw
    /// JSON) for error fields (`records = true`; needs `capture.reader`).
    pub(crate) records: bool,
    /// What a non-zero exit status can mean.
    pub(crate) exit_status: ExitStatus,
}

/// What a harness's exit status can mean (`[outcome] exit_status`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ExitStatus {
    /// An exit code is only an exit code (`plain`, the default).
    #[default]
    Plain,
    /// The CLI exits with the API's HTTP status mod 256 (`http-mod-256`,
    /// Gemini CLI: 401 → 145, 429 → 173): codes 144–255 are read as
    /// statuses 400–511, not as signals 16–127.
    HttpMod256,
}

/// The tool the smoke's fake model has the CLI use for the deliverable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmokeTool {
    /// Its file-write tool (`write`, the default; the server falls back to
    /// the shell when the CLI declares no write tool).
    Write,
    /// Its shell tool (`shell`): for a CLI whose write tool cannot reach
    /// the deliverable's path (confined to its workspace) or that has none.
    Shell,
}

impl HarnessDef {
    /// How `shforge outcome` reads this harness.
    pub fn outcome(&self) -> OutcomeDef {
        self.outcome
    }

    /// The tool the smoke's fake model writes the deliverable with.
    pub fn smoke_tool(&self) -> SmokeTool {
        self.smoke_tool
    }

    /// The `shforge snapshot` kind of its session data, if a reader exists.
    pub fn reader(&self) -> Option<&str> {
        self.capture.reader.as_deref()
    }
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
        let runtime = match run.opt_str("runtime")? {
            None => None,
            Some(r) => Some(super::Runtime::from_name(r).ok_or_else(|| {
                err(
                    "run.runtime",
                    format!("{r:?} is not node, bun, python or native"),
                )
            })?),
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
        let outcome = outcome_of(&mut t, &capture)?;
        let smoke_tool = smoke_of(&mut t)?;
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
            runtime,
            per_api,
            key_reads,
            files,
            capture,
            outcome,
            smoke_tool,
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
