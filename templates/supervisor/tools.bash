# ---------------------------------------------------------------- tools

# The supervisor trusts no command name once it has started: every tool it
# runs is looked up here, once, as an absolute path, and checked where a
# wrong one would break a promise (a sleep without fractions would never
# end the deadline). The stop itself runs no tool at all.

# The first executable regular file named $1 in a PATH directory into
# tool_path. Empty and relative PATH entries are skipped: they name the
# current directory, which is nobody's choice of tool.
find_tool() {
    local dir IFS=:
    tool_path=''
    set -f
    # shellcheck disable=SC2086 # split on ':' on purpose; set -f is on
    for dir in $PATH; do
        [[ $dir == /* ]] || continue
        if [[ -f $dir/$1 && -x $dir/$1 ]]; then
            tool_path=$dir/$1
            break
        fi
    done
    set +f
    [[ -n $tool_path ]]
}

# Sets mv_bin, sleep_bin (with a deadline), env_bin, perl_bin, mkdir_bin and
# rmdir_bin; refuses (125) when a needed one is missing or unusable.
resolve_tools() {
    mv_bin='' sleep_bin='' env_bin='' perl_bin='' mkdir_bin='' rmdir_bin=''
    find_tool mv || fail 125 "mv not found on PATH: refusing to launch"
    mv_bin=$tool_path
    if [[ -n $deadline_cs ]] && ((deadline_cs >= 1)); then
        find_tool sleep || fail 125 "sleep not found on PATH (needed for --deadline): refusing to launch"
        "$tool_path" 0.01 </dev/null >/dev/null 2>&1 ||
            fail 125 "$tool_path does not sleep 0.01 s (needed for --deadline): refusing to launch"
        sleep_bin=$tool_path
    fi
    find_tool env && env_bin=$tool_path
    find_tool perl && perl_bin=$tool_path
    if [[ $cgroup_opt != none ]]; then
        find_tool mkdir && mkdir_bin=$tool_path
        find_tool rmdir && rmdir_bin=$tool_path
    fi
    return 0
}
