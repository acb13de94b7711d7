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
#   RUNNER_STDIN        the CLI's stdin (default /dev/null: harnesses hang on
#                       an open stdin that never sends anything)
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
# Exit status: the CLI's own; 125 when the runner fails (bad parameters, bad
# cwd, setup failed or exited, a redirection failed, events not written);
# 126 when the CLI is not executable; 127 when it is not found.

# Functions inherited from the environment (BASH_FUNC_exec%%, BASH_FUNC_cd%%,
# or any name bash 3.2 imports) are removed first, before this script
# defines its own: an inherited `exec` or `cd` would replace the builtin for
# the whole run, and the CLI would inherit it. Assigning POSIXLY_CORRECT
# turns on posix mode, where the special builtin `unset` is found before any
# function, so no inherited function can stand in for it (nor for `set`);
# `compgen` is freed first. Names that are not identifiers (bash 3.2 imports
# `BASH_FUNC_x%%` under that name) can only be unset outside posix mode: a
# second pass, when no function named like a builtin is left. Unsetting
# POSIXLY_CORRECT ends posix mode; an inherited value is given back to the
# CLI (see launch_cli).
runner_posixly_correct=${POSIXLY_CORRECT+set}
runner_posixly_correct_value=${POSIXLY_CORRECT-}
POSIXLY_CORRECT=y
# errexit or nounset from SHELLOPTS would stop at the first name that unset
# refuses; reset_shell_options turns the rest off.
set +e +u
unset -f compgen
if compgen -A function >/dev/null; then
    # One name per line; a name holding a newline is not removed and is
    # caught by the check below.
    runner_functions=$(compgen -A function)
    IFS='
'
    set -f
    for runner_function in $runner_functions; do
        unset -f "$runner_function" 2>/dev/null
    done
    unset -v POSIXLY_CORRECT
    for runner_function in $runner_functions; do
        unset -f "$runner_function" 2>/dev/null
    done
    set +f
    IFS=' 	
'
    unset -v runner_functions runner_function
fi
unset -v POSIXLY_CORRECT
if compgen -A function >/dev/null; then
    printf 'harness_runner: %s\n' "cannot clear the functions inherited from the environment" >&2
    exit 125
fi

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

# Only the parameter file configures the runner: forget every RUNNER_*
# variable that came from the environment (exported or not, array or not).
clear_inherited_params() {
    local rc_name
    for rc_name in "${!RUNNER_@}"; do
        unset -v "$rc_name" 2>/dev/null
    done
    for rc_name in "${!RUNNER_@}"; do
        fail 125 "cannot clear the inherited variable $rc_name (read-only)"
    done
}

