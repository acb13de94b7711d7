
# say LINE...: print each argument as one line. mksh and posh have no printf
# builtin, and the PATH of a bare image (or a test) may hold none: then echo,
# which may read a backslash as an escape, is better than no message at all.
say() {
    if command -v printf >/dev/null 2>&1; then
        printf '%s\n' "$@"
    else
        for _s_line in "$@"; do
            echo "$_s_line"
        done
    fi
}

usage() {
    say \
        'usage: sh bootstrap.sh [--need CMD]... [--musl-lib LIB]... [--workdir DIR --session-dir DIR] [--carried-bash FILE]' \
        '  --need CMD         install the package providing CMD when CMD is not on PATH' \
        '  --musl-lib LIB     on musl systems, install LIB when its shared object is missing' \
        '  --workdir DIR      the task workdir; with --session-dir, refuse when the two overlap' \
        '  --session-dir DIR  the session dir (it may not exist yet)' \
        '  --carried-bash FILE  use the image'"'"'s bash when it is 3.2 or later, else FILE (a static' \
        '                     bash the host uploaded); print the one line "bash PATH" on stdout'
}

# The one way this script reports a problem: `bootstrap: ...` on stderr.
err() {
    say "bootstrap: $*" >&2
}

# die STATUS MESSAGE...: report and exit.
die() {
    _d_status=$1
    shift
    err "$@"
    exit "$_d_status"
}

# check_name KIND NAME: command and package names go unquoted into package
# manager command lines, so only plain names are accepted: no glob (* ? [),
# no path, no version operator (= < > ~), no group (@), no removal form
# (apk's !NAME, zypper's -NAME, apt-get's NAME-).
check_name() {
    case $2 in
        '' | [!A-Za-z0-9]* | *[!A-Za-z0-9._+-]* | *-)
            die 2 "invalid $1 name: '$2' (letters, digits and . _ + - only, starting with a letter or digit, not ending in -)"
            ;;
    esac
}

# list_add LISTVAR WORD: append WORD to the blank-separated list named
# LISTVAR unless it is there already. LISTVAR is always a literal name
# from this file, never input.
list_add() {
    _la_list=
    eval "_la_list=\$$1"
    case " $_la_list " in
        *" $2 "*) ;;
        *) eval "$1=\${$1:+\$$1 }\$2" ;;
    esac
}

