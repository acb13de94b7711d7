//! Installers: the spec format, the builder and the generated catalog
//! (work in progress: lands with its issue).

use crate::catalog::Entry;

/// Catalog entries: one installer per harness spec.
pub fn entries() -> Vec<Entry> {
    Vec::new()
}
