# ---------------------------------------------------------------- descriptors and the stop helper

# What the stop needs without a fork, made before the harness starts: the
# shell's own anonymous pipes (open_pipe, fds 52-58, see the table at the
# top), nap's pauses on one of them, and the stop helper behind another.

# An anonymous pipe open for reading and writing on fd $1 (a number: eval
# only because bash 3.2 takes no variable there). bash 5.1 and later make a
# short here-string as a pipe of their own, without a fork: reopened
# through /proc for both ends (as start_helper does) and its one line read
# back, it is a new empty pipe. Older ones write a temporary file there
# instead (and -p tells): they get a `<(:)`, whose process exits at once;
# it is not waited for here (a wait per pipe was a good part of the
# start-up) but listed, PID and start time, for end_substitutions.
open_pipe() {
    if ((bash_major > 5 || (bash_major == 5 && BASH_VERSINFO[1] >= 1))) &&
        eval "exec $1<<<''" 2>/dev/null; then
        if [[ -p /proc/self/fd/$1 ]] && eval "exec $1<>/proc/self/fd/$1"; then
            # Its line is there, unless a bash wrote none: then it is empty.
            read -r -t 0 -u "$1" && read -r -u "$1" _
            return 0
        fi
        eval "exec $1<&-"
    fi
    eval "exec $1<> <(:)" || return 1
    if read_stat "$!"; then
        subst_pids+=("$!") subst_starts+=("$st_start")
    fi
    # bash < 4 keeps the substitution's own end open (as fd 63).
    if [[ /proc/self/fd/63 -ef /proc/self/fd/$1 ]]; then exec 63<&-; fi
}

# Wait until the processes behind open_pipe's substitutions have exited,
# so that none outlives this shell: before the harness starts, and in fail.
# bash 4.4+ can `wait` for one (only while it still is the same process:
# its PID may since be another child of ours); older ones reap them unasked
# (and refuse the wait): watch each stat for a moment instead.
end_substitutions() {
    local i end
    for ((i = 0; i < ${#subst_pids[@]}; i++)); do
        subst_running "$i" || continue
        wait "${subst_pids[i]}" 2>/dev/null
        read_now
        end=$((now_cs + 100))
        while subst_running "$i"; do
            read_now
            ((now_cs < end)) || break
        done
    done
    subst_pids=() subst_starts=()
}

# Whether substitution $1 of subst_pids is still the same process, alive.
subst_running() {
    read_stat "${subst_pids[$1]}" &&
        [[ $st_start == "${subst_starts[$1]}" && $st_state != Z && $st_state != X ]]
}

# The descriptors this shell keeps for itself (52, 55 and 56: see the
# table at the top): no child but the helper may hold them, so every other
# child closes them first.
close_own_fds() {
    exec 52>&- 55>&- 56>&-
}

# Run tool $1 with its arguments, without this shell's own descriptors
# (one process, as for the tool alone: the subshell becomes the tool).
run_tool() {
    (
        close_own_fds
        exec "$@"
    )
}

# fd 55: a pipe this shell holds open at both ends and never writes to, for
# nap's timed reads (the stop helper's ticks are the only writes).
open_nap_pipe() {
    open_pipe 55 || fail 125 "cannot make a pipe"
}

# A pause without a fork: a timed read on a pipe (fd 55) that only the stop
# helper writes to. bash 3.2 takes no fraction of a second there: it does
# not pause at all, and the caller looks again at once (a busy wait, on 3.2
# only). bash 4.4 to 5.1 can lose the timeout: a SIGALRM that lands between
# their last check and the read(2) leaves the read blocked until data or
# another signal comes (seen once in ~300,000 naps under load: a supervisor
# hung for good in its stop). So while naps are taken the helper keeps a
# line waiting in the pipe, every kick_wait ("tick"): a lost timeout then
# costs that much at most, and a nap may end early, which only means one
# more look.
nap() {
    ((bash_major >= 4)) || return 0
    # bash may report a job that died meanwhile ("Killed") from inside
    # read: not the supervisor's message to give.
    read -r -t "$1" -u 55 _ 2>/dev/null
}

# The stop helper: a child started before the harness and blocked on a pipe
# from this shell, so that the stop needs no fork once the sandbox may be out
# of process slots. On "kick" it sends USR2 every moment: a signal whose trap
# ran just before `wait` began (bash < 4.4 then blocks) is followed by
# another one. On "tick" it keeps a line waiting in nap's pipe instead (see
# nap). On "go" it becomes mv (exec: no new process) and renames the receipt
# into place; on "remove", rm of what a failed write left. On "quit" it
# exits; at EOF (this shell is gone) it writes a receipt that says so.
#
# Commands travel one byte each (a word's first letter; go adds the digit
# of the temporary name) on fd 52 -> 53, and each one rings a doorbell
# (fd 56, an empty line). Between its
# wake-ups the helper pauses with a timed read on the doorbell, never on the
# commands: bash 4.4 can take a byte in a timed read and drop it when the
# timeout fires as it comes, and 4.4 to 5.1 can miss a timeout (see nap),
# which the next ring ends. A command is read without a timeout, once
# `read -t 0` says one is there.
start_helper() {
    if ! open_pipe 54 || ! open_pipe 56; then
        fail 125 "cannot make a pipe for the stop helper"
    fi
    (helper_main) 53</proc/self/fd/54 54>&- 58<&- </dev/null >/dev/null 2>&1 &
    helper_pid=$!
    # Only this shell writes (fd 52), only the helper reads (fd 53).
    exec 52>/proc/self/fd/54 54>&-
    helper_start=''
    read_stat "$helper_pid" && helper_start=$st_start
    [[ -n $helper_start ]] || fail 125 "the stop helper did not start"
}

# shellcheck disable=SC2317 # runs in the helper's subshell
helper_main() {
    local c
    trap '' TERM INT HUP QUIT
    trap - ALRM USR1 USR2 PIPE
    while read -r -n 1 -u 53 c; do
        helper_command "$c"
    done
    helper_orphaned
}

# This shell is gone and said nothing last (no go, remove or quit): it
# died. bash before 4.4 can still crash in its own signal handling (see
# trap_calm), and a KILL may reach this shell alone. The receipt says so,
# renamed into place as for go; the helper knows nothing of the harness
# (it may still run), so the stop, services and zombies are empty.
# shellcheck disable=SC2317 # runs in the helper's subshell
helper_orphaned() {
    [[ -n $receipt && -n $mv_bin ]] || exit 0
    receipt_target_kind "$receipt"
    [[ -z $target_kind ]] || exit 1
    err="the supervisor died before it wrote the receipt: the harness may still run"
    confirmed=false
    receipt_json
    helper_pid=''
    receipt_tmp_file "$receipt_body" || exit 1
    close_own_fds
    exec "$mv_bin" -f -- "$tmp_name" "$receipt" 53<&-
}

# shellcheck disable=SC2317 # runs in the helper's subshell
helper_command() {
    local c
    case $1 in
        g)
            # The byte after "g" says which temporary name was written.
            read -r -n 1 -u 53 c || exit 1
            case $c in 0) c=$receipt_tmp ;; [1-3]) c=$receipt_tmp.$c ;; *) exit 1 ;; esac
            receipt_target_kind "$receipt"
            [[ -n $target_kind || -z $mv_bin ]] && exit 1
            close_own_fds
            exec "$mv_bin" -f -- "$c" "$receipt" 53<&-
            ;;
        r)
            # Remove what a failed write left (receipt_remove): a
            # temporary name, or (p) the receipt.
            read -r -n 1 -u 53 c || exit 1
            case $c in 0) c=$receipt_tmp ;; [1-3]) c=$receipt_tmp.$c ;; p) c=$receipt ;; *) exit 1 ;; esac
            [[ -n $rm_bin ]] || exit 1
            close_own_fds
            exec "$rm_bin" -f -- "$c" 53<&-
            ;;
        k | t)
            # Until another command comes (or EOF, or this shell is gone).
            while job_running "$sup_pid" "$sup_start"; do
                if [[ $1 == k ]]; then
                    kill -s USR2 "$sup_pid" 2>/dev/null
                else
                    helper_tick
                fi
                helper_next
                [[ -n $c && $c != "$1" ]] && {
                    helper_command "$c"
                    return 0
                }
            done
            helper_orphaned
            ;;
        q) exit 0 ;;
        *) exit 1 ;;
    esac
}

