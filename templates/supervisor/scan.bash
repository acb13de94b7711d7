# ---------------------------------------------------------------- scanning

# One pass over /proc: every process started since the harness (nothing
# older can be reached) goes into the candidate table c_*. While the PID
# window holds, PIDs at or below its floor are not even read. In the C
# locale: a UTF-8 one makes bash's glob of /proc (matched and sorted by
# strcoll) and its splitting of each stat more than twice as slow.
#
# bash gives a glob up while a signal it must act on is pending (its glob.c:
# "make SIGINT traps responsive"): the word then stays as written, and such
# a scan saw no process at all. In a burst of stop signals the stop then
# "confirmed" an end it had signalled no one (the harness left STOPped, the
# supervisor waiting on it for good). So the glob is tried again (the trap
# runs between tries), and a scan whose every try was lost (scan_lost: most
# lost scans, while a burst lasts) counts as one undecided process
# (classify): the stop does not end on it, signals the harness's group as
# ever, and looks again.
scan() {
    local LC_ALL=C
    local p pid f n=0 floor try
    local -a procs
    c_pid=() c_ppid=() c_pgid=() c_sid=() c_start=() c_state=()
    pid_window_floor
    floor=$pw_floor
    scan_lost=1
    for ((try = 0; try < 10; try++)); do
        procs=(/proc/[0-9]*)
        if [[ ${procs[0]} != '/proc/[0-9]*' ]]; then
            scan_lost=''
            break
        fi
    done
    [[ -n $scan_lost ]] && procs=()
    for p in ${procs[@]+"${procs[@]}"}; do
        pid=${p#/proc/}
        ((pid > floor)) || continue
        read_stat_fields "$pid" || continue
        ((10#${f[21]} >= launch_tick)) || continue
        c_pid[n]=$pid c_ppid[n]=${f[3]} c_pgid[n]=${f[4]} c_sid[n]=${f[5]}
        c_start[n]=${f[21]} c_state[n]=${f[2]}
        n=$((n + 1))
    done
    c_n=$n
    # Counters that cannot be the kernel's (fewer forks since the launch
    # than new processes seen, beyond the few started in the launch's clock
    # tick before it): no window from now on, and this scan again in full.
    if ((floor > 0)) && { ! read_pid_counters || ((n > pc_forks - pw_forks + 16)); }; then
        pw_disabled=1
        scan
    fi
}

# Whether process $1 (started at $2) holds the marker. Cached per pid+start,
# but only once decided. An environment that reads as empty is decided only
# when the process has one that is empty (env -i: its stat shows where it
# starts and ends), is a kernel thread, or cannot be opened (another user's
# process, or gone); in the middle of an exec it reads empty too, with no
# place yet (both 0), and such a process is undecided (counted in
# undecided): the stop is not over while one is. A read that an exec cut
# short (the old image's environment is gone half way) lacks the marker
# without saying so: an environment without it counts only when its place
# and the process's name were the same before and after the read (seen: a
# storm's detached sleep decided unmarked for good, left running). In a
# fork storm an exec can take seconds of wall time: after 3 s undecided a
# process counts as unmarked for this look only, and the next scan looks
# again.
is_marked() {
    local kv hit=0 any='' before
    if [[ ${mk[$1]%:*} == "$2" ]]; then
        [[ ${mk[$1]##*:} == 1 ]]
        return
    fi
    env_fingerprint "$1"
    before=$env_at
    while IFS= read -r -d '' kv; do
        any=1
        if [[ $kv == "$marker_entry" ]]; then
            hit=1
            break
        fi
    done 2>/dev/null <"/proc/$1/environ"
    if [[ -z $any ]] && ! environ_settled "$1" "$2" "$before"; then
        look_again "$1" "$2"
        return 1
    fi
    if ((hit == 0)) && [[ -n $any ]]; then
        env_fingerprint "$1"
        if [[ -n $env_at && $env_at != "$before" ]]; then
            look_again "$1" "$2"
            return 1
        fi
    fi
    mk[$1]=$2:$hit
    [[ $hit == 1 ]]
}

# PID $1 (started at $2) is undecided: counted in undecided, unless it has
# been for 3 s (then it counts as unmarked, for this look only).
look_again() {
    waited_long "$1" "$2" && return 0
    undecided=$((undecided + 1))
}

# PID $1's name and the place of its environment (stat fields 2, 50 and
# 51) into env_at, empty when its stat cannot be read: an exec changes them.
env_fingerprint() {
    local f
    env_at=''
    read_stat_fields "$1" || return 0
    env_at="${f[1]} ${f[49]:-0}:${f[50]:-0}"
}

# Whether PID $1 (started at $2) has been undecided for 3 s: me[PID] holds
# START:CENTISECONDS of the first undecided look.
waited_long() {
    local v
    read_now
    v=${me[$1]-}
    if [[ ${v%%:*} != "$2" ]]; then
        me[$1]=$2:$now_cs
        return 1
    fi
    ((now_cs - ${v##*:} >= 300))
}

# Whether PID $1 (started at $2), whose environment read empty, has an
# empty one for good: env_start/env_end (stat fields 50 and 51) set, and
# set the same with the same name before the read ($3, env_fingerprint's
# env_at then), a kernel thread (flag 0x200000), or an environ this shell
# cannot open. An exec that ends between the read and this look has set
# them only now: its empty read decides nothing.
environ_settled() {
    local f
    if read_stat_fields "$1" && [[ ${f[21]} == "$2" ]]; then
        case ${f[8]} in '' | *[!0-9]*) ;; *) ((10#${f[8]} & 0x200000)) && return 0 ;; esac
        [[ ${f[49]:-0}${f[50]:-0} != 00 && "${f[1]} ${f[49]:-0}:${f[50]:-0}" == "$3" ]] && return 0
    fi
    ! { : <"/proc/$1/environ"; } 2>/dev/null
}

# Decide who is reached, from the last scan, to a fixed point. With $1 = 1
# (the scan that starts the stop) marked strangers are recorded as services.
# Sets live (reached and alive) and groups (reached groups with members).
classify() {
    local record=$1 i pid start changed state
    added=0 undecided=0
    # A scan that saw nothing (scan_lost): someone may be alive unseen.
    [[ -n $scan_lost ]] && undecided=1
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
                read_argv0 "$pid"
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
    live_fresh=1
}


# The first word of PID $1's command line into sv_argv0[$1] (at most 200
# bytes; a process may rewrite it, so it is a hint, not an identity).
read_argv0() {
    local a=''
    IFS= read -r -d '' a 2>/dev/null <"/proc/$1/cmdline"
    sv_argv0[$1]=${a:0:200}
}

# The PID window: before the launch, the last PID handed out in this PID
# namespace, the fork count since boot and a bound on the PIDs held. While
# fewer PIDs were handed out since than could carry the allocator past
# pid_max, every process started since the launch has a higher PID than the
# floor: a scan reads no /proc entry at or below it. Any doubt: no floor.
pid_window_open() {
    local running total rest
    pw_last='' pw_floor=0
    read_pid_counters || return 0
    read -r _ _ _ running rest 2>/dev/null </proc/loadavg
    total=${running#*/}
    case $total in '' | *[!0-9]*) return 0 ;; esac
    [[ ${#total} -le 9 ]] || return 0
    # Every task holds at most three PIDs (its own, its group's, its
    # session's); the allocator skips those it finds in use.
    pw_taken=$((3 * 10#$total + 1000))
    pw_last=$pc_last pw_forks=$pc_forks pw_seen=$pc_last
}

# Sets pw_floor for the next scan: pw_last while the window holds, else 0.
pid_window_floor() {
    pw_floor=0
    [[ -n $pw_last ]] || return 0
    read_pid_counters || return 0
    # The counter only moves back when someone writes ns_last_pid (root in
    # this PID namespace): from then on, PIDs may come back in any order.
    if ((pc_last < pw_seen)); then
        pw_disabled=1
        return 0
    fi
    pw_seen=$pc_last
    ((pc_forks >= pw_forks && pc_last >= pw_last)) || return 0
    ((pw_last + (pc_forks - pw_forks) + pw_taken < pw_max)) || return 0
    pw_floor=$pw_last
}

# pc_last (the last PID handed out in this namespace), pc_forks (forks
# since boot, all namespaces: at least as many as PIDs handed out here) and
# pw_max (pid_max). Fails when any is missing or not a plain number, and when
# a file system is mounted over /proc/stat or /proc/loadavg (lxcfs: counts
# of a container, not the kernel's).
read_pid_counters() {
    local key val rest
    [[ -z $pw_disabled ]] || return 1
    pc_last='' pc_forks='' pw_max=''
    read -r pc_last 2>/dev/null </proc/sys/kernel/ns_last_pid
    read -r pw_max 2>/dev/null </proc/sys/kernel/pid_max
    if ((bash_major > 5 || (bash_major == 5 && BASH_VERSINFO[1] >= 2))); then
        stat_forks_whole
    else
        while read -r key val rest; do
            if [[ $key == processes ]]; then
                pc_forks=$val
                break
            fi
        done 2>/dev/null </proc/stat
    fi
    case $pc_last/$pc_forks/$pw_max in
        *[!0-9/]* | /* | *//* | */) return 1 ;;
    esac
    [[ ${#pc_last} -le 12 && ${#pc_forks} -le 15 && ${#pw_max} -le 12 ]] || return 1
    pc_last=$((10#$pc_last)) pc_forks=$((10#$pc_forks)) pw_max=$((10#$pw_max))
}

# The "processes" line of /proc/stat into pc_forks, from one read of the
# whole file (bash 5.2 and later read it in blocks; older ones a byte at a
# time, slower than their line by line loop): line by line, each read seeks
# back and the kernel writes the file again, one line per CPU before it.
stat_forks_whole() {
    local text='' line IFS=$'\n'
    IFS= read -r -d '' text 2>/dev/null </proc/stat
    set -f
    for line in $text; do
        if [[ $line == 'processes '* ]]; then
            pc_forks=${line#processes }
            break
        fi
    done
    set +f
}

# Whether anything is mounted over /proc/stat or /proc/loadavg: then the
# PID window is never used. The table is read whole, without seeking
# (in blocks from bash 5.2 on, a byte at a time before): line by line, each
# read seeks back and the kernel writes the file again (1 ms for 20 mounts
# on bash 5.2). A match anywhere on a line, not only as its mount point
# (field 5), only turns the window off. The table stays in mount_table
# for find_own_cgroup.
check_pid_counters() {
    pw_disabled='' mount_table=''
    IFS= read -r -d '' mount_table 2>/dev/null </proc/self/mountinfo
    case $mount_table in
        *" /proc/stat "* | *" /proc/loadavg "* | *" /proc/sys "* | *" /proc/sys/kernel"*) pw_disabled=1 ;;
    esac
}
