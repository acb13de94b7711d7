#!/bin/sh
# Host side (not run in the sandbox): build the private glibc runtime that an
# installer unpacks next to a prepared glibc program (see prepare.sh), so the
# program runs on musl images and on images whose glibc is too old, with
# nothing added to the image.
#
# From the pinned Debian packages in packages.txt (each .deb's sha256 is
# checked) it takes the loader, libc and its companions, libstdc++ and
# libgcc_s, hardens the loader so that it never reads the image's
# /etc/ld.so.cache or /etc/ld.so.preload and never searches the image's
# library directories (libc's gconv directory likewise), and writes a
# deterministic tar.gz (sorted names, mtime 0, owner 0, fixed modes, gzip
# without a timestamp) with a NOTICE: the same packages give the same bytes.
#
# usage: sh installers/glibc-runtime/build.sh OUT.tar.gz [--debs DIR] [--arch ARCH] [--release R]
#   --debs DIR: take the .debs from DIR (fetched there with apt-get download
#   when absent; default: a temporary directory).
#   --release R: bookworm (default; glibc 2.36) or trixie
#   (packages-trixie.txt, or packages-trixie-aarch64.txt for aarch64; glibc
#   2.41, for programs needing more than 2.36: the portable CPython 3.13).
#   installers/debs.sh fetches the .debs.
#   --arch x86_64|aarch64: the runtime's arch; default aarch64 for an OUT
#   named *-aarch64.tar.gz, else x86_64 (so the spec's `source` line alone
#   says which). x86_64 reads packages.txt (amd64 .debs), aarch64
#   packages-aarch64.txt (arm64 .debs, fetched by apt-get with a private
#   arm64 package list in the temporary directory: the host's apt state is
#   not touched). Both build on an x86_64 host; nothing of the runtime runs.
# needs: apt-get (unless --debs has them all), dpkg-deb, GNU grep, GNU tar,
# gzip, sha256sum, od, dd.
set -eu

usage() {
    printf 'usage: sh installers/glibc-runtime/build.sh OUT.tar.gz [--debs DIR] [--arch x86_64|aarch64] [--release bookworm|trixie]\n' >&2
    exit 2
}
[ "$#" -ge 1 ] || usage
out=$1
shift
debs=
release=bookworm
case $out in
    *-aarch64.tar.gz) arch=aarch64 ;;
    *) arch=x86_64 ;;
esac
while [ "$#" -gt 0 ]; do
    case $1 in
        --debs) [ "$#" -ge 2 ] || usage; debs=$2; shift 2 ;;
        --arch) [ "$#" -ge 2 ] || usage; arch=$2; shift 2 ;;
        --release) [ "$#" -ge 2 ] || usage; release=$2; shift 2 ;;
        *) usage ;;
    esac
done
# Per arch: the .debs' architecture, the multiarch triple, the loader, the
# pinned list, and the lengths of the loader's default search list.
case $arch in
    x86_64) deb_arch=amd64 triple=x86_64-linux-gnu loader=ld-linux-x86-64.so.2 list=packages.txt ;;
    aarch64) deb_arch=arm64 triple=aarch64-linux-gnu loader=ld-linux-aarch64.so.1 list=packages-aarch64.txt ;;
    *) printf 'build.sh: unknown --arch %s (x86_64 or aarch64)\n' "$arch" >&2; exit 2 ;;
esac
case $release/$arch in
    bookworm/*) ;;
    trixie/x86_64) list=packages-trixie.txt ;;
    trixie/aarch64) list=packages-trixie-aarch64.txt ;;
    *) printf 'build.sh: no %s runtime for %s (no packages list pinned)\n' "$release" "$arch" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd -P)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -n "$debs" ] || debs=$work/debs
mkdir -p "$debs"
debs=$(cd "$debs" && pwd -P)

die() {
    printf 'build.sh: %s\n' "$1" >&2
    exit 1
}

# shellcheck source=installers/debs.sh
. "$here/../debs.sh"

# ---- fetch and check the pinned packages ----------------------------------
list=$here/$list
debs_fetch "$list" "$debs" "$work/x" "$deb_arch"
notice_pkgs=$debs_notice
# gcc-N-base: the copyright file of libstdc++6 and libgcc-s1.
gcc=$(sed -n 's/^gcc-\([0-9]*\)-base .*/\1/p' "$list")
[ -n "$gcc" ] || die "$list: no gcc-N-base"

