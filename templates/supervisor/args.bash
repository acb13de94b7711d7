# ---------------------------------------------------------------- arguments

# Fixed-point seconds to centiseconds in seconds_cs; extra digits are cut.
parse_seconds() {
    local s=$1 int frac re='^[0-9]+(\.[0-9]+)?$'
    [[ $s =~ $re ]] || return 1
    int=${s%%.*}
    frac=
    [[ $s == *.* ]] && frac=${s#*.}
    frac="${frac}00"
    frac=${frac:0:2}
    # Strip leading zeros so the value is never read as octal; bound the size.
    while [[ ${#int} -gt 1 && $int == 0* ]]; do int=${int#0}; done
    # Up to 16 digits: centiseconds and deadlines stay far below 2^63.
    [[ ${#int} -le 16 ]] || return 1
    seconds_cs=$((10#$int * 100 + 10#$frac))
}

# A marker is 1 to 256 printable ASCII characters without blanks (bytes
# 0x21-0x7e): base64 and URL-safe tokens fit. Counted and matched in C.
valid_marker() {
    local LC_ALL=C
    [[ ${#1} -ge 1 && ${#1} -le 256 && $1 != *[![:graph:]]* ]]
}

usage_error() {
    fail 2 "usage: $1 (usage: process_supervisor.sh --receipt FILE [--deadline S] [--grace S] [--marker TOKEN] [--cgroup DIR|none] [--max-procs N] -- COMMAND [ARG]...; process_supervisor.sh --end-services RECEIPT [--grace S])"
}

# Sets receipt, deadline_cs, grace_cs, token, cgroup_opt, max_procs and
# args_used (options + "--").
parse_args() {
    local a name value i n=$#
    receipt=
    # First find the receipt, so that any usage error can leave a receipt.
    for ((i = 1; i <= n; i++)); do
        a=${!i}
        case $a in
            --) break ;;
            --receipt=*) receipt=${a#*=} && break ;;
            --receipt)
                if ((i < n)); then
                    i=$((i + 1))
                    receipt=${!i}
                fi
                break
                ;;
        esac
    done
    # A directory would take the receipt inside it, a FIFO or device would
    # take (or block) the write: no receipt at all then, and the path is
    # left as it is.
    if [[ -n $receipt ]]; then
        receipt_target_kind "$receipt"
        if [[ -n $target_kind ]]; then
            value=$receipt
            receipt=''
            usage_error "--receipt '${value:0:200}' is $target_kind, not a regular file"
        fi
    fi
    deadline_cs='' grace_cs='' token='' cgroup_opt='' max_procs=''
    local seen_receipt='' seen_deadline='' seen_grace='' seen_marker='' seen_cgroup='' seen_max=''
    args_used=0
    while (($# > 0)); do
        a=$1
        case $a in
            --)
                args_used=$((args_used + 1))
                shift
                break
                ;;
            --receipt | --deadline | --grace | --marker | --cgroup | --max-procs)
                (($# >= 2)) || usage_error "$a needs a value"
                name=$a value=$2
                shift 2
                args_used=$((args_used + 2))
                ;;
            --receipt=* | --deadline=* | --grace=* | --marker=* | --cgroup=* | --max-procs=*)
                name=${a%%=*} value=${a#*=}
                shift
                args_used=$((args_used + 1))
                ;;
            *) usage_error "unexpected argument '${a:0:200}' (the command goes after --)" ;;
        esac
        case $name in
            --receipt)
                [[ -z $seen_receipt ]] || usage_error "--receipt given twice"
                seen_receipt=1
                [[ -n $value ]] || usage_error "--receipt needs a file name"
                ;;
            --deadline)
                [[ -z $seen_deadline ]] || usage_error "--deadline given twice"
                seen_deadline=1
                parse_seconds "$value" || usage_error "--deadline '${value:0:200}' is not seconds like 12 or 0.5"
                deadline_cs=$seconds_cs
                ;;
            --grace)
                [[ -z $seen_grace ]] || usage_error "--grace given twice"
                seen_grace=1
                parse_seconds "$value" || usage_error "--grace '${value:0:200}' is not seconds like 5 or 0.5"
                grace_cs=$seconds_cs
                ;;
            --marker)
                [[ -z $seen_marker ]] || usage_error "--marker given twice"
                seen_marker=1
                valid_marker "$value" ||
                    usage_error "--marker '${value:0:200}' must be 1 to 256 printable ASCII characters, no space"
                token=$value
                ;;
            --cgroup)
                [[ -z $seen_cgroup ]] || usage_error "--cgroup given twice"
                seen_cgroup=1
                [[ $value == none || $value == /* ]] ||
                    usage_error "--cgroup '${value:0:200}' must be an absolute directory or none"
                cgroup_opt=$value
                ;;
            --max-procs)
                [[ -z $seen_max ]] || usage_error "--max-procs given twice"
                seen_max=1
                [[ $value =~ ^[1-9][0-9]{0,8}$ ]] || usage_error "--max-procs '${value:0:200}' is not a count from 1 to 999999999"
                max_procs=$value
                ;;
        esac
    done
    [[ -n $seen_receipt ]] || usage_error "--receipt FILE is required"
    (($# > 0)) || usage_error "no COMMAND after --"
    [[ -n $1 ]] || usage_error "COMMAND is empty"
    [[ -n $grace_cs ]] || grace_cs=$default_grace_cs
    if [[ -n $max_procs && $cgroup_opt == none ]]; then
        usage_error "--max-procs needs a cgroup, and --cgroup none turns them off"
    fi
}
