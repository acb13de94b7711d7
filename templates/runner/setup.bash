# enter_cwd: run in RUNNER_CWD. CDPATH could send a relative cd elsewhere.
enter_cwd() {
    [[ -n ${RUNNER_CWD+set} ]] || return 0
    CDPATH='' cd -- "$RUNNER_CWD" >/dev/null 2>&1 ||
        fail 125 "cannot enter RUNNER_CWD '$RUNNER_CWD'"
}

# prefix_path: RUNNER_PATH_PREFIX goes in front of PATH (an empty prefix
# is skipped). An empty or relative entry in it would let the working
# directory supply a program, as in PATH itself (lib/inherited_env.sh).
prefix_path() {
    [[ -n ${RUNNER_PATH_PREFIX-} ]] || return 0
    case :$RUNNER_PATH_PREFIX: in
        *::* | *:[!/]*)
            fail 125 "RUNNER_PATH_PREFIX holds an empty or relative entry (absolute directories only)"
            ;;
    esac
    export PATH="$RUNNER_PATH_PREFIX${PATH:+:$PATH}"
}

# setup_aborted STATUS: EXIT trap while RUNNER_SETUP runs. An `exit` inside
# the setup, or a failing command under its set -e, ends up here instead of
# falling through to the CLI.
# shellcheck disable=SC2317 # reached through the EXIT trap set in run_setup
setup_aborted() {
    builtin trap - EXIT
    fail 125 "RUNNER_SETUP failed or exited (status $1); the CLI was not started"
}

# setup_exit STATUS [ARG...]: `exit` while RUNNER_SETUP runs (STATUS is the
# $? the exit would use). In a subshell or a command substitution of the
# setup it is the ordinary exit; in the runner's own shell it ends the run.
# BASH_SUBSHELL (bash 3.0+) counts ( ), $( ) and pipeline elements.
# shellcheck disable=SC2317 # reached through the exit function in run_setup
setup_exit() {
    local se_status=$1
    shift
    if ((BASH_SUBSHELL > 0)); then
        builtin exit "${@:-$se_status}"
    fi
    builtin trap - EXIT
    fail 125 "RUNNER_SETUP called exit ${1:-$se_status}; the CLI was not started"
}

# setup_trap ARG...: `trap` while RUNNER_SETUP runs. The setup's traps are
# set (they may matter while it runs) and remembered in setup_signals, so
# run_setup can reset them after it. In the runner's own shell an EXIT trap
# of the setup never replaces the runner's, which turns an exit into 125.
# shellcheck disable=SC2317 # reached through the trap function in run_setup
setup_trap() {
    local st_status st_arg
    # shellcheck disable=SC2064 # the setup's own arguments, passed through
    builtin trap "$@"
    st_status=$?
    if ((BASH_SUBSHELL > 0 || $# == 0)); then
        return "$st_status"
    fi
    case $1 in
        -p | -l | -lp | -pl) return "$st_status" ;;
        --) shift ;;
    esac
    # `trap ACTION SIG...` or `trap - SIG...`; a lone `trap SIG` resets SIG.
    [[ $# -le 1 ]] || shift
    for st_arg in "$@"; do
        setup_signals+=("$st_arg")
    done
    builtin trap 'setup_aborted "$?"' EXIT
    return "$st_status"
}

# run_setup: run RUNNER_SETUP in this shell (so its cd and exports reach the
# CLI), as the body of a function: `return` ends it, and errexit inside a
# function behaves the same on every bash (eval under errexit in a function
# misbehaves on 5.2). Its stdin is /dev/null. While it runs, `exit` and
# `trap` are the guards above; a non-zero status at its end (the setup may
# have turned errexit off) fails the run like errexit would have.
run_setup() {
    local rs_status
    [[ -n ${RUNNER_SETUP-} ]] || return 0
    eval "runner_setup_body() {
$RUNNER_SETUP
}" 2>/dev/null || fail 125 "RUNNER_SETUP is not valid shell code"
    setup_signals=()
    # shellcheck disable=SC2317 # called by the setup's code
    exit() { setup_exit "$?" "$@"; }
    # shellcheck disable=SC2317 # called by the setup's code
    trap() { setup_trap "$@"; }
    builtin trap 'setup_aborted "$?"' EXIT
    set -e
    runner_setup_body </dev/null
    rs_status=$?
    set +e
    unset -f exit trap runner_setup_body
    builtin trap - EXIT
    if [[ -n ${setup_signals[0]+set} ]]; then
        builtin trap - "${setup_signals[@]}" 2>/dev/null
    fi
    reset_shell_options
    [[ $rs_status == 0 ]] ||
        fail 125 "RUNNER_SETUP failed or exited (status $rs_status); the CLI was not started"
}
