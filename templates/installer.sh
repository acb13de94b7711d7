# Installs one pinned runtime (see the values below) into PREFIX/NAME-VERSION.
#
#   bash install_NAME.sh --prefix DIR (--source-dir DIR | --base-url URL) [--lock-timeout S]
#
# Artifacts come from --source-dir (placed by the host) or from --base-url plus
# their relative path; this script names no download host. Each artifact's
# sha256 is checked before it is unpacked into a staging directory inside DIR,
# the entry program is run once, and only then is the staging directory
# renamed to DIR/NAME-VERSION: the final path never holds a partial runtime.
# An existing install is reused when its entry check passes, replaced when not.
# On success the last line of stdout is the absolute path of the entry.
#
# Exit status: 0 ok, 2 usage, 3 lock timeout, 4 download failed (or no
# artifact for this machine), 5 digest mismatch or no sha256 tool, 6 entry
# check (or unpacking) failed, 7 a needed musl library cannot be provided.

set -u
set -o pipefail

# ---- What this installer pins (from its spec) -------------------------------
name={{ name }}
version={{ version }}
entry={{ entry }}
check_expect={{ check_expect }}
check_args=()
{%- for a in check_args %}
check_args[{{ loop.index0|raw }}]={{ a }}
{%- endfor %}
art_path=()
art_sha256=()
art_unpack=()
art_arch=()
art_libc=()
art_mode=()
art_dest=()
{%- for a in artifacts %}
art_path[{{ loop.index0|raw }}]={{ a.path }}
art_sha256[{{ loop.index0|raw }}]={{ a.sha256 }}
art_unpack[{{ loop.index0|raw }}]={{ a.unpack }}
art_arch[{{ loop.index0|raw }}]={{ a.arch }}
art_libc[{{ loop.index0|raw }}]={{ a.libc }}
art_mode[{{ loop.index0|raw }}]={{ a.mode }}
art_dest[{{ loop.index0|raw }}]={{ a.dest }}
{%- endfor %}
art_count={{ artifacts.len() }}
musl_soname=()
musl_package=()
{%- for m in musl %}
musl_soname[{{ loop.index0|raw }}]={{ m.soname }}
musl_package[{{ loop.index0|raw }}]={{ m.package }}
{%- endfor %}
musl_count={{ musl.len() }}
launcher_path={{ launcher_path }}
# shellcheck disable=SC2016 # the launcher text is data: its $ expand when the launcher runs
launcher_text={{ launcher_text }}

prog=install_$name
prefix=
source_dir=
base_url=
lock_timeout=300
entry_check_seconds=120
final=
stage=
old=

{% include "lib/install_log.sh" %}

{% include "lib/musl.sh" %}

{% include "lib/musl_install.sh" %}

{% include "lib/select.sh" %}

{% include "lib/download.sh" %}

{% include "lib/digest.sh" %}

{% include "lib/unpack.sh" %}

{% include "lib/lock.sh" %}

usage() {
    printf 'usage: bash %s --prefix DIR (--source-dir DIR | --base-url URL) [--lock-timeout S]\n' "$prog.sh" >&2
}

usage_error() {
    usage
    die 2 "$1"
}

# parse_args ARG...: set prefix, source_dir or base_url, and lock_timeout.
parse_args() {
    local re='^[0-9]+([.][0-9]+)?$'
    while [ "$#" -gt 0 ]; do
        case $1 in
            --prefix | --source-dir | --base-url | --lock-timeout)
                [ "$#" -ge 2 ] || usage_error "$1 needs a value"
                case $1 in
                    --prefix) prefix=$2 ;;
                    --source-dir) source_dir=$2 ;;
                    --base-url) base_url=$2 ;;
                    --lock-timeout) lock_timeout=$2 ;;
                esac
                shift 2
                ;;
            -h | --help)
                usage
                exit 0
                ;;
            *) usage_error "unknown argument: $1" ;;
        esac
    done
    [ -n "$prefix" ] || usage_error "--prefix is required"
    if [ -n "$source_dir" ] && [ -n "$base_url" ]; then
        usage_error "give --source-dir or --base-url, not both"
    fi
    if [ -z "$source_dir" ] && [ -z "$base_url" ]; then
        usage_error "one of --source-dir or --base-url is required"
    fi
    [[ $lock_timeout =~ $re ]] || usage_error "--lock-timeout wants seconds, not $lock_timeout"
    # An absolute prefix without forking: the entry path we print must be absolute.
    case $prefix in
        /*) ;;
        *) prefix=$PWD/$prefix ;;
    esac
    while :; do
        case $prefix in
            ?*/) prefix=${prefix%/} ;;
            *) break ;;
        esac
    done
    base_url=${base_url%/}
    physical_prefix
}

# physical_prefix: when the prefix exists, resolve its symlinks and `..`
# (cd -P, then back), so that the entry path printed is canonical; set final.
# Builtins only: the warm-cache path forks nothing for this.
physical_prefix() {
    local here=$PWD
    if [ -d "$prefix" ] && CDPATH='' cd -P -- "$prefix" 2>/dev/null; then
        prefix=$PWD
        cd -- "$here" 2>/dev/null || true
    fi
    final=$prefix/$name-$version
}

