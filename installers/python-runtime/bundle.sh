#!/bin/sh
# Host side (not run in the sandbox): build the relocatable bundle of a
# Python harness that a shforge installer unpacks next to the portable Python
# runtime (build.sh here). Its wheels are pinned, with their sha256, by
# installers/bundles/NAME/requirements.txt (`uv pip compile --generate-hashes`),
# and installed here, on the host, with uv: --require-hashes, --no-config (no
# uv.toml, [tool.uv] or .python-version of any directory), no managed Python
# (UV_PYTHON_DOWNLOADS=never, an absolute --python), a private cache and
# HOME, binary wheels only (nothing is built or run from a package). Nothing
# is resolved or downloaded where the harness runs, and uv never runs there.
#
# The bundle (unpacked at `dest = "NAME"`):
#   site-packages/   the installed wheels, compiled to unchecked-hash .pyc
#   boot.py          adds site-packages to sys.path (after the standard
#                    library) and calls the entry point in
#                    installers/bundles/NAME/entry (MODULE:FUNCTION), or is
#                    installers/bundles/NAME/boot.py where there is one
#   bin/run          `exec PYTHON -I -B BOOT ARGS...`: the spec's [launcher]
#                    runs it with the absolute paths of python and boot.py
#   NOTICE           every distribution with its version and licence
# written deterministically (sorted names, mtime 0, owner 0, gzip -n).
#
# A bundle for another Python than bookworm's 3.11 names it in
# installers/bundles/NAME/python as `X.Y RELEASE` (Stirrup: `3.13 trixie`):
# uv then picks the wheels for X.Y (--python-version; the host's 3.11 is only
# the interpreter uv starts), and the .pyc files are compiled by that
# release's own interpreter, unpacked here from the .debs pinned in
# python-runtime/packages-RELEASE.txt and run through that release's loader
# (glibc-runtime/packages-RELEASE.txt), both fetched by installers/debs.sh.
# installers/bundles/NAME/leave-out lists files of site-packages left out
# (globs, one a line, `#` comments): the NOTICE names them.
#
# An OUT named *-aarch64.tar.gz is the aarch64 bundle: uv picks the
# aarch64 wheels (--python-platform aarch64-manylinux_2_28; their sha256 are
# in the same requirements.txt). The .pyc files are compiled by the same
# x86_64 interpreter of the same CPython X.Y as for x86_64: bytecode does
# not depend on the arch (checked: the arm64 interpreter under
# qemu-aarch64-static writes the same bytes), and nothing of a package is
# imported or run while compiling.
#
# usage: sh installers/python-runtime/bundle.sh NAME OUT.tar.gz
# needs: uv 0.13.9 ($SHFORGE_UV, default /var/cache/shforge/venv-uv/bin/uv:
# `python3 -m venv /var/cache/shforge/venv-uv && /var/cache/shforge/venv-uv/bin/pip
# install uv==0.13.9`), a CPython 3.11 ($SHFORGE_HOST_PYTHON, default
# /usr/bin/python3.11), network access to PyPI, GNU tar, gzip, sha256sum.
set -eu

if [ "$#" -ne 2 ]; then
    printf 'usage: sh installers/python-runtime/bundle.sh NAME OUT.tar.gz\n' >&2
    exit 2
fi
name=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd -P)
src=$here/../bundles/$name
uv=${SHFORGE_UV:-/var/cache/shforge/venv-uv/bin/uv}
py=${SHFORGE_HOST_PYTHON:-/usr/bin/python3.11}

die() {
    printf 'bundle.sh: %s\n' "$1" >&2
    exit 1
}
[ -f "$src/requirements.txt" ] || die "no $src/requirements.txt"
[ -f "$src/entry" ] || [ -f "$src/boot.py" ] || die "no $src/entry or $src/boot.py"
[ -x "$uv" ] || die "no uv at $uv (set SHFORGE_UV)"
case $("$uv" --version) in
    'uv 0.13.9'*) ;;
    *) die "$uv is not uv 0.13.9" ;;
