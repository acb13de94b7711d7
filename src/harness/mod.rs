//! Harness profiles (`shforge harness NAME …` or `--spec FILE`): for each
//! harness CLI, everything that must sit in a session dir inside the sandbox
//! before the supervisor starts `harness_runner.sh SESSION/params.sh`.
//!
//! A harness is data: one spec file (`harnesses/NAME.toml`, read by
//! [`spec`] into a [`HarnessDef`]) gives its APIs, argv, environment,
//! config files with typed placeholders, extra dirs, how the prompt reaches
//! it and its capture. The shipped ones are compiled in ([`SHIPPED`],
//! the one table naming them); an adapter's own file is read with
//! [`HarnessDef::from_toml`]. What cannot be data — each CLI's config
//! expansion syntax — is a named [`Format`] (`format.rs`).
//!
//! A [`SessionSpec`] names the harness, the session dir *inside the sandbox*
//! (`PATH` below), the task's workdir, the installed entry program, the model
//! endpoint and the prompt. [`SessionSpec::build`] turns it into a
//! [`Session`]: a list of files and empty directories relative to the session
//! dir, which [`Session::write_into`] writes on the host (atomically: into a
//! sibling temporary directory renamed into place), for the host to copy to
//! `PATH`. Both are in `build.rs`.
//!
//! # Session dir layout
//!
//! | path | what |
//! | --- | --- |
//! | `params.sh` | the runner's parameter file: only `RUNNER_*` names |
//! | `prompt.txt` | the prompt, byte for byte |
//! | `capture.json` | where the harness leaves its session data |
//! | `home/`, `tmp/` | `HOME` and `TMPDIR` |
//! | `xdg/{config,cache,data,state}/` | `XDG_CONFIG_HOME`, `XDG_CACHE_HOME`, `XDG_DATA_HOME`, `XDG_STATE_HOME` |
//! | `events.log` | events mode: the runner's timestamped stdout lines |
//! | `stdout.log` | direct mode: the CLI's stdout |
//! | `stderr.log` | the CLI's stderr (both modes) |
//! | per harness | its config and data dir (see its spec file) |
//!
//! # The prompt
//!
//! The prompt never goes through a shell: it is written to
//! `PATH/prompt.txt`, and every CLI reads it from there — as its stdin
//! (`RUNNER_STDIN`; Claude Code `-p`, OpenCode/Kilo `run`, Pi `-p`, Codex
//! `exec -` all read a non-terminal stdin to its end) or as a message file
//! (OpenClaw `--message-file`). Cline's `--json` takes it only as an
//! argument: the runner reads the file into its last argv word at exec
//! time (`RUNNER_ARG_FILE`, `run.prompt = "arg"`), so it is never in
//! `params.sh`, but it is bound to [`MAX_ARG_BYTES`] (a longer prompt is
//! refused here) and visible in `/proc/PID/cmdline`; the rest of this
//! section holds for the other CLIs. Quotes, newlines, `$(…)`, a leading `-` or
//! `@` and 1 MiB prompts (over Linux's 128 KiB limit for one argument) all
//! arrive unchanged. A regular file as stdin also ends at EOF, so no CLI
//! waits on it (the reason for `</dev/null` in the harness notes).
//! Quirks: Pi trims leading and trailing whitespace of what it reads; Qwen
//! Code appends `\n\n` to its stdin.
//!
//! # The API key
//!
//! Its value is never written: the session names its variable (`--api-key-env
//! VAR`, default `ANTHROPIC_API_KEY` for Anthropic, else `OPENAI_API_KEY`),
//! set in the environment the supervisor starts with (the runner passes it on).
//!
//! A spec names it as `{{key_env}}` (the name) or `{{key_ref}}` (its config
//! format's reference: `{env:VAR}`, `${VAR}`); with `[key] reads = NAME`
//! (Claude Code: `ANTHROPIC_API_KEY`) another VAR is copied into NAME by
//! `RUNNER_SETUP` with `${!name}` (the code holds the names only).
//!
//! # capture.json
//!
//! One JSON object, the input of `shforge snapshot`: `{"harness": NAME,
//! "kind": KIND, "db": FILE}` (SQLite: `--db FILE`) or `{…, "dir": DIR}`
//! (JSONL: `--dir DIR`); `kind` is `null` for a harness with no reader.
//! Paths are inside the sandbox, under the session dir.
//!
//! # Base URL
//!
//! `base_url` is the server's root (`http://127.0.0.1:PORT`; a trailing `/v1` is dropped);
//! each profile adds `/v1` where its client wants it. The grammar and what
//! is refused (credentials, queries, fragments, malformed hosts and ports,
//! other schemes; any letter case of `http`/`https` is accepted and written
//! lower-case) are in `url.rs`.
//!
//! # Values are data
//!
//! A value taken from input (the model, the URL, the key's variable name)
//! must not make a CLI read a file or a variable through its config's own
//! references: each config file's [`Format`] escapes every string for its
//! CLI (the table is in `format.rs`), proved against the pinned CLIs
//! (`tests/it/harness.rs`, `hostile_model_stays_data_in_real_*`).

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use crate::host::runner::{RunnerParams, RunnerParamsError};
use crate::quote::{Raw, quote};