# entry_ok DIR: succeeds when DIR/entry runs its check and prints what it should.
entry_ok() {
    local out
    [ -f "$1/$entry" ] && [ -x "$1/$entry" ] || return 1
    # A hung entry must not hold the lock for ever: bound it where timeout exists.
    # `exec 9>&-; exec CMD` in substitutions: neither the subshell nor CMD may
    # keep the lock descriptor (bash 3.2 leaks a saved copy of it with
    # `exec CMD 9>&-`), or a killed installer would leave the lock held.
    if command -v timeout >/dev/null 2>&1; then
        out=$(exec 9>&-; exec timeout "$entry_check_seconds" "$1/$entry" ${check_args[@]+"${check_args[@]}"} < /dev/null 2>&1) || return 1
    else
        out=$(exec 9>&-; exec "$1/$entry" ${check_args[@]+"${check_args[@]}"} < /dev/null 2>&1) || return 1
    fi
    case $out in
        *"$check_expect"*) return 0 ;;
    esac
    return 1
}

# lock_satisfied: asked by lock_acquire while waiting: is the install there now?
lock_satisfied() {
    [ -x "$final/$entry" ] && [ "$musl_missing_count" -eq 0 ] && entry_ok "$final"
}

# cleanup: the EXIT trap. Removes what was staged and gives the lock up.
# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
    if [ -n "$stage" ]; then
        rm -rf "$stage"
    fi
    if [ -n "$old" ]; then
        # A failed swap puts the previous install back; a finished one drops it.
        if [ ! -e "$final" ]; then
            mv "$old" "$final" 2>/dev/null
        fi
        rm -rf "$old"
    fi
    lock_release
}

# remove_leftovers: staging and swap directories of installers that died.
# Only called while holding the lock, so none of them is in use.
remove_leftovers() {
    local d
    for d in "$prefix/.$name-$version.stage."* "$prefix/.$name-$version.old."*; do
        if [ -e "$d" ] || [ -L "$d" ]; then
            say "removing the leftover ${d##*/}"
            rm -rf "$d"
        fi
    done
}

# obtain I FILE: copy or download artifact I to FILE, or exit 4.
obtain() {
    local path=${art_path[$1]}
    if [ -n "$source_dir" ]; then
        [ -f "$source_dir/$path" ] || die 4 "artifact $path is not in $source_dir"
        cp "$source_dir/$path" "$2" 9>&- || die 4 "cannot copy $source_dir/$path"
    else
        say "downloading $base_url/$path"
        download "$base_url/$path" "$2" || die 4 "download of $base_url/$path failed"
    fi
}

# write_launcher: the small sh script that starts the entry with its runtime.
write_launcher() {
    [ -n "$launcher_path" ] || return 0
    case $launcher_path in
        */*) mkdir -p "$stage/${launcher_path%/*}" || return 1 ;;
    esac
    printf '%s' "$launcher_text" > "$stage/$launcher_path" &&
        chmod 755 "$stage/$launcher_path"
}

# install_fresh: stage, verify and unpack every selected artifact, check the
# entry, then swap the staging directory into place with one rename.
install_fresh() {
    local k=0 i file dest
    remove_leftovers
    stage=$prefix/.$name-$version.stage.$$
    mkdir "$stage" "$stage/.shforge-download" || die 4 "cannot create $stage"
    while [ "$k" -lt "$selected_count" ]; do
        i=${selected[$k]}
        file=$stage/.shforge-download/$i
        obtain "$i" "$file"
        verify_digest "$file" "${art_sha256[$i]}" "${art_path[$i]}"
        dest=$stage/${art_dest[$i]}
        unpack_artifact "$file" "${art_unpack[$i]}" "$dest" "${art_mode[$i]}" ||
            die 6 "unpacking ${art_path[$i]} failed"
        rm -f "$file"
        k=$((k + 1))
    done
    rmdir "$stage/.shforge-download" 2>/dev/null
    write_launcher || die 6 "cannot write the launcher $launcher_path"
    entry_ok "$stage" || die 6 "entry check failed: $entry ${check_args[*]+${check_args[*]}} did not run or did not print '$check_expect'"
    if [ -e "$final" ] || [ -L "$final" ]; then
        say "replacing $final: its entry check fails"
        old=$prefix/.$name-$version.old.$$
        mv "$final" "$old" || die 4 "cannot move the broken $final aside"
    fi
    mv "$stage" "$final" || die 4 "cannot rename $stage to $final"
    stage=
    if [ -n "$old" ]; then
        rm -rf "$old"
        old=
    fi
}

main() {
    parse_args "$@"
    musl_find_missing
    # The common case on a warm sandbox: a good install, no lock, no download.
    if [ "$musl_missing_count" -eq 0 ] && entry_ok "$final"; then
        printf '%s\n' "$final/$entry"
        exit 0
    fi
    mkdir -p "$prefix" || usage_error "cannot create --prefix $prefix"
    physical_prefix
    trap cleanup EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
    if ! lock_acquire "$prefix/.$name-$version" "$lock_timeout"; then
        # Another installer finished the same install while we waited.
        printf '%s\n' "$final/$entry"
        exit 0
    fi
    # Nothing for this machine: say so before adding any library.
    select_artifacts
    ensure_musl_libs
    if entry_ok "$final"; then
        say "reusing $final (installed meanwhile, or fixed by the libraries)"
    else
        install_fresh
        say "installed $name $version into $final"
    fi
    lock_release
    printf '%s\n' "$final/$entry"
    exit 0
}

main "$@"
