//! Rendering an [`Installer`] with `templates/installer.sh`, the one template
//! every installer comes from.

use askama::Template;

use super::builder::{Installer, Launcher};
use crate::quote::{QuoteError, Value, filters, quote};
use crate::script::{RenderError, render_template};

/// The template's view of one artifact: every field one shell word.
struct ArtifactView {
    path: Value,
    sha256: Value,
    unpack: Value,
    arch: Value,
    libc: Value,
    mode: Value,
    dest: Value,
    size: Value,
    subdir: Value,
    runtime: Value,
}

/// The template's view of one prepared program: its install-relative file
/// (the artifact's dest joined), and the rpath dirs joined with `:`.
struct RelocationView {
    artifact: Value,
    file: Value,
    interp_offset: Value,
    interp_size: Value,
    rpath_offset: Value,
    rpath_size: Value,
    zeroed_sha256: Value,
    interpreter: Value,
    rpath: Value,
}

/// The template's view of one `[[artifact.chmod]]`: the artifact's index,
/// the path inside its unpacked tree, the mode.
struct ChmodView {
    artifact: Value,
    path: Value,
    mode: Value,
}

/// The template's view of one musl library.
struct MuslView {
    soname: Value,
    package: Value,
}

#[derive(Template)]
#[template(path = "installer.sh", escape = "sh")]
struct InstallerScript {
    name: Value,
    version: Value,
    entry: Value,
    check_expect: Value,
    check_args: Vec<Value>,
    artifacts: Vec<ArtifactView>,
    musl: Vec<MuslView>,
    relocations: Vec<RelocationView>,
    /// Empty for every spec without `[[artifact.chmod]]`: the template then
    /// renders none of the chmod code, so those installers stay as they were.
    chmods: Vec<ChmodView>,
    glibc_needed: Value,
    launcher_path: Value,
    launcher_text: Value,
}

// The `raw` filter is not used by this template; keep the import the
// convention asks for without a warning.
#[allow(unused_imports)]
use filters as _;

/// The one template every installer is rendered from.
pub(crate) const TEMPLATE: &str = "installer.sh";

fn wrap(e: QuoteError) -> RenderError {
    RenderError::Quote {
        template: TEMPLATE.into(),
        source: e,
    }
}

/// The launcher script's text: finds the install relative to itself, after
/// following the symlinks that led to it (a launcher called through a link
/// in another directory still finds its runtime).
fn launcher_text(name: &str, l: &Launcher) -> Result<String, QuoteError> {
    let up = "../".repeat(l.path.matches('/').count());
    let mut words = vec![format!(
        "\"$here\"/{}",
        quote(&format!("{up}{}", l.program))?
    )];
    for a in &l.args {
        words.push(format!("\"$here\"/{}", quote(&format!("{up}{a}"))?));
    }
    Ok(format!(
        r#"#!/bin/sh
# Launcher written by the shforge installer of {name}: runs it with the
# runtime of this install dir, found relative to this file once the symlinks
# that led here are followed (at most 40, like the kernel).
self=$0
hops=0
while [ -L "$self" ] && [ "$hops" -lt 40 ]; do
    link=$(readlink "$self") || break
    case $link in
        /*) self=$link ;;
        *)
            case $self in
                */*) self=${{self%/*}}/$link ;;
                *) self=$link ;;
            esac
            ;;
    esac
    hops=$((hops + 1))
done
case $self in
    */*) here=${{self%/*}} ;;
    *) here=. ;;
esac
exec {} "$@"
"#,
        words.join(" ")
    ))
}

impl Installer {
    /// The script body (without the generated header).
    pub fn render(&self) -> Result<String, RenderError> {
        let v = |s: &str| Value::new(s).map_err(wrap);
        let artifacts = self
            .artifacts
            .iter()
            .map(|a| {
                Ok(ArtifactView {
                    path: v(&a.path)?,
                    sha256: v(&a.sha256)?,
                    unpack: v(a.unpack.as_str())?,
                    arch: v(&a.arch)?,
                    libc: v(a.libc.as_str())?,
                    mode: v(a.mode.as_deref().unwrap_or(""))?,
                    dest: v(a.dest.as_deref().unwrap_or("."))?,
                    size: v(&a.size.map(|n| n.to_string()).unwrap_or_default())?,
                    subdir: v(a.subdir.as_deref().unwrap_or("."))?,
                    runtime: v(a.runtime.as_str())?,
                })
            })
            .collect::<Result<Vec<_>, RenderError>>()?;
        let mut relocations = Vec::new();
        for (i, a) in self.artifacts.iter().enumerate() {
            for r in &a.relocations {
                let file = match a.dest.as_deref() {
                    None | Some(".") => r.file.clone(),
                    Some(d) => format!("{d}/{}", r.file),
                };
                relocations.push(RelocationView {
                    artifact: v(&i.to_string())?,
                    file: v(&file)?,
                    interp_offset: v(&r.interp_offset.to_string())?,
                    interp_size: v(&r.interp_size.to_string())?,
                    rpath_offset: v(&r.rpath_offset.to_string())?,
                    rpath_size: v(&r.rpath_size.to_string())?,
                    zeroed_sha256: v(&r.zeroed_sha256)?,
                    interpreter: v(&r.interpreter)?,
                    rpath: v(&r.rpath.join(":"))?,
                });
            }
        }
        let mut chmods = Vec::new();
        for (i, a) in self.artifacts.iter().enumerate() {
            for (path, mode) in &a.chmods {
                chmods.push(ChmodView {
                    artifact: v(&i.to_string())?,
                    path: v(path)?,
                    mode: v(mode)?,
                });
            }
        }
        let musl = self
            .musl_libs
            .iter()
            .map(|m| {
                Ok(MuslView {
                    soname: v(m.soname)?,
                    package: v(m.apk_package)?,
                })
            })
            .collect::<Result<Vec<_>, RenderError>>()?;
        let (launcher_path, launcher_text) = match &self.launcher {
            Some(l) => (l.path.clone(), launcher_text(&self.name, l).map_err(wrap)?),
            None => (String::new(), String::new()),
        };
        let t = InstallerScript {
            name: v(&self.name)?,
            version: v(&self.version)?,
            entry: v(&self.entry)?,
            check_expect: v(&self.check_expect)?,
            check_args: self
                .check_args
                .iter()
                .map(|a| v(a))
                .collect::<Result<_, _>>()?,
            artifacts,
            musl,
            relocations,
            chmods,
            glibc_needed: v(self.glibc_needed().unwrap_or(""))?,
            launcher_path: v(&launcher_path)?,
            launcher_text: v(&launcher_text)?,
        };
        render_template(TEMPLATE, &t)
    }
}
