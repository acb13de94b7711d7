//! `bootstrap.sh` (POSIX sh): install a missing command or musl library with
//! the image's own package manager, and refuse a session dir that overlaps
//! the task workdir.
//!
//! The generic script in `generated/` takes everything as flags. Adapters
//! that always need the same things bake them in with [`BootstrapBuilder`]
//! (a Codex variant needing `python3`, say); the flags still work on top.
//!
//! Which package provides which command under which package manager is the
//! one table [`PACKAGES`]; the musl libraries come from [`crate::MUSL_LIBS`].

use std::borrow::Cow;

use crate::dialect::Dialect;
use crate::generate::{self, GenerateError, Output};
use crate::names::PkgName;
use crate::quote::{QuoteError, Value, filters};
use crate::script::{RenderError, Script, render_template};

/// Output path in `generated/`.
pub const PATH: &str = "bootstrap.sh";
/// The template, relative to `templates/`.
pub const TEMPLATE: &str = "bootstrap.sh";

/// A package manager the bootstrap can drive, in the order it looks for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PackageManager {
    /// Alpine: `apk add --no-cache`.
    Apk,
    /// Debian/Ubuntu: `apt-get update` (once) and
    /// `DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends`.
    AptGet,
    /// Fedora/RHEL: `dnf -y install`.
    Dnf,
    /// UBI minimal images: `microdnf -y install`.
    Microdnf,
    /// Older RHEL/CentOS: `yum -y install`.
    Yum,
    /// openSUSE/SLES: `zypper --non-interactive install`.
    Zypper,
}

impl PackageManager {
    /// Every manager, in precedence order (the first found is used).
    pub const ALL: [PackageManager; 6] = [
        PackageManager::Apk,
        PackageManager::AptGet,
        PackageManager::Dnf,
        PackageManager::Microdnf,
        PackageManager::Yum,
        PackageManager::Zypper,
    ];

    /// The command name.
    pub fn command(self) -> &'static str {
        match self {
            PackageManager::Apk => "apk",
            PackageManager::AptGet => "apt-get",
            PackageManager::Dnf => "dnf",
            PackageManager::Microdnf => "microdnf",
            PackageManager::Yum => "yum",
            PackageManager::Zypper => "zypper",
        }
    }

    fn index(self) -> usize {
        Self::ALL
            .iter()
            .position(|&m| m == self)
            .expect("ALL lists every manager")
    }
}

/// The packages that provide one command, one per package manager, in the
/// order of [`PackageManager::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandPackages {
    /// The command looked for on PATH.
    pub command: &'static str,
    /// The package for apk, apt-get, dnf, microdnf, yum, zypper.
    pub packages: [&'static str; 6],
}

const fn row(command: &'static str, packages: [&'static str; 6]) -> CommandPackages {
    CommandPackages { command, packages }
}

/// The one table of package names. A command not listed here is provided by
/// the package of the same name under every manager.
///
/// Columns: apk, apt-get, dnf, microdnf, yum, zypper.
#[rustfmt::skip]
pub const PACKAGES: &[CommandPackages] = &[
    //   command       apk                apt-get       dnf           microdnf      yum           zypper
    row("bash",      ["bash",           "bash",       "bash",       "bash",       "bash",       "bash"]),
    row("python3",   ["python3",        "python3",    "python3",    "python3",    "python3",    "python3"]),
    row("curl",      ["curl",           "curl",       "curl",       "curl",       "curl",       "curl"]),
    row("wget",      ["wget",           "wget",       "wget",       "wget",       "wget",       "wget"]),
    row("tar",       ["tar",            "tar",        "tar",        "tar",        "tar",        "tar"]),
    row("gzip",      ["gzip",           "gzip",       "gzip",       "gzip",       "gzip",       "gzip"]),
    row("git",       ["git",            "git",        "git",        "git",        "git",        "git"]),
    row("unzip",     ["unzip",          "unzip",      "unzip",      "unzip",      "unzip",      "unzip"]),
    row("openssl",   ["openssl",        "openssl",    "openssl",    "openssl",    "openssl",    "openssl"]),
    row("xz",        ["xz",             "xz-utils",   "xz",         "xz",         "xz",         "xz"]),
    row("ps",        ["procps",         "procps",     "procps-ng",  "procps-ng",  "procps-ng",  "procps"]),
    row("pgrep",     ["procps",         "procps",     "procps-ng",  "procps-ng",  "procps-ng",  "procps"]),
    row("sha256sum", ["coreutils",      "coreutils",  "coreutils",  "coreutils",  "coreutils",  "coreutils"]),
    row("flock",     ["flock",          "util-linux", "util-linux", "util-linux", "util-linux", "util-linux"]),
    row("setsid",    ["util-linux-misc", "util-linux", "util-linux", "util-linux", "util-linux", "util-linux"]),
];

