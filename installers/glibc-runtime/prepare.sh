#!/bin/sh
# Host side (not run in the sandbox): prepare a glibc program of a pinned
# archive for the private glibc runtime (build.sh). The program gets a
# fixed-size placeholder for its interpreter (PT_INTERP) and for its library
# path (DT_RPATH, not RUNPATH: RUNPATH is not used for libc's own dlopens),
# and the archive is written again, deterministically (sorted names, mtime 0,
# owner 0, gzip without a timestamp). The installer later writes the real
# absolute paths into the placeholders with POSIX tools only
# (templates/lib/relocate.sh), after checking the digests printed here.
#
# usage: sh installers/glibc-runtime/prepare.sh IN.tgz MEMBER OUT.tar.gz [--arch ARCH]
#   MEMBER: the program's path inside the archive (package/bin/node).
#   --arch x86_64|aarch64: the program's arch; default aarch64 when IN's or
#   OUT's file name says arm64 or aarch64, else x86_64. A program of another
#   arch (its ELF e_machine) is refused, and the printed table names that
#   arch's loader (glibc/ld-linux-x86-64.so.2, glibc/ld-linux-aarch64.so.1).
# Prints the [[artifact.relocate]] table to paste into the spec (offsets,
# sizes, the sha256 of the program with both placeholders zeroed, and the
# highest GLIBC_ symbol version it needs), then the archive's sha256.
# needs: python3, readelf, GNU grep, GNU tar, gzip, sha256sum, dd.
set -eu

usage() {
    printf 'usage: sh installers/glibc-runtime/prepare.sh IN.tgz MEMBER OUT.tar.gz [--arch x86_64|aarch64]\n' >&2
    exit 2
}
[ "$#" -eq 3 ] || [ "$#" -eq 5 ] || usage
in=$1
member=$2
out=$3
case ${in##*/}/${out##*/} in
    *arm64* | *aarch64*) arch=aarch64 ;;
    *) arch=x86_64 ;;
esac
if [ "$#" -eq 5 ]; then
    [ "$4" = --arch ] || usage
    arch=$5
fi
case $arch in
    x86_64) loader=ld-linux-x86-64.so.2 ;;
    aarch64) loader=ld-linux-aarch64.so.1 ;;
    *) printf 'prepare.sh: unknown --arch %s (x86_64 or aarch64)\n' "$arch" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

die() {
    printf 'prepare.sh: %s\n' "$1" >&2
    exit 1
}

# Sizes with the NUL: a prefix up to about 200 bytes fits both.
interp_size=256
rpath_size=512

# marker TAG SIZE: SIZE-1 bytes, recognisable and unique in the file.
marker() {
    m="/@shforge-$1-placeholder@/"
    while [ "${#m}" -lt "$(($2 - 1))" ]; do m=${m}x; done
    printf '%s\n' "$m"
}
interp_marker=$(marker interp "$interp_size")
rpath_marker=$(marker rpath "$rpath_size")

mkdir "$work/tree"
tar -xzf "$in" -C "$work/tree"
bin=$work/tree/$member
[ -f "$bin" ] || die "$member is not a file of $in"
size_before=$(wc -c < "$bin")
# The highest GLIBC_ version the program asks for (its version needs), read
# before the headers change.
glibc=$(readelf -V --wide "$bin" 2>/dev/null | sed -n 's/.*Name: GLIBC_\([0-9][0-9.]*\) .*/\1/p' |
    sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
[ -n "$glibc" ] || die "$member: no GLIBC_ version needed: not a glibc program?"
# Not patchelf: it shifts the file's segments to make room, and a Bun
# single-file executable then crashes at start (SIGSEGV, OpenCode 1.17.11).
# elf_placeholders.py appends one page and moves no existing byte.
# shellcheck disable=SC2046 # the four numbers it prints, split on purpose
set -- $(python3 "$(dirname "$0")/elf_placeholders.py" "$bin" "$interp_marker" "$rpath_marker" "$arch")
[ "$#" -eq 4 ] || die "elf_placeholders.py failed on $member"
interp_off=$1
rpath_off=$3
if [ "$2" -ne "$interp_size" ] || [ "$4" -ne "$rpath_size" ]; then
    die "placeholder sizes differ"
fi
size_after=$(wc -c < "$bin")
# The placeholders must be what the loader reads: cross-check with readelf
# and with the bytes at the offsets.
readelf -lW "$bin" 2>/dev/null | grep -q "Requesting program interpreter: $interp_marker]" ||
    die "$member: PT_INTERP is not the placeholder"
[ "$(dd if="$bin" bs=1 skip="$rpath_off" count=$((rpath_size - 1)) status=none)" = "$rpath_marker" ] ||
    die "$member: the rpath placeholder is not at $rpath_off"
readelf -dW "$bin" 2>/dev/null | grep -q '(RUNPATH)' && die "$member: has a RUNPATH"
readelf -dW "$bin" 2>/dev/null | grep -q '(RPATH)' || die "$member: no RPATH"

# The digest of the program with both placeholders zeroed: what the
# installer checks after zeroing them itself, before writing the paths.
cp "$bin" "$work/zeroed"
head -c "$interp_size" /dev/zero | dd of="$work/zeroed" bs=1 seek="$interp_off" conv=notrunc status=none
head -c "$rpath_size" /dev/zero | dd of="$work/zeroed" bs=1 seek="$rpath_off" conv=notrunc status=none
zeroed=$(sha256sum < "$work/zeroed")
zeroed=${zeroed%% *}

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    --mode=u+rwX,go+rX,go-w -C "$work/tree" -cf - . | gzip -n -9 > "$out.tmp"
mv "$out.tmp" "$out"
sha=$(sha256sum < "$out")

cat <<EOF
# $member: $size_before bytes before, $size_after after.
[[artifact.relocate]]
file = "$member"
interpreter = "glibc/$loader"
rpath = ["glibc"]
interp_offset = $interp_off
interp_size = $interp_size
rpath_offset = $rpath_off
rpath_size = $rpath_size
zeroed_sha256 = "$zeroed"
glibc = "$glibc"
# archive: sha256 = "${sha%% *}", size = $(wc -c < "$out")
EOF
