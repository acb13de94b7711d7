#!/bin/sh
# Host side (CI and tests, never shipped): build the test roots that
# `shforge smoke --root` and tests/it/roots.rs run in, from Debian packages.
#
#   sh tests/roots/build.sh [--cache DIR] KIND...
#
# KIND:
#   musl           an Alpine stand-in with no glibc and no apk: Debian's musl
#                  (libc.so as /lib/ld-musl-ARCH.so.1), busybox-static (every
#                  applet a symlink, /bin/sh among them) and bash-static as
#                  /bin/bash. Three `apt-get download`s: seconds.
#   bookworm-musl  `debootstrap --variant=minbase bookworm` plus the files of
#                  Debian's musl package (what musl-tools pulls in): a glibc
#                  system that also has /lib/ld-musl-ARCH.so.1.
#   bullseye       `debootstrap --variant=minbase bullseye` (glibc 2.31).
#
# Each root is built in DIR/KIND.new.PID and renamed to DIR/KIND (default
# DIR: /var/cache/shforge/roots, outside the checkout) only when complete;
# DIR/KIND/.shforge-root records the recipe and the package versions, and a
# root whose record matches is reused, its /tmp emptied. Every root gets /etc/hosts,
# /etc/passwd, /etc/group, /tmp (1777), /proc and /dev (empty mount points)
# and /root. Prints one line per root: `KIND PATH SECONDS built|reused`.
# Needs root (dpkg-deb keeps owners, debootstrap chroots), apt-get, dpkg-deb;
# debootstrap for the two Debian roots (DEBOOTSTRAP=PATH to use another one).
# Exit: 0 ok, 2 usage, 3 a tool is missing, 4 a build step failed.
set -eu

# The recipe versions: bump a kind's when what its root holds changes, so
# that cached roots of that kind are rebuilt.
RECIPE_MUSL=1
RECIPE_BOOKWORM_MUSL=2
RECIPE_BULLSEYE=1
MIRROR=${SHFORGE_DEBIAN_MIRROR:-http://deb.debian.org/debian}

die() {
    status=$1
    shift
    printf 'roots/build.sh: %s\n' "$*" >&2
    exit "$status"
}

usage() {
    printf 'usage: sh tests/roots/build.sh [--cache DIR] musl|bookworm-musl|bullseye...\n'
}

cache=/var/cache/shforge/roots
while [ "$#" -gt 0 ]; do
    case $1 in
        --cache)
            [ "$#" -ge 2 ] || die 2 "--cache needs a directory"
            cache=$2
            shift 2
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        -*) die 2 "unknown option: $1" ;;
        *) break ;;
    esac
done
[ "$#" -gt 0 ] || {
    usage >&2
    exit 2
}
for kind in "$@"; do
    case $kind in
        musl | bookworm-musl | bullseye) ;;
        *) die 2 "unknown root kind: $kind (musl, bookworm-musl, bullseye)" ;;
    esac
done
[ "$(id -u)" = 0 ] || die 3 "needs root (dpkg-deb -x keeps owners; debootstrap chroots)"
for tool in apt-get apt-cache dpkg-deb chroot; do
    command -v "$tool" >/dev/null 2>&1 || die 3 "$tool not found"
done
arch=$(uname -m)
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)

# debs DIR PKG...: download the packages into DIR (apt-get download needs a
# directory the _apt user may write: the download goes to the cwd).
debs() {
    _dir=$1
    shift
    mkdir -p "$_dir"
    chmod 755 "$_dir"
    (cd "$_dir" && apt-get download "$@" >/dev/null 2>&1) ||
        (cd "$_dir" && apt-get download "$@" >&2) ||
        die 4 "apt-get download $* failed"
}

# version PKG: the version apt-get download fetches.
version() {
    apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p'
}

