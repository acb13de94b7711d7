//! Installers: one generic, crash-safe mechanism (`templates/installer.sh`
//! and the shared functions in `templates/lib/`), many specs.
//!
//! * [`builder`] — [`Installer::builder`], the typed API adapters use.
//! * [`spec`] — the TOML format that maps one to one onto the builder.
//! * [`template`] — rendering.
//!
//! The five harness specs live in `installers/NAME.toml`, are compiled in
//! here and generated to `generated/installers/NAME.sh`.

use std::borrow::Cow;

use crate::dialect::Dialect;
use crate::script::{RenderError, Script};

pub mod builder;
pub mod spec;
pub mod template;

pub use builder::{Artifact, Installer, InstallerBuilder, Launcher, Libc, SpecError, Unpack};
pub use spec::InstallerSpec;

/// The harness specs kept in the repository: (name, TOML text).
pub const HARNESS_SPECS: &[(&str, &str)] = &[
    (
        "claude-code",
        include_str!("../../../installers/claude-code.toml"),
    ),
    ("kilo", include_str!("../../../installers/kilo.toml")),
    (
        "openclaw",
        include_str!("../../../installers/openclaw.toml"),
    ),
    (
        "opencode",
        include_str!("../../../installers/opencode.toml"),
    ),
    ("pi", include_str!("../../../installers/pi.toml")),
];

/// Parse one of [`HARNESS_SPECS`].
pub fn harness(name: &str) -> Option<Result<Installer, SpecError>> {
    HARNESS_SPECS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| Installer::from_toml(text))
}

/// An installer built in Rust: `installers/NAME.sh`, its header naming no
/// spec.
impl Script for Installer {
    fn path(&self) -> Cow<'_, str> {
        format!("installers/{}.sh", self.name).into()
    }
    fn template(&self) -> &str {
        template::TEMPLATE
    }
    fn dialect(&self) -> Dialect {
        Dialect::Bash
    }
    fn purpose(&self) -> Cow<'_, str> {
        format!(
            "install {} {} into PREFIX/{}-{} (digest-checked, locked, staged)",
            self.name, self.version, self.name, self.version
        )
        .into()
    }
    fn body(&self) -> Result<String, RenderError> {
        self.render()
    }
}

/// An installer made from a spec file, which its generated header names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromSpec {
    /// The installer the spec describes.
    pub installer: Installer,
    /// The spec: a path relative to the crate root (`installers/pi.toml`) or
    /// a file name, never an absolute path.
    pub spec: String,
}

impl Script for FromSpec {
    fn path(&self) -> Cow<'_, str> {
        self.installer.path()
    }
    fn template(&self) -> &str {
        self.installer.template()
    }
    fn spec(&self) -> Option<&str> {
        Some(&self.spec)
    }
    fn dialect(&self) -> Dialect {
        self.installer.dialect()
    }
    fn purpose(&self) -> Cow<'_, str> {
        self.installer.purpose()
    }
    fn body(&self) -> Result<String, RenderError> {
        self.installer.render()
    }
}

/// Write a generated script atomically and executable (see
/// [`crate::generate::write_file_atomic`]).
pub fn write_script(path: &std::path::Path, script: &str) -> std::io::Result<()> {
    crate::generate::write_file_atomic(path, script.as_bytes(), true)
}