# quoted_line QUOTE TEXT: TEXT is a physical line of a value quoted with
# QUOTE (' or "), from just after the opening quote or from the start of a
# continuation line ('...' may hold '\'' as older files write it). Sets ql_state to "open" (the value goes on to the
# next line), "closed" (TEXT ends with the closing quote and nothing
# follows it) or "bad". Whole-string expansions only, under the C locale: a
# value of megabytes full of quotes costs a few passes over it, never a
# step per character. In "...", as the shell reads it from the left: \\
# pairs go first (a run of backslashes pairs up from its left end), a
# backslash left at the end of the line would join the next line
# (refused), then \" \$ \` go; what is left may hold no \ $ ` and at most
# one ", as its last character.
quoted_line() {
    local LC_ALL=C
    local ql_text=$2 ql_bs=\\
    ql_state=bad
    if [[ $1 == "'" ]]; then
        if [[ $ql_text != *"'"* ]]; then
            ql_state=open
            return 0
        fi
        if [[ $ql_text != *"'" || ${ql_text%?} == *"'"* ]]; then
            # '\'' (close, a quoted quote, reopen) joins two quoted pieces.
            ql_text=${ql_text//"'$ql_bs''"/}
        fi
        if [[ $ql_text == *"'" && ${ql_text%?} != *"'"* ]]; then
            ql_state=closed
        fi
        return 0
    fi
    # ${x//pat/} costs more than linear time in the length on bash 4.4 and
    # older, even with nothing to replace: only a text with a backslash
    # pays for it.
    if [[ $ql_text == *"$ql_bs"* ]]; then
        ql_text=${ql_text//"$ql_bs$ql_bs"/}
        [[ $ql_text != *"$ql_bs" ]] || return 0
        ql_text=${ql_text//"$ql_bs"[\"\$\`]/}
    fi
    if [[ $ql_text == *[\\\$\`]* ]]; then
        return 0
    elif [[ $ql_text != *'"'* ]]; then
        ql_state=open
    elif [[ $ql_text == *'"' && ${ql_text%?} != *'"'* ]]; then
        ql_state=closed
    fi
    return 0
}

# statement_start LINE: the first line of a statement. Sets ss_state to
# "whole" (the statement is complete), "'" or '"' (its quoted value goes on to
# the next line), or fails with the reason in ss_reason. A name is RUNNER_
# and capitals, digits and _, with an optional [DIGITS]; the characters
# are spelled out (a range like [A-Z] can match other letters in a UTF-8
# locale on old bashes).
statement_start() {
    local LC_ALL=C
    local ss_name ss_base ss_index ss_word ql_state
    local ss_upper=ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_
    local ss_safe=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./,:+@-
    if [[ $1 != RUNNER_*=* ]]; then
        ss_reason="not an assignment to a RUNNER_* name"
        return 1
    fi
    ss_name=${1%%=*}
    ss_word=${1#*=}
    ss_base=${ss_name%%\[*}
    ss_index=${ss_name#"$ss_base"}
    ss_reason="'$ss_name' is not a RUNNER_* name (capitals, digits, _) with an optional [DIGITS]"
    [[ $ss_base != *[!$ss_upper]* ]] || return 1
    case $ss_index in
        '') ;;
        \[*\])
            ss_index=${ss_index#?}
            ss_index=${ss_index%?}
            [[ -n $ss_index && $ss_index != *[!0123456789]* ]] || return 1
            ;;
        *) return 1 ;;
    esac
    ss_reason="the value of $ss_name is not one quoted word"
    ss_state=whole
    if [[ $ss_name != "$ss_base" || $ss_word == '()' ]]; then
        case $runner_arrays in
            *" $ss_base "*) ;;
            *) runner_arrays="$runner_arrays$ss_base " ;;
        esac
    fi
    case $ss_word in
        "'"* | '"'*)
            quoted_line "${ss_word:0:1}" "${ss_word:1}"
            case $ql_state in
                closed) ;;
                open) ss_state=${ss_word:0:1} ;;
                *) return 1 ;;
            esac
            ;;
        '()')
            [[ $ss_name == "$ss_base" ]] || return 1
            ;;
        *[!$ss_safe]*) return 1 ;;
    esac
    return 0
}

# eval_statement LINE...: evaluate one checked statement, its lines joined
# by the newlines `read` removed.
eval_statement() {
    local IFS='
'
    eval "$*"
}

# load_params FILE: read the parameter file (the header says what a
# statement may be) and evaluate each statement once it is checked whole.
# Nothing is sourced: the file cannot assign another name, run a command
# or change an option. A hand-written file might export a RUNNER_*
# variable: none of them reaches the CLI.
load_params() {
    # The C locale: every byte is one character, for the reads, the checks
    # and the evals alike (a multibyte locale makes each step slower, and
    # in some, a byte inside a character can look like a backslash).
    local LC_ALL=C
    local lp_line lp_state='' lp_name lp_number=0 lp_first=0
    local ss_state ss_reason ql_state
    local -a lp_statement=()
    runner_arrays=' '
    if [[ ! -f $1 || ! -r $1 ]]; then
        fail 125 "cannot read the parameter file '$1'"
    fi
    while IFS= read -r lp_line || [[ -n $lp_line ]]; do
        lp_number=$((lp_number + 1))
        if [[ -z $lp_state ]]; then
            case $lp_line in
                '' | '#'*) continue ;;
            esac
            statement_start "$lp_line" ||
                fail 125 "parameter file '$1' line $lp_number: $ss_reason"
            lp_first=$lp_number
            lp_statement=("$lp_line")
            lp_state=$ss_state
        else
            lp_statement+=("$lp_line")
            quoted_line "$lp_state" "$lp_line"
            case $ql_state in
                closed) lp_state=whole ;;
                open) ;;
                *) fail 125 "parameter file '$1' line $lp_number: the value begun on line $lp_first is not one quoted word" ;;
            esac
        fi
        if [[ $lp_state == whole ]]; then
            eval_statement "${lp_statement[@]}" ||
                fail 125 "parameter file '$1' line $lp_first: the assignment failed"
            lp_state=''
        fi
    done <"$1"
    [[ -z $lp_state ]] ||
        fail 125 "parameter file '$1' line $lp_first: the quoted value never ends"
    for lp_name in "${!RUNNER_@}"; do
        # shellcheck disable=SC2163 # the names are in lp_name; -n removes the export
        export -n "$lp_name"
    done
}

# param_kind NAME: sets cp_kind to "array" or "scalar". The file can only make indexed
# arrays (NAME=() or NAME[N]=) and strings, and load_params noted each name
# it assigned in an array form: no `declare -p`, which would print (and
# copy through a pipe) the whole value.
param_kind() {
    case $runner_arrays in
        *" $1 "*) cp_kind=array ;;
        *) cp_kind=scalar ;;
    esac
}

# valid_name NAME: succeeds when NAME is a shell variable name. The letters
# are spelled out: a range like [A-Z] can match other letters in a UTF-8
# locale on old bashes.
valid_name() {
    local vn_chars=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789
    case $1 in
        '' | [0123456789]* | *[!$vn_chars]*) return 1 ;;
    esac
    return 0
}

# check_params: every RUNNER_* variable is known and of the right kind, and
# the combination makes sense.
check_params() {
    local cp_name cp_kind cp_entry cp_i=0
    for cp_name in "${!RUNNER_@}"; do
        param_kind "$cp_name"
        case $cp_name in
            RUNNER_ARGV | RUNNER_ENV)
                [[ $cp_kind == array ]] || fail 125 "$cp_name must be an array"
                ;;
            RUNNER_MODE | RUNNER_CWD | RUNNER_PATH_PREFIX | RUNNER_STDIN | RUNNER_STDOUT | RUNNER_STDERR | RUNNER_EVENTS | RUNNER_SETUP)
                [[ $cp_kind == scalar ]] || fail 125 "$cp_name must be a string, not an array"
                ;;
            *)
                fail 125 "unknown parameter $cp_name"
                ;;
        esac
    done
    [[ -n ${RUNNER_ARGV[0]+set} ]] || fail 125 "RUNNER_ARGV is missing or empty: there is no CLI to run"
    # A bad parameter, not a CLI that is missing: 125, not 127.
    [[ -n ${RUNNER_ARGV[0]} ]] || fail 125 "RUNNER_ARGV[0] is empty"
    case ${RUNNER_MODE-direct} in
        direct)
            # RUNNER_EVENTS is ignored (see the header).
            unset -v RUNNER_EVENTS
            ;;
        events)
            [[ -n ${RUNNER_EVENTS+set} ]] || fail 125 "events mode needs RUNNER_EVENTS"
            [[ -z ${RUNNER_STDOUT+set} ]] || fail 125 "RUNNER_STDOUT does not apply in events mode (the CLI's stdout goes to RUNNER_EVENTS)"
            ;;
        *)
            fail 125 "RUNNER_MODE must be direct or events, not '$RUNNER_MODE'"
            ;;
    esac
    for cp_name in RUNNER_CWD RUNNER_STDIN RUNNER_STDOUT RUNNER_STDERR RUNNER_EVENTS; do
        if [[ -n ${!cp_name+set} && -z ${!cp_name} ]]; then
            fail 125 "$cp_name is empty"
        fi
    done
    for cp_entry in ${RUNNER_ENV[@]+"${RUNNER_ENV[@]}"}; do
        if [[ $cp_entry != *=* ]] || ! valid_name "${cp_entry%%=*}"; then
            fail 125 "RUNNER_ENV[$cp_i] is not NAME=VALUE with a valid variable name"
        fi
        cp_i=$((cp_i + 1))
    done
}

# enter_cwd: run in RUNNER_CWD. CDPATH could send a relative cd elsewhere.
enter_cwd() {
    [[ -n ${RUNNER_CWD+set} ]] || return 0
    CDPATH='' cd -- "$RUNNER_CWD" >/dev/null 2>&1 ||
        fail 125 "cannot enter RUNNER_CWD '$RUNNER_CWD'"
}

# prefix_path: RUNNER_PATH_PREFIX goes in front of PATH (an empty prefix
# would add the current directory, so it is skipped).
prefix_path() {
    [[ -n ${RUNNER_PATH_PREFIX-} ]] || return 0
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

# apply_env: export RUNNER_ENV. Called only in the process that becomes the
# CLI, so the runner's own helpers never see these values.
apply_env() {
    local ae_entry
    for ae_entry in ${RUNNER_ENV[@]+"${RUNNER_ENV[@]}"}; do
        # shellcheck disable=SC2163 # the entry is NAME=VALUE, checked in check_params
        export "$ae_entry" 2>/dev/null ||
            fail 125 "cannot export ${ae_entry%%=*} from RUNNER_ENV (read-only variable)"
    done
}

# locate_cli NAME: succeed when exec would start NAME, else stop with 127
# (nothing by that name) or 126 (not executable, or a directory). exec alone
# cannot say: `exec /missing` exits 126 on bash 3.2 and 4.0. The PATH walk
# follows bash's own search: an executable file wins, a non-executable one is
# remembered, directories are skipped, an empty entry is the current directory.
locate_cli() {
    local lc_name=$1 lc_rest lc_dir lc_seen=''
    case $lc_name in
        */*)
            [[ -e $lc_name ]] || fail 127 "$lc_name: not found"
            [[ ! -d $lc_name ]] || fail 126 "$lc_name: is a directory"
            [[ -x $lc_name ]] || fail 126 "$lc_name: not executable"
            return 0
            ;;
    esac
    lc_rest=${PATH-}
    while :; do
        lc_dir=${lc_rest%%:*}
        [[ -n $lc_dir ]] || lc_dir=.
        if [[ -f $lc_dir/$lc_name ]]; then
            [[ -x $lc_dir/$lc_name ]] && return 0
            lc_seen=$lc_dir/$lc_name
        fi
        case $lc_rest in
            *:*) lc_rest=${lc_rest#*:} ;;
            *) break ;;
        esac
    done
    [[ -z $lc_seen ]] || fail 126 "$lc_name: $lc_seen is not executable"
    fail 127 "$lc_name: command not found"
}

# open_streams MODE: give this process (about to become the CLI) its stdin,
# its stdout (direct mode; in events mode stdout is the pipe to the recorder)
# and its stderr. A failed open stops with 125: the CLI never starts.
open_streams() {
    local os_stdin=${RUNNER_STDIN-/dev/null}
    # A directory opens for reading without complaint; the CLI would fail on
    # its first read instead.
    [[ ! -d $os_stdin ]] ||
        fail 125 "RUNNER_STDIN '$os_stdin' is a directory; the CLI was not started"
    exec <"$os_stdin" ||
        fail 125 "cannot open RUNNER_STDIN '$os_stdin' for reading; the CLI was not started"
    if [[ $1 == direct && -n ${RUNNER_STDOUT+set} ]]; then
        exec >"$RUNNER_STDOUT" ||
            fail 125 "cannot open RUNNER_STDOUT '$RUNNER_STDOUT' for writing; the CLI was not started"
    fi
    if [[ -n ${RUNNER_STDERR+set} ]]; then
        exec 2>"$RUNNER_STDERR" ||
            fail 125 "cannot open RUNNER_STDERR '$RUNNER_STDERR' for writing; the CLI was not started"
    fi
}

# launch_cli MODE: turn this process into the CLI. exec failing after the
# checks (a bad binary) exits 126 by itself: execfail is off.
launch_cli() {
    apply_env
    locate_cli "${RUNNER_ARGV[0]}"
    open_streams "$1"
    # The inherited POSIXLY_CORRECT (removed at the top to leave posix
    # mode) goes back to the CLI, set only now that no failure of this
    # script is left to report.
    if [[ -n $runner_posixly_correct ]]; then
        export POSIXLY_CORRECT="$runner_posixly_correct_value"
    fi
    exec "${RUNNER_ARGV[@]}"
}

# record_events EPOCH AT: read the CLI's stdout and write one event line per
# line. Runs in its own subshell, under the C locale: every byte is one
# character, so each step is linear in the line length whatever the user's
# locale. No bash variable can hold NUL: bash 4.4 and later drop NUL bytes,
# older ones cut the text at the first one. Without $EPOCHREALTIME (bash <
# 5.0) the stamp is one `date +%s` taken at start (EPOCH, when SECONDS was
# AT) plus SECONDS: no fork per line.
record_events() {
    local re_epoch=$1 re_at=$2 re_stamp=''
    LC_ALL=C
    if ((BASH_VERSINFO[0] >= 5)); then
        record_blocks 65536
    else
        record_lines
    fi
}

# event_stamp: the time for the lines just read, in re_stamp.
event_stamp() {
    if ((BASH_VERSINFO[0] >= 5)); then
        # shforge-allow: bash32-epoch only read when BASH_VERSINFO[0] >= 5
        re_stamp=$EPOCHREALTIME
    else
        re_stamp=$((re_epoch + SECONDS - re_at))
    fi
}

# record_lines: bash 3.2 to 4.4. `read` from a pipe costs one system call
# per byte. A trailing CR is tested with one substring expansion before it
# is cut: ${line%$'\r'} on a long line without CR is quadratic in a UTF-8
# locale. (read -N, below, exists from 4.1, but before 4.4 it cuts a whole
# block at a NUL byte, losing the lines after it; and bash 4.4 drops a byte
# when the timeout of a timed read fires as the byte comes.)
record_lines() {
    local rl_line
    while IFS= read -r rl_line || [[ -n $rl_line ]]; do
        if [[ ${rl_line: -1} == $'\r' ]]; then
            rl_line=${rl_line%?}
        fi
        event_stamp
        printf '%s\t%s\n' "$re_stamp" "$rl_line" || return 1
    done
    return 0
}

# record_blocks SIZE: bash 5.0 and later. `read -N` reads a pipe in blocks
# (one system call per pipe chunk instead of one per byte), but it returns
# only once it has SIZE bytes or the output ends. So it is timed (`read -t`):
# what arrived within 0.1 s goes out then, its whole lines stamped, and a
# line not yet ended waits for the rest. A timed read costs about one system
# call per byte on bash 5.2 and 5.3 (16 MiB: 20 s instead of 0.9 s), so
# while the output flows (a quarter of a block or more per read, and more
# already waiting) the reads are untimed, until a block finds nothing more
# waiting. The price: the end of a burst of output longer than a block can
# wait, unwritten, for the next output or the end. (bash 5.0 and 5.1 can
# miss a read's timeout, see docs/portability.md: what came then waits for
# the next output, and is stamped with it; no byte is lost.)
#
# A full block rarely ends at a newline: while output flows, the rest of its
# last line is read with `read -r -n 1024` (byte by byte, but only to the end
# of that line). When that finds no newline either, the line is long: it is
# kept in pieces and joined once it ends (appending to one string would copy
# it again for every block), and blocks without a newline go straight to the
# pieces. Finding the last newline of a block by pattern (${x%$'\n'*}) would
# cost a pattern match per byte after it.
#
# The lines of a block then cost a few whole-string expansions and no step
# per line: CRLF becomes LF in one substitution (of "x\r\r\n" only the last
# CR goes) and every newline but the last gets the stamp in another. NUL
# bytes are dropped by `read` and do not count towards SIZE or 1024.
record_blocks() {
    local rb_text rb_rest rb_status rb_joined rb_body rb_tail rb_fast=''
    local -a rb_pending=() rb_parts
    set -f
    # IFS empty: ${rb_pending[*]} joins the pieces with nothing between.
    local IFS=''
    while :; do
        rb_text=''
        if [[ -n $rb_fast ]]; then
            # shforge-allow: bash32-read-new-options record_blocks runs on bash >= 5.0 only
            read -r -N "$1" rb_text
        else
            # shforge-allow: bash32-read-new-options record_blocks runs on bash >= 5.0 only
            read -r -t 0.1 -N "$1" rb_text # shforge-allow: bash32-read-fractional-timeout bash >= 5.0 only
        fi
        rb_status=$?
        if ((rb_status > 128)); then
            # The time is up: what came goes out, if anything did.
            [[ -n $rb_text ]] || continue
            if ((${#rb_text} * 4 >= $1)) && read -r -t 0; then
                rb_fast=1
            fi
            emit_lines || return 1
            continue
        fi
        [[ -n $rb_text ]] || break
        rb_fast=''
        if ((rb_status == 0)) && read -r -t 0; then
            rb_fast=1
        fi
        if ((${#rb_pending[@]} > 0)) && [[ $rb_text != *$'\n'* ]]; then
            # Still inside a long line.
            rb_pending+=("$rb_text")
            continue
        fi
        if [[ $rb_status == 0 && ${rb_text: -1} != $'\n' ]]; then
            if [[ -z $rb_fast ]]; then
                # Nothing more is waiting: the whole lines go out now.
                emit_lines || return 1
                continue
            fi
            rb_rest=''
            # shforge-allow: bash32-read-new-options record_blocks runs on bash >= 5.0 only
            read -r -n 1024 rb_rest
            rb_status=$?
            if [[ $rb_status == 0 && ${#rb_rest} -ge 1024 ]]; then
                # A long line begins in this block: the lines before it
                # go out now, the rest waits in pieces.
                rb_text=$rb_text$rb_rest
                emit_lines || return 1
                continue
            fi
            rb_text=$rb_text$rb_rest
            # Status 0: the read stopped at a newline, which it removed.
            [[ $rb_status != 0 ]] || rb_text=$rb_text$'\n'
        fi
        event_stamp
        emit_block || return 1
        ((rb_status == 0)) || break
    done
    if ((${#rb_pending[@]} > 0)); then
        # The output ended inside a line.
        event_stamp
        rb_text=''
        emit_block || return 1
    fi
    return 0
}

# emit_lines: write the whole lines of rb_text (and the pieces before them)
# now; a last line not yet ended goes to the pieces.
emit_lines() {
    if [[ $rb_text != *$'\n'* ]]; then
        rb_pending+=("$rb_text")
        return 0
    fi
    rb_tail=''
    [[ ${rb_text: -1} == $'\n' ]] || split_block
    event_stamp
    emit_block || return 1
    [[ -z $rb_tail ]] || rb_pending+=("$rb_tail")
}

# split_block: cut rb_text after its last newline; what follows goes to
# rb_tail. Word splitting on newline (noglob is on), each line prefixed
# with "." so that empty lines are fields too: linear, where looking for
# the last newline by pattern is not.
split_block() {
    IFS=$'\n'
    # shellcheck disable=SC2206 # split on purpose, with noglob; see above
    rb_parts=(.${rb_text//$'\n'/$'\n'.})
    IFS=''
    rb_tail=${rb_parts[${#rb_parts[@]}-1]#.}
    rb_text=${rb_text:0:${#rb_text}-${#rb_tail}}
}

# emit_block: write rb_text (whole lines; the last one may lack its
# newline when the output ended there), the pieces in rb_pending first.
emit_block() {
    rb_joined=''
    if ((${#rb_pending[@]} > 0)); then
        rb_joined=${rb_pending[*]}
        rb_pending=()
        if [[ ${rb_text:0:1} != [!$'\n'] && ${rb_joined: -1} == $'\r' ]]; then
            # The long line ends here with CR LF (or CR and the end).
            rb_joined=${rb_joined%?}
        fi
    fi
    if [[ $rb_text == *$'\r'* ]]; then
        rb_text=${rb_text//$'\r\n'/$'\n'}
        if [[ ${rb_text: -1} == $'\r' ]]; then
            # A last line without newline loses its CR too.
            rb_text=${rb_text%?}
        fi
    fi
    rb_body=$rb_text
    if [[ ${rb_body: -1} == $'\n' ]]; then
        rb_body=${rb_body%?}
    fi
    printf '%s\t%s\n' "$re_stamp" "$rb_joined${rb_body//$'\n'/$'\n'$re_stamp$'\t'}"
}

# run_events: the CLI's stdout goes through record_events into RUNNER_EVENTS.
# The events file is opened by the group around the pipeline, before the CLI
# starts; the CLI's stdout is the pipe, and bash keeps its saved copy of the
# runner's stdout close-on-exec, so the CLI holds no descriptor of ours.
# The runner exits once the recorder has written the last line.
run_events() {
    local ev_epoch=0 ev_at=0 ev_opened='' ev_status
    if ((BASH_VERSINFO[0] < 5)); then
        ev_at=$SECONDS
        ev_epoch=$(date +%s 2>/dev/null)
        case $ev_epoch in
            '' | *[!0123456789]*) fail 125 "date +%s failed: no clock for event timestamps" ;;
        esac
    fi
    {
        ev_opened=1
        (launch_cli events) | (record_events "$ev_epoch" "$ev_at")
        ev_status=("${PIPESTATUS[@]}")
    } >"$RUNNER_EVENTS"
    [[ -n $ev_opened ]] ||
        fail 125 "cannot open RUNNER_EVENTS '$RUNNER_EVENTS' for writing; the CLI was not started"
    [[ ${ev_status[1]} == 0 ]] ||
        fail 125 "writing RUNNER_EVENTS '$RUNNER_EVENTS' failed (the CLI exited with status ${ev_status[0]})"
    exit "${ev_status[0]}"
}

main() {
    reset_shell_options
    clear_inherited_params
    [[ $# -eq 1 ]] || fail 125 "usage: harness_runner.sh PARAMS_FILE"
    load_params "$1"
    check_params
    enter_cwd
    prefix_path
    run_setup
    case ${RUNNER_MODE-direct} in
        events) run_events ;;
        *) launch_cli direct ;;
    esac
    fail 125 "internal error: the CLI did not start"
}

main "$@"
