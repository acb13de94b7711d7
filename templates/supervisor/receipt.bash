# ---------------------------------------------------------------- receipt

# Quote $1 as a JSON string into json_out, byte by byte, without forks.
json_quote() {
    local LC_ALL=C
    local s=$1 out='' c i code hex
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

# Write the receipt atomically: a temporary file beside it, then a rename.
write_receipt() {
    local rc_json=null err_json=null tmp body
    [[ -n $receipt ]] || return 0
    [[ -n $rc ]] && rc_json=$rc
    if [[ -n $err ]]; then
        json_quote "$err"
        err_json=$json_out
    fi
    body="{\"cleanup_confirmed\": $confirmed, \"return_code\": $rc_json, \"error\": $err_json, \"timed_out\": $timed_out}"
    tmp="$receipt.tmp.$$.$RANDOM"
    # noclobber: the temporary name is created fresh, never followed.
    set -o noclobber
    if ! { printf '%s\n' "$body" >"$tmp"; } 2>/dev/null; then
        set +o noclobber
        say "cannot write the receipt ${receipt:0:200}"
        return 1
    fi
    set +o noclobber
    if ! mv -f -- "$tmp" "$receipt"; then
        rm -f -- "$tmp"
        say "cannot move the receipt into place at ${receipt:0:200}"
        return 1
    fi
    return 0
}

# Leave an error receipt (when the receipt path is known) and exit.
fail() {
    local status=$1
    err=$2
    say "$err"
    write_receipt
    exit "$status"
}

