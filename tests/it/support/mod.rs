//! Helpers shared by the integration tests. Test files name them
//! `common::` (`use crate::support as common;`).

mod matrix;

pub use matrix::*;
