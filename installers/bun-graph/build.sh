#!/bin/sh
# Host side (not run in the sandbox): build a Bun single-file executable for
# another arch from npm artifacts only. A harness whose npm platform
# package exists for x86-64 but not for arm64 (Cline, Kilo: the arm64
# packages answer 404) ships a program made by `bun build --compile`: the
# plain `bun` binary plus the app's module graph in the ELF section `.bun`.
# The graph's JavaScript is arch-independent; what is not are the native
# libraries embedded in it (opentui's renderer, a pty, a file watcher...),
# each published on npm per platform. So this recipe takes
#   base  the x86-64 platform package (its whole `package/` tree is kept)
#   bun   the `bun` package of the same Bun version for the target arch
#   swap  for each embedded x86-64 library (named by its sha256), the
#         target arch's build of the same package version
# every one an `npm pack` checked against the sha256 in the recipe, moves
# the graph onto the target's bun with the libraries swapped
# (bun_graph.py: the graph format and the ELF write, as Bun's own
# `--compile` does it) and writes the base tree, with PROGRAM replaced, as a
# deterministic tar.gz (sorted names, mtime 0, owner 0, gzip -n).
#
# The recipe is installers/bundles/NAME/bun-graph, one directive a line
# (`#` comments):
#   base PKG@VER SHA256 PROGRAM        PROGRAM: the executable, package-relative
#   bun PKG@VER SHA256 MEMBER          MEMBER: the bun binary in that tarball
#   swap OLD_SHA256 PKG@VER SHA256 MEMBER
#
# usage: sh installers/bun-graph/build.sh NAME OUT.tar.gz
# needs: npm (network access to the registry), python3, GNU tar, gzip,
# sha256sum.
set -eu

die() {
    printf 'bun-graph/build.sh: %s\n' "$1" >&2
    exit "${2:-1}"
}
if [ "$#" -ne 2 ]; then
    die 'usage: sh installers/bun-graph/build.sh NAME OUT.tar.gz' 2
fi
name=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd -P)
recipe=$here/../bundles/$name/bun-graph
[ -f "$recipe" ] || die "no recipe $recipe" 2
command -v npm >/dev/null 2>&1 || die "no npm on PATH (the recipe's packages come from \`npm pack\`)"
command -v python3 >/dev/null 2>&1 || die "no python3 on PATH (bun_graph.py moves the graph)"
case $out in
/*) ;;
*) out=$(pwd -P)/$out ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# fetch PKG@VER SHA256 DIR: npm pack it into DIR (nothing of it runs), check
# its sha256, unpack it into DIR/tree.
fetch() {
    mkdir "$3" "$3/tree"
    (cd "$3" && npm pack --loglevel=warn "$1" >/dev/null) || die "npm pack $1 failed"
    set -- "$1" "$2" "$3" "$3"/*.tgz
    { [ "$#" -eq 4 ] && [ -f "$4" ]; } || die "npm pack $1 wrote no single .tgz"
    got=$(sha256sum "$4" | cut -d' ' -f1)
    [ "$got" = "$2" ] || die "$1: sha256 $got, the recipe pins $2"
    tar -xzf "$4" -C "$3/tree" --no-same-owner || die "$1: cannot unpack"
}

n=0
base=
program=
bun=
set --
while read -r kind a b c d rest; do
    case $kind in '' | '#'*) continue ;; esac
    n=$((n + 1))
    case $kind in
    base)
        { [ -n "$c" ] && [ -z "$d" ]; } || die "$recipe: base PKG@VER SHA256 PROGRAM"
        fetch "$a" "$b" "$work/$n"
        base=$work/$n/tree
        program=$c
        ;;
    bun)
        { [ -n "$c" ] && [ -z "$d" ]; } || die "$recipe: bun PKG@VER SHA256 MEMBER"
        fetch "$a" "$b" "$work/$n"
        bun=$work/$n/tree/$c
        ;;
    swap)
        { [ -n "$d" ] && [ -z "$rest" ]; } || die "$recipe: swap OLD_SHA256 PKG@VER SHA256 MEMBER"
        fetch "$b" "$c" "$work/$n"
        set -- "$@" --swap "$a=$work/$n/tree/$d"
        ;;
    *) die "$recipe: unknown directive $kind" ;;
    esac
done < "$recipe"
{ [ -n "$base" ] && [ -n "$bun" ]; } || die "$recipe: needs a base and a bun line"
{ [ -f "$base/$program" ] && [ ! -L "$base/$program" ]; } || die "base has no file $program"
{ [ -f "$bun" ] && [ ! -L "$bun" ]; } || die "bun package has no file $bun"

python3 "$here/bun_graph.py" "$base/$program" "$bun" "$work/program" "$@"
mv "$work/program" "$base/$program"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    --mode=u+rwX,go+rX,go-w -C "$base" -cf - package | gzip -n -9 > "$out.tmp"
mv "$out.tmp" "$out"
sha256sum "$out"
