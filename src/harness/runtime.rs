//! What of the caller's environment reaches a harness CLI.
//!
//! The rule: the CLI gets the runner's environment (the image's and the
//! orchestrator's, which cannot be told apart) minus the variables that load
//! code into its runtime or change how that runtime resolves its modules,
//! plus the session's own settings (`RUNNER_ENV`, which the runner exports
//! after the removal, so they win). The removed names come from one table
//! here, per runtime, and reach the runner as `RUNNER_UNSET`; a spec that
//! sets one of them (Hermes's `PYTHONEXECUTABLE`) or the variable the
//! session reads the key from is kept.
//!
//! What stays: everything else, connection settings included (the proxy
//! variables, `SSL_CERT_FILE`, `NODE_EXTRA_CA_CERTS`: the orchestrator's
//! network, like `http_proxy`). The cost: the CLI's children (the task's
//! commands the agent runs) do not see the removed variables either.

use std::fmt;

/// The runtime a harness CLI runs on (`run.runtime` in its spec). A spec
/// that names none gets every family removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// A Node.js program (Gemini CLI, OpenClaw, Pi, Qwen Code).
    Node,
    /// A Bun-compiled executable (Claude Code, Cline, Kilo, OpenCode): Bun
    /// reads its own `BUN_*` and, for Node compatibility, `NODE_*` ones.
    Bun,
    /// A Python program on the portable Python (Hermes, NOOA, Stirrup):
    /// `-I` already makes the interpreter ignore `PYTHON*`, but its own
    /// child interpreters (`sys.executable`) run without it.
    Python,
    /// A native program (Codex): only the loader's variables.
    Native,
}

impl Runtime {
    /// Every runtime, in spec order.
    pub const ALL: [Runtime; 4] = [
        Runtime::Node,
        Runtime::Bun,
        Runtime::Python,
        Runtime::Native,
    ];

    /// The spec's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Node => "node",
            Runtime::Bun => "bun",
            Runtime::Python => "python",
            Runtime::Native => "native",
        }
    }

    /// The runtime a spec names.
    pub fn from_name(name: &str) -> Option<Runtime> {
        Runtime::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The families removed for this runtime, beside [`LOADER`].
    fn families(self) -> &'static [&'static [&'static str]] {
        match self {
            Runtime::Node => &[NODE, OPENSSL],
            Runtime::Bun => &[BUN, NODE],
            Runtime::Python => &[PYTHON, OPENSSL],
            Runtime::Native => &[],
        }
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Every harness: the dynamic loader's variables (the private glibc
/// runtime's loader honours them like the image's does: an image's
/// LD_PRELOAD or LD_LIBRARY_PATH would load its libraries into the
/// harness) and the rest of glibc's list of variables it drops for setuid
/// programs (gconv modules, locale and message files, tunables, resolver
/// settings), but TMPDIR, which the session sets.
const LOADER: &[&str] = &[
    "LD_*",
    "GCONV_PATH",
    "GETCONF_DIR",
    "GLIBC_TUNABLES",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "LOCPATH",
    "MALLOC_TRACE",
    "NIS_PATH",
    "NLSPATH",
    "RESOLV_HOST_CONF",
    "RES_OPTIONS",
    "TZDIR",
];

/// Node: NODE_OPTIONS (`--require`, `--import`, `--loader`), NODE_PATH,
/// NODE_REPL_EXTERNAL_MODULE, NODE_COMPILE_CACHE, NODE_ICU_DATA, and the
/// rest of the family (debug output, warnings to files, coverage dirs):
/// all of it, but the trust and proxy settings, connection config like
/// `http_proxy`.
const NODE: &[&str] = &[
    "NODE_*",
    "!NODE_EXTRA_CA_CERTS",
    "!NODE_USE_ENV_PROXY",
    "!NODE_USE_SYSTEM_CA",
];

/// Bun: BUN_OPTIONS (`--preload`), BUN_BE_BUN (the compiled CLI becomes
/// the bun CLI itself), BUN_CONFIG_* and the rest.
const BUN: &[&str] = &["BUN_*"];

/// Python: PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, PYTHONUSERBASE,
/// PYTHONWARNINGS (imports the category's module), PYTHONPYCACHEPREFIX,
/// PYTHONBREAKPOINT, PYTHONEXECUTABLE, ...: the whole family.
const PYTHON: &[&str] = &["PYTHON*"];

/// OpenSSL's config, read when Node or Python's ssl starts: it can load a
/// provider or engine (a shared object) into the harness.
const OPENSSL: &[&str] = &["OPENSSL_CONF", "OPENSSL_MODULES", "OPENSSL_ENGINES"];

/// Whether `entry` (NAME or PREFIX*) covers `name`.
fn covers(entry: &str, name: &str) -> bool {
    match entry.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => entry == name,
    }
}

/// `RUNNER_UNSET` for a harness on `runtime` (every family when `None`):
/// the table's entries, minus the exact names in `set` (the session sets
/// them), with `!NAME` for each of `keep` (names the session reads) that
/// an entry covers.
pub(crate) fn unset_list(runtime: Option<Runtime>, set: &[&str], keep: &[&str]) -> Vec<String> {
    let families: Vec<&[&str]> = match runtime {
        Some(r) => r.families().to_vec(),
        None => vec![NODE, BUN, PYTHON, OPENSSL],
    };
    let mut out: Vec<String> = Vec::new();
    for entry in std::iter::once(LOADER).chain(families).flatten() {
        if !set.contains(entry) && !out.iter().any(|e| e == entry) {
            out.push((*entry).to_owned());
        }
    }
    for name in keep {
        let bang = format!("!{name}");
        out.retain(|e| e != name);
        let covered = out.iter().any(|e| !e.starts_with('!') && covers(e, name));
        if covered && !out.contains(&bang) {
            out.push(bang);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_removes_the_loader_and_its_own_family() {
        let node = unset_list(Some(Runtime::Node), &[], &[]);
        assert!(node.contains(&"LD_*".to_owned()));
        assert!(node.contains(&"NODE_*".to_owned()));
        assert!(node.contains(&"!NODE_EXTRA_CA_CERTS".to_owned()));
        assert!(!node.contains(&"PYTHON*".to_owned()));
        let native = unset_list(Some(Runtime::Native), &[], &[]);
        assert_eq!(
            native,
            LOADER.iter().map(|s| s.to_string()).collect::<Vec<_>>()
        );
        let any = unset_list(None, &[], &[]);
        for e in ["NODE_*", "BUN_*", "PYTHON*", "OPENSSL_CONF", "LD_*"] {
            assert!(any.contains(&e.to_owned()), "{e}");
        }
    }

    #[test]
    fn the_session_s_names_are_kept() {
        let l = unset_list(
            Some(Runtime::Python),
            &["OPENSSL_CONF"],
            &["PYTHON_KEY", "KEY"],
        );
        assert!(!l.contains(&"OPENSSL_CONF".to_owned()));
        assert!(l.contains(&"!PYTHON_KEY".to_owned()));
        assert!(!l.contains(&"!KEY".to_owned()));
        let l = unset_list(Some(Runtime::Native), &[], &["TZDIR"]);
        assert!(!l.contains(&"TZDIR".to_owned()));
    }
}
