{ supervisor_entry_opts=$SHELLOPTS; \builtin set +o xtrace +o verbose; } 2>/dev/null
# process_supervisor.sh: run a harness command in a process group of its own,
# under a deadline, stop everything it started, and always write a receipt.
#
#   bash process_supervisor.sh --receipt FILE [--deadline S] [--grace S]
#        [--marker TOKEN] -- COMMAND [ARG]...
#
# Seconds are fixed-point decimals with 0.01 s resolution. COMMAND runs with
# stdin from /dev/null and NEMO_GYM_SUPERVISOR=TOKEN in its environment (and
# only there). The stop reaches the harness group, every descendant of a
# reached process, members of groups and sessions led by reached processes,
# and marked processes that were not already services when the stop began.
# Out of reach: a process that left the harness's tree, group and session
# AND lost the marker (env -i, or a rewritten environ) before a scan saw it.
#
# Receipt (JSON, written atomically): cleanup_confirmed, return_code (shell
# status, 128+N for a signal death, null when never run), error, timed_out.
# Exit: return_code when known; 124 when the deadline expired before launch;
# 128+N when signal N arrived before launch; 125 own failure; 2 usage.
#
# Started without a process group of its own, it runs again as a job in a
# new group; the first shell passes TERM/INT/HUP on, and its death (the
# provider KILLed its group) is a stop too, seen as EOF on a pipe only it
# writes to. Started with `&` by a shell without job control (INT ignored),
# it restarts in place with INT and QUIT at their defaults when
# `env --default-signal` or perl exists; otherwise INT cannot stop it.

# An inherited BASH_ENV file runs before this line, and aliases it defined
# would change how the rest of this file is parsed: drop them first.
\unalias -a 2>/dev/null
\shopt -u expand_aliases 2>/dev/null

marker_var={{ marker_var }}
default_grace_cs={{ default_grace_cs }}
# After KILL, how long to wait for the reached processes to disappear.
kill_wait_cs={{ kill_wait_cs }}
# Pause between scans while the graceful phase waits for processes to exit.
poll_seconds=0.01

say() {
    printf 'process_supervisor: %s\n' "$1" >&2
}

# Undo inherited shell state that would change how this script runs:
# SHELLOPTS/BASHOPTS from the environment, and whatever a BASH_ENV file set.
reset_shell_state() {
    builtin set +o errexit +o nounset +o noglob +o noclobber +o allexport
    builtin set +o xtrace +o verbose +o pipefail +o errtrace +o functrace
    builtin set +o posix +o monitor
    builtin shopt -u failglob nullglob nocaseglob dotglob 2>/dev/null
    # A function named like a builtin would shadow it; this script defines
    # its own functions after this point, so only the builtins need clearing.
    builtin unset -f builtin set unset shopt read printf kill wait trap exec \
        export cd command type local return exit shift case mv sleep rm 2>/dev/null
    builtin trap - EXIT ERR DEBUG
    IFS=$' \t\n'
    # GLOBIGNORE would hide /proc entries from the scan; the harness gets it back.
    saved_globignore_set=${GLOBIGNORE+x}
    saved_globignore=${GLOBIGNORE-}
    unset GLOBIGNORE
}

# ---------------------------------------------------------------- receipt

# Quote $1 as a JSON string into json_out, byte by byte, without forks.
json_quote() {
    local LC_ALL=C
    local s=$1 out='' c i code hex
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        case $c in
            '"') out+='\"' ;;
            "\\") out+="\\\\" ;;
            [\ -~]) out+=$c ;;
            *)
                # Control bytes as \u00XX; each byte of a non-ASCII character
                # as '?': the receipt stays valid JSON whatever the bytes.
                printf -v code '%d' "'$c"
                code=$((code & 255))
                if ((code < 128)); then
                    printf -v hex '%04x' "$code"
                    out+="\\u$hex"
                else
                    out+='?'
                fi
                ;;
        esac
    done
    json_out="\"$out\""
}

