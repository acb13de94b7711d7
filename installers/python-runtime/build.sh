#!/bin/sh
# Host side (not run in the sandbox): build the portable Python runtime, an
# artifact an installer unpacks at `dest = "python"` next to the private glibc
# runtime (installers/glibc-runtime/build.sh), so a Python harness runs on
# musl images, on old glibc images and on current ones with nothing taken
# from the image's Python or its libraries.
#
# From the pinned Debian packages of one release (each .deb's sha256 is
# checked; installers/debs.sh fetches them) it lays out, for X.Y its version,
#   bin/pythonX.Y             Debian's interpreter, with the interpreter and
#                             library-path placeholders of elf_placeholders.py
#   lib/pythonX.Y/            the standard library, compiled (unchecked-hash
#                             .pyc: valid wherever it lands, never rewritten)
#   lib/*.so.*                the shared libraries its extension modules need
#   NOTICE, copyright/        where each file comes from, and the licences
# and writes a deterministic tar.gz (sorted names, mtime 0, owner 0, fixed
# modes, gzip without a timestamp): the same packages give the same bytes.
# The interpreter is always started with -I (no PYTHON* variables, no user
# site, no script or working directory on sys.path) by the harness launcher.
#
# usage: sh installers/python-runtime/build.sh OUT.tar.gz [--debs DIR] [--release R] [--arch ARCH]
#   --debs DIR: take the .debs from DIR (fetched there with apt-get download
#   when absent; default: a temporary directory).
#   --release R: bookworm (default: packages.txt, CPython 3.11, which runs on
#   the bookworm private glibc 2.36) or trixie (packages-trixie.txt, CPython
#   3.13: it needs GLIBC_2.38, so it runs on the trixie private glibc,
#   glibc-runtime/build.sh --release trixie; that glibc's libc6 is unpacked
#   here too, only to run the interpreter once on the host).
#   --arch x86_64|aarch64: the runtime's arch; default aarch64 for an OUT
#   named *-aarch64.tar.gz, else x86_64 (so the spec's `source` line alone
#   says which), as glibc-runtime/build.sh. aarch64 reads
#   packages-aarch64.txt or packages-trixie-aarch64.txt (the same versions'
#   arm64 .debs, fetched with a private arm64 apt state by installers/debs.sh);
#   its relocation table names interpreter = "glibc/ld-linux-aarch64.so.1".
#   Its standard library is compiled by the x86_64 interpreter of the same
#   Debian version (the amd64 .debs of packages[-trixie].txt, run as for
#   x86_64): bytecode does not depend on the arch, and the arm64 interpreter
#   under emulation is some 10x slower.
#   --qemu (aarch64 only): compile with the arm64 interpreter itself instead,
#   under qemu-aarch64-static through the release's arm64 loader
#   (glibc-runtime/packages[-trixie]-aarch64.txt). It gives the same bytes
#   (checked: the same archive sha256 both ways), so it is the check of the
#   default, not another artifact.
# Prints the [[artifact.relocate]] table for the spec, then the sha256.
# needs: apt-get (unless --debs has them all), dpkg-deb, python3, readelf,
# GNU tar, gzip, sha256sum, dd; an x86_64 glibc >= 2.35 host (the
# interpreter runs once to compile the standard library: unpatched with
# bookworm's, through trixie's own loader with trixie's); for --qemu,
# qemu-aarch64-static (Debian's qemu-user-static).
set -eu

usage() {
    printf 'usage: sh installers/python-runtime/build.sh OUT.tar.gz [--debs DIR] [--release bookworm|trixie] [--arch x86_64|aarch64] [--qemu]\n' >&2
    exit 2
}
[ "$#" -ge 1 ] || usage
out=$1
shift
debs=
release=bookworm
qemu=0
case $out in
    *-aarch64.tar.gz) arch=aarch64 ;;
    *) arch=x86_64 ;;
esac
while [ "$#" -gt 0 ]; do
    case $1 in
        --debs) [ "$#" -ge 2 ] || usage; debs=$2; shift 2 ;;
        --release) [ "$#" -ge 2 ] || usage; release=$2; shift 2 ;;
        --arch) [ "$#" -ge 2 ] || usage; arch=$2; shift 2 ;;
        --qemu) qemu=1; shift ;;
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
    bookworm) list=$here/packages.txt glibc_list=packages-aarch64.txt ;;
    trixie) list=$here/packages-trixie.txt glibc_list=packages-trixie-aarch64.txt ;;
    *) usage ;;
esac
# Per arch: the .debs' architecture, the multiarch triple and the loader.
case $arch in
    x86_64) deb_arch=amd64 triple=x86_64-linux-gnu loader=ld-linux-x86-64.so.2 ;;
    aarch64)
        deb_arch=arm64 triple=aarch64-linux-gnu loader=ld-linux-aarch64.so.1
        list=${list%.txt}-aarch64.txt
        ;;
    *) printf 'build.sh: unknown --arch %s (x86_64 or aarch64)\n' "$arch" >&2; exit 2 ;;
