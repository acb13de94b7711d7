usage() {
    printf 'usage: bash %s --prefix DIR (--source-dir DIR | --base-url URL) [--lock-timeout S] [--glibc-runtime auto|private|image] [--quiet]\n' "$prog.sh" >&2
    printf '       bash %s --plan --prefix DIR [--glibc-runtime auto|private|image]\n' "$prog.sh" >&2
}

usage_error() {
    usage
    die 2 "$1"
}

# parse_args ARG...: set prefix, source_dir or base_url, and lock_timeout.
parse_args() {
    # At most 9 whole digits: the lock's deadline is bash arithmetic, and
    # 20 digits would wrap silently (read as base 10 there, 010 is 10 s).
    local re='^[0-9]{1,9}([.][0-9]+)?$'
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
            --plan)
                plan=1
                shift
                ;;
            --quiet)
                quiet=1
                shift
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
    if [ -z "$source_dir" ] && [ -z "$base_url" ] && [ "$plan" -eq 0 ]; then
        usage_error "one of --source-dir or --base-url is required"
    fi
    [[ $lock_timeout =~ $re ]] || usage_error "--lock-timeout wants seconds (at most 9 whole digits), not $lock_timeout"
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