/// The package that provides `command` under `manager`.
pub fn package_for(command: &str, manager: PackageManager) -> &str {
    PACKAGES
        .iter()
        .find(|r| r.command == command)
        .map_or(command, |r| r.packages[manager.index()])
}

/// A bootstrap could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    /// A command name the script would refuse (it goes unquoted into
    /// package manager command lines, so only plain names pass).
    #[error(
        "invalid command name {0:?}: letters, digits and . _ + - only, starting with a letter or digit, not ending in -"
    )]
    BadCommand(String),
    /// A musl library shforge does not know.
    #[error("unknown musl library {name:?} (known: {known})")]
    UnknownMuslLib {
        /// The rejected name.
        name: String,
        /// The known names.
        known: String,
    },
    /// A value could not be quoted.
    #[error(transparent)]
    Quote(#[from] QuoteError),
}

/// Builds a bootstrap with needs baked in; the default is the generic script.
///
/// ```
/// use shforge::scripts::bootstrap::BootstrapBuilder;
/// let codex = BootstrapBuilder::new().need("python3")?.need("bash")?.script()?;
/// assert!(codex.content.contains("list_add needs 'python3'"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BootstrapBuilder {
    needs: Vec<String>,
    musl_libs: Vec<String>,
}

impl BootstrapBuilder {
    /// The generic script: nothing baked in.
    pub fn new() -> Self {
        Self::default()
    }

    /// Always need `command` (as if `--need COMMAND` were given).
    pub fn need(mut self, command: &str) -> Result<Self, BootstrapError> {
        if PkgName::new(command).is_err() {
            return Err(BootstrapError::BadCommand(command.to_owned()));
        }
        if !self.needs.iter().any(|n| n == command) {
            self.needs.push(command.to_owned());
        }
        Ok(self)
    }

    /// Always need the musl library `name` (as if `--musl-lib NAME` were given).
    pub fn musl_lib(mut self, name: &str) -> Result<Self, BootstrapError> {
        if crate::musl::lookup(name).is_none() {
            return Err(BootstrapError::UnknownMuslLib {
                name: name.to_owned(),
                known: crate::musl::known_names(),
            });
        }
        if !self.musl_libs.iter().any(|n| n == name) {
            self.musl_libs.push(name.to_owned());
        }
        Ok(self)
    }

    /// The askama template with every value checked.
    pub(crate) fn view(&self) -> Result<BootstrapTemplate, BootstrapError> {
        let values = |v: &[String]| -> Result<Vec<Value>, QuoteError> {
            v.iter().map(|s| Value::new(s.as_str())).collect()
        };
        Ok(BootstrapTemplate {
            package_managers: Value::new(
                PackageManager::ALL
                    .iter()
                    .map(|m| m.command())
                    .collect::<Vec<_>>()
                    .join(" "),
            )?,
            musl_known: Value::new(
                crate::musl::MUSL_LIBS
                    .iter()
                    .map(|l| l.name)
                    .collect::<Vec<_>>()
                    .join(" "),
            )?,
            package_arms: package_arms()?,
            musl_libs: crate::musl::MUSL_LIBS
                .iter()
                .map(|l| {
                    Ok(MuslArm {
                        name: Value::new(l.name)?,
                        soname: Value::new(l.soname)?,
                        package: Value::new(l.apk_package)?,
                    })
                })
                .collect::<Result<_, QuoteError>>()?,
            needs: values(&self.needs)?,
            baked_musl_libs: values(&self.musl_libs)?,
        })
    }

    /// The script body (without the generated header).
    pub fn render(&self) -> Result<String, RenderError> {
        let t = self.view().map_err(|e| RenderError::Other {
            template: TEMPLATE.to_owned(),
            message: e.to_string(),
        })?;
        render_template(TEMPLATE, &t)
    }

    /// The whole script, header included, held to the posix dialect.
    pub fn script(&self) -> Result<Output, GenerateError> {
        generate::finish(self, "the adapter's BootstrapBuilder")
    }
}

/// One arm of the script's `package_for` case: commands whose package name
/// differs from the command under some manager, and which share one mapping.
#[derive(Debug, Clone)]
pub(crate) struct PackageArm {
    /// The commands (several when they map to the same packages).
    pub commands: Vec<Value>,
    /// The package, when every manager calls it the same.
    pub all: Option<Value>,
    /// (manager, package) for each manager where they differ, otherwise.
    pub rows: Vec<PackageRow>,
}

/// A package manager and the package it installs for a command.
#[derive(Debug, Clone)]
pub(crate) struct PackageRow {
    /// The manager's command name.
    pub manager: Value,
    /// The package.
    pub package: Value,
}

