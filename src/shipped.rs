//! The shipped tables, written by build.rs from the directories that hold
//! them: [`Harness`] and [`SHIPPED`] from `harnesses/*.toml`,
//! [`HARNESS_SPECS`] and [`RUNTIME_SPECS`] from `installers/*.toml` (a spec
//! some harness names is a harness's; the others are runtimes), and
//! [`SCRIPT_FILES`] from the rest of `installers/`. Adding a harness is
//! adding its files: no Rust names it.

include!(concat!(env!("OUT_DIR"), "/shipped.rs"));
