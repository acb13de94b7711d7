//! `generated/process_supervisor.sh`: runs a harness command in a process
//! group of its own (and, with a writable cgroup v2 directory, a cgroup of its
//! own) under a deadline, stops everything it reached without forking, and
//! writes a cleanup receipt that also lists the preserved services. The
//! template is `templates/process_supervisor.sh` plus its sections in
//! `templates/supervisor/*.bash`. The host side (launch argv, receipt
//! parsing, ending services) is in [`crate::host::supervisor`].

use crate::catalog::{Entry, RenderError, render_template};
use crate::dialect::Dialect;
use crate::quote::Value;

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
        crate::quote::check_name(MARKER_VAR)?;
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

/// Catalog entries of this script.
pub fn entries() -> Vec<Entry> {
    vec![Entry {
        path: PATH.to_owned(),
        template: PATH.to_owned(),
        spec: None,
        dialect: Dialect::Bash,
        purpose: "run a harness in its own process group under a deadline, stop all it started, write a cleanup receipt".to_owned(),
        render: Box::new(render),
    }]
}