/// One musl library: name, shared object, Alpine package.
#[derive(Debug, Clone)]
pub(crate) struct MuslArm {
    /// `libstdc++`.
    pub name: Value,
    /// `libstdc++.so.6`.
    pub soname: Value,
    /// The apk package.
    pub package: Value,
}

/// Only the differing names reach the script: its `package_for` defaults to
/// the command's own name. Commands with the same mapping share one arm.
fn package_arms() -> Result<Vec<PackageArm>, QuoteError> {
    // Keyed by the mapping the arm prints, so commands that print the same
    // mapping share an arm.
    type Mapping = (Option<&'static str>, Vec<(&'static str, &'static str)>);
    let mut arms: Vec<(Mapping, PackageArm)> = Vec::new();
    for r in PACKAGES {
        let differing: Vec<(&str, &str)> = PackageManager::ALL
            .into_iter()
            .map(|m| (m.command(), package_for(r.command, m)))
            .filter(|(_, p)| *p != r.command)
            .collect();
        if differing.is_empty() {
            continue;
        }
        let same = r.packages.iter().all(|p| *p == r.packages[0]);
        let mapping: Mapping = if same {
            (Some(r.packages[0]), Vec::new())
        } else {
            (None, differing)
        };
        if let Some((_, arm)) = arms.iter_mut().find(|(m, _)| *m == mapping) {
            arm.commands.push(Value::new(r.command)?);
            continue;
        }
        let arm = PackageArm {
            commands: vec![Value::new(r.command)?],
            all: mapping.0.map(Value::new).transpose()?,
            rows: mapping
                .1
                .iter()
                .map(|(m, p)| {
                    Ok(PackageRow {
                        manager: Value::new(*m)?,
                        package: Value::new(*p)?,
                    })
                })
                .collect::<Result<_, QuoteError>>()?,
        };
        arms.push((mapping, arm));
    }
    Ok(arms.into_iter().map(|(_, arm)| arm).collect())
}

/// The template of `bootstrap.sh`.
#[derive(askama::Template)]
#[template(path = "bootstrap.sh")]
pub(crate) struct BootstrapTemplate {
    /// The manager names in precedence order, blank-separated.
    pub package_managers: Value,
    /// The musl library names, blank-separated (for messages).
    pub musl_known: Value,
    /// The `package_for` case arms.
    pub package_arms: Vec<PackageArm>,
    /// The `musl_soname` case arms.
    pub musl_libs: Vec<MuslArm>,
    /// Commands baked in.
    pub needs: Vec<Value>,
    /// musl libraries baked in.
    pub baked_musl_libs: Vec<Value>,
}

/// The bootstrap with whatever the builder baked in; the catalog lists
/// `BootstrapBuilder::new()`, the generic one.
impl Script for BootstrapBuilder {
    fn path(&self) -> Cow<'_, str> {
        PATH.into()
    }
    fn template(&self) -> &str {
        TEMPLATE
    }
    fn dialect(&self) -> Dialect {
        Dialect::Posix
    }
    fn purpose(&self) -> Cow<'_, str> {
        "POSIX sh bootstrap: install a missing command or musl library, refuse an overlapping session dir".into()
    }
    fn body(&self) -> Result<String, RenderError> {
        self.render()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_defaults_to_the_command_name() {
        assert_eq!(package_for("bash", PackageManager::AptGet), "bash");
        assert_eq!(package_for("python3", PackageManager::Apk), "python3");
        assert_eq!(package_for("xz", PackageManager::AptGet), "xz-utils");
        assert_eq!(package_for("ps", PackageManager::Dnf), "procps-ng");
        assert_eq!(
            package_for("nosuchtool", PackageManager::Zypper),
            "nosuchtool"
        );
    }

    #[test]
    fn table_names_are_valid_and_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for r in PACKAGES {
            assert!(seen.insert(r.command), "{} listed twice", r.command);
            assert!(PkgName::new(r.command).is_ok());
            for p in r.packages {
                assert!(PkgName::new(p.to_string()).is_ok(), "{p}");
            }
        }
    }

    #[test]
    fn builder_rejects_bad_names() {
        assert!(BootstrapBuilder::new().need("a b").is_err());
        assert!(BootstrapBuilder::new().need("-x").is_err());
        assert!(BootstrapBuilder::new().need("").is_err());
        assert!(BootstrapBuilder::new().need("coreutils-").is_err());
        assert!(BootstrapBuilder::new().need("g++").is_ok());
        assert!(BootstrapBuilder::new().musl_lib("libfoo").is_err());
        assert!(BootstrapBuilder::new().musl_lib("libgcc").is_ok());
    }
}
