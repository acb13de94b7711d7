# ---------------------------------------------------------------- services

# --end-services RECEIPT: end exactly the services a receipt of this
# supervisor lists. TERM and CONT, then KILL after the grace period, then a
# bounded wait. Exit 0 when none is left, 125 when one outlived the KILL, 2
# when the receipt is refused (nothing is signalled then).
#
# What proves that a listed process is one this supervisor's run left:
# - the receipt has the exact layout write_receipt gives it, whole: any
#   other text, a truncated receipt included, is refused;
# - the process at the PID still has the recorded start time (otherwise it
#   is gone or somebody else, and is left alone);
# - its environment holds exactly the run's marker entry (the receipt's
#   "marker": NEMO_GYM_SUPERVISOR=TOKEN), which only the harness and what
#   it started got;
# - it is not PID 1, not this shell or one of its ancestors, and not in
#   this shell's process group or session (a caller that runs inside the
#   harness carries the marker too).
# A receipt that lists PID 1, or a live process (with the recorded start
# time) that fails either of the last two, is refused as a whole before any
# signal.

# --end-services RECEIPT [--grace S]: end a finished run's services.
end_services_main() {
    parse_end_args "$@"
    check_proc
    read_services
    sup_pid=$self_pid
    sup_start=$self_start
    open_nap_pipe
    start_helper
    end_substitutions
    tell_helper tick
    check_services
    end_services
    end_helper
    exit "$end_status"
}

