# ---- --carried-bash ----------------------------------------------------------
# Which bash runs the bash scripts: the image's own when it is a bash of 3.2
# or later, else the carried static bash the host uploaded (FILE), else, only
# when --need bash asks for it, the image's package. The choice is printed as
# the one line `bash PATH` on stdout, for the host to run the scripts with.

# bash_probe BASH: run BASH as a bash would be run by the host (no startup
# files, no inherited environment: env -i where env exists, else the
# variables that change a bash's start unset), bounded by timeout where it
# exists, printing its $BASH_VERSION after a marker.
bash_probe() {
    _bp_bash=$1
    # shellcheck disable=SC2016 # $BASH_VERSION is the probed bash's, expanded by it
    _bp_code='echo "shforge-bash $BASH_VERSION"'
    set --
    if on_path timeout; then
        set -- timeout 10
    fi
    if on_path env; then
        "$@" env -i "$_bp_bash" --noprofile --norc -c "$_bp_code" < /dev/null
    else
        (
            unset BASH_ENV ENV SHELLOPTS BASHOPTS 2> /dev/null
            exec "$@" "$_bp_bash" --noprofile --norc -c "$_bp_code" < /dev/null
        )
    fi
}

# bash_usable BASH: succeeds when BASH runs and says it is a bash of 3.2 or
# later. Its output must be exactly the marker and a version starting
# MAJOR.MINOR in digits (at most 3 each, so no arithmetic overflows): a
# program that prints anything else, or another shell (no $BASH_VERSION),
# is not taken for a bash.
bash_usable() {
    [ -f "$1" ] && [ -x "$1" ] || return 1
    _bu_out=$(bash_probe "$1" 2> /dev/null) || return 1
    case $_bu_out in
        *'
'*) return 1 ;;
        'shforge-bash '[0-9]*.[0-9]*) ;;
        *) return 1 ;;
    esac
    _bu_v=${_bu_out#shforge-bash }
    _bu_major=${_bu_v%%.*}
    _bu_rest=${_bu_v#*.}
    _bu_minor=${_bu_rest%%[!0-9]*}
    case $_bu_major in '' | *[!0-9]* | ????*) return 1 ;; esac
    case $_bu_minor in '' | ????*) return 1 ;; esac
    case ${_bu_rest#"$_bu_minor"} in '' | .* | '('*) ;; *) return 1 ;; esac
    [ "$_bu_major" -gt 3 ] || { [ "$_bu_major" -eq 3 ] && [ "$_bu_minor" -ge 2 ]; }
}

# abs_path PATH: set abs to PATH made absolute against the working
# directory (from / without a doubled slash).
abs_path() {
    case $1 in
        /*) abs=$1 ;;
        *)
            _ap_dir=$(pwd)
            abs=${_ap_dir%/}/$1
            ;;
    esac
}

# image_bash: succeeds, setting chosen_bash, when the bash the image's PATH
# finds first is usable; sets image_bash_why to why not otherwise.
image_bash() {
    if ! on_path bash; then
        image_bash_why='the image has no bash on PATH'
        return 1
    fi
    abs_path "${_op_dir:-.}/bash"
    if bash_usable "$abs"; then
        chosen_bash=$abs
        return 0
    fi
    image_bash_why="the image's $abs is not a bash 3.2 or later (or did not run)"
    return 1
}

# choose_bash: with --carried-bash, the image's bash, else the carried one;
# neither and no --need bash: exit 4 naming both. With --need bash the
# package path (provide_commands) comes next and report_bash checks it.
choose_bash() {
    [ -n "$have_carried_bash" ] || return 0
    image_bash && return 0
    if bash_usable "$carried_bash"; then
        abs_path "$carried_bash"
        chosen_bash=$abs
        # A --need bash is met by the carried one: no package is added.
        drop_need bash
        return 0
    fi
    case " $needs " in
        *' bash '*) return 0 ;;
    esac
    die 4 "no bash 3.2 or later to run the scripts: $image_bash_why, and the carried bash $carried_bash did not run as one (give --need bash to install the image's package instead)"
}

# drop_need CMD: take CMD out of the needs list.
drop_need() {
    _dn_rest=
    for _dn_cmd in $needs; do
        [ "$_dn_cmd" = "$1" ] || list_add _dn_rest "$_dn_cmd"
    done
    needs=$_dn_rest
}

# report_bash: with --carried-bash, print `bash PATH`, the one line on
# stdout, after whatever --need installed.
report_bash() {
    [ -n "$have_carried_bash" ] || return 0
    if [ -z "$chosen_bash" ] && ! image_bash; then
        die 4 "no bash 3.2 or later to run the scripts: $image_bash_why, after --need bash; the carried bash $carried_bash did not run as one either"
    fi
    case $chosen_bash in
        *'
'*) die 2 "the chosen bash's path holds a newline: $chosen_bash" ;;
    esac
    say "bash $chosen_bash"
}
