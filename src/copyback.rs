//! Reading data copied back out of a task sandbox: what `shforge outcome`,
//! `shforge snapshot` and `shforge receipt` read (and the Python API
//! through them).
//!
//! Whatever ran in the sandbox chose every byte of that copy, its links
//! too: a session dir whose `events.log` is a link to a host file, a
//! `projects/` that leads to the host's own `~/.claude`, a `-wal` that is
//! `/dev/zero`. So every path is opened one component at a time from `/`
//! (or the working directory), each with `O_NOFOLLOW`: a link anywhere in
//! it, in the path named as below it, is refused
//! ([`FileError::Link`]), never followed. Directories are opened with
//! `O_DIRECTORY` and listed from the descriptor that was opened, so what
//! is listed is what was checked. A file is opened with `O_NONBLOCK` (a
//! FIFO without a writer opens at once) and `O_NOCTTY`, must be a regular
//! file by `fstat` of that descriptor, and is read up to its
//! [`Bound`](crate::files::Bound) ([`crate::files::read_bounded`]'s rules).
//! Hard links cannot be told from the file itself and are read.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::{self, File};
use std::io;
use std::os::fd::{AsRawFd as _, FromRawFd as _, IntoRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};

use crate::files::{self, Bound, FileError};

/// Every open: no link followed, no waiting, no controlling terminal.
const BASE: libc::c_int = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
/// A directory on the way, or one to list.
const DIR: libc::c_int = BASE | libc::O_DIRECTORY;

/// A directory opened without following a link anywhere in its path.
#[derive(Debug)]
pub(crate) struct Dir {
    fd: OwnedFd,
}

/// Open the directory `path` (see the module docs).
pub(crate) fn open_dir(path: &Path) -> Result<Dir, FileError> {
    walk(path, DIR).map(|fd| Dir { fd })
}

/// Open the regular file `path` for reading (see the module docs).
pub(crate) fn open_file(path: &Path) -> Result<(File, fs::Metadata), FileError> {
    let file = File::from(walk(path, BASE)?);
    let meta = file.metadata().map_err(|source| FileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        return Err(FileError::InputNotRegular {
            path: path.to_path_buf(),
            kind: files::kind_of(&meta).to_owned(),
        });
    }
    Ok((file, meta))
}

/// All of the regular file `path`, refused past `bound`.
pub(crate) fn read_file(path: &Path, bound: Bound) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_file(path)?;
    files::read_opened(path, file, &meta, bound)
}

/// [`read_file`], as UTF-8 text.
pub(crate) fn read_text(path: &Path, bound: Bound) -> Result<String, FileError> {
    files::utf8(path, read_file(path, bound)?)
}

/// Open `path` component by component, every directory on the way with
/// [`DIR`], the last component with `last`.
fn walk(path: &Path, last: libc::c_int) -> Result<OwnedFd, FileError> {
    let parts: Vec<Component<'_>> = path.components().collect();
    if parts.is_empty() {
        return Err(FileError::Read {
            path: path.to_path_buf(),
            source: io::Error::from(io::ErrorKind::NotFound),
        });
    }
    let mut at: Option<OwnedFd> = None;
    let mut shown = PathBuf::new();
    let mut i = 0;
    while i < parts.len() {
        shown.push(parts[i]);
        let mut name: OsString = match parts[i] {
            Component::RootDir => OsStr::new("/").into(),
            Component::CurDir => OsStr::new(".").into(),
            Component::ParentDir => OsStr::new("..").into(),
            Component::Normal(n) => n.into(),
            // No prefixes on Unix.
            Component::Prefix(p) => p.as_os_str().into(),
        };
        // `/` and the first name are opened as one absolute path (`/tmp`):
        // the same no-follow walk (`/` is never a link), and an emulator
        // that maps absolute paths into a sysroot (qemu-user's -L, where
        // `/` alone would be the sysroot's) still finds the real one.
        if let (Component::RootDir, Some(Component::Normal(n))) = (parts[i], parts.get(i + 1)) {
            name.push(n);
            shown.push(n);
            i += 1;
        }
        let is_last = i + 1 == parts.len();
        let flags = if is_last { last } else { DIR };
        let fd = openat(at.as_ref(), &name, flags)
            .map_err(|e| refusal(path, &shown, is_last, flags, e))?;
        at = Some(fd);
        i += 1;
    }
    Ok(at.expect("a path with a component"))
}

/// Why `shown` (the part of `path` up to the component that failed) could
/// not be opened: a link, something other than what was wanted, or the
/// error itself. What is there is looked up only for the message.
fn refusal(
    path: &Path,
    shown: &Path,
    is_last: bool,
    flags: libc::c_int,
    e: io::Error,
) -> FileError {
    let meta = fs::symlink_metadata(shown).ok();
    let wanted_dir = flags & libc::O_DIRECTORY != 0;
    match meta {
        Some(m) if m.file_type().is_symlink() => FileError::Link {
            path: shown.to_path_buf(),
            on_the_way_to: (!is_last).then(|| path.to_path_buf()),
        },
        Some(m) if is_last && wanted_dir && !m.is_dir() => FileError::NotDirectory {
            path: path.to_path_buf(),
            kind: files::kind_of(&m).to_owned(),
        },
        // A socket cannot be opened (ENXIO): refused for what it is.
        Some(m) if is_last && !wanted_dir && !m.is_file() && !m.is_dir() => {
            FileError::InputNotRegular {
                path: path.to_path_buf(),
                kind: files::kind_of(&m).to_owned(),
            }
        }
        _ => FileError::Read {
            path: path.to_path_buf(),
            source: e,
        },
    }
}

