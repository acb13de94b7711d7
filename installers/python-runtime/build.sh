#!/bin/sh
# Host side (not run in the sandbox): build the portable Python runtime, an
# artifact an installer unpacks at `dest = "python"` next to the private glibc
# runtime (installers/glibc-runtime/build.sh), so a Python harness runs on
# musl images, on old glibc images and on current ones with nothing taken
# from the image's Python or its libraries.
#
# From the pinned Debian bookworm packages in packages.txt (each .deb's
# sha256 is checked) it lays out
#   bin/python3.11            Debian's interpreter, with the interpreter and
#                             library-path placeholders of elf_placeholders.py
#   lib/python3.11/           the standard library, compiled (unchecked-hash
#                             .pyc: valid wherever it lands, never rewritten)
#   lib/*.so.*                the shared libraries its extension modules need
#   NOTICE, copyright/        where each file comes from, and the licences
# and writes a deterministic tar.gz (sorted names, mtime 0, owner 0, fixed
# modes, gzip without a timestamp): the same packages give the same bytes.
# The interpreter is always started with -I (no PYTHON* variables, no user
# site, no script or working directory on sys.path) by the harness launcher.
#
# usage: sh installers/python-runtime/build.sh OUT.tar.gz [--debs DIR]
#   --debs DIR: take the .debs from DIR (fetched there with apt-get download
#   when absent; default: a temporary directory).
# Prints the [[artifact.relocate]] table for the spec, then the sha256.
# needs: apt-get (unless --debs has them all), dpkg-deb, python3, readelf,
# GNU tar, gzip, sha256sum, dd; an x86_64 glibc >= 2.35 host (the
# interpreter runs once, unpatched, to compile the standard library).
set -eu

usage() {
    printf 'usage: sh installers/python-runtime/build.sh OUT.tar.gz [--debs DIR]\n' >&2
    exit 2
}
[ "$#" -ge 1 ] || usage
out=$1
shift
debs=
while [ "$#" -gt 0 ]; do
    case $1 in
        --debs) [ "$#" -ge 2 ] || usage; debs=$2; shift 2 ;;
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

# find_deb PKG VERSION: the .deb of that version in $debs, or nothing.
find_deb() {
    for f in "$debs/${1}_"*_amd64.deb "$debs/${1}_"*_all.deb; do
        [ -f "$f" ] || continue
        if [ "$(dpkg-deb -f "$f" Version)" = "$2" ]; then
            printf '%s\n' "$f"
            return 0
        fi
    done
}

# ---- fetch and check the pinned packages ----------------------------------
notice_pkgs=
while read -r pkg ver sha; do
    case $pkg in '' | '#'*) continue ;; esac
    deb=$(find_deb "$pkg" "$ver")
    if [ -z "$deb" ]; then
        (cd "$debs" && apt-get download "$pkg=$ver" >&2) || die "apt-get download $pkg=$ver failed"
        deb=$(find_deb "$pkg" "$ver")
    fi
    [ -n "$deb" ] || die "no .deb of $pkg $ver in $debs"
    got=$(sha256sum < "$deb")
    got=${got%% *}
    [ "$got" = "$sha" ] || die "digest mismatch for $deb: expected $sha, got $got"
    dpkg-deb -x "$deb" "$work/x"
    src=$(dpkg-deb -f "$deb" Source)
    src=${src%% *}
    notice_pkgs="$notice_pkgs
  $pkg $ver (Debian source package ${src:-$pkg}), .deb sha256 $sha"
done < "$here/packages.txt"

