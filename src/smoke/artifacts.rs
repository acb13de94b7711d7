//! The pinned artifacts a harness's installer needs on this machine, and
//! fetching the missing ones: a thin layer over [`crate::fetch`], which
//! `shforge fetch` uses too (same sources, same verification, a stage dir
//! inside the artifacts dir, nothing left behind on failure).

use std::path::Path;

use crate::fetch::Status;
pub use crate::fetch::{Needed, needed, sha256_file};

/// Make sure every artifact is in `dir` with its pinned size and digest,
/// fetching missing ones (`prepare.sh` inputs from any shipped spec
/// first). Returns what was fetched; an error is the first failure's line,
/// naming the file. `_work` is kept for the caller: the stage now lives
/// inside `dir`, so a rename puts a verified file in place.
pub fn ensure(
    needed: &[Needed],
    dir: &Path,
    _work: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<String>, String> {
    let pool: Vec<Needed> = crate::installer::shipped_specs()
        .filter_map(|(_, text)| crate::installer::InstallerSpec::from_toml(text).ok())
        .flat_map(|spec| crate::fetch::all(&spec))
        .collect();
    let rows = crate::fetch::fetch(needed, &pool, dir, progress).map_err(|e| e.to_string())?;
    let mut fetched = Vec::new();
    for r in rows {
        match r.status {
            Status::Failed(why) => return Err(why),
            Status::Fetched => fetched.push(r.path),
            Status::Present => {}
        }
    }
    Ok(fetched)
}
