# ---------------------------------------------------------------- cgroup

# cgroup v2 containment. With a writable cgroup v2 directory (--cgroup DIR,
# or found: this shell's own cgroup, not the root, owned by this user and
# writable), the harness runs in a child cgroup of its own, made here. The
# stop freezes that cgroup, kills it (cgroup.kill, Linux 5.14+, or KILL to
# every member while frozen) and waits until it is empty: this reaches a
# process that left the tree, group and session and dropped the marker.
# Without one (or with --cgroup none) containment is by /proc alone.

# Sets cg (the child cgroup) and containment, or refuses (125) when a
# cgroup is needed (--cgroup DIR, or --max-procs, which only a cgroup can
# enforce) and cannot be used.
setup_cgroup() {
    local parent='' named='' needed=''
    cg='' containment=proc cg_has_kill=''
    [[ -n $max_procs ]] && needed=1
    case $cgroup_opt in
        none) return 0 ;;
        '')
            if ! find_own_cgroup; then
                [[ -n $needed ]] && fail 125 "--max-procs needs a cgroup: no --cgroup DIR given, and this shell's own cgroup v2 is not delegated and writable: refusing to launch"
                return 0
            fi
            ;;
        *) named=1 needed=1 ;;
    esac
    [[ -n $named ]] && parent=$cgroup_opt || parent=$cg_found
    if [[ ! -f $parent/cgroup.controllers || ! -w $parent/cgroup.procs ]]; then
        [[ -n $needed ]] && fail 125 "--cgroup ${parent:0:200} is not a writable cgroup v2 directory: refusing to launch"
        return 0
    fi
    # Looked up only now: most runs have no cgroup to make.
    find_tool mkdir && mkdir_bin=$tool_path
    find_tool rmdir && rmdir_bin=$tool_path
    if [[ -z $mkdir_bin || -z $rmdir_bin ]]; then
        [[ -n $needed ]] && fail 125 "mkdir and rmdir are needed for --cgroup and not found on PATH: refusing to launch"
        return 0
    fi
    cg="$parent/shforge-supervisor-$self_pid-$self_start"
    if ! run_tool "$mkdir_bin" -- "$cg" 2>/dev/null; then
        cg=''
        [[ -n $needed ]] && fail 125 "cannot make a cgroup in ${parent:0:200}: refusing to launch"
        return 0
    fi
    cg_parent=$parent
    # The freezer (cgroup.freeze, Linux 5.2+) is what makes a stop sure.
    if [[ ! -f $cg/cgroup.freeze || ! -f $cg/cgroup.events ]]; then
        remove_cgroup
        [[ -n $needed ]] && fail 125 "cgroup ${parent:0:200} has no freezer (Linux 5.2+ needed): refusing to launch"
        return 0
    fi
    [[ -f $cg/cgroup.kill ]] && cg_has_kill=1
    if [[ -n $max_procs ]]; then
        if [[ ! -f $cg/pids.max ]] || ! { printf '%s\n' "$max_procs" >"$cg/pids.max"; } 2>/dev/null; then
            remove_cgroup
            fail 125 "--max-procs needs the pids controller enabled for the children of ${parent:0:200}: refusing to launch"
        fi
    fi
    containment=cgroup
}

# This shell's own cgroup v2 directory into cg_found, when it may be used:
# not the root of the hierarchy, owned by this user (delegated) and writable.
# Both tables are read whole, not line by line (see check_pid_counters,
# which left the mount table in mount_table).
find_own_cgroup() {
    local text='' path='' line f mount='' IFS
    cg_found=''
    IFS= read -r -d '' text 2>/dev/null </proc/self/cgroup
    set -f
    IFS=$'\n'
    # The hierarchy v2's line, "0::PATH" (the last one, if more).
    for line in $text; do
        [[ $line == 0::* ]] && path=${line#0::}
    done
    case $path in '' | / | *' (deleted)'* | *\\*)
        set +f
        return 1
        ;;
    esac
    for line in $mount_table; do
        [[ $line == *' - cgroup2 '* ]] || continue
        IFS=' '
        # shellcheck disable=SC2206 # split on ' ' on purpose; set -f is on
        f=($line)
        IFS=$'\n'
        [[ ${f[3]} == / && ${f[4]} != *\\* ]] && mount=${f[4]}
    done
    set +f
    [[ -n $mount ]] || return 1
    cg_found=$mount$path
    [[ -d $cg_found && -O $cg_found && -w $cg_found && -w $cg_found/cgroup.procs ]]
}

# In the harness's job, before exec: move this process into the cgroup.
# shellcheck disable=SC2317 # runs in the harness's subshell
join_cgroup() {
    [[ -n $cg ]] || return 0
    if ! { printf '0\n' >"$cg/cgroup.procs"; } 2>/dev/null; then
        say "cannot move the harness into cgroup ${cg:0:200}"
        exit 125
    fi
}

# Signal $1 to every member of the harness's cgroup (it is frozen: no
# member can exit and leave its PID to another process meanwhile).
cgroup_signal() {
    local pid
    local -a m
    cg_signalled=0
    [[ -n $cg ]] || return 0
    while read -r pid; do
        case $pid in '' | *[!0-9]*) continue ;; esac
        m+=("$pid")
    done 2>/dev/null <"$cg/cgroup.procs"
    cg_signalled=${#m[@]}
    ((${#m[@]} > 0)) && kill -s "$1" "${m[@]}" 2>/dev/null
    return 0
}

# Move the preserved services out of the harness's cgroup, into its parent,
# before the cgroup is killed: a service is kept whatever contains it.
cgroup_release_services() {
    local pid
    [[ -n $cg ]] || return 0
    for pid in ${pv[@]+"${!pv[@]}"}; do
        { printf '%s\n' "$pid" >"$cg_parent/cgroup.procs"; } 2>/dev/null
    done
}

# Freeze (1) or thaw (0) the harness's cgroup.
cgroup_freeze() {
    [[ -n $cg ]] || return 0
    { printf '%s\n' "$1" >"$cg/cgroup.freeze"; } 2>/dev/null
}

# Whether the cgroup's events say $1 (e.g. "frozen 1", "populated 0").
cgroup_event() {
    local key val
    while read -r key val; do
        [[ "$key $val" == "$1" ]] && return 0
    done 2>/dev/null <"$cg/cgroup.events"
    return 1
}

# KILL every member: cgroup.kill where the kernel has it, else each PID
# while the cgroup is frozen (members cannot fork, their PIDs stay theirs).
cgroup_kill() {
    local pid end
    [[ -n $cg ]] || return 0
    if [[ -n $cg_has_kill ]] && { printf '1\n' >"$cg/cgroup.kill"; } 2>/dev/null; then
        return 0
    fi
    read_now
    end=$((now_cs + 100))
    until cgroup_event 'frozen 1' || cgroup_event 'populated 0'; do
        read_now
        ((now_cs < end)) || break
        nap 0.01
    done
    while read -r pid; do
        case $pid in '' | *[!0-9]*) continue ;; esac
        kill -s KILL "$pid" 2>/dev/null
    done 2>/dev/null <"$cg/cgroup.procs"
}

# Whether the harness's cgroup has no process left (true without one).
cgroup_empty() {
    [[ -n $cg ]] || return 0
    cgroup_event 'populated 0'
}

# Remove the (empty) cgroup. rmdir is the one fork after the stop: by then
# the cgroup's processes are gone and their slots free.
remove_cgroup() {
    [[ -n $cg ]] || return 0
    run_tool "$rmdir_bin" -- "$cg" 2>/dev/null ||
        say "could not remove cgroup ${cg:0:200}"
    cg=''
}
