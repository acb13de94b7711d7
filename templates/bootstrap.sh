# bootstrap.sh: the first thing shforge runs in somebody else's task image.
#
#   sh bootstrap.sh [--need CMD]... [--musl-lib LIB]... [--workdir DIR --session-dir DIR]
#
# It installs exactly what is missing and nothing else, because whatever it
# installs changes what the agent and the verifier see. It must start under
# any POSIX sh (dash, busybox, mksh, posh, yash, ksh93, zsh, bash 3.2+), so it
# uses no arrays and no `local` (ksh93 has none): names used inside a
# function carry a prefix of that function's initials instead.
#
# Exit status: 0 ok; 2 usage (also: a package name the package manager
# could read as a pattern, a removal or a file); 3 the workdir and the
# session dir overlap; 4 a needed command or musl library could not be
# provided. No package but the one named is ever installed or removed.

# The default IFS, whatever the environment says: package lists below are
# split on blanks, and every name in them is checked first (check_name).
IFS=' 	
'

# The package managers, in the order they are looked for.
PACKAGE_MANAGERS={{ package_managers }}
# The musl libraries --musl-lib knows (src/musl.rs).
MUSL_LIBS_KNOWN={{ musl_known }}

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
        'usage: sh bootstrap.sh [--need CMD]... [--musl-lib LIB]... [--workdir DIR --session-dir DIR]' \
        '  --need CMD         install the package providing CMD when CMD is not on PATH' \
        '  --musl-lib LIB     on musl systems, install LIB when its shared object is missing' \
        '  --workdir DIR      the task workdir; with --session-dir, refuse when the two overlap' \
        '  --session-dir DIR  the session dir (it may not exist yet)'
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

# ---- package names ---------------------------------------------------------

# package_for CMD MANAGER: set pkg to the package that provides CMD under
# MANAGER. Generated from the one table in src/scripts/bootstrap.rs; a
# command it does not list is provided by the package of the same name.
package_for() {
    pkg=$1
    case $1 in
{%- for arm in package_arms %}
{%- if let Some(all) = arm.all %}
        {% for c in arm.commands %}{% if !loop.first %} | {% endif %}{{ c }}{% endfor %}) pkg={{ all }} ;;
{%- else %}
        {% for c in arm.commands %}{% if !loop.first %} | {% endif %}{{ c }}{% endfor %})
            case $2 in
{%- for row in arm.rows %}
                {{ row.manager }}) pkg={{ row.package }} ;;
{%- endfor %}
            esac
            ;;
{%- endif %}
{%- endfor %}
    esac
}

# musl_soname LIB: set soname and pkg for a musl library, from the table in
# src/musl.rs. Unknown libraries are a usage error.
musl_soname() {
    case $1 in
{%- for lib in musl_libs %}
        {{ lib.name }})
            soname={{ lib.soname }}
            pkg={{ lib.package }}
            ;;
{%- endfor %}
        *) die 2 "unknown musl library: '$1' (known: $MUSL_LIBS_KNOWN)" ;;
    esac
}

{% include "lib/musl.sh" %}

# ---- package managers ------------------------------------------------------

# detect_package_manager: set pm to the first package manager found, or to
# nothing. Only called once something is missing.
detect_package_manager() {
    pm=
    for _dpm_name in $PACKAGE_MANAGERS; do
        if on_path "$_dpm_name"; then
            pm=$_dpm_name
            return 0
        fi
    done
    return 1
}

# exact_line NAME: succeeds when a line of stdin is exactly NAME.
exact_line() {
    while IFS= read -r _el_line; do
        if [ "$_el_line" = "$1" ]; then
            return 0
        fi
    done
    return 1
}

# apt_exact PKG: succeeds when apt knows a package named exactly PKG.
# `apt-cache pkgnames PREFIX` lists real package names by plain prefix (no
# pattern, no virtual package), so an exact line is an exact package.
apt_exact() {
    apt-cache pkgnames "$1" 2>/dev/null | exact_line "$1"
}

# refuse_inexact MANAGER PKG...: exit 2 when the manager could read a name
# as something else than the package of that name. apt-get reads a name with
# `.` or `+` as a regular expression (and NAME+ as "install") when no package
# has that exact name: such a name must name a package exactly. apk reads a
# name ending in .apk as a package file. (NAME- is refused by check_name.)
refuse_inexact() {
    _ri_pm=$1
    shift
    for _ri_pkg in "$@"; do
        case $_ri_pm:$_ri_pkg in
            apt-get:*[.+]*)
                apt_exact "$_ri_pkg" ||
                    die 2 "refusing package '$_ri_pkg': apt-get has no package of exactly that name and would read it as a pattern"
                ;;
            apk:*.apk)
                die 2 "refusing package '$_ri_pkg': apk would read it as a package file"
                ;;
        esac
    done
}

# install_packages MANAGER PKG...: install non-interactively. The package
# manager's own output goes to stderr: stdout is left to the caller.
# apt-get's index is refreshed at most once per run, and only here, when an
# install is needed.
install_packages() {
    _ip_pm=$1
    shift
    case $_ip_pm in
        apk)
            refuse_inexact apk "$@"
            apk add --no-cache "$@" >&2
            ;;
        apt-get)
            if [ -z "$apt_updated" ]; then
                apt_updated=1
                DEBIAN_FRONTEND=noninteractive apt-get update >&2 ||
                    err "apt-get update failed (exit $?); trying the install anyway"
            fi
            # Only with the index fresh can a name be checked against it.
            refuse_inexact apt-get "$@"
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >&2
            ;;
        dnf | microdnf | yum)
            "$_ip_pm" -y install "$@" >&2
            ;;
        zypper)
            zypper --non-interactive install "$@" >&2
            ;;
    esac
}

# ---- --need ----------------------------------------------------------------

