# The musl libraries the runtime needs (musl systems only): present when the
# shared object is in any musl library directory (musl.sh), otherwise added
# with `apk add`; exit 7 when that is impossible. The soname and package
# tables come from src/musl.rs.

musl_missing=()
musl_missing_count=0
musl_missing_list=

# musl_find_missing: fill musl_missing with the packages whose library is absent.
musl_find_missing() {
    local i=0
    musl_missing=()
    musl_missing_count=0
    musl_missing_list=
    [ "$musl_count" -gt 0 ] || return 0
    is_musl || return 0
    while [ "$i" -lt "$musl_count" ]; do
        if ! musl_lib_present "${musl_soname[$i]}"; then
            musl_missing[musl_missing_count]=${musl_package[$i]}
            musl_missing_count=$((musl_missing_count + 1))
            musl_missing_list=$musl_missing_list${musl_missing_list:+ }${musl_package[$i]}
        fi
        i=$((i + 1))
    done
}

# ensure_musl_libs: install what is missing, or exit 7.
ensure_musl_libs() {
    local i=0
    musl_find_missing
    [ "$musl_missing_count" -gt 0 ] || return 0
    if ! command -v apk >/dev/null 2>&1; then
        die 7 "musl libraries missing (packages: $musl_missing_list) and no apk to add them"
    fi
    say "adding musl libraries: $musl_missing_list"
    # apk's output goes to stderr: stdout ends with the entry path only.
    apk add --no-cache ${musl_missing[@]+"${musl_missing[@]}"} >&2 9>&- ||
        die 7 "apk add $musl_missing_list failed"
    while [ "$i" -lt "$musl_count" ]; do
        musl_lib_present "${musl_soname[$i]}" ||
            die 7 "${musl_soname[$i]} is still in no musl library directory after apk add"
        i=$((i + 1))
    done
}
