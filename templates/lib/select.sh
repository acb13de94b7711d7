# Which artifacts this machine needs: those whose arch is `uname -m` (or any)
# and whose libc is the one this system's programs run on (system_libc in
# musl.sh: glibc wherever a glibc loader is, musl only where musl is all
# there is; or any). Fills `selected` with indices into the art_* arrays.

selected=()
selected_count=0

# machine_arch: sets REPLY to uname -m, with the common aliases folded.
machine_arch() {
    REPLY=$(exec 9>&-; exec uname -m) || REPLY=unknown
    case $REPLY in
        amd64) REPLY=x86_64 ;;
        arm64) REPLY=aarch64 ;;
    esac
}

# select_artifacts: fill `selected`, or exit 4 when nothing fits this machine.
select_artifacts() {
    local arch libc i=0
    machine_arch
    arch=$REPLY
    system_libc
    libc=$REPLY
    while [ "$i" -lt "$art_count" ]; do
        case ${art_arch[$i]} in
            any | "$arch") ;;
            *) i=$((i + 1)); continue ;;
        esac
        case ${art_libc[$i]} in
            any | "$libc") ;;
            *) i=$((i + 1)); continue ;;
        esac
        selected[selected_count]=$i
        selected_count=$((selected_count + 1))
        i=$((i + 1))
    done
    if [ "$selected_count" -eq 0 ]; then
        die 4 "no artifact of $name $version for $arch with $libc"
    fi
}
