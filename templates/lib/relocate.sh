# The private glibc runtime: where the image's libc cannot run the harness's
# glibc programs (a musl image, or a glibc older than the highest GLIBC_
# version they need, recorded at build time), the installer takes the
# `runtime = "private"` artifacts instead of the `runtime = "image"` ones: the
# runtime (a hardened loader, libc, libstdc++, libgcc_s) and programs
# prepared on the host with fixed-size placeholders for their interpreter
# and library path. Here those placeholders get the install's real
# absolute paths, with POSIX tools only (dd, tr; no patchelf):
#
#   1. the artifact's sha256 was checked before unpacking (digest.sh);
#   2. each placeholder must hold its marker text (else exit 5);
#   3. both are zeroed, and the file's sha256 must then be the one recorded
#      at build time with them zeroed (else exit 5): no other byte differs;
#   4. the paths are written in (the zeroed rest is the NUL padding) and read
#      back; only then is the install renamed into place and its entry run.
#
# The paths are absolute, so a relocated install that is moved elsewhere
# would still load the old location's loader: the reuse check compares the
# placeholders with the paths of this install first, and reinstalls.

use_private=0
glibc_seen=
machine=
# Why the private runtime is used, for the log.
private_why=

# rel_applies I: entry I belongs to an artifact for this machine's arch.
rel_applies() {
    case ${art_arch[${rel_art[$1]}]} in
        any | "$machine") return 0 ;;
    esac
    return 1
}

# only_private_artifacts: succeeds when every artifact for this machine's
# arch is a `runtime = "private"` one.
only_private_artifacts() {
    local i=0
    while [ "$i" -lt "$art_count" ]; do
        case ${art_arch[$i]} in
            any | "$machine")
                [ "${art_runtime[$i]}" = private ] || return 1
                ;;
        esac
        i=$((i + 1))
    done
    return 0
}

# glibc_version_of_image: sets REPLY to the image's glibc version (2.36), or
# to nothing. No program of the image is run but getconf (glibc's own).
glibc_version_of_image() {
    local out f re='^glibc ([0-9]+[.][0-9]+)' vre='^libc-([0-9]+[.][0-9]+)[.]so$'
    REPLY=
    if command -v getconf >/dev/null 2>&1; then
        out=$(exec 9>&-; exec getconf GNU_LIBC_VERSION 2>/dev/null) || out=
        if [[ $out =~ $re ]]; then
            REPLY=${BASH_REMATCH[1]}
            return 0
        fi
    fi
    for f in /lib64/libc.so.6 /lib/*-linux-gnu/libc.so.6 /usr/lib64/libc.so.6 \
        /usr/lib/*-linux-gnu/libc.so.6 /lib/libc.so.6 /usr/lib/libc.so.6; do
        [ -e "$f" ] || continue
        # Before 2.34 libc.so.6 is a link to libc-2.NN.so.
        if [ -L "$f" ]; then
            out=$(exec 9>&-; exec readlink "$f") || out=
            if [[ ${out##*/} =~ $vre ]]; then
                REPLY=${BASH_REMATCH[1]}
                return 0
            fi
        fi
        # "GNU C Library (...) stable release version 2.36."
        out=$(exec 9>&-; tr '\000' '\n' < "$f" | sed -n 's/.*release version \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | sed -n 1p) || out=
        if [ -n "$out" ]; then
            REPLY=$out
            return 0
        fi
    done
    return 1
}

