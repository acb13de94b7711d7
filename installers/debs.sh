# shellcheck shell=sh
# Sourced by installers/glibc-runtime/build.sh and python-runtime/build.sh
# (host side, never run in the sandbox): fetch the pinned Debian packages of
# a packages list, check each .deb's sha256 and unpack them all into one tree.
#
# A packages list has lines `PACKAGE VERSION SHA256-OF-THE-.DEB` and `#`
# comments; a line `# suite: NAME` (bookworm when absent) names the Debian
# release the .debs come from. bookworm's of the host's architecture are
# fetched with the host's own `apt-get download PACKAGE:ARCH=VERSION`; another
# suite's or another architecture's with apt-get too, but with a private apt
# state (lists, cache; for another suite a sources list naming only
# deb.debian.org's NAME main) in a temporary directory, checked with the
# host's debian-archive-keyring: the host's apt configuration and lists are
# never changed, and no `dpkg --add-architecture` is needed.
#
# debs_fetch LIST DEBS_DIR TREE [ARCH]: every package of LIST (Debian
# architecture ARCH, default amd64) into TREE (dpkg-deb -x), taking the .deb
# from DEBS_DIR when it is there, else downloading it there.
# Sets debs_notice (one line per package, for a NOTICE) and debs_suite.
# Needs die() from the caller; uses $work (the caller's temporary directory).

# debs_find DIR PKG VERSION ARCH: the .deb of that version in DIR, or nothing.
debs_find() {
    for debs_f in "$1/${2}_"*"_$4.deb" "$1/${2}_"*_all.deb; do
        [ -f "$debs_f" ] || continue
        if [ "$(dpkg-deb -f "$debs_f" Version)" = "$3" ]; then
            printf '%s\n' "$debs_f"
            return 0
        fi
    done
}

# debs_apt SUITE ARCH: apt-get's options for SUITE and ARCH (nothing for
# bookworm on the host's architecture), with the private state made on
# first use.
debs_apt() {
    if [ "$1" = bookworm ] && [ "$2" = "$(dpkg --print-architecture 2>/dev/null)" ]; then
        return 0
    fi
    # shellcheck disable=SC2154 # $work: the caller's temporary directory
    debs_a=$work/apt-$1-$2
    if [ ! -d "$debs_a" ]; then
        mkdir -p "$debs_a/lists/partial" "$debs_a/cache/archives/partial"
        : > "$debs_a/status"
        if [ "$1" != bookworm ]; then
            printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian %s main\n' \
                "$1" > "$debs_a/sources.list"
        fi
        # shellcheck disable=SC2046 # the options, split on purpose
        apt-get $(debs_apt_opts "$debs_a" "$2") update >&2 || die "apt-get update of $1 ($2) failed"
    fi
    debs_apt_opts "$debs_a" "$2"
}

# debs_apt_opts STATE_DIR ARCH: the private state's options; its own sources
# list only when it has one (another suite), else the host's (bookworm and
# its updates, for another architecture).
debs_apt_opts() {
    if [ -f "$1/sources.list" ]; then
        printf '%s\n' "-oDir::Etc::SourceList=$1/sources.list" "-oDir::Etc::SourceParts=/dev/null"
    fi
    printf '%s\n' "-oDir::State::Lists=$1/lists" "-oDir::Cache=$1/cache" "-oDir::State::status=$1/status" \
        "-oAPT::Architecture=$2" "-oAPT::Architectures=$2" "-oAcquire::Languages=none"
}

debs_fetch() {
    debs_arch=${4:-amd64}
    debs_suite=$(sed -n 's/^# suite: *\([a-z]*\) *$/\1/p' "$1")
    [ -n "$debs_suite" ] || debs_suite=bookworm
    debs_notice=
    while read -r debs_pkg debs_ver debs_sha; do
        case $debs_pkg in '' | '#'*) continue ;; esac
        debs_deb=$(debs_find "$2" "$debs_pkg" "$debs_ver" "$debs_arch")
        if [ -z "$debs_deb" ]; then
            debs_opts=$(debs_apt "$debs_suite" "$debs_arch") || exit 1
            # shellcheck disable=SC2086 # the options, split on purpose
            (cd "$2" && apt-get $debs_opts download "$debs_pkg:$debs_arch=$debs_ver" >&2) ||
                die "apt-get download $debs_pkg:$debs_arch=$debs_ver ($debs_suite) failed"
            debs_deb=$(debs_find "$2" "$debs_pkg" "$debs_ver" "$debs_arch")
        fi
        [ -n "$debs_deb" ] || die "no .deb of $debs_pkg $debs_ver in $2"
        debs_got=$(sha256sum < "$debs_deb")
        debs_got=${debs_got%% *}
        [ "$debs_got" = "$debs_sha" ] || die "digest mismatch for $debs_deb: expected $debs_sha, got $debs_got"
        dpkg-deb -x "$debs_deb" "$3"
        debs_src=$(dpkg-deb -f "$debs_deb" Source)
        debs_src=${debs_src%% *}
        debs_notice="$debs_notice
  $debs_pkg $debs_ver (Debian source package ${debs_src:-$debs_pkg}), .deb sha256 $debs_sha"
    done < "$1"
}
