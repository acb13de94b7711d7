//! The catalog: every script `shforge generate` writes, in output-path
//! order. Each one is a [`Script`]; this module only lists them.

use std::path::{Path, PathBuf};

use crate::files::{self, Bound, FileError};
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
    /// An adapter's spec directory or spec could not be read.
    #[error(transparent)]
    Read(#[from] FileError),
    /// Two specs would write the same installer.
    #[error("{spec} writes {path}, which {other} writes too")]
    Collision {
        /// The later spec.
        spec: String,
        /// The output path both would write.
        path: String,
        /// The earlier spec, or "the catalog".
        other: String,
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
    for (name, text) in installer::shipped_specs() {
        let spec = format!("installers/{name}.toml");
        match Installer::from_toml(text) {
            Ok(installer) => scripts.push(Box::new(FromSpec { installer, spec })),
            Err(source) => return Err(CatalogError::Spec { spec, source }),
        }
    }
    scripts.sort_by(|a, b| a.path().cmp(&b.path()));
    Ok(scripts)
}

/// An adapter's own installers, one per `*.toml` in each of `dirs` (sorted
/// by name; other files are ignored), checked like the catalog's:
/// `shforge generate --spec DIR` writes them beside the catalog, and
/// `shforge check --spec DIR` finds them stale when a spec or a shared
/// `templates/lib/` function changed. The header names each spec by the
/// path given (a relative DIR) or by its file name (an absolute DIR), so
/// output stays free of absolute paths.
pub fn adapter_specs(dirs: &[PathBuf]) -> Result<Vec<FromSpec>, CatalogError> {
    let mut found = Vec::new();
    for dir in dirs {
        let read_dir = |source| FileError::Read {
            path: dir.clone(),
            source,
        };
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(read_dir)?
            .map(|e| e.map(|e| e.path()).map_err(read_dir))
            .collect::<Result<_, _>>()?;
        paths.retain(|p| p.extension().is_some_and(|x| x == "toml"));
        paths.sort();
        for path in paths {
            let text = files::read_text(&path, Bound::INSTALLER_SPEC)?;
            let spec = spec_name(dir, &path);
            let installer = Installer::from_toml(&text).map_err(|source| CatalogError::Spec {
                spec: spec.clone(),
                source,
            })?;
            found.push(FromSpec { installer, spec });
        }
    }
    Ok(found)
}

fn spec_name(dir: &Path, path: &Path) -> String {
    let file = path.file_name().unwrap_or_default().to_string_lossy();
    if dir.is_absolute() {
        file.into_owned()
    } else {
        dir.join(&*file).to_string_lossy().into_owned()
    }
}

/// The catalog's scripts and the adapter's installers, each finished with
/// the header that says how to regenerate it (`shforge generate`, or
/// `shforge generate --spec DIR` for an adapter's spec, so that a plain
/// `generate` is not mistaken for the way to redo it), in path order.
/// Two that would write the same file are refused.
pub fn render_with_adapter_specs(
    dirs: &[PathBuf],
) -> Result<Vec<crate::generate::Output>, RenderAllError> {
    let mut outputs = crate::generate::render_all(&catalog()?)?;
    let mut owners: std::collections::BTreeMap<String, String> = outputs
        .iter()
        .map(|o| (o.path.clone(), "the catalog".to_owned()))
        .collect();
    for dir in dirs {
        let regenerate = if dir.is_absolute() {
            "`shforge generate --spec DIR`".to_owned()
        } else {
            format!("`shforge generate --spec {}`", dir.display())
        };
        for spec in adapter_specs(std::slice::from_ref(dir))? {
            let out = crate::generate::finish(&spec, &regenerate)?;
            if let Some(other) = owners.insert(out.path.clone(), spec.spec.clone()) {
                return Err(CatalogError::Collision {
                    spec: spec.spec,
                    path: out.path,
                    other,
                }
                .into());
            }
            outputs.push(out);
        }
    }
    outputs.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(outputs)
}

/// The catalog or a script could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RenderAllError {
    /// A spec is bad or unreadable.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A script could not be finished.
    #[error(transparent)]
    Generate(#[from] crate::generate::GenerateError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::render_all;
    use std::path::Path;

    #[test]
    fn every_spec_builds_and_paths_are_sorted_and_unique() {
        let scripts = catalog().expect("the compiled-in specs parse");
        let paths: Vec<String> = scripts.iter().map(|s| s.path().into_owned()).collect();
        let mut sorted = paths.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(paths, sorted);
        assert_eq!(paths.len(), 3 + installer::shipped_specs().count());
    }

    fn second_line(content: &str) -> &str {
        content.lines().nth(1).expect("a header line")
    }

    /// Every way a script is made goes through `finish`; only the second
    /// header line differs.
    #[test]
    fn each_origin_has_its_header() {
        let head = "# Generated by shforge from templates/";
        let tail = ". Do not edit: change the source and regenerate with ";
        let boot = BootstrapBuilder::new().script().unwrap();
        assert_eq!(
            second_line(&boot.content),
            format!("{head}bootstrap.sh{tail}the adapter's BootstrapBuilder.")
        );
        let pi = installer::harness("pi").unwrap().unwrap();
        assert_eq!(
            second_line(&pi.script().unwrap()),
            format!("{head}installer.sh{tail}the adapter's Installer builder.")
        );
        let from_spec = pi
            .script_from_spec(Path::new("/somewhere/private/my-pi.toml"))
            .unwrap();
        assert_eq!(
            second_line(&from_spec),
            format!(
                "{head}installer.sh and my-pi.toml{tail}`shforge installer --spec my-pi.toml`."
            )
        );
        let catalog = catalog().unwrap();
        let outputs = render_all(&catalog).unwrap();
        let listed = outputs
            .iter()
            .find(|o| o.path == "installers/pi.sh")
            .unwrap();
        assert_eq!(
            second_line(&listed.content),
            format!("{head}installer.sh and installers/pi.toml{tail}`shforge generate`.")
        );
        // The bodies are the same whichever way they were made.
        let body = |c: &str| c.split_once(".\n").unwrap().1.to_owned();
        assert_eq!(body(&listed.content), body(&from_spec));
    }

    /// The crate's own checkout (these tests run from it).
    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// generated/ is exactly what the catalog renders (moved here from
    /// tests/it/generate.rs when the catalog became internal).
    #[test]
    fn golden_generated_dir_is_fresh() {
        let outputs = render_all(&catalog().expect("catalog builds")).expect("catalog renders");
        let report = crate::generate::check_dir(&root().join("generated"), &outputs).unwrap();
        assert!(
            report.is_clean(),
            "generated/ is stale: run `cargo run -- generate`\nmissing {:?} extra {:?}\n{}",
            report.missing,
            report.extra,
            report.diff()
        );
    }

    /// Each script, as `shforge generate` writes it (the golden test above
    /// holds generated/ to these outputs): a shebang, then a header naming
    /// its template, its spec (if any) and `shforge generate`; no absolute
    /// path of this checkout.
    #[test]
    fn generated_scripts_are_headed() {
        let catalog = catalog().expect("catalog builds");
        let outputs = render_all(&catalog).expect("catalog renders");
        assert_eq!(outputs.len(), catalog.len());
        for (e, o) in catalog.iter().zip(&outputs) {
            assert_eq!(o.path, e.path(), "outputs follow the catalog");
            let mut lines = o.content.lines();
            assert!(
                lines.next().unwrap().starts_with("#!"),
                "{}: no shebang",
                e.path()
            );
            let header = lines.next().unwrap();
            assert!(
                header.contains(&format!("templates/{}", e.template()))
                    && header.contains("shforge generate")
                    && e.spec().is_none_or(|spec| header.contains(spec)),
                "{}: header {header:?}",
                e.path()
            );
            assert!(
                !o.content.contains(root().to_str().unwrap()),
                "{}: absolute path leaked",
                e.path()
            );
        }
    }
}
