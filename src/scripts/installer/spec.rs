//! The TOML spec format: one table per installer, mapping one to one onto
//! [`crate::installer::InstallerBuilder`].
//!
//! ```toml
//! name = "opencode"                  # install dir is PREFIX/NAME-VERSION
//! version = "1.18.18"
//! entry = "package/bin/opencode"     # the program, relative to the install dir
//! musl_libs = ["libstdc++", "libgcc"] # needed on musl systems only
//!
//! [check]                            # optional; default: --version printing the version
//! args = ["--version"]
//! expect = "1.18.18"
//!
//! [[artifact]]                       # one or more
//! path = "opencode-linux-x64-1.18.18.tgz"   # relative to --source-dir / --base-url
//! sha256 = "..."                     # 64 hex digits of the real file
//! unpack = "tar.gz"                  # file | tar.gz | tar.xz
//! arch = "x86_64"                    # uname -m, or any
//! libc = "glibc"                     # glibc | musl | any
//! # mode = "755"                     # file only (default 755)
//! # dest = "bin/x"                   # file: its path; archive: the dir to unpack into
//! # size = 123456                    # bytes: larger is refused, a download stops past it (1 ..= 2^63 - 2)
//! # subdir = "package/vendor/x"      # archive only: install just this dir's contents (at dest)
//! # runtime = "image"                # image | private | either (default): which libc runs it
//!
//! [[artifact.relocate]]              # private only: a program prepared by prepare.sh
//! file = "package/bin/node"          # relative to the artifact's dest
//! interp_offset = 1234               # placeholder offsets and sizes in the file
//! interp_size = 256
//! rpath_offset = 5678
//! rpath_size = 512
//! zeroed_sha256 = "..."              # sha256 of the file with both placeholders zeroed
//! glibc = "2.28"                     # highest GLIBC_ version it needs
//! # interpreter = "glibc/ld-linux-x86-64.so.2"  # install-relative (default)
//! # rpath = ["glibc"]                # install-relative dirs (default)
//!
//! [[artifact.chmod]]                 # archive only: a file's mode after unpacking
//! path = "package/vendor/rg"         # relative to the artifact's dest (after subdir)
//! mode = "755"                       # octal, 3 or 4 digits, no setuid/setgid/sticky
//!
//! [launcher]                         # optional: a sh script that runs a program of the install
//! path = "bin/pi"
//! program = "node/package/bin/node"
//! args = ["bundle/node_modules/x/cli.js"]
//! ```
//!
//! Unknown fields are errors, and every error names its field
//! (`artifact[1].sha256: expected 64 hex digits`).
//!
//! # Numbers
//!
//! `size` is the only number a spec holds (`mode` is an octal string of 3
//! or 4 digits, checked as such). TOML reads integers up to 2^64 − 1, but
//! the generated script compares sizes in bash arithmetic, which is signed
//! 64-bit: `[ "$size" -gt 9223372036854775808 ]` fails with "integer
//! expression expected" and the check is skipped, and a download reads at
//! most `$((size + 1))` bytes, which wraps to a negative count at 2^63 − 1.
//! So a size above [`MAX_SIZE`] (2^63 − 2) is refused when the installer is
//! generated (exit 2, `artifact[I].size: …`); 0 and negative sizes are
//! refused too.

use serde::{Deserialize, Serialize};

use super::builder::{Artifact, Installer, Launcher, Libc, Relocation, Runtime, SpecError, Unpack};

/// The largest `size` a spec may hold (the builder checks it).
pub use super::builder::MAX_SIZE;

/// A whole spec file, as serde reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstallerSpec {
    /// Runtime name.
    pub name: String,
    /// Pinned version.
    pub version: String,
    /// Entry program, relative to the install dir.
    pub entry: String,
    /// The entry check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckSpec>,
    /// musl libraries needed on musl systems.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub musl_libs: Vec<String>,
    /// The artifacts (`[[artifact]]`).
    #[serde(default, rename = "artifact")]
    pub artifacts: Vec<ArtifactSpec>,
    /// An optional launcher script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<LauncherSpec>,
}

/// `[check]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// Arguments (default `["--version"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Text the output must contain (default: the version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<String>,
}

