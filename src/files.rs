//! Files shforge reads and writes for its user: every output goes through
//! [`write_atomic`], every input through [`read_bounded`].
//!
//! Outputs: the temporary file is created exclusively (`O_EXCL`, a random
//! name, in the target's own directory), so a link planted at a predictable
//! name cannot redirect the write; it is written, given its mode, synced and
//! renamed over the target, so readers see the old file or the whole new one.
//! An existing target that is not a regular file (a directory, device, FIFO,
//! socket, or a symlink to one) is refused and left as it was. A symlink to
//! a regular file is replaced by the new file: the rename never writes
//! through the link. A whole directory is written the same way by
//! [`write_dir_atomic`]: into a directory created exclusively under a random
//! name beside the target, renamed into place.
//!
//! Inputs: a path must name a regular file no larger than its [`Bound`];
//! directories, devices, FIFOs and sockets are refused at once (the file is
//! opened with `O_NONBLOCK`, so even opening a FIFO with no writer cannot
//! wait). Standard input (`-` where a command takes it) is read up to the
//! same bound. What a command reads out of a sandbox's copy (`outcome`,
//! `snapshot`, `receipt`) goes through the internal `copyback` module, on
//! top of these: no link is followed anywhere in its path.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The most shforge reads of one kind of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// What the input is, for the message: "a parameter file".
    pub what: &'static str,
    /// The most bytes accepted.
    pub max: u64,
}

impl Bound {
    /// The JSON object `shforge params` reads.
    pub const PARAMS: Bound = Bound::mib("a parameter file", 256);
    /// An installer spec (TOML).
    pub const INSTALLER_SPEC: Bound = Bound::mib("an installer spec", 1);
    /// A prompt file (`shforge harness --prompt-file`).
    pub const PROMPT: Bound = Bound::mib("a prompt file", 64);
    /// A supervisor receipt.
    pub const RECEIPT: Bound = Bound::mib("a receipt", 16);
    /// One transcript file (Claude Code, Pi, Codex JSONL).
    pub const TRANSCRIPT: Bound = Bound::mib("a transcript", 256);
    /// One line of a JSONL transcript.
    pub const JSONL_LINE: Bound = Bound::mib("a transcript line", 64);
    /// A harness's SQLite database, with its `-wal` (OpenCode, Kilo).
    pub const SQLITE_DB: Bound = Bound::mib("a session database", 1024);
    /// One value (text or blob) read out of a session database.
    pub const SQLITE_VALUE: Bound = Bound::mib("a database value", 64);
    /// A script checked by `shforge lint`, or one `shforge check` compares.
    pub const SCRIPT: Bound = Bound::mib("a script", 16);
    /// An askama template checked by `shforge lint-templates`.
    pub const TEMPLATE: Bound = Bound::mib("a template", 16);

    const fn mib(what: &'static str, mib: u64) -> Bound {
        Bound {
            what,
            max: mib << 20,
        }
    }
}

impl fmt::Display for Bound {
    /// "64 MiB", the unit the bounds are chosen in.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.max >= 1 << 20 && self.max.is_multiple_of(1 << 20) {
            write!(f, "{} MiB", self.max >> 20)
        } else {
            write!(f, "{} bytes", self.max)
        }
    }
}

/// Why a link is refused (see `copyback`).
const NO_LINK: &str = "no link is followed in data copied out of a sandbox (name the copy by its real path: realpath)";

/// Why a file could not be read or written. Each message names the user's
/// path once and the cause once.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// An output's target exists and is not a regular file.
    #[error("{}: refusing to replace {kind}", path.display())]
    TargetNotRegular {
        /// The target the user named.
        path: PathBuf,
        /// What is there: "a directory", "a FIFO", "a symlink to a device", ...
        kind: String,
    },
    /// An input is not a regular file.
    #[error("{}: not a regular file ({kind})", path.display())]
    InputNotRegular {
        /// The input the user named.
        path: PathBuf,
        /// What it is.
        kind: String,
    },
    /// An input is larger than its bound.
    #[error("{}: larger than {bound}, the most shforge reads of {}", path.display(), bound.what)]
    TooLarge {
        /// The input the user named ("standard input" for `-`).
        path: PathBuf,
        /// Its bound.
        bound: Bound,
    },
    /// A symbolic link in data copied out of a sandbox: never followed
    /// (see `copyback`).
    #[error(
        "{}: a symlink{}: refused, {NO_LINK}",
        path.display(),
        on_the_way_to.as_ref().map(|p| format!(" on the way to {}", p.display())).unwrap_or_default()
    )]
    Link {
        /// The link itself.
        path: PathBuf,
        /// The path named, when the link is one of the directories on the
        /// way to it.
        on_the_way_to: Option<PathBuf>,
    },
    /// An input expected to be a directory is something else.
    #[error("{}: not a directory ({kind})", path.display())]
    NotDirectory {
        /// The input the user named.
        path: PathBuf,
        /// What it is.
        kind: String,
    },
    /// Reading failed.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The input the user named.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Writing failed (nothing was replaced).
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The output the user named.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

