#!/bin/sh
# Tests the cross-built aarch64 wheel on this x86_64 machine (run by
# `.ci/python-wheel.sh aarch64`). Usage: sh .ci/wheel-aarch64-test.sh WHEEL
# WORK PYTHON. pip will not install an aarch64 wheel into an x86_64 Python,
# so the wheel (a zip) is unpacked as an installer would lay it out, and its
# binary runs under qemu-aarch64-static with the aarch64 C library of
# Debian's cross toolchain (QEMU_LD_PREFIX). Checked: the wheel's tag, that
# the binary is an AArch64 ELF, that it regenerates generated/ byte-identically
# (`shforge check`), and the typed API's tests and the adapter example
# against that binary (tests/python, SHFORGE_BIN pointing at it).
set -eu
cd "$(dirname "$0")/.."
checkout=$(pwd -P)
wheel=$1
work=$2
python=$3

case $(basename "$wheel") in
shforge-*-py3-none-manylinux_*_aarch64.whl) ;;
*)
    echo "wheel-aarch64-test.sh: $(basename "$wheel") is not a py3-none-manylinux aarch64 wheel" >&2
    exit 1
    ;;
esac
command -v qemu-aarch64-static >/dev/null 2>&1 || {
    echo "wheel-aarch64-test.sh: qemu-aarch64-static is missing (Debian's qemu-user-static)" >&2
    exit 1
}
sysroot=/usr/aarch64-linux-gnu
[ -e "$sysroot/lib/ld-linux-aarch64.so.1" ] || {
    echo "wheel-aarch64-test.sh: no $sysroot/lib/ld-linux-aarch64.so.1 (Debian's libc6-arm64-cross)" >&2
    exit 1
}

site=$work/site
rm -rf "$site"
# Modes come from each member's external attributes, as pip sets them.
"$python" -c '
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        mode = (info.external_attr >> 16) & 0o777
        if mode and not info.is_dir():
            os.chmod(path, mode)
' "$wheel" "$site"
set -- "$site"/shforge-*.data/scripts/shforge
[ "$#" -eq 1 ] && [ -f "$1" ] || {
    echo "wheel-aarch64-test.sh: no shforge binary in the wheel's scripts" >&2
    exit 1
}
bin=$1
# ELF e_machine (bytes 18-19, little-endian): 183 is EM_AARCH64.
machine=$(od -An -tu2 -j18 -N2 "$bin" | tr -d ' ')
if [ "$machine" != 183 ]; then
    echo "wheel-aarch64-test.sh: the wheel's binary has e_machine $machine, not 183 (AArch64)" >&2
    exit 1
fi
echo "aarch64 binary: $(wc -c < "$bin") bytes, e_machine 183"

wrapper=$work/shforge-aarch64
# (Paths from TMPDIR and the wheel's name: no single quotes in them.)
# shellcheck disable=SC2016
printf '#!/bin/sh\nQEMU_LD_PREFIX=%s exec qemu-aarch64-static %s "$@"\n' "'$sysroot'" "'$bin'" > "$wrapper"
chmod +x "$wrapper"
"$wrapper" --version
# The emulated binary writes the scripts reviewers read, byte for byte.
"$wrapper" check --out "$checkout/generated"
echo "aarch64 shforge check: generated/ byte-identical"

rm -rf "$work/venv"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet pytest
# The wheel's own binary is not on this x86_64 PATH (the one test of that is
# the native wheel's); everything else runs against the emulated binary.
cd "$work"
SHFORGE_SKIP_DOCKER=1 SHFORGE_BIN=$wrapper PYTHONPATH=$site "$work/venv/bin/python" -m pytest -p no:cacheprovider -ra \
    -k 'not test_the_binary_is_the_wheels_and_on_path' "$checkout/tests/python"
