//! One module per generated script: its askama template type, the builder
//! adapters use to make variants, and its [`crate::script::Script`] impl.
//!
//! Shared shell functions live in `templates/lib/` and are pulled into the
//! scripts that need them with `{% include %}`: written once, composed.

pub mod bootstrap;
pub mod installer;
pub mod runner;
pub mod supervisor;
