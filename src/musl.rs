//! The musl libraries harness binaries need, and how to find them.
//!
//! The shell side is `templates/lib/musl.sh` (included by the bootstrap and
//! by every installer); this table maps a library name to the shared object
//! the shell looks for and the Alpine package that provides it.
//! [`system_is_musl`] is the shell's libc rule in Rust, for the smoke to
//! pick the artifacts a root (or this machine) needs.

use std::path::Path;

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

/// Whether the system under `root` (`/` for this machine) counts as musl:
/// the rule of `system_libc` in `templates/lib/musl.sh`, which the
/// installers apply inside the image. glibc when a glibc loader is installed
/// (even beside a musl one: Debian's `musl` package adds
/// `/lib/ld-musl-x86_64.so.1` to glibc systems) or when `/bin/sh` or
/// `/usr/bin/env` names a loader that is not musl's; musl only when a musl
/// loader is all there is; glibc when no loader is found.
pub fn system_is_musl(root: &Path) -> bool {
    let names = |dir: &str| -> Vec<String> {
        std::fs::read_dir(root.join(dir))
            .map(|d| {
                d.flatten()
                    .filter(|e| {
                        let rel = format!("{dir}/{}", e.file_name().to_string_lossy());
                        resolve_in(root, &rel).is_some()
                    })
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let glibc_loader =
        |n: &str| (n.starts_with("ld-linux") || n.starts_with("ld64.so.")) && n.contains(".so.");
    if ["lib64", "lib"]
        .iter()
        .any(|d| names(d).iter().any(|n| glibc_loader(n)))
    {
        return false;
    }
    for prog in ["bin/sh", "usr/bin/env"] {
        // The interpreter as the kernel would see it: a link in the image
        // resolves inside the image.
        let Some(path) = resolve_in(root, prog) else {
            continue;
        };
        match elf_interp(&path) {
            Some(i) if i.contains("/ld-musl-") => break,
            Some(_) => return false,
            None => {}
        }
    }
    names("lib")
        .iter()
        .any(|n| n.starts_with("ld-musl-") && n.ends_with(".so.1"))
}

/// `rel` under `root` when it is a file, its last component's symlinks
/// followed inside `root` (an absolute target means the root's, not this
/// machine's; at most 40 links).
fn resolve_in(root: &Path, rel: &str) -> Option<std::path::PathBuf> {
    let mut path = root.join(rel);
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&path) else {
            return path.is_file().then_some(path);
        };
        path = match target.strip_prefix("/") {
            Ok(abs) => root.join(abs),
            Err(_) => path.parent()?.join(target),
        };
    }
    None
}

/// The program interpreter (`PT_INTERP`) a little-endian ELF file names,
/// or `None` for a static program, a script or an unreadable file.
pub fn elf_interp(path: &Path) -> Option<String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut f = std::fs::File::open(path).ok()?;
    let mut h = [0u8; 64];
    f.read_exact(&mut h).ok()?;
    if h[..4] != *b"\x7fELF" || h[5] != 1 {
        return None;
    }
    let u16_at = |b: &[u8], i: usize| u64::from(u16::from_le_bytes([b[i], b[i + 1]]));
    let u32_at =
        |b: &[u8], i: usize| u64::from(u32::from_le_bytes(b[i..i + 4].try_into().unwrap()));
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let (phoff, entsize, num, wide) = match h[4] {
        2 => (u64_at(&h, 32), u16_at(&h, 54), u16_at(&h, 56), true),
        1 => (u32_at(&h, 28), u16_at(&h, 42), u16_at(&h, 44), false),
        _ => return None,
    };
    if !(1..=256).contains(&num) || !(32..=128).contains(&entsize) {
        return None;
    }
    let mut table = vec![0u8; usize::try_from(num * entsize).ok()?];
    f.seek(SeekFrom::Start(phoff)).ok()?;
    f.read_exact(&mut table).ok()?;
    let ph = table
        .chunks(usize::try_from(entsize).ok()?)
        .find(|p| u32_at(p, 0) == 3)?;
    let (off, len) = if wide {
        (u64_at(ph, 8), u64_at(ph, 32))
    } else {
        (u32_at(ph, 4), u32_at(ph, 16))
    };
    if !(2..=4096).contains(&len) {
        return None;
    }
    let mut s = vec![0u8; usize::try_from(len).ok()?];
    f.seek(SeekFrom::Start(off)).ok()?;
    f.read_exact(&mut s).ok()?;
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    Some(String::from_utf8_lossy(&s[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_own_shell_names_its_loader() {
        let interp = elf_interp(Path::new("/bin/sh")).expect("a dynamic /bin/sh");
        assert!(interp.starts_with('/') && interp.contains("ld"), "{interp}");
        assert!(elf_interp(Path::new("/etc/passwd")).is_none());
    }

    #[test]
    fn a_musl_loader_beside_a_glibc_one_is_glibc() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join("lib")).unwrap();
        std::fs::create_dir_all(r.join("lib64")).unwrap();
        std::fs::write(r.join("lib/ld-musl-x86_64.so.1"), "").unwrap();
        assert!(system_is_musl(r), "musl is all it has");
        std::fs::write(r.join("lib64/ld-linux-x86-64.so.2"), "").unwrap();
        assert!(!system_is_musl(r), "both: glibc");
        std::fs::remove_file(r.join("lib/ld-musl-x86_64.so.1")).unwrap();
        assert!(!system_is_musl(r));
        std::fs::remove_file(r.join("lib64/ld-linux-x86-64.so.2")).unwrap();
        assert!(!system_is_musl(r), "no loader at all: glibc, as before");
    }
}
