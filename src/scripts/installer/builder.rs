//! The typed installer builder: what adapters write in Rust.
//!
//! ```
//! use shforge::installer::{Artifact, Installer, Libc};
//!
//! let opencode = Installer::builder("opencode", "1.18.18")
//!     .entry("package/bin/opencode")
//!     .musl_lib("libstdc++")
//!     .musl_lib("libgcc")
//!     .artifact(
//!         Artifact::tar_gz(
//!             "opencode-linux-x64-1.18.18.tgz",
//!             "465b40d7195b8dd0b52d8830f13cbe800858a2ee82fba4ce3c1832cd9727062b",
//!         )
//!             .arch("x86_64")
//!             .libc(Libc::Glibc),
//!     )
//!     .build()
//!     .unwrap();
//! assert_eq!(opencode.name(), "opencode");
//! let script = opencode.render().unwrap();
//! assert!(script.contains("main \"$@\""));
//! ```
//!
//! Every value is checked by [`InstallerBuilder::build`], which names the
//! offending field exactly as the TOML spec does (`artifact[1].sha256: expected
//! 64 hex digits`), so a spec error and a builder error read the same.

use std::fmt;

use serde::{Deserialize, Serialize};

mod check;
mod loader;
use check::{
    check_artifact, check_file_name_length, check_name, check_rel_path, check_text, check_version,
};

/// The largest `size` the generated script can compare and download: bash
/// arithmetic is signed 64-bit, and a download reads `size + 1` bytes to
/// see an oversized body, so 2^63 − 2.
pub const MAX_SIZE: u64 = i64::MAX as u64 - 1;

/// A spec or builder value is invalid. Displays as `field: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render_spec_error(field, message))]
pub struct SpecError {
    /// The field, as written in the TOML spec (`artifact[1].sha256`); empty
    /// for a document-level problem (TOML syntax).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl SpecError {
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        SpecError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// How an artifact becomes files in the install dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unpack {
    /// A single file, copied with a mode (`"file"`).
    #[serde(rename = "file")]
    File,
    /// A gzip-compressed tar archive (`"tar.gz"`).
    #[serde(rename = "tar.gz")]
    TarGz,
    /// An xz-compressed tar archive (`"tar.xz"`).
    #[serde(rename = "tar.xz")]
    TarXz,
}

impl Unpack {
    /// The spelling used in specs and in the generated script.
    pub fn as_str(self) -> &'static str {
        match self {
            Unpack::File => "file",
            Unpack::TarGz => "tar.gz",
            Unpack::TarXz => "tar.xz",
        }
    }
}

impl fmt::Display for Unpack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The C library an artifact is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Libc {
    /// glibc (Debian, Ubuntu, ...).
    Glibc,
    /// musl (Alpine): a system where musl is all there is (no glibc loader;
    /// `system_libc` in `templates/lib/musl.sh`).
    Musl,
    /// Either (scripts, bundles of JavaScript).
    Any,
}

impl Libc {
    /// The spelling used in specs and in the generated script.
    pub fn as_str(self) -> &'static str {
        match self {
            Libc::Glibc => "glibc",
            Libc::Musl => "musl",
            Libc::Any => "any",
        }
    }
}

/// Which libc runs an artifact's programs: the image's own, or the private
/// glibc runtime the installer brings where the image's cannot (musl, or a
/// glibc older than `Relocation::glibc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    /// Only where the image's libc is used (today's native artifacts).
    Image,
    /// Only where the private glibc runtime is used: the runtime itself and
    /// programs prepared for it (see [`Relocation`]).
    Private,
    /// Both (the default: scripts, bundles).
    Either,
}

impl Runtime {
    /// The spelling used in specs and in the generated script.
    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::Image => "image",
            Runtime::Private => "private",
            Runtime::Either => "either",
        }
    }
}

/// A program of a `runtime = "private"` artifact prepared on the host
/// (`installers/glibc-runtime/prepare.sh`) with fixed-size placeholders for
/// its interpreter and its DT_RPATH. The installer checks the markers, zeroes
/// both, checks [`Relocation`]'s `zeroed_sha256`, then writes the install's
/// absolute paths in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relocation {
    pub(crate) file: String,
    pub(crate) interpreter: String,
    pub(crate) rpath: Vec<String>,
    pub(crate) interp_offset: u64,
    pub(crate) interp_size: u64,
    pub(crate) rpath_offset: u64,
    pub(crate) rpath_size: u64,
    pub(crate) zeroed_sha256: String,
    pub(crate) glibc: String,
}

