# ---------------------------------------------------------------- services

# --end-services RECEIPT: end exactly the services a receipt lists, each
# only while its PID still belongs to the process that started at the
# recorded tick (a recycled PID is somebody else: left alone). TERM and
# CONT, then KILL after the grace period, then a bounded wait. Exit 0 when
# none is left, 125 when one outlived the KILL, 2 when the receipt cannot
# be read or lists no services key.

# The services the receipt lists into sp (PIDs) and ss (start times), or
# exit 2.
read_services() {
    local text='' rest re n=0
    sp=() ss=()
    if [[ -d $services_file || ! -r $services_file ]]; then
        say "cannot read the receipt ${services_file:0:200}"
        exit 2
    fi
    IFS= read -r -d '' text 2>/dev/null <"$services_file"
    rest=${text#*'"services": ['}
    if [[ $rest == "$text" ]]; then
        say "no services list in ${services_file:0:200}"
        exit 2
    fi
    # A JSON string escapes its quotes: '{"pid": ' cannot occur inside one.
    re='\{"pid": ([0-9]{1,12}), "start_time": ([0-9]{1,20}),'
    while [[ $rest =~ $re ]]; do
        sp[n]=$((10#${BASH_REMATCH[1]})) ss[n]=${BASH_REMATCH[2]}
        n=$((n + 1))
        rest=${rest#*"${BASH_REMATCH[0]}"}
    done
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
