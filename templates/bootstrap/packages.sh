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

