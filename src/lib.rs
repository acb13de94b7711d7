#![warn(missing_docs)]
//! shforge: generate the portable shell runtime that AI coding-agent
//! harnesses run under inside task sandboxes.
//!
//! Public modules (the paths README.md and SPEC.md name; eight at most):
//!
//! * [`quote`](mod@quote) — every value becomes exactly one shell word; code is a
//!   separate type.
//! * [`scripts`] — the scripts themselves (bootstrap, supervisor, runner,
//!   installer) and their builders; [`installer`] is
//!   [`scripts::installer`].
//! * [`host`] — the supervised launch command and the cleanup receipt.
//! * [`harness`] — harness profiles: the session dir for one rollout.
//! * [`outcome`] — why a rollout ended: status, cause and evidence.
//! * [`snapshot`] — a harness's session data (SQLite or JSONL) as one JSON
//!   document (feature `snapshot`).
//! * [`model_server`] — a scripted fake model on 127.0.0.1 for driving the
//!   real harness CLIs in tests (feature `fake-model-server`).
//! * [`cli`] — the `shforge` command line itself (feature `cli`);
//!   `src/main.rs` only calls [`cli::main`].
//!
//! Internal modules (the command's machinery and the building blocks,
//! reached through [`cli`] and the re-exports below, never by path):
//!
//! * `names` — checked names: [`VarName`], [`PkgName`], [`RelPath`]
//!   (re-exported).
//! * `files` — every output written atomically and never through a link
//!   ([`write_atomic`]), every input bounded ([`Bound`]) (re-exported).
//! * `musl` — the musl libraries harnesses need ([`MUSL_LIBS`]) and the
//!   libc rule ([`system_is_musl`]) (re-exported).
//! * `copyback` — reading what came back out of a task sandbox
//!   (`outcome`, `snapshot`, `receipt`): no link followed anywhere in a
//!   path, only regular files and directories, each file bounded.
//! * `lex` and `dialect` — the static guard that keeps a script inside
//!   `posix` or `bash` (3.2) ([`Dialect`] is re-exported).
//! * `template_lint` — where `{{ }}` may stand in a shell template.
//! * `script` — the [`Script`] trait every generated script implements
//!   (re-exported).
//! * `catalog` lists the scripts; `generate` turns any `&dyn Script` into a
//!   file ([`finish`], [`Output`]) and writes/checks `generated/`.
//! * `diff` — unified diffs with a hunk shared by several files shown once
//!   (`shforge check`).
//! * `environ` — what the scripts take from the image's environment: bash's
//!   own variables they remove ([`host::CLEARED_VARS`]), the names the
//!   runtime owns (refused for `--api-key-env`).
//! * `params` — [`shell_assignments`], the parameter files the runner reads.
//! * `provenance` — which sources the binary was built from; `generate`
//!   and `check` refuse a stale binary inside a shforge source tree.
//! * `shipped` — the tables build.rs writes from `harnesses/` and
//!   `installers/` (the [`harness::Harness`] enum, the specs, the recipe
//!   files): a new harness is its files, and no Rust names it.
//! * `fetch` — fetching and verifying the installers' pinned artifacts
//!   (and the uv the Python bundles are built with).
//! * `pin` — `shforge pin NAME@VERSION`: a shipped harness's installer spec
//!   derived for another release.
//! * `smoke` — the real harness CLIs end to end against the fake server
//!   (`shforge smoke`).
//!
//! # The front door
//!
//! What an adapter uses around one rollout is re-exported here: quoting
//! ([`quote`](fn@quote), [`Raw`]), checked names ([`VarName`], ...), safe
//! files ([`write_atomic`], [`read_bounded`]), the musl rule
//! ([`system_is_musl`]), [`shell_assignments`] and [`RunnerParams`],
//! [`BootstrapBuilder`], [`Installer`], the supervised launch
//! ([`supervised_launch`], [`SupervisorOptions`], [`CleanupReceipt`]), a
//! harness session ([`SessionSpec`]) and, with the `snapshot` feature,
//! [`snapshot_db`]/[`snapshot_dir`].
//!
//! ```
//! use std::time::Duration;
//! use shforge::{RunnerParams, SupervisorOptions, supervised_launch};
//!
//! let params = RunnerParams::events(["opencode", "run"], "/s/events.log")
//!     .cwd("/task")
//!     .render()?;
//! assert!(params.as_str().contains("RUNNER_MODE='events'"));
//! let opts = SupervisorOptions::new("/s/receipt.json").deadline(Duration::from_secs(600));
//! let argv = supervised_launch("/s/process_supervisor.sh", &opts, &["bash", "/s/harness_runner.sh", "/s/params.sh"])?;
//! assert_eq!(argv[0], "env");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Cargo features
//!
//! `cli` (the default) builds the `shforge` command ([`cli`], with the
//! smoke, the fetcher, the catalog and the lints) and everything below.
//! `snapshot` (bundled SQLite) and `fake-model-server` can be had on their
//! own; `smoke` is a part of the command. `shforge = { version = "…",
//! default-features = false }` keeps quoting, names, params, the scripts
//! and their builders, the harness profiles and the supervised launch,
//! without SQLite, the fake server, the smoke, clap or anyhow.

