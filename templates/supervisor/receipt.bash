# ---------------------------------------------------------------- receipt

# Quote $1 as a JSON string into json_out, byte by byte, without forks.
json_quote() {
    local LC_ALL=C
    local s=$1 out='' c i code hex
    # Printable ASCII without a quote or backslash (a marker, most names)
    # is its own JSON: no loop over its bytes.
    if [[ $s != *[!\ -~]* && $s != *[\"\\]* ]]; then
        json_out="\"$s\""
        return 0
    fi
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        case $c in
            '"') out+='\"' ;;
            "\\") out+="\\\\" ;;
            [\ -~]) out+=$c ;;
            *)
                # Control bytes as \u00XX; each byte of a non-ASCII character
                # as '?': the receipt stays valid JSON whatever the bytes.
                printf -v code '%d' "'$c"
                code=$((code & 255))
                if ((code < 128)); then
                    printf -v hex '%04x' "$code"
                    out+="\\u$hex"
                else
                    out+='?'
                fi
                ;;
        esac
    done
    json_out="\"$out\""
}

# The preserved services as JSON objects into services_out, one a line
# (each line but the last ends in a comma): pid, start time and argv[0] as
# recorded when the stop began. --end-services reads them line by line.
services_json() {
    local pid sep=''
    services_out=''
    for pid in ${pv[@]+"${!pv[@]}"}; do
        json_quote "${sv_argv0[pid]-}"
        services_out+="$sep{\"pid\": $pid, \"start_time\": ${pv[pid]}, \"argv0\": $json_out}"
        sep=$',\n'
    done
    [[ -n $services_out ]] && services_out+=$'\n'
}

# Centiseconds $1 (empty: null) as fixed-point seconds into json_out.
seconds_json() {
    json_out=null
    [[ -n $1 ]] || return 0
    printf -v json_out '%d.%02d' "$(($1 / 100))" "$(($1 % 100))"
}

# Centiseconds since the launch at tick $1 (empty: null) into json_out.
since_launch_json() {
    if [[ -z $1 ]]; then
        json_out=null
        return 0
    fi
    seconds_json "$(($1 - launch_cs))"
}

# How the stop went, into stop_out (null when the harness never ran): why
# it began, when TERM and KILL were sent (seconds since the launch), how
# long the graceful phase took, how many processes each phase reached, and
# whether the harness had exited before anything was sent to it.
stop_json() {
    local reason=exit sig=null began term kill end grace by_itself=false
    stop_out=null
    [[ -n $stop_began_cs ]] || return 0
    case $stop_reason in
        '') ;;
        ALRM) reason=deadline ;;
        LOST) reason=lost ;;
        *) reason=signal sig="\"$stop_reason\"" ;;
    esac
    [[ -n $stop_by_itself ]] && by_itself=true
    since_launch_json "$stop_began_cs"
    began=$json_out
    since_launch_json "$stop_term_cs"
    term=$json_out
    since_launch_json "$stop_kill_cs"
    kill=$json_out
    since_launch_json "$stop_end_cs"
    end=$json_out
    grace=null
    if [[ -n $stop_term_cs ]]; then
        seconds_json "$((stop_graceful_end_cs - stop_grace_cs))"
        grace=$json_out
    fi
    stop_out="{\"reason\": \"$reason\", \"signal\": $sig, \"began_at\": $began, \"term_at\": $term, \"kill_at\": $kill, \"ended_at\": $end, \"grace_s\": $grace, \"reached_term\": $stop_n_term, \"reached_kill\": $stop_n_kill, \"harness_exited_by_itself\": $by_itself}"
}

