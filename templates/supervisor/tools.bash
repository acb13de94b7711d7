# ---------------------------------------------------------------- tools

# The supervisor trusts no command name once it has started: every tool it
# runs is looked up here, once, as an absolute path, and checked where a
# wrong one would break a promise (a sleep without fractions would never
# end the deadline). The stop itself runs no tool at all.
# None of them reads a config file, and no variable changes what they are
# asked here: mv -f (VERSION_CONTROL and SIMPLE_BACKUP_SUFFIX only act with
# --backup), mkdir and rmdir of one directory, sleep (coreutils parses its
# number in the C locale when the locale's fails; busybox never sets one),
# env --default-signal. perl (regroup.bash, only when INT was ignored at
# entry) would read PERL5OPT, PERL5LIB and PERLLIB: it runs without them.

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

# Sets mv_bin, rm_bin (when there is one) and sleep_bin (with a deadline); refuses (125) when a needed
# one is missing or unusable. The tools only some runs need are looked up
# where they are needed, still before the harness starts: env and perl by
# restore_signals_if_needed (INT ignored at entry), mkdir and rmdir by
# setup_cgroup (a cgroup to make).
resolve_tools() {
    mv_bin='' rm_bin='' sleep_bin='' env_bin='' perl_bin='' mkdir_bin='' rmdir_bin=''
    find_tool mv || fail 125 "mv not found on PATH: refusing to launch"
    mv_bin=$tool_path
    # Only to remove what a failed receipt write left (receipt_remove).
    find_tool rm && rm_bin=$tool_path
    if [[ -n $deadline_cs ]] && ((deadline_cs >= 1)); then
        find_tool sleep || fail 125 "sleep not found on PATH (needed for --deadline): refusing to launch"
        # As short as a fraction goes: the probe is part of every start.
        "$tool_path" 0.001 </dev/null >/dev/null 2>&1 ||
            fail 125 "$tool_path does not sleep 0.001 s (needed for --deadline): refusing to launch"
        sleep_bin=$tool_path
    fi
    return 0
}
