# ---------------------------------------------------------------- regrouping

# Started with `&` by a shell without job control, this shell ignores INT
# and QUIT, and bash cannot trap or reset a signal ignored at entry (the
# harness would inherit them ignored too). When /proc says so, start again in
# place (same PID) through a program that restores the default dispositions:
# env --default-signal (coreutils 8.31+), else perl. Without either, INT
# stays ignored: stop with TERM or HUP instead.
restore_signals_if_needed() {
    [[ -n $restored ]] && return 0
    # INT is bit 2 (0x2) of the ignored signals (check_proc: field 33 of
    # this shell's stat, as in proc(5)). QUIT (0x4) cannot tell: bash
    # ignores it in itself. `&` ignores both, so both are restored.
    case $self_sigignore in '' | *[!0-9]*) return 0 ;; esac
    [[ ${#self_sigignore} -le 18 ]] || return 0
    (((10#$self_sigignore & 2) != 0)) || return 0
    env_bin='' perl_bin=''
    find_tool env && env_bin=$tool_path
    find_tool perl && perl_bin=$tool_path
    export SHFORGE_SUPERVISOR_RESTORED=1 SHFORGE_SUPERVISOR_SHELLOPTS="$entry_opts"
    if [[ -n $env_bin ]] && "$env_bin" --default-signal=INT,QUIT true >/dev/null 2>&1; then
        exec "$env_bin" --default-signal=INT,QUIT "$BASH" --noprofile --norc "$0" "$@"
    fi
    if [[ -n $perl_bin ]]; then
        # PERL5OPT, PERL5LIB and PERLLIB from the image would load code into
        # this perl (-M, -d): it runs without them and gives them back to
        # the supervisor it starts, so the harness keeps them.
        local v
        for v in PERL5OPT PERL5LIB PERLLIB; do
            if [[ -n ${!v+set} ]]; then
                export "SHFORGE_KEEP_$v=${!v}"
                unset "$v"
            fi
        done
        # shellcheck disable=SC2016 # perl code, not shell: no expansion wanted
        exec "$perl_bin" -e '$SIG{INT} = $SIG{QUIT} = "DEFAULT";
            for (qw(PERL5OPT PERL5LIB PERLLIB)) {
                $ENV{$_} = delete $ENV{"SHFORGE_KEEP_$_"} if exists $ENV{"SHFORGE_KEEP_$_"};
            }
            exec { $ARGV[0] } @ARGV; exit 127' \
            "$BASH" --noprofile --norc "$0" "$@"
    fi
    unset SHFORGE_SUPERVISOR_RESTORED SHFORGE_SUPERVISOR_SHELLOPTS
}

# Without a process group of its own, a provider's group KILL would end the
# supervisor before the receipt. Run the rest (supervise) as a job in a new
# group: a subshell of this one, so the script is not read and parsed again
# (a new bash took half the start-up). This shell only passes signals on
# and exits with the same status. It also holds the only write end of a
# pipe (the lifeline) whose read end the job gets: when this shell dies (the
# provider KILLed its group), the job reads EOF and stops the harness as for
# TERM. The job's $$ is still this shell's PID: the supervisor names itself
# by self_pid (check_proc) everywhere. No trap is set yet, and the signal
# dispositions are this shell's (INT restored above when it could be).
# shellcheck disable=SC2064 # trap_calm is expanded now, on purpose
regroup_if_needed() {
    local child
    [[ $self_pgid == "$self_pid" ]] && return 0
    open_pipe 57 || fail 125 "cannot make a pipe for the lifeline"
    set -m
    (regrouped_job "$@") 58</proc/self/fd/57 57>&- &
    child=$!
    set +m
    child_start=
    read_stat "$child" && child_start=$st_start
    # Known before the traps exist: a TERM that lands between them would
    # otherwise be passed to no one and lost.
    forward_to=$child
    # bash < 4.4: only the first one (see trap_calm).
    trap "${trap_calm}forward TERM" TERM
    trap "${trap_calm}forward INT" INT
    trap "${trap_calm}forward HUP" HUP
    end_substitutions
    wait_rc=
    while [[ -z $wait_rc ]]; do
        wait_job "$child" "$child_start"
    done
    exit "$wait_rc"
}

# The regrouped job (a subshell, started under set -m: a group of its own):
# it names itself anew and runs the supervisor. Never returns.
regrouped_job() {
    set +m
    regrouped=1 subst_pids=() subst_starts=()
    check_proc
    [[ $self_pgid == "$self_pid" ]] || fail 125 "could not get a process group of its own"
    supervise "$@"
}

# Whether PID $1 is still the process that started at tick $2, not yet dead.
job_running() {
    read_stat "$1" && [[ $st_start == "$2" && $st_state != Z && $st_state != X ]]
}

# shellcheck disable=SC2317 # runs from the TERM/INT/HUP traps
forward() {
    got_signal=1
    # A nested run of this trap (see on_signal) would pass one signal on
    # twice, and a second one makes the job skip the grace period.
    [[ -n $in_on_signal ]] && return 0
    in_on_signal=1
    kill -s "$1" "$forward_to" 2>/dev/null
    in_on_signal=''
}

# Wait for job $1 (started at tick $2). wait_rc is its status, or empty when
# a trapped signal interrupted the wait while the job still runs.
wait_job() {
    local st again
    got_signal=
    # bash reports a job killed by a signal ("Killed", "Terminated") on
    # stderr when it reaps it: not the supervisor's message to give.
    if [[ -n $trap_calm ]]; then
        # bash < 4.4 puts a SIGINT handler of its own in place while it
        # waits without job control, and a trapped signal that ends the wait
        # leaves it there: an INT that comes next jumps back into the wait
        # that has returned (a crash), or to the top of the script. Under
        # job control it never replaces the trap.
        set -m
        wait "$1" 2>/dev/null
        st=$?
        set +m
    else
        wait "$1" 2>/dev/null
        st=$?
    fi
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

