//! The catalog: every script `shforge generate` writes, in output-path
//! order. Each one is a [`Script`]; this module only lists them.

use crate::script::Script;
use crate::scripts::bootstrap::BootstrapBuilder;
use crate::scripts::installer::{self, FromSpec, Installer, SpecError};
use crate::scripts::runner::HarnessRunner;
use crate::scripts::supervisor::ProcessSupervisor;

/// The catalog could not be built.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A harness spec compiled into the crate does not parse.
    #[error("{spec}: {source}")]
    Spec {
        /// The spec file, relative to the crate root.
        spec: String,
        /// Why it does not parse.
        source: SpecError,
    },
}

/// Every script, in output-path order: the generic bootstrap, the
/// supervisor, the runner and one installer per harness spec.
pub fn catalog() -> Result<Vec<Box<dyn Script>>, CatalogError> {
    let mut scripts: Vec<Box<dyn Script>> = vec![
        Box::new(BootstrapBuilder::new()),
        Box::new(ProcessSupervisor),
        Box::new(HarnessRunner),
    ];
    for (name, text) in installer::HARNESS_SPECS {
        let spec = format!("installers/{name}.toml");
        match Installer::from_toml(text) {
            Ok(installer) => scripts.push(Box::new(FromSpec { installer, spec })),
            Err(source) => return Err(CatalogError::Spec { spec, source }),
        }
    }
    scripts.sort_by(|a, b| a.path().cmp(&b.path()));
    Ok(scripts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_builds_and_paths_are_sorted_and_unique() {
        let scripts = catalog().expect("the compiled-in specs parse");
        let paths: Vec<String> = scripts.iter().map(|s| s.path().into_owned()).collect();
        let mut sorted = paths.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(paths, sorted);
        assert_eq!(paths.len(), 3 + installer::HARNESS_SPECS.len());
    }
}
