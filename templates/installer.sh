# Installs one pinned runtime (see the values below) into PREFIX/NAME-VERSION.
#
#   bash install_NAME.sh --prefix DIR (--source-dir DIR | --base-url URL) [--lock-timeout S]
#                        [--glibc-runtime auto|private|image]
#
# Artifacts come from --source-dir (placed by the host) or from --base-url plus
# their relative path; this script names no download host. Each artifact's
# size and sha256 are checked before it is unpacked into a staging directory
# inside DIR, the entry program is run once, and only then is the install
# renamed to DIR/NAME-VERSION: the final path never holds a partial runtime.
# An existing install is reused when its entry check passes, replaced when not.
# On success the last line of stdout is the absolute path of the entry.
#
# Footprint: whatever an archive holds (symlinks, hard links, device nodes,
# FIFOs, setuid bits), nothing outside DIR/NAME-VERSION and its lock file is
# created or changed (lib/unpack.sh says how), and the entry check runs with
# HOME, TMPDIR, the XDG dirs and its working directory in a throwaway
# directory of the installer's own.
#
# Where the image's libc cannot run the harness's glibc programs (musl, or a
# glibc older than they need), a spec with prepared programs installs the
# private glibc runtime with them instead (lib/relocate.sh says how);
# --glibc-runtime private|image forces the choice.
#
# Exit status: 0 ok, 2 usage (or a --prefix holding a newline, or, with the
# private glibc runtime, a `:` or too long for its placeholders), 3 lock
# timeout (or a lock file that is a symlink), 4 download failed (or an
# artifact past its size, or no artifact for this machine), 5 digest
# mismatch or no sha256 tool (or a prepared program whose placeholders are
# not where its digest says), 6 entry check or unpacking failed (or an
# archive refused), 7 a needed musl library cannot be provided.

# set -u is turned on in main, once the arguments are parsed: bash 4.0 calls
# an empty "$@" unbound under it.
set -o pipefail
# Inherited shell state must not change what a glob or a split means.
set +f
shopt -u nullglob failglob dotglob 2>/dev/null
unset GLOBIGNORE
IFS=$' \t\n'
# Nor may the environment add options to tar, gzip or xz.
unset TAR_OPTIONS GZIP XZ_OPT XZ_DEFAULTS

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
art_size=()
art_subdir=()
art_runtime=()
{%- for a in artifacts %}
art_path[{{ loop.index0|raw }}]={{ a.path }}
art_sha256[{{ loop.index0|raw }}]={{ a.sha256 }}
art_unpack[{{ loop.index0|raw }}]={{ a.unpack }}
art_arch[{{ loop.index0|raw }}]={{ a.arch }}
art_libc[{{ loop.index0|raw }}]={{ a.libc }}
art_mode[{{ loop.index0|raw }}]={{ a.mode }}
art_dest[{{ loop.index0|raw }}]={{ a.dest }}
art_size[{{ loop.index0|raw }}]={{ a.size }}
art_subdir[{{ loop.index0|raw }}]={{ a.subdir }}
art_runtime[{{ loop.index0|raw }}]={{ a.runtime }}
{%- endfor %}
art_count={{ artifacts.len() }}
musl_soname=()
musl_package=()
{%- for m in musl %}
musl_soname[{{ loop.index0|raw }}]={{ m.soname }}
musl_package[{{ loop.index0|raw }}]={{ m.package }}
{%- endfor %}
musl_count={{ musl.len() }}
# Prepared programs (runtime = "private" artifacts): install-relative file,
# placeholder offsets and sizes, sha256 with them zeroed, and the paths they get.
rel_art=()
rel_file=()
rel_interp_off=()
rel_interp_size=()
rel_rpath_off=()
rel_rpath_size=()
rel_zeroed=()
rel_interp=()
rel_rpath=()
{%- for r in relocations %}
rel_art[{{ loop.index0|raw }}]={{ r.artifact }}
rel_file[{{ loop.index0|raw }}]={{ r.file }}
rel_interp_off[{{ loop.index0|raw }}]={{ r.interp_offset }}
rel_interp_size[{{ loop.index0|raw }}]={{ r.interp_size }}
rel_rpath_off[{{ loop.index0|raw }}]={{ r.rpath_offset }}
rel_rpath_size[{{ loop.index0|raw }}]={{ r.rpath_size }}
rel_zeroed[{{ loop.index0|raw }}]={{ r.zeroed_sha256 }}
rel_interp[{{ loop.index0|raw }}]={{ r.interpreter }}
rel_rpath[{{ loop.index0|raw }}]={{ r.rpath }}
{%- endfor %}
rel_count={{ relocations.len() }}
# The highest GLIBC_ version the prepared programs need: an image with an
# older glibc gets the private runtime.
glibc_needed={{ glibc_needed }}
launcher_path={{ launcher_path }}
# shellcheck disable=SC2016 # the launcher text is data: its $ expand when the launcher runs
launcher_text={{ launcher_text }}

