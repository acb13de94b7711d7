#!/bin/sh
# The Python package installed the standard way (issue 40): from a clean
# `git clone` of this checkout's HEAD (so untracked or uncommitted files
# cannot help), `pip install CLONE` into a fresh venv, then
# `python -m build --sdist` in the clone and `pip install SDIST` into
# another fresh venv. Against each: shforge.verify() (the scripts are
# generated/ byte for byte), mypy --strict on the installed package (it is
# typed) and tests/python (the CLI on the venv's PATH among them).
# Usage: sh .ci/python-install.sh [PYTHON] (default python3).
#
# maturin and build are pinned by sha256: the wheels are fetched once into a
# wheelhouse (--require-hashes), and every pip here, the isolated build
# environments of pip and build included (PIP_NO_INDEX, PIP_FIND_LINKS), is
# given that wheelhouse alone. pytest and mypy come from the index, as in
# .ci/python-wheel.sh. Both wheel builds compile the crate in release mode
# into one cargo target dir, $SHFORGE_INSTALL_TARGET (default
# $work/target; CI passes the checkout's target/, where the native wheel's
# build left every dependency compiled), so the second build compiles only
# shforge itself. Work dir: $SHFORGE_INSTALL_WORK, default
# $TMPDIR/shforge-python-install; nothing is written outside it but cargo's
# own registry cache and that target dir.
set -eu
cd "$(dirname "$0")/.."
checkout=$(pwd -P)
python=${1:-python3}
work=${SHFORGE_INSTALL_WORK:-${TMPDIR:-/tmp}/shforge-python-install}
CARGO_TARGET_DIR=${SHFORGE_INSTALL_TARGET:-$work/target}
export CARGO_TARGET_DIR
# SHFORGE_BIN would point shforge.binary() away from the venv's own binary.
unset SHFORGE_BIN
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1

rm -rf "$work"
mkdir -p "$work"
"$python" -m venv "$work/tools"
cat > "$work/build-tools.txt" <<'REQ'
maturin==1.16.0 \
    --hash=sha256:837db2f4d93d4899c3ac393fb3cc9eebf35b6002336e5d574f4a4fb6c49fe283
build==1.6.1 \
    --hash=sha256:ecd351a4be9d35a9eaaba244a7687143c9c7d4aea6ac964e7e7ddab20cbcf4e7
packaging==26.4 \
    --hash=sha256:81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2
pyproject-hooks==1.3.3 \
    --hash=sha256:5fc53fdac9f7bd63fbcdc868fb5f90b4784d78a53a3d3388cd738b807441a20b
REQ
wheels=$work/wheelhouse
"$work/tools/bin/pip" download --quiet --require-hashes --only-binary=:all: --no-deps \
    -d "$wheels" -r "$work/build-tools.txt"
"$work/tools/bin/pip" install --quiet --no-index --find-links "$wheels" --no-deps \
    build packaging pyproject-hooks

git clone --quiet "$checkout" "$work/clone"
git -C "$work/clone" checkout --quiet --detach "$(git rev-parse HEAD)"

# pip_pinned VENV ARG...: pip install with the wheelhouse as the only index.
pip_pinned() {
    venv=$1
    shift
    PIP_NO_INDEX=1 PIP_FIND_LINKS=$wheels "$venv/bin/pip" install --quiet "$@"
}

# check VENV: the installed package, run from outside the clone so that its
# python/ can never shadow it.
check() {
    "$1/bin/pip" install --quiet pytest mypy
    (
        cd "$work"
        PATH=$1/bin:$PATH
        "$1/bin/python" -c 'import shforge; shforge.verify(); print("verify:", shforge.scripts_dir())'
        "$1/bin/mypy" --strict --no-incremental --cache-dir=/dev/null -p shforge
        SHFORGE_SKIP_DOCKER=1 "$1/bin/python" -m pytest -p no:cacheprovider --basetemp="$1/pytest-tmp" -q -ra "$work/clone/tests/python"
    )
}

echo "== pip install CHECKOUT"
start=$(date +%s)
"$python" -m venv "$work/venv-checkout"
pip_pinned "$work/venv-checkout" "$work/clone"
echo "pip install CHECKOUT (wheel build): $(( $(date +%s) - start )) s"
check "$work/venv-checkout"

echo "== python -m build --sdist; pip install SDIST"
start=$(date +%s)
(cd "$work/clone" && PIP_NO_INDEX=1 PIP_FIND_LINKS=$wheels \
    "$work/tools/bin/python" -m build --sdist --outdir "$work/dist" . > "$work/build-sdist.log" 2>&1) || {
    cat "$work/build-sdist.log"
    exit 1
}
set -- "$work"/dist/shforge-*.tar.gz
[ "$#" -eq 1 ] && [ -f "$1" ] || {
    echo "python-install.sh: expected one sdist in $work/dist" >&2
    exit 1
}
sdist=$1
echo "sdist: $(basename "$sdist"), $(wc -c < "$sdist") bytes, $(( $(date +%s) - start )) s"
start=$(date +%s)
"$python" -m venv "$work/venv-sdist"
pip_pinned "$work/venv-sdist" "$sdist"
echo "pip install SDIST (wheel build): $(( $(date +%s) - start )) s"
check "$work/venv-sdist"