/// `[[artifact]]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactSpec {
    /// Path relative to the source.
    pub path: String,
    /// sha256, 64 hex digits.
    pub sha256: String,
    /// file, tar.gz or tar.xz.
    pub unpack: Unpack,
    /// `uname -m` or any.
    pub arch: String,
    /// glibc, musl or any.
    pub libc: Libc,
    /// Octal mode (file only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Destination inside the install dir.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dest: Option<String>,
    /// Size in bytes: larger files are refused, downloads stop past it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Archive only: the directory of the archive whose contents are
    /// installed (at `dest`); the rest of the archive is left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdir: Option<String>,
    /// Where the digest came from (free text, for reviewers; not used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Which libc runs it: image, private or either (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Runtime>,
    /// Programs prepared for the private glibc runtime
    /// (`[[artifact.relocate]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relocate: Vec<RelocateSpec>,
    /// Modes of files inside an archive (`[[artifact.chmod]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chmod: Vec<ChmodSpec>,
}

/// `[[artifact.chmod]]`: the mode a file of an unpacked archive gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChmodSpec {
    /// The file, relative to the artifact's `dest` (after `subdir`).
    pub path: String,
    /// Octal mode, 3 or 4 digits, no setuid, setgid or sticky bits.
    pub mode: String,
}

/// `[[artifact.relocate]]`: a program prepared by
/// `installers/glibc-runtime/prepare.sh`, which prints this table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelocateSpec {
    /// The program, relative to the artifact's `dest`.
    pub file: String,
    /// Byte offset of the interpreter placeholder (PT_INTERP).
    pub interp_offset: u64,
    /// Its size, NUL included.
    pub interp_size: u64,
    /// Byte offset of the library path placeholder (DT_RPATH).
    pub rpath_offset: u64,
    /// Its size, NUL included.
    pub rpath_size: u64,
    /// sha256 of the program with both placeholders zeroed.
    pub zeroed_sha256: String,
    /// Highest `GLIBC_` version the program needs.
    pub glibc: String,
    /// The loader, install-relative (default `glibc/ld-linux-x86-64.so.2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpreter: Option<String>,
    /// Library path dirs, install-relative (default `["glibc"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpath: Option<Vec<String>>,
}

/// `[launcher]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LauncherSpec {
    /// Where the launcher goes.
    pub path: String,
    /// What it runs.
    pub program: String,
    /// Install-relative files passed first.
    #[serde(default)]
    pub args: Vec<String>,
}

impl InstallerSpec {
    /// Parse TOML; errors name the field (`artifact[1].unpack: unknown variant ...`).
    pub fn from_toml(text: &str) -> Result<Self, SpecError> {
        let de = toml::Deserializer::parse(text).map_err(|e| toml_error(text, &e))?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            let field = e.path().to_string();
            let inner = e.into_inner();
            let field = if field == "." { String::new() } else { field };
            SpecError::new(field, inner.message().to_owned())
        })
    }

    /// The builder this spec describes, field for field.
    pub fn to_builder(&self) -> super::builder::InstallerBuilder {
        let mut b = Installer::builder(&self.name, &self.version).entry(&self.entry);
        if let Some(c) = &self.check {
            if let Some(args) = &c.args {
                b = b.check_args(args.iter().cloned());
            }
            if let Some(e) = &c.expect {
                b = b.check_expect(e);
            }
        }
        for l in &self.musl_libs {
            b = b.musl_lib(l);
        }
        for a in &self.artifacts {
            let mut art = Artifact::new(&a.path, &a.sha256, a.unpack)
                .arch(&a.arch)
                .libc(a.libc);
            if let Some(m) = &a.mode {
                art = art.mode(m);
            }
            if let Some(d) = &a.dest {
                art = art.dest(d);
            }
            if let Some(n) = a.size {
                art = art.size(n);
            }
            if let Some(s) = &a.subdir {
                art = art.subdir(s);
            }
            if let Some(r) = a.runtime {
                art = art.runtime(r);
            }
            for r in &a.relocate {
                art = art.relocate(r.to_relocation());
            }
            for c in &a.chmod {
                art = art.chmod(&c.path, &c.mode);
            }
            b = b.artifact(art);
        }
        if let Some(l) = &self.launcher {
            let mut launcher = Launcher::new(&l.path, &l.program);
            for a in &l.args {
                launcher = launcher.arg(a);
            }
            b = b.launcher(launcher);
        }
        b
    }
}

impl RelocateSpec {
    /// The builder's [`Relocation`], field for field.
    fn to_relocation(&self) -> Relocation {
        let mut r = Relocation::new(
            &self.file,
            (self.interp_offset, self.interp_size),
            (self.rpath_offset, self.rpath_size),
            &self.zeroed_sha256,
            &self.glibc,
        );
        if let Some(i) = &self.interpreter {
            r = r.interpreter(i);
        }
        if let Some(d) = &self.rpath {
            r = r.rpath(d.iter().cloned());
        }
        r
    }
}

