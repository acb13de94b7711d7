//! Building chroots out of the host's own programs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Copy `program` (a symlink is copied as the file it leads to) and every
/// library `ldd` names for it into the chroot `root`, each at its own path.
/// A file already in the chroot is kept.
pub fn copy_with_libs(root: &Path, program: impl AsRef<Path>) {
    let program = program.as_ref();
    let mut files = vec![program.to_path_buf()];
    let out = super::run({
        let mut c = Command::new("ldd");
        c.arg(program);
        c
    });
    files.extend(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| line.split_whitespace().find(|w| w.starts_with('/')))
            .map(Into::into),
    );
    for file in files {
        let dest = root.join(file.strip_prefix("/").expect("an absolute path"));
        if dest.exists() {
            continue;
        }
        fs::create_dir_all(dest.parent().unwrap()).unwrap();
        fs::copy(&file, &dest).unwrap();
    }
}

/// Where the roots of `tests/roots/build.sh` are: `SHFORGE_TEST_ROOTS`, or
/// the script's default cache.
pub fn roots_dir() -> PathBuf {
    std::env::var_os("SHFORGE_TEST_ROOTS")
        .map_or_else(|| PathBuf::from("/var/cache/shforge/roots"), PathBuf::from)
}

/// The built root of `kind` (`musl`, `bookworm-musl`, `bullseye`), or a
/// loud skip (a failure under `SHFORGE_REQUIRE_SHELLS=1`) when it was not
/// built. Tests never change it: they run in it through [`in_root`].
pub fn cached_root(test: &str, kind: &str) -> Option<PathBuf> {
    let root = roots_dir().join(kind);
    let built = root.join(".shforge-root").is_file();
    super::require(
        test,
        built,
        &format!(
            "the {kind} root in {} (sh tests/roots/build.sh {kind})",
            roots_dir().display()
        ),
    )
    .then_some(root)
}

/// A plain glibc root made of the host's own programs and libraries (a
/// bookworm stand-in on a Debian host): dash as /bin/sh, bash, and the
/// tools the libc detection and the installers' selection use.
pub fn host_glibc_root(root: &Path) {
    for d in ["bin", "usr/bin", "tmp", "proc", "dev", "etc"] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    for tool in ["dash", "bash", "od", "dd", "tr", "uname", "env"] {
        let path = super::which(tool).unwrap_or_else(|| panic!("{tool} on PATH"));
        let path = fs::canonicalize(path).unwrap();
        copy_with_libs(root, &path);
        let name = path.file_name().unwrap();
        let at = root.join("bin").join(name);
        if !at.exists() {
            std::os::unix::fs::symlink(&path, at).unwrap();
        }
    }
    std::os::unix::fs::symlink("dash", root.join("bin/sh")).unwrap();
    if !root.join("usr/bin/env").exists() {
        std::os::unix::fs::symlink("/bin/env", root.join("usr/bin/env")).unwrap();
    }
}

/// Run `argv` chrooted in `root` with `scratch` bind-mounted on the root's
/// `/tmp`, in a mount namespace of its own: the root itself is never
/// changed. The environment is `env` and PATH only (PATH `path`).
pub fn in_root(
    root: &Path,
    scratch: &Path,
    path: &str,
    argv: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let chroot = super::which("chroot").expect("chroot on PATH");
    let mount = super::which("mount").expect("mount on PATH");
    let mut c = Command::new("unshare");
    c.args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c"])
        .arg(r#"m=$1 c=$2 s=$3 r=$4; shift 4; "$m" --bind "$s" "$r/tmp" && exec "$c" "$r" "$@""#)
        .arg("sh")
        .arg(mount)
        .arg(chroot)
        .arg(scratch)
        .arg(root)
        .args(argv)
        .env_clear()
        .env("PATH", path)
        .current_dir("/");
    for (k, v) in env {
        c.env(k, v);
    }
    super::run(c)
}

/// The glibc loader the host's programs name (x86_64).
pub const HOST_LOADER: &str = "/lib64/ld-linux-x86-64.so.2";
/// Where [`hide_glibc_loader`] moves it: a path of the same length, so the
/// programs' PT_INTERP can be overwritten in place.
pub const HIDDEN_LOADER: &str = "/opt/g/ld-linux-x86-64.so.2";

/// Move the glibc loader of `root` (copied there by [`copy_with_libs`])
/// from /lib64 to [`HIDDEN_LOADER`] and make `programs` (paths inside the
/// root) name it: the host's programs still run there, but the root shows
/// no glibc loader where the libc detection looks, like a glibc at a path
/// of its own (a NixOS store) or a musl image with test shells added.
pub fn hide_glibc_loader(root: &Path, programs: &[PathBuf]) {
    let loader = root.join(HOST_LOADER.trim_start_matches('/'));
    if !loader.exists() {
        return;
    }
    let hidden = root.join(HIDDEN_LOADER.trim_start_matches('/'));
    fs::create_dir_all(hidden.parent().unwrap()).unwrap();
    fs::rename(&loader, &hidden).unwrap();
    let _ = fs::remove_dir(loader.parent().unwrap());
    for p in programs {
        let p = root.join(p.strip_prefix("/").unwrap_or(p));
        // Static programs and scripts name no loader.
        if fs::symlink_metadata(&p).is_ok_and(|m| m.is_file())
            && shforge::elf_interp(&p).as_deref() == Some(HOST_LOADER)
        {
            patch_interp(&p, HOST_LOADER, HIDDEN_LOADER);
        }
    }
}

/// Overwrite the first `from` (with its NUL) in `file`, its PT_INTERP in an
/// executable, by `to`, NUL-padded: what `patchelf --set-interpreter` does
/// when the new path is no longer.
pub fn patch_interp(file: &Path, from: &str, to: &str) {
    assert!(to.len() <= from.len());
    let mut bytes = fs::read(file).unwrap();
    let needle = format!("{from}\0").into_bytes();
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap_or_else(|| panic!("{} names no {from}", file.display()));
    let mut new = to.as_bytes().to_vec();
    new.resize(needle.len(), 0);
    bytes[at..at + needle.len()].copy_from_slice(&new);
    let mode = fs::metadata(file).unwrap().permissions();
    fs::write(file, bytes).unwrap();
    fs::set_permissions(file, mode).unwrap();
}