/// `openat(2)` of `name` in `at` (the working directory when `None`),
/// close-on-exec.
fn openat(at: Option<&OwnedFd>, name: &OsStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    let name = CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    let dir = at.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: `name` is a valid C string; `dir` is an open descriptor or
    // AT_FDCWD.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by openat and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl Dir {
    /// The names in the directory (without `.` and `..`), in the order the
    /// file system gives them: at most `max + 1`, so a caller holding to
    /// `max` sees that there are more without reading them all.
    pub(crate) fn names(&self, max: usize) -> io::Result<Vec<OsString>> {
        // A descriptor of its own: its own offset, and closedir closes it.
        let fd = openat(Some(&self.fd), OsStr::new("."), DIR)?.into_raw_fd();
        // SAFETY: `fd` is an open directory descriptor; on success the
        // stream owns it, on failure it is closed here.
        let stream = unsafe { libc::fdopendir(fd) };
        if stream.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: `fd` is still ours: fdopendir failed.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let names = read_names(stream, max);
        // SAFETY: `stream` came from fdopendir and is closed once.
        unsafe { libc::closedir(stream) };
        names
    }
}

/// The entries of an open directory stream, up to `max + 1`.
fn read_names(stream: *mut libc::DIR, max: usize) -> io::Result<Vec<OsString>> {
    let mut names = Vec::new();
    while names.len() <= max {
        clear_errno();
        // SAFETY: `stream` is an open directory stream.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(0) | None => Ok(names),
                Some(_) => Err(e),
            };
        }
        // SAFETY: readdir returned an entry whose d_name is NUL-terminated,
        // valid until the next readdir on this stream.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        let name = OsStr::from_bytes(name.to_bytes());
        if name != "." && name != ".." {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// readdir(3) tells its end from an error only by errno.
fn clear_errno() {
    // SAFETY: errno is this thread's own.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    unsafe {
        *libc::__errno_location() = 0;
    }
    // SAFETY: as above.
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
    unsafe {
        *libc::__error() = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mkfifo(p: &Path) {
        let c = CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_link_anywhere_in_the_path_is_refused_and_named() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real");
        fs::create_dir(&real).unwrap();
        fs::write(real.join("f"), "secret").unwrap();
        symlink(&real, d.path().join("dir-link")).unwrap();
        symlink(real.join("f"), real.join("file-link")).unwrap();

        let through = d.path().join("dir-link/f");
        let e = read_file(&through, Bound::RECEIPT).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: a symlink on the way to {}: refused, no link is followed in data copied out of a sandbox (name the copy by its real path: realpath)",
                d.path().join("dir-link").display(),
                through.display()
            )
        );
        assert_eq!(e.exit_code(), 2);
        let e = read_file(&real.join("file-link"), Bound::RECEIPT).unwrap_err();
        assert!(
            matches!(
                &e,
                FileError::Link {
                    on_the_way_to: None,
                    ..
                }
            ),
            "{e}"
        );
        let e = open_dir(&d.path().join("dir-link")).unwrap_err();
        assert!(matches!(e, FileError::Link { .. }), "{e}");
        assert_eq!(
            read_file(&real.join("f"), Bound::RECEIPT).unwrap(),
            b"secret"
        );
    }

    #[test]
    fn fifos_devices_and_directories_are_not_files() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        for (p, kind) in [
            (fifo.as_path(), "a FIFO"),
            (Path::new("/dev/zero"), "a character device"),
            (d.path(), "a directory"),
        ] {
            let e = read_file(p, Bound::RECEIPT).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("{}: not a regular file ({kind})", p.display())
            );
        }
        let e = open_dir(&fifo).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: not a directory (a FIFO)", fifo.display())
        );
    }

    #[test]
    fn a_directory_lists_its_names_up_to_a_bound() {
        let d = tempfile::tempdir().unwrap();
        for n in ["a", "b", "c"] {
            fs::write(d.path().join(n), "").unwrap();
        }
        let dir = open_dir(d.path()).unwrap();
        let mut names = dir.names(10).unwrap();
        names.sort();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(dir.names(1).unwrap().len(), 2);
        let missing = read_file(&d.path().join("none"), Bound::RECEIPT).unwrap_err();
        assert!(
            matches!(&missing, FileError::Read { source, .. } if source.kind() == io::ErrorKind::NotFound),
            "{missing}"
        );
    }

    #[test]
    fn relative_paths_and_dot_dot_are_walked_too() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir(d.path().join("a")).unwrap();
        fs::write(d.path().join("f"), "x").unwrap();
        assert_eq!(
            read_file(&d.path().join("a/../f"), Bound::RECEIPT).unwrap(),
            b"x"
        );
        assert!(open_dir(Path::new(".")).is_ok());
    }
}
