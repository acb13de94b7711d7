//! Checked names: one newtype per kind of name a script or a spec takes, so
//! a value that was never checked cannot be passed where a name is wanted.
//!
//! * [`VarName`] — a shell variable name, `[A-Za-z_][A-Za-z0-9_]*`.
//! * [`PkgName`] — a command or package name as the bootstrap takes it,
//!   `[A-Za-z0-9][A-Za-z0-9._+-]*` not ending in `-`, which apt-get reads as
//!   "remove" (the same check the script makes).
//! * [`RelPath`] — a relative path of safe segments: no `..`, no `.`, no
//!   empty segment, no leading `/`, only `[A-Za-z0-9._+@-]` (so it needs no
//!   URL encoding either).

use std::fmt;

/// Why a name was refused. The message says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Not a shell variable name.
    #[error("invalid shell variable name {0:?}: expected [A-Za-z_][A-Za-z0-9_]*")]
    Var(String),
    /// Not a command or package name.
    #[error(
        "invalid command or package name {0:?}: expected [A-Za-z0-9][A-Za-z0-9._+-]* not ending in -"
    )]
    Pkg(String),
    /// The relative path is empty.
    #[error("expected a relative path, got an empty string")]
    EmptyPath,
    /// The path starts with `/`.
    #[error("expected a relative path, got the absolute {0:?}")]
    AbsolutePath(String),
    /// A segment is empty, `.` or `..`.
    #[error("{0:?}: empty, `.` and `..` segments are not allowed")]
    PathSegment(String),
    /// A segment holds a character outside the safe set.
    #[error("{0:?}: only letters, digits and . _ + @ - are allowed in a path segment")]
    PathCharacter(String),
}

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $check:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// Check `s` and keep it.
            pub fn new(s: impl Into<String>) -> Result<Self, NameError> {
                let s = s.into();
                $check(&s)?;
                Ok($name(s))
            }

            /// The checked text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, NameError> {
                Self::new(s)
            }
        }
    };
}

name_type!(
    /// A shell variable name: `[A-Za-z_][A-Za-z0-9_]*`.
    VarName,
    check_var
);
name_type!(
    /// A command or package name: `[A-Za-z0-9][A-Za-z0-9._+-]*`.
    PkgName,
    check_pkg
);
name_type!(
    /// A relative path made of safe segments.
    RelPath,
    check_rel_path
);

fn check_var(s: &str) -> Result<(), NameError> {
    let mut chars = s.chars();
    let ok = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then_some(()).ok_or_else(|| NameError::Var(s.to_owned()))
}

fn check_pkg(s: &str) -> Result<(), NameError> {
    let mut chars = s.chars();
    let ok = matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'))
        && !s.ends_with('-');
    ok.then_some(()).ok_or_else(|| NameError::Pkg(s.to_owned()))
}

fn check_rel_path(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::EmptyPath);
    }
    if s.starts_with('/') {
        return Err(NameError::AbsolutePath(s.to_owned()));
    }
    for seg in s.split('/') {
        if seg.is_empty() || seg == "." || seg == ".." {
            return Err(NameError::PathSegment(s.to_owned()));
        }
        if !seg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+@-".contains(&b))
        {
            return Err(NameError::PathCharacter(s.to_owned()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_names() {
        for ok in ["a", "_", "A_1", "_x9"] {
            assert_eq!(VarName::new(ok).unwrap().as_str(), ok);
        }
        for bad in ["", "1a", "a-b", "a b", "é", "a=b", "a.b"] {
            assert_eq!(
                VarName::new(bad),
                Err(NameError::Var(bad.into())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn pkg_names() {
        for ok in ["bash", "g++", "libstdc++6", "python3.11", "a_b-c"] {
            PkgName::new(ok).unwrap();
        }
        for bad in ["", "-rf", ".x", "a b", "a/b", "é", "a;b", "coreutils-"] {
            assert!(PkgName::new(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rel_paths() {
        for ok in ["a", "bin/node", "x-1.2+3@4/y_z"] {
            RelPath::new(ok).unwrap();
        }
        assert_eq!(RelPath::new(""), Err(NameError::EmptyPath));
        assert!(matches!(
            RelPath::new("/abs"),
            Err(NameError::AbsolutePath(_))
        ));
        for bad in ["a//b", "./a", "a/..", "a/"] {
            assert!(
                matches!(RelPath::new(bad), Err(NameError::PathSegment(_))),
                "{bad:?}"
            );
        }
        for bad in ["a b", "a%20", "é"] {
            assert!(
                matches!(RelPath::new(bad), Err(NameError::PathCharacter(_))),
                "{bad:?}"
            );
        }
    }
}
