# Functions inherited from the environment (BASH_FUNC_exec%%, BASH_FUNC_cd%%,
# BASH_FUNC_rm%%, or any name bash 3.2 imports) are removed first, before the
# script defines its own: an inherited `exec` or `cd` would replace the
# builtin for the whole run, an inherited `rm`, `mv` or `tar` the tool, and
# what the script runs would inherit it. Top-level code, included right after
# the header, before the first command a function could stand in for. It is
# POSIX in form because bootstrap.sh, a POSIX script, runs it too: under bash
# only, which imports functions also as sh (from 4.4 on); no other shell
# imports any.
#
# Assigning POSIXLY_CORRECT turns on posix mode, where the special builtin
# `unset` is found before any function, so no inherited function can stand
# in for it (nor for `set`); `compgen` is freed first. Names that are not
# identifiers (bash 3.2 imports `BASH_FUNC_x%%` under that name) can only be
# unset outside posix mode: a second pass, when no function named like a
# builtin is left. Unsetting POSIXLY_CORRECT ends posix mode; an inherited
# value is kept in inherited_posixly_correct (set or empty) and
# inherited_posixly_correct_value, for a script that gives it back.
# shellcheck disable=SC2034 # read by a script that gives the value back
inherited_posixly_correct=${POSIXLY_CORRECT+set}
# shellcheck disable=SC2034 # likewise
inherited_posixly_correct_value=${POSIXLY_CORRECT-}
POSIXLY_CORRECT=y
# errexit or nounset from SHELLOPTS would stop at the first name that unset
# refuses; any other inherited option is the script's to turn off.
set +e +u
unset -f compgen
# shellcheck disable=SC3044 # compgen runs under bash only (bootstrap.sh checks)
if compgen -A function >/dev/null 2>&1; then
    # One name per line; a name holding a newline is not removed and is
    # caught by the check below.
    cleared_functions=$(compgen -A function 2>/dev/null)
    IFS='
'
    set -f
    for cleared_function in $cleared_functions; do
        unset -f "$cleared_function" 2>/dev/null
    done
    unset -v POSIXLY_CORRECT
    for cleared_function in $cleared_functions; do
        unset -f "$cleared_function" 2>/dev/null
    done
    set +f
    IFS=' 	
'
    unset -v cleared_functions cleared_function
fi
unset -v POSIXLY_CORRECT
# What is left (a name holding a newline) the script refuses, with its own
# message and exit status, before it runs anything.
inherited_functions_left=
# shellcheck disable=SC3044 # as above
if compgen -A function >/dev/null 2>&1; then
    inherited_functions_left=1
fi