# Write the receipt atomically: a temporary file beside it, then a rename.
write_receipt() {
    local rc_json=null err_json=null tmp body
    [[ -n $receipt ]] || return 0
    [[ -n $rc ]] && rc_json=$rc
    if [[ -n $err ]]; then
        json_quote "$err"
        err_json=$json_out
    fi
    body="{\"cleanup_confirmed\": $confirmed, \"return_code\": $rc_json, \"error\": $err_json, \"timed_out\": $timed_out}"
    tmp="$receipt.tmp.$$.$RANDOM"
    # noclobber: the temporary name is created fresh, never followed.
    set -o noclobber
    if ! { printf '%s\n' "$body" >"$tmp"; } 2>/dev/null; then
        set +o noclobber
        say "cannot write the receipt ${receipt:0:200}"
        return 1
    fi
    set +o noclobber
    if ! mv -f -- "$tmp" "$receipt"; then
        rm -f -- "$tmp"
        say "cannot move the receipt into place at ${receipt:0:200}"
        return 1
    fi
    return 0
}

# Leave an error receipt (when the receipt path is known) and exit.
fail() {
    local status=$1
    err=$2
    say "$err"
    write_receipt
    exit "$status"
}

# ---------------------------------------------------------------- arguments

# Fixed-point seconds to centiseconds in seconds_cs; extra digits are cut.
parse_seconds() {
    local s=$1 int frac re='^[0-9]+(\.[0-9]+)?$'
    [[ $s =~ $re ]] || return 1
    int=${s%%.*}
    frac=
    [[ $s == *.* ]] && frac=${s#*.}
    frac="${frac}00"
    frac=${frac:0:2}
    # Strip leading zeros so the value is never read as octal; bound the size.
    while [[ ${#int} -gt 1 && $int == 0* ]]; do int=${int#0}; done
    # Up to 16 digits: centiseconds and deadlines stay far below 2^63.
    [[ ${#int} -le 16 ]] || return 1
    seconds_cs=$((10#$int * 100 + 10#$frac))
}

# A marker is 1 to 256 printable ASCII characters without blanks (bytes
# 0x21-0x7e): base64 and URL-safe tokens fit. Counted and matched in C.
valid_marker() {
    local LC_ALL=C
    [[ ${#1} -ge 1 && ${#1} -le 256 && $1 != *[![:graph:]]* ]]
}

usage_error() {
    fail 2 "usage: $1 (usage: process_supervisor.sh --receipt FILE [--deadline S] [--grace S] [--marker TOKEN] -- COMMAND [ARG]...)"
}

# Sets receipt, deadline_cs, grace_cs, token and args_used (options + "--").
parse_args() {
    local a name value i n=$#
    receipt=
    # First find the receipt, so that any usage error can leave a receipt.
    for ((i = 1; i <= n; i++)); do
        a=${!i}
        case $a in
            --) break ;;
            --receipt=*) receipt=${a#*=} && break ;;
            --receipt)
                if ((i < n)); then
                    i=$((i + 1))
                    receipt=${!i}
                fi
                break
                ;;
        esac
    done
    deadline_cs='' grace_cs='' token=''
    local seen_receipt='' seen_deadline='' seen_grace='' seen_marker=''
    args_used=0
    while (($# > 0)); do
        a=$1
        case $a in
            --)
                args_used=$((args_used + 1))
                shift
                break
                ;;
            --receipt | --deadline | --grace | --marker)
                (($# >= 2)) || usage_error "$a needs a value"
                name=$a value=$2
                shift 2
                args_used=$((args_used + 2))
                ;;
            --receipt=* | --deadline=* | --grace=* | --marker=*)
                name=${a%%=*} value=${a#*=}
                shift
                args_used=$((args_used + 1))
                ;;
            *) usage_error "unexpected argument '${a:0:200}' (the command goes after --)" ;;
        esac
        case $name in
            --receipt)
                [[ -z $seen_receipt ]] || usage_error "--receipt given twice"
                seen_receipt=1
                [[ -n $value ]] || usage_error "--receipt needs a file name"
                ;;
            --deadline)
                [[ -z $seen_deadline ]] || usage_error "--deadline given twice"
                seen_deadline=1
                parse_seconds "$value" || usage_error "--deadline '${value:0:200}' is not seconds like 12 or 0.5"
                deadline_cs=$seconds_cs
                ;;
            --grace)
                [[ -z $seen_grace ]] || usage_error "--grace given twice"
                seen_grace=1
                parse_seconds "$value" || usage_error "--grace '${value:0:200}' is not seconds like 5 or 0.5"
                grace_cs=$seconds_cs
                ;;
            --marker)
                [[ -z $seen_marker ]] || usage_error "--marker given twice"
                seen_marker=1
                valid_marker "$value" ||
                    usage_error "--marker '${value:0:200}' must be 1 to 256 printable ASCII characters, no space"
                token=$value
                ;;
        esac
    done
    [[ -n $seen_receipt ]] || usage_error "--receipt FILE is required"
    (($# > 0)) || usage_error "no COMMAND after --"
    [[ -n $1 ]] || usage_error "COMMAND is empty"
    [[ -n $grace_cs ]] || grace_cs=$default_grace_cs
}

# ---------------------------------------------------------------- /proc

# Parse /proc/PID/stat into the caller's array f: f[0] is the PID, f[1] the
# name, f[2] the state and so on, as in proc(5) minus one. The name may hold
# spaces, ')' and newlines: it ends at the LAST ')'. Nothing is evaluated.
read_stat_fields() {
    read -r -a f 2>/dev/null <"/proc/$1/stat" || return 1
    # With as many words as our own stat has, the name held no blank (a blank
    # adds words, a newline cuts the line short) and f is exact.
    [[ ${#f[@]} -eq $stat_fields ]] && return 0
    read_stat_whole "$1"
}

# The slow path, for names with blanks or newlines: read the file whole.
read_stat_whole() {
    local whole='' rest
    IFS= read -r -d '' whole 2>/dev/null <"/proc/$1/stat"
    rest=${whole##*)}
    [[ ${#rest} -lt ${#whole} ]] || return 1
    # shellcheck disable=SC2206 # after the last ')' come only digits, letters and '-': nothing to glob
    f=(${whole%% *} name $rest)
    [[ ${#f[@]} -eq $stat_fields ]]
}

# Read one process's stat into st_state st_pgid st_start,
# checking that the PID matches and every number is digits.
read_stat() {
    local f
    read_stat_fields "$1" || return 1
    [[ ${f[0]} == "$1" ]] || return 1
    case ${f[3]}/${f[4]}/${f[5]}/${f[21]} in
        *[!0-9/]* | /* | *//* | */) return 1 ;;
    esac
    st_state=${f[2]} st_pgid=${f[4]} st_start=${f[21]}
}

# Centiseconds since boot from /proc/uptime into now_cs.
read_now() {
    local up rest
    read -r up rest 2>/dev/null </proc/uptime
    up=${up/./}
    case $up in '' | *[!0-9]*) up=0 ;; esac
    now_cs=$((10#$up))
}

# Refuse to run without a /proc that describes this shell.
check_proc() {
    local f
    stat_fields=0
    read -r -a f 2>/dev/null </proc/self/stat || fail 125 "/proc is not readable: refusing to launch"
    stat_fields=${#f[@]}
    [[ ${f[0]} == "$$" && $stat_fields -ge 22 ]] ||
        fail 125 "/proc/self/stat does not describe this shell: refusing to launch"
    read_stat "$$" || fail 125 "/proc/$$/stat is not readable: refusing to launch"
    self_pgid=$st_pgid
    self_start=$st_start
    [[ -r /proc/uptime ]] || fail 125 "/proc/uptime is not readable: refusing to launch"
}

# ---------------------------------------------------------------- regrouping

# Started with `&` by a shell without job control, this shell ignores INT
# and QUIT, and bash cannot trap or reset a signal ignored at entry (the
# harness would inherit them ignored too). When /proc says so, start again in
# place (same PID) through a program that restores the default dispositions:
# env --default-signal (coreutils 8.31+), else perl. Without either, INT
# stays ignored: stop with TERM or HUP instead.
restore_signals_if_needed() {
    local key mask rest
    [[ -n $restored ]] && return 0
    mask=
    while read -r key mask rest; do
        [[ $key == SigIgn: ]] && break
        mask=
    done 2>/dev/null </proc/self/status
    case $mask in '' | *[!0-9a-fA-F]*) return 0 ;; esac
    # INT is bit 2 (0x2). QUIT (0x4) cannot tell: bash ignores it in itself.
    # `&` ignores both, so both are restored.
    ((0x${mask:${#mask}-1} & 2)) || return 0
    export SHFORGE_SUPERVISOR_RESTORED=1 SHFORGE_SUPERVISOR_SHELLOPTS="$entry_opts"
    [[ -n $regrouped ]] && export SHFORGE_SUPERVISOR_REGROUPED=1
    if env --default-signal=INT,QUIT true >/dev/null 2>&1; then
        exec env --default-signal=INT,QUIT "$BASH" --noprofile --norc "$0" "$@"
    fi
    if command -v perl >/dev/null 2>&1; then
        # shellcheck disable=SC2016 # perl code, not shell: no expansion wanted
        exec perl -e '$SIG{INT} = $SIG{QUIT} = "DEFAULT"; exec { $ARGV[0] } @ARGV; exit 127' \
            "$BASH" --noprofile --norc "$0" "$@"
    fi
    unset SHFORGE_SUPERVISOR_RESTORED SHFORGE_SUPERVISOR_SHELLOPTS SHFORGE_SUPERVISOR_REGROUPED
}

# Without a process group of its own, a provider's group KILL would end the
# supervisor before the receipt. Run again as a job in a new group; this shell
# only passes signals on and exits with the same status. It also holds the
# only write end of a pipe (the lifeline) whose read end the new copy gets:
# when this shell dies (the provider KILLed its group), the copy reads EOF
# and stops the harness as for TERM. The copy starts without monitor in an
# exported SHELLOPTS and learns the caller's options from a variable.
regroup_if_needed() {
    local child
    [[ $self_pgid == "$$" ]] && return 0
    if [[ -n $regrouped ]]; then
        fail 125 "could not get a process group of its own"
    fi
    # An anonymous pipe, open for reading and writing on fd 57.
    exec 57<> <(:) || fail 125 "cannot make a pipe for the lifeline"
    # bash < 4 keeps the substitution's own end open (as fd 63): no child
    # should inherit it.
    if [[ /proc/self/fd/63 -ef /proc/self/fd/57 ]]; then exec 63<&-; fi
    set -m
    (
        set +m
        SHFORGE_SUPERVISOR_REGROUPED=1 SHFORGE_SUPERVISOR_SHELLOPTS=$entry_opts \
            exec "$BASH" --noprofile --norc "$0" "$@"
    ) 58</proc/self/fd/57 57>&- &
    child=$!
    set +m
    child_start=
    read_stat "$child" && child_start=$st_start
    # Known before the traps exist: a TERM that lands between them would
    # otherwise be passed to no one and lost.
    forward_to=$child
    trap 'forward TERM' TERM
    trap 'forward INT' INT
    trap 'forward HUP' HUP
    wait_rc=
    while [[ -z $wait_rc ]]; do
        wait_job "$child" "$child_start"
    done
    exit "$wait_rc"
}

# Whether PID $1 is still the process that started at tick $2, not yet dead.
job_running() {
    read_stat "$1" && [[ $st_start == "$2" && $st_state != Z && $st_state != X ]]
}

# shellcheck disable=SC2317 # runs from the TERM/INT/HUP traps
forward() {
    got_signal=1
    kill -s "$1" "$forward_to" 2>/dev/null
}

# Wait for job $1 (started at tick $2). wait_rc is its status, or empty when
# a trapped signal interrupted the wait while the job still runs.
wait_job() {
    local st again
    got_signal=
    # bash reports a job killed by a signal ("Killed", "Terminated") on
    # stderr when it reaps it: not the supervisor's message to give.
    wait "$1" 2>/dev/null
    st=$?
    # Not only when got_signal says so: bash 4.4 to 5.3 remember a trapped
    # signal that lands after one `wait` returns and before the next builtin,
    # run its trap then, and make the next `wait` return 128+N at once while
    # the job still runs. A status above 128 is the job's only once it ended.
    if [[ -z $got_signal ]] && ((st <= 128)); then
        wait_rc=$st
        return 0
    fi
    # A trapped signal arrived: it either interrupted the wait or came just
    # after the job ended (and its status was already collected).
    if job_running "$1" "$2"; then
        wait_rc=
        return 0
    fi
    wait "$1" 2>/dev/null
    again=$?
    [[ $again == 127 ]] && again=$st
    wait_rc=$again
}

# ---------------------------------------------------------------- the harness

# shellcheck disable=SC2317 # runs from the signal traps
on_signal() {
    got_signal=1
    if [[ -z $stop_reason ]]; then
        stop_reason=$1
        # bash runs a trap between commands: one that lands just before
        # `wait` starts would leave the wait blocked on a harness that may
        # never end. A second signal, a moment later, wakes it for sure.
        (sleep 0.05 && kill -s USR2 "$sup_pid") </dev/null >/dev/null 2>&1 &
        kicker_pid=$!
        kicker_start=''
        read_stat "$kicker_pid" && kicker_start=$st_start
    else
        hurry=1
    fi
}

# Runs in the harness's own job: the marker goes into this environment only.
harness_exec() {
    trap - TERM INT HUP ALRM USR1 USR2
    [[ -n $saved_globignore_set ]] && GLOBIGNORE=$saved_globignore
    export "$marker_var=$token"
    case ${cmd[0]} in
        */*) [[ -e ${cmd[0]} ]] || {
            say "${cmd[0]}: not found"
            exit 127
        } ;;
        *) type -P -- "${cmd[0]}" >/dev/null || {
            say "${cmd[0]}: command not found"
            exit 127
        } ;;
    esac
    restore_entry_options
    exec -- "${cmd[@]}"
}

# Give the harness the caller's shell options back, in this subshell just
# before exec: an exported SHELLOPTS then carries exactly what the caller's
# did, none of this script's changes (monitor above all: a bash harness would
# run with job control). Option names never contain glob characters.
restore_entry_options() {
    local o IFS=:
    set +o monitor
    # shellcheck disable=SC2086 # split on ':' on purpose
    for o in $SHELLOPTS; do
        case :$entry_opts: in *":$o:"*) ;; *) set +o "$o" 2>/dev/null ;; esac
    done
    # shellcheck disable=SC2086 # split on ':' on purpose
    for o in $entry_opts; do
        case $o in xtrace | verbose) continue ;; esac
        case :$SHELLOPTS: in *":$o:"*) ;; *) set -o "$o" 2>/dev/null ;; esac
    done
    # Last, so that at most the exec itself is traced.
    case :$entry_opts: in *:verbose:*) set -o verbose ;; esac
    case :$entry_opts: in *:xtrace:*) set -o xtrace ;; esac
}

launch() {
    set -m
    (harness_exec) </dev/null &
    hpid=$!
    set +m
    # The group's identity: its leader's start time, or no leader at all.
    if read_stat "$hpid"; then
        rs[hpid]=$st_start
        launch_tick=$st_start
    else
        rs[hpid]=gone
        launch_tick=$self_start
    fi
    harness_start=${rs[hpid]}
    harness_group=$hpid
}

# Collect the harness's status once it has ended, before this shell forks
# again: a child of ours that got the same PID would make bash forget it.
collect_harness() {
    [[ -n $rc ]] && return 0
    job_running "$hpid" "$harness_start" && return 0
    wait_rc=''
    while [[ -z $wait_rc ]]; do
        wait_job "$hpid" "$harness_start"
    done
    rc=$wait_rc
}

# In the regrouped copy: a small job blocked on the lifeline (fd 58) until
# the first shell, the only writer, is gone; then it sends USR1, a stop like
# TERM. Started before the harness (so no scan reaches it) and nobody else
# keeps fd 58: the harness and the other helpers never see the pipe.
start_lifeline() {
    [[ -n $regrouped ]] || return 0
    {
        : <&58
    } 2>/dev/null || return 0
    (
        while IFS= read -r -d '' -u 58 _; do :; done
        kill -s USR1 "$sup_pid"
    ) </dev/null >/dev/null 2>&1 &
    lifeline_pid=$!
    lifeline_start=
    read_stat "$lifeline_pid" && lifeline_start=$st_start
    # Out of the job table: bash would report its KILL as "Killed".
    disown "$lifeline_pid" 2>/dev/null
    exec 58<&-
}

# Once a stop is under way the lifeline has done its job: KILL it (a TERM
# that lands before the new job has reset the inherited traps is lost).
kill_lifeline() {
    [[ -n $lifeline_pid && -z $lifeline_killed ]] || return 0
    lifeline_killed=1
    if job_running "$lifeline_pid" "$lifeline_start"; then
        kill -s KILL "$lifeline_pid" 2>/dev/null
    fi
}

# Before exit: the lifeline job must be dead. Disowned, it is reaped by
# bash as any child; killed at the start of the stop, it is gone by now.
end_lifeline() {
    local i
    [[ -n $lifeline_pid ]] || return 0
    kill_lifeline
    for ((i = 0; i < 100; i++)); do
        job_running "$lifeline_pid" "$lifeline_start" || break
        sleep 0.01
    done
    lifeline_pid=''
}

# Let the wake-up helper of on_signal finish, so it does not outlive us.
end_kicker() {
    [[ -n $kicker_pid ]] || return 0
    while job_running "$kicker_pid" "$kicker_start"; do
        wait "$kicker_pid" 2>/dev/null
        [[ $? == 127 ]] && break
    done
    kicker_pid=''
}

# A timer job for the deadline: no polling, one SIGALRM when it expires.
# A group of its own, so that one KILL ends it and its sleep together (a
# TERM trap in the job could be set too late: a harness that exits at once
# left the timer and its sleep running). Disowned: bash would report the
# KILL as "Killed".
start_timer() {
    local secs
    [[ -n $deadline_cs ]] || return 0
    printf -v secs '%d.%02d' "$((deadline_cs / 100))" "$((deadline_cs % 100))"
    set -m
    (
        sleep "$secs" && kill -s ALRM "$sup_pid"
    ) </dev/null >/dev/null 2>&1 &
    timer_pid=$!
    set +m
    disown "$timer_pid" 2>/dev/null
    timer_start=
    read_stat "$timer_pid" && timer_start=$st_start
}

# End the timer's group (the timer and its sleep). Only while its leader is
# still the timer: once it has fired, its PID may belong to someone else.
# No wait: bash reaps the disowned job by itself.
stop_timer() {
    [[ -n $timer_pid ]] || return 0
    if [[ $stop_reason != ALRM ]] && read_stat "$timer_pid" && [[ $st_start == "$timer_start" ]]; then
        kill -s KILL -- "-$timer_pid" 2>/dev/null
    fi
    timer_pid=''
}

# ---------------------------------------------------------------- scanning

# One pass over /proc: every process started since the harness (nothing
# older can be reached) goes into the candidate table c_*.
scan() {
    local p pid f n=0
    c_pid=() c_ppid=() c_pgid=() c_sid=() c_start=() c_state=()
    for p in /proc/[0-9]*; do
        pid=${p#/proc/}
        read -r -a f 2>/dev/null <"$p/stat" || continue
        if [[ ${#f[@]} -ne $stat_fields ]]; then
            read_stat_whole "$pid" || continue
        fi
        [[ ${f[0]} == "$pid" ]] || continue
        case ${f[3]}/${f[4]}/${f[5]}/${f[21]} in
            *[!0-9/]* | /* | *//* | */) continue ;;
        esac
        ((10#${f[21]} >= launch_tick)) || continue
        c_pid[n]=$pid c_ppid[n]=${f[3]} c_pgid[n]=${f[4]} c_sid[n]=${f[5]}
        c_start[n]=${f[21]} c_state[n]=${f[2]}
        n=$((n + 1))
    done
    c_n=$n
}

# Whether process $1 (started at $2) holds the marker. Cached per pid+start,
# but only once something was read: in the middle of an exec the environment
# reads as empty for a moment, and such a process must be looked at again.
is_marked() {
    local kv hit=0 any=''
    if [[ ${mk[$1]%:*} == "$2" ]]; then
        [[ ${mk[$1]##*:} == 1 ]]
        return
    fi
    while IFS= read -r -d '' kv; do
        any=1
        if [[ $kv == "$marker_entry" ]]; then
            hit=1
            break
        fi
    done 2>/dev/null <"/proc/$1/environ"
    [[ -n $any ]] && mk[$1]=$2:$hit
    [[ $hit == 1 ]]
}

# Decide who is reached, from the last scan, to a fixed point. With $1 = 1
# (the scan that starts the stop) marked strangers are recorded as services.
# Sets live (reached and alive) and groups (reached groups with members).
classify() {
    local record=$1 i pid start changed state
    added=0
    # PID reuse: a reached or preserved PID now held by a younger process is
    # not the process that was reached; forget it (and its group/session).
    for ((i = 0; i < c_n; i++)); do
        pid=${c_pid[i]} start=${c_start[i]}
        if [[ -n ${rs[pid]+x} && ${rs[pid]} != "$start" ]]; then unset "rs[$pid]"; fi
        if [[ -n ${pv[pid]+x} && ${pv[pid]} != "$start" ]]; then unset "pv[$pid]"; fi
    done
    changed=1
    while [[ -n $changed ]]; do
        changed=
        for ((i = 0; i < c_n; i++)); do
            pid=${c_pid[i]}
            [[ -n ${rs[pid]+x} || -n ${pv[pid]+x} ]] && continue
            if [[ -n ${rs[c_ppid[i]]+x} || -n ${rs[c_pgid[i]]+x} || -n ${rs[c_sid[i]]+x} ]]; then
                rs[pid]=${c_start[i]}
                added=$((added + 1))
                changed=1
            fi
        done
        [[ -n $changed ]] && continue
        # The marker, for what the tree, groups and sessions did not reach.
        for ((i = 0; i < c_n; i++)); do
            pid=${c_pid[i]}
            [[ -n ${rs[pid]+x} || -n ${pv[pid]+x} ]] && continue
            state=${c_state[i]}
            [[ $state == Z || $state == X ]] && continue
            is_marked "$pid" "${c_start[i]}" || continue
            if [[ $record == 1 || -n ${pv[c_ppid[i]]+x} ]]; then
                # A service (or a child of one): preserved.
                pv[pid]=${c_start[i]}
            else
                rs[pid]=${c_start[i]}
                added=$((added + 1))
            fi
            changed=1
        done
    done
    live=() groups=()
    local -a seen
    for ((i = 0; i < c_n; i++)); do
        pid=${c_pid[i]}
        [[ -n ${rs[pid]+x} ]] || continue
        state=${c_state[i]}
        [[ $state == Z || $state == X ]] && continue
        live+=("$pid")
        if [[ -n ${rs[c_pgid[i]]+x} && -z ${seen[c_pgid[i]]} ]]; then
            seen[c_pgid[i]]=1
            groups+=("${c_pgid[i]}")
        fi
    done
    if [[ -n ${rs[harness_group]+x} && -z ${seen[harness_group]} ]]; then
        groups+=("$harness_group")
    fi
}

# ---------------------------------------------------------------- signalling

# Signal $1 to each reached PID given, after checking its start time again.
signal_pids() {
    local sig=$1 pid ok=()
    shift
    for pid in "$@"; do
        read_stat "$pid" || continue
        [[ $st_start == "${rs[pid]}" ]] && ok+=("$pid")
    done
    ((${#ok[@]} > 0)) && kill -s "$sig" "${ok[@]}" 2>/dev/null
    return 0
}

# Signal $1 to each reached group, only while its ID still belongs to the
# recorded leader (same start time) or to no process at all. A group seen
# empty is retired for good: its ID is free to be reused from then on.
signal_groups() {
    local sig=$1 g
    shift
    for g in "$@"; do
        [[ -n ${empty_groups[g]} ]] && continue
        if read_stat "$g"; then
            [[ $st_start == "${rs[g]}" ]] || continue
        elif ! kill -s 0 -- "-$g" 2>/dev/null; then
            empty_groups[g]=1
            continue
        fi
        kill -s "$sig" -- "-$g" 2>/dev/null
    done
    return 0
}

signal_reached() {
    signal_groups "$1" ${groups[@]+"${groups[@]}"}
    signal_pids "$1" ${live[@]+"${live[@]}"}
}

# The stop: freeze the harness group, record services, TERM then CONT and
# rescan until nothing reached is alive or the grace period ends; then
# STOP, rescan to a fixed point, KILL, CONT and verify, within a bound.
stop_everything() {
    local grace_end kill_end pid g pass
    local -a termed gtermed new
    stop_timer
    kill_lifeline
    groups=("$harness_group") live=()
    signal_groups STOP "$harness_group"
    scan
    classify 1
    read_now
    grace_end=$((now_cs + grace_cs))
    while :; do
        if ((${#live[@]} == 0)); then
            confirmed=true
            return 0
        fi
        new=()
        for pid in "${live[@]}"; do
            [[ ${termed[pid]} == "${rs[pid]}" ]] && continue
            termed[pid]=${rs[pid]}
            new+=("$pid")
        done
        for g in ${groups[@]+"${groups[@]}"}; do
            [[ ${gtermed[g]} == "${rs[g]}" ]] && continue
            gtermed[g]=${rs[g]}
            signal_groups TERM "$g"
        done
        ((${#new[@]} > 0)) && signal_pids TERM "${new[@]}"
        signal_reached CONT
        read_now
        ((now_cs >= grace_end)) && break
        [[ -n $hurry ]] && break
        collect_harness
        sleep "$poll_seconds"
        scan
        classify 0
    done

    # Forced: nothing reached may run while the last of them are found.
    signal_reached STOP
    for ((pass = 0; pass < 100; pass++)); do
        scan
        classify 0
        signal_reached STOP
        ((added == 0)) && break
    done
    signal_reached KILL
    signal_reached CONT
    read_now
    kill_end=$((now_cs + kill_wait_cs))
    while :; do
        scan
        classify 0
        if ((${#live[@]} == 0)); then
            confirmed=true
            return 0
        fi
        signal_reached KILL
        signal_reached CONT
        read_now
        if ((now_cs >= kill_end)); then
            confirmed=false
            say "cleanup not confirmed: still alive after KILL: ${live[*]}"
            return 1
        fi
        collect_harness
        sleep 0.01
    done
}

# ---------------------------------------------------------------- main

signal_status() {
    case $1 in
        HUP) sig_status=129 ;;
        INT) sig_status=130 ;;
        ALRM) sig_status=142 ;;
        *) sig_status=143 ;;
    esac
}

main() {
    reset_shell_state
    regrouped=${SHFORGE_SUPERVISOR_REGROUPED-}
    restored=${SHFORGE_SUPERVISOR_RESTORED-}
    # The caller's options: from the first line, or from the shell that
    # started this copy (whose own SHELLOPTS no longer shows them).
    entry_opts=$supervisor_entry_opts
    if [[ -n $regrouped || -n $restored ]]; then
        entry_opts=${SHFORGE_SUPERVISOR_SHELLOPTS-}
    fi
    unset SHFORGE_SUPERVISOR_REGROUPED SHFORGE_SUPERVISOR_RESTORED SHFORGE_SUPERVISOR_SHELLOPTS
    confirmed=true rc='' err='' timed_out=false
    stop_reason='' hurry='' got_signal='' timer_pid='' kicker_pid='' lifeline_pid='' lifeline_killed=''
    rs=() pv=() mk=() empty_groups=()
    parse_args "$@"
    check_proc
    restore_signals_if_needed "$@"
    regroup_if_needed "$@"
    shift "$args_used"
    cmd=("$@")
    sup_pid=$$
    if [[ -z $token ]]; then
        local uuid=''
        read -r uuid 2>/dev/null </proc/sys/kernel/random/uuid
        token="sv-$$-$self_start-$RANDOM$RANDOM-$uuid"
    fi
    marker_entry="$marker_var=$token"

    trap 'on_signal TERM' TERM
    trap 'on_signal INT' INT
    trap 'on_signal HUP' HUP
    trap 'on_signal ALRM' ALRM
    trap 'on_signal LOST' USR1
    trap 'got_signal=1' USR2
    start_lifeline

    if [[ -n $deadline_cs ]] && ((deadline_cs < 1)); then
        timed_out=true
        end_lifeline
        write_receipt || exit 125
        exit 124
    fi
    if [[ -n $stop_reason ]]; then
        signal_status "$stop_reason"
        end_kicker
        end_lifeline
        write_receipt || exit 125
        exit "$sig_status"
    fi

    start_timer
    launch
    while :; do
        wait_job "$hpid" "$harness_start"
        if [[ -n $wait_rc ]]; then
            rc=$wait_rc
            break
        fi
        [[ -n $stop_reason ]] && break
    done
    [[ $stop_reason == ALRM ]] && timed_out=true
    stop_everything
    # Unless it is still alive (a KILL that did not take effect in time).
    collect_harness
    stop_timer
    end_kicker
    end_lifeline
    if [[ -z $rc ]]; then
        err="the harness could not be stopped"
        write_receipt
        exit 125
    fi
    write_receipt || exit 125
    exit "$rc"
}

main "$@"

