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
# usage: sh installers/glibc-runtime/build.sh OUT.tar.gz [--debs DIR] [--release R]
#   --debs DIR: take the .debs from DIR (fetched there with apt-get download
#   when absent; default: a temporary directory).
#   --release R: bookworm (default; packages.txt, glibc 2.36) or trixie
#   (packages-trixie.txt, glibc 2.41, for programs needing more than 2.36:
#   the portable CPython 3.13). installers/debs.sh fetches the .debs.
# needs: apt-get (unless --debs has them all), dpkg-deb, GNU grep, GNU tar,
# gzip, sha256sum, od, dd.
set -eu

usage() {
    printf 'usage: sh installers/glibc-runtime/build.sh OUT.tar.gz [--debs DIR] [--release bookworm|trixie]\n' >&2
    exit 2
}
[ "$#" -ge 1 ] || usage
out=$1
shift
debs=
release=bookworm
while [ "$#" -gt 0 ]; do
    case $1 in
        --debs) [ "$#" -ge 2 ] || usage; debs=$2; shift 2 ;;
        --release) [ "$#" -ge 2 ] || usage; release=$2; shift 2 ;;
        *) usage ;;
    esac
done
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

case $release in
    bookworm) list=$here/packages.txt ;;
    trixie) list=$here/packages-trixie.txt ;;
    *) usage ;;
esac
# shellcheck source=installers/debs.sh
. "$here/../debs.sh"

# ---- fetch and check the pinned packages ----------------------------------
debs_fetch "$list" "$debs" "$work/x"
notice_pkgs=$debs_notice
# gcc-N-base: the copyright file of libstdc++6 and libgcc-s1.
gcc=$(sed -n 's/^gcc-\([0-9]*\)-base .*/\1/p' "$list")
[ -n "$gcc" ] || die "$list: no gcc-N-base"

# ---- the files of the runtime ----------------------------------------------
rt=$work/rt
mkdir "$rt" "$rt/copyright"
# bookworm's libc6 has its files in /lib, trixie's (merged /usr) in /usr/lib.
gnu=$work/x/lib/x86_64-linux-gnu
[ -d "$gnu" ] || gnu=$work/x/usr/lib/x86_64-linux-gnu
for lib in ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 \
    librt.so.1 libresolv.so.2 libutil.so.1 libanl.so.1 libgcc_s.so.1; do
    cp "$gnu/$lib" "$rt/$lib"
done
# The soname is a link to the versioned file in the package: ship the file
# under the soname (no links in the artifact).
cp -L "$work/x/usr/lib/x86_64-linux-gnu/libstdc++.so.6" "$rt/libstdc++.so.6"
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

ld=$rt/ld-linux-x86-64.so.2
kill_string "$ld" /etc/ld.so.cache
kill_string "$ld" /etc/ld.so.preload
# The default search list is one block "DIR\0DIR\0..." read with a table of
# lengths (8-byte words) right before it. Some entries ("/lib/") are too
# short for a path that cannot exist, so the table is rewritten as well.
# The loader's code has the first entry's length (22) and the start of the
# second built in and takes the rest from the table: the first entry keeps
# its 22 bytes, the other three become 12 bytes each, all below /dev/null/.
sys='/lib/x86_64-linux-gnu/\x00/usr/lib/x86_64-linux-gnu/\x00/lib/\x00/usr/lib/\x00'
blocks=$(LC_ALL=C grep -obUaP "$sys" "$ld" | cut -d: -f1)
first=
for b in $blocks; do
    [ -n "$first" ] || first=$b
    # 66 bytes: the four dirs and their NULs.
    { printf '/dev/null/1xxxxxxxxxx/\000/dev/null/2/\000/dev/null/3/\000/dev/null/4/\000'; head -c 4 /dev/zero; } |
        dd of="$ld" bs=1 seek="$b" count=66 conv=notrunc status=none
done
[ -n "$first" ] || die "$ld: no default search list"
lens=$((first - 32))
[ "$(od -An -tu8 -j "$lens" -N 32 "$ld" | tr -s ' \n' '  ')" = " 22 26 5 9 " ] ||
    die "$ld: the length table is not right before the default search list"
# 22, 12, 12, 12 as little-endian 8-byte words.
printf '\026\000\000\000\000\000\000\000' | dd of="$ld" bs=1 seek="$lens" count=8 conv=notrunc status=none
for k in 1 2 3; do
    printf '\014\000\000\000\000\000\000\000' | dd of="$ld" bs=1 seek=$((lens + 8 * k)) count=8 conv=notrunc status=none
done
[ "$(od -An -tu8 -j "$lens" -N 32 "$ld" | tr -s ' \n' '  ')" = " 22 12 12 12 " ] ||
    die "$ld: the length table was not rewritten"
# libc dlopens gconv modules for iconv from the image's gconv directory.
kill_string "$rt/libc.so.6" /usr/lib/x86_64-linux-gnu/gconv
kill_string "$rt/libc.so.6" /usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache
for s in /etc/ld.so.cache /etc/ld.so.preload /lib/x86_64-linux-gnu/ /usr/lib/x86_64-linux-gnu/; do
    if LC_ALL=C grep -qaP "(?<=\\x00)$(printf '%s' "$s" | sed 's/[.]/\\./g')\\x00" "$ld"; then
        die "$ld still holds $s"
    fi
done

libc_ver=$(sed -n 's/^libc6 \([^ ]*\) .*/\1/p' "$list")
stdcxx=$(cd "$work/x/usr/lib/x86_64-linux-gnu" && readlink libstdc++.so.6)
cat > "$rt/NOTICE" <<EOF
Private glibc runtime for shforge installers (x86_64).

Made from these Debian $release binary packages, unmodified except as said
below; their sources are the named Debian source packages at the same
version (https://deb.debian.org/debian/pool/main/, or apt-get source):
$notice_pkgs

Licences (full texts and copyright holders in copyright/):
  glibc (ld-linux-x86-64.so.2, libc.so.6, libm, libdl, libpthread, librt,
  libresolv, libutil, libanl): GNU LGPL 2.1 or later.
  libstdc++.so.6 and libgcc_s.so.1 (gcc-$gcc): GNU GPL 3 with the GCC Runtime
  Library Exception 3.1.

Changes made by installers/glibc-runtime/build.sh (byte patches, same file
sizes, nothing else changed):
  ld-linux-x86-64.so.2: the strings /etc/ld.so.cache and /etc/ld.so.preload
  are replaced by same-length paths below /dev/null/, and the default
  library search list (/lib/x86_64-linux-gnu/, /usr/lib/x86_64-linux-gnu/,
  /lib/, /usr/lib/) and its length table by four directories below
  /dev/null/ (lengths 22, 12, 12, 12), so the loader never reads the image's cache, preload list or
  library directories; libraries come only from the program's DT_RPATH.
  libc.so.6: the gconv module directory and its cache path are replaced the
  same way (iconv has only glibc's built-in charsets).
  libstdc++.so.6 is $stdcxx under its soname.
glibc version: $libc_ver
EOF

# ---- the deterministic archive ------------------------------------------------
chmod 755 "$rt" "$rt/copyright" "$ld" "$rt/libc.so.6"
find "$rt" -type f ! -name ld-linux-x86-64.so.2 ! -name libc.so.6 -exec chmod 644 {} +
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    -C "$rt" -cf - . | gzip -n -9 > "$out.tmp"
mv "$out.tmp" "$out"
sha256sum "$out"
