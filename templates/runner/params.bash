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
            RUNNER_ARGV | RUNNER_ENV | RUNNER_UNSET)
                [[ $cp_kind == array ]] || fail 125 "$cp_name must be an array"
                ;;
            RUNNER_MODE | RUNNER_CWD | RUNNER_PATH_PREFIX | RUNNER_STDIN | RUNNER_ARG_FILE | RUNNER_STDOUT | RUNNER_STDERR | RUNNER_EVENTS | RUNNER_SETUP)
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
    for cp_name in RUNNER_CWD RUNNER_STDIN RUNNER_ARG_FILE RUNNER_STDOUT RUNNER_STDERR RUNNER_EVENTS; do
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
    cp_i=0
    for cp_entry in ${RUNNER_UNSET[@]+"${RUNNER_UNSET[@]}"}; do
        # NAME, !NAME, or PREFIX* starting with a capital: the runner's own
        # variables are lower case, and no entry may reach a RUNNER_ name.
        case $cp_entry in
            '!'*) cp_name=${cp_entry#!} ;;
            [ABCDEFGHIJKLMNOPQRSTUVWXYZ]*'*') cp_name=${cp_entry%'*'} ;;
            *) cp_name=$cp_entry ;;
        esac
        if ! valid_name "$cp_name" || [[ $cp_name == RUNNER_* || $cp_entry == *'*' && RUNNER_ == "$cp_name"* ]]; then
            fail 125 "RUNNER_UNSET[$cp_i] is not NAME, !NAME or PREFIX* (a capital first) outside RUNNER_*"
        fi
        cp_i=$((cp_i + 1))
    done
}