impl Relocation {
    /// `file` (relative to the artifact's `dest`) with the placeholder
    /// offsets and sizes, the sha256 of the file with both zeroed and the
    /// highest `GLIBC_` version it needs, as prepare.sh prints them. The
    /// interpreter defaults to `glibc/ld-linux-x86-64.so.2` and the library
    /// path to `glibc` (install-relative).
    pub fn new(
        file: impl Into<String>,
        interp: (u64, u64),
        rpath: (u64, u64),
        zeroed_sha256: impl Into<String>,
        glibc: impl Into<String>,
    ) -> Self {
        Relocation {
            file: file.into(),
            interpreter: "glibc/ld-linux-x86-64.so.2".into(),
            rpath: vec!["glibc".into()],
            interp_offset: interp.0,
            interp_size: interp.1,
            rpath_offset: rpath.0,
            rpath_size: rpath.1,
            zeroed_sha256: zeroed_sha256.into(),
            glibc: glibc.into(),
        }
    }

    /// The loader, relative to the install dir.
    pub fn interpreter(mut self, path: impl Into<String>) -> Self {
        self.interpreter = path.into();
        self
    }

    /// The library path: directories relative to the install dir, in order.
    pub fn rpath<I, S>(mut self, dirs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.rpath = dirs.into_iter().map(Into::into).collect();
        self
    }

    /// The highest `GLIBC_` version the program needs (`2.28`).
    pub fn glibc_version(&self) -> &str {
        &self.glibc
    }
}

/// One file the installer fetches, checks and unpacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    pub(crate) path: String,
    pub(crate) sha256: String,
    pub(crate) unpack: Unpack,
    pub(crate) arch: String,
    pub(crate) libc: Libc,
    pub(crate) mode: Option<String>,
    pub(crate) dest: Option<String>,
    pub(crate) size: Option<u64>,
    pub(crate) subdir: Option<String>,
    pub(crate) runtime: Runtime,
    pub(crate) relocations: Vec<Relocation>,
    pub(crate) chmods: Vec<(String, String)>,
}

impl Artifact {
    /// An artifact at `path` (relative to `--source-dir` / `--base-url`) with
    /// its sha256. Defaults: any arch, any libc, unpacked into the install root.
    pub fn new(path: impl Into<String>, sha256: impl Into<String>, unpack: Unpack) -> Self {
        Artifact {
            path: path.into(),
            sha256: sha256.into(),
            unpack,
            arch: "any".into(),
            libc: Libc::Any,
            mode: None,
            dest: None,
            size: None,
            subdir: None,
            runtime: Runtime::Either,
            relocations: Vec::new(),
            chmods: Vec::new(),
        }
    }

    /// A single file (mode 755 unless [`Artifact::mode`] says otherwise).
    pub fn file(path: impl Into<String>, sha256: impl Into<String>) -> Self {
        Self::new(path, sha256, Unpack::File)
    }

    /// A `.tar.gz` (npm tarballs are these).
    pub fn tar_gz(path: impl Into<String>, sha256: impl Into<String>) -> Self {
        Self::new(path, sha256, Unpack::TarGz)
    }

    /// A `.tar.xz`.
    pub fn tar_xz(path: impl Into<String>, sha256: impl Into<String>) -> Self {
        Self::new(path, sha256, Unpack::TarXz)
    }

