//! `shforge fake-model-server`: start a [`RunningServer`], print
//! `listening on http://127.0.0.1:PORT`, serve until TERM or INT.

use std::convert::Infallible;
use std::io::{self, Write as _};

use super::{RunningServer, ServerConfig};

/// Serve `cfg` until the process is killed. Returns only on an error
/// (the port is taken, the log cannot be opened or written, stdout is gone);
/// the caller prints it and exits 1.
pub fn serve(cfg: ServerConfig) -> io::Result<Infallible> {
    // TERM and INT must end the server even when the caller started it with
    // INT ignored (a `&` job of a non-interactive shell): restore the defaults.
    // SAFETY: `signal` with SIG_DFL installs no handler; nothing runs in it.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
    }
    let server = RunningServer::start(cfg)?;
    let mut out = io::stdout().lock();
    writeln!(out, "listening on {}", server.base_url())?;
    out.flush()?;
    drop(out);
    Err(server.wait())
}
