# ---------------------------------------------------------------- /proc

{% include "lib/proc_stat.bash" %}

# Parse /proc/PID/stat into the caller's array f: f[0] is the PID, f[1] the
# name, f[2] the state and so on, as in proc(5) minus one, checked by
# stat_checked. The name may hold spaces, ')' and newlines: it ends at the
# LAST ')'. Nothing is evaluated.
read_stat_fields() {
    read -r -a f 2>/dev/null <"/proc/$1/stat" || return 1
    # With as many words as our own stat has, the name held no blank (a blank
    # adds words, a newline cuts the line short) and f is exact.
    if [[ ${#f[@]} -ne $stat_fields ]]; then
        proc_stat_whole "$1" || return 1
        f=("${proc_f[@]}")
        [[ ${#f[@]} -eq $stat_fields ]] || return 1
    fi
    stat_checked "$1"
}

# Whether the caller's f describes PID $1: field 1 is that PID (a crafted
# name cannot pass for another process), and the parent, group, session and
# start time are digits, so arithmetic on them evaluates nothing.
stat_checked() {
    [[ ${f[0]} == "$1" ]] || return 1
    case ${f[3]}/${f[4]}/${f[5]}/${f[21]} in
        *[!0-9/]* | /* | *//* | */) return 1 ;;
    esac
    return 0
}

# Read one process's stat into st_state st_start.
read_stat() {
    local f
    read_stat_fields "$1" || return 1
    st_state=${f[2]} st_start=${f[21]}
}

# Centiseconds since boot from /proc/uptime into now_cs.
read_now() {
    local up rest
    read -r up rest 2>/dev/null </proc/uptime
    up=${up/./}
    case $up in '' | *[!0-9]*) up=0 ;; esac
    now_cs=$((10#$up))
}

# Refuse to run without a /proc that describes this shell; its PID into
# self_pid (in the regrouped job, a subshell, $$ is the first shell's PID:
# its parent), its group and start time into self_pgid and self_start,
# and the signals it ignores (a decimal mask) into self_sigignore.
check_proc() {
    local f
    stat_fields=0
    read -r -a f 2>/dev/null </proc/self/stat || fail 125 "/proc is not readable: refusing to launch"
    stat_fields=${#f[@]}
    self_pid=${f[0]}
    case $self_pid in '' | *[!0-9]*) self_pid='' ;; esac
    [[ -n $self_pid && ($self_pid == "$$" || -n $regrouped) && $stat_fields -ge 22 ]] ||
        fail 125 "/proc/self/stat does not describe this shell: refusing to launch"
    read_stat_fields "$self_pid" || fail 125 "/proc/$self_pid/stat is not readable: refusing to launch"
    [[ $self_pid == "$$" || ${f[3]} == "$$" ]] ||
        fail 125 "/proc/self/stat does not describe this shell: refusing to launch"
    self_pgid=${f[4]}
    self_start=${f[21]}
    self_sigignore=${f[32]-}
    [[ -r /proc/uptime ]] || fail 125 "/proc/uptime is not readable: refusing to launch"
}
