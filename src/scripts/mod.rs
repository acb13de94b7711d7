//! One module per generated script: its askama template type, the builder
//! adapters use to make variants, and its catalog entry.
//!
//! Shared shell functions live in `templates/lib/` and are pulled into the
//! scripts that need them with `{% include %}`: written once, composed.

use crate::catalog::Entry;

pub mod bootstrap;
pub mod installer;
pub mod runner;
pub mod supervisor;

/// Every script this crate generates.
pub fn entries() -> Vec<Entry> {
    let mut entries = Vec::new();
    entries.extend(bootstrap::entries());
    entries.extend(supervisor::entries());
    entries.extend(runner::entries());
    entries.extend(installer::entries());
    entries
}