    /// The `uname -m` it is for (`x86_64`, `aarch64`; `any`).
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = arch.into();
        self
    }

    /// The libc it is for.
    pub fn libc(mut self, libc: Libc) -> Self {
        self.libc = libc;
        self
    }

    /// Octal mode of a single file (`"755"`); only for [`Unpack::File`].
    pub fn mode(mut self, mode: impl Into<String>) -> Self {
        self.mode = Some(mode.into());
        self
    }

    /// Its size in bytes: a larger file is refused, and a download stops
    /// past it (exit 4), so a hostile server cannot fill the disk. At most
    /// [`MAX_SIZE`] (more is refused when the installer is built).
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// Where it goes inside the install dir: the file's path for a single
    /// file (default: the artifact's base name), the directory an archive is
    /// unpacked into (default: the install dir itself).
    pub fn dest(mut self, dest: impl Into<String>) -> Self {
        self.dest = Some(dest.into());
        self
    }

    /// Archives only: install just the contents of this directory of the
    /// archive (at [`Artifact::dest`]) and leave the rest out. Platform
    /// packages that keep their files under a per-platform name
    /// (`package/vendor/x86_64-unknown-linux-musl/`) then land at one path
    /// whatever the machine, so one `entry` fits them all. The installer
    /// refuses (exit 6) an archive without it as a real directory, and a
    /// symlink in it that leads out of it.
    pub fn subdir(mut self, subdir: impl Into<String>) -> Self {
        self.subdir = Some(subdir.into());
        self
    }

    /// Which libc runs it (default [`Runtime::Either`]).
    pub fn runtime(mut self, runtime: Runtime) -> Self {
        self.runtime = runtime;
        self
    }

    /// A prepared program of this artifact (a [`Runtime::Private`] one).
    pub fn relocate(mut self, relocation: Relocation) -> Self {
        self.relocations.push(relocation);
        self
    }

    /// Archives only: give the file at `path` (relative to the artifact's
    /// unpacked tree, as installed at [`Artifact::dest`], so after
    /// [`Artifact::subdir`]) the octal `mode` (`"755"`; no setuid, setgid or
    /// sticky bits). For packages that ship a program without its execute
    /// bit (Qwen Code's vendored `rg` is 0644). Applied after unpacking and
    /// the footprint checks, before the entry check; the installer refuses
    /// (exit 6, nothing placed) a path that is not a regular file of this
    /// artifact's own tree: a symlink, a directory, a missing file, or one
    /// reached through a symlink.
    pub fn chmod(mut self, path: impl Into<String>, mode: impl Into<String>) -> Self {
        self.chmods.push((path.into(), mode.into()));
        self
    }
}

/// A small `sh` script written into the install dir that runs a program of
/// the install with fixed leading arguments (a Node runtime and a CLI's
/// script, say). Paths are relative to the install dir; the launcher finds
/// them relative to itself, so the install can be renamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    pub(crate) path: String,
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
}

impl Launcher {
    /// A launcher at `path` that execs `program`.
    pub fn new(path: impl Into<String>, program: impl Into<String>) -> Self {
        Launcher {
            path: path.into(),
            program: program.into(),
            args: Vec::new(),
        }
    }

    /// An argument that names a file of the install (resolved like `program`).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }
}

/// Builds an [`Installer`]; nothing is checked until [`InstallerBuilder::build`].
#[derive(Debug, Clone)]
pub struct InstallerBuilder {
    name: String,
    version: String,
    entry: Option<String>,
    check_args: Option<Vec<String>>,
    check_expect: Option<String>,
    musl_libs: Vec<String>,
    artifacts: Vec<Artifact>,
    launcher: Option<Launcher>,
}

/// A checked installer: render it, or make it a catalog entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installer {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) entry: String,
    pub(crate) check_args: Vec<String>,
    pub(crate) check_expect: String,
    pub(crate) musl_libs: Vec<&'static crate::musl::MuslLib>,
    pub(crate) artifacts: Vec<Artifact>,
    pub(crate) launcher: Option<Launcher>,
}

impl Installer {
    /// Start an installer for `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> InstallerBuilder {
        InstallerBuilder {
            name: name.into(),
            version: version.into(),
            entry: None,
            check_args: None,
            check_expect: None,
            musl_libs: Vec::new(),
            artifacts: Vec::new(),
            launcher: None,
        }
    }

    /// The runtime's name (the install dir is `NAME-VERSION`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The pinned version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The entry program, relative to the install dir.
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// The artifacts, in spec order.
    pub fn artifacts(&self) -> &[Artifact] {
        &self.artifacts
    }

    /// The highest `GLIBC_` version any prepared program needs: an image
    /// with an older glibc (or none) gets the private glibc runtime. `None`
    /// when the installer has no prepared programs.
    pub fn glibc_needed(&self) -> Option<&str> {
        self.artifacts
            .iter()
            .flat_map(|a| &a.relocations)
            .map(|r| r.glibc.as_str())
            .max_by_key(|v| glibc_key(v))
    }
}

/// `2.28` as (2, 28), for ordering (checked by [`check_relocation`]).
pub(crate) fn glibc_key(v: &str) -> (u32, u32) {
    let (a, b) = v.split_once('.').unwrap_or((v, "0"));
    (a.parse().unwrap_or(0), b.parse().unwrap_or(0))
}

impl Artifact {
    /// Path relative to the source.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Lowercase hex sha256.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The size limit in bytes, when the spec gives one.
    pub fn size_limit(&self) -> Option<u64> {
        self.size
    }

    /// The archive directory installed instead of the whole archive.
    pub fn archive_subdir(&self) -> Option<&str> {
        self.subdir.as_deref()
    }
}

