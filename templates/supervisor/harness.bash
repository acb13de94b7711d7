# ---------------------------------------------------------------- the harness

# shellcheck disable=SC2317 # runs from the signal traps
on_signal() {
    got_signal=1
    # bash 4.2 was seen running this trap a second time from inside itself
    # (from tell_helper's printf) for one USR1 the lifeline sent once: a
    # nested run is that signal again, not a second request to hurry.
    [[ -n $in_on_signal ]] && return 0
    in_on_signal=1
    if [[ -z $stop_reason ]]; then
        stop_reason=$1
        # bash runs a trap between commands: one that lands just before
        # `wait` starts would leave the wait blocked on a harness that may
        # never end (bash 4.4+ returns from that wait, older ones do not).
        # The stop helper, already running, sends USR2 until told something
        # else: no fork here, the sandbox may have no process slot left.
        tell_helper kick
    else
        hurry=1
    fi
    in_on_signal=''
}

# Runs in the harness's own job: the marker goes into this environment only.
harness_exec() {
    trap - TERM INT HUP ALRM USR1 USR2 PIPE
    close_own_fds
    join_cgroup
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
    pid_window_open
    read_now
    launch_cs=$now_cs
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

# In the regrouped job: a small job blocked on the lifeline (fd 58) until
# the first shell, the only writer, is gone; then it sends USR1, a stop like
# TERM. Started before the harness (so no scan reaches it) and nobody else
# keeps fd 58: the harness and the other helpers never see the pipe.
start_lifeline() {
    [[ -n $regrouped ]] || return 0
    {
        : <&58
    } 2>/dev/null || return 0
    (
        close_own_fds
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

# Wait, for up to 1 s, until the job $1 (started at $2) and, when $4 is
# set, the process $3 (started at $4) are gone or zombies. A KILLed process
# is gone within moments: look again soon.
wait_gone() {
    local end
    read_now
    end=$((now_cs + 100))
    while job_running "$1" "$2" || { [[ -n ${4-} ]] && job_running "$3" "$4"; }; do
        nap 0.001
        read_now
        ((now_cs < end)) || break
    done
}

# Before exit: the lifeline job must be dead. Disowned, it is reaped by
# bash as any child; killed at the start of the stop, it is gone by now.
end_lifeline() {
    [[ -n $lifeline_pid ]] || return 0
    kill_lifeline
    wait_gone "$lifeline_pid" "$lifeline_start"
    lifeline_pid=''
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
        close_own_fds
        "$sleep_bin" "$secs" && kill -s ALRM "$sup_pid"
    ) </dev/null >/dev/null 2>&1 &
    timer_pid=$!
    set +m
    disown "$timer_pid" 2>/dev/null
    timer_start=
    read_stat "$timer_pid" && timer_start=$st_start
}

# End the timer's group (the timer and its sleep) with one KILL. Only while
# its leader is still the timer: once it has fired, its PID may belong to
# someone else. Its sleep is noted first (the leader's children, Linux 3.5+;
# without that file only the leader is watched) for end_timer.
stop_timer() {
    [[ -n $timer_pid && -z $timer_killed ]] || return 0
    timer_killed=1 timer_child='' timer_child_start=''
    job_running "$timer_pid" "$timer_start" || return 0
    read -r timer_child _ 2>/dev/null <"/proc/$timer_pid/task/$timer_pid/children"
    if [[ -n $timer_child ]] && read_stat "$timer_child"; then
        timer_child_start=$st_start
    fi
    [[ $stop_reason == ALRM ]] || kill -s KILL -- "-$timer_pid" 2>/dev/null
}

# Before exit: the timer and its sleep must be gone (reaped, or zombies).
# Disowned, the timer is reaped by bash as any child; but a KILLed process
# shows neither the signal nor its exit for a moment after it took the KILL,
# and one was once listed alive after the supervisor had ended.
end_timer() {
    [[ -n $timer_pid ]] || return 0
    stop_timer
    wait_gone "$timer_pid" "$timer_start" "$timer_child" "$timer_child_start"
    timer_pid=''
}
