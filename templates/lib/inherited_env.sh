# What the image's environment may not change (src/environ.rs has the table;
# docs/security.md, "What the image's environment cannot change", what each would have
# done). Top-level code, included before the script's first function call:
# a function must not run under an inherited FUNCNEST, nor a read under a
# TMOUT. POSIX in form because bootstrap.sh runs it too.
#
# bash's own variables that change how a script runs are removed, for this
# script and for everything it starts (the supervised launch clears them
# too, so a harness sees the same environment however it was started).
# BASH_ENV, ENV, SHELLOPTS and BASHOPTS act before the first line: the
# launch clears them, the script undoes what the options did.
unset -v {{ crate::environ::unset_words()|raw }}
# PATH keeps its absolute entries only. An empty or relative entry ("", ".",
# "bin") means the working directory at each lookup, which the task and the
# agent write to: a file planted there must never stand in for a tool of the
# script's. Nothing absolute left: PATH names no directory at all
# (/dev/null: every lookup fails, so a missing tool is refused as such). The
# common case (no such entry) costs one pattern match.
case :${PATH-}: in
    *::* | *:[!/]*)
        inherited_path_kept=
        IFS=:
        set -f
        for inherited_path_entry in ${PATH-}; do
            case $inherited_path_entry in
                /*) inherited_path_kept=$inherited_path_kept${inherited_path_kept:+:}$inherited_path_entry ;;
            esac
        done
        set +f
        IFS=' 	
'
        PATH=${inherited_path_kept:-/dev/null}
        export PATH
        unset -v inherited_path_kept inherited_path_entry
        ;;
esac