prog=install_$name
prefix=
source_dir=
base_url=
lock_timeout=300
glibc_runtime=auto
entry_check_seconds=120
final=
stage=
inst=
old=
check_home=

{% include "lib/install_log.sh" %}

{% include "lib/musl.sh" %}

{% include "lib/musl_install.sh" %}

{% include "lib/select.sh" %}

{% include "lib/download.sh" %}

{% include "lib/digest.sh" %}

{% include "lib/unpack.sh" %}

{% include "lib/lock.sh" %}

{% include "lib/relocate.sh" %}

usage() {
    printf 'usage: bash %s --prefix DIR (--source-dir DIR | --base-url URL) [--lock-timeout S] [--glibc-runtime auto|private|image]\n' "$prog.sh" >&2
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
            --prefix | --source-dir | --base-url | --lock-timeout | --glibc-runtime)
                [ "$#" -ge 2 ] || usage_error "$1 needs a value"
                case $1 in
                    --prefix) prefix=$2 ;;
                    --source-dir) source_dir=$2 ;;
                    --base-url) base_url=$2 ;;
                    --lock-timeout) lock_timeout=$2 ;;
                    --glibc-runtime) glibc_runtime=$2 ;;
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
    case $glibc_runtime in
        auto | private | image) ;;
        *) usage_error "--glibc-runtime wants auto, private or image, not $glibc_runtime" ;;
    esac
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
    # The entry path is printed as the last line: a newline would split it.
    case $final in
        *"$unpack_nl"*) usage_error "--prefix may not hold a newline (the last line printed is the entry path)" ;;
    esac
}

# entry_run DIR HOME: run the entry check (in a command substitution's
# subshell) with HOME, TMPDIR, the XDG dirs and the working directory in
# HOME, so that what the entry writes there stays out of the caller's home.
# `exec 9>&-; exec CMD`: neither the subshell nor CMD may keep the lock
# descriptor (bash 3.2 leaks a saved copy of it with `exec CMD 9>&-`), or a
# killed installer would leave the lock held.
entry_run() {
    exec 9>&-
    # HOME cannot be entered only when it is the unusable fallback: then
    # relative writes go into the install dir itself.
    cd -- "$2" 2>/dev/null || cd -- "$1" || exit 1
    HOME=$2
    TMPDIR=$2/tmp
    TMP=$2/tmp
    TEMP=$2/tmp
    XDG_CONFIG_HOME=$2/config
    XDG_CACHE_HOME=$2/cache
    XDG_DATA_HOME=$2/data
    XDG_STATE_HOME=$2/state
    XDG_RUNTIME_DIR=$2/runtime
    export HOME TMPDIR TMP TEMP XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME XDG_RUNTIME_DIR
    # A hung entry must not hold the lock for ever: bound it where timeout exists.
    if command -v timeout >/dev/null 2>&1; then
        exec timeout "$entry_check_seconds" "$1/$entry" ${check_args[@]+"${check_args[@]}"} < /dev/null
    fi
    exec "$1/$entry" ${check_args[@]+"${check_args[@]}"} < /dev/null
}