// Public modules: the paths README.md and SPEC.md name
// (`shforge::host::supervised_launch`, `shforge::snapshot::atif::to_atif`, ...).
#[cfg(feature = "cli")]
pub mod cli;
pub mod harness;
pub mod host;
#[cfg(feature = "fake-model-server")]
pub mod model_server;
pub mod outcome;
pub mod quote;
pub mod scripts;
#[cfg(feature = "snapshot")]
pub mod snapshot;

// Internal modules: the command line's machinery, reached through
// [`cli`] and the root re-exports below, never by path. What only the
// command uses is compiled only with it.
#[cfg(feature = "cli")]
mod catalog;
// The directory listing is the snapshot readers'.
#[cfg_attr(not(feature = "snapshot"), allow(dead_code))]
mod copyback;
mod dialect;
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
mod diff;
mod environ;
#[cfg(feature = "cli")]
mod fetch;
// Checked names, safe files and the musl table: their items are
// re-exported below (`shforge::VarName`, `shforge::write_atomic`,
// `shforge::system_is_musl`). Reading standard input is the command's.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
mod files;
// Writing and checking a whole `generated/` is the command's; `finish` and
// `Output` are every builder's.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
mod generate;
mod lex;
mod musl;
mod names;
mod params;
#[cfg(feature = "cli")]
mod pin;
#[cfg(feature = "cli")]
mod provenance;
mod script;
// The tables build.rs writes from harnesses/ and installers/; the recipe
// files are only the command's (`fetch`).
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
mod shipped;
#[cfg(feature = "cli")]
mod smoke;
#[cfg(feature = "cli")]
mod template_lint;

/// The installer API adapters use (`shforge::installer::Installer`); the
/// module lives with the other scripts in [`scripts::installer`].
pub use scripts::installer;

// ---- The front door ----------------------------------------------------
// What an adapter uses around one rollout, at the crate root; the modules
// above hold the rest (and the command line's own machinery).

/// The trait every generated script implements, and its dialect.
pub use dialect::Dialect;
/// Bounded inputs and safe outputs: every file shforge writes goes
/// through [`write_atomic`].
pub use files::{Bound, FileError, FileMode, read_bounded, write_atomic};
/// Every generated file, whoever builds it.
pub use generate::{GenerateError, Output, finish};
/// A harness session dir for one rollout.
pub use harness::{Api, Harness, HarnessError, Mode, Session, SessionSpec};
/// The runner's parameters, typed.
pub use host::runner::{RunnerParams, RunnerParamsError};
/// The supervised launch and what the supervisor leaves behind.
pub use host::{
    CgroupChoice, CleanupReceipt, ReceiptError, StopReport, SupervisorOptions, end_services_launch,
    supervised_launch, supervised_launch_line,
};
/// The musl libraries harnesses need, and whether a system root runs on
/// musl (the installers' and the bootstrap's own rule).
pub use musl::{MUSL_LIBS, MuslLib, elf_interp, system_is_musl};
/// Checked names.
pub use names::{NameError, PkgName, RelPath, VarName};
/// Parameter files for the runner.
pub use params::{ParamValue, ParamsError, shell_assignments};
/// Quoting: one shell word per value; shell code is its own type.
pub use quote::{QuoteError, Raw, Value, Word, quote, quote_value};
pub use script::{RenderError, Script};
/// The bootstrap, with an adapter's needs baked in.
pub use scripts::bootstrap::{BootstrapBuilder, BootstrapError};
/// Installers from a builder or a spec.
pub use scripts::installer::{Installer, InstallerBuilder, InstallerSpec};
/// A harness's session data as one document.
#[cfg(feature = "snapshot")]
pub use snapshot::{Kind as SnapshotKind, Snapshot, SnapshotError, snapshot_db, snapshot_dir};

// Lets `askama.toml` name the escaper as `::shforge::quote::ShEscaper`, a path
// that resolves both inside this crate and in its tests and users.
extern crate self as shforge;