impl FileError {
    /// The cause alone, without the path: for a caller whose own error
    /// already names the path (so the path is not printed twice).
    pub fn into_cause(self) -> io::Error {
        match self {
            FileError::Read { source, .. } | FileError::Write { source, .. } => source,
            FileError::TargetNotRegular { kind, .. } => io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("refusing to replace {kind}"),
            ),
            FileError::InputNotRegular { kind, .. } => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a regular file ({kind})"),
            ),
            FileError::NotDirectory { kind, .. } => io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("not a directory ({kind})"),
            ),
            FileError::Link {
                path,
                on_the_way_to,
            } => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a symlink{}: refused, {NO_LINK}",
                    on_the_way_to
                        .map(|_| format!(" at {}", path.display()))
                        .unwrap_or_default()
                ),
            ),
            FileError::TooLarge { bound, .. } => io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!(
                    "larger than {bound}, the most shforge reads of {}",
                    bound.what
                ),
            ),
        }
    }

    /// The exit code: 2 for input the user must change (a refused or
    /// oversized file, an unreadable input), 1 for a write that failed.
    pub fn exit_code(&self) -> u8 {
        match self {
            FileError::Write { .. } => 1,
            _ => 2,
        }
    }
}

/// How [`write_atomic`] sets the new file's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMode {
    /// 0644.
    Data,
    /// 0755: a script.
    Executable,
}

impl FileMode {
    fn bits(self) -> u32 {
        match self {
            FileMode::Data => 0o644,
            FileMode::Executable => 0o755,
        }
    }
}

/// What is at `meta`, for a message: "a directory", "a FIFO", ...
pub fn kind_of(meta: &fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_symlink() {
        "a symlink"
    } else if t.is_file() {
        "a regular file"
    } else {
        "an unknown kind of file"
    }
}

/// Refuse an existing `path` that is not a regular file, or a symlink that
/// leads to something other than a regular file (a dangling link is
/// replaced, like a regular file).
pub fn check_target(path: &Path) -> Result<(), FileError> {
    let refuse = |kind: String| FileError::TargetNotRegular {
        path: path.to_path_buf(),
        kind,
    };
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(FileError::Write {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if meta.file_type().is_symlink() {
        return match fs::metadata(path) {
            Ok(t) if t.is_file() => Ok(()),
            Ok(t) => Err(refuse(format!("a symlink to {}", kind_of(&t)))),
            Err(_) => Ok(()),
        };
    }
    if meta.is_file() {
        Ok(())
    } else {
        Err(refuse(kind_of(&meta).to_owned()))
    }
}

/// The cause alone: tempfile wraps its errors as "CAUSE at path
/// \".NAME.XXXX.tmp\"", a second path the user never named (and the wrapper
/// hides the OS error, so only its text can be cut).
fn bare(e: io::Error) -> io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    match e.to_string().split_once(" at path \"") {
        Some((cause, _)) => io::Error::new(e.kind(), cause.to_owned()),
        None => e,
    }
}

/// The directory `path` is created in, and its final name.
fn parent_and_name(path: &Path) -> Result<(&Path, String), io::Error> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("the path has no file name"))?
        .to_string_lossy()
        .into_owned();
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((parent, name))
}