# on_path CMD: succeeds when an executable file CMD is in a PATH directory.
# Not `command -v`: that also accepts builtins, functions and busybox's
# in-shell applets, which the programs started later cannot run. An empty
# PATH entry means the current directory, as for execvp.
on_path() {
    _op_rest=$PATH
    while :; do
        _op_dir=${_op_rest%%:*}
        if [ -f "${_op_dir:-.}/$1" ] && [ -x "${_op_dir:-.}/$1" ]; then
            return 0
        fi
        case $_op_rest in
            *:*) _op_rest=${_op_rest#*:} ;;
            *) return 1 ;;
        esac
    done
}

# provide_commands: install the packages of every needed command that is
# not on PATH, in one package manager call, then check each command again.
provide_commands() {
    _pc_missing=
    for _pc_cmd in $needs; do
        on_path "$_pc_cmd" || list_add _pc_missing "$_pc_cmd"
    done
    [ -n "$_pc_missing" ] || return 0

    if ! detect_package_manager; then
        for _pc_cmd in $_pc_missing; do
            err "cannot provide command $_pc_cmd: no package manager found (package managers tried: $PACKAGE_MANAGERS)"
        done
        exit 4
    fi

    _pc_pkgs=
    for _pc_cmd in $_pc_missing; do
        package_for "$_pc_cmd" "$pm"
        list_add _pc_pkgs "$pkg"
    done
    # Word splitting of a checked, blank-separated list is intended here.
    # shellcheck disable=SC2086 # names passed check_name: no blanks, no globs
    install_packages "$pm" $_pc_pkgs
    _pc_status=$?

    _pc_failed=
    for _pc_cmd in $_pc_missing; do
        if ! on_path "$_pc_cmd"; then
            package_for "$_pc_cmd" "$pm"
            err "cannot provide command $_pc_cmd: $pm did not install it (package $pkg, $pm exited with $_pc_status; package managers tried: $pm)"
            _pc_failed=1
        fi
    done
    [ -z "$_pc_failed" ] || exit 4
}

# ---- --musl-lib ------------------------------------------------------------

# provide_musl_libs: on musl only, apk-install the package of every needed
# library whose shared object is in no musl library directory.
provide_musl_libs() {
    [ -n "$musl_libs" ] || return 0
    is_musl || return 0
    _pml_missing=
    _pml_pkgs=
    for _pml_lib in $musl_libs; do
        musl_soname "$_pml_lib"
        if ! musl_lib_present "$soname"; then
            list_add _pml_missing "$_pml_lib"
            list_add _pml_pkgs "$pkg"
        fi
    done
    [ -n "$_pml_missing" ] || return 0

    if ! on_path apk; then
        for _pml_lib in $_pml_missing; do
            musl_soname "$_pml_lib"
            err "cannot provide musl library $_pml_lib ($soname): apk not found (package managers tried: apk)"
        done
        exit 4
    fi
    # shellcheck disable=SC2086 # names passed check_name: no blanks, no globs
    install_packages apk $_pml_pkgs
    _pml_status=$?

    _pml_failed=
    for _pml_lib in $_pml_missing; do
        musl_soname "$_pml_lib"
        if ! musl_lib_present "$soname"; then
            err "cannot provide musl library $_pml_lib: $soname is still in no musl library directory (package $pkg, apk exited with $_pml_status; package managers tried: apk)"
            _pml_failed=1
        fi
    done
    [ -z "$_pml_failed" ] || exit 4
}

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

# ---- arguments -------------------------------------------------------------

# add_baked_needs: what the generator baked in (nothing in the generic
# script; an adapter's variant may need python3, libstdc++, ...).
add_baked_needs() {
{%- for cmd in needs %}
    list_add needs {{ cmd }}
{%- endfor %}
{%- for lib in baked_musl_libs %}
    list_add musl_libs {{ lib }}
{%- endfor %}
    :
}

# parse_args ARG...: fill needs, musl_libs, workdir and session_dir.
parse_args() {
    while [ "$#" -gt 0 ]; do
        case $1 in
            --need | --musl-lib | --workdir | --session-dir)
                [ "$#" -ge 2 ] || die 2 "$1 needs a value (see --help)"
                _pa_opt=$1
                _pa_val=$2
                shift 2
                ;;
            --need=* | --musl-lib=* | --workdir=* | --session-dir=*)
                _pa_opt=${1%%=*}
                _pa_val=${1#*=}
                shift
                ;;
            -h | --help)
                usage
                exit 0
                ;;
            *)
                usage >&2
                die 2 "unknown argument: '$1'"
                ;;
        esac
        case $_pa_opt in
            --need)
                check_name command "$_pa_val"
                list_add needs "$_pa_val"
                ;;
            --musl-lib)
                check_name 'musl library' "$_pa_val"
                musl_soname "$_pa_val"
                list_add musl_libs "$_pa_val"
                ;;
            --workdir)
                [ -n "$_pa_val" ] || die 2 "--workdir needs a non-empty value"
                workdir=$_pa_val
                have_workdir=1
                ;;
            --session-dir)
                [ -n "$_pa_val" ] || die 2 "--session-dir needs a non-empty value"
                session_dir=$_pa_val
                have_session_dir=1
                ;;
        esac
    done
    if [ "$have_workdir" != "$have_session_dir" ]; then
        die 2 "--workdir and --session-dir go together"
    fi
}

main() {
    needs=
    musl_libs=
    workdir=
    session_dir=
    have_workdir=
    have_session_dir=
    apt_updated=
    add_baked_needs
    parse_args "$@"
    # Refuse an overlap before anything is installed.
    if [ -n "$have_workdir" ]; then
        (check_overlap) || exit
    fi
    provide_commands
    provide_musl_libs
}

main "$@"
