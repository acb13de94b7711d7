# entry_run DIR HOME: run the entry check (in a command substitution's
# subshell) with HOME, TMPDIR, the XDG dirs and the working directory in
# HOME, so that what the entry writes there stays out of the caller's home.
# `exec 9>&-; exec CMD`: neither the subshell nor CMD may keep the lock
# descriptor (bash 3.2 leaks a saved copy of it with `exec CMD 9>&-`), or a
# killed installer would leave the lock held.
entry_run() {
    exec 9>&-
    # HOME cannot be entered only when it is the unusable fallback: then
    # relative writes go into the install dir itself.
    cd -- "$2" 2>/dev/null || cd -- "$1" || exit 1
    HOME=$2
    TMPDIR=$2/tmp
    TMP=$2/tmp
    TEMP=$2/tmp
    XDG_CONFIG_HOME=$2/config
    XDG_CACHE_HOME=$2/cache
    XDG_DATA_HOME=$2/data
    XDG_STATE_HOME=$2/state
    XDG_RUNTIME_DIR=$2/runtime
    export HOME TMPDIR TMP TEMP XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME XDG_RUNTIME_DIR
    # A hung entry must not hold the lock for ever: bound it where timeout exists.
    if command -v timeout >/dev/null 2>&1; then
        exec timeout "$entry_check_seconds" "$1/$entry" ${check_args[@]+"${check_args[@]}"} < /dev/null
    fi
    exec "$1/$entry" ${check_args[@]+"${check_args[@]}"} < /dev/null
}

# entry_ok DIR HOME: succeeds when DIR/entry runs its check, with HOME as
# its home, and prints what it should.
entry_ok() {
    local out
    [ -f "$1/$entry" ] && [ -x "$1/$entry" ] || return 1
    out=$(entry_run "$1" "$2" 2>&1) || return 1
    case $out in
        *"$check_expect"*) return 0 ;;
    esac
    return 1
}

# installed_ok: the install at final is a real directory whose entry passes
# its check. The check's home is a fresh directory in the prefix, removed
# right after; where none can be made (a read-only prefix) it is a path
# below /dev/null, where nothing can ever be created.
installed_ok() {
    local rc=0
    [ -d "$final" ] && [ ! -L "$final" ] && [ -f "$final/$entry" ] && [ -x "$final/$entry" ] ||
        return 1
    # A relocated install moved here from elsewhere would run with the
    # loader of its old place: not this install.
    relocation_current || return 1
    stamp_current || return 1
    check_home=$prefix/.$name-$version.check.$$
    if [ -e "$check_home" ] || [ -L "$check_home" ]; then
        rm -rf "$check_home" 9>&-
    fi
    if mkdir -m 700 "$check_home" "$check_home/tmp" 2>/dev/null 9>&-; then
        entry_ok "$final" "$check_home" || rc=1
        rm -rf "$check_home" 9>&-
    else
        entry_ok "$final" /dev/null/shforge-check-home || rc=1
    fi
    check_home=
    return "$rc"
}

# stamp_make: install_stamp, the sha256 of every artifact this installer
# pins, space-separated, in the spec's order (what write_stamp records).
stamp_make() {
    local i=0
    install_stamp=
    while [ "$i" -lt "$art_count" ]; do
        install_stamp=$install_stamp${install_stamp:+ }${art_sha256[$i]}
        i=$((i + 1))
    done
}

# stamp_current: the install at final was made from this installer's
# artifacts (write_stamp). Read with the builtin: no fork on the reuse path;
# bounded (-n), so a huge stamp without a newline is never read whole.
stamp_current() {
    local line=
    [ -f "$final/.shforge-artifacts" ] && [ ! -L "$final/.shforge-artifacts" ] || return 1
    IFS= read -r -n 65536 line < "$final/.shforge-artifacts" || return 1
    [ "$line" = "$install_stamp" ]
}

# lock_satisfied: asked by lock_acquire while waiting: is the install there now?
lock_satisfied() {
    [ "$musl_missing_count" -eq 0 ] && installed_ok
}