mod api;
mod build;
mod format;
mod runtime;
pub mod spec;
mod template;
mod url;

pub use api::Api;
pub use format::Format;
pub use runtime::Runtime;
pub use spec::{HarnessDef, Output, SpecError};

/// The provider name every profile configures for the endpoint.
pub const PROVIDER: &str = "shforge";

/// A harness CLI with a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Harness {
    /// Claude Code (`claude -p`).
    ClaudeCode,
    /// OpenCode (`opencode run`).
    OpenCode,
    /// Kilo (`kilo run`), a fork of OpenCode.
    Kilo,
    /// Pi coding agent (`pi -p`).
    Pi,
    /// OpenClaw (`openclaw agent exec`).
    OpenClaw,
    /// Codex (`codex exec`).
    Codex,
    /// Qwen Code (`qwen --yolo -o stream-json`).
    QwenCode,
    /// Gemini CLI (`gemini`, prompt on stdin).
    GeminiCli,
    /// Cline (`cline --json`).
    Cline,
    /// Hermes Agent (`hermes -z`), on the portable Python runtime.
    Hermes,
    /// Stirrup (its bundle's boot.py: one headless Agent session), on the
    /// portable Python 3.13 runtime.
    Stirrup,
    /// NOOA (its bundle's boot.py: one headless CodingAgent turn), on the
    /// portable Python 3.13 runtime.
    Nooa,
    /// mini-swe-agent (its bundle's boot.py: `mini -y --exit-immediately`
    /// with the task from a file), on the portable Python runtime.
    MiniSweAgent,
}

/// The shipped harnesses and their spec files: the one table that names
/// them (the enum is only a typed handle on a row).
pub const SHIPPED: [(Harness, &str); 13] = [
    (
        Harness::ClaudeCode,
        include_str!("../../harnesses/claude-code.toml"),
    ),
    (
        Harness::OpenCode,
        include_str!("../../harnesses/opencode.toml"),
    ),
    (Harness::Kilo, include_str!("../../harnesses/kilo.toml")),
    (Harness::Pi, include_str!("../../harnesses/pi.toml")),
    (
        Harness::OpenClaw,
        include_str!("../../harnesses/openclaw.toml"),
    ),
    (Harness::Codex, include_str!("../../harnesses/codex.toml")),
    (
        Harness::QwenCode,
        include_str!("../../harnesses/qwen-code.toml"),
    ),
    (
        Harness::GeminiCli,
        include_str!("../../harnesses/gemini-cli.toml"),
    ),
    (Harness::Cline, include_str!("../../harnesses/cline.toml")),
    (Harness::Hermes, include_str!("../../harnesses/hermes.toml")),
    (
        Harness::Stirrup,
        include_str!("../../harnesses/stirrup.toml"),
    ),
    (Harness::Nooa, include_str!("../../harnesses/nooa.toml")),
    (
        Harness::MiniSweAgent,
        include_str!("../../harnesses/mini-swe-agent.toml"),
    ),
];

/// The shipped specs, parsed once (a unit test proves each parses).
fn shipped() -> &'static [HarnessDef] {
    static DEFS: OnceLock<Vec<HarnessDef>> = OnceLock::new();
    DEFS.get_or_init(|| {
        SHIPPED
            .iter()
            .map(|(h, text)| {
                HarnessDef::from_toml(text)
                    .unwrap_or_else(|e| panic!("the shipped spec of {h:?} is bad: {e}"))
            })
            .collect()
    })
}

