# record_events EPOCH AT: read the CLI's stdout and write one event line per
# line. Runs in its own subshell, under the C locale: every byte is one
# character, so each step is linear in the line length whatever the user's
# locale. No bash variable can hold NUL: bash 4.4 and later drop NUL bytes,
# older ones cut the text at the first one. Without $EPOCHREALTIME (bash <
# 5.0) the stamp is one `date +%s` taken at start (EPOCH, when SECONDS was
# AT) plus SECONDS: no fork per line.
record_events() {
    local re_epoch=$1 re_at=$2 re_stamp=''
    LC_ALL=C
    if ((BASH_VERSINFO[0] >= 5)); then
        record_blocks 65536
    else
        record_lines
    fi
}

# event_stamp: the time for the lines just read, in re_stamp.
event_stamp() {
    if ((BASH_VERSINFO[0] >= 5)); then
        # shforge-allow: bash32-epoch only read when BASH_VERSINFO[0] >= 5
        re_stamp=$EPOCHREALTIME
    else
        re_stamp=$((re_epoch + SECONDS - re_at))
    fi
}

# record_lines: bash 3.2 to 4.4. `read` from a pipe costs one system call
# per byte. A trailing CR is tested with one substring expansion before it
# is cut: ${line%$'\r'} on a long line without CR is quadratic in a UTF-8
# locale. (read -N, below, exists from 4.1, but before 4.4 it cuts a whole
# block at a NUL byte, losing the lines after it; and bash 4.4 drops a byte
# when the timeout of a timed read fires as the byte comes.)
record_lines() {
    local rl_line
    while IFS= read -r rl_line || [[ -n $rl_line ]]; do
        if [[ ${rl_line: -1} == $'\r' ]]; then
            rl_line=${rl_line%?}
        fi
        event_stamp
        printf '%s\t%s\n' "$re_stamp" "$rl_line" || return 1
    done
    return 0
}