/// Write `content` to `path` atomically (see the module docs); missing
/// parent directories are created.
pub fn write_atomic(path: &Path, content: &[u8], mode: FileMode) -> Result<(), FileError> {
    check_target(path)?;
    let failed = |source: io::Error| FileError::Write {
        path: path.to_path_buf(),
        source: bare(source),
    };
    let (parent, name) = parent_and_name(path).map_err(failed)?;
    fs::create_dir_all(parent).map_err(failed)?;
    // tempfile creates with O_CREAT|O_EXCL (a link at the name fails, it is
    // never followed) under a random name, mode 0600 until it is whole.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .rand_bytes(12)
        .tempfile_in(parent)
        .map_err(failed)?;
    tmp.write_all(content).map_err(failed)?;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode.bits()))
        .map_err(failed)?;
    tmp.as_file().sync_all().map_err(failed)?;
    // A FIFO or device swapped in since the check would be replaced, not
    // written through: rename(2) never opens its target.
    tmp.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

/// Refuse an existing directory target that is anything but an empty
/// directory (a symlink, even to an empty directory, is refused: the
/// rename would not replace it).
pub fn check_dir_target(path: &Path) -> Result<(), FileError> {
    let refuse = |kind: String| FileError::TargetNotRegular {
        path: path.to_path_buf(),
        kind,
    };
    let failed = |source: io::Error| FileError::Write {
        path: path.to_path_buf(),
        source,
    };
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(failed(e)),
    };
    if meta.file_type().is_symlink() {
        return Err(refuse(match fs::metadata(path) {
            Ok(t) => format!("a symlink to {}", kind_of(&t)),
            Err(_) => "a dangling symlink".to_owned(),
        }));
    }
    if !meta.is_dir() {
        return Err(refuse(kind_of(&meta).to_owned()));
    }
    if fs::read_dir(path).map_err(failed)?.next().is_some() {
        return Err(refuse("a directory that is not empty".to_owned()));
    }
    Ok(())
}

/// Write a whole directory at `path` atomically: `fill` populates a
/// directory created exclusively (`mkdir`, a random name, beside `path`),
/// which is then renamed over `path`. `path` must be absent or an empty
/// directory ([`check_dir_target`]); on any failure the temporary
/// directory is removed and `path` is left as it was. `fill` gets the
/// temporary directory and reports its own failures (naming the user's
/// path, not the temporary one).
pub fn write_dir_atomic(
    path: &Path,
    fill: impl FnOnce(&Path) -> Result<(), FileError>,
) -> Result<(), FileError> {
    check_dir_target(path)?;
    let failed = |source: io::Error| FileError::Write {
        path: path.to_path_buf(),
        source: bare(source),
    };
    let (parent, name) = parent_and_name(path).map_err(failed)?;
    fs::create_dir_all(parent).map_err(failed)?;
    // mkdir(2) fails on anything already at the name: never reused, never
    // followed. Dropped (and so removed) on every early return below.
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .rand_bytes(12)
        .permissions(fs::Permissions::from_mode(0o755))
        .tempdir_in(parent)
        .map_err(failed)?;
    fill(tmp.path())?;
    // rename(2) of a directory replaces only an empty directory (or
    // nothing); a target filled or swapped since the check fails it.
    fs::rename(tmp.path(), path).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOTEMPTY | libc::EEXIST | libc::ENOTDIR | libc::EISDIR) => {
            FileError::TargetNotRegular {
                path: path.to_path_buf(),
                kind: "something other than an empty directory".to_owned(),
            }
        }
        _ => failed(e),
    })?;
    // Renamed: there is nothing left for the guard to remove.
    let _ = tmp.keep();
    Ok(())
}

/// Open `path` for reading without waiting on it: `O_NONBLOCK` (a FIFO
/// without a writer opens at once), `O_NOCTTY`. Only regular files pass.
pub fn open_regular(path: &Path) -> Result<(File, fs::Metadata), FileError> {
    let cannot = |source: io::Error| FileError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(FileError::InputNotRegular {
            path: path.to_path_buf(),
            kind: kind_of(&meta).to_owned(),
        });
    }
    Ok((file, meta))
}

/// Read all of the regular file at `path`, refusing it when it is larger
/// than `bound` (checked before reading, and again while reading, should
/// it grow).
pub fn read_bounded(path: &Path, bound: Bound) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_regular(path)?;
    read_opened(path, file, &meta, bound)
}

