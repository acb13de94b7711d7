//! Host side of the generated scripts: what a provider outside the sandbox
//! needs to run them and read what they leave behind.
//!
//! - [`runner`]: the runner's parameter file, typed.
//! - [`supervisor`]: the supervised launch command, the cleanup receipt and
//!   the command that ends a receipt's preserved services later.

pub mod runner;
pub mod supervisor;

pub use supervisor::{
    CLEARED_VARS, CgroupChoice, CleanupReceipt, Containment, LaunchError, ReceiptError, Service,
    StopReason, StopReport, SupervisorOptions, Zombie, end_services_launch, fixed_point_seconds,
    supervised_launch, supervised_launch_line,
};
