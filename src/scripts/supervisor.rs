//! `generated/process_supervisor.sh`: runs a harness command in a process
//! group of its own (and, with a writable cgroup v2 directory, a cgroup of its
//! own) under a deadline, stops everything it reached without forking, and
//! writes a cleanup receipt that also lists the preserved services. The
//! template is `templates/process_supervisor.sh` plus its sections in
//! `templates/supervisor/*.bash`. The host side (launch argv, receipt
//! parsing, ending services) is in [`crate::host::supervisor`].

use std::borrow::Cow;

use crate::dialect::Dialect;
use crate::quote::{Value, filters};
use crate::script::{RenderError, Script, render_template};

/// Output path of the supervisor under `generated/`.
pub const PATH: &str = "process_supervisor.sh";
/// The environment variable that marks the harness's processes.
pub const MARKER_VAR: &str = "NEMO_GYM_SUPERVISOR";
/// Grace period between TERM and KILL when `--grace` is not given, in
/// centiseconds (5 s).
pub const DEFAULT_GRACE_CS: u32 = 500;
/// How long the supervisor waits for KILLed processes to disappear, in
/// centiseconds (2 s).
pub const KILL_WAIT_CS: u32 = 200;

/// The supervisor template.
#[derive(askama::Template)]
#[template(path = "process_supervisor.sh")]
pub struct Supervisor {
    /// Name of the marker variable put into the harness's environment.
    pub marker_var: Value,
    /// Default `--grace`, centiseconds.
    pub default_grace_cs: Value,
    /// Bound on the wait after KILL, centiseconds.
    pub kill_wait_cs: Value,
}

impl Supervisor {
    /// The supervisor as shipped.
    pub fn standard() -> Result<Self, crate::quote::QuoteError> {
        crate::names::VarName::new(MARKER_VAR)?;
        Ok(Supervisor {
            marker_var: Value::new(MARKER_VAR)?,
            default_grace_cs: Value::display(&DEFAULT_GRACE_CS)?,
            kill_wait_cs: Value::display(&KILL_WAIT_CS)?,
        })
    }
}

fn render() -> Result<String, RenderError> {
    let t = Supervisor::standard().map_err(|source| RenderError::Quote {
        template: PATH.to_owned(),
        source,
    })?;
    render_template(PATH, &t)
}

/// `process_supervisor.sh` as the catalog lists it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessSupervisor;

impl Script for ProcessSupervisor {
    fn path(&self) -> Cow<'_, str> {
        PATH.into()
    }
    fn template(&self) -> &str {
        PATH
    }
    fn dialect(&self) -> Dialect {
        Dialect::Bash
    }
    fn purpose(&self) -> Cow<'_, str> {
        "run a harness in its own process group under a deadline, stop all it started, write a cleanup receipt".into()
    }
    fn body(&self) -> Result<String, RenderError> {
        render()
    }
}
