//! What the generated scripts take from the environment the task image
//! gives them: one table of bash's own variables that change how a bash
//! script runs when inherited, and the names the runtime owns.
//!
//! The task image is somebody else's, and so is its environment: a
//! CIS-hardened image exports `TMOUT`, another a `CDPATH` or a `FUNCNEST`.
//! Every variable in [`BASH_VARS`] is
//!
//! * removed by the supervised launch (`env -u NAME ...`, [`crate::host::CLEARED_VARS`]), and
//! * removed again by every generated script before any of its functions
//!   runs (`templates/lib/inherited_env.sh`, which prints [`unset_words`]),
//!   so a script started by hand or by another driver is covered too.
//!
//! Removed means removed for everything the script starts as well: the
//! harness then runs its own shells under bash's defaults, the same whether
//! the supervisor was launched by shforge or by hand. docs/security.md's table
//! "bash's own variables from the image" lists what each would have done,
//! measured on bash 3.2.48, 4.0, 4.2, 4.4, 5.0, 5.1, 5.2 and 5.3.

use crate::quote::Raw;

/// One variable bash gives a meaning, as the table lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BashVar {
    /// The name.
    pub name: &'static str,
    /// What it does to a script when it comes from the environment (the
    /// bash releases where it does, as measured).
    pub effect: &'static str,
    /// Whether a generated script removes it itself. `false` for the few
    /// that act before a script's first line (the launch alone can clear
    /// them) or that bash imports read-only.
    pub in_script: bool,
}

const fn var(name: &'static str, effect: &'static str) -> BashVar {
    BashVar {
        name,
        effect,
        in_script: true,
    }
}

const fn launch_only(name: &'static str, effect: &'static str) -> BashVar {
    BashVar {
        name,
        effect,
        in_script: false,
    }
}

/// bash's own variables that change how a script runs when they come from
/// the environment, in the order the launch clears them (the first four
/// are the launch's original ones).
pub const BASH_VARS: &[BashVar] = &[
    launch_only(
        "BASH_ENV",
        "a file bash sources before the script's first line (every release)",
    ),
    launch_only(
        "ENV",
        "the same for `sh`, and for bash in posix mode when interactive",
    ),
    launch_only(
        "SHELLOPTS",
        "`set -o` options (errexit, nounset, xtrace, noclobber, ...) on from the first line; imported read-only",
    ),
    launch_only(
        "BASHOPTS",
        "`shopt` options (failglob, nullglob, extglob, ...) on from the first line (4.1+); imported read-only",
    ),
    var(
        "TMOUT",
        "every `read` without its own timeout gives up after that many seconds, status 142 (4.0+): a supervised harness was stopped as `lost`, the events recorder lost output",
    ),
    var(
        "FUNCNEST",
        "a function call nested deeper than that fails (4.4+): `FUNCNEST=1` stops every script at its second call",
    ),
    var(
        "CDPATH",
        "a relative `cd` goes to a directory under one of its entries instead, and prints it on stdout (every release)",
    ),
    var(
        "BASH_COMPAT",
        "the behaviour of an older release: `BASH_COMPAT=31` makes a quoted `=~` operand a regular expression (4.4+)",
    ),
    var(
        "CHILD_MAX",
        "how many exited children's statuses bash keeps for `wait` (4.3+; not below the POSIX minimum): with many children, a harness's status could be forgotten",
    ),
    var(
        "PS4",
        "expanded (command substitutions run) before every traced line when xtrace is on (every release)",
    ),
    var(
        "BASH_XTRACEFD",
        "where xtrace writes: a descriptor the script uses for its own data (4.1+)",
    ),
];

/// The names a script removes itself, as one line of words for
/// `unset -v` (`templates/lib/inherited_env.sh`).
pub fn unset_words() -> Raw {
    let mut words = Raw::default();
    for (i, v) in BASH_VARS.iter().filter(|v| v.in_script).enumerate() {
        if i > 0 {
            words.push(&Raw::code(" "));
        }
        words.push(&Raw::code(v.name));
    }
    words
}

