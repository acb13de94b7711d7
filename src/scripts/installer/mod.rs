//! Installers: one generic, crash-safe mechanism (`templates/installer.sh`
//! and the shared functions in `templates/lib/`), many specs.
//!
//! * [`builder`] — [`Installer::builder`], the typed API adapters use.
//! * [`spec`] — the TOML format that maps one to one onto the builder.
//! * [`template`] — rendering.
//!
//! The five harness specs live in `installers/NAME.toml`, are compiled in
//! here and generated to `generated/installers/NAME.sh`.

use crate::catalog::{Entry, RenderError};
use crate::dialect::Dialect;

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
    ("openclaw", include_str!("../../../installers/openclaw.toml")),
    ("opencode", include_str!("../../../installers/opencode.toml")),
    ("pi", include_str!("../../../installers/pi.toml")),
];

/// Parse one of [`HARNESS_SPECS`].
pub fn harness(name: &str) -> Option<Result<Installer, SpecError>> {
    HARNESS_SPECS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| Installer::from_toml(text))
}

impl Installer {
    /// A catalog entry writing this installer to `installers/NAME.sh`, made
    /// from `spec` (the spec file's path relative to the crate root).
    pub fn catalog_entry(self, spec: String) -> Entry {
        let purpose = format!(
            "install {} {} into PREFIX/{}-{} (digest-checked, locked, staged)",
            self.name, self.version, self.name, self.version
        );
        Entry {
            path: format!("installers/{}.sh", self.name),
            template: template::TEMPLATE.into(),
            spec: Some(spec),
            dialect: Dialect::Bash,
            purpose,
            render: Box::new(move || self.render()),
        }
    }
}

/// Catalog entries: one installer per harness spec. A spec that does not
/// parse still gets its entry, whose rendering fails naming the spec.
pub fn entries() -> Vec<Entry> {
    HARNESS_SPECS
        .iter()
        .map(|(name, text)| {
            let spec = format!("installers/{name}.toml");
            match Installer::from_toml(text) {
                Ok(i) => i.catalog_entry(spec),
                Err(e) => {
                    let message = format!("{spec}: {e}");
                    Entry {
                        path: format!("installers/{name}.sh"),
                        template: template::TEMPLATE.into(),
                        spec: Some(spec),
                        dialect: Dialect::Bash,
                        purpose: "invalid spec".into(),
                        render: Box::new(move || {
                            Err(RenderError::Other {
                                template: template::TEMPLATE.into(),
                                message: message.clone(),
                            })
                        }),
                    }
                }
            }
        })
        .collect()
}

/// Write a generated script atomically and executable (see
/// [`crate::generate::write_file_atomic`]).
pub fn write_script(path: &std::path::Path, script: &str) -> std::io::Result<()> {
    crate::generate::write_file_atomic(path, script.as_bytes(), true)
}
