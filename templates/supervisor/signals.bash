# ---------------------------------------------------------------- signalling

# Signal $1 to each reached PID given, after checking its start time again
# (the list may be older than the last exit: the PID may be someone else's).
# The check costs a read per process (seconds in a storm) and is skipped when
# it cannot fail: the list comes from the last scan, with nothing waited for
# since, and the PID window still holds (no PID handed out since the launch
# can have been handed out again, and ns_last_pid never went back).
signal_pids() {
    local sig=$1 pid ok=()
    shift
    if [[ -n $live_fresh ]]; then
        pid_window_floor
        if ((pw_floor > 0)); then
            kill -s "$sig" "$@" 2>/dev/null
            return 0
        fi
    fi
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

# Whether the first reached process of the last scan still runs (signal 0,
# then its stat: a zombie or a recycled PID has ended). While it runs, the
# stop cannot be over before the grace period is: nothing else needs a look.
reached_alive() {
    local pid
    for pid in ${live[@]+"${live[@]}"}; do
        kill -s 0 "$pid" 2>/dev/null || return 1
        read_stat "$pid" && [[ $st_start == "${rs[pid]}" && $st_state != Z ]] || return 1
        return 0
    done
    return 1
}

# Groups first (one signal stops a whole group at once), but for CONT the
# groups last: what runs again competes with the checks.
signal_reached() {
    if [[ $1 == CONT ]]; then
        signal_pids "$1" ${live[@]+"${live[@]}"}
        signal_groups "$1" ${groups[@]+"${groups[@]}"}
        return 0
    fi
    signal_groups "$1" ${groups[@]+"${groups[@]}"}
    signal_pids "$1" ${live[@]+"${live[@]}"}
}

# The stop, in four phases: freeze and TERM, the graceful wait, the forced
# freeze to a fixed point, then KILL until nothing reached is alive (within a
# bound). Each phase that can end the stop sets `confirmed` and returns 0.
# Nothing here forks: it runs to the end and the receipt is written even when
# the sandbox has no process slot left.
stop_everything() {
    stop_freeze_and_term
    stop_graceful_wait && return 0
    stop_freeze_to_fixed_point
    stop_kill_until_gone
}

# Phase 1: stop the harness group (and freeze the cgroup), find everything
# reached, record the services, and TERM the cgroup's members once while
# frozen (a fork during the grace period is left for the KILL).
stop_freeze_and_term() {
    stop_timer
    kill_lifeline
    groups=("$harness_group") live=()
    cgroup_freeze 1
    signal_groups STOP "$harness_group"
    scan
    classify 1
    cgroup_release_services
    cgroup_signal TERM
    read_now
    ((cg_signalled > 0)) && stop_term_cs=$now_cs
    # The grace period counts from here, and so does grace_s.
    stop_grace_cs=$now_cs
}

# Phase 2: TERM then CONT (and thaw) each reached process and group once,
# and wait until nothing reached is alive (0: confirmed) or the grace period
# ends or a second signal hurries the stop (1).
stop_graceful_wait() {
    local grace_end=$((stop_grace_cs + grace_cs)) pid g
    local -a termed gtermed new
    while :; do
        if ((${#live[@]} == 0 && undecided == 0)) && cgroup_empty; then
            read_now
            stop_graceful_end_cs=$now_cs
            confirmed=true
            return 0
        fi
        new=()
        for pid in ${live[@]+"${live[@]}"}; do
            [[ ${termed[pid]} == "${rs[pid]}" ]] && continue
            termed[pid]=${rs[pid]}
            new+=("$pid")
        done
        for g in ${groups[@]+"${groups[@]}"}; do
            [[ ${gtermed[g]} == "${rs[g]}" ]] && continue
            gtermed[g]=${rs[g]}
            signal_groups TERM "$g"
        done
        if ((${#new[@]} > 0)); then
            signal_pids TERM "${new[@]}"
            stop_n_term=$((stop_n_term + ${#new[@]}))
            if [[ -z $stop_term_cs ]]; then
                read_now
                stop_term_cs=$now_cs
            fi
        fi
        signal_reached CONT
        cgroup_freeze 0
        read_now
        ((now_cs >= grace_end)) && break
        [[ -n $hurry ]] && break
        collect_harness
        # Until a reached process is gone, look at nothing else: a scan
        # competes for the CPU with everything still running (a fork storm
        # starves it for seconds), a check of one known PID hardly does.
        while stop_pending && ((now_cs < grace_end)) && [[ -z $hurry ]]; do
            live_fresh=''
            nap "$poll_seconds"
            # A fork that spans the STOP and the CONT above hands the STOP
            # to the new child after the CONT (Linux gives a group signal
            # that lands during fork to the child too). Measured with STOP,
            # TERM and CONT sent back to back to a shell that forks all the
            # time: 9 stops in 200 left a child stopped and its parent
            # waiting on it; a second CONT freed every one. A large process
            # (node) forks for milliseconds: CONT the groups at every poll.
            signal_groups CONT ${groups[@]+"${groups[@]}"}
            collect_harness
            read_now
        done
        ((now_cs >= grace_end)) && break
        # An exec takes a moment: look at an undecided process again after one.
        ((undecided > 0)) && nap "$poll_seconds"
        scan
        classify 0
    done
    stop_graceful_end_cs=$now_cs
    return 1
}

# Phase 3: nothing reached may run while the last of them are found. The
# groups and the cgroup stop at once; single processes on the first pass,
# from a fresh scan (the list from before the wait would need a re-read of
# every PID first).
stop_freeze_to_fixed_point() {
    local pass
    cgroup_freeze 1
    signal_groups STOP ${groups[@]+"${groups[@]}"}
    for ((pass = 0; pass < 100; pass++)); do
        scan
        classify 0
        signal_reached STOP
        # Done when a scan made after every reached process was stopped
        # finds nothing new (pass 0's scan came before the single STOPs).
        ((added == 0 && undecided == 0 && pass > 0)) && break
        ((undecided > 0)) && nap "$poll_seconds"
    done
}

# Phase 4: KILL and CONT (and thaw) everything reached, then scan again until
# nothing is alive (0: confirmed) or kill_wait_cs has passed (1: the receipt
# says what is still alive).
stop_kill_until_gone() {
    local kill_end
    # note_kill counts each reached process once, in this phase's `killed`.
    local -a killed
    stop_kill_all
    read_now
    kill_end=$((now_cs + kill_wait_cs))
    while :; do
        scan
        classify 0
        if ((${#live[@]} == 0 && undecided == 0)) && cgroup_empty; then
            confirmed=true
            return 0
        fi
        stop_kill_all
        read_now
        if ((now_cs >= kill_end)); then
            confirmed=false
            stop_note="cleanup not confirmed: still alive after KILL: ${live[*]}"
            [[ -n $cg ]] && cgroup_event 'populated 1' && stop_note+=" (and the cgroup is not empty)"
            return 1
        fi
        collect_harness
        nap 0.01
    done
}

# KILL everything reached (the cgroup at once), then CONT and thaw: a
# stopped process dies only once it runs.
stop_kill_all() {
    note_kill
    cgroup_kill
    signal_reached KILL
    signal_reached CONT
    cgroup_freeze 0
}

# The forced phase is about to KILL: its time (the first time) and the
# reached processes that get KILL for the first time, counted.
note_kill() {
    local pid
    if [[ -z $stop_kill_cs ]]; then
        read_now
        stop_kill_cs=$now_cs
    fi
    for pid in ${live[@]+"${live[@]}"}; do
        [[ ${killed[pid]} == "${rs[pid]}" ]] && continue
        killed[pid]=${rs[pid]}
        stop_n_kill=$((stop_n_kill + 1))
    done
}

# Zombies the harness left, from the stop's last scan: reached processes in
# state Z that this shell does not reap itself (their parent is gone and
# PID 1, or a subreaper, does not wait for them), into zb_* for the
# receipt, at most 100. Each is read again just before: one a reaper took
# meanwhile is not listed. No wait for a slow reaper: the stop keeps its
# pace (a pause here changed how a harness that forks all the time ended).
note_zombies() {
    local i pid
    zb_pid=() zb_ppid=() zb_start=()
    for ((i = 0; i < c_n && ${#zb_pid[@]} < 100; i++)); do
        pid=${c_pid[i]}
        [[ ${c_state[i]} == Z && ${rs[pid]-} == "${c_start[i]}" && ${c_ppid[i]} != "$self_pid" ]] || continue
        if read_stat "$pid" && [[ $st_state == Z && $st_start == "${c_start[i]}" ]]; then
            zb_pid+=("$pid") zb_ppid+=("${c_ppid[i]}") zb_start+=("${c_start[i]}")
        fi
    done
}

# Whether the graceful wait has nothing new to look at: the first reached
# process still runs, or none is left but the cgroup still has members.
# (An undecided process is looked at again by the next scan.)
stop_pending() {
    reached_alive && return 0
    ((${#live[@]} == 0 && undecided == 0)) && ! cgroup_empty
}
