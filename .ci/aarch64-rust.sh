#!/bin/sh
# A Rust compiler that can build for aarch64-unknown-linux-gnu, for the
# aarch64 wheel (.ci/python-wheel.sh aarch64). The machine's rustup toolchain
# has the x86_64 target only and rustup cannot fetch another here, so this is
# Debian's own: bookworm-security's rustc-web 1.96 with its x86_64 and arm64
# standard libraries and the LLVM it links, from Debian's archive, each .deb
# pinned by sha256 below, unpacked (never installed) into a directory outside
# the checkout: /var/cache/shforge/rust-aarch64 (or $SHFORGE_AARCH64_RUST).
# The linker and the emulator are Debian packages that .ci/run installs
# (gcc-aarch64-linux-gnu, qemu-user-static). Idempotent: an unpacked tree
# whose stamp names the same pins is kept. Prints the rustc path on its last
# line of standard output. Exit status: 0 ready, non-zero when a download or a
# digest failed (named on standard error).
set -eu

dir=${SHFORGE_AARCH64_RUST:-/var/cache/shforge/rust-aarch64}
# package architecture version sha256
pins='rustc-web amd64 1.96.0+dfsg1-1~deb12u2 8fefe1d6377fe4082f5a9d2a47e095e2d20319eaab9754bd2f0275155c9adf90
libstd-rust-web-1.96 amd64 1.96.0+dfsg1-1~deb12u2 3755f30434ae29574c91b0beb86632bee401607b0ac35c3e52810f9a53fae0d1
libstd-rust-web-dev amd64 1.96.0+dfsg1-1~deb12u2 e38dbeaaad673fc63fb47c5140cf34da271ac71c3ecafc828b762c2fb01fe77a
libllvm22 amd64 1:22.1.8-1~deb12u1 729ec3e943d320515c2bbdc96acfffd7ce34861e62bd5c42726bf586d644dfe2
libstd-rust-web-1.96 arm64 1.96.0+dfsg1-1~deb12u2 b4dc1a7ec2dba5fc6a71c3632e66b030dc6c609286e533505aaf89f53e8c6146
libstd-rust-web-dev arm64 1.96.0+dfsg1-1~deb12u2 02419380801b9f61391294823659b17b90f7a863ca3bbccb9140d2f0f8a2c910'

rustc=$dir/usr/bin/rustc
if [ -x "$rustc" ] && [ "$(cat "$dir/.pins" 2>/dev/null)" = "$pins" ]; then
    printf '%s\n' "$rustc"
    exit 0
fi

# arm64 packages are only listed once dpkg knows the architecture.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
    apt-get update >&2
fi
debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT
printf '%s\n' "$pins" | while read -r pkg arch version sha; do
    (cd "$debs" && apt-get download "$pkg:$arch=$version" >&2)
    deb=$(ls "$debs"/"${pkg}_"*"_$arch.deb")
    got=$(sha256sum < "$deb" | cut -d' ' -f1)
    if [ "$got" != "$sha" ]; then
        echo ".ci/aarch64-rust.sh: $pkg:$arch $version: sha256 $got, pinned $sha" >&2
        exit 1
    fi
done
rm -rf "$dir.new"
mkdir -p "$dir.new"
for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$dir.new"
done
printf '%s\n' "$pins" > "$dir.new/.pins"
rm -rf "$dir"
mv "$dir.new" "$dir"
LD_LIBRARY_PATH=$dir/usr/lib/x86_64-linux-gnu "$rustc" --version >&2
printf '%s\n' "$rustc"
