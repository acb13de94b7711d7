//! Helpers shared by the integration tests, named by one name: test files
//! `use crate::support;` and call `support::run`, `support::bashes()`, or a
//! module of them (`support::http::Server`).
//!
//! * [`matrix`] — the shells to run under, and skipping loudly when a shell,
//!   a tool or root is missing.
//! * [`output`] — running commands (`shforge` among them) and reading the
//!   result.
//! * [`world`] — the crate's files and copies of them.
//! * [`http`] — a file server on 127.0.0.1.
//! * [`chroot`] — building chroots from the host's programs.
//! * [`late_read`] — an LD_PRELOAD library that plays bash's `read -t` races.
//! * [`artifacts`] — the pinned harness artifacts of the real-CLI tests.

pub mod arm;
pub mod artifacts;
pub mod chroot;
pub mod http;
pub mod late_read;
pub mod matrix;
pub mod output;
pub mod world;

pub use matrix::*;
pub use output::*;
pub use world::*;

/// One `#[test]` per row of a table, so that a failure's test name names
/// its case: `cases! { check; name => (a, b), ... }` expands each row to
/// `#[test] fn name() { check(a, b) }`. A table's rows go in a `mod`
/// named after the test they replace (`cargo test --test it that_name::`
/// still runs them all).
macro_rules! cases {
    ($check:expr; $($name:ident => ($($arg:expr),* $(,)?)),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $check($($arg),*);
            }
        )*
    };
}
pub(crate) use cases;
