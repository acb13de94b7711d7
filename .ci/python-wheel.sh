#!/bin/sh
# The Python wheel (issue 25): build it with maturin from this checkout,
# install it into a fresh venv and run tests/python and a type checker
# against the installed package, with no Rust toolchain on PATH after the
# build. Usage: sh .ci/python-wheel.sh [aarch64 | build | test] [PYTHON]
# (default python3). `build` only builds the native wheel (CI builds it
# while the artifacts are still fetched); `test` only tests the wheel that
# `build` left in the work dir.
# With `aarch64`, the wheel is cross-built for aarch64 (Debian's rustc-web,
# .ci/aarch64-rust.sh, and gcc-aarch64-linux-gnu) and tested under
# qemu-aarch64-static instead: its binary regenerates generated/
# byte-identically and the typed API's tests pass against it.
# The scripts come in through python/shforge/scripts, a symlink to
# generated/ (pyproject.toml); nothing is copied first.
# Work dir: $SHFORGE_WHEEL_WORK, default $TMPDIR/shforge-python-wheel[-aarch64];
# the build venv (maturin 1.16.0, pinned by sha256) is
# $SHFORGE_WHEEL_BUILD_VENV, default $TMPDIR/shforge-python-build, and kept
# while its maturin is that version (.ci/run keeps one in /var/cache/shforge).
# Nothing else is written outside those two but cargo's registry cache and
# target/ of the checkout.
set -eu
cd "$(dirname "$0")/.."
checkout=$(pwd -P)
target=
step=all
case ${1:-} in
aarch64)
    target=aarch64-unknown-linux-gnu
    shift
    ;;
build | test)
    step=$1
    shift
    ;;
esac
python=${1:-python3}
work=${SHFORGE_WHEEL_WORK:-${TMPDIR:-/tmp}/shforge-python-wheel${target:+-aarch64}}
build_venv=${SHFORGE_WHEEL_BUILD_VENV:-${TMPDIR:-/tmp}/shforge-python-build}
# pip's own cache stays out of HOME.
export PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

case $("$build_venv/bin/maturin" --version 2>/dev/null) in
"maturin 1.16.0") ;;
*)
    rm -rf "$build_venv"
    mkdir -p "$(dirname "$build_venv")"
    "$python" -m venv "$build_venv"
    req=$(mktemp)
    cat > "$req" <<'REQ'
maturin==1.16.0 \
    --hash=sha256:837db2f4d93d4899c3ac393fb3cc9eebf35b6002336e5d574f4a4fb6c49fe283
REQ
    "$build_venv/bin/pip" install --quiet --require-hashes --only-binary=:all: --no-deps -r "$req"
    rm -f "$req"
    ;;
esac

# build_wheel: a fresh work dir with the wheel in dist/.
build_wheel() {
    rm -rf "$work"
    mkdir -p "$work"
    build_start=$(date +%s)
    if [ -n "$target" ]; then
        rustc=$(sh .ci/aarch64-rust.sh | tail -n 1)
        # Debian's rustc finds its own sysroot (both standard libraries) from
        # its path; its shared libraries are beside it. A target dir of its own:
        # another compiler's artifacts would not be reused anyway.
        LD_LIBRARY_PATH=$(dirname "$(dirname "$rustc")")/lib/x86_64-linux-gnu \
            RUSTC=$rustc CARGO_TARGET_DIR=$checkout/target/aarch64-cross \
            CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
            CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc \
            "$build_venv/bin/maturin" build --release --target "$target" --out "$work/dist"
    else
        "$build_venv/bin/maturin" build --release --out "$work/dist"
    fi
    echo "wheel build: $(( $(date +%s) - build_start )) s"
}

[ "$step" = test ] || build_wheel
set -- "$work"/dist/shforge-*.whl
[ "$#" -eq 1 ] && [ -f "$1" ] || {
    echo "python-wheel.sh: expected one wheel in $work/dist" >&2
    exit 1
}
wheel=$1
echo "wheel: $(basename "$wheel"), $(wc -c < "$wheel") bytes"
[ "$step" != build ] || exit 0
if [ -n "$target" ]; then
    exec sh "$checkout/.ci/wheel-aarch64-test.sh" "$wheel" "$work" "$python"
fi

# A fresh venv; from here on no cargo or rustc is reachable.
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "$wheel" pytest mypy
PATH=$work/venv/bin:/usr/local/bin:/usr/bin:/bin
export PATH
# SHFORGE_BIN would point shforge.binary() away from the wheel's own binary.
unset CARGO RUSTUP_HOME CARGO_HOME RUSTC SHFORGE_BIN
if command -v cargo >/dev/null 2>&1 || command -v rustc >/dev/null 2>&1; then
    echo "python-wheel.sh: a Rust toolchain is still on PATH" >&2
    exit 1
fi
# Outside the checkout, so that python/ can never shadow the installed package.
cd "$work"
"$work/venv/bin/python" -X importtime -c 'import shforge' 2> importtime.txt
echo "import shforge: $(awk -F'|' '$3 ~ / shforge$/ {gsub(/ /, "", $2); print $2}' importtime.txt) us cumulative"
"$work/venv/bin/mypy" --strict --no-incremental -p shforge
"$work/venv/bin/mypy" --strict --no-incremental "$checkout/tests/python"
"$work/venv/bin/python" -m pytest -p no:cacheprovider --basetemp="$work/pytest-tmp" -ra "$checkout/tests/python"
