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

# path_lookup NAME: bash's own search of PATH for NAME (no slash in it): an
# executable file wins (its path in pl_found), the last non-executable one
# is remembered (pl_seen), directories are skipped, an empty entry is the
# current directory. No fork, nothing hashed.
path_lookup() {
    local pl_rest pl_dir
    pl_found=''
    pl_seen=''
    pl_rest=${PATH-}
    while :; do
        pl_dir=${pl_rest%%:*}
        [[ -n $pl_dir ]] || pl_dir=.
        if [[ -f $pl_dir/$1 ]]; then
            if [[ -x $pl_dir/$1 ]]; then
                pl_found=$pl_dir/$1
                return 0
            fi
            pl_seen=$pl_dir/$1
        fi
        case $pl_rest in
            *:*) pl_rest=${pl_rest#*:} ;;
            *) break ;;
        esac
    done
    return 1
}

# locate_cli NAME: succeed when exec would start NAME, else stop with 127
# (nothing by that name) or 126 (not executable, or a directory). exec alone
# cannot say: `exec /missing` exits 126 on bash 3.2 and 4.0.
locate_cli() {
    local lc_name=$1 pl_found pl_seen
    case $lc_name in
        */*)
            [[ -e $lc_name ]] || fail 127 "$lc_name: not found"
            [[ ! -d $lc_name ]] || fail 126 "$lc_name: is a directory"
            [[ -x $lc_name ]] || fail 126 "$lc_name: not executable"
            return 0
            ;;
    esac
    path_lookup "$lc_name" && return 0
    [[ -z $pl_seen ]] || fail 126 "$lc_name: $pl_seen is not executable"
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

# append_arg_file: RUNNER_ARG_FILE's whole content, byte for byte (trailing
# newlines too), becomes one more argv word after RUNNER_ARGV. For a CLI
# that takes its prompt only as an argument (Cline's --json): read here, at
# exec time, so the word is never in the parameter file. Limits of an argv
# word: no NUL, at most 131071 bytes (Linux's MAX_ARG_STRLEN with the NUL),
# and it is visible in /proc/PID/cmdline. A file that breaks them stops
# with 125: the CLI never starts.
append_arg_file() {
    local af_file=$RUNNER_ARG_FILE af_word='' af_bytes
    [[ -f $af_file ]] ||
        fail 125 "RUNNER_ARG_FILE '$af_file' is not a regular file; the CLI was not started"
    # At most 131072 characters are read (a huge or sparse file is never
    # read whole): read succeeds when it stops at a NUL or after that many,
    # either way not an argument; at the end of the file it fails with
    # everything read.
    if IFS= read -r -d '' -n 131072 af_word <"$af_file"; then
        ((${#af_word} < 131072)) &&
            fail 125 "RUNNER_ARG_FILE '$af_file' holds a NUL byte (not possible in an argument); the CLI was not started"
        fail 125 "RUNNER_ARG_FILE '$af_file' is over the 131071 bytes one argument may hold; the CLI was not started"
    fi
    # Bytes, not characters: counted in the C locale, in a subshell so the
    # CLI's locale is untouched.
    af_bytes=$(LC_ALL=C && printf '%s' "${#af_word}")
    ((af_bytes <= 131071)) ||
        fail 125 "RUNNER_ARG_FILE '$af_file' is $af_bytes bytes, over the 131071 one argument may hold; the CLI was not started"
    RUNNER_ARGV[${#RUNNER_ARGV[@]}]=$af_word
}

# unset_env: remove from this process (about to become the CLI) the
# variables RUNNER_UNSET names: NAME, or every name starting with PREFIX for
# PREFIX*, except those given as !NAME. The host writes it from its table of
# the variables that load code into the harness's runtime or change its
# module resolution (NODE_OPTIONS, PYTHONPATH, LD_PRELOAD, ...): the image's
# values must not reach the CLI. Run before RUNNER_ENV is exported, so the
# session's own settings win; names were checked in check_params.
unset_env() {
    local ue_entry ue_name ue_keep=' ' ue_names IFS=' '
    for ue_entry in ${RUNNER_UNSET[@]+"${RUNNER_UNSET[@]}"}; do
        case $ue_entry in
            '!'*) ue_keep="$ue_keep${ue_entry#!} " ;;
        esac
    done
    for ue_entry in ${RUNNER_UNSET[@]+"${RUNNER_UNSET[@]}"}; do
        case $ue_entry in
            '!'*) continue ;;
            *'*')
                # bash 3.2 has ${!PREFIX@} only with the prefix written out:
                # eval a checked name.
                eval "ue_names=\${!${ue_entry%'*'}@}"
                ;;
            *) ue_names=$ue_entry ;;
        esac
        for ue_name in $ue_names; do
            case $ue_keep in
                *" $ue_name "*) continue ;;
            esac
            unset -v "$ue_name" 2>/dev/null ||
                fail 125 "cannot remove $ue_name from the CLI's environment (RUNNER_UNSET; read-only)"
        done
    done
}

# launch_cli MODE: turn this process into the CLI. exec failing after the
# checks (a bad binary) exits 126 by itself: execfail is off.
launch_cli() {
    unset_env
    apply_env
    locate_cli "${RUNNER_ARGV[0]}"
    open_streams "$1"
    if [[ -n ${RUNNER_ARG_FILE+set} ]]; then
        append_arg_file
    fi
    # The inherited POSIXLY_CORRECT (removed at the top to leave posix
    # mode) goes back to the CLI, set only now that no failure of this
    # script is left to report.
    if [[ -n $inherited_posixly_correct ]]; then
        export POSIXLY_CORRECT="$inherited_posixly_correct_value"
    fi
    exec "${RUNNER_ARGV[@]}"
}
