# Shared musl-library functions (POSIX sh; also included by bash scripts).
# ldd is not on every image, so musl is recognised by its loader, and a
# library counts as present when its shared object is in any directory the
# musl loader searches: /lib, /usr/lib, /usr/local/lib and every directory
# listed (one per line or colon-separated) in /etc/ld-musl-*.path.
# Function-local names carry a prefix instead of `local`: ksh93 has no local.

# Succeeds on a musl system.
is_musl() {
    for _im_loader in /lib/ld-musl-*.so.1; do
        if [ -e "$_im_loader" ]; then
            return 0
        fi
    done
    return 1
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
