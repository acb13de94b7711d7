//! The runner's parameter file, built on the host: [`RunnerParams`] checks
//! what `harness_runner.sh` would refuse and renders through
//! `crate::params::render` (the same code as `shforge params`), so nobody
//! writes the JSON or the shell by hand. The script itself is
//! [`crate::scripts::runner`].

use crate::names::VarName;
use crate::params::{self, ParamValue, ParamsError};
use crate::quote::Raw;

/// How the runner starts the CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerMode {
    /// `exec` the CLI with its redirections (`RUNNER_MODE=direct`).
    Direct,
    /// Read the CLI's stdout and write `<seconds[.fraction]>\t<line>` lines
    /// to this file (`RUNNER_MODE=events`, `RUNNER_EVENTS`).
    Events {
        /// The events file.
        events: String,
    },
}

/// Why a runner parameter set was refused. Each case is one the script
/// itself would reject with status 125.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunnerParamsError {
    /// `RUNNER_ARGV` must name a CLI.
    #[error("runner params: the argv is empty: there is no CLI to run")]
    EmptyArgv,
    /// `RUNNER_ARGV[0]`, the CLI's name, is the empty string.
    #[error("runner params: argv[0] is empty: there is no CLI to run")]
    EmptyProgram,
    /// An environment entry's name is not a variable name.
    #[error("runner params: env name {0:?} is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*)")]
    BadEnvName(String),
    /// A path parameter is the empty string.
    #[error("runner params: {0} is empty")]
    EmptyPath(&'static str),
    /// `RUNNER_STDOUT` was given in events mode, where stdout is the events.
    #[error(
        "runner params: stdout does not apply in events mode (the CLI's stdout becomes the events file)"
    )]
    StdoutInEventsMode,
    /// `RUNNER_PATH_PREFIX` holds an empty or relative entry, which would
    /// let the working directory supply a program.
    #[error(
        "runner params: path prefix {0:?} holds an empty or relative entry (absolute directories only)"
    )]
    RelativePathPrefix(String),
    /// A value holds NUL, or another parameter-file rule failed.
    #[error(transparent)]
    Params(#[from] ParamsError),
}

/// A typed builder for the runner's parameter file. It can only write
/// `RUNNER_*` names, the only ones the runner accepts.
///
/// ```
/// use shforge::RunnerParams;
/// use shforge::quote::{quote, Raw};
///
/// let mut setup = Raw::code("export NODE_OPTIONS=");
/// setup.push_word(&quote("--max-old-space-size=4096").unwrap());
/// let file = RunnerParams::events(["pi", "--mode", "json"], "/tmp/s/events.log")
///     .cwd("/testbed")
///     .env("HOME", "/tmp/s/home")
///     .stderr("/tmp/s/stderr.log")
///     .setup(setup)
///     .render()
///     .unwrap();
/// assert!(file.as_str().starts_with("RUNNER_ARGV=()\nRUNNER_ARGV[0]='pi'\n"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerParams {
    argv: Vec<String>,
    mode: RunnerMode,
    cwd: Option<String>,
    path_prefix: Option<String>,
    env: Vec<(String, String)>,
    stdin: Option<String>,
    arg_file: Option<String>,
    stdout: Option<String>,
    stderr: Option<String>,
    setup: Option<Raw>,
}