# version_older A B: succeeds when version A (N.N) is older than B.
version_older() {
    local a1=${1%%.*} a2=${1#*.} b1=${2%%.*} b2=${2#*.}
    [ "$a1" -lt "$b1" ] || { [ "$a1" -eq "$b1" ] && [ "${a2%%.*}" -lt "${b2%%.*}" ]; }
}

# decide_runtime: set use_private. Only a spec with prepared programs for
# this arch has a choice; --glibc-runtime private|image forces it there.
decide_runtime() {
    use_private=0
    [ "$rel_count" -gt 0 ] || return 0
    machine_arch
    machine=$REPLY
    # No prepared program for this arch: the image's libc it is.
    local i=0 any=0
    while [ "$i" -lt "$rel_count" ]; do
        if rel_applies "$i"; then
            any=1
            break
        fi
        i=$((i + 1))
    done
    [ "$any" -eq 1 ] || return 0
    case $glibc_runtime in
        private)
            use_private=1
            private_why="--glibc-runtime private"
            return 0
            ;;
        image) return 0 ;;
    esac
    # Every artifact for this arch is private (a Python harness: its
    # interpreter never uses the image's libc or libraries): no choice.
    if only_private_artifacts; then
        use_private=1
        private_why="no artifact of this spec runs on the image's libc"
        return 0
    fi
    if is_musl; then
        use_private=1
        private_why="a musl system"
        return 0
    fi
    if glibc_version_of_image; then
        glibc_seen=$REPLY
        if version_older "$glibc_seen" "$glibc_needed"; then
            use_private=1
            private_why="glibc $glibc_seen, older than the $glibc_needed needed"
        fi
    else
        # No glibc found at all: nothing of the image can run them.
        use_private=1
        private_why="no glibc found"
    fi
    return 0
}

# rel_paths I ROOT: sets rel_interp_path and rel_rpath_path, the values
# entry I gets in an install at ROOT.
rel_paths() {
    local dir rest=${rel_rpath[$1]}
    rel_interp_path=$2/${rel_interp[$1]}
    rel_rpath_path=
    while [ -n "$rest" ]; do
        dir=${rest%%:*}
        case $rest in
            *:*) rest=${rest#*:} ;;
            *) rest= ;;
        esac
        rel_rpath_path=$rel_rpath_path${rel_rpath_path:+:}$2/$dir
    done
}

# relocate_check_prefix: exit 2 unless the install's paths fit every
# placeholder and can be a library path (no `:`). Nothing is written before.
relocate_check_prefix() {
    local i=0
    [ "$use_private" -eq 1 ] || return 0
    case $final in
        *:*) die 2 "--prefix may not hold a ':' where the private glibc runtime is used (it separates library path entries): $final" ;;
    esac
    while [ "$i" -lt "$rel_count" ]; do
        rel_applies "$i" || { i=$((i + 1)); continue; }
        rel_paths "$i" "$final"
        if [ "${#rel_interp_path}" -ge "${rel_interp_size[$i]}" ] ||
            [ "${#rel_rpath_path}" -ge "${rel_rpath_size[$i]}" ]; then
            die 2 "--prefix is too long for the private glibc runtime: $rel_interp_path must be under ${rel_interp_size[$i]} bytes and $rel_rpath_path under ${rel_rpath_size[$i]}"
        fi
        i=$((i + 1))
    done
}

# placeholder_marker TAG SIZE: sets REPLY to the text prepare.sh wrote
# (SIZE-1 bytes).
placeholder_marker() {
    REPLY="/@shforge-$1-placeholder@/"
    while [ "${#REPLY}" -lt "$(($2 - 1))" ]; do
        REPLY=${REPLY}xxxxxxxxxxxxxxxx
    done
    REPLY=${REPLY:0:$(($2 - 1))}
}

# region_text FILE OFFSET LEN: sets REPLY to the bytes there, NULs dropped.
region_text() {
    REPLY=$(exec 9>&-; dd if="$1" bs=1 skip="$2" count="$3" 2>/dev/null | tr -d '\000') || REPLY=
}

# region_zero FILE OFFSET LEN: NULs there, in place.
region_zero() {
    dd if=/dev/zero of="$1" bs=1 seek="$2" count="$3" conv=notrunc 2>/dev/null 9>&-
}

# region_write FILE OFFSET TEXT: TEXT there, in place (the rest stays NUL).
region_write() {
    printf '%s' "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null 9>&-
}

