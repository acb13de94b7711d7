//! What one smoke run installs and rolls out: a shipped harness, or an
//! adapter's own harness spec file (`shforge smoke --spec FILE`) with the
//! installer spec it names.
//!
//! An adapter's file is read the way `shforge harness --spec` reads it
//! ([`crate::harness::read_spec_file`], the one reader of both commands); its `installer`
//! is a path relative to the directory of the harness spec file (the
//! shipped files' `installers/NAME.toml` is relative to the crate root),
//! read the way `shforge installer --spec` reads one, and its installer
//! script is generated from it exactly as that command generates it. A bad
//! harness spec, a missing `installer` field and a bad installer spec are
//! refused before anything is installed, naming the file and the field.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::files::{self, Bound};
use crate::harness::{Harness, HarnessDef, HarnessRef};

/// An adapter's installer spec, as read.
#[derive(Debug, Clone)]
pub(crate) struct AdapterInstaller {
    /// The installer spec's path (its file name goes in the script header).
    pub(crate) path: PathBuf,
    /// Its text.
    pub(crate) text: String,
}

/// One harness the smoke runs.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The harness.
    pub(crate) harness: HarnessRef,
    /// An adapter's installer spec; `None` for a shipped harness (its
    /// installer is in the compiled-in catalog).
    pub(crate) installer: Option<AdapterInstaller>,
}

impl From<Harness> for Subject {
    fn from(h: Harness) -> Self {
        Subject {
            harness: h.into(),
            installer: None,
        }
    }
}

/// The directory an adapter's `installer` path is relative to: the spec
/// file's own, or, for a spec in a directory named `harnesses`, that
/// directory's parent: the layout of the shipped specs (relative to the
/// crate root) and of `shforge pin --out DIR` (`DIR/harnesses/NAME.toml`
/// naming `installers/NAME.toml`), since the path may not hold `..`.
fn installer_base(file: &Path) -> &Path {
    let dir = file.parent().unwrap_or(Path::new("."));
    match (dir.file_name(), dir.parent()) {
        (Some(n), Some(up)) if n == "harnesses" => up,
        _ => dir,
    }
}

impl Subject {
    /// An adapter's harness spec file and the installer spec it names,
    /// both checked; the error is one line (the CLI exits 2 with it).
    pub fn from_spec_file(file: &Path) -> Result<Subject, String> {
        let def = crate::harness::read_spec_file(file)?;
        let rel = def.installer().ok_or_else(|| {
            format!(
                "{}: harness spec: installer: is missing (the smoke installs the CLI \
                 with it: a path relative to this file)",
                file.display()
            )
        })?;
        let path = installer_base(file).join(rel);
        let text = files::read_text(&path, Bound::INSTALLER_SPEC).map_err(|e| {
            format!(
                "{}: harness spec: installer: {rel:?} (read as {}): {e}",
                file.display(),
                path.display()
            )
        })?;
        crate::installer::Installer::from_toml(&text)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Subject {
            harness: HarnessRef::Spec(Arc::new(def)),
            installer: Some(AdapterInstaller { path, text }),
        })
    }

    /// Its name (the spec's `name`).
    pub fn name(&self) -> &str {
        self.harness.def().name()
    }

    /// Its spec.
    pub(crate) fn def(&self) -> &HarnessDef {
        self.harness.def()
    }

    /// Its installer spec's text.
    pub(crate) fn installer_text(&self) -> Result<&str, String> {
        match &self.installer {
            Some(a) => Ok(&a.text),
            None => crate::installer::HARNESS_SPECS
                .iter()
                .find(|(n, _)| *n == self.name())
                .map(|(_, t)| *t)
                .ok_or_else(|| format!("no installer spec for {}", self.name())),
        }
    }

    /// The installer script: the catalog's for a shipped harness; for an
    /// adapter's, generated from its spec into `scripts/adapters/NAME.sh`
    /// as `shforge installer --spec` would.
    pub(crate) fn installer_script(&self, scripts: &Path) -> Result<PathBuf, String> {
        let Some(a) = &self.installer else {
            return Ok(scripts.join(format!("installers/{}.sh", self.name())));
        };
        let inst = crate::installer::Installer::from_toml(&a.text)
            .map_err(|e| format!("{}: {e}", a.path.display()))?;
        let script = inst
            .script_from_spec(&a.path)
            .map_err(|e| format!("generating the installer of {}: {e}", a.path.display()))?;
        let out = scripts.join(format!("adapters/{}.sh", self.name()));
        files::write_atomic(&out, script.as_bytes(), files::FileMode::Executable)
            .map_err(|e| format!("writing {}: {e}", out.display()))?;
        Ok(out)
    }
}
