#!/bin/sh
# Host side (CI and tests, never shipped): what Harbor 0.25 trials need here,
# offline after the first run (../shared/CONTAINERS-NOTES.md, sections 1-3).
#
#   sh .ci/harbor.sh [SHFORGE_BINARY]
#
# 1. docker compose v2: Debian trixie's docker-compose and docker-buildx
#    packages (bookworm has only compose v1), fetched with `apt-get download`
#    under a private apt state (the host's apt lists and sources are never
#    touched), checked against trixie's signed index by apt itself, then
#    `dpkg -i`. Skipped when `docker compose version` already says v2.
# 2. A Python 3.12 venv (pyenv's 3.12, else python3.12 on PATH) with
#    harbor==0.25.0, pytest and every dependency from PyPI, hash-locked:
#    `pip install --require-hashes -r .ci/harbor-lock.txt` (each version
#    pinned, each file's sha256 checked; the lock says how to regenerate
#    it); `pip freeze` of the venv is kept next to it, and the lock's
#    sha256: a venv made from another lock (or none) is made again.
# 3. This checkout's Python package in that venv as a wheel would lay it out:
#    python/shforge (the scripts symlink dereferenced) in site-packages and
#    the shforge executable in the venv's bin/, where shforge.binary() finds
#    it with no SHFORGE_BIN. Not `pip install .[harbor]`: that compiles the
#    crate in release mode with maturin (minutes on 2 cores, and
#    .ci/python-install.sh already tests that path); the binary here is the
#    one the caller built (argument 1, else $CARGO_TARGET_DIR or target/,
#    debug then release). Refreshed on every run (cheap), so the venv always
#    has this checkout's package.
#
# Dockerd itself comes from .ci/docker.sh (no bridge network, test images).
# Caches under $SHFORGE_HARBOR_CACHE (default /var/cache/shforge/harbor).
# Idempotent. Prints the venv's python path on its last line. Exit 0 ok,
# 1 a step failed.
set -eu
cd "$(dirname "$0")/.."
checkout=$(pwd -P)
cache=${SHFORGE_HARBOR_CACHE:-/var/cache/shforge/harbor}
harbor_version=0.25.0
pytest_version=8.4.2
venv=$cache/venv-harbor-$harbor_version

die() {
    printf '.ci/harbor.sh: %s\n' "$*" >&2
    exit 1
}

mkdir -p "$cache/debs"

# compose_v2: docker compose v2 from trixie's packages.
compose_v2() {
    if docker compose version 2> /dev/null | grep -Eq 'version v?2\.'; then
        return 0
    fi
    apt_state=$cache/apt-trixie
    mkdir -p "$apt_state/lists/partial" "$apt_state/cache/archives/partial"
    [ -f "$apt_state/status" ] || : > "$apt_state/status"
    mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\) *$/\1/p' /etc/apt/sources.list.d/*.sources 2> /dev/null | head -n 1)
    [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
    printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s trixie main\n' "$mirror" \
        > "$apt_state/sources.list"
    set -- -oDir::Etc::SourceList="$apt_state/sources.list" -oDir::Etc::SourceParts=/dev/null \
        -oDir::State::Lists="$apt_state/lists" -oDir::Cache="$apt_state/cache" \
        -oDir::State::status="$apt_state/status" -oAcquire::Languages=none
    debs=
    for pkg in docker-compose docker-buildx; do
        deb=
        for f in "$cache/debs/${pkg}_"*_amd64.deb; do
            [ -f "$f" ] && deb=$f
        done
        if [ -z "$deb" ]; then
            [ -f "$apt_state/updated" ] || {
                apt-get "$@" update >&2 || die "apt-get update of trixie (private state) failed"
                : > "$apt_state/updated"
            }
            (cd "$cache/debs" && apt-get "$@" download "$pkg" >&2) || die "apt-get download $pkg (trixie) failed"
            for f in "$cache/debs/${pkg}_"*_amd64.deb; do
                [ -f "$f" ] && deb=$f
            done
            [ -n "$deb" ] || die "apt-get download $pkg left no .deb"
        fi
        debs="$debs $deb"
    done
    # shellcheck disable=SC2086 # two paths without spaces
    dpkg -i $debs >&2 || die "dpkg -i$debs failed"
    docker compose version 2> /dev/null | grep -Eq 'version v?2\.' || die "docker compose is not v2 after dpkg -i"
}

# python312: pyenv's CPython 3.12, else python3.12 on PATH.
python312() {
    if command -v pyenv > /dev/null 2>&1; then
        for p in "$(pyenv root)"/versions/3.12.*/bin/python3.12; do
            [ -x "$p" ] && { printf '%s\n' "$p"; return 0; }
        done
    fi
    command -v python3.12 || die "no Python 3.12 (pyenv's or on PATH): Harbor 0.25 needs >= 3.12"
}

# harbor_venv: the venv with harbor and pytest (made once).
harbor_venv() {
    lock_sum=$(sha256sum "$checkout/.ci/harbor-lock.txt" | cut -d ' ' -f 1)
    if [ -x "$venv/bin/harbor" ] && [ -f "$venv/freeze.txt" ] && [ "$(cat "$venv/lock.sha256" 2> /dev/null)" = "$lock_sum" ]; then
        return 0
    fi
    for pin in "harbor==$harbor_version" "pytest==$pytest_version"; do
        grep -q "^$pin " "$checkout/.ci/harbor-lock.txt" || die ".ci/harbor-lock.txt does not pin $pin"
    done
    rm -rf "$venv"
    "$(python312)" -m venv "$venv" || die "python3.12 -m venv failed"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet --require-hashes \
        -r "$checkout/.ci/harbor-lock.txt" >&2 || die "pip install --require-hashes -r .ci/harbor-lock.txt failed"
    "$venv/bin/pip" freeze > "$venv/freeze.txt"
    printf '%s\n' "$lock_sum" > "$venv/lock.sha256"
}

# shforge_package BINARY: the package and the executable into the venv.
shforge_package() {
    bin=$1
    [ -x "$bin" ] || die "no shforge executable at $bin (cargo build first, or pass its path)"
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    rm -rf "$site/shforge.tmp"
    cp -RL "$checkout/python/shforge" "$site/shforge.tmp"
    find "$site/shforge.tmp" -name __pycache__ -prune -exec rm -rf {} +
    rm -rf "$site/shforge"
    mv "$site/shforge.tmp" "$site/shforge"
    cp "$bin" "$venv/bin/shforge.tmp"
    mv "$venv/bin/shforge.tmp" "$venv/bin/shforge"
    SHFORGE_BIN='' "$venv/bin/python" -c 'import shforge; shforge.verify()' || die "shforge.verify() failed in $venv"
}

binary=${1:-}
if [ -z "$binary" ]; then
    for t in "${CARGO_TARGET_DIR:-$checkout/target}/debug/shforge" "${CARGO_TARGET_DIR:-$checkout/target}/release/shforge"; do
        [ -x "$t" ] && { binary=$t; break; }
    done
fi
[ -n "$binary" ] || die "no built shforge (cargo build, or pass the executable's path)"

compose_v2
harbor_venv
shforge_package "$binary"
printf '%s\n' "$venv/bin/python"
