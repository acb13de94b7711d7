//! Which sources this binary was built from, and whether a source tree
//! still holds them.
//!
//! Templates and installer specs are compiled into the binary, so an older
//! `shforge` on PATH would regenerate (or check) `generated/` from the
//! templates it was built from, not from the tree's: `check` would pass a
//! changed template with a stale `generated/`. `build.rs` records a digest
//! of `templates/`, `installers/`, `harnesses/` and `src/` ([`BUILT_FROM`]);
//! [`refuse_stale_binary`] compares it with the tree's when the command runs
//! inside a shforge source tree. Outside one (an adapter's repository that
//! vendors the scripts) there is nothing to compare and nothing is refused.

use std::path::{Path, PathBuf};

#[path = "source_digest.rs"]
mod source_digest;

/// The digest of the sources this binary was built from.
pub const BUILT_FROM: &str = env!("SHFORGE_SOURCE_DIGEST");

/// The binary was built from other sources than the tree it runs in.
#[derive(Debug, thiserror::Error)]
pub enum ProvenanceError {
    /// The tree's templates, specs or code differ from the binary's.
    #[error(
        "this shforge was built from other sources than the tree at {} (templates, installer specs or src/ changed since): rebuild it from the tree, e.g. `cargo run -- {command}`",
        root.display()
    )]
    Stale {
        /// The source tree's root.
        root: PathBuf,
        /// The command that was refused.
        command: &'static str,
    },
    /// The tree could not be read.
    #[error("cannot read the shforge source tree at {}: {source}", root.display())]
    Unreadable {
        /// The source tree's root.
        root: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl ProvenanceError {
    /// 2: the command cannot do its job with this binary. (The command
    /// says so with its own usage error, also 2; the tests hold the two
    /// to the same code.)
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn exit_code(&self) -> u8 {
        2
    }
}

/// The shforge source tree that `dir` lies in: the nearest ancestor (or
/// `dir` itself) whose `Cargo.toml` names the package `shforge` and that has
/// a `templates/` directory.
pub fn source_tree(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find_map(|d| {
        // Bounded and never waited on: a FIFO or a huge file named
        // Cargo.toml in some ancestor of DIR is simply not a source tree.
        let bound = crate::files::Bound {
            what: "a Cargo.toml",
            max: 1 << 20,
        };
        let manifest = crate::files::read_text(&d.join("Cargo.toml"), bound).ok()?;
        let is_shforge = manifest.lines().any(|l| l.trim() == r#"name = "shforge""#);
        (is_shforge && d.join("templates").is_dir()).then(|| d.to_path_buf())
    })
}

/// Refuse to run `command` (generate, check) when `dir` lies in a shforge
/// source tree whose sources differ from [`BUILT_FROM`].
pub fn refuse_stale_binary(dir: &Path, command: &'static str) -> Result<(), ProvenanceError> {
    let Some(root) = source_tree(dir) else {
        return Ok(());
    };
    let now = source_digest::digest(&root).map_err(|source| ProvenanceError::Unreadable {
        root: root.clone(),
        source,
    })?;
    if now == BUILT_FROM {
        Ok(())
    } else {
        Err(ProvenanceError::Stale { root, command })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_crate_is_the_tree_it_was_built_from() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(
            source_tree(&root.join("src/scripts")).as_deref(),
            Some(root)
        );
        refuse_stale_binary(root, "check").unwrap();
    }

    #[test]
    fn a_changed_template_is_a_stale_binary() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("Cargo.toml"),
            "[package]\nname = \"shforge\"\n",
        )
        .unwrap();
        std::fs::create_dir(d.path().join("templates")).unwrap();
        std::fs::write(d.path().join("templates/x.sh"), "echo renamed_local\n").unwrap();
        let e = refuse_stale_binary(&d.path().join("templates"), "check").unwrap_err();
        assert!(matches!(e, ProvenanceError::Stale { .. }), "{e}");
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn a_fifo_named_cargo_toml_is_not_waited_on() {
        let d = tempfile::tempdir().unwrap();
        let c = std::ffi::CString::new(d.path().join("Cargo.toml").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        std::fs::create_dir(d.path().join("templates")).unwrap();
        assert_eq!(source_tree(d.path()), None);
    }

    #[test]
    fn outside_a_source_tree_nothing_is_compared() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("Cargo.toml"),
            "[package]\nname = \"adapter\"\n",
        )
        .unwrap();
        assert_eq!(source_tree(d.path()), None);
        refuse_stale_binary(d.path(), "check").unwrap();
    }
}