impl RunnerParams {
    /// Direct mode: the runner `exec`s `argv`.
    pub fn direct<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::new(argv, RunnerMode::Direct)
    }

    /// Events mode: the CLI's stdout lines are stamped into `events`.
    pub fn events<I, S>(argv: I, events: impl Into<String>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::new(
            argv,
            RunnerMode::Events {
                events: events.into(),
            },
        )
    }

    fn new<I, S>(argv: I, mode: RunnerMode) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        RunnerParams {
            argv: argv.into_iter().map(Into::into).collect(),
            mode,
            cwd: None,
            path_prefix: None,
            env: Vec::new(),
            stdin: None,
            arg_file: None,
            stdout: None,
            stderr: None,
            setup: None,
        }
    }

    /// Run the CLI in this directory (`RUNNER_CWD`).
    pub fn cwd(mut self, dir: impl Into<String>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Put this in front of PATH for the setup and the CLI
    /// (`RUNNER_PATH_PREFIX`).
    pub fn path_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.path_prefix = Some(prefix.into());
        self
    }

    /// Export `name=value` to the CLI only (one `RUNNER_ENV` entry; later
    /// entries win, as with `export`).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// The CLI's stdin (`RUNNER_STDIN`; the runner's default is /dev/null).
    pub fn stdin(mut self, file: impl Into<String>) -> Self {
        self.stdin = Some(file.into());
        self
    }

    /// A file whose whole content the runner appends to argv as one more
    /// word at exec time (`RUNNER_ARG_FILE`): for a CLI that takes its
    /// prompt only as an argument. The word has an argument's limits (no
    /// NUL, at most 131071 bytes, visible in `/proc/PID/cmdline`); the
    /// runner stops with 125 on a file past them.
    pub fn arg_file(mut self, file: impl Into<String>) -> Self {
        self.arg_file = Some(file.into());
        self
    }

    /// The CLI's stdout file, direct mode only (`RUNNER_STDOUT`).
    pub fn stdout(mut self, file: impl Into<String>) -> Self {
        self.stdout = Some(file.into());
        self
    }

    /// The CLI's stderr file (`RUNNER_STDERR`).
    pub fn stderr(mut self, file: impl Into<String>) -> Self {
        self.stderr = Some(file.into());
        self
    }

    /// Shell code the runner runs (under `set -e`, in its own shell, after
    /// the cd and the PATH prefix) before the CLI (`RUNNER_SETUP`). A
    /// non-zero final status or an `exit` in it stops the runner with 125;
    /// traps it sets end with it. It is code, so it is [`Raw`]: build it
    /// from literals and quoted words.
    pub fn setup(mut self, code: Raw) -> Self {
        self.setup = Some(code);
        self
    }

    /// The parameters as name/value pairs, checked the way the script
    /// checks them.
    pub fn to_params(&self) -> Result<Vec<(String, ParamValue)>, RunnerParamsError> {
        match self.argv.first() {
            None => return Err(RunnerParamsError::EmptyArgv),
            Some(program) if program.is_empty() => return Err(RunnerParamsError::EmptyProgram),
            Some(_) => {}
        }
        for (name, _) in &self.env {
            if VarName::new(name.as_str()).is_err() {
                return Err(RunnerParamsError::BadEnvName(name.clone()));
            }
        }
        let mut out = vec![(
            "RUNNER_ARGV".to_owned(),
            ParamValue::Array(self.argv.clone()),
        )];
        let scalar = |out: &mut Vec<(String, ParamValue)>, name: &str, v: &str| {
            out.push((name.to_owned(), ParamValue::Scalar(v.to_owned())));
        };
        let path = |out: &mut Vec<(String, ParamValue)>,
                    name: &'static str,
                    v: &Option<String>|
         -> Result<(), RunnerParamsError> {
            match v {
                Some(v) if v.is_empty() => Err(RunnerParamsError::EmptyPath(name)),
                Some(v) => {
                    scalar(out, name, v);
                    Ok(())
                }
                None => Ok(()),
            }
        };
        match &self.mode {
            RunnerMode::Direct => scalar(&mut out, "RUNNER_MODE", "direct"),
            RunnerMode::Events { events } => {
                if self.stdout.is_some() {
                    return Err(RunnerParamsError::StdoutInEventsMode);
                }
                scalar(&mut out, "RUNNER_MODE", "events");
                path(&mut out, "RUNNER_EVENTS", &Some(events.clone()))?;
            }
        }
        path(&mut out, "RUNNER_CWD", &self.cwd)?;
        if let Some(prefix) = &self.path_prefix {
            if prefix.split(':').any(|d| !d.starts_with('/')) {
                return Err(RunnerParamsError::RelativePathPrefix(prefix.clone()));
            }
            scalar(&mut out, "RUNNER_PATH_PREFIX", prefix);
        }
        if !self.env.is_empty() {
            let entries = self.env.iter().map(|(n, v)| format!("{n}={v}")).collect();
            out.push(("RUNNER_ENV".to_owned(), ParamValue::Array(entries)));
        }
        path(&mut out, "RUNNER_STDIN", &self.stdin)?;
        path(&mut out, "RUNNER_ARG_FILE", &self.arg_file)?;
        path(&mut out, "RUNNER_STDOUT", &self.stdout)?;
        path(&mut out, "RUNNER_STDERR", &self.stderr)?;
        if let Some(setup) = &self.setup {
            scalar(&mut out, "RUNNER_SETUP", setup.as_str());
        }
        Ok(out)
    }

    /// The parameter file, as `shforge params` would print it.
    pub fn render(&self) -> Result<Raw, RunnerParamsError> {
        Ok(params::render(&self.to_params()?)?)
    }

    /// The same parameters as the JSON object `shforge params` reads (for
    /// adapters that call the CLI; keys come out sorted, which does not
    /// change the meaning of the file).
    pub fn to_json(&self) -> Result<serde_json::Value, RunnerParamsError> {
        let mut map = serde_json::Map::new();
        for (name, value) in self.to_params()? {
            let v = match value {
                ParamValue::Scalar(s) => serde_json::Value::String(s),
                ParamValue::Array(items) => serde_json::Value::Array(
                    items.into_iter().map(serde_json::Value::String).collect(),
                ),
            };
            map.insert(name, v);
        }
        Ok(serde_json::Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_renders_through_the_params_module() {
        let p = RunnerParams::direct(["claude", "-p", "it's"])
            .cwd("/w d")
            .env("A", "1=2")
            .stdout("/o");
        assert_eq!(
            p.render().unwrap().as_str(),
            "RUNNER_ARGV=()\nRUNNER_ARGV[0]='claude'\nRUNNER_ARGV[1]='-p'\nRUNNER_ARGV[2]=\"it's\"\n\
             RUNNER_MODE='direct'\nRUNNER_CWD='/w d'\nRUNNER_ENV=()\nRUNNER_ENV[0]='A=1=2'\nRUNNER_STDOUT='/o'\n"
        );
        // serde_json sorts the keys; the file is the same set of assignments.
        let mut from_json = params::parse(&p.to_json().unwrap().to_string()).unwrap();
        let mut direct = p.to_params().unwrap();
        from_json.sort_by(|a, b| a.0.cmp(&b.0));
        direct.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(from_json, direct);
    }

    #[test]
    fn builder_writes_runner_names_only() {
        // The runner refuses any other name; every parameter the builder
        // can set must come out as a RUNNER_* assignment.
        let p = RunnerParams::events(["x", "it's"], "/e")
            .cwd("/c")
            .path_prefix("/p")
            .env("HOME", "/h")
            .stdin("/i")
            .stderr("/s")
            .setup(Raw::code("true"));
        let params = p.to_params().unwrap();
        assert_eq!(params.len(), 9);
        for (name, _) in &params {
            assert!(name.starts_with("RUNNER_"), "{name}");
        }
        for line in p.render().unwrap().as_str().lines() {
            assert!(line.starts_with("RUNNER_"), "{line}");
        }
    }

    #[test]
    fn builder_refuses_what_the_script_refuses() {
        let none: [&str; 0] = [];
        assert_eq!(
            RunnerParams::direct(none).render(),
            Err(RunnerParamsError::EmptyArgv)
        );
        assert_eq!(
            RunnerParams::direct(["", "arg"]).render(),
            Err(RunnerParamsError::EmptyProgram)
        );
        assert_eq!(
            RunnerParams::direct(["x"]).env("1A", "v").render(),
            Err(RunnerParamsError::BadEnvName("1A".into()))
        );
        assert_eq!(
            RunnerParams::events(["x"], "").render(),
            Err(RunnerParamsError::EmptyPath("RUNNER_EVENTS"))
        );
        assert_eq!(
            RunnerParams::events(["x"], "/e").stdout("/o").render(),
            Err(RunnerParamsError::StdoutInEventsMode)
        );
        assert!(matches!(
            RunnerParams::direct(["a\0b"]).render(),
            Err(RunnerParamsError::Params(ParamsError::Nul(_)))
        ));
    }

    #[test]
    fn a_relative_path_prefix_is_refused() {
        for prefix in ["bin", "/a:", ":/a", "/a:.", "/a::/b", ""] {
            assert_eq!(
                RunnerParams::direct(["x"]).path_prefix(prefix).render(),
                Err(RunnerParamsError::RelativePathPrefix(prefix.into())),
                "{prefix:?}"
            );
        }
        assert!(
            RunnerParams::direct(["x"])
                .path_prefix("/a:/b")
                .render()
                .is_ok()
        );
    }
}
