# proc_stat_whole PID: the fields of /proc/PID/stat into the array proc_f,
# as in proc(5) minus one: proc_f[0] the PID, proc_f[1] a placeholder for the
# name, proc_f[2] the state, proc_f[21] the start time (clock ticks after
# boot). The file is read whole: the name (field 2) may hold ')', blanks and
# newlines, and ends at the LAST ')'. Fails when the process is gone, the
# text has no ')', or field 1 is not PID (a name cannot forge another PID's
# record). Nothing is evaluated; the caller checks the fields it uses.
proc_stat_whole() {
    local whole='' rest
    proc_f=()
    IFS= read -r -d '' whole 2>/dev/null <"/proc/$1/stat"
    rest=${whole##*)}
    [[ ${#rest} -lt ${#whole} ]] || return 1
    # shellcheck disable=SC2206 # after the last ')' come only digits, letters and '-': nothing to glob
    proc_f=(${whole%% *} name $rest)
    [[ ${proc_f[0]} == "$1" ]]
}
