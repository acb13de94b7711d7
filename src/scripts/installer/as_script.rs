//! An installer as a [`Script`]: built in Rust ([`Installer`]), or made
//! from a spec file that its header names ([`FromSpec`]).

use std::borrow::Cow;

use super::builder::Installer;
use super::template;
use crate::dialect::Dialect;
use crate::script::{RenderError, Script};

impl Installer {
    /// The whole script, built in Rust: the generated header, the body,
    /// held to the bash dialect.
    pub fn script(&self) -> Result<String, crate::generate::GenerateError> {
        Ok(crate::generate::finish(self, "the adapter's Installer builder")?.content)
    }

    /// The whole script as `shforge installer --spec SPEC` writes it; the
    /// header names the spec by its file name (never an absolute path).
    pub fn script_from_spec(
        &self,
        spec: &std::path::Path,
    ) -> Result<String, crate::generate::GenerateError> {
        let name = spec
            .file_name()
            .map_or_else(|| "the spec".into(), |n| n.to_string_lossy());
        let regenerate = format!("`shforge installer --spec {name}`");
        let script = FromSpec {
            installer: self.clone(),
            spec: name.into_owned(),
        };
        Ok(crate::generate::finish(&script, &regenerate)?.content)
    }
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