esac
# shellcheck source=installers/debs.sh
. "$here/../debs.sh"

# ---- fetch and check the pinned packages ----------------------------------
debs_fetch "$list" "$debs" "$work/x" "$deb_arch"
notice_pkgs=$debs_notice
pyver=$(sed -n 's/^python\(3\.[0-9]*\)-minimal .*/\1/p' "$list")
[ -n "$pyver" ] || die "$list: no python3.X-minimal"
abi=$(printf '%s' "$pyver" | tr -d .)
py=python$pyver
# The interpreter of a release newer than the host's glibc runs through
# that release's own loader, here only.
# The interpreter that compiles the standard library: its home, program
# and library path (the runtime's own for x86_64).
cc_home=$work/rt
cc_bin=$work/rt/bin/$py
cc_lib=$work/rt/lib
[ "$qemu" = 0 ] || [ "$arch" = aarch64 ] || usage
run_py=
if [ "$arch" = aarch64 ] && [ "$qemu" = 1 ]; then
    # The arm64 interpreter, under user-mode emulation, through the arm64
    # loader of the same release.
    qemu=$(command -v qemu-aarch64-static) || die "no qemu-aarch64-static (apt-get install qemu-user-static)"
    debs_fetch "$here/../glibc-runtime/$glibc_list" "$debs" "$work/glibc" "$deb_arch"
    gl=$work/glibc/lib/$triple
    [ -f "$gl/$loader" ] || gl=$work/glibc/usr/lib/$triple
    run_py="$qemu $gl/$loader --library-path $cc_lib:$gl"
else
    if [ "$arch" = aarch64 ]; then
        # The x86_64 interpreter of the same Debian version, from its amd64
        # .debs, with its own standard library and libraries.
        case $release in
            bookworm) debs_fetch "$here/packages.txt" "$debs" "$work/h" ;;
            *) debs_fetch "$here/packages-$release.txt" "$debs" "$work/h" ;;
        esac
        rm -f "$work/h/usr/lib/$py/sitecustomize.py"
        cc_home=$work/h/usr
        cc_bin=$work/h/usr/bin/$py
        cc_lib=$work/h/lib/x86_64-linux-gnu:$work/h/usr/lib/x86_64-linux-gnu
    fi
    if [ "$release" != bookworm ]; then
        debs_fetch "$here/../glibc-runtime/packages-$release.txt" "$debs" "$work/glibc"
        run_py="$work/glibc/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path $cc_lib:$work/glibc/usr/lib/x86_64-linux-gnu"
    fi
fi

# ---- the files of the runtime ----------------------------------------------
x=$work/x
rt=$work/rt
mkdir -p "$rt/bin" "$rt/lib" "$rt/copyright"
cp "$x/usr/bin/$py" "$rt/bin/$py"
cp -R "$x/usr/lib/$py" "$rt/lib/$py"
std=$rt/lib/$py
# Links to /etc/pythonX.Y (Debian's sitecustomize.py) would read the
# image's files; the sysconfig alias becomes a copy (no links in the artifact).
rm -f "$std/sitecustomize.py" "$std/EXTERNALLY-MANAGED"
for l in "$std"/_sysconfigdata_*.py; do
    [ -L "$l" ] || continue
    cp -L "$l" "$work/sysconfig.py"
    rm "$l"
    mv "$work/sysconfig.py" "$l"
done
find "$std" -type l -exec sh -c 'printf "build.sh: a link is left: %s\n" "$1" >&2; exit 1' sh {} \;
# Modules whose libraries are left out (licences, see packages.txt), and
# CPython's own test modules.
dyn=$std/lib-dynload
for m in readline _dbm nis _ctypes_test _testbuffer _testcapi _testclinic \
    _testimportmultiple _testinternalcapi _testmultiphase _xxtestfuzz \
    xxlimited xxlimited_35 _xxsubinterpreters _testclinic_limited \
    _testexternalinspection _testlimitedcapi _testsinglephase xxsubtype; do
    rm -f "$dyn/$m.cpython-$abi-$triple.so"
done
# The shared libraries, under their sonames (copies: no links); trixie's
# OpenSSL 3.5 needs libzstd as well.
libs="libz.so.1 libexpat.so.1 libssl.so.3 libcrypto.so.3 libffi.so.8 \
    libsqlite3.so.0 liblzma.so.5 libbz2.so.1.0 libuuid.so.1 libcrypt.so.1 \
    libncursesw.so.6 libpanelw.so.6 libtinfo.so.6"
extra_lic=
if [ "$release" = trixie ]; then
    libs="$libs libzstd.so.1"
    extra_lic='
  zstd (libzstd.so.1): BSD.'
fi
for lib in $libs; do
    f=
    for d in "$x/lib/$triple" "$x/usr/lib/$triple"; do
        [ -e "$d/$lib" ] && f=$d/$lib
    done
    [ -n "$f" ] || die "no $lib in the packages"
    cp -L "$f" "$rt/lib/$lib"
