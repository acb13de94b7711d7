# Shared libc functions (POSIX sh; also included by bash scripts).
# ldd is not on every image, so the libc is recognised by the loaders that
# are installed and by the loader the image's own /bin/sh names, and a
# musl library counts as present when its shared object is in any directory
# the musl loader searches: /lib, /usr/lib, /usr/local/lib and every
# directory listed (one per line or colon-separated) in /etc/ld-musl-*.path.
# Function-local names carry a prefix instead of `local`: ksh93 has no local.
# Results come back in REPLY. External commands close fd 9 (the installer's
# lock).

# elf_interp FILE: set REPLY to the program interpreter FILE names (its
# PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2), read from the ELF headers
# with od and dd, the only tools every image has (busybox included; it has
# no readelf, and its grep has no -b). Empty for a static program, a
# script, a big-endian or unreadable file, or when od is missing.
# Offsets: e_phoff at 32 (ELF64) or 28 (ELF32), e_phentsize and e_phnum
# after it; in a program header p_type first (PT_INTERP = 3), then p_offset
# and p_filesz.
elf_interp() {
    REPLY=
    _ei_file=$1
    [ -f "$_ei_file" ] && [ -r "$_ei_file" ] || return 0
    # shellcheck disable=SC2046 # od prints numbers: splitting them is the point
    set -- $(od -An -tu1 -N 64 -- "$_ei_file" 2>/dev/null 9>&-)
    [ "$#" -eq 64 ] || return 0
    # \177ELF, little-endian (EI_DATA 1).
    [ "$1 $2 $3 $4 $6" = "127 69 76 70 1" ] || return 0
    case $5 in
        2)
            [ "${37}${38}${39}${40}" = 0000 ] || return 0
            _ei_phoff=$((${33} + ${34} * 256 + ${35} * 65536 + ${36} * 16777216))
            _ei_phentsize=$((${55} + ${56} * 256))
            _ei_phnum=$((${57} + ${58} * 256))
            _ei_at=8
            _ei_gap=24
            ;;
        1)
            _ei_phoff=$((${29} + ${30} * 256 + ${31} * 65536 + ${32} * 16777216))
            _ei_phentsize=$((${43} + ${44} * 256))
            _ei_phnum=$((${45} + ${46} * 256))
            _ei_at=4
            _ei_gap=12
            ;;
        *) return 0 ;;
    esac
    # A sane header table only: at most 256 entries, each big enough.
    [ "$_ei_phnum" -ge 1 ] && [ "$_ei_phnum" -le 256 ] &&
        [ "$_ei_phentsize" -ge $((_ei_at + _ei_gap + 4)) ] &&
        [ "$_ei_phentsize" -le 128 ] || return 0
    # shellcheck disable=SC2046 # as above
    set -- $(od -An -tu1 -j "$_ei_phoff" -N $((_ei_phnum * _ei_phentsize)) -- "$_ei_file" 2>/dev/null 9>&-)
    while [ "$#" -ge "$_ei_phentsize" ]; do
        if [ "$1 $2 $3 $4" = "3 0 0 0" ]; then
            shift "$_ei_at"
            _ei_off=$(($1 + $2 * 256 + $3 * 65536 + $4 * 16777216))
            shift "$_ei_gap"
            _ei_len=$(($1 + $2 * 256 + $3 * 65536 + $4 * 16777216))
            [ "$_ei_len" -ge 2 ] && [ "$_ei_len" -le 4096 ] || return 0
            # The string ends in a NUL, which no shell variable can hold.
            REPLY=$(dd if="$_ei_file" bs=1 skip="$_ei_off" count="$_ei_len" 2>/dev/null 9>&- |
                tr -d '\000' 9>&-)
            return 0
        fi
        shift "$_ei_phentsize"
    done
}

# glibc_loader_present: succeeds when a glibc program loader is installed
# (/lib64/ld-linux-x86-64.so.2, /lib/ld-linux-aarch64.so.1, ...). Alpine's
# gcompat installs one too, to run glibc programs: it counts as glibc.
glibc_loader_present() {
    for _glp_loader in /lib64/ld-linux*.so.* /lib/ld-linux*.so.* /lib64/ld64.so.* /lib/ld64.so.*; do
        if [ -e "$_glp_loader" ]; then
            return 0
        fi
    done
    return 1
}

# musl_loader_present: succeeds when a musl loader /lib/ld-musl-*.so.1 is installed.
musl_loader_present() {
    for _mlp_loader in /lib/ld-musl-*.so.1; do
        if [ -e "$_mlp_loader" ]; then
            return 0
        fi
    done
    return 1
}

# system_libc: set REPLY to the libc this system's own programs run on.
# glibc when a glibc loader is installed, even beside a musl one (Debian's
# musl package, which musl-tools pulls in, adds /lib/ld-musl-x86_64.so.1 to
# a glibc system), or when /bin/sh or /usr/bin/env names a loader that is
# not musl's (a glibc at a path of its own); musl only when musl is all it
# has; glibc when no loader is found at all (a static-only image), as before.
system_libc() {
    if glibc_loader_present; then
        REPLY=glibc
        return 0
    fi
    for _sl_prog in /bin/sh /usr/bin/env; do
        elf_interp "$_sl_prog"
        case $REPLY in
            '') ;;
            */ld-musl-*) break ;;
            *)
                REPLY=glibc
                return 0
                ;;
        esac
    done
    if musl_loader_present; then
        REPLY=musl
    else
        REPLY=glibc
    fi
}

# Succeeds on a musl system (system_libc); sets REPLY as it does.
is_musl() {
    system_libc
    [ "$REPLY" = musl ]
}

# musl_dir_has DIR SONAME: succeeds when DIR holds SONAME.
musl_dir_has() {
    [ -n "$1" ] && [ -e "$1/$2" ]
}

# musl_lib_present SONAME: succeeds when SONAME is in a musl library directory.
musl_lib_present() {
    for _mlp_dir in /lib /usr/lib /usr/local/lib; do
        if musl_dir_has "$_mlp_dir" "$1"; then
            return 0
        fi
    done
    for _mlp_file in /etc/ld-musl-*.path; do
        [ -r "$_mlp_file" ] || continue
        while IFS= read -r _mlp_line || [ -n "$_mlp_line" ]; do
            _mlp_rest=$_mlp_line
            while [ -n "$_mlp_rest" ]; do
                _mlp_dir=${_mlp_rest%%:*}
                case $_mlp_rest in
                    *:*) _mlp_rest=${_mlp_rest#*:} ;;
                    *) _mlp_rest= ;;
                esac
                if musl_dir_has "$_mlp_dir" "$1"; then
                    return 0
                fi
            done
        done < "$_mlp_file"
    done
    return 1
}