esac
case $py in /*) ;; *) die "SHFORGE_HOST_PYTHON must be an absolute path" ;; esac
case $("$py" -I -c 'import sys; print("%d.%d" % sys.version_info[:2])') in
    3.11) ;;
    *) die "$py is not CPython 3.11" ;;
esac
if [ ! -f "$src/boot.py" ]; then
    entry=$(cat "$src/entry")
    mod=${entry%%:*}
    fun=${entry#*:}
    case $mod:$fun in
        *[!A-Za-z0-9_.:]* | :* | *:) die "$src/entry: expected MODULE:FUNCTION" ;;
    esac
fi
pyver=3.11
release=bookworm
if [ -f "$src/python" ]; then
    read -r pyver release < "$src/python" || true
    case $pyver:$release in
        3.[0-9]*:[a-z]*) ;;
        *) die "$src/python: expected X.Y RELEASE" ;;
    esac
fi

platform=x86_64-manylinux_2_28
case $out in
    *-aarch64.tar.gz) platform=aarch64-manylinux_2_28 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The interpreter that compiles the .pyc files: the host's 3.11, or the
# release's own, through its own loader.
compile_py=$py
if [ "$pyver" != 3.11 ]; then
    # shellcheck source=installers/debs.sh
    . "$here/../debs.sh"
    mkdir -p "$work/debs" "$work/t"
    debs_fetch "$here/packages-$release.txt" "$work/debs" "$work/t"
    debs_fetch "$here/../glibc-runtime/packages-$release.txt" "$work/debs" "$work/t"
    tl=$work/t/usr/lib/x86_64-linux-gnu
    cat > "$work/python" <<EOF
#!/bin/sh
PYTHONHOME=$work/t/usr exec $tl/ld-linux-x86-64.so.2 --library-path $tl $work/t/usr/bin/python$pyver "\$@"
EOF
    chmod 755 "$work/python"
    compile_py=$work/python
fi
b=$work/bundle
mkdir -p "$b/bin" "$work/home" "$work/cache"
# A clean environment: no UV_*, PIP_* or PYTHON* of the caller reach uv;
# only the host's way out to PyPI (CA bundle, proxy) is kept.
set --
for v in SSL_CERT_FILE SSL_CERT_DIR https_proxy HTTPS_PROXY no_proxy NO_PROXY; do
    eval "[ -z \"\${$v+x}\" ] || set -- \"\$@\" \"$v=\$$v\""
done
env -i "$@" PATH=/usr/bin:/bin HOME="$work/home" UV_CACHE_DIR="$work/cache" \
    UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1 \
    "$uv" pip install --no-config --python "$py" --python-version "$pyver" \
    --python-platform "$platform" --target "$b/site-packages" \
    --require-hashes --no-deps --only-binary :all: --no-compile \
    --index-url https://pypi.org/simple --link-mode copy \
    -r "$src/requirements.txt" >&2 || die "uv pip install failed"
# Console scripts name the host's python in their #! line: the launcher
# calls the entry point itself.
rm -rf "$b/site-packages/bin"
left_out=
if [ -f "$src/leave-out" ]; then
    while read -r glob; do
        case $glob in '' | '#'*) continue ;; esac
        for f in "$b/site-packages/"$glob; do
            [ -e "$f" ] || die "leave-out: nothing matches $glob"
            rm -rf "$f"
            left_out="$left_out
  ${f#"$b/site-packages/"}"
        done
    done < "$src/leave-out"
fi
if grep -rlF "$work" "$b/site-packages" >/dev/null 2>&1; then
    die "a file of site-packages records the build directory"
fi

if [ -f "$src/boot.py" ]; then
    # The harness's own boot.py (Hermes: its prompt from a file).
    cp "$src/boot.py" "$b/boot.py"
else
cat > "$b/boot.py" <<EOF
"""Start $name from the site-packages next to this file.

Run as python -I -B boot.py ARGS (bin/run does): -I keeps PYTHON* variables,
the user site and the working directory off sys.path; site-packages comes
after the standard library, so no package can shadow a standard module.
"""
import os
import site
import sys

site.addsitedir(os.path.join(os.path.dirname(os.path.realpath(__file__)), "site-packages"))
sys.argv[0] = "$name"
from $mod import $fun  # noqa: E402

sys.exit($fun())
EOF
fi
cat > "$b/bin/run" <<'EOF'
#!/bin/sh
# The spec's [launcher] runs `run PYTHON BOOT ARGS...` with absolute paths;
# -I: no PYTHON* variables, user site or working directory; -B: nothing is
# ever written into the install (the .pyc files are shipped).
py=$1
boot=$2
shift 2
exec "$py" -I -B "$boot" "$@"
EOF

# Unchecked-hash .pyc (valid wherever the bundle lands, never rewritten),
# with a fixed hash seed so the bytes are the same each time. Files that
# are not Python 3 (templates of some packages) are left uncompiled.
(cd "$work" && env -i PYTHONHASHSEED=0 "$compile_py" -s -B -m compileall -q -f -j 1 \
    --invalidation-mode unchecked-hash -s "$b" -p "/$name" "$b/site-packages" "$b/boot.py" >/dev/null) || true

# NOTICE: each distribution and the licence its metadata declares.
{
    printf '%s bundle for shforge installers: the wheels pinned (with sha256) in\n' "$name"
    printf 'installers/bundles/%s/requirements.txt, installed unmodified except that\n' "$name"
    printf 'console scripts (site-packages/bin) are left out and .pyc files added.\n'
    printf 'Each distribution, its version and its declared licence (full texts in\n'
    printf 'its site-packages/*.dist-info):\n\n'
    if [ -n "$left_out" ]; then
        printf 'Left out of site-packages (installers/bundles/%s/leave-out says why):%s\n\n' "$name" "$left_out"
    fi
    env -i "$py" -I -c '
import email.parser, pathlib, sys
for d in sorted(pathlib.Path(sys.argv[1]).glob("*.dist-info")):
    m = email.parser.Parser().parsestr((d / "METADATA").read_text(encoding="utf-8"), headersonly=True)
    lic = m.get("License-Expression") or ""
    if not lic:
        cl = [c.split("::")[-1].strip() for c in m.get_all("Classifier") or [] if c.startswith("License ::")]
        lic = "; ".join(cl) or (m.get("License") or "").strip().splitlines()[0:1]
        lic = lic if isinstance(lic, str) else "".join(lic)
    print("  %s %s: %s" % (m["Name"], m["Version"], lic or "see dist-info"))
' "$b/site-packages"
} > "$b/NOTICE"

find "$b" -type d -exec chmod 755 {} +
find "$b" -type f -exec chmod 644 {} +
chmod 755 "$b/bin/run"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    -C "$b" -cf - . | gzip -n -9 > "$out.tmp"
mv "$out.tmp" "$out"
sha256sum "$out"