# --end-services RECEIPT [--grace S]: sets services_file and grace_cs.
parse_end_args() {
    local seen_grace=''
    services_file='' grace_cs=''
    while (($# > 0)); do
        case $1 in
            --end-services)
                [[ -z $services_file ]] || usage_error "--end-services given twice"
                if (($# < 2)) || [[ -z $2 ]]; then usage_error "--end-services needs a receipt file"; fi
                services_file=$2
                shift 2
                ;;
            --grace)
                [[ -z $seen_grace ]] || usage_error "--grace given twice"
                seen_grace=1
                (($# >= 2)) || usage_error "--grace needs a value"
                parse_seconds "$2" || usage_error "--grace '${2:0:200}' is not seconds like 5 or 0.5"
                grace_cs=$seconds_cs
                shift 2
                ;;
            *) usage_error "unexpected argument '${1:0:200}' with --end-services" ;;
        esac
    done
    [[ -n $grace_cs ]] || grace_cs=$default_grace_cs
}

# Refuse the receipt: one line on stderr, exit 2.
refuse_receipt() {
    say "--end-services: refusing ${services_file:0:200}: $1 (nothing signalled)"
    end_helper
    exit 2
}

# The regular expressions of the receipt's lines (see receipt_json), C
# locale: fixed-point seconds, counts, and strings as "(.*)", each checked
# after by json_string_ok (a regular expression that checks a string
# itself takes glibc milliseconds a line).
receipt_patterns() {
    local str='"(.*)"' n on c z
    n='[0-9]{1,17}\.[0-9]{2}'
    on="(null|$n)"
    c='(0|[1-9][0-9]{0,18})'
    z='\{"pid": [1-9][0-9]{0,9}, "ppid": [0-9]{1,10}, "start_time": [0-9]{1,20}\}'
    re_head='^\{"cleanup_confirmed": (true|false), "return_code": (null|-?[0-9]{1,10}), "error": (null|'"$str"'), "timed_out": (true|false), "containment": "(proc|cgroup)",$'
    re_stop='^"stop": (null|\{"reason": "(exit|deadline|signal|lost)", "signal": (null|"(TERM|INT|HUP)"), "began_at": '"$n"', "term_at": '"$on"', "kill_at": '"$on"', "ended_at": '"$n"', "grace_s": '"$on"', "reached_term": '"$c"', "reached_kill": '"$c"', "harness_exited_by_itself": (true|false)\}),$'
    re_zombies='^"zombies": \[('"$z"'(, '"$z"')*)?\],$'
    # A marker's characters are 0x21-0x7e: only \" and \\ need escapes.
    re_marker='^"marker": (null|"((\\["\\]|[^"\\[:cntrl:][:space:]])+)"),$'
}

# Whether $1 is the inside of a JSON string: no control byte, and every
# quote and backslash part of an escape JSON has.
json_string_ok() {
    local s=$1 bs="\\" q='"' esc='[/bfnrt]' h='[0-9a-fA-F]' odd='["\\[:cntrl:]]'
    # The common case in one look, by a regular expression without groups
    # (glibc's automaton: some 5 times faster than the same as a pattern).
    [[ $s =~ $odd ]] || return 0
    case $s in *[[:cntrl:]]*) return 1 ;; esac
    # Pairs of backslashes first: escapes pair from the left.
    s=${s//"$bs$bs"/}
    s=${s//"$bs$q"/}
    [[ $s != *"$q"* ]] || return 1
    [[ $s == *"$bs"* ]] || return 0
    s=${s//"$bs"$esc/}
    s=${s//"$bs"u$h$h$h$h/}
    [[ $s != *"$bs"* ]]
}

# The services the receipt lists into sp (PIDs) and ss (start times), its
# marker entry into end_entry (empty when the receipt has none), or exit 2.
# Only a regular file is opened, so a FIFO cannot keep the read waiting.
# Read line by line (bash reads a regular file in blocks then: linear in
# its size), at most 16 MiB and 64 KiB a line.
read_services() {
    local LC_ALL=C total=0
    local re_head re_stop re_zombies re_marker
    sp=() ss=() end_entry=''
    if [[ ! -f $services_file ]]; then
        receipt_target_kind "$services_file"
        [[ -e $services_file ]] || target_kind='missing'
        refuse_receipt "${target_kind:-not a regular file}"
    fi
    [[ -r $services_file ]] || refuse_receipt "not readable"
    receipt_patterns
    {
        read_receipt_head
        read_service_lines
    } <"$services_file"
}

# One line of the receipt into line, counted against the bounds; fails at
# the end of the file (a last line without its newline is cut short).
receipt_line() {
    IFS= read -r line || return 1
    total=$((total + ${#line} + 1))
    ((total <= 16777216)) || refuse_receipt "larger than 16 MiB"
    ((${#line} <= 65536)) || refuse_receipt "a line longer than 64 KiB"
}

# The five lines before the services: the summary, stop, zombies, marker
# and the list's opening, each exactly as receipt_json writes it.
read_receipt_head() {
    local line raw bs="\\" q='"'
    receipt_line || refuse_receipt "truncated (empty)"
    if ! [[ $line =~ $re_head ]] || ! json_string_ok "${BASH_REMATCH[4]}"; then
        refuse_receipt "not a receipt of this supervisor (its first line)"
    fi
    receipt_line || refuse_receipt "truncated (no stop line)"
    [[ $line =~ $re_stop ]] || refuse_receipt "no stop line where this supervisor writes it"
    receipt_line || refuse_receipt "truncated (no zombies line)"
    [[ $line =~ $re_zombies ]] || refuse_receipt "no zombies line where this supervisor writes it"
    receipt_line || refuse_receipt "truncated (no marker line)"
    [[ $line =~ $re_marker ]] || refuse_receipt "no marker line where this supervisor writes it"
    raw=${BASH_REMATCH[2]}
    if [[ -n $raw ]]; then
        # \\ first (escapes pair from the left), through a space, which the
        # raw text cannot hold.
        raw=${raw//"$bs$bs"/ }
        raw=${raw//"$bs$q"/$q}
        raw=${raw// /$bs}
        valid_marker "$raw" || refuse_receipt "its marker is not one this supervisor takes"
        end_entry="$marker_var=$raw"
    fi
    receipt_line || refuse_receipt "truncated (no services list)"
    [[ $line == '"services": [' ]] || refuse_receipt "no services list where this supervisor writes it"
}

# The service lines, {"pid": N, "start_time": N, "argv0": "S"} and a comma
# after each but the last, then "]}" and the end of the file. Few steps a
# line, each cheap: bash costs microseconds a step, and a megabyte holds
# 4,000 lines. read splits the line into its words, which one [[ ]] checks
# (a regular expression is compiled anew each time: one with groups or
# counted repeats takes glibc up to 0.2 ms a line); argv0's text is looked
# at once.
read_service_lines() {
    local k1 pid k2 start k3 rest n=0 comma='' inner line p st
    while IFS=' ' read -r k1 pid k2 start k3 rest; do
        ((total += ${#rest} + 64, total <= 16777216 && ${#rest} <= 65536)) ||
            refuse_receipt "larger than 16 MiB, or a line longer than 64 KiB"
        if [[ $k1 == ']}' && -z $pid$k2$start$k3$rest ]]; then
            [[ -z $comma ]] || refuse_receipt "a comma after its last service"
            # Nothing may follow, not even an empty line.
            if IFS= read -r line || [[ -n $line ]]; then
                refuse_receipt "text after its end"
            fi
            return 0
        fi
        ((n == 0)) || [[ -n $comma ]] || refuse_receipt "services without a comma between them"
        comma=''
        case $rest in
            '"'*'"},') comma=1 inner=${rest:1:${#rest}-4} ;;
            '"'*'"}') inner=${rest:1:${#rest}-3} ;;
            *) inner='"' ;;
        esac
        p=${pid%,} st=${start%,}
        if [[ $k1 != '{"pid":' || $k2 != '"start_time":' || $k3 != '"argv0":' ||
            $pid != "$p," || $start != "$st," || -z $p || -z $st ||
            $p$st == *[!0-9]* || $p == 0* || $st == 0?* ]] ||
            ((${#p} > 10 || ${#st} > 20)) || ! json_string_ok "$inner"; then
            refuse_receipt "service line $((n + 1)) is not as this supervisor writes it"
        fi
        sp[n]=$((10#$p)) ss[n]=$st
        n=$((n + 1))
    done
    refuse_receipt "truncated (it ends before its services list is closed)"
}

# This shell (the main shell: $$ is its own PID), its ancestors (up to
# PID 1), its process group and session into caller_pids, caller_pgid and
# caller_sid.
caller_identity() {
    local pid=$$ i f
    caller_pids=()
    caller_pgid='' caller_sid=''
    if read_stat_fields "$$"; then
        caller_pgid=${f[4]} caller_sid=${f[5]}
    fi
    [[ -n $caller_pgid ]] || refuse_receipt "this shell's own /proc/$$/stat is not readable"
    for ((i = 0; i < 100000 && pid > 0; i++)); do
        caller_pids[pid]=1
        read_stat_fields "$pid" || break
        pid=${f[3]}
    done
}

# Whether PID $1 (started at $2) has exactly end_entry in its environment.
# A read in the middle of an exec can come back empty or cut short (see
# is_marked): such a read is made again, for up to 1 s; only a whole read
# of an environment that stayed in place decides "no".
environ_holds_marker() {
    local kv any before end
    [[ -n $end_entry ]] || return 1
    read_now
    end=$((now_cs + 100))
    while :; do
        env_fingerprint "$1"
        before=$env_at any=''
        while IFS= read -r -d '' kv; do
            any=1
            [[ $kv == "$end_entry" ]] && return 0
        done 2>/dev/null <"/proc/$1/environ"
        env_fingerprint "$1"
        [[ -n $env_at ]] || return 1
        if [[ -n $any ]]; then
            [[ $env_at == "$before" ]] && return 1
        elif environ_settled "$1" "$2" "$before"; then
            return 1
        fi
        read_now
        ((now_cs < end)) || return 1
        nap 0.01
    done
}

# Check every listed service against the proof of ownership (see above),
# before anything is signalled; exit 2 on the first that fails. Only the
# live ones stay in sp and ss: a PID that has lost its recorded start time
# never gets it back.
check_services() {
    local i pid f
    local -a live_p live_s
    caller_identity
    for ((i = 0; i < ${#sp[@]}; i++)); do
        pid=${sp[i]}
        ((pid != 1)) || refuse_receipt "it lists PID 1"
        # Gone, or somebody else now (another start time: even this shell,
        # on a recycled PID): never signalled, nothing to prove.
        read_stat_fields "$pid" || continue
        [[ ${f[21]} == "${ss[i]}" && ${f[2]} != Z && ${f[2]} != X ]] || continue
        [[ -z ${caller_pids[pid]-} ]] || refuse_receipt "it lists PID $pid, this shell or one of its ancestors"
        [[ ${f[4]} != "$caller_pgid" && ${f[5]} != "$caller_sid" ]] ||
            refuse_receipt "it lists PID $pid, in this shell's process group or session"
        environ_holds_marker "$pid" "${ss[i]}" ||
            refuse_receipt "PID $pid does not carry the run's marker in its environment"
        live_p+=("$pid") live_s+=("${ss[i]}")
    done
    sp=(${live_p[@]+"${live_p[@]}"})
    ss=(${live_s[@]+"${live_s[@]}"})
}

# End the services read: end_status 0 when none is left, else 125.
end_services() {
    local end
    end_status=0
    service_signal TERM
    service_signal CONT
    read_now
    end=$((now_cs + grace_cs))
    while service_alive && ((now_cs < end)); do
        nap 0.01
        read_now
    done
    service_signal KILL
    service_signal CONT
    end=$((now_cs + kill_wait_cs))
    while service_alive && ((now_cs < end)); do
        nap 0.01
        read_now
    done
    if service_alive; then
        say "services still alive after KILL: ${alive[*]}"
        end_status=125
    fi
}

# Whether a listed service is still its own process; the live ones in alive.
service_alive() {
    local i
    alive=()
    for ((i = 0; i < ${#sp[@]}; i++)); do
        job_running "${sp[i]}" "${ss[i]}" && alive+=("${sp[i]}")
    done
    ((${#alive[@]} > 0))
}

# Signal $1 to every listed service still running under its identity.
service_signal() {
    local pid
    service_alive || return 0
    for pid in "${alive[@]}"; do
        kill -s "$1" "$pid" 2>/dev/null
    done
    return 0
}
