//! shforge: generate the portable shell runtime that AI coding-agent
//! harnesses run under inside task sandboxes.
//!
//! * [`quote`] — every value becomes exactly one shell word; code is a
//!   separate type.
//! * [`lex`] and [`dialect`] — the static guard that keeps a script inside
//!   `posix` or `bash` (3.2).
//! * [`template_lint`] — where `{{ }}` may stand in a shell template.
//! * [`script`] — the [`script::Script`] trait every generated script
//!   implements; [`scripts`] — the scripts themselves (bootstrap,
//!   supervisor, runner, installer).
//! * [`catalog`] lists the scripts; [`generate`] turns any `&dyn Script`
//!   into a file and writes/checks `generated/`.
//! * [`diff`] — unified diffs with a hunk shared by several files shown
//!   once (`shforge check`).
//! * [`model_server`] — a scripted fake model on 127.0.0.1 for driving the
//!   real harness CLIs in tests.
//! * [`snapshot`] — a harness's session data (SQLite or JSONL) as one JSON
//!   document.
//! * [`harness`] — harness profiles: the session dir for one rollout.
//! * [`host`] — the supervised launch command and the cleanup receipt.
//! * [`outcome`] — why a rollout ended: status, cause and evidence.
//! * [`smoke`] — the real harness CLIs end to end against the fake server.
//! * [`musl`] — the musl libraries harnesses need.
//! * [`params`] — `shell_assignments`, the parameter files the runner reads.
//! * [`names`] — checked names: `VarName`, `PkgName`, `RelPath`.
//! * [`provenance`] — which sources the binary was built from; `generate`
//!   and `check` refuse a stale binary inside a shforge source tree.
//! * [`files`] — every output written atomically and never through a link,
//!   every input bounded.
//!
//! # Cargo features
//!
//! `cli` (the default) builds the `shforge` command and everything below.
//! `snapshot` (bundled SQLite), `fake-model-server` and `smoke` can be
//! turned off: `shforge = { version = "…", default-features = false }`
//! keeps quoting, names, params, the scripts and their builders, the
//! harness profiles and the supervised launch, without SQLite, the fake
//! server or the smoke.

pub mod catalog;
pub mod dialect;
pub mod diff;
pub mod files;
pub mod generate;
pub mod harness;
pub mod host;
pub mod lex;
#[cfg(feature = "fake-model-server")]
pub mod model_server;
pub mod musl;
pub mod names;
pub mod outcome;
pub mod params;
pub mod provenance;
pub mod quote;
pub mod script;
pub mod scripts;
#[cfg(feature = "smoke")]
pub mod smoke;
#[cfg(feature = "snapshot")]
pub mod snapshot;
pub mod template_lint;

/// The installer API adapters use (`shforge::installer::Installer`); the
/// module lives with the other scripts in [`scripts::installer`].
pub use scripts::installer;

// Lets `askama.toml` name the escaper as `::shforge::quote::ShEscaper`, a path
// that resolves both inside this crate and in its tests and users.
extern crate self as shforge;