impl Harness {
    /// Every harness, in a fixed order (the order of [`SHIPPED`]).
    pub const ALL: [Harness; 13] = [
        Harness::ClaudeCode,
        Harness::OpenCode,
        Harness::Kilo,
        Harness::Pi,
        Harness::OpenClaw,
        Harness::Codex,
        Harness::QwenCode,
        Harness::GeminiCli,
        Harness::Cline,
        Harness::Hermes,
        Harness::Stirrup,
        Harness::Nooa,
        Harness::MiniSweAgent,
    ];

    /// Its spec, parsed.
    pub fn def(self) -> &'static HarnessDef {
        let i = SHIPPED
            .iter()
            .position(|(h, _)| *h == self)
            .expect("every harness has a row");
        &shipped()[i]
    }

    /// The text of its spec file (`harnesses/NAME.toml`).
    pub fn spec_text(self) -> &'static str {
        SHIPPED
            .iter()
            .find(|(h, _)| *h == self)
            .map(|(_, t)| *t)
            .expect("every harness has a row")
    }

    /// The name used on the command line and in installer specs (its
    /// spec's `name`).
    pub fn name(self) -> &'static str {
        &self.def().name
    }

    /// The APIs this harness can speak to a custom endpoint.
    pub fn apis(self) -> &'static [Api] {
        &self.def().apis
    }

    /// The API used when none is asked for (the first of [`Harness::apis`]).
    pub fn default_api(self) -> Api {
        self.apis()[0]
    }
}

/// Read and check an adapter's harness spec file (at most 1 MiB): the one
/// reader of `shforge harness --spec` and `shforge smoke --spec`. The
/// error is one line naming the file (and the field, for a bad spec).
pub fn read_spec_file(file: &Path) -> Result<HarnessDef, String> {
    let bound = crate::files::Bound {
        what: "a harness spec",
        max: 1 << 20,
    };
    let text = crate::files::read_text(file, bound).map_err(|e| e.to_string())?;
    HarnessDef::from_toml(&text).map_err(|e| format!("{}: {e}", file.display()))
}

/// The names of the shipped harnesses, comma-separated.
fn known_harnesses() -> String {
    Harness::ALL.map(Harness::name).join(", ")
}

/// The harness a session is built for: a shipped one or an adapter's spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HarnessRef {
    /// One of [`SHIPPED`].
    Shipped(Harness),
    /// A spec read from a file (`shforge harness --spec FILE`).
    Spec(Arc<HarnessDef>),
}

impl HarnessRef {
    /// Its spec.
    pub fn def(&self) -> &HarnessDef {
        match self {
            HarnessRef::Shipped(h) => h.def(),
            HarnessRef::Spec(d) => d,
        }
    }
}

impl From<Harness> for HarnessRef {
    fn from(h: Harness) -> Self {
        HarnessRef::Shipped(h)
    }
}

impl From<HarnessDef> for HarnessRef {
    fn from(d: HarnessDef) -> Self {
        HarnessRef::Spec(Arc::new(d))
    }
}

impl fmt::Display for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Harness {
    type Err = HarnessError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Harness::ALL
            .into_iter()
            .find(|h| h.name() == s)
            .ok_or_else(|| HarnessError::UnknownHarness(s.to_owned()))
    }
}

/// How the runner starts the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// `exec` the CLI; its stdout goes to `stdout.log`.
    Direct,
    /// Timestamp each stdout line into `events.log`.
    #[default]
    Events,
}

impl Mode {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Events => "events",
        }
    }
}

impl FromStr for Mode {
    type Err = HarnessError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "direct" => Ok(Mode::Direct),
            "events" => Ok(Mode::Events),
            _ => Err(HarnessError::UnknownMode(s.to_owned())),
        }
    }
}