# A pause of kick_wait at most, then the next command into c ('' when none
# came). At EOF (this shell is gone): helper_orphaned. bash 3.2 cannot tell
# whether a command waits (its `read -t 0` always fails): it pauses on the
# commands themselves, in whole seconds; it has neither failing above.
# shellcheck disable=SC2317 # runs in the helper's subshell
helper_next() {
    c=''
    if ((bash_major < 4)); then
        read -r -t "$kick_wait" -n 1 -u 53 c
        return 0
    fi
    read -r -t "$kick_wait" -u 56 _
    read -r -t 0 -u 53 || return 0
    read -r -n 1 -u 53 c || helper_orphaned
}

# One line into nap's pipe (fd 55), unless the last one is still unread:
# at most one nap in a row is cut short.
# shellcheck disable=SC2317 # runs in the helper's subshell
helper_tick() {
    ((bash_major >= 4)) || return 0
    read -r -t 0 -u 55 && return 0
    { printf '\n' >&55; } 2>/dev/null
}

# Give the stop helper (when there is one) command $1: kick, tick, go,
# remove or quit, sent as its first letter (see start_helper), and the
# one-byte argument $2 of go and remove.
tell_helper() {
    [[ -n $helper_pid ]] || return 0
    { printf '%s' "${1:0:1}${2-}" >&52; } 2>/dev/null || return 1
    { printf '\n' >&56; } 2>/dev/null
    return 0
}

# When the receipt did not go through the stop helper (no receipt, or it
# could not be written), tell it to quit and wait for it: nothing of this
# supervisor outlives it.
end_helper() {
    local pid=$helper_pid
    [[ -n $pid ]] || return 0
    tell_helper quit
    helper_pid=''
    wait_rc=''
    while [[ -z $wait_rc ]]; do
        wait_job "$pid" "$helper_start"
    done
}