impl InstallerBuilder {
    /// The program to run, relative to the install dir (required).
    pub fn entry(mut self, entry: impl Into<String>) -> Self {
        self.entry = Some(entry.into());
        self
    }

    /// The entry check: run the entry with `args`; its output (stdout and
    /// stderr) must contain `expect`. Default: `--version`, expecting the
    /// version.
    pub fn check<I, S>(mut self, args: I, expect: impl Into<String>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.check_args = Some(args.into_iter().map(Into::into).collect());
        self.check_expect = Some(expect.into());
        self
    }

    /// Only the check's arguments (the expected text stays the default).
    pub fn check_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.check_args = Some(args.into_iter().map(Into::into).collect());
        self
    }

    /// Only the check's expected text.
    pub fn check_expect(mut self, expect: impl Into<String>) -> Self {
        self.check_expect = Some(expect.into());
        self
    }

    /// A musl library the runtime needs on musl systems (`libstdc++`, `libgcc`;
    /// see [`crate::MUSL_LIBS`]).
    pub fn musl_lib(mut self, name: impl Into<String>) -> Self {
        self.musl_libs.push(name.into());
        self
    }

    /// Add an artifact.
    pub fn artifact(mut self, artifact: Artifact) -> Self {
        self.artifacts.push(artifact);
        self
    }

    /// Write a launcher into the install dir.
    pub fn launcher(mut self, launcher: Launcher) -> Self {
        self.launcher = Some(launcher);
        self
    }

    /// Check every value; the error names the field as the TOML spec does.
    pub fn build(self) -> Result<Installer, SpecError> {
        check_name("name", &self.name)?;
        check_version("version", &self.version)?;
        check_file_name_length(&self.name, &self.version)?;
        let entry = self.entry.ok_or_else(|| {
            SpecError::new(
                "entry",
                "missing: the program to run, relative to the install dir",
            )
        })?;
        check_rel_path("entry", &entry)?;
        let check_args = self.check_args.unwrap_or_else(|| vec!["--version".into()]);
        for (i, a) in check_args.iter().enumerate() {
            check_text(&format!("check.args[{i}]"), a)?;
        }
        let check_expect = self.check_expect.unwrap_or_else(|| self.version.clone());
        check_text("check.expect", &check_expect)?;
        let mut musl_libs: Vec<&'static crate::musl::MuslLib> = Vec::new();
        for (i, lib) in self.musl_libs.iter().enumerate() {
            let found = crate::musl::lookup(lib).ok_or_else(|| {
                SpecError::new(
                    format!("musl_libs[{i}]"),
                    format!(
                        "unknown library {lib:?} (known: {})",
                        crate::musl::known_names()
                    ),
                )
            })?;
            if !musl_libs.contains(&found) {
                musl_libs.push(found);
            }
        }
        if self.artifacts.is_empty() {
            return Err(SpecError::new(
                "artifact",
                "at least one [[artifact]] is required",
            ));
        }
        let mut artifacts = Vec::new();
        for (i, a) in self.artifacts.into_iter().enumerate() {
            artifacts.push(loader::check_arch(i, check_artifact(i, a)?)?);
        }
        if let Some(l) = &self.launcher {
            check_rel_path("launcher.path", &l.path)?;
            check_rel_path("launcher.program", &l.program)?;
            for (i, a) in l.args.iter().enumerate() {
                check_rel_path(&format!("launcher.args[{i}]"), a)?;
            }
        }
        Ok(Installer {
            name: self.name,
            version: self.version,
            entry,
            check_args,
            check_expect,
            musl_libs,
            artifacts,
            launcher: self.launcher,
        })
    }
}

/// The `uname -m` values an artifact may name (`any` matches every machine).
pub const KNOWN_ARCHES: &[&str] = &[
    "x86_64",
    "aarch64",
    "armv7l",
    "armv6l",
    "i686",
    "i386",
    "ppc64le",
    "s390x",
    "riscv64",
    "loongarch64",
    "any",
];
/// The longest name an installer makes in the prefix is
/// `.NAME-VERSION.stage.PID` (also `.old.PID`, `.check.PID`, `.lock`,
/// `.lockq`); with a PID of up to 10 digits it must fit the 255 bytes of a
/// file name.
pub const MAX_FILE_NAME: usize = 255;

fn render_spec_error(field: &str, message: &str) -> String {
    if field.is_empty() {
        message.to_owned()
    } else {
        format!("{field}: {message}")
    }
}