# ---- the files of the runtime ----------------------------------------------
rt=$work/rt
mkdir "$rt" "$rt/copyright"
# bookworm's libc6 has its files in /lib, trixie's (merged /usr) in /usr/lib.
gnu=$work/x/lib/$triple
[ -d "$gnu" ] || gnu=$work/x/usr/lib/$triple
for lib in $loader libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 \
    librt.so.1 libresolv.so.2 libutil.so.1 libanl.so.1 libgcc_s.so.1; do
    cp "$gnu/$lib" "$rt/$lib"
done
# The soname is a link to the versioned file in the package: ship the file
# under the soname (no links in the artifact).
cp -L "$work/x/usr/lib/$triple/libstdc++.so.6" "$rt/libstdc++.so.6"
cp "$work/x/usr/share/doc/libc6/copyright" "$rt/copyright/glibc"
cp "$work/x/usr/share/doc/gcc-$gcc-base/copyright" "$rt/copyright/gcc-$gcc"

# ---- hardening ----------------------------------------------------------------
# offset_of FILE PERL-REGEX: the one byte offset where the regex matches.
offset_of() {
    n=$(LC_ALL=C grep -obUaP "$2" "$1" | cut -d: -f1)
    case $n in
        '' | *[!0-9]*) die "$1: expected exactly one match of $2, found: ${n:-none}" ;;
    esac
    printf '%s\n' "$n"
}

# overwrite FILE OFFSET LEN TEXT: TEXT then NULs, exactly LEN bytes, in place.
overwrite() {
    [ "${#4}" -le "$3" ] || die "$4 does not fit $3 bytes"
    { printf '%s' "$4"; head -c "$(($3 - ${#4}))" /dev/zero; } |
        dd of="$1" bs=1 seek="$2" count="$3" conv=notrunc status=none
}

# same_length_void PATH: a path of the same length below /dev/null, where
# nothing can ever be opened (ENOTDIR).
same_length_void() {
    v=/dev/null/
    while [ "${#v}" -lt "${#1}" ]; do v=${v}x; done
    [ "${#v}" -eq "${#1}" ] || die "$1 is too short for a path below /dev/null/"
    printf '%s\n' "$v"
}

# kill_string FILE TEXT: every NUL-terminated TEXT becomes a same-length void.
kill_string() {
    re=$(printf '%s' "$2" | sed 's/[.]/\\./g')
    offs=$(LC_ALL=C grep -obUaP "(?<=\\x00)$re\\x00" "$1" | cut -d: -f1)
    [ -n "$offs" ] || die "$1: no $2 to harden"
    for o in $offs; do
        overwrite "$1" "$o" "${#2}" "$(same_length_void "$2")"
    done
}

# u64le N: N (below 256) as a little-endian 8-byte word (both arches are
# little-endian).
u64le() {
    # shellcheck disable=SC2059 # the format is the octal escape, on purpose
    printf "\\$(printf %03o "$1")\\000\\000\\000\\000\\000\\000\\000"
}

# table_at FILE OFFSET: the four 8-byte words there, space-separated.
table_at() {
    od -An -tu8 -j "$2" -N 32 "$1" | tr -s ' \n' '  '
}

