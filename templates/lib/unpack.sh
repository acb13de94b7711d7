# Unpacking a verified artifact into the staging directory: a single file
# (with its mode), a tar.gz or a tar.xz. Decompression goes through a pipe so
# that any tar (GNU or busybox) works; pipefail makes either side's failure
# count. -o: never restore the archive's owners, even as root.

# unpack_artifact FILE KIND DEST MODE: DEST is a path for `file`, a directory
# for archives.
unpack_artifact() {
    case $2 in
        file)
            case $3 in
                */*) mkdir -p "${3%/*}" || return 1 ;;
            esac
            mv -f "$1" "$3" && chmod "$4" "$3"
            ;;
        tar.gz)
            command -v gzip >/dev/null 2>&1 || die 6 "gzip is needed to unpack $1"
            mkdir -p "$3" && gzip -dc < "$1" 9>&- | tar -xof - -C "$3" 9>&-
            ;;
        tar.xz)
            command -v xz >/dev/null 2>&1 || die 6 "xz is needed to unpack $1"
            mkdir -p "$3" && xz -dc < "$1" 9>&- | tar -xof - -C "$3" 9>&-
            ;;
        *)
            return 1
            ;;
    esac
}
