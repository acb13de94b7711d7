//! The musl libraries harness binaries need, and how to find them.
//!
//! The shell side is `templates/lib/musl.sh` (included by the bootstrap and
//! by every installer); this table maps a library name to the shared object
//! the shell looks for and the Alpine package that provides it.

/// A musl library a harness may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MuslLib {
    /// The name used on command lines and in specs (`libstdc++`).
    pub name: &'static str,
    /// The shared object the musl loader looks for (`libstdc++.so.6`).
    pub soname: &'static str,
    /// The Alpine package that provides it.
    pub apk_package: &'static str,
}

/// Every library shforge knows how to provide.
pub const MUSL_LIBS: &[MuslLib] = &[
    MuslLib {
        name: "libstdc++",
        soname: "libstdc++.so.6",
        apk_package: "libstdc++",
    },
    MuslLib {
        name: "libgcc",
        soname: "libgcc_s.so.1",
        apk_package: "libgcc",
    },
];

/// Look a library up by name.
pub fn lookup(name: &str) -> Option<&'static MuslLib> {
    MUSL_LIBS.iter().find(|l| l.name == name)
}

/// The known names, for error messages.
pub fn known_names() -> String {
    MUSL_LIBS
        .iter()
        .map(|l| l.name)
        .collect::<Vec<_>>()
        .join(", ")
}
