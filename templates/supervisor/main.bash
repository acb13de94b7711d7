# ---------------------------------------------------------------- main

signal_status() {
    case $1 in
        HUP) sig_status=129 ;;
        INT) sig_status=130 ;;
        ALRM) sig_status=142 ;;
        *) sig_status=143 ;;
    esac
}

# The globals every part reads (see the table at the top), before anything
# can fail: fail and finish report from them.
init_globals() {
    confirmed=true rc='' err='' timed_out=false containment=proc
    stop_reason='' hurry='' in_on_signal='' got_signal='' timer_pid='' timer_killed='' lifeline_pid='' lifeline_killed=''
    helper_pid='' mv_bin='' rm_bin='' cg='' receipt='' receipt_tmp='' pw_last='' pw_disabled='' scan_lost=''
    rs=() pv=() mk=() me=() empty_groups=() sv_argv0=()
    launch_cs='' stop_began_cs='' stop_term_cs='' stop_kill_cs='' stop_end_cs=''
    stop_graceful_end_cs='' stop_grace_cs='' stop_n_term=0 stop_n_kill=0 stop_by_itself=''
    zb_pid=() zb_ppid=() zb_start=()
    undecided=0 self_pid='' subst_pids=() subst_starts=()
    bash_major=${BASH_VERSINFO[0]}
    # How often the stop helper repeats its wake-up: bash 3.2's `read -t`
    # takes whole seconds only.
    kick_wait=1
    ((bash_major >= 4)) && kick_wait=0.05
    # bash before 4.4 runs a trap from inside its signal handler when the
    # signal lands in `read` (and `wait` jumps out of the handler): a second
    # signal then runs trap code inside the first one's, and the shell
    # crashes (SIGSEGV, SIGABRT in malloc) or runs on from a corrupted state.
    # Measured with bursts of 600 TERM/INT/HUP: 3.2.48, 4.0 and 4.2 died
    # without a receipt in about a third of the runs. bash 4.4 never crashed,
    # but can lose the stop for good: a SIGINT that lands in `wait` just as
    # another one is handled leaves its own SIGINT handler saved as the one
    # to restore, which then sends itself SIGINT forever (seen spinning in
    # getpid + kill(self, SIGINT), 5 hung runs of 680 on a loaded machine).
    # Before 5.0 the first stop signal (or the first one passed on) ignores
    # them all at once, before anything else: a second signal cannot hurry
    # the stop there. 5.0 and later never crashed or hung.
    trap_calm=''
    ((bash_major < 5)) &&
        trap_calm='trap "" TERM INT HUP ALRM USR1; '
}

main() {
    reset_shell_state
    restored=${SHFORGE_SUPERVISOR_RESTORED-}
    # The caller's options: from the first line, or from the shell that
    # restarted this one in place (whose SHELLOPTS no longer shows them).
    entry_opts=$supervisor_entry_opts
    [[ -n $restored ]] && entry_opts=${SHFORGE_SUPERVISOR_SHELLOPTS-}
    unset SHFORGE_SUPERVISOR_RESTORED SHFORGE_SUPERVISOR_SHELLOPTS
    regrouped=''
    init_globals
    # Its code comes after this function's call in the script, read only
    # then (see the end of the script): main returns for it alone.
    [[ ${1-} == --end-services ]] && return 0
    parse_args "$@"
    make_receipt_tmp
    check_proc
    resolve_tools
    restore_signals_if_needed "$@"
    regroup_if_needed "$@"
    supervise "$@"
}

# The run itself, in the shell that leads its own process group: get
# ready, launch, wait, stop, report. Never returns.
supervise() {
    shift "$args_used"
    cmd=("$@")
    prepare_stop
    if [[ -n $deadline_cs ]] && ((deadline_cs < 1)); then
        timed_out=true
        finish 124
    fi
    if [[ -n $stop_reason ]]; then
        signal_status "$stop_reason"
        finish "$sig_status"
    fi
    start_timer
    launch
    wait_harness
    stop_harness
    stop_timer
    if [[ -z $rc ]]; then
        err="the harness could not be stopped"
        finish 125
    fi
    finish "$rc"
}

# Everything the stop needs, made before the harness exists: the marker,
# the PID counters, nap's pipe, the traps, the stop helper, the cgroup and
# the lifeline.
# shellcheck disable=SC2064 # trap_calm is expanded now, on purpose
prepare_stop() {
    sup_pid=$self_pid
    sup_start=$self_start
    make_receipt_tmp
    if [[ -z $token ]]; then
        local uuid=''
        read -r uuid 2>/dev/null </proc/sys/kernel/random/uuid
        token="sv-$self_pid-$self_start-$RANDOM$RANDOM-$uuid"
    fi
    marker_entry="$marker_var=$token"
    check_pid_counters
    open_nap_pipe
    trap "${trap_calm}on_signal TERM" TERM
    trap "${trap_calm}on_signal INT" INT
    trap "${trap_calm}on_signal HUP" HUP
    trap "${trap_calm}on_signal ALRM" ALRM
    trap "${trap_calm}on_signal LOST" USR1
    trap 'got_signal=1' USR2
    # A write to a helper that is gone fails instead of killing this shell.
    trap 'got_signal=1' PIPE
    start_helper
    setup_cgroup
    start_lifeline
    end_substitutions
}

# Until the harness ends (rc) or a stop is asked for (stop_reason).
wait_harness() {
    while :; do
        wait_job "$hpid" "$harness_start"
        if [[ -n $wait_rc ]]; then
            rc=$wait_rc
            return 0
        fi
        [[ -n $stop_reason ]] && return 0
    done
}

# The stop (stop_everything, no fork) and what the receipt says of it.
stop_harness() {
    # From here on the stop takes naps: the helper keeps them short.
    tell_helper tick
    # A wake-up still on its way is of no use now; ignored, it cannot
    # interrupt a timed read either (bash 4.0 crashed once on a trap run
    # inside `read -t`).
    trap '' USR2
    [[ $stop_reason == ALRM ]] && timed_out=true
    [[ -n $rc ]] && stop_by_itself=1
    read_now
    stop_began_cs=$now_cs
    # bash reports jobs that die of signals ("Killed") at moments of its
    # own choosing: not the supervisor's message to give.
    stop_note=''
    stop_everything 2>/dev/null
    read_now
    stop_end_cs=$now_cs
    note_zombies
    [[ -z $stop_note ]] || say "$stop_note"
    # Unless it is still alive (a KILL that did not take effect in time).
    collect_harness
}

# The end of every run that got as far as the stop helper: receipt, then
# the (empty) cgroup, then exit $1 (125 when the receipt could not be
# written, 2 when its path was something it may not replace).
finish() {
    local status=$1 wrote=0
    tell_helper tick
    end_lifeline
    end_timer
    write_receipt || wrote=$?
    case $wrote in 0) ;; 2) status=2 ;; *) status=125 ;; esac
    end_helper
    remove_cgroup
    exit "$status"
}