# common_files ROOT: what every root gets besides its packages.
common_files() {
    _r=$1
    mkdir -p "$_r/etc" "$_r/proc" "$_r/dev" "$_r/root" "$_r/tmp" "$_r/sys"
    chmod 1777 "$_r/tmp"
    [ -s "$_r/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$_r/etc/hosts"
    [ -s "$_r/etc/passwd" ] || printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$_r/etc/passwd"
    [ -s "$_r/etc/group" ] || printf 'root:x:0:\nnogroup:x:65534:\n' > "$_r/etc/group"
    # The fake model server is on 127.0.0.1: no resolver is needed.
    [ -e "$_r/etc/resolv.conf" ] || : > "$_r/etc/resolv.conf"
}

# musl_package ROOT DEB: install Debian's musl package into the Debian ROOT
# with the root's own dpkg, as `apt-get install musl` would (dpkg-deb -x
# would replace the merged-/usr link /lib by a directory).
musl_package() {
    cp "$2" "$1/tmp/musl.deb"
    chroot "$1" dpkg -i /tmp/musl.deb > "$1.log" 2>&1 || {
        cat "$1.log" >&2
        die 4 "dpkg -i $2 in $1 failed"
    }
    rm -f "$1/tmp/musl.deb" "$1.log"
    [ -e "$1/lib/ld-musl-$arch.so.1" ] || die 4 "$2 gave no /lib/ld-musl-$arch.so.1"
    [ -e "$1/lib64/ld-linux-x86-64.so.2" ] || [ -e "$1/lib/ld-linux-aarch64.so.1" ] ||
        die 4 "$1 lost its glibc loader"
}

build_musl() {
    _r=$1
    _d=$2/debs
    debs "$_d" musl busybox-static bash-static
    mkdir -p "$2/x"
    for _deb in "$_d"/*.deb; do
        dpkg-deb -x "$_deb" "$2/x" || die 4 "dpkg-deb -x $_deb failed"
    done
    mkdir -p "$_r/bin" "$_r/sbin" "$_r/usr/bin" "$_r/usr/sbin" "$_r/lib" "$_r/usr/lib"
    # The loader is musl's libc itself; Alpine names it ld-musl-ARCH.so.1
    # and links libc.musl-ARCH.so.1 to it.
    cp "$2/x/lib/$arch-linux-musl/libc.so" "$_r/lib/ld-musl-$arch.so.1"
    ln -s "ld-musl-$arch.so.1" "$_r/lib/libc.musl-$arch.so.1"
    cp "$2/x/bin/busybox" "$_r/bin/busybox"
    # Every applet as a symlink to /bin/busybox, as `busybox --install -s`
    # makes them (which needs /proc inside the root).
    "$_r/bin/busybox" --list-full | while IFS= read -r _applet; do
        [ -n "$_applet" ] || continue
        [ -e "$_r/$_applet" ] || [ -L "$_r/$_applet" ] || ln -s /bin/busybox "$_r/$_applet"
    done
    rm -f "$_r/bin/sh"
    ln -s busybox "$_r/bin/sh"
    cp "$2/x/bin/bash-static" "$_r/bin/bash"
    for _bad in lib64/ld-linux-x86-64.so.2 lib/ld-linux-aarch64.so.1 sbin/apk; do
        [ ! -e "$_r/$_bad" ] || die 4 "the musl root must have no /$_bad"
    done
}

# debootstrap_root ROOT SUITE
debootstrap_root() {
    _ds=${DEBOOTSTRAP:-debootstrap}
    command -v "$_ds" >/dev/null 2>&1 || die 3 "debootstrap not found (apt-get install debootstrap)"
    "$_ds" --variant=minbase "$2" "$1" "$MIRROR" > "$1.log" 2>&1 || {
        tail -n 20 "$1.log" >&2
        die 4 "debootstrap $2 failed (log: $1.log)"
    }
    rm -f "$1.log"
    # Nothing of the host's apt state or caches in the image.
    rm -rf "$1/var/cache/apt/archives/"*.deb "$1/var/lib/apt/lists/"*_Packages
}

# recipe KIND: the line that says what KIND's root is made of.
recipe() {
    case $1 in
        musl) printf 'recipe %s musl=%s busybox-static=%s bash-static=%s\n' "$RECIPE_MUSL" \
            "$(version musl)" "$(version busybox-static)" "$(version bash-static)" ;;
        bookworm-musl) printf 'recipe %s debootstrap minbase bookworm %s musl=%s\n' "$RECIPE_BOOKWORM_MUSL" "$MIRROR" "$(version musl)" ;;
        bullseye) printf 'recipe %s debootstrap minbase bullseye %s\n' "$RECIPE_BULLSEYE" "$MIRROR" ;;
    esac
}

build() {
    _kind=$1
    _want=$(recipe "$_kind")
    _final=$cache/$_kind
    if [ -f "$_final/.shforge-root" ] && [ "$(cat "$_final/.shforge-root")" = "$_want" ]; then
        # Smoke runs leave their mount points and OpenClaw's /tmp/openclaw*
        # there: every run starts from the same root.
        find "$_final/tmp" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
        printf '%s %s 0 reused\n' "$_kind" "$_final"
        return 0
    fi
    _start=$(date +%s)
    _work=$cache/$_kind.new.$$
    rm -rf "$_work" "$_work.scratch"
    mkdir -p "$_work" "$_work.scratch"
    case $_kind in
        musl) build_musl "$_work" "$_work.scratch" ;;
        bookworm-musl)
            debootstrap_root "$_work" bookworm
            debs "$_work.scratch/debs" musl
            musl_package "$_work" "$_work.scratch/debs/"musl_*.deb
            ;;
        bullseye) debootstrap_root "$_work" bullseye ;;
    esac
    common_files "$_work"
    printf '%s\n' "$_want" > "$_work/.shforge-root"
    rm -rf "$_work.scratch" "$_final"
    mv "$_work" "$_final"
    printf '%s %s %s built\n' "$_kind" "$_final" "$(($(date +%s) - _start))"
}

for kind in "$@"; do
    build "$kind"
done