# ---- the files of the runtime ----------------------------------------------
x=$work/x
rt=$work/rt
mkdir -p "$rt/bin" "$rt/lib" "$rt/copyright"
cp "$x/usr/bin/python3.11" "$rt/bin/python3.11"
cp -R "$x/usr/lib/python3.11" "$rt/lib/python3.11"
std=$rt/lib/python3.11
# Links to /etc/python3.11 (Debian's sitecustomize.py) would read the
# image's files; the sysconfig alias becomes a copy (no links in the artifact).
rm -f "$std/sitecustomize.py" "$std/EXTERNALLY-MANAGED"
cp -L "$x/usr/lib/python3.11/_sysconfigdata__linux_x86_64-linux-gnu.py" "$work/sysconfig.py"
rm "$std/_sysconfigdata__linux_x86_64-linux-gnu.py"
mv "$work/sysconfig.py" "$std/_sysconfigdata__linux_x86_64-linux-gnu.py"
find "$std" -type l -exec sh -c 'printf "build.sh: a link is left: %s\n" "$1" >&2; exit 1' sh {} \;
# Modules whose libraries are left out (licences, see packages.txt), and
# CPython's own test modules.
dyn=$std/lib-dynload
for m in readline _dbm nis _ctypes_test _testbuffer _testcapi _testclinic \
    _testimportmultiple _testinternalcapi _testmultiphase _xxtestfuzz \
    xxlimited xxlimited_35 _xxsubinterpreters; do
    rm -f "$dyn/$m.cpython-311-x86_64-linux-gnu.so"
done
# The shared libraries, under their sonames (copies: no links).
for lib in libz.so.1 libexpat.so.1 libssl.so.3 libcrypto.so.3 libffi.so.8 \
    libsqlite3.so.0 liblzma.so.5 libbz2.so.1.0 libuuid.so.1 libcrypt.so.1 \
    libncursesw.so.6 libpanelw.so.6 libtinfo.so.6; do
    f=
    for d in "$x/lib/x86_64-linux-gnu" "$x/usr/lib/x86_64-linux-gnu"; do
        [ -e "$d/$lib" ] && f=$d/$lib
    done
    [ -n "$f" ] || die "no $lib in the packages"
    cp -L "$f" "$rt/lib/$lib"
done
# Every NEEDED of the interpreter, the extension modules and the libraries
# is one of ours or glibc's.
glibc_libs=' libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libresolv.so.2 libutil.so.1 ld-linux-x86-64.so.2 '
for f in "$rt/bin/python3.11" "$rt"/lib/*.so.* "$dyn"/*.so; do
    for n in $(readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        case $glibc_libs in *" $n "*) continue ;; esac
        [ -f "$rt/lib/$n" ] || die "$f needs $n, which the runtime does not have"
    done
    readelf -dW "$f" | grep -q '(RUNPATH)' && die "$f has a RUNPATH"
done
for p in python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libssl3 libsqlite3-0 \
    libffi8 zlib1g libexpat1 liblzma5 libbz2-1.0 libuuid1 libcrypt1 libncursesw6 libtinfo6; do
    cp "$x/usr/share/doc/$p/copyright" "$rt/copyright/$p"
done

# Compile the standard library once, here, so nothing is ever written into
# the install: unchecked-hash .pyc files do not depend on mtimes, and
# -s/-p record one fixed directory instead of this temporary one. A clean
# environment with PYTHONHASHSEED=0 (not -I, which ignores it) makes the
# order of set constants, hence the bytes, the same each time; -B keeps the
# modules compileall itself imports from leaving timestamp .pyc files.
(cd "$work" && env -i PYTHONHASHSEED=0 LD_LIBRARY_PATH="$rt/lib" "$rt/bin/python3.11" -s -B -m compileall -q -f -j 1 \
    --invalidation-mode unchecked-hash -s "$rt" -p /python "$std" >/dev/null) ||
    die "compiling the standard library failed"

# ---- placeholders for the private glibc runtime --------------------------------
interp_size=256
rpath_size=512
marker() {
    m="/@shforge-$1-placeholder@/"
    while [ "${#m}" -lt "$(($2 - 1))" ]; do m=${m}x; done
    printf '%s\n' "$m"
}
bin=$rt/bin/python3.11
glibc=$(readelf -V --wide "$bin" | sed -n 's/.*Name: GLIBC_\([0-9][0-9.]*\) .*/\1/p' |
    sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
