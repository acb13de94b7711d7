# Functions inherited from the environment (BASH_FUNC_exec%%, BASH_FUNC_cd%%,
# or any name bash 3.2 imports) are removed first, before this script
# defines its own: an inherited `exec` or `cd` would replace the builtin for
# the whole run, and the CLI would inherit it. Assigning POSIXLY_CORRECT
# turns on posix mode, where the special builtin `unset` is found before any
# function, so no inherited function can stand in for it (nor for `set`);
# `compgen` is freed first. Names that are not identifiers (bash 3.2 imports
# `BASH_FUNC_x%%` under that name) can only be unset outside posix mode: a
# second pass, when no function named like a builtin is left. Unsetting
# POSIXLY_CORRECT ends posix mode; an inherited value is given back to the
# CLI (see launch_cli).
runner_posixly_correct=${POSIXLY_CORRECT+set}
runner_posixly_correct_value=${POSIXLY_CORRECT-}
POSIXLY_CORRECT=y
# errexit or nounset from SHELLOPTS would stop at the first name that unset
# refuses; reset_shell_options turns the rest off.
set +e +u
unset -f compgen
if compgen -A function >/dev/null; then
    # One name per line; a name holding a newline is not removed and is
    # caught by the check below.
    runner_functions=$(compgen -A function)
    IFS='
'
    set -f
    for runner_function in $runner_functions; do
        unset -f "$runner_function" 2>/dev/null
    done
    unset -v POSIXLY_CORRECT
    for runner_function in $runner_functions; do
        unset -f "$runner_function" 2>/dev/null
    done
    set +f
    IFS=' 	
'
    unset -v runner_functions runner_function
fi
unset -v POSIXLY_CORRECT
if compgen -A function >/dev/null; then
    printf 'harness_runner: %s\n' "cannot clear the functions inherited from the environment" >&2
    exit 125
fi
