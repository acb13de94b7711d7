# ---- --workdir / --session-dir ---------------------------------------------

# resolve_path PATH: set resolved to PATH with every symlink and `..`
# resolved, as the kernel would see it. A path that does not exist yet is
# resolved through its nearest existing ancestor (cd -P, then $PWD, which
# cd -P sets to the physical directory in every shell of the matrix); the
# rest is appended name by name, `..` taking a name off, and resolved
# physically again wherever it exists. A relative PATH
# starts at start_dir. Runs in the caller's subshell: it changes directory.
resolve_path() {
    case $1 in
        /*) _rp_head=$1 ;;
        *) _rp_head=$start_dir/$1 ;;
    esac
    _rp_tail=
    while [ ! -d "$_rp_head" ]; do
        if [ -L "$_rp_head" ]; then
            die 2 "cannot resolve $1: $_rp_head is a symlink to nothing"
        fi
        # Drop trailing slashes, then move the last name to the tail.
        while :; do
            case $_rp_head in
                / | *[!/]) break ;;
                */) _rp_head=${_rp_head%/} ;;
            esac
        done
        case $_rp_head in
            */*)
                _rp_tail=${_rp_head##*/}/$_rp_tail
                _rp_head=${_rp_head%/*}
                [ -n "$_rp_head" ] || _rp_head=/
                ;;
            *)
                _rp_tail=$_rp_head/$_rp_tail
                _rp_head=.
                ;;
        esac
    done
    enter_physical "$1" "$_rp_head"
    # The rest does not exist (yet): append it name by name, `..` taking a
    # name off. Whenever the path so far exists again (a `..` led back out of
    # the missing part), resolve it physically again, so that a symlink
    # further on still counts: `missing/../link` is where `link` points.
    while [ -n "$_rp_tail" ]; do
        _rp_name=${_rp_tail%%/*}
        _rp_tail=${_rp_tail#*/}
        case $_rp_name in
            '' | .) continue ;;
            ..)
                resolved=${resolved%/*}
                [ -n "$resolved" ] || resolved=/
                ;;
            *)
                case $resolved in
                    /) resolved=/$_rp_name ;;
                    *) resolved=$resolved/$_rp_name ;;
                esac
                ;;
        esac
        if [ -d "$resolved" ]; then
            enter_physical "$1" "$resolved"
        fi
    done
}

# enter_physical PATH DIR: cd -P into DIR (part of resolving PATH) and set
# resolved to the physical directory ($PWD after cd -P, in every shell).
enter_physical() {
    cd -P -- "$2" || die 2 "cannot resolve $1: cannot enter $2"
    resolved=$PWD
    # bash keeps a leading // (POSIX leaves its meaning open); on Linux it is /.
    while :; do
        case $resolved in
            //*) resolved=${resolved#/} ;;
            *) break ;;
        esac
    done
}

# inside OUTER INNER: succeeds when INNER is OUTER or lies inside it (both
# resolved, absolute, without a trailing slash except for /).
inside() {
    [ "$1" = / ] && return 0
    case $2/ in
        "$1"/*) return 0 ;;
    esac
    return 1
}

# check_overlap: refuse when the workdir and the session dir are the same
# directory or one lies inside the other. Runs in a subshell (it changes
# directory), so it reports through its exit status.
check_overlap() {
    # Relative paths are taken from where the script was started, physically.
    cd -P . || die 2 "cannot resolve the current directory"
    start_dir=$PWD
    resolve_path "$workdir"
    _co_work=$resolved
    resolve_path "$session_dir"
    _co_session=$resolved
    if [ "$_co_work" = "$_co_session" ]; then
        die 3 "the session dir is the workdir: $_co_session"
    elif inside "$_co_work" "$_co_session"; then
        die 3 "the session dir $_co_session lies inside the workdir $_co_work"
    elif inside "$_co_session" "$_co_work"; then
        die 3 "the workdir $_co_work lies inside the session dir $_co_session"
    fi
}