# entry_ok DIR HOME: succeeds when DIR/entry runs its check, with HOME as
# its home, and prints what it should.
entry_ok() {
    local out
    [ -f "$1/$entry" ] && [ -x "$1/$entry" ] || return 1
    out=$(entry_run "$1" "$2" 2>&1) || return 1
    case $out in
        *"$check_expect"*) return 0 ;;
    esac
    return 1
}

# installed_ok: the install at final is a real directory whose entry passes
# its check. The check's home is a fresh directory in the prefix, removed
# right after; where none can be made (a read-only prefix) it is a path
# below /dev/null, where nothing can ever be created.
installed_ok() {
    local rc=0
    [ -d "$final" ] && [ ! -L "$final" ] && [ -f "$final/$entry" ] && [ -x "$final/$entry" ] ||
        return 1
    # A relocated install moved here from elsewhere would run with the
    # loader of its old place: not this install.
    relocation_current || return 1
    check_home=$prefix/.$name-$version.check.$$
    if [ -e "$check_home" ] || [ -L "$check_home" ]; then
        rm -rf "$check_home" 9>&-
    fi
    if mkdir -m 700 "$check_home" "$check_home/tmp" 2>/dev/null 9>&-; then
        entry_ok "$final" "$check_home" || rc=1
        rm -rf "$check_home" 9>&-
    else
        entry_ok "$final" /dev/null/shforge-check-home || rc=1
    fi
    check_home=
    return "$rc"
}

# lock_satisfied: asked by lock_acquire while waiting: is the install there now?
lock_satisfied() {
    [ "$musl_missing_count" -eq 0 ] && installed_ok
}

# cleanup: the EXIT trap. Removes what was staged and gives the lock up.
# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
    if [ -n "$stage" ]; then
        rm -rf "$stage"
    fi
    if [ -n "$check_home" ]; then
        rm -rf "$check_home"
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
# Only called while holding the lock, so none of them is in use; a check
# home is made without the lock, so only a dead owner's is removed.
remove_leftovers() {
    local d
    for d in "$prefix/.$name-$version.stage."* "$prefix/.$name-$version.old."* \
        "$prefix/.$name-$version.check."*; do
        if [ -e "$d" ] || [ -L "$d" ]; then
            case $d in
                *.check.*) ! kill -0 "${d##*.}" 2>/dev/null || continue ;;
            esac
            say "removing the leftover ${d##*/}"
            rm -rf "$d"
        fi
    done
}

# file_size FILE: sets REPLY to the size of FILE in bytes.
file_size() {
    REPLY=$(exec 9>&-; exec wc -c < "$1") || REPLY=
    REPLY=${REPLY//[!0-9]/}
}

# obtain I FILE: copy or download artifact I to FILE, or exit 4. An artifact
# with a size in its spec is refused past that size, and a download stops
# there.
obtain() {
    local path=${art_path[$1]} max=${art_size[$1]} rc=0
    if [ -n "$source_dir" ]; then
        [ -f "$source_dir/$path" ] || die 4 "artifact $path is not in $source_dir"
        if [ -n "$max" ]; then
            file_size "$source_dir/$path"
            if [ -z "$REPLY" ] || [ "$REPLY" -gt "$max" ]; then
                die 4 "artifact $path in $source_dir is ${REPLY:-?} bytes, more than the $max of its spec"
            fi
        fi
        cp "$source_dir/$path" "$2" 9>&- || die 4 "cannot copy $source_dir/$path"
    else
        say "downloading $base_url/$path"
        download "$base_url/$path" "$2" "$max" || rc=$?
        case $rc in
            0) ;;
            3) die 4 "download of $base_url/$path stopped: more than the $max bytes of its spec" ;;
            *) die 4 "download of $base_url/$path failed" ;;
        esac
    fi
}

