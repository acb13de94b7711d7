# events_tools: (bash 3.2 to 4.4) find dd, sed, tr, mktemp and rm (and
# sleep, which is optional) on the PATH the CLI will see, and make the
# recorder's private directory, before the CLI starts: record_chunks needs
# them. The directory is made beside RUNNER_EVENTS (mktemp -d in its
# directory, which is the session's: the image's /tmp may be read-only,
# full or shared) and removed when the recording ends; a recorder killed by
# SIGKILL leaves it behind there.
events_tools() {
    local pl_found pl_seen re_parent
    events_tool dd
    dd_bin=$pl_found
    events_tool sed
    sed_bin=$pl_found
    events_tool tr
    tr_bin=$pl_found
    events_tool mktemp
    mktemp_bin=$pl_found
    events_tool rm
    rm_bin=$pl_found
    sleep_bin=''
    if path_lookup sleep; then
        sleep_bin=$pl_found
    fi
    re_parent=.
    [[ $RUNNER_EVENTS == */* ]] && re_parent=${RUNNER_EVENTS%/*}
    [[ $re_parent == /* ]] || re_parent=$PWD/$re_parent
    re_dir=$(
        tools_env
        "$mktemp_bin" -d "$re_parent/.events-recorder.XXXXXXXXXX" 2>/dev/null
    )
    [[ $re_dir == /* && -d $re_dir ]] ||
        fail 125 "events mode needs a private directory beside RUNNER_EVENTS (mktemp -d failed in ${re_parent:0:200}); the CLI was not started"
}

# tools_env: the environment dd, sed, tr, mktemp, rm and sleep run with,
# whatever the image's: the C locale (every byte one character, dd's
# messages untranslated) and none of the variables that change what GNU or
# busybox tools do (POSIXLY_CORRECT, _POSIX2_VERSION; TMPDIR is not read:
# mktemp gets a full template). Only in the recorder's own subshells: the
# CLI keeps the environment it was given.
tools_env() {
    LC_ALL=C
    export LC_ALL
    unset -v POSIXLY_CORRECT _POSIX2_VERSION TMPDIR
}

# events_tool NAME: NAME on the PATH, in pl_found, or stop with 125.
events_tool() {
    path_lookup "$1" || fail 125 "events mode needs $1 on PATH; the CLI was not started"
}

# record_events: read the CLI's stdout and write one event line per
# line, stamped when the recorder read it (record_chunks: the chunk of its
# first byte; record_blocks: the block that ends it). Runs in its own
# subshell, under the C locale and tools_env (given to dd, sed and tr too:
# they see every byte as one character, whatever the user's locale). Without
# $EPOCHREALTIME (bash < 5.0) the stamp comes from runner/clock.bash (started by
# run_events), which takes no fork. TERM, INT and HUP are ignored here
# (and so in dd, sed, tr and sleep): a stop of the process group must not
# lose output the CLI already wrote.
record_events() {
    local re_stamp='' re_status
    trap '' TERM INT HUP
    tools_env
    if new_bash; then
        record_blocks 65536
        return
    fi
    record_chunks
    re_status=$?
    cd / && "$rm_bin" -rf -- "$re_dir"
    return "$re_status"
}

# new_bash: bash 5.0 or later (record_blocks), else record_chunks.
new_bash() {
    ((BASH_VERSINFO[0] >= 5))
}

# record_chunks: bash 3.2 to 4.4. No byte of the output passes through bash.
#
# bash's `read` takes one system call per byte from a pipe on every
# release (and its block reads, `read -N`, cut at NUL before 4.4, and 4.4
# drops a byte when a timed read's timeout fires as it comes), and on
# these releases every expansion of a 64 KiB string costs milliseconds (a
# copy and a quoting pass per byte; see docs/portability.md). So dd reads
# the pipe, one read(2) of up to 64 KiB (what the pipe holds), blocking
# until output comes or ends, into the file "raw" of the recorder's
# directory; tr drops its NUL bytes (bash 5 drops them in `read`: every
# bash writes the same events) into the file "chunk": no timed read, no
# busy wait, and no fork per line, since a chunk holds every line that has
# arrived. Then the time is
# taken, and sed (chunk_script) writes the chunk's lines into the events
# file itself, stamped: three processes per chunk, whatever its lines. (A
# tr for the whole stream would hold output back: GNU tr buffers what it
# writes to a pipe.)
#
# A line that a chunk does not end is written as far as it came, its stamp
# in front (the arrival of its first byte), and the next chunk goes on with
# it; sed tells in the file "flag" that a line is open ("p"), or that it
# is open and its last byte so far, a CR, is held back ("c"): it goes out
# only if the line goes on, since one CR before a newline is dropped. When
# the output ends inside a line, the line gets its newline (its held CR is
# dropped, as before a newline).
#
# After a chunk shorter than a full 64 KiB block (dd's "records in" line
# says) the recorder pauses 0.05 s (one `sleep`, when there is one): a CLI
# that prints a line at a time then costs at most 20 chunks a second, and
# every line is stamped within 0.05 s and one chunk of its arrival.
record_chunks() {
    local rc_open='' rc_first rc_head rc_tail
    cd "$re_dir" || return 1
    chunk_script
    while :; do
        "$dd_bin" bs=65536 count=1 of=raw 2>records || return 1
        # dd read nothing: the output has ended.
        [[ -s raw ]] || break
        event_stamp
        LC_ALL=C "$tr_bin" -d '\000' <raw >chunk || return 1
        if [[ ! -s chunk ]]; then
            # NUL bytes only: nothing to write.
            pause_after_chunk
            continue
        fi
        # A last byte that is no newline, so that sed sees the chunk's
        # open line (empty when the chunk ends with a newline) as a line.
        printf x >>chunk || return 1
        case $rc_open in
            '') rc_first="s/^/$re_stamp	/" ;;
            p) rc_first="1!s/^/$re_stamp	/" ;;
            *) rc_first=$'1s/^/\r/\n'"1!s/^/$re_stamp	/" ;;
        esac
        LC_ALL=C "$sed_bin" "$rc_head$rc_first$rc_tail" chunk || return 1
        rc_open=''
        read -r rc_open <flag
        pause_after_chunk
    done
    # The output ended inside a line: it is kept, as if it had a newline.
    [[ -z $rc_open ]] || printf '\n'
}

# pause_after_chunk: (record_chunks) 0.05 s after a chunk shorter than a
# full block.
pause_after_chunk() {
    local pc_records=''
    read -r pc_records <records
    if [[ $pc_records != 1+0* && -n $sleep_bin ]]; then
        "$sleep_bin" 0.05 2>/dev/null
    fi
}

# chunk_script: (record_chunks) the sed script around the stamps, in
# rc_head and rc_tail. The last line (the chunk's open line and the "x"
# after it) loses its x, and goes if it is empty. Then every line gets the
# stamp (rc_first: not the first when it goes on with an open line, and a
# held CR in front of it). A line ended in the chunk loses one CR before
# its newline; the last line is written without a newline (sed keeps the
# missing newline of its input), its CR held back, and "p" or "c" goes to
# the file "flag": the line is copied to the hold space (h), replaced by the
# flag and written, and copied back (g). Not `x`: busybox's sed takes a line
# swapped in from the hold space as ended, and would write the newline the
# open line lacks.
chunk_script() {
    local cr=$'\r'
    # shellcheck disable=SC2016 # sed's $ (the last line), not bash's
    rc_head='$s/x$//
${
/^$/d
}
'
    rc_tail="
\$!{
s/$cr\$//
b
}
/$cr\$/{
s/$cr\$//
h
s/.*/c/
w flag
g
b
}
h
s/.*/p/
w flag
g"
}

# event_stamp: the time of the chunk or block just read, in re_stamp.
event_stamp() {
    if ((BASH_VERSINFO[0] >= 5)); then
        # shforge-allow: bash32-epoch only read when BASH_VERSINFO[0] >= 5
        re_stamp=$EPOCHREALTIME
    else
        clock_wall_now
        re_stamp=$clock_stamp
    fi
}

# run_events: the CLI's stdout goes through record_events into RUNNER_EVENTS.
# The events file is opened by the group around the pipeline, before the CLI
# starts; the CLI's stdout is the pipe, and bash keeps its saved copy of the
# runner's stdout close-on-exec, so the CLI holds no descriptor of ours.
#
# The runner ignores TERM, INT and HUP from here on: a stop of its process
# group reaches the CLI, and the runner records until the CLI's output ends,
# then exits with the CLI's status as the shell reports it (128+N for a
# signal death), as direct mode does. The CLI's side sets a trap of its own
# that does nothing, so exec gives the CLI these signals at their defaults
# (`trap -` there keeps them ignored on bash 4.2); a signal the runner
# itself got ignored stays ignored for the CLI, as in direct mode.
run_events() {
    local ev_opened='' ev_status re_dir=''
    local clock_kind='' clock_base=0 clock_at=0 clock_up=0 clock_stamp=''
    if ((BASH_VERSINFO[0] < 5)); then
        clock_wall_start || fail 125 "date +%s failed: no clock for event timestamps"
        events_tools
    fi
    trap '' TERM INT HUP
    {
        ev_opened=1
        (
            trap ' ' TERM INT HUP
            launch_cli events
        ) | (record_events)
        ev_status=("${PIPESTATUS[@]}")
    } >"$RUNNER_EVENTS"
    if [[ -z $ev_opened ]]; then
        [[ -z $re_dir ]] || (
            tools_env
            "$rm_bin" -rf -- "$re_dir"
        )
        fail 125 "cannot open RUNNER_EVENTS '$RUNNER_EVENTS' for writing; the CLI was not started"
    fi
    [[ ${ev_status[1]} == 0 ]] ||
        fail 125 "writing RUNNER_EVENTS '$RUNNER_EVENTS' failed (the CLI exited with status ${ev_status[0]})"
    exit "${ev_status[0]}"
}
