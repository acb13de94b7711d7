# events_tools: find dd and sed (and sleep, which is optional) on the PATH
# the CLI will see, before the CLI starts: record_chunks needs them.
events_tools() {
    local pl_found pl_seen
    path_lookup dd || fail 125 "events mode needs dd on PATH; the CLI was not started"
    dd_bin=$pl_found
    path_lookup sed || fail 125 "events mode needs sed on PATH; the CLI was not started"
    sed_bin=$pl_found
    sleep_bin=''
    if path_lookup sleep; then
        sleep_bin=$pl_found
    fi
}

# record_events EPOCH AT: read the CLI's stdout and write one event line per
# line, stamped when the recorder read it. Runs in its own subshell, under
# the C locale: every byte is one character, so each step is linear in the
# line length whatever the user's locale. Without $EPOCHREALTIME (bash <
# 5.0) the stamp is one `date +%s` taken at start (EPOCH, when SECONDS was
# AT) plus SECONDS: no fork per line. TERM, INT and HUP are ignored here
# (and so in dd, sed and sleep): a stop of the process group must not lose
# output the CLI already wrote.
record_events() {
    local re_epoch=$1 re_at=$2 re_stamp=''
    trap '' TERM INT HUP
    LC_ALL=C
    if new_bash; then
        record_blocks 65536
    else
        record_chunks
    fi
}

# new_bash: bash 5.0 or later (record_blocks), else record_chunks.
new_bash() {
    ((BASH_VERSINFO[0] >= 5))
}

# record_chunks: bash 3.2 to 4.4.
#
# bash's `read` takes one system call per byte from a pipe on every
# release (and its block reads, `read -N`, cut at NUL before 4.4, and 4.4
# drops a byte when a timed read's timeout fires as it comes, see
# docs/portability.md). So the
# pipe is read by dd, one read(2) of up to 64 KiB (what the pipe holds),
# blocking until output comes or ends: no timed read, no busy wait, and no
# fork per line, since a chunk holds every line that has arrived. sed puts
# a "." in front of every line of the chunk, so that splitting it on
# newlines (one word split: the fast whole-string operation on every bash;
# `${x//pat/rep}` takes seconds per 64 KiB on bash 3.2) keeps empty lines.
# The command substitution drops NUL bytes on every bash (quietly from 4.4
# on, with the warning sent to /dev/null), and the last byte it returns
# says whether dd and sed both succeeded.
#
# After a chunk of less than 16 KiB the recorder pauses 0.05 s (one
# `sleep`, when there is one): a CLI that prints a line at a time then
# costs at most 20 chunks a second, and every line is stamped within 0.05 s
# and one chunk of its arrival.
record_chunks() {
    local re_chunk re_tail re_n re_status re_cr=''
    local -a re_lines re_pending=()
    set -f
    while :; do
        {
            re_chunk=$(
                "$dd_bin" bs=65536 count=1 2>/dev/null | "$sed_bin" 's/^/./'
                if [[ ${PIPESTATUS[0]}${PIPESTATUS[1]} == 00 ]]; then
                    printf x
                else
                    printf y
                fi
            )
        } 2>/dev/null
        re_status=${re_chunk: -1}
        re_chunk=${re_chunk%?}
        [[ $re_status == x ]] || return 1
        # dd read nothing: the output has ended.
        [[ -n $re_chunk ]] || break
        event_stamp
        [[ $re_chunk != *$'\r'* ]] || re_cr=1
        if [[ $re_chunk != *$'\n'* ]]; then
            # Inside a long line: the piece, without sed's mark, waits.
            re_pending+=("${re_chunk:1}")
        else
            split_chunk || return 1
        fi
        if ((${#re_chunk} < 16384)) && [[ -n $sleep_bin ]]; then
            "$sleep_bin" 0.05 2>/dev/null
        fi
    done
    # The output ended inside a line: it is kept, as if it had a newline.
    if ((${#re_pending[@]} > 0)); then
        re_lines=('')
        emit_lines end || return 1
    fi
    return 0
}

# split_chunk: (record_chunks) cut re_chunk, which holds a newline, into
# lines and write the whole ones; a last line not yet ended waits with the
# pieces.
split_chunk() {
    re_tail=''
    [[ ${re_chunk: -1} == $'\n' ]] || re_tail=1
    IFS=$'\n'
    # shellcheck disable=SC2206 # split on purpose, with noglob; see above
    re_lines=($re_chunk)
    # The default IFS again: bash 3.2 joins "${a[@]#.}" into one word
    # when IFS has no space.
    IFS=$' \t\n'
    re_lines=("${re_lines[@]#.}")
    if [[ -n $re_tail ]]; then
        # The chunk ends inside a line: its start waits with the pieces,
        # once the lines before it are out.
        re_n=$((${#re_lines[@]} - 1))
        re_tail=${re_lines[re_n]}
        unset "re_lines[re_n]"
        emit_lines || return 1
        re_pending+=("$re_tail")
    else
        emit_lines || return 1
    fi
}

# event_stamp: the time of the chunk just read, in re_stamp.
event_stamp() {
    if ((BASH_VERSINFO[0] >= 5)); then
        # shforge-allow: bash32-epoch only read when BASH_VERSINFO[0] >= 5
        re_stamp=$EPOCHREALTIME
    else
        re_stamp=$((re_epoch + SECONDS - re_at))
    fi
}

# emit_lines: (record_chunks) write the whole lines in re_lines, the pieces of a long line
# (re_pending, joined once: appending to one string for every chunk would
# copy it again each time) in front of the first one. One trailing CR goes
# from each line, tested only when a CR came at all: ${x%$'\r'} looks at
# every byte of x. With "end": the output ended inside a line, and a last
# line made only of NUL bytes is no line.
emit_lines() {
    local el_joined
    ((${#re_lines[@]} > 0)) || return 0
    if ((${#re_pending[@]} > 0)); then
        local IFS=''
        el_joined="${re_pending[*]}${re_lines[0]}"
        IFS=$' \t\n'
        re_pending=()
        [[ -n $el_joined || $1 != end ]] || return 0
        re_lines[0]=$el_joined
    fi
    if [[ -n $re_cr ]]; then
        re_lines=("${re_lines[@]%$'\r'}")
    fi
    # shellcheck disable=SC2059 # the stamp (digits and a point) is safe in a format
    printf "$re_stamp\t%s\n" "${re_lines[@]}"
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
    local ev_epoch=0 ev_at=0 ev_opened='' ev_status
    new_bash || events_tools
    if ((BASH_VERSINFO[0] < 5)); then
        ev_at=$SECONDS
        ev_epoch=$(date +%s 2>/dev/null)
        case $ev_epoch in
            '' | *[!0123456789]*) fail 125 "date +%s failed: no clock for event timestamps" ;;
        esac
    fi
    trap '' TERM INT HUP
    {
        ev_opened=1
        (
            trap ' ' TERM INT HUP
            launch_cli events
        ) | (record_events "$ev_epoch" "$ev_at")
        ev_status=("${PIPESTATUS[@]}")
    } >"$RUNNER_EVENTS"
    [[ -n $ev_opened ]] ||
        fail 125 "cannot open RUNNER_EVENTS '$RUNNER_EVENTS' for writing; the CLI was not started"
    [[ ${ev_status[1]} == 0 ]] ||
        fail 125 "writing RUNNER_EVENTS '$RUNNER_EVENTS' failed (the CLI exited with status ${ev_status[0]})"
    exit "${ev_status[0]}"
}