/// Why a session could not be built. Every case is bad input (the CLI
/// exits 2), except [`HarnessError::Io`].
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// No profile has this name.
    #[error("unknown harness {0:?} (known: {known}; or give --spec FILE)", known = known_harnesses())]
    UnknownHarness(String),
    /// Not chat, responses, anthropic or gemini.
    #[error("unknown api {0:?} (known: chat, responses, anthropic, gemini)")]
    UnknownApi(String),
    /// Not direct or events.
    #[error("unknown mode {0:?} (known: direct, events)")]
    UnknownMode(String),
    /// The harness cannot speak this API.
    #[error("harness {harness} does not support api {api} (it supports: {supported})")]
    ApiMismatch {
        /// The harness.
        harness: String,
        /// The API asked for.
        api: Api,
        /// What it supports, comma-separated.
        supported: String,
    },
    /// A path that must be absolute is not.
    #[error("{what} must be an absolute path, got {value:?}")]
    NotAbsolute {
        /// Which option.
        what: &'static str,
        /// Its value.
        value: String,
    },
    /// A value is empty or malformed.
    #[error("{what}: {why}")]
    Invalid {
        /// Which option.
        what: &'static str,
        /// What is wrong.
        why: String,
    },
    /// The parameter file could not be built.
    #[error(transparent)]
    Params(#[from] RunnerParamsError),
    /// Writing the session failed.
    #[error("writing {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

impl HarnessError {
    /// The exit code: 1 when writing the session failed, 2 for every other
    /// case (the caller's input).
    pub fn exit_code(&self) -> u8 {
        match self {
            HarnessError::Io { .. } => 1,
            _ => 2,
        }
    }
}

/// Everything a session is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSpec {
    /// The harness (`Harness::Pi.into()`, or an adapter's spec).
    pub harness: HarnessRef,
    /// The session dir inside the sandbox (absolute).
    pub session_dir: String,
    /// The task's workdir inside the sandbox (absolute): the CLI's cwd.
    pub workdir: String,
    /// The installed entry program (as the installer printed it).
    pub entry: String,
    /// The model server's root URL, without `/v1`.
    pub base_url: String,
    /// The model ID.
    pub model: String,
    /// The API; `None` picks the harness's default.
    pub api: Option<Api>,
    /// The variable carrying the API key; `None` picks the API's default.
    pub api_key_env: Option<String>,
    /// Variables of the caller's environment the CLI keeps although its
    /// runtime's table removes them (`--keep-env`): a task's
    /// `LD_LIBRARY_PATH` or `PYTHONPATH` that the commands the agent runs
    /// need. Each must be a variable name outside `RUNNER_*`.
    pub keep_env: Vec<String>,
    /// Direct or events.
    pub mode: Mode,
    /// The prompt, any UTF-8 text.
    pub prompt: String,
}

/// One file of a session, relative to the session dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// Path relative to the session dir.
    pub path: String,
    /// Content.
    pub content: Vec<u8>,
}

/// Where the harness leaves its session data (`capture.json`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Capture {
    /// The harness name.
    pub harness: String,
    /// The `shforge snapshot` kind, or `None` when there is no reader.
    pub kind: Option<String>,
    /// The SQLite database (opencode, kilo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db: Option<String>,
    /// The transcript dir (claude-code, pi, codex) or state dir (openclaw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
}

/// A built session: the files and empty directories to place in the
/// session dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The spec it was built from, with the API and key variable resolved.
    pub spec: SessionSpec,
    /// The API in use.
    pub api: Api,
    /// The variable that carries the key.
    pub api_key_env: String,
    /// The runner parameters.
    pub params: RunnerParams,
    /// `RUNNER_UNSET`, written after them in `params.sh`: the caller's
    /// variables kept from the CLI (`runtime.rs` says which and why).
    pub unset: Vec<String>,
    /// Where the session data lands.
    pub capture: Capture,
    /// Files, relative to the session dir (params.sh, prompt.txt,
    /// capture.json and the harness's config).
    pub files: Vec<SessionFile>,
    /// Empty directories, relative to the session dir.
    pub dirs: Vec<String>,
}

/// Paths inside the session dir, as the sandbox sees them.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    root: String,
}

impl Layout {
    pub(crate) fn path(&self, rel: &str) -> String {
        format!("{}/{rel}", self.root)
    }
}

/// The longest argv word Linux takes (MAX_ARG_STRLEN, 32 pages, less the
/// NUL): the bound of a prompt given as an argument (`run.prompt = "arg"`).
pub const MAX_ARG_BYTES: usize = 131_071;

/// Relative names of the isolated dirs every session has.
pub const COMMON_DIRS: [&str; 6] = [
    "home",
    "tmp",
    "xdg/config",
    "xdg/cache",
    "xdg/data",
    "xdg/state",
];