/// Names the runtime sets itself, or that bash, the loader or a language
/// runtime gives a meaning: none of them may carry the model's API key
/// (`--api-key-env`). Exact names; [`OWNED_PREFIXES`] has the families.
const OWNED_NAMES: &[(&str, &str)] = &[
    ("PWD", "bash sets it to the working directory"),
    ("OLDPWD", "bash sets it on every cd"),
    ("SHLVL", "bash counts its nesting in it"),
    ("IFS", "bash splits words on it"),
    (
        "PATH",
        "the runtime sets it (RUNNER_PATH_PREFIX) and finds every program on it",
    ),
    ("HOME", "the session sets it to its own home"),
    ("TMPDIR", "the session sets it to its own directory"),
    ("SHELL", "programs start it as the user's shell"),
    ("TERM", "programs read it as the terminal type"),
    ("LANG", "it selects the locale"),
    (
        "POSIXLY_CORRECT",
        "it puts bash and the GNU tools in POSIX mode",
    ),
    ("OPTIND", "bash's getopts sets it"),
    ("OPTARG", "bash's getopts sets it"),
    ("OPTERR", "bash's getopts reads it"),
    ("REPLY", "bash's read sets it"),
    ("RANDOM", "bash gives it a new value on every read"),
    ("SRANDOM", "bash gives it a new value on every read"),
    ("SECONDS", "bash counts the seconds since its start in it"),
    ("LINENO", "bash sets it to the current line"),
    ("EPOCHREALTIME", "bash sets it to the time"),
    ("EPOCHSECONDS", "bash sets it to the time"),
    ("PPID", "bash sets it read-only"),
    ("UID", "bash sets it read-only"),
    ("EUID", "bash sets it read-only"),
    ("GROUPS", "bash sets it"),
    ("HOSTNAME", "bash sets it"),
    ("HOSTTYPE", "bash sets it"),
    ("MACHTYPE", "bash sets it"),
    ("OSTYPE", "bash sets it"),
    ("DIRSTACK", "bash's pushd and popd set it"),
    ("FUNCNAME", "bash sets it in every function"),
    ("PIPESTATUS", "bash sets it after every pipeline"),
    ("COLUMNS", "bash and terminal programs read and set it"),
    ("LINES", "bash and terminal programs read and set it"),
    ("MAIL", "bash reads it"),
    ("MAILPATH", "bash reads it"),
    ("MAILCHECK", "bash reads it"),
    ("IGNOREEOF", "bash reads it"),
    ("INPUTRC", "readline reads it"),
    ("TEXTDOMAIN", "bash reads it"),
    ("TEXTDOMAINDIR", "bash reads it"),
    ("TIMEFORMAT", "bash reads it"),
    ("GLOBIGNORE", "bash reads it"),
    ("EXECIGNORE", "bash reads it"),
    ("GLOBSORT", "bash reads it"),
    ("PROMPT_COMMAND", "bash reads it"),
    ("PS0", "bash reads it"),
    ("PS1", "bash reads it"),
    ("PS2", "bash reads it"),
    ("PS3", "bash reads it"),
    ("auto_resume", "bash reads it"),
    ("histchars", "bash reads it"),
    ("COPROC", "bash's coproc sets it"),
    ("CDPATH", "bash reads it"),
    ("_", "bash sets it after every command"),
];

/// Families of names the runtime or a program it runs owns: the prefix and
/// why.
const OWNED_PREFIXES: &[(&str, &str)] = &[
    ("RUNNER_", "the runner's parameters"),
    ("BASH", "bash's own variables"),
    ("HIST", "bash's history variables"),
    ("COMP_", "bash's completion variables"),
    ("READLINE_", "bash's readline variables"),
    ("LC_", "locale variables"),
    ("XDG_", "the session sets the XDG directories"),
    (
        "LD_",
        "the dynamic loader reads them (libraries loaded into the harness)",
    ),
    (
        "NODE_",
        "Node reads them (code loaded into the harness, module resolution)",
    ),
    (
        "PYTHON",
        "Python reads them (code loaded into the harness, module resolution)",
    ),
    ("BUN_", "Bun reads them"),
];

/// Why `name` may not carry the API key, or `None` when it may.
pub fn owned_by_runtime(name: &str) -> Option<String> {
    if name == crate::scripts::supervisor::MARKER_VAR {
        return Some("it is the supervisor's marker variable".into());
    }
    if let Some(v) = BASH_VARS.iter().find(|v| v.name == name) {
        return Some(format!("bash gives it a meaning: {}", v.effect));
    }
    if let Some((_, why)) = OWNED_NAMES.iter().find(|(n, _)| *n == name) {
        return Some((*why).to_owned());
    }
    OWNED_PREFIXES
        .iter()
        .find(|(p, _)| name.starts_with(p))
        .map(|(p, why)| format!("{p}* are {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launch_clears_every_variable_and_scripts_all_but_the_early_ones() {
        let words = unset_words().into_string();
        assert_eq!(
            words,
            "TMOUT FUNCNEST CDPATH BASH_COMPAT CHILD_MAX PS4 BASH_XTRACEFD"
        );
        for v in BASH_VARS {
            assert!(crate::names::VarName::new(v.name).is_ok(), "{}", v.name);
        }
    }

    #[test]
    fn owned_names_are_refused_with_a_reason() {
        for name in [
            "PWD",
            "SHLVL",
            "IFS",
            "TMOUT",
            "NEMO_GYM_SUPERVISOR",
            "LD_PRELOAD",
            "BASH_ENV",
            "RUNNER_ENV",
            "NODE_OPTIONS",
            "PYTHONPATH",
            "LC_ALL",
            "_",
        ] {
            assert!(owned_by_runtime(name).is_some(), "{name}");
        }
        for name in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "MY_KEY",
            "PWDX",
            "KEY_PATH",
        ] {
            assert_eq!(owned_by_runtime(name), None, "{name}");
        }
    }
}