for f in "$dyn"/*.so "$rt"/lib/*.so.*; do
    readelf -V --wide "$f" | sed -n 's/.*Name: GLIBC_\([0-9][0-9.]*\) .*/\1/p'
done > "$work/glibc-versions"
printf '%s\n' "$glibc" >> "$work/glibc-versions"
glibc=$(sort -u -t. -k1,1n -k2,2n -k3,3n "$work/glibc-versions" | tail -n 1)
# shellcheck disable=SC2046 # the four numbers it prints, split on purpose
set -- $(python3 "$here/../glibc-runtime/elf_placeholders.py" "$bin" \
    "$(marker interp "$interp_size")" "$(marker rpath "$rpath_size")")
[ "$#" -eq 4 ] || die "elf_placeholders.py failed on bin/python3.11"
interp_off=$1
rpath_off=$3
readelf -dW "$bin" | grep -q '(RPATH)' || die "bin/python3.11: no RPATH"
cp "$bin" "$work/zeroed"
head -c "$interp_size" /dev/zero | dd of="$work/zeroed" bs=1 seek="$interp_off" conv=notrunc status=none
head -c "$rpath_size" /dev/zero | dd of="$work/zeroed" bs=1 seek="$rpath_off" conv=notrunc status=none
zeroed=$(sha256sum < "$work/zeroed")
zeroed=${zeroed%% *}

py_ver=$(sed -n 's/^python3.11-minimal \([^ ]*\) .*/\1/p' "$here/packages.txt")
cat > "$rt/NOTICE" <<EOF
Portable Python runtime for shforge installers (x86_64), CPython 3.11 as
built by Debian ($py_ver). It runs on the private glibc runtime
(glibc-runtime-*.tar.gz) with its library path set to its own lib/ first.

Made from these Debian bookworm binary packages; their sources are the
named Debian source packages at the same version
(https://deb.debian.org/debian/pool/main/, or apt-get source):
$notice_pkgs

Licences (full texts and copyright holders in copyright/):
  CPython 3.11 (bin/python3.11, lib/python3.11): PSF License 2.
  OpenSSL 3 (libssl, libcrypto): Apache 2.0. SQLite: public domain.
  libffi, expat, ncurses, util-linux libuuid: MIT/X11-style. zlib: zlib
  licence. xz liblzma: public domain (0BSD). bzip2: BSD-style.
  libxcrypt (libcrypt.so.1): LGPL 2.1 or later.

Changes made by installers/python-runtime/build.sh:
  bin/python3.11: one page appended with placeholders for the interpreter
  and DT_RPATH (installers/glibc-runtime/elf_placeholders.py; no existing
  byte moved), filled in at install time.
  lib/python3.11: Debian's sitecustomize.py link (to /etc) and
  EXTERNALLY-MANAGED removed; the modules readline, _dbm, nis and CPython's
  test modules removed; .pyc files added (compileall, unchecked-hash).
  Shared libraries are the packages' files under their sonames.
EOF

# ---- the deterministic archive ------------------------------------------------
find "$rt" -type d -exec chmod 755 {} +
find "$rt" -type f -exec chmod 644 {} +
chmod 755 "$bin"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    -C "$rt" -cf - . | gzip -n -9 > "$out.tmp"
mv "$out.tmp" "$out"
sha=$(sha256sum < "$out")
cat <<EOF
[[artifact.relocate]]
file = "bin/python3.11"
rpath = ["python/lib", "glibc"]
interp_offset = $interp_off
interp_size = $interp_size
rpath_offset = $rpath_off
rpath_size = $rpath_size
zeroed_sha256 = "$zeroed"
glibc = "$glibc"
# archive: sha256 = "${sha%% *}", size = $(wc -c < "$out")
EOF