# relocate_one I ROOT: write the paths of an install at `final` into entry
# I's program under ROOT (the stage), or exit 5/6 (see the top).
relocate_one() {
    local f=$2/${rel_file[$1]} what=${rel_file[$1]}
    if [ ! -f "$f" ] || [ -L "$f" ]; then
        die 5 "prepared program $what is not in its artifact"
    fi
    placeholder_marker interp "${rel_interp_size[$1]}"
    local want_interp=$REPLY
    placeholder_marker rpath "${rel_rpath_size[$1]}"
    local want_rpath=$REPLY
    region_text "$f" "${rel_interp_off[$1]}" "${rel_interp_size[$1]}"
    [ "$REPLY" = "$want_interp" ] ||
        die 5 "prepared program $what: no interpreter placeholder at byte ${rel_interp_off[$1]} (tampered with, or relocated already)"
    region_text "$f" "${rel_rpath_off[$1]}" "${rel_rpath_size[$1]}"
    [ "$REPLY" = "$want_rpath" ] ||
        die 5 "prepared program $what: no library path placeholder at byte ${rel_rpath_off[$1]} (tampered with, or relocated already)"
    if ! region_zero "$f" "${rel_interp_off[$1]}" "${rel_interp_size[$1]}" ||
        ! region_zero "$f" "${rel_rpath_off[$1]}" "${rel_rpath_size[$1]}"; then
        die 6 "cannot write into $what"
    fi
    verify_digest "$f" "${rel_zeroed[$1]}" "$what with its placeholders zeroed"
    rel_paths "$1" "$final"
    if ! region_write "$f" "${rel_interp_off[$1]}" "$rel_interp_path" ||
        ! region_write "$f" "${rel_rpath_off[$1]}" "$rel_rpath_path"; then
        die 6 "cannot write into $what"
    fi
    relocated_ok "$1" "$2" || die 6 "$what does not hold its new paths after writing them"
}

# relocated_ok I ROOT: entry I's program under ROOT holds the paths of an
# install at `final`.
relocated_ok() {
    local f=$2/${rel_file[$1]}
    [ -f "$f" ] || return 1
    rel_paths "$1" "$final"
    region_text "$f" "${rel_interp_off[$1]}" "${rel_interp_size[$1]}"
    [ "$REPLY" = "$rel_interp_path" ] || return 1
    region_text "$f" "${rel_rpath_off[$1]}" "${rel_rpath_size[$1]}"
    [ "$REPLY" = "$rel_rpath_path" ]
}

# relocate_selected ROOT: relocate the prepared programs of every selected
# artifact (the stage's root, before the rename).
relocate_selected() {
    local i=0
    [ "$use_private" -eq 1 ] || return 0
    while [ "$i" -lt "$rel_count" ]; do
        rel_applies "$i" && relocate_one "$i" "$1"
        i=$((i + 1))
    done
}

# relocation_current: the install at final holds the paths of final (a moved
# install does not: it would load another location's loader).
relocation_current() {
    local i=0
    [ "$use_private" -eq 1 ] || return 0
    while [ "$i" -lt "$rel_count" ]; do
        if rel_applies "$i" && ! relocated_ok "$i" "$final"; then
            return 1
        fi
        i=$((i + 1))
    done
}

# image_filter_selected: where the image's libc is used, drop the selected
# artifacts that are only for the private runtime; exit 4 when none is left.
image_filter_selected() {
    local k=0 keep=() n=0
    while [ "$k" -lt "$selected_count" ]; do
        if [ "${art_runtime[${selected[$k]}]}" != private ]; then
            keep[n]=${selected[$k]}
            n=$((n + 1))
        fi
        k=$((k + 1))
    done
    selected=(${keep[@]+"${keep[@]}"})
    selected_count=$n
    if [ "$selected_count" -eq 0 ]; then
        die 4 "no artifact of $name $version for this machine with the image's libc"
    fi
}

# select_private_artifacts: the artifacts for the private glibc runtime:
# this arch, built for glibc (or any libc), not only for the image's libc.
select_private_artifacts() {
    local arch=$machine i=0
    selected=()
    selected_count=0
    while [ "$i" -lt "$art_count" ]; do
        case ${art_arch[$i]}/${art_libc[$i]}/${art_runtime[$i]} in
            any/*/image | "$arch"/*/image) ;;
            any/glibc/* | any/any/* | "$arch"/glibc/* | "$arch"/any/*)
                selected[selected_count]=$i
                selected_count=$((selected_count + 1))
                ;;
        esac
        i=$((i + 1))
    done
    if [ "$selected_count" -eq 0 ]; then
        die 4 "no artifact of $name $version for $arch with the private glibc runtime"
    fi
}
