//! Every integration test, in one binary (as xshell does): one link and
//! one build of the shared helpers instead of one per file. Run one file's
//! tests with a filter: `cargo test --test it runner::`.
//!
//! One `mod` line per file of this directory; the helpers they share are
//! in `support/`.

mod support;

mod adapter_specs;
mod bootstrap;
mod generate;
mod harness;
mod hook;
mod installer;
mod lint;
mod matrix;
mod model_server;
mod outcome;
mod params_cli;
mod quoting;
mod runner;
mod shellcheck;
mod smoke;
mod snapshot;
mod spec_numbers;
mod supervisor;
mod templates;
