//! Every integration test, in one binary (as xshell does): one link and
//! one build of the shared helpers instead of one per file. Run one file's
//! tests with a filter: `cargo test --test it runner::`.
//!
//! One `mod` line per file of this directory; the helpers they share are
//! in `support/`.

mod support;

mod adapter_specs;
mod arch_select;
mod arm_bun;
mod arm_python;
mod atif;
mod bootstrap;
mod carried_bash;
mod docs;
mod failure_paths;
mod fetch;
mod generate;
mod harness;
mod harness_spec;
mod hook;
mod hostile_copyback;
mod hostile_env;
mod hostile_files;
mod hostile_tools_env;
mod installer;
mod installer_attacks;
mod installer_modes;
mod installer_mounts;
mod lint;
mod lock_timeout;
mod matrix;
mod model_server;
mod outcome;
mod params_cli;
mod pin;
mod python_isolation;
mod quoting;
mod readme;
mod relocate;
mod roots;
mod runner;
mod shellcheck;
mod smoke;
mod snapshot;
mod spec_numbers;
mod supervisor;
mod templates;
mod tidy;
