{ supervisor_entry_opts=$SHELLOPTS; POSIXLY_CORRECT=y; \set +o xtrace +o verbose; } 2>/dev/null
# process_supervisor.sh: run a harness command in a process group of its own,
# under a deadline, stop everything it started, and always write a receipt.
#
#   bash process_supervisor.sh --receipt FILE [--deadline S] [--grace S]
#        [--marker TOKEN] [--cgroup DIR|none] [--max-procs N] -- COMMAND [ARG]...
#   bash process_supervisor.sh --end-services RECEIPT [--grace S]
#
# Seconds are fixed-point decimals with 0.01 s resolution. COMMAND runs with
# stdin from /dev/null and NEMO_GYM_SUPERVISOR=TOKEN in its environment (and
# only there). The stop reaches the harness group, every descendant of a
# reached process, members of groups and sessions led by reached processes,
# and marked processes that were not already services when the stop began.
# Services (marked processes outside all of that when the stop begins, e.g.
# a server the agent started for the task) are preserved and listed in the
# receipt; --end-services ends exactly those later, each only while it has
# the recorded start time and the run's marker (and is not PID 1, the
# caller, its ancestors, group or session), from a receipt in this
# script's own layout only (anything else: exit 2, nothing signalled).
# With a writable cgroup v2 directory (--cgroup DIR, or this shell's own
# cgroup when delegated to this user) the harness also runs in a child
# cgroup that the stop freezes and kills. Out of reach without one: a
# process that left the harness's tree, group and session AND lost the
# marker (env -i, or a rewritten environ) before a scan saw it.
#
# Every tool is found on PATH once, at start (mv; sleep with a deadline;
# mkdir/rmdir for a cgroup): a missing or unusable one is a refusal (125).
# The stop itself forks nothing: it completes, and the receipt is written
# (renamed into place by a helper started before the harness), even when
# the sandbox has no process slot left.
#
# Receipt (JSON, written atomically through a new temporary file with an
# unguessable name): cleanup_confirmed, return_code (the command's status
# as the shell reports it, 128+N for a signal death, null when never run),
# error, timed_out, containment ("cgroup" or "proc"), stop (how it went:
# reason, TERM and KILL times, grace, processes reached), zombies, marker,
# services ([{pid, start_time, argv0}], one a line).
# Exit: return_code when known; 124 when the deadline expired before launch;
# 128+N when signal N arrived before launch; 125 own failure; 2 usage (and
# a receipt path that is a directory, FIFO, socket or device, or a link to
# one: left as it is).
#
# Started without a process group of its own, it runs on as a job (a
# subshell, the script not read again) in a new group; the first shell
# passes TERM/INT/HUP on, and its death (the provider KILLed its group) is
# a stop too, seen as EOF on a pipe only it writes to. Started with `&` by
# a shell without job control (INT ignored), it restarts in place with INT
# and QUIT at their defaults when `env --default-signal` or perl exists;
# otherwise INT cannot stop it.

# Functions the image exports (BASH_FUNC_printf%%, BASH_FUNC_builtin%%, ...)
# would stand in for the builtins and tools this script runs, and the
# harness would inherit them: removed before anything else runs. The first
# line above already runs in posix mode (POSIXLY_CORRECT=y), where `set` is
# found before any function. An inherited POSIXLY_CORRECT is not given
# back: `set +o posix` removed it before, and the harness never had it.
{% include "lib/clear_functions.sh" %}
if [ -n "$inherited_functions_left" ]; then
    printf 'process_supervisor: %s\n' "cannot clear the functions inherited from the environment" >&2
    exit 125
fi
# An inherited BASH_ENV file runs before the first line, and aliases it
# defined would change how the rest of this file is parsed: drop them.
\unalias -a 2>/dev/null
\shopt -u expand_aliases 2>/dev/null
{% include "lib/inherited_env.sh" %}

