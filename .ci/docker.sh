#!/bin/sh
# Host side (CI and tests, never shipped): a Docker daemon with no bridge
# network, and the test images imported from the test roots (never pulled).
#
#   sh .ci/docker.sh [ROOTS_DIR]
#
# ROOTS_DIR (default $SHFORGE_TEST_ROOTS, else /var/cache/shforge/roots) holds
# the roots tests/roots/build.sh builds. Prints one line per image:
# `NAME ID imported|reused`. Exit 0 ok, 1 a step failed.
#
# Why each step is as it is (../shared/CONTAINERS-NOTES.md):
# - daemon.json says "bridge": "none" and no iptables before the package is
#   installed: a bridge puts traffic on private-range addresses, which this
#   workplace forbids. Containers use --network host or none.
# - dockerd gets a proxy on 127.0.0.1:9, so an accidental pull fails at once
#   on loopback instead of trying a registry.
# - Images are imported from roots (`docker import`) under a tag other than
#   `latest` (compose pulls :latest even under pull_policy missing).
set -eu

roots=${1:-${SHFORGE_TEST_ROOTS:-/var/cache/shforge/roots}}
log=${TMPDIR:-/tmp}/shforge-dockerd.log

die() {
    printf '.ci/docker.sh: %s\n' "$*" >&2
    exit 1
}

# daemon_config: no bridge, no iptables; refuses to go on when another
# configuration is already there (a bridge must never be made by accident).
daemon_config() {
    want='{ "bridge": "none", "iptables": false, "ip6tables": false, "ip-masq": false, "ip-forward": false }'
    mkdir -p /etc/docker
    if [ -f /etc/docker/daemon.json ]; then
        grep -q '"bridge": *"none"' /etc/docker/daemon.json ||
            die "/etc/docker/daemon.json exists without \"bridge\": \"none\"; refusing to start dockerd"
    else
        printf '%s\n' "$want" > /etc/docker/daemon.json
    fi
}

# install_docker: Debian's docker.io (dockerd, containerd, runc, tini for
# --init), only when dockerd is missing.
install_docker() {
    command -v dockerd > /dev/null 2>&1 && return 0
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker.io tini ||
        die "apt-get install docker.io failed"
}

# start_daemon: dockerd in the background when `docker info` fails; waits
# up to 60 s for it.
start_daemon() {
    docker info > /dev/null 2>&1 && return 0
    HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY='' \
        setsid dockerd --storage-driver=overlay2 > "$log" 2>&1 < /dev/null &
    i=0
    until docker info > /dev/null 2>&1; do
        i=$((i + 1))
        if [ "$i" -ge 120 ]; then
            tail -n 20 "$log" >&2
            die "dockerd did not answer within 60 s (log: $log)"
        fi
        sleep 0.5
    done
    # No bridge may exist, whatever the daemon did.
    if docker network ls --format '{{.Driver}}' | grep -qx bridge; then
        die "dockerd made a bridge network; stop it now"
    fi
}

# import_root KIND NAME [DROP...]: the root at $roots/KIND as image NAME,
# without the paths DROP (relative to the root). Reused when the image's
# label matches the root's record (.shforge-root) and the drop list.
import_root() {
    kind=$1
    name=$2
    shift 2
    dir=$roots/$kind
    [ -f "$dir/.shforge-root" ] || die "no root $dir (run tests/roots/build.sh $kind)"
    stamp=$({ cat "$dir/.shforge-root"; printf 'drop %s\n' "$@"; } | sha256sum | cut -c1-16)
    have=$(docker image inspect --format '{{index .Config.Labels "shforge.root"}}' "$name" 2>/dev/null || true)
    if [ "$have" = "$stamp" ]; then
        printf '%s %s reused\n' "$name" "$(docker image inspect --format '{{.Id}}' "$name")"
        return 0
    fi
    excludes=
    for d in "$@"; do
        excludes="$excludes --exclude=./$d"
    done
    # shellcheck disable=SC2086 # the excludes, split on purpose
    tar -C "$dir" $excludes -c . |
        docker import --change "LABEL shforge.root=$stamp" --change 'CMD ["/bin/sh"]' - "$name" > /dev/null ||
        die "docker import of $dir as $name failed"
    printf '%s %s imported\n' "$name" "$(docker image inspect --format '{{.Id}}' "$name")"
}

main() {
    [ "$(id -u)" -eq 0 ] || die "needs root (dockerd, apt-get)"
    daemon_config
    install_docker
    start_daemon
    import_root bookworm-musl local/shforge-bookworm:test
    import_root bullseye local/shforge-bullseye:test
    import_root musl local/shforge-musl:test
    # The Alpine-like image without bash: busybox, musl, nothing else.
    import_root musl local/shforge-musl-nobash:test bin/bash usr/bin/bash
}

main "$@"
