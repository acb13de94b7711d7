# The events reader of bash 5.0 and later: blocks read with `read -N`, no
# process per block: three to four times less CPU there than record_chunks.
# These releases drop no byte when a timeout fires (4.4 does); 5.0 and 5.1
# can lose a timeout (docs/portability.md): what came then waits for the
# next output and is stamped with it, no byte is lost. 5.2 and later time
# out with select(2). Older bashes use record_chunks (events.bash).
#
# record_blocks SIZE: bash 5.0 and later. `read -N` reads a pipe in blocks
# (one system call per pipe chunk instead of one per byte), but it returns
# only once it has SIZE bytes or the output ends. So it is timed (`read -t`):
# what arrived within 0.05 s goes out then, its whole lines stamped (within
# 0.05 s of their arrival, as record_chunks stamps them), and a line not yet
# ended waits for the rest. A timed read costs about one system
# call per byte on bash 5.2 and 5.3 (16 MiB: 20 s instead of 0.9 s), so
# while the output flows (a quarter of a block or more per read, and more
# already waiting) the reads are untimed, until a block finds nothing more
# waiting. The price: the end of a burst of output longer than a block can
# wait, unwritten, for the next output or the end.
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
            read -r -t 0.05 -N "$1" rb_text # shforge-allow: bash32-read-fractional-timeout bash >= 5.0 only
        fi
        rb_status=$?
        if ((rb_status > 128)); then
            # The time is up: what came goes out, if anything did.
            [[ -n $rb_text ]] || continue
            if ((${#rb_text} * 4 >= $1)) && read -r -t 0; then
                rb_fast=1
            fi
            emit_block_lines || return 1
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
                emit_block_lines || return 1
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
                emit_block_lines || return 1
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

# emit_block_lines: write the whole lines of rb_text (and the pieces before them)
# now; a last line not yet ended goes to the pieces.
emit_block_lines() {
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
