//! The private copy of a database is removed when `shforge snapshot` is
//! stopped by TERM or INT.
//!
//! A copy can be a gigabyte of someone's session data in `$TMPDIR`, and
//! `tempfile`'s drop never runs when a signal ends the process. So each
//! copy registers its paths here, and [`remove_private_copies_on_signal`]
//! (called by the CLI, not by the library on its own: a library must not
//! take a process's signals) installs a handler that unlinks them, removes
//! the directory, and then dies of the same signal as it would have
//! without a handler. `unlink`, `rmdir`, `signal` and `raise` are
//! async-signal-safe; the handler allocates nothing and takes no lock.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// The files of the copy being read, then its directory.
struct Paths {
    files: Vec<CString>,
    dir: CString,
}

/// The copy a signal must remove, or null.
static CURRENT: AtomicPtr<Paths> = AtomicPtr::new(ptr::null_mut());
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// While alive, a signal removes `dir` and `files` (see the module docs).
pub(super) struct Registration(*mut Paths);

/// Register the copy in `dir` (its `files` may or may not exist yet).
pub(super) fn register(dir: &Path, files: &[PathBuf]) -> Registration {
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    let (Some(dir), Some(files)) = (c(dir), files.iter().map(|f| c(f)).collect()) else {
        // A path with a NUL cannot exist; nothing to remove.
        return Registration(ptr::null_mut());
    };
    let paths = Box::into_raw(Box::new(Paths { files, dir }));
    CURRENT.store(paths, Ordering::SeqCst);
    Registration(paths)
}

impl Drop for Registration {
    fn drop(&mut self) {
        if self.0.is_null() {
            return;
        }
        let _ =
            CURRENT.compare_exchange(self.0, ptr::null_mut(), Ordering::SeqCst, Ordering::SeqCst);
        // With the handler installed, it may be reading these paths on
        // another thread right now: they are left allocated (a few hundred
        // bytes once per CLI run). Without it nothing else reads them.
        if !INSTALLED.load(Ordering::SeqCst) {
            // SAFETY: made by Box::into_raw in `register`, no longer shared.
            drop(unsafe { Box::from_raw(self.0) });
        }
    }
}

/// Run `f` with TERM and INT held back (delivered when it returns): a
/// copy's directory is made and registered with no moment between the two
/// when a signal would leave it behind.
pub(super) fn held<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: sigset operations on local sets; pthread_sigmask on this
    // thread only, restored before returning.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let out = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, ptr::null_mut());
        out
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    let paths = CURRENT.swap(ptr::null_mut(), Ordering::SeqCst);
    if !paths.is_null() {
        // SAFETY: registered paths are never freed once the handler is
        // installed; only async-signal-safe calls follow.
        let paths = unsafe { &*paths };
        for f in &paths.files {
            unsafe { libc::unlink(f.as_ptr()) };
        }
        unsafe { libc::rmdir(paths.dir.as_ptr()) };
    }
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Make TERM and INT remove the private copy of a database being read
/// before the process dies of them (as it would have: same signal, same
/// status). For the `shforge snapshot` command; idempotent.
pub fn remove_private_copies_on_signal() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        INSTALLED.store(true, Ordering::SeqCst);
        for sig in [libc::SIGTERM, libc::SIGINT] {
            // SAFETY: a plain sigaction with a handler that only makes
            // async-signal-safe calls.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                libc::sigemptyset(&mut act.sa_mask);
                libc::sigaddset(&mut act.sa_mask, libc::SIGTERM);
                libc::sigaddset(&mut act.sa_mask, libc::SIGINT);
                libc::sigaction(sig, &act, ptr::null_mut());
            }
        }
    });
}