done
# Every NEEDED of the interpreter, the extension modules and the libraries
# is one of ours or glibc's.
glibc_libs=' libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libresolv.so.2 libutil.so.1 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 '
for f in "$rt/bin/$py" "$rt"/lib/*.so.* "$dyn"/*.so; do
    for n in $(readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        case $glibc_libs in *" $n "*) continue ;; esac
        [ -f "$rt/lib/$n" ] || die "$f needs $n, which the runtime does not have"
    done
    readelf -dW "$f" | grep -q '(RUNPATH)' && die "$f has a RUNPATH"
done
# The copyright file of every package of the list.
while read -r p _; do
    case $p in '' | '#'*) continue ;; esac
    cp "$x/usr/share/doc/$p/copyright" "$rt/copyright/$p"
done < "$list"

# Compile the standard library once, here, so nothing is ever written into
# the install: unchecked-hash .pyc files do not depend on mtimes, and
# -s/-p record one fixed directory instead of this temporary one. A clean
# environment with PYTHONHASHSEED=0 (not -I, which ignores it) makes the
# order of set constants, hence the bytes, the same each time; -B keeps the
# modules compileall itself imports from leaving timestamp .pyc files.
# shellcheck disable=SC2086 # $run_py: the loader and its options, split on purpose
(cd "$work" && env -i PYTHONHASHSEED=0 LD_LIBRARY_PATH="$cc_lib" PYTHONHOME="$cc_home" $run_py "$cc_bin" -s -B -m compileall -q -f -j 1 \
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
bin=$rt/bin/$py
glibc=$(readelf -V --wide "$bin" | sed -n 's/.*Name: GLIBC_\([0-9][0-9.]*\) .*/\1/p' |
    sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
for f in "$dyn"/*.so "$rt"/lib/*.so.*; do
    readelf -V --wide "$f" | sed -n 's/.*Name: GLIBC_\([0-9][0-9.]*\) .*/\1/p'
done > "$work/glibc-versions"
printf '%s\n' "$glibc" >> "$work/glibc-versions"
glibc=$(sort -u -t. -k1,1n -k2,2n -k3,3n "$work/glibc-versions" | tail -n 1)
# shellcheck disable=SC2046 # the four numbers it prints, split on purpose
set -- $(python3 "$here/../glibc-runtime/elf_placeholders.py" "$bin" \
    "$(marker interp "$interp_size")" "$(marker rpath "$rpath_size")" "$arch")
[ "$#" -eq 4 ] || die "elf_placeholders.py failed on bin/$py"
interp_off=$1
rpath_off=$3
readelf -dW "$bin" | grep -q '(RPATH)' || die "bin/$py: no RPATH"
cp "$bin" "$work/zeroed"
head -c "$interp_size" /dev/zero | dd of="$work/zeroed" bs=1 seek="$interp_off" conv=notrunc status=none
head -c "$rpath_size" /dev/zero | dd of="$work/zeroed" bs=1 seek="$rpath_off" conv=notrunc status=none
zeroed=$(sha256sum < "$work/zeroed")
zeroed=${zeroed%% *}

py_ver=$(sed -n "s/^$py-minimal \\([^ ]*\\) .*/\\1/p" "$list")
cat > "$rt/NOTICE" <<EOF
Portable Python runtime for shforge installers ($arch), CPython $pyver as
built by Debian ($py_ver). It runs on the private glibc runtime
(glibc-runtime-*.tar.gz) with its library path set to its own lib/ first.

Made from these Debian $release binary packages; their sources are the
named Debian source packages at the same version
(https://deb.debian.org/debian/pool/main/, or apt-get source):
$notice_pkgs

Licences (full texts and copyright holders in copyright/):
  CPython $pyver (bin/$py, lib/$py): PSF License 2.
  OpenSSL 3 (libssl, libcrypto): Apache 2.0. SQLite: public domain.
  libffi, expat, ncurses, util-linux libuuid: MIT/X11-style. zlib: zlib
  licence. xz liblzma: public domain (0BSD). bzip2: BSD-style.
  libxcrypt (libcrypt.so.1): LGPL 2.1 or later.$extra_lic

Changes made by installers/python-runtime/build.sh:
  bin/$py: one page appended with placeholders for the interpreter
  and DT_RPATH (installers/glibc-runtime/elf_placeholders.py; no existing
  byte moved), filled in at install time.
  lib/$py: Debian's sitecustomize.py link (to /etc) and
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
file = "bin/$py"
rpath = ["python/lib", "glibc"]
EOF
# aarch64: the table names its loader (the default is x86_64's).
[ "$arch" = x86_64 ] || printf 'interpreter = "glibc/%s"\n' "$loader"
cat <<EOF
interp_offset = $interp_off
interp_size = $interp_size
rpath_offset = $rpath_off
rpath_size = $rpath_size
zeroed_sha256 = "$zeroed"
glibc = "$glibc"
# archive: sha256 = "${sha%% *}", size = $(wc -c < "$out")
EOF
