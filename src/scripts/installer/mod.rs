//! Installers: one generic, crash-safe mechanism (`templates/installer.sh`
//! and the shared functions in `templates/lib/`), many specs.
//!
//! * [`builder`] — [`Installer::builder`], the typed API adapters use (the
//!   rules each value holds are in `builder/check.rs`, the loader each
//!   arch's prepared program names in `builder/loader.rs`).
//! * [`spec`] — the TOML format that maps one to one onto the builder.
//! * `template` — rendering the body; the [`crate::script::Script`] impls
//!   of an [`Installer`] and of [`FromSpec`], and the whole script
//!   ([`Installer::script`]), are in `as_script.rs`.
//!
//! The shipped harness specs (and the runtime specs that belong to no
//! harness: the carried bash) live in `installers/NAME.toml`, are compiled
//! in here and generated to `generated/installers/NAME.sh`.

mod as_script;
pub mod builder;
pub mod spec;
mod template;

pub use as_script::FromSpec;
pub use builder::{
    Artifact, Installer, InstallerBuilder, Launcher, Libc, Relocation, Runtime, SpecError, Unpack,
};
pub use spec::InstallerSpec;

/// The harness specs kept in the repository: (name, TOML text).
pub const HARNESS_SPECS: &[(&str, &str)] = &[
    (
        "claude-code",
        include_str!("../../../installers/claude-code.toml"),
    ),
    ("cline", include_str!("../../../installers/cline.toml")),
    ("codex", include_str!("../../../installers/codex.toml")),
    (
        "gemini-cli",
        include_str!("../../../installers/gemini-cli.toml"),
    ),
    ("hermes", include_str!("../../../installers/hermes.toml")),
    ("kilo", include_str!("../../../installers/kilo.toml")),
    (
        "mini-swe-agent",
        include_str!("../../../installers/mini-swe-agent.toml"),
    ),
    ("nooa", include_str!("../../../installers/nooa.toml")),
    (
        "openclaw",
        include_str!("../../../installers/openclaw.toml"),
    ),
    (
        "opencode",
        include_str!("../../../installers/opencode.toml"),
    ),
    ("pi", include_str!("../../../installers/pi.toml")),
    (
        "qwen-code",
        include_str!("../../../installers/qwen-code.toml"),
    ),
    ("stirrup", include_str!("../../../installers/stirrup.toml")),
];

/// The runtime specs kept in the repository that belong to no harness:
/// (name, TOML text). `bash` is the carried static bash, for images
/// without a bash of 3.2 or later (the bootstrap's `--carried-bash`).
pub const RUNTIME_SPECS: &[(&str, &str)] =
    &[("bash", include_str!("../../../installers/bash.toml"))];

/// Every shipped spec: [`HARNESS_SPECS`], then [`RUNTIME_SPECS`]. Each is
/// generated to `generated/installers/NAME.sh` and fetched by
/// `shforge fetch NAME`.
pub fn shipped_specs() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    HARNESS_SPECS.iter().chain(RUNTIME_SPECS)
}

/// Parse one of [`shipped_specs`].
pub fn harness(name: &str) -> Option<Result<Installer, SpecError>> {
    shipped_specs()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| Installer::from_toml(text))
}

/// Write a generated script atomically and executable (see
/// [`crate::write_atomic`]: a target that is not a regular file is
/// refused, exit code 2; a failed write is exit code 1).
pub fn write_script(path: &std::path::Path, script: &str) -> Result<(), crate::files::FileError> {
    crate::files::write_atomic(path, script.as_bytes(), crate::files::FileMode::Executable)
}
