#!/usr/bin/env bash
# Python tools the tests use, outside the checkout: a venv at
# /var/cache/shforge/venv-atif (or $SHFORGE_ATIF_VENV) with the `atif`
# package, whose Pydantic models tests/it/atif.rs validates every ATIF
# export against. Every wheel is pinned by version and sha256
# (--require-hashes), binary only (--only-binary), so nothing is built and
# nothing unpinned is fetched. pydantic-core has hashes for CPython 3.11,
# 3.12 and 3.13 on x86_64 Linux; another interpreter fails the install,
# loudly. Idempotent: an existing venv whose `atif` imports at the pinned
# version is kept.
#
# Prints the venv's python path on its last line of standard output;
# export it as SHFORGE_ATIF_PYTHON, or leave the default path the test
# looks at. Exit status: 0 installed (or already there), non-zero when the
# install failed (pip's message on standard error).
set -euo pipefail

venv=${SHFORGE_ATIF_VENV:-/var/cache/shforge/venv-atif}
python=${PYTHON:-python3}
py="$venv/bin/python"

if [ -x "$py" ] && "$py" -c 'import importlib.metadata as m, sys; sys.exit(m.version("atif") != "1.8.0")' 2>/dev/null; then
    printf '%s\n' "$py"
    exit 0
fi

mkdir -p "$(dirname "$venv")"
rm -rf "$venv"
"$python" -m venv "$venv" >&2

req=$(mktemp)
trap 'rm -f "$req"' EXIT
cat >"$req" <<'REQ'
atif==1.8.0 \
    --hash=sha256:b002ade91e50a5925e6f540adc0f5f5cdc6afdd806efc6282b69f03d461958cc
pydantic==2.14.4 \
    --hash=sha256:653a2ad9f6d8858529c77c72717d0ea991d6c6837fe683246b2f4b2bbfc3fadc
pydantic-core==2.50.5 \
    --hash=sha256:488319076ec92908b91fc6265ce761f1d78748f69f85518564fd16bf333e1b70 \
    --hash=sha256:470bbc2495367f60d3ca849a8039e4c164701d10637e7743f4427d92651bdb6d \
    --hash=sha256:cbfde3ad127786f1dea1a6cd89a5eb824a16203f24743ad2b4e07506f43bc844
annotated-types==0.8.0 \
    --hash=sha256:f072f4d804ea359e4eaf198b1af7a8b0943881a87f31bb764f8bf219bb9419e0
typing-extensions==4.16.0 \
    --hash=sha256:481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8
typing-inspection==0.4.5 \
    --hash=sha256:bc210535442b39e1bf2805e0c7a17dfd6a4ace760c84c7f7d16245d23a6b1c39
REQ

"$py" -m pip install --quiet --disable-pip-version-check --no-input \
    --require-hashes --only-binary=:all: --no-deps -r "$req" >&2
"$py" -c 'import atif; atif.Trajectory' >&2
printf '%s\n' "$py"
