//! Host side of the supervisor: the supervised launch command and the
//! cleanup receipt (work in progress: lands with its issue).
