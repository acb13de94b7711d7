#!/bin/sh
# uv for `sh installers/bundle.sh hermes` (installers/python-runtime/bundle.sh),
# which `shforge fetch --all` runs: a venv outside the checkout,
# /var/cache/shforge/venv-uv (or $SHFORGE_UV_VENV), holding uv 0.13.9 from
# PyPI, pinned by sha256 (--require-hashes, binary only). uv runs on the host
# only, never where a harness runs. Idempotent: a venv whose uv is 0.13.9 is
# kept. Prints uv's path on its last line of standard output (export it as
# SHFORGE_UV). Exit status: 0 installed or already there, non-zero when the
# install failed (pip's message on standard error).
set -eu

venv=${SHFORGE_UV_VENV:-/var/cache/shforge/venv-uv}
uv=$venv/bin/uv

case $("$uv" --version 2>/dev/null) in
"uv 0.13.9 "*)
    printf '%s\n' "$uv"
    exit 0
    ;;
esac

mkdir -p "$(dirname "$venv")"
rm -rf "$venv"
python3 -m venv "$venv" >&2
req=$(mktemp)
trap 'rm -f "$req"' EXIT
cat >"$req" <<'REQ'
uv==0.13.9 \
    --hash=sha256:d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19
REQ
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir \
    --require-hashes --only-binary=:all: -r "$req" >&2
"$uv" --version >&2
printf '%s\n' "$uv"
