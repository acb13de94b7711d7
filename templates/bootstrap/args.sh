# ---- arguments -------------------------------------------------------------

# add_baked_needs: what the generator baked in (nothing in the generic
# script; an adapter's variant may need python3, libstdc++, ...).
add_baked_needs() {
{%- for cmd in needs %}
    list_add needs {{ cmd }}
{%- endfor %}
{%- for lib in baked_musl_libs %}
    list_add musl_libs {{ lib }}
{%- endfor %}
    :
}

# parse_args ARG...: fill needs, musl_libs, workdir, session_dir and carried_bash.
parse_args() {
    while [ "$#" -gt 0 ]; do
        case $1 in
            --need | --musl-lib | --workdir | --session-dir | --carried-bash)
                [ "$#" -ge 2 ] || die 2 "$1 needs a value (see --help)"
                _pa_opt=$1
                _pa_val=$2
                shift 2
                ;;
            --need=* | --musl-lib=* | --workdir=* | --session-dir=* | --carried-bash=*)
                _pa_opt=${1%%=*}
                _pa_val=${1#*=}
                shift
                ;;
            -h | --help)
                usage
                exit 0
                ;;
            *)
                usage >&2
                die 2 "unknown argument: '$1'"
                ;;
        esac
        case $_pa_opt in
            --need)
                check_name command "$_pa_val"
                list_add needs "$_pa_val"
                ;;
            --musl-lib)
                check_name 'musl library' "$_pa_val"
                musl_soname "$_pa_val"
                list_add musl_libs "$_pa_val"
                ;;
            --workdir)
                [ -n "$_pa_val" ] || die 2 "--workdir needs a non-empty value"
                workdir=$_pa_val
                have_workdir=1
                ;;
            --carried-bash)
                [ -n "$_pa_val" ] || die 2 "--carried-bash needs a non-empty value"
                carried_bash=$_pa_val
                have_carried_bash=1
                ;;
            --session-dir)
                [ -n "$_pa_val" ] || die 2 "--session-dir needs a non-empty value"
                session_dir=$_pa_val
                have_session_dir=1
                ;;
        esac
    done
    if [ "$have_workdir" != "$have_session_dir" ]; then
        die 2 "--workdir and --session-dir go together"
    fi
}