marker_var={{ marker_var }}
default_grace_cs={{ default_grace_cs }}
# After KILL, how long to wait for the reached processes to disappear.
kill_wait_cs={{ kill_wait_cs }}
# Pause between scans while the graceful phase waits for processes to exit.
poll_seconds=0.01

say() {
    printf 'process_supervisor: %s\n' "$1" >&2
}

# Undo inherited shell state that would change how this script runs:
# SHELLOPTS/BASHOPTS from the environment, and whatever a BASH_ENV file set.
reset_shell_state() {
    builtin set +o errexit +o nounset +o noglob +o noclobber +o allexport
    builtin set +o xtrace +o verbose +o pipefail +o errtrace +o functrace
    builtin set +o posix +o monitor
    builtin shopt -u failglob nullglob nocaseglob dotglob 2>/dev/null
    # A function named like a builtin would shadow it; this script defines
    # its own functions after this point, so only the builtins need clearing.
    builtin unset -f builtin set unset shopt read printf kill wait trap exec \
        export cd command type local return exit shift case mv sleep rm 2>/dev/null
    builtin trap - EXIT ERR DEBUG
    IFS=$' \t\n'
    # GLOBIGNORE would hide /proc entries from the scan; the harness gets it back.
    saved_globignore_set=${GLOBIGNORE+x}
    saved_globignore=${GLOBIGNORE-}
    unset GLOBIGNORE
}

# Descriptors, all made by open_pipe before the harness starts (no child
# but the one named keeps any: close_own_fds, run_tool):
#   52  commands, this shell -> the stop helper (write end of 54's pipe)
#   53  the same pipe's read end, in the stop helper only
#   54  that pipe while start_helper makes it
#   55  nap's pipe: this shell's timed reads, the helper's ticks
#   56  the helper's doorbell: one empty line per command
#   57  the lifeline's write end, in the first shell (regroup_if_needed)
#   58  its read end: the regrouped job, then the lifeline job only
#   63  bash < 4 leaves a process substitution's end here (closed)
# Globals, set in main's phases (init_globals first) unless a part says
# otherwise:
#   self_pid self_pgid self_start self_sigignore
#                            this shell (check_proc; $$ is the first
#                            shell's PID in the regrouped job)
#   regrouped entry_opts     this is the regrouped job; the caller's options
#   subst_pids subst_starts  open_pipe's substitutions not yet seen gone
#   receipt receipt_tmp      the receipt path and its temporary name
#   token marker_entry       the marker and NEMO_GYM_SUPERVISOR=TOKEN
#   cmd hpid harness_group harness_start launch_tick launch_cs
#                            the harness job (harness.bash: launch)
#   rc err confirmed timed_out containment
#                            what the receipt reports
#   stop_reason hurry        why the stop began; a second signal came
#   stop_*_cs stop_n_* stop_by_itself
#                            the stop report (receipt.bash: stop_json)
#   rs pv                    reached / preserved: PID -> start time
#   mk me undecided          marker cache, first undecided look, count
#   c_* live groups          the last scan and what classify made of it
#   zb_*                     zombies the stop left (signals.bash)
#   helper_pid timer_pid lifeline_pid (and *_start)
#                            this shell's jobs
#   timer_child(_start) *_killed
#                            the timer's sleep; a job already KILLed
#   pw_* mount_table         the PID window, the mount table (scan.bash)
#   cg                       the harness's cgroup (cgroup.bash)

{% include "supervisor/helper.bash" %}
{% include "supervisor/receipt.bash" %}
{% include "supervisor/args.bash" %}
{% include "supervisor/proc.bash" %}
{% include "supervisor/tools.bash" %}
{% include "supervisor/regroup.bash" %}
{% include "supervisor/harness.bash" %}
{% include "supervisor/scan.bash" %}
{% include "supervisor/signals.bash" %}
{% include "supervisor/cgroup.bash" %}
{% include "supervisor/main.bash" %}
main "$@"

# Only --end-services gets here (main returns for it alone): bash reads a
# script as it runs it, so a run never parses what follows.
{% include "supervisor/services.bash" %}
end_services_main "$@"

