# harness_runner.sh: start one harness CLI (Claude Code, OpenCode, Kilo,
# OpenClaw, Pi, ...) the way its adapter's parameter file says.
#
#   bash harness_runner.sh PARAMS_FILE
#
# PARAMS_FILE is written by `shforge params` and is the only configuration:
#   RUNNER_ARGV         array: the CLI and its arguments (required)
#   RUNNER_MODE         direct (default) or events
#   RUNNER_CWD          directory to run in
#   RUNNER_PATH_PREFIX  prepended to PATH (for RUNNER_SETUP and the CLI)
#   RUNNER_ENV          array of NAME=VALUE, exported to the CLI only
#   RUNNER_UNSET        array of NAME, PREFIX* (a capital first) and !NAME:
#                       the variables removed from the CLI's environment
#                       (every name starting with PREFIX), but for the
#                       !NAMEs; RUNNER_ENV is exported after, so it wins
#   RUNNER_STDIN        the CLI's stdin (default /dev/null: harnesses hang on
#                       an open stdin that never sends anything)
#   RUNNER_ARG_FILE     a file whose whole content becomes one more argv word
#                       after RUNNER_ARGV, read at exec time (for a CLI that
#                       takes its prompt only as an argument; no NUL, at most
#                       131071 bytes, visible in /proc/PID/cmdline)
#   RUNNER_STDOUT       file for the CLI's stdout (direct mode; default inherited)
#   RUNNER_STDERR       file for the CLI's stderr (default inherited)
#   RUNNER_EVENTS       events mode: file that receives one line
#                       "<unix seconds[.fraction]><TAB><line>" per stdout line
#                       (ignored in direct mode, so one parameter file can
#                       serve both modes)
#   RUNNER_SETUP        shell code run (under set -e) before the CLI starts
#
# The file is not sourced: it is read line by line and each statement is
# checked before it is evaluated. A statement is one assignment to a RUNNER_*
# name: NAME=WORD, NAME=() or NAME[DIGITS]=WORD, where WORD is 'text' (no '
# inside), "text" (", \, $ and ` only as \", \\, \$, \`), a bare word of
# [A-Za-z0-9_./,:+@-] or nothing. Quoted text may span lines. Blank lines
# and lines starting with # are skipped. Anything else (another name, a
# second command on the line, $(...), export, a line continuation) is
# refused with 125 before the setup or the CLI runs (the statements before
# it only assigned RUNNER_* variables).
#
# The CLI's environment is the runner's, minus RUNNER_UNSET, plus RUNNER_ENV
# (and what RUNNER_SETUP exports, unless RUNNER_UNSET removes it). `shforge
# harness` fills RUNNER_UNSET from one table per runtime (src/harness/runtime.rs):
# what loads code into the harness's runtime or changes its module
# resolution (NODE_* for Node, BUN_* and NODE_* for Bun, PYTHON* for Python,
# OpenSSL's config for both, the dynamic loader's LD_* and glibc's other
# unsecure variables for every harness) never comes from the image, only
# from the session.
#
# RUNNER_SETUP runs in the runner's own shell, so its cd and exports reach
# the CLI. It fails the run (125, the CLI never starts) when it ends with a
# non-zero status (also after `set +e`), when errexit stops it, or when it
# calls `exit` (even `exit 0`; `exit` in a subshell or $(...) is the
# subshell's own). Traps it sets end with it: its EXIT trap never runs, and
# the runner keeps its own. Out of reach (the setup is trusted code; these
# guards catch mistakes): `builtin trap`, `command trap` or `set -o posix`
# (special builtins then bypass the guard functions) before an exit; `exec
# CMD`; `kill $$`.
#
# Exit status: the CLI's, as the shell reports it (128+N when signal N ended
# it), in both modes: in events mode the runner ignores TERM, INT and HUP,
# records until the CLI's output ends and passes the CLI's status on. 125
# when the runner fails (bad parameters, bad cwd, setup failed or exited, a
# redirection failed, events not written, no dd, sed, tr, mktemp or rm (or
# no private directory) for events mode); 126 when the CLI is not
# executable; 127 when it is not found.

<%# The runner's parts, one job each, in the order they must run:
lib/clear_functions.sh clears inherited functions (before this script defines any),
runner/params.bash reads and checks the parameter file, runner/setup.bash runs
RUNNER_SETUP under its guards, runner/launch.bash turns a process into the CLI;
after main, read only in events mode: runner/events.bash records events mode (bash 3.2 to 4.4: dd, tr, sed),
runner/clock.bash with lib/uptime.bash is its clock there (date once, then /proc/uptime),
runner/blocks.bash is its reader for bash 5.0 and later (read -N). #%>{% include "lib/clear_functions.sh" %}
if [ -n "$inherited_functions_left" ]; then
    printf 'harness_runner: %s\n' "cannot clear the functions inherited from the environment" >&2
    exit 125
fi
{% include "lib/inherited_env.sh" %}

# fail STATUS MESSAGE: the one way this script reports an error and stops.
fail() {
    printf 'harness_runner: %s\n' "$2" >&2
    # builtin: while RUNNER_SETUP runs, `exit` is the setup guard below.
    builtin exit "$1"
}

# Options inherited through SHELLOPTS/BASHOPTS (errexit, nounset, noclobber,
# posix, execfail, ...) would change what the runner does: turn them off.
# When SHELLOPTS was exported, the CLI sees the updated value.
reset_shell_options() {
    set +a +e +f +k +m +u +v +x +C +E +T
    set +o pipefail +o posix
    shopt -u execfail nocasematch nocaseglob nullglob failglob
}

{% include "runner/params.bash" %}

{% include "runner/setup.bash" %}

{% include "runner/launch.bash" %}

# Everything up to the CLI's start; direct mode ends here (exec), events
# mode returns to the recorder below.
main() {
    reset_shell_options
    clear_inherited_params
    [[ $# -eq 1 ]] || fail 125 "usage: harness_runner.sh PARAMS_FILE"
    load_params "$1"
    check_params
    enter_cwd
    prefix_path
    run_setup
    [[ ${RUNNER_MODE-direct} == events ]] && return 0
    launch_cli direct
    fail 125 "internal error: the CLI did not start"
}

# bash reads a script as it runs it: in direct mode main never returns, and
# the events recorder below (a third of this file) is never read nor parsed.
main "$@"

{% include "runner/events.bash" %}

{% include "lib/uptime.bash" %}

{% include "runner/clock.bash" %}

{% include "runner/blocks.bash" %}

# Events mode: run_events ends the runner with the CLI's status (or fails).
run_events
