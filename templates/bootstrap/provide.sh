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

