# bootstrap.sh: the first thing shforge runs in somebody else's task image.
#
#   sh bootstrap.sh [--need CMD]... [--musl-lib LIB]... [--workdir DIR --session-dir DIR]
#                   [--carried-bash FILE]
#
# It installs exactly what is missing and nothing else, because whatever it
# installs changes what the agent and the verifier see. It must start under
# any POSIX sh (dash, busybox, mksh, posh, yash, ksh93, zsh, bash 3.2+), so it
# uses no arrays and no `local` (ksh93 has none): names used inside a
# function carry a prefix of that function's initials instead.
#
# Exit status: 0 ok; 2 usage (also: a package name the package manager
# could read as a pattern, a removal or a file, or, under bash, a function
# inherited from the environment that cannot be removed); 3 the workdir and the
# session dir overlap; 4 a needed command or musl library could not be
# provided, or (--carried-bash) no bash of 3.2 or later: neither the image's
# nor the carried one, and no --need bash. With --carried-bash the one line
# on stdout is `bash PATH`, the absolute path of the bash chosen. No package but the one named is ever installed or removed.

# Functions exported to bash (BASH_FUNC_rm%%, BASH_FUNC_command%%, ...) would
# stand in for the commands this script runs; bash imports them also when it
# is sh. An inherited POSIXLY_CORRECT is given back after, for the package
# managers.
inherited_functions_left=
# shforge-allow: posix-bash-variables unset in other shells, which import no functions
case ${BASH_VERSION-} in
    ?*)
{% include "lib/clear_functions.sh" %}
        if [ -n "$inherited_posixly_correct" ]; then
            POSIXLY_CORRECT=$inherited_posixly_correct_value
            export POSIXLY_CORRECT
        fi
        ;;
esac

{% include "lib/inherited_env.sh" %}

# The default IFS, whatever the environment says: package lists below are
# split on blanks, and every name in them is checked first (check_name).
IFS=' 	
'

# The package managers, in the order they are looked for.
PACKAGE_MANAGERS={{ package_managers }}
# The musl libraries --musl-lib knows (src/musl.rs).
MUSL_LIBS_KNOWN={{ musl_known }}
{% include "bootstrap/messages.sh" %}
{% include "bootstrap/names.sh" %}
{% include "bootstrap/packages.sh" %}
{% include "bootstrap/provide.sh" %}
{% include "bootstrap/carried.sh" %}
{% include "bootstrap/overlap.sh" %}
{% include "bootstrap/args.sh" %}
main() {
    [ -z "$inherited_functions_left" ] || die 2 "cannot clear the functions inherited from the environment"
    needs=
    musl_libs=
    workdir=
    session_dir=
    have_workdir=
    have_session_dir=
    apt_updated=
    carried_bash=
    have_carried_bash=
    chosen_bash=
    image_bash_why=
    add_baked_needs
    parse_args "$@"
    # Refuse an overlap before anything is installed.
    if [ -n "$have_workdir" ]; then
        (check_overlap) || exit
    fi
    choose_bash
    provide_commands
    provide_musl_libs
    report_bash
}

main "$@"