/// Read all of `file`, a regular file opened from `path` whose metadata is
/// `meta`, refusing it when it is larger than `bound` (from its size before
/// a byte is read, and again while reading, should it grow).
pub(crate) fn read_opened(
    path: &Path,
    file: File,
    meta: &fs::Metadata,
    bound: Bound,
) -> Result<Vec<u8>, FileError> {
    let too_large = || FileError::TooLarge {
        path: path.to_path_buf(),
        bound,
    };
    if meta.len() > bound.max {
        return Err(too_large());
    }
    read_up_to(file, bound, meta.len()).map_err(|e| match e {
        Overflow::Io(source) => FileError::Read {
            path: path.to_path_buf(),
            source,
        },
        Overflow::TooLarge => too_large(),
    })
}

/// [`read_bounded`], as UTF-8 text.
pub fn read_text(path: &Path, bound: Bound) -> Result<String, FileError> {
    utf8(path, read_bounded(path, bound)?)
}

/// [`read_path_or_stdin`], as UTF-8 text.
pub fn read_text_or_stdin(path: &Path, bound: Bound) -> Result<String, FileError> {
    let shown = if path == Path::new("-") {
        Path::new(STDIN)
    } else {
        path
    };
    utf8(shown, read_path_or_stdin(path, bound)?)
}

/// `bytes` as UTF-8 text, or a read error naming `path`.
pub(crate) fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, FileError> {
    String::from_utf8(bytes).map_err(|_| FileError::Read {
        path: path.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"),
    })
}

/// How messages name `-`.
const STDIN: &str = "standard input";

/// Read standard input to its end, up to `bound`.
pub fn read_stdin(bound: Bound) -> Result<Vec<u8>, FileError> {
    let path = PathBuf::from(STDIN);
    read_up_to(io::stdin().lock(), bound, 0).map_err(|e| match e {
        Overflow::Io(source) => FileError::Read { path, source },
        Overflow::TooLarge => FileError::TooLarge { path, bound },
    })
}

/// Read `path`, or standard input when it is `-`.
pub fn read_path_or_stdin(path: &Path, bound: Bound) -> Result<Vec<u8>, FileError> {
    if path == Path::new("-") {
        read_stdin(bound)
    } else {
        read_bounded(path, bound)
    }
}

enum Overflow {
    Io(io::Error),
    TooLarge,
}