impl Installer {
    /// Parse and check a TOML spec.
    pub fn from_toml(text: &str) -> Result<Installer, SpecError> {
        InstallerSpec::from_toml(text)?.to_builder().build()
    }
}

/// A TOML syntax error: "line N, column M: message".
fn toml_error(text: &str, e: &toml::de::Error) -> SpecError {
    let msg = e.message().trim().to_owned();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, str::len) + 1;
            SpecError::new(format!("line {line}, column {col}"), msg)
        }
        None => SpecError::new("", msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
name = "tool"
version = "1.0"
entry = "bin/tool"

[[artifact]]
path = "a.tgz"
sha256 = "465B40D7195B8DD0B52D8830F13CBE800858A2EE82FBA4CE3C1832CD9727062B"
unpack = "tar.gz"
arch = "x86_64"
libc = "glibc"

[[artifact]]
path = "tool"
sha256 = "4d9dd0604ae502870e840fa6ae5461dd4fc0ae62620fbb056012d32dc40e8c1b"
unpack = "file"
arch = "any"
libc = "musl"
"#;

    fn err(spec: &str) -> String {
        Installer::from_toml(spec).unwrap_err().to_string()
    }

    #[test]
    fn defaults_and_normalisation() {
        let i = Installer::from_toml(SPEC).unwrap();
        assert_eq!(i.check_args, ["--version"]);
        assert_eq!(i.check_expect, "1.0");
        assert!(
            i.artifacts[0]
                .sha256
                .bytes()
                .all(|b| !b.is_ascii_uppercase())
        );
        assert_eq!(i.artifacts[1].mode.as_deref(), Some("755"));
        assert_eq!(i.artifacts[1].dest.as_deref(), Some("tool"));
        assert_eq!(i.artifacts[0].dest, None);
    }

    #[test]
    fn spec_and_builder_agree() {
        let from_spec = Installer::from_toml(SPEC).unwrap();
        let built = Installer::builder("tool", "1.0")
            .entry("bin/tool")
            .artifact(
                Artifact::tar_gz(
                    "a.tgz",
                    "465b40d7195b8dd0b52d8830f13cbe800858a2ee82fba4ce3c1832cd9727062b",
                )
                .arch("x86_64")
                .libc(Libc::Glibc),
            )
            .artifact(
                Artifact::file(
                    "tool",
                    "4d9dd0604ae502870e840fa6ae5461dd4fc0ae62620fbb056012d32dc40e8c1b",
                )
                .libc(Libc::Musl),
            )
            .build()
            .unwrap();
        assert_eq!(from_spec, built);
        assert_eq!(from_spec.render().unwrap(), built.render().unwrap());
    }

    #[test]
    fn errors_name_the_field() {
        let second = SPEC.replace(
            "4d9dd0604ae502870e840fa6ae5461dd4fc0ae62620fbb056012d32dc40e8c1b",
            "xyz",
        );
        assert_eq!(err(&second), "artifact[1].sha256: expected 64 hex digits");
        assert!(
            err(&SPEC.replace("unpack = \"file\"", "unpack = \"zip\""))
                .starts_with("artifact[1].unpack: unknown variant `zip`")
        );
        assert!(
            err(&SPEC.replace("libc = \"musl\"", "libc = 1")).starts_with("artifact[1].libc: ")
        );
        assert!(
            err(&SPEC.replace("arch = \"any\"", "arch = \"x86 64\""))
                .starts_with("artifact[1].arch: ")
        );
        assert!(
            err(&SPEC.replace("arch = \"any\"", "arch = \"x86-64\""))
                .starts_with("artifact[1].arch: expected a `uname -m` value")
        );
        // amd64 and arm64 are folded the way the script folds `uname -m`.
        let folded =
            Installer::from_toml(&SPEC.replace("arch = \"any\"", "arch = \"arm64\"")).unwrap();
        assert!(folded.script().unwrap().contains("art_arch[1]='aarch64'"));
        assert!(
            err(&SPEC.replace("libc = \"musl\"", "libc = \"musl\"\nmode = \"999\""))
                .starts_with("artifact[1].mode: ")
        );
        assert!(
            err(&SPEC.replace("libc = \"glibc\"", "libc = \"glibc\"\nmode = \"644\""))
                .starts_with("artifact[0].mode: only a `file`")
        );
        assert!(err(&SPEC.replace("bin/tool", "bin/../tool")).starts_with("entry: "));
    }

    /// Modes inside archives: archives only, a safe path, no special bits.
    #[test]
    fn chmods_name_the_field() {
        let chmod = |path: &str, mode: &str, after: &str| {
            SPEC.replace(
                after,
                &format!("{after}\n[[artifact.chmod]]\npath = \"{path}\"\nmode = \"{mode}\""),
            )
        };
        let ok = Installer::from_toml(&chmod("bin/tool", "755", "libc = \"glibc\"")).unwrap();
        assert!(ok.script().unwrap().contains("chm_path[0]='bin/tool'"));
        assert!(
            !Installer::from_toml(SPEC)
                .unwrap()
                .script()
                .unwrap()
                .contains("chm_"),
            "no chmod code without chmods"
        );
        assert!(
            err(&chmod("bin/tool", "755", "libc = \"musl\""))
                .starts_with("artifact[1].chmod: only an archive")
        );
        assert!(
            err(&chmod("../x", "755", "libc = \"glibc\""))
                .starts_with("artifact[0].chmod[0].path: ")
        );
        assert!(
            err(&chmod("bin/tool", "4755", "libc = \"glibc\""))
                .starts_with("artifact[0].chmod[0].mode: ")
        );
        assert!(
            err(&chmod("bin/tool", "755", "libc = \"glibc\"")
                .replace("mode = \"755\"", "mode = \"755\"\nx = 1"))
            .contains("unknown field `x`")
        );
    }

    /// setuid, setgid and sticky bits never land in an install.
    #[test]
    fn special_mode_bits_are_refused() {
        for m in ["4755", "2755", "1755", "6755"] {
            assert!(
                err(&SPEC.replace(
                    "libc = \"musl\"",
                    &format!("libc = \"musl\"\nmode = \"{m}\"")
                ))
                .starts_with("artifact[1].mode: "),
                "{m}"
            );
        }
        assert!(
            Installer::from_toml(
                &SPEC.replace("libc = \"musl\"", "libc = \"musl\"\nmode = \"0750\"")
            )
            .is_ok()
        );
    }

    /// A name that fits no file name once the installer's suffixes are added.
    #[test]
    fn a_name_too_long_for_a_file_name_is_refused() {
        let long = "n".repeat(240);
        assert!(
            err(&SPEC.replace("name = \"tool\"", &format!("name = \"{long}\"")))
                .starts_with("name: NAME-VERSION is 244 bytes")
        );
        let fits = "n".repeat(255 - 1 - ".stage.".len() - 10 - 1 - 3);
        assert!(
            Installer::from_toml(&SPEC.replace("name = \"tool\"", &format!("name = \"{fits}\"")))
                .is_ok()
        );
        let over = format!("{fits}n");
        assert!(
            err(&SPEC.replace("name = \"tool\"", &format!("name = \"{over}\"")))
                .starts_with("name: ")
        );
    }

    /// A size is bytes, more than none, and within bash's arithmetic.
    #[test]
    fn sizes_name_the_field() {
        assert!(
            err(&SPEC.replace("libc = \"musl\"", "libc = \"musl\"\nsize = 0"))
                .starts_with("artifact[1].size: ")
        );
        assert!(
            err(&SPEC.replace("libc = \"musl\"", "libc = \"musl\"\nsize = -1"))
                .starts_with("artifact[1].size: ")
        );
        // Past what bash's signed 64-bit arithmetic can compare.
        for n in [
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551615",
        ] {
            assert!(
                err(&SPEC.replace("libc = \"musl\"", &format!("libc = \"musl\"\nsize = {n}")))
                    .starts_with(&format!(
                        "artifact[1].size: {n} is more than 9223372036854775806"
                    )),
                "{n}"
            );
        }
        assert!(
            Installer::from_toml(&SPEC.replace(
                "libc = \"musl\"",
                &format!("libc = \"musl\"\nsize = {MAX_SIZE}")
            ))
            .is_ok()
        );
        let sized =
            Installer::from_toml(&SPEC.replace("libc = \"musl\"", "libc = \"musl\"\nsize = 1234"))
                .unwrap();
        assert!(sized.script().unwrap().contains("art_size[1]='1234'"));
    }

    #[test]
    fn other_errors_name_the_field() {
        assert!(err(&SPEC.replace("name = \"tool\"", "name = \"Tool X\"")).starts_with("name: "));
        assert!(
            err(&SPEC.replace("version = \"1.0\"", "version = \"1.0\"\nextra = 1"))
                .contains("unknown field `extra`")
        );
        assert!(
            err(&SPEC.replace(
                "entry = \"bin/tool\"",
                "entry = \"bin/tool\"\nmusl_libs = [\"libz\"]"
            ))
            .starts_with("musl_libs[0]: unknown library \"libz\"")
        );
        assert!(
            err(&SPEC.replace(
                "entry = \"bin/tool\"",
                "entry = \"bin/tool\"\n[check]\nargs = [1]"
            ))
            .starts_with("check.args[0]: invalid type")
        );
        let none = SPEC.split("[[artifact]]").next().unwrap();
        assert_eq!(err(none), "artifact: at least one [[artifact]] is required");
        assert!(err("name = ").starts_with("line 1, column "));
    }

    const PRIVATE: &str = r#"
[[artifact]]
path = "tool-prepared.tgz"
sha256 = "5cd3171216d4ab0fc911cfe9c35509bf2dd8f47761c43b7f6a4296701551a24d"
unpack = "tar.gz"
arch = "x86_64"
libc = "glibc"
runtime = "private"
dest = "t"

[[artifact.relocate]]
file = "bin/tool"
interp_offset = 4096
interp_size = 256
rpath_offset = 4352
rpath_size = 512
zeroed_sha256 = "3016E62CB4B7CD8038822870601F5ED131BEFE942774D0F745622CC77D8A88F7"
glibc = "2.28"
"#;

    #[test]
    fn private_runtime_fields() {
        let spec = format!("{SPEC}{PRIVATE}");
        let i = Installer::from_toml(&spec).unwrap();
        assert_eq!(i.glibc_needed(), Some("2.28"));
        let script = i.script().unwrap();
        assert!(script.contains("rel_file[0]='t/bin/tool'"), "dest joined");
        assert!(script.contains("rel_art[0]='2'"));
        assert!(script.contains("rel_interp[0]='glibc/ld-linux-x86-64.so.2'"));
        assert!(script.contains("rel_rpath[0]='glibc'"));
        assert!(script.contains("art_runtime[2]='private'"));
        assert!(script.contains("art_runtime[0]='either'"));
        assert!(script.contains("glibc_needed='2.28'"));
        assert!(script.contains(
            "rel_zeroed[0]='3016e62cb4b7cd8038822870601f5ed131befe942774d0f745622cc77d8a88f7'"
        ));
        // The highest version of several decides, by number (2.9 < 2.17).
        let two = format!(
            "{spec}{}",
            PRIVATE
                .replace("2.28", "2.9")
                .replace("tool-prepared", "other")
        )
        .replace("glibc = \"2.28\"", "glibc = \"2.17\"");
        assert_eq!(
            Installer::from_toml(&two).unwrap().glibc_needed(),
            Some("2.17")
        );
        // No prepared program: no choice, nothing rendered.
        assert_eq!(Installer::from_toml(SPEC).unwrap().glibc_needed(), None);
        let bad = |from: &str, to: &str| err(&spec.replace(from, to));
        assert!(
            bad("runtime = \"private\"\n", "")
                .starts_with("artifact[2].relocate: only a `runtime = \"private\"` artifact")
        );
        assert!(
            bad("runtime = \"private\"", "runtime = \"native\"")
                .starts_with("artifact[2].runtime: unknown variant `native`")
        );
        assert!(
            bad("glibc = \"2.28\"", "glibc = \"2\"").starts_with("artifact[2].relocate[0].glibc: ")
        );
        assert!(
            bad("glibc = \"2.28\"", "glibc = \"2.x\"")
                .starts_with("artifact[2].relocate[0].glibc: ")
        );
        assert!(
            bad("rpath_offset = 4352", "rpath_offset = 4200")
                .starts_with("artifact[2].relocate[0].rpath_offset: the two placeholders overlap")
        );
        assert!(
            bad("interp_size = 256", "interp_size = 1")
                .starts_with("artifact[2].relocate[0].interp_size: ")
        );
        assert!(
            bad("zeroed_sha256 = \"3016", "zeroed_sha256 = \"x016")
                .starts_with("artifact[2].relocate[0].zeroed_sha256: ")
        );
        assert!(
            bad("file = \"bin/tool\"", "file = \"../tool\"")
                .starts_with("artifact[2].relocate[0].file: ")
        );
        assert!(
            bad("glibc = \"2.28\"", "glibc = \"2.28\"\nrpath = []")
                .starts_with("artifact[2].relocate[0].rpath: ")
        );
        assert!(
            bad("glibc = \"2.28\"", "glibc = \"2.28\"\nextra = 1")
                .contains("unknown field `extra`")
        );
    }

    #[test]
    fn harness_specs_parse() {
        for (name, text) in crate::installer::shipped_specs() {
            let i = Installer::from_toml(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(i.name(), *name);
        }
    }
}
