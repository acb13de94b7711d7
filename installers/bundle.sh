#!/bin/sh
# Host side (not run in the sandbox): build the relocatable bundle of a Node
# CLI and its node_modules that a shforge installer unpacks next to a Node
# runtime. The dependency tree is pinned by installers/bundles/NAME/package-lock.json
# and the archive is written deterministically (sorted names, mtime 0, owner 0,
# gzip without a timestamp), so the same lock file on the same platform gives
# the same bytes and the sha256 in installers/NAME.toml can be checked again.
#
# usage: sh installers/bundle.sh NAME OUT.tar.gz
#        sh installers/bundle.sh glibc-runtime OUT.tar.gz [--debs DIR]
#        sh installers/bundle.sh python-runtime OUT.tar.gz [--debs DIR]
#        sh installers/bundle.sh bash-static OUT [--debs DIR] [--arch ARCH]
#        sh installers/bundle.sh NAME OUT.tar.gz   (bundles/NAME/bun-graph)
# needs: npm, GNU tar, gzip. `glibc-runtime` builds the private glibc
# runtime instead (installers/glibc-runtime/build.sh says how), and
# `python-runtime` the portable Python (installers/python-runtime/build.sh);
# a NAME whose bundles/NAME has a requirements.txt is a Python harness
# (installers/python-runtime/bundle.sh), and one whose bundles/NAME has a
# bun-graph recipe is a Bun single-file executable moved onto another arch's
# Bun (installers/bun-graph/build.sh).
set -eu

if [ "${1:-}" = glibc-runtime ] && [ "$#" -ge 2 ]; then
    shift
    exec sh "$(dirname "$0")/glibc-runtime/build.sh" "$@"
fi
if [ "${1:-}" = bash-static ] && [ "$#" -ge 2 ]; then
    shift
    exec sh "$(dirname "$0")/bash-static/build.sh" "$@"
fi
if [ "${1:-}" = python-runtime ] && [ "$#" -ge 2 ]; then
    shift
    exec sh "$(dirname "$0")/python-runtime/build.sh" "$@"
fi
# A Python harness (a requirements.txt with hashes instead of a package lock):
# python-runtime/bundle.sh installs its wheels on the host with uv.
if [ "$#" -eq 2 ] && [ -f "$(dirname "$0")/bundles/$1/requirements.txt" ]; then
    exec sh "$(dirname "$0")/python-runtime/bundle.sh" "$@"
fi
# A Bun single-file executable rebuilt for another arch from npm artifacts.
if [ "$#" -eq 2 ] && [ -f "$(dirname "$0")/bundles/$1/bun-graph" ]; then
    exec sh "$(dirname "$0")/bun-graph/build.sh" "$@"
fi

if [ "$#" -ne 2 ]; then
    printf 'usage: sh installers/bundle.sh NAME OUT.tar.gz\n' >&2
    exit 2
fi
name=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd -P)
src=$here/bundles/$name
if [ ! -f "$src/package-lock.json" ]; then
    printf 'bundle.sh: no %s\n' "$src/package-lock.json" >&2
    exit 2
fi

# An OUT named *-linux-arm64.tar.gz is the aarch64 bundle: npm ci then picks
# the optional platform packages an arm64 host would (clipboard-linux-arm64-gnu
# instead of -x64-gnu), so the same `source` line gives the same bytes on any
# host. A caller's own npm_config_* settings win.
case $out in
*-linux-arm64.tar.gz)
    npm_config_cpu=${npm_config_cpu:-arm64}
    npm_config_os=${npm_config_os:-linux}
    npm_config_libc=${npm_config_libc:-glibc}
    export npm_config_cpu npm_config_os npm_config_libc
    ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bundle"
cp "$src/package.json" "$src/package-lock.json" "$work/bundle/"
# --ignore-scripts: nothing from the registry runs on the host; the packages
# ship their prebuilt native parts.
(cd "$work/bundle" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >&2)
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    --mode=u+rwX,go+rX,go-w -C "$work" -cf - bundle | gzip -n -9 > "$out.tmp"
mv "$out.tmp" "$out"
sha256sum "$out"
