//! `generated/harness_runner.sh`: starts one harness CLI (Claude Code,
//! OpenCode, Kilo, OpenClaw, Pi) as its parameter file says, either by
//! `exec` (direct mode) or with its stdout turned into timestamped event
//! lines (events mode). Its interface: docs/scripts.md, "harness_runner.sh". The
//! template is `templates/harness_runner.sh` plus its parts, one job each, in
//! `templates/runner/*.bash`.
//!
//! The script is configured only by a parameter file. Adapters build that
//! file on the host with [`crate::host::runner::RunnerParams`].

use std::borrow::Cow;

use crate::dialect::Dialect;
use crate::quote::filters;
use crate::script::{RenderError, Script, render_template};

/// Output path of the runner under `generated/`, and its template.
pub const PATH: &str = "harness_runner.sh";

/// Exit status when the runner itself fails (bad parameters, bad cwd,
/// setup failed or exited, a redirection failed, events not written).
pub const EXIT_RUNNER_FAILED: i32 = 125;
/// Exit status when the CLI exists but cannot be executed.
pub const EXIT_NOT_EXECUTABLE: i32 = 126;
/// Exit status when the CLI is not found.
pub const EXIT_NOT_FOUND: i32 = 127;

/// The runner template. It has no fields: everything it does is decided at
/// run time by the parameter file.
#[derive(askama::Template)]
#[template(path = "harness_runner.sh")]
pub struct HarnessRunner;

impl Script for HarnessRunner {
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
        "start a harness CLI from a parameter file: exec it (direct) or stamp each stdout line into an events file (events)".into()
    }
    fn body(&self) -> Result<String, RenderError> {
        render_template(PATH, self)
    }
}