/// Read to the end, at most `bound.max + 1` bytes. `size` is what the file
/// claims (0 when unknown): reserving it up front keeps a file near its
/// bound from doubling the buffer past it.
fn read_up_to(reader: impl Read, bound: Bound, size: u64) -> Result<Vec<u8>, Overflow> {
    let reserve = size.min(bound.max).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(reserve).unwrap_or(0));
    reader
        .take(bound.max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Overflow::Io)?;
    if bytes.len() as u64 > bound.max {
        return Err(Overflow::TooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(p: &Path) {
        use std::os::unix::ffi::OsStrExt as _;
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn write_replaces_a_regular_file_and_sets_the_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.sh");
        fs::write(&p, "old").unwrap();
        write_atomic(&p, b"new", FileMode::Executable).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            1,
            "no temp file left"
        );
    }

    #[test]
    fn write_replaces_a_link_instead_of_writing_through_it() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        fs::set_permissions(&victim, fs::Permissions::from_mode(0o600)).unwrap();
        let p = d.path().join("out");
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        write_atomic(&p, b"new", FileMode::Data).unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        assert_eq!(
            fs::metadata(&victim).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(!fs::symlink_metadata(&p).unwrap().file_type().is_symlink());
    }

    #[test]
    fn write_refuses_a_fifo_a_device_link_and_a_directory() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        let link = d.path().join("null");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        let dir = d.path().join("dir");
        fs::create_dir(&dir).unwrap();
        for (p, kind) in [
            (&fifo, "a FIFO"),
            (&link, "a symlink to a character device"),
            (&dir, "a directory"),
        ] {
            let e = write_atomic(p, b"x", FileMode::Data).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert_eq!(
                e.to_string(),
                format!("{}: refusing to replace {kind}", p.display())
            );
        }
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            3,
            "no temp file left"
        );
    }

    #[test]
    fn write_failure_names_the_path_once() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("file");
        fs::write(&file, "").unwrap();
        let p = file.join("out");
        let e = write_atomic(&p, b"x", FileMode::Data).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        let msg = e.to_string();
        assert_eq!(msg.matches(&*p.display().to_string()).count(), 1, "{msg}");
    }

    #[test]
    fn read_refuses_fifos_devices_directories_and_oversized_files() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        for (p, kind) in [
            (fifo.as_path(), "a FIFO"),
            (Path::new("/dev/zero"), "a character device"),
            (d.path(), "a directory"),
        ] {
            let e = read_bounded(p, Bound::PARAMS).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("{}: not a regular file ({kind})", p.display())
            );
            assert_eq!(e.exit_code(), 2);
        }
        let big = d.path().join("big");
        fs::write(&big, vec![b'x'; 11]).unwrap();
        let bound = Bound {
            what: "a test file",
            max: 10,
        };
        let e = read_bounded(&big, bound).unwrap_err();
        assert!(matches!(e, FileError::TooLarge { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            format!(
                "{}: larger than 10 bytes, the most shforge reads of a test file",
                big.display()
            )
        );
        fs::write(&big, vec![b'x'; 10]).unwrap();
        assert_eq!(read_bounded(&big, bound).unwrap().len(), 10);
    }

    #[test]
    fn write_dir_replaces_nothing_or_an_empty_directory() {
        let d = tempfile::tempdir().unwrap();
        let fill = |tmp: &Path| {
            fs::write(tmp.join("f"), "x").map_err(|source| FileError::Write {
                path: tmp.to_path_buf(),
                source,
            })
        };
        let new = d.path().join("new");
        write_dir_atomic(&new, fill).unwrap();
        assert_eq!(fs::read(new.join("f")).unwrap(), b"x");
        let empty = d.path().join("empty");
        fs::create_dir(&empty).unwrap();
        write_dir_atomic(&empty, fill).unwrap();
        assert_eq!(fs::read(empty.join("f")).unwrap(), b"x");
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            2,
            "no temp dir left"
        );
    }

    #[test]
    fn write_dir_refuses_links_files_fifos_and_full_directories() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        fs::create_dir(&victim).unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        let file = d.path().join("file");
        fs::write(&file, "keep").unwrap();
        let full = d.path().join("full");
        fs::create_dir(&full).unwrap();
        fs::write(full.join("keep"), "keep").unwrap();
        for (p, kind) in [
            (&link, "a symlink to a directory"),
            (&fifo, "a FIFO"),
            (&file, "a regular file"),
            (&full, "a directory that is not empty"),
        ] {
            let e = write_dir_atomic(p, |_| panic!("must not be filled")).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert_eq!(
                e.to_string(),
                format!("{}: refusing to replace {kind}", p.display())
            );
        }
        assert_eq!(fs::read_dir(&victim).unwrap().count(), 0);
        assert_eq!(fs::read(&file).unwrap(), b"keep");
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            5,
            "no temp dir left"
        );
    }

    #[test]
    fn write_dir_that_fails_to_fill_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        let e = write_dir_atomic(&out, |tmp| {
            fs::write(tmp.join("half"), "x").unwrap();
            Err(FileError::Write {
                path: out.join("half"),
                source: io::Error::other("disk full"),
            })
        })
        .unwrap_err();
        assert_eq!(e.exit_code(), 1);
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0, "nothing left");
    }

    #[test]
    fn a_cause_without_its_path() {
        let p = Path::new("/x/out");
        let refused = FileError::TargetNotRegular {
            path: p.to_path_buf(),
            kind: "a FIFO".into(),
        };
        assert_eq!(
            refused.into_cause().to_string(),
            "refusing to replace a FIFO"
        );
        let big = FileError::TooLarge {
            path: p.to_path_buf(),
            bound: Bound::RECEIPT,
        };
        assert_eq!(
            big.into_cause().to_string(),
            "larger than 16 MiB, the most shforge reads of a receipt"
        );
        let wrapped = io::Error::new(
            io::ErrorKind::PermissionDenied,
            "Permission denied (os error 13) at path \"/x/.out.abc.tmp\"",
        );
        assert_eq!(bare(wrapped).to_string(), "Permission denied (os error 13)");
    }

    #[test]
    fn a_file_at_its_bound_is_read_without_growing_past_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, vec![b'x'; 4096]).unwrap();
        let bound = Bound {
            what: "a test file",
            max: 4096,
        };
        let bytes = read_bounded(&p, bound).unwrap();
        assert_eq!(bytes.len(), 4096);
        assert!(bytes.capacity() <= 4097, "{}", bytes.capacity());
    }
}
