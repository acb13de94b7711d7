# Installs one pinned runtime (see the values below) into PREFIX/NAME-VERSION.
#
#   bash install_NAME.sh --prefix DIR (--source-dir DIR | --base-url URL) [--lock-timeout S]
#                        [--glibc-runtime auto|private|image] [--quiet]
#   bash install_NAME.sh --plan --prefix DIR [--glibc-runtime auto|private|image]
#     prints the runtime choice and the artifacts an install here would take
#     (installer/plan.sh) and exits 0, writing nothing.
#
# Artifacts come from --source-dir (placed by the host) or from --base-url plus
# their relative path; this script names no download host. Each artifact's
# size and sha256 are checked before it is unpacked into a staging directory
# inside DIR, the entry program is run once, and only then is the install
# renamed to DIR/NAME-VERSION: the final path never holds a partial runtime.
# An existing install is reused when its entry check passes and its stamp
# (.shforge-artifacts) names this installer's artifacts, replaced when not.
# On success the last line of stdout is the absolute path of the entry.
# A fresh install reports its progress on stderr, one line per phase per
# artifact (get, verify, unpack, place; then the entry check), each with its
# sizes and elapsed time; a reuse prints nothing there. --quiet: only errors.
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
# Exit status: 0 ok, 2 usage (or a --prefix holding a newline, or a function
# inherited from the environment that cannot be removed, or, with the
# private glibc runtime, a `:` or too long for its placeholders), 3 lock
# timeout (or a lock file that is a symlink), 4 download failed (or an
# artifact past its size, or no artifact for this machine), 5 digest
# mismatch or no sha256 tool (or a prepared program whose placeholders are
# not where its digest says), 6 entry check or unpacking failed (or an
# archive refused), 7 a needed musl library cannot be provided, 8 the prefix
# is on a file system mounted noexec (refused before anything is fetched; a
# prefix this user cannot write is 2, unless the install there is complete:
# that is reused without writing anything).

{% include "lib/clear_functions.sh" %}
{% include "lib/inherited_env.sh" %}

# set -u is turned on in main, once the arguments are parsed: bash 4.0 calls
# an empty "$@" unbound under it.
set -o pipefail
# Inherited shell state must not change what a glob or a split means.
set +f
shopt -u nullglob failglob dotglob 2>/dev/null
unset GLOBIGNORE
IFS=$' \t\n'

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
{%- if !chmods.is_empty() %}
# Modes of files inside archives ([[artifact.chmod]]): the artifact, the
# path inside its unpacked tree, the octal mode.
chm_art=()
chm_path=()
chm_mode=()
{%- for c in chmods %}
chm_art[{{ loop.index0|raw }}]={{ c.artifact }}
chm_path[{{ loop.index0|raw }}]={{ c.path }}
chm_mode[{{ loop.index0|raw }}]={{ c.mode }}
{%- endfor %}
chm_count={{ chmods.len() }}
{%- endif %}
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
plan=0
install_stamp=
entry_check_seconds=120
final=
stage=
inst=
old=
check_home=
probe=
prefix_made=0
# Each artifact's size as got, for the progress lines (not with --quiet);
# where it is read from (its copy, or /proc/self/fd/8 in place) and how it
# was got (obtain).
art_got=()
art_read=()
art_how=()
install_took=

{% include "lib/uptime.bash" %}

{% include "lib/install_log.sh" %}

{% include "lib/musl.sh" %}

{% include "lib/musl_install.sh" %}

{% include "lib/select.sh" %}

{% include "lib/download.sh" %}

{% include "lib/digest.sh" %}

{% include "lib/unpack.sh" %}

{% include "lib/place.sh" %}

{% include "lib/lock.sh" %}

{% include "lib/relocate.sh" %}

{% include "installer/args.sh" %}

{% include "installer/entry.sh" %}

{% include "installer/tool_env.sh" %}

{% include "installer/install.sh" %}

{% include "installer/plan.sh" %}

{% include "installer/probe.sh" %}

main() {
    [ -z "$inherited_functions_left" ] || die 2 "cannot clear the functions inherited from the environment"
    tool_env
    parse_args "$@"
    set -u
    decide_runtime
    relocate_check_prefix
    stamp_make
    # --plan: say what would be installed, write nothing.
    if [ "$plan" -eq 1 ]; then
        plan_print
        exit 0
    fi
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
    [ -d "$prefix" ] || prefix_made=1
    mkdir -p "$prefix" || usage_error "cannot create --prefix $prefix"
    physical_prefix
    relocate_check_prefix
    prefix_probe
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
        say "installed $name $version into $final in $install_took"
    fi
    lock_release
    printf '%s\n' "$final/$entry"
    exit 0
}

main "$@"