# record_blocks SIZE: bash 5.0 and later. `read -N` reads a pipe in blocks
# (one system call per pipe chunk instead of one per byte), but it returns
# only once it has SIZE bytes or the output ends. So it is timed (`read -t`):
# what arrived within 0.1 s goes out then, its whole lines stamped, and a
# line not yet ended waits for the rest. A timed read costs about one system
# call per byte on bash 5.2 and 5.3 (16 MiB: 20 s instead of 0.9 s), so
# while the output flows (a quarter of a block or more per read, and more
# already waiting) the reads are untimed, until a block finds nothing more
# waiting. The price: the end of a burst of output longer than a block can
# wait, unwritten, for the next output or the end. (bash 5.0 and 5.1 can
# miss a read's timeout, see docs/portability.md: what came then waits for
# the next output, and is stamped with it; no byte is lost.)
#
# A full block rarely ends at a newline: while output flows, the rest of its
# last line is read with `read -r -n 1024` (byte by byte, but only to the end
# of that line). When that finds no newline either, the line is long: it is
# kept in pieces and joined once it ends (appending to one string would copy
# it again for every block), and blocks without a newline go straight to the
# pieces. Finding the last newline of a block by pattern (${x%$'\n'*}) would
# cost a pattern match per byte after it.
#
# The lines of a block then cost a few whole-string expansions and no step
# per line: CRLF becomes LF in one substitution (of "x\r\r\n" only the last
# CR goes) and every newline but the last gets the stamp in another. NUL
# bytes are dropped by `read` and do not count towards SIZE or 1024.
record_blocks() {
    local rb_text rb_rest rb_status rb_joined rb_body rb_tail rb_fast=''
    local -a rb_pending=() rb_parts
    set -f
    # IFS empty: ${rb_pending[*]} joins the pieces with nothing between.
    local IFS=''
    while :; do
        rb_text=''
        if [[ -n $rb_fast ]]; then
            # shforge-allow: bash32-read-new-options record_blocks runs on bash >= 5.0 only
            read -r -N "$1" rb_text
        else
            # shforge-allow: bash32-read-new-options record_blocks runs on bash >= 5.0 only
            read -r -t 0.1 -N "$1" rb_text # shforge-allow: bash32-read-fractional-timeout bash >= 5.0 only
        fi
        rb_status=$?
        if ((rb_status > 128)); then
            # The time is up: what came goes out, if anything did.
            [[ -n $rb_text ]] || continue
            if ((${#rb_text} * 4 >= $1)) && read -r -t 0; then
                rb_fast=1
            fi
            emit_lines || return 1
            continue
        fi
        [[ -n $rb_text ]] || break
        rb_fast=''
        if ((rb_status == 0)) && read -r -t 0; then
            rb_fast=1
        fi
        if ((${#rb_pending[@]} > 0)) && [[ $rb_text != *$'\n'* ]]; then
            # Still inside a long line.
            rb_pending+=("$rb_text")
            continue
        fi
        if [[ $rb_status == 0 && ${rb_text: -1} != $'\n' ]]; then
            if [[ -z $rb_fast ]]; then
                # Nothing more is waiting: the whole lines go out now.
                emit_lines || return 1
                continue
            fi
            rb_rest=''
            # shforge-allow: bash32-read-new-options record_blocks runs on bash >= 5.0 only
            read -r -n 1024 rb_rest
            rb_status=$?
            if [[ $rb_status == 0 && ${#rb_rest} -ge 1024 ]]; then
                # A long line begins in this block: the lines before it
                # go out now, the rest waits in pieces.
                rb_text=$rb_text$rb_rest
                emit_lines || return 1
                continue
            fi
            rb_text=$rb_text$rb_rest
            # Status 0: the read stopped at a newline, which it removed.
            [[ $rb_status != 0 ]] || rb_text=$rb_text$'\n'
        fi
        event_stamp
        emit_block || return 1
        ((rb_status == 0)) || break
    done
    if ((${#rb_pending[@]} > 0)); then
        # The output ended inside a line.
        event_stamp
        rb_text=''
        emit_block || return 1
    fi
    return 0
}

# emit_lines: write the whole lines of rb_text (and the pieces before them)
# now; a last line not yet ended goes to the pieces.
emit_lines() {
    if [[ $rb_text != *$'\n'* ]]; then
        rb_pending+=("$rb_text")
        return 0
    fi
    rb_tail=''
    [[ ${rb_text: -1} == $'\n' ]] || split_block
    event_stamp
    emit_block || return 1
    [[ -z $rb_tail ]] || rb_pending+=("$rb_tail")
}

# split_block: cut rb_text after its last newline; what follows goes to
# rb_tail. Word splitting on newline (noglob is on), each line prefixed
# with "." so that empty lines are fields too: linear, where looking for
# the last newline by pattern is not.
split_block() {
    IFS=$'\n'
    # shellcheck disable=SC2206 # split on purpose, with noglob; see above
    rb_parts=(.${rb_text//$'\n'/$'\n'.})
    IFS=''
    rb_tail=${rb_parts[${#rb_parts[@]}-1]#.}
    rb_text=${rb_text:0:${#rb_text}-${#rb_tail}}
}

# emit_block: write rb_text (whole lines; the last one may lack its
# newline when the output ended there), the pieces in rb_pending first.
emit_block() {
    rb_joined=''
    if ((${#rb_pending[@]} > 0)); then
        rb_joined=${rb_pending[*]}
        rb_pending=()
        if [[ ${rb_text:0:1} != [!$'\n'] && ${rb_joined: -1} == $'\r' ]]; then
            # The long line ends here with CR LF (or CR and the end).
            rb_joined=${rb_joined%?}
        fi
    fi
    if [[ $rb_text == *$'\r'* ]]; then
        rb_text=${rb_text//$'\r\n'/$'\n'}
        if [[ ${rb_text: -1} == $'\r' ]]; then
            # A last line without newline loses its CR too.
            rb_text=${rb_text%?}
        fi
    fi
    rb_body=$rb_text
    if [[ ${rb_body: -1} == $'\n' ]]; then
        rb_body=${rb_body%?}
    fi
    printf '%s\t%s\n' "$re_stamp" "$rb_joined${rb_body//$'\n'/$'\n'$re_stamp$'\t'}"
}

# run_events: the CLI's stdout goes through record_events into RUNNER_EVENTS.
# The events file is opened by the group around the pipeline, before the CLI
# starts; the CLI's stdout is the pipe, and bash keeps its saved copy of the
# runner's stdout close-on-exec, so the CLI holds no descriptor of ours.
# The runner exits once the recorder has written the last line.
run_events() {
    local ev_epoch=0 ev_at=0 ev_opened='' ev_status
    if ((BASH_VERSINFO[0] < 5)); then
        ev_at=$SECONDS
        ev_epoch=$(date +%s 2>/dev/null)
        case $ev_epoch in
            '' | *[!0123456789]*) fail 125 "date +%s failed: no clock for event timestamps" ;;
        esac
    fi
    {
        ev_opened=1
        (launch_cli events) | (record_events "$ev_epoch" "$ev_at")
        ev_status=("${PIPESTATUS[@]}")
    } >"$RUNNER_EVENTS"
    [[ -n $ev_opened ]] ||
        fail 125 "cannot open RUNNER_EVENTS '$RUNNER_EVENTS' for writing; the CLI was not started"
    [[ ${ev_status[1]} == 0 ]] ||
        fail 125 "writing RUNNER_EVENTS '$RUNNER_EVENTS' failed (the CLI exited with status ${ev_status[0]})"
    exit "${ev_status[0]}"
}
