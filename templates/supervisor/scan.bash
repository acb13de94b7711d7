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