# write_launcher: the small sh script that starts the entry with its
# runtime. Its path must be free (an artifact's file or link there is
# refused), and it is created new (noclobber: O_EXCL), never written through
# a link.
write_launcher() {
    [ -n "$launcher_path" ] || return 0
    unpack_what="the launcher $launcher_path"
    case $launcher_path in
        */*) stage_mkdir "${launcher_path%/*}" ;;
    esac
    if [ -e "$inst/$launcher_path" ] || [ -L "$inst/$launcher_path" ]; then
        unpack_refuse "$launcher_path is already in the install (from an artifact)"
    fi
    set -C
    if ! printf '%s' "$launcher_text" > "$inst/$launcher_path"; then
        set +C
        return 1
    fi
    set +C
    chmod 755 "$inst/$launcher_path" 9>&-
}

# install_fresh: stage, verify and unpack every selected artifact, check the
# entry, then swap the install into place with one rename. The stage holds
# the install root (root/), the downloads, the unpacking area and the entry
# check's home, so nothing of the installer's own is ever inside the root.
install_fresh() {
    local k=0 i file
    remove_leftovers
    stage=$prefix/.$name-$version.stage.$$
    inst=$stage/root
    mkdir "$stage" 9>&- || die 4 "cannot create $stage"
    mkdir "$inst" "$stage/download" 9>&- || die 4 "cannot populate $stage"
    mkdir -m 700 "$stage/home" "$stage/home/tmp" 9>&- || die 4 "cannot populate $stage"
    while [ "$k" -lt "$selected_count" ]; do
        i=${selected[$k]}
        unpack_what=${art_path[$i]}
        file=$stage/download/$i
        obtain "$i" "$file"
        verify_digest "$file" "${art_sha256[$i]}" "${art_path[$i]}"
        unpack_artifact "$file" "${art_unpack[$i]}" "${art_dest[$i]}" "${art_mode[$i]}" "${art_subdir[$i]}"
        rm -f "$file"
        k=$((k + 1))
    done
    write_launcher || die 6 "cannot write the launcher $launcher_path"
    if [ "$use_private" -eq 1 ]; then
        # The prepared programs hold absolute paths of the final place and
        # run only there: checked right after the rename, taken back if bad.
        relocate_selected "$inst"
        put_in_place
        if ! entry_ok "$final" "$stage/home"; then
            mv "$final" "$stage/failed" 2>/dev/null || rm -rf "$final"
            die 6 "entry check failed: $entry ${check_args[*]+${check_args[*]}} did not run or did not print '$check_expect' (with the private glibc runtime)"
        fi
    else
        entry_ok "$inst" "$stage/home" || die 6 "entry check failed: $entry ${check_args[*]+${check_args[*]}} did not run or did not print '$check_expect'"
        put_in_place
    fi
    rm -rf "$stage"
    stage=
    if [ -n "$old" ]; then
        rm -rf "$old"
        old=
    fi
}

# put_in_place: the staged install becomes final (a broken one there is
# moved aside first, and put back by cleanup when this run fails).
put_in_place() {
    if [ -e "$final" ] || [ -L "$final" ]; then
        say "replacing $final: its entry check fails"
        old=$prefix/.$name-$version.old.$$
        mv "$final" "$old" || die 4 "cannot move the broken $final aside"
    fi
    mv "$inst" "$final" || die 4 "cannot rename $inst to $final"
}

main() {
    parse_args "$@"
    set -u
    decide_runtime
    relocate_check_prefix
    # From here on a signal still removes what this run made (the reuse
    # check's home, the stage) and gives the lock up.
    trap cleanup EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
    # The image's musl libraries matter only where its libc is used.
    [ "$use_private" -eq 1 ] || musl_find_missing
    # The common case on a warm sandbox: a good install, no lock, no download.
    if [ "$musl_missing_count" -eq 0 ] && installed_ok; then
        printf '%s\n' "$final/$entry"
        exit 0
    fi
    mkdir -p "$prefix" || usage_error "cannot create --prefix $prefix"
    physical_prefix
    relocate_check_prefix
    if ! lock_acquire "$prefix/.$name-$version" "$lock_timeout"; then
        # Another installer finished the same install while we waited.
        printf '%s\n' "$final/$entry"
        exit 0
    fi
    # Nothing for this machine: say so before adding any library.
    if [ "$use_private" -eq 1 ]; then
        say "using the private glibc runtime: $private_why"
        select_private_artifacts
    else
        select_artifacts
        image_filter_selected
        ensure_musl_libs
    fi
    if installed_ok; then
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