ld=$rt/$loader
kill_string "$ld" /etc/ld.so.cache
kill_string "$ld" /etc/ld.so.preload
# The default search list is one block "DIR\0DIR\0..." read with a table of
# lengths (8-byte words) next to it: right before it on x86_64, right after
# it (16-byte aligned) on aarch64; it is found by its contents, near the
# first block. Some entries ("/lib/") are too short for a path that cannot
# exist, so the table is rewritten as well. The loader's code may have the
# first entry's length (x86_64: 22) and the start of the second built in and
# take the rest from the table: the first entry keeps its length (22, or 23
# on aarch64), the other three become 12 bytes each, all below /dev/null/.
l1=$((${#triple} + 6))
l2=$((${#triple} + 10))
sys="/lib/$triple/\\x00/usr/lib/$triple/\\x00/lib/\\x00/usr/lib/\\x00"
block_len=$((l1 + l2 + 5 + 9 + 4))
dir1=/dev/null/1
while [ "${#dir1}" -lt "$((l1 - 1))" ]; do dir1=${dir1}x; done
dir1=$dir1/
blocks=$(LC_ALL=C grep -obUaP "$sys" "$ld" | cut -d: -f1)
first=
for b in $blocks; do
    [ -n "$first" ] || first=$b
    # The four dirs and their NULs, NUL-padded to the block's length.
    { printf '%s\000/dev/null/2/\000/dev/null/3/\000/dev/null/4/\000' "$dir1"
        head -c "$((block_len - l1 - 1 - 39))" /dev/zero; } |
        dd of="$ld" bs=1 seek="$b" count="$block_len" conv=notrunc status=none
done
[ -n "$first" ] || die "$ld: no default search list"
table="\\x$(printf %02x "$l1")\\x00{7}\\x$(printf %02x "$l2")\\x00{7}\\x05\\x00{7}\\x09\\x00{7}"
lens=
for o in $(LC_ALL=C grep -obUaP "$table" "$ld" | cut -d: -f1 | tr '\n' ' '); do
    # 8-aligned, within 128 bytes of the first block.
    if [ $((o % 8)) -ne 0 ] || [ "$o" -lt $((first - 128)) ] || [ "$o" -gt $((first + 128)) ]; then
        continue
    fi
    [ -z "$lens" ] || die "$ld: two length tables near the default search list"
    lens=$o
done
[ -n "$lens" ] || die "$ld: no length table ($l1 $l2 5 9) next to the default search list"
[ "$(table_at "$ld" "$lens")" = " $l1 $l2 5 9 " ] || die "$ld: the length table is not $l1 $l2 5 9"
u64le "$l1" | dd of="$ld" bs=1 seek="$lens" count=8 conv=notrunc status=none
for k in 1 2 3; do
    u64le 12 | dd of="$ld" bs=1 seek=$((lens + 8 * k)) count=8 conv=notrunc status=none
done
[ "$(table_at "$ld" "$lens")" = " $l1 12 12 12 " ] || die "$ld: the length table was not rewritten"
# libc dlopens gconv modules for iconv from the image's gconv directory.
kill_string "$rt/libc.so.6" "/usr/lib/$triple/gconv"
kill_string "$rt/libc.so.6" "/usr/lib/$triple/gconv/gconv-modules.cache"
for s in /etc/ld.so.cache /etc/ld.so.preload "/lib/$triple/" "/usr/lib/$triple/"; do
    if LC_ALL=C grep -qaP "(?<=\\x00)$(printf '%s' "$s" | sed 's/[.]/\\./g')\\x00" "$ld"; then
        die "$ld still holds $s"
    fi
done

libc_ver=$(sed -n 's/^libc6 \([^ ]*\) .*/\1/p' "$list")
stdcxx=$(cd "$work/x/usr/lib/$triple" && readlink libstdc++.so.6)
cat > "$rt/NOTICE" <<EOF
Private glibc runtime for shforge installers ($arch).

Made from these Debian $release binary packages, unmodified except as said
below; their sources are the named Debian source packages at the same
version (https://deb.debian.org/debian/pool/main/, or apt-get source):
$notice_pkgs

Licences (full texts and copyright holders in copyright/):
  glibc ($loader, libc.so.6, libm, libdl, libpthread, librt,
  libresolv, libutil, libanl): GNU LGPL 2.1 or later.
  libstdc++.so.6 and libgcc_s.so.1 (gcc-$gcc): GNU GPL 3 with the GCC Runtime
  Library Exception 3.1.

Changes made by installers/glibc-runtime/build.sh (byte patches, same file
sizes, nothing else changed):
  $loader: the strings /etc/ld.so.cache and /etc/ld.so.preload
  are replaced by same-length paths below /dev/null/, and the default
  library search list (/lib/$triple/, /usr/lib/$triple/,
  /lib/, /usr/lib/) and its length table by four directories below
  /dev/null/ (lengths $l1, 12, 12, 12), so the loader never reads the image's cache, preload list or
  library directories; libraries come only from the program's DT_RPATH.
  libc.so.6: the gconv module directory and its cache path are replaced the
  same way (iconv has only glibc's built-in charsets).
  libstdc++.so.6 is $stdcxx under its soname.
glibc version: $libc_ver
EOF

# ---- the deterministic archive ------------------------------------------------
chmod 755 "$rt" "$rt/copyright" "$ld" "$rt/libc.so.6"
find "$rt" -type f ! -name "$loader" ! -name libc.so.6 -exec chmod 644 {} +
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    -C "$rt" -cf - . | gzip -n -9 > "$out.tmp"
mv "$out.tmp" "$out"
sha256sum "$out"