# The zombies the stop left (see note_zombies) into zombies_out.
zombies_json() {
    local i sep=''
    zombies_out=''
    for ((i = 0; i < ${#zb_pid[@]}; i++)); do
        zombies_out+="$sep{\"pid\": ${zb_pid[i]}, \"ppid\": ${zb_ppid[i]}, \"start_time\": ${zb_start[i]}}"
        sep=', '
    done
}

# The receipt's text into receipt_body: valid JSON in the layout that
# --end-services reads (see read_services): the summary on the first line,
# then the stop, the zombies, the marker and the services, one a line.
receipt_json() {
    local rc_json=null err_json=null marker_json=null
    [[ -n $rc ]] && rc_json=$rc
    if [[ -n $err ]]; then
        json_quote "$err"
        err_json=$json_out
    fi
    if [[ -n $token ]]; then
        json_quote "$token"
        marker_json=$json_out
    fi
    services_json
    stop_json
    zombies_json
    receipt_body="{\"cleanup_confirmed\": $confirmed, \"return_code\": $rc_json, \"error\": $err_json, \"timed_out\": $timed_out, \"containment\": \"$containment\",
\"stop\": $stop_out,
\"zombies\": [$zombies_out],
\"marker\": $marker_json,
\"services\": [
$services_out]}
"
}

# What is at the receipt path, when the receipt may not replace it, into
# target_kind: a directory, FIFO, socket or device, or a link to one. None
# (''), a regular file, or a link that is dangling or names a regular file
# may be replaced: the rename replaces the link, never writes through it.
receipt_target_kind() {
    target_kind=''
    [[ -f $1 || ! -e $1 ]] && return 0
    if [[ -d $1 ]]; then
        target_kind='a directory'
    elif [[ -p $1 ]]; then
        target_kind='a FIFO'
    elif [[ -S $1 ]]; then
        target_kind='a socket'
    elif [[ -b $1 || -c $1 ]]; then
        target_kind='a device'
    else
        target_kind='not a regular file'
    fi
    [[ -L $1 ]] && target_kind="a link to $target_kind"
    return 0
}

# The temporary receipt's name, in the receipt's own directory and not to
# be guessed (a kernel UUID, $RANDOM twice, this PID, the clock), so that
# nobody can plant a link, FIFO or device there in advance. Set once per
# process, before the stop helper starts: the helper renames this name
# (or one of its three fallbacks, NAME.1 to NAME.3).
make_receipt_tmp() {
    local dir=. uuid='' up=''
    # /r.json: dir is empty, and the name below starts at the root.
    case $receipt in */*) dir=${receipt%/*} ;; esac
    read -r uuid 2>/dev/null </proc/sys/kernel/random/uuid
    read -r up _ 2>/dev/null </proc/uptime
    uuid=${uuid//[!0-9a-f]/}
    up=${up//[!0-9]/}
    receipt_tmp="$dir/.receipt.tmp.${self_pid:-$$}.$RANDOM$RANDOM.$up.${uuid:0:32}"
}

# Write the receipt atomically: a temporary file beside it, then a rename
# by the stop helper (already running: no fork needed), else by mv, else,
# when no rename works, in place (still one write). Returns 2 when the
# receipt path is something the receipt may not replace (left as it is),
# 1 when it could not be written. A failed write leaves nothing behind: a
# temporary file that could not be written (a full disk) ends the attempt
# (in place would fail too, and empty an older receipt), and it, or a
# receipt emptied by a failed write in place, is removed (receipt_remove).
write_receipt() {
    [[ -n $receipt ]] || return 0
    receipt_json
    receipt_target_kind "$receipt"
    if [[ -n $target_kind ]]; then
        say "the receipt path ${receipt:0:200} is $target_kind: not replaced"
        return 2
    fi
    tmp_name=''
    if [[ -n $helper_pid || -n $mv_bin ]]; then
        if receipt_tmp_file "$receipt_body"; then
            if [[ -n $helper_pid ]]; then
                helper_final go "$tmp_index" && return 0
            else
                run_tool "$mv_bin" -f -- "$tmp_name" "$receipt" 2>/dev/null && return 0
            fi
        elif [[ -n $tmp_name ]]; then
            say "cannot write the receipt ${receipt:0:200}: writing its temporary file failed (is the disk full?)"
            receipt_remove "$tmp_index"
            return 1
        fi
    fi
    receipt_in_place "$receipt_body" || return 1
    [[ -z $tmp_name ]] || receipt_remove "$tmp_index"
    return 0
}

# Write $2 into file $1 through fd 59: made_file says whether the open
# worked (then a failed write left the file empty or cut short).
write_through_fd() {
    made_file=''
    { exec 59>"$1"; } 2>/dev/null || return 1
    made_file=1
    { printf '%s' "$2" >&59; } 2>/dev/null && exec 59>&- && return 0
    exec 59>&-
    return 1
}

# The body into a new temporary file, tmp_name (empty when none was made):
# the first of the four names that does not exist yet. noclobber makes bash
# create it with O_EXCL, which fails on any link; a name that exists is
# skipped, not opened (bash would write into a FIFO or device it finds
# there). A file made but not written ends the search (1, tmp_name set).
receipt_tmp_file() {
    local i name ok
    for i in 0 1 2 3; do
        tmp_index=$i
        name=$receipt_tmp
        ((i == 0)) || name+=".$i"
        [[ -e $name || -L $name ]] && continue
        ok=1
        set -o noclobber
        write_through_fd "$name" "$1" && ok=0
        set +o noclobber
        [[ -n $made_file ]] || continue
        tmp_name=$name
        ((ok == 0)) && [[ -f $name && ! -L $name ]] && return 0
        return 1
    done
    return 1
}

# Give the stop helper its last command (go, or remove: see helper_command)
# with its one-byte argument $2, and wait for its status: 0 when it did it.
helper_final() {
    local pid=$helper_pid sent=0
    tell_helper "$1" "$2" || sent=1
    helper_pid=''
    ((sent == 0)) || return 1
    wait_rc=''
    while [[ -z $wait_rc ]]; do
        wait_job "$pid" "$helper_start"
    done
    [[ $wait_rc == 0 ]]
}

# Remove what a failed write left: temporary name $1 (0 to 3) or, for "p",
# the receipt. By the stop helper when it still runs (it becomes rm: no
# fork), else by rm; without rm on PATH it stays, and the supervisor says so.
receipt_remove() {
    local name=$receipt
    [[ $1 == p ]] || {
        name=$receipt_tmp
        (($1 == 0)) || name+=".$1"
    }
    if [[ -n $rm_bin ]]; then
        [[ -n $helper_pid ]] && helper_final remove "$1" && return 0
        run_tool "$rm_bin" -f -- "$name" 2>/dev/null && return 0
    fi
    say "cannot remove ${name:0:200}"
    return 1
}

# The last resort: the receipt written where it belongs, in one write, but
# never through a link. A write that failed once the file was open (it is
# empty or cut short now) removes it.
receipt_in_place() {
    receipt_target_kind "$receipt"
    if [[ -z $target_kind && ! -L $receipt ]] && write_through_fd "$receipt" "$1"; then
        return 0
    fi
    say "cannot write the receipt ${receipt:0:200}"
    [[ -n $made_file ]] && receipt_remove p
    return 1
}

# Leave an error receipt (when the receipt path is known) and exit.
fail() {
    local status=$1
    err=$2
    say "$err"
    write_receipt
    end_helper
    remove_cgroup
    end_substitutions
    exit "$status"
}

