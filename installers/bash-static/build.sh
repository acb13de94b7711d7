#!/bin/sh
# Host side (not run in the sandbox): make the carried bash, the one static
# bash that a sandbox without a usable bash (none, or one older than 3.2)
# runs the generated bash scripts with, so nothing is added to the image.
#
# It is Debian bookworm's bash-static, pinned in packages.txt (amd64) and
# packages-aarch64.txt (arm64) with each .deb's sha256: the .deb is fetched
# and checked by installers/debs.sh, and the one file bin/bash-static is
# copied out of it byte for byte. The output is that file alone (no archive,
# no timestamps), so every build gives the same sha256. Statically linked:
# the same file serves glibc and musl images.
# Licence: GPL-3.0-or-later (bash); the corresponding source is Debian's
# source package bash of the pinned version (snapshot.debian.org keeps it).
#
# usage: sh installers/bash-static/build.sh OUT [--debs DIR] [--arch x86_64|aarch64]
#   --arch: default aarch64 for an OUT whose name ends in -aarch64, else
#   x86_64 (so the spec's `source` line alone says which).
#   --debs DIR: take the .debs from DIR (fetched there when absent).
# needs: apt-get (unless --debs has the .deb), dpkg-deb, sha256sum.
set -eu

usage() {
    printf 'usage: sh installers/bash-static/build.sh OUT [--debs DIR] [--arch x86_64|aarch64]\n' >&2
    exit 2
}
[ "$#" -ge 1 ] || usage
out=$1
shift
debs=
case $out in
    *-aarch64) arch=aarch64 ;;
    *) arch=x86_64 ;;
esac
while [ "$#" -gt 0 ]; do
    case $1 in
        --debs) [ "$#" -ge 2 ] || usage; debs=$2; shift 2 ;;
        --arch) [ "$#" -ge 2 ] || usage; arch=$2; shift 2 ;;
        *) usage ;;
    esac
done
case $arch in
    x86_64) deb_arch=amd64 list=packages.txt ;;
    aarch64) deb_arch=arm64 list=packages-aarch64.txt ;;
    *) printf 'build.sh: unknown --arch %s (x86_64 or aarch64)\n' "$arch" >&2; exit 2 ;;
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

debs_fetch "$here/$list" "$debs" "$work/tree" "$deb_arch"
bin=$work/tree/bin/bash-static
[ -f "$bin" ] || die "the .deb holds no bin/bash-static"
# Copied through a temporary name next to OUT and renamed, so a failed copy
# never leaves a partial OUT.
cp "$bin" "$out.tmp.$$"
chmod 0755 "$out.tmp.$$"
mv -f "$out.tmp.$$" "$out"
sum=$(sha256sum < "$out")
printf 'bash-static %s: %s bytes, sha256 %s\n' "$arch" "$(wc -c < "$out" | tr -d ' ')" "${sum%% *}" >&2
