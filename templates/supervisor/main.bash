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

