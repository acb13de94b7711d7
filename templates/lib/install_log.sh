# Messages of an installer. Everything but the final entry path goes to
# stderr, so the last line of stdout is always the path a caller reads.
# die CODE MESSAGE: the one way out on failure; the EXIT trap cleans up.
# With --quiet (quiet=1) only errors are printed.

quiet=0

say() {
    [ "$quiet" -eq 1 ] || printf '%s: %s\n' "$prog" "$*" >&2
}

die() {
    local code=$1
    shift
    printf '%s: error: %s\n' "$prog" "$*" >&2
    exit "$code"
}

# Progress: one line per phase per artifact, with the phase's elapsed time,
# read without forking: bash 5.0+ has $EPOCHREALTIME (microseconds; its
# decimal point follows the locale, so only its digits are kept); older
# bashes read the time since boot from /proc/uptime (clock_uptime in
# lib/uptime.bash, hundredths of a second, by the builtin `read`), and where
# that cannot be read they have only $SECONDS, whole seconds (`date` has no
# portable sub-second format: busybox and macOS lack %N, and a fork per line
# would buy nothing). The unit says which precision a line has: clock_us is
# 1 for $EPOCHREALTIME, 2 for /proc/uptime (both count in microseconds), 0
# for $SECONDS.
if [ "${BASH_VERSINFO[0]}" -ge 5 ]; then
    clock_us=1
elif clock_uptime; then
    clock_us=2
else
    clock_us=0
fi

# clock_now: sets clock to now (microseconds, or seconds when clock_us is 0).
clock_now() {
    case $clock_us in
        1)
            # shforge-allow: bash32-epoch only where BASH_VERSINFO says 5.0 or later
            clock=${EPOCHREALTIME//[!0-9]/}
            ;;
        2)
            # Should a reading fail, the last one stands (clock_uptime).
            clock_uptime || :
            clock=$((clock_up * 10000))
            ;;
        *) clock=$SECONDS ;;
    esac
}

# phase_start: the phase being reported starts now.
phase_start() {
    clock_now
    phase_t0=$clock
}

# elapsed_since T0: sets REPLY to the time since T0, "1.234 s" or "3 s".
elapsed_since() {
    local d
    clock_now
    d=$((clock - $1))
    if [ "$clock_us" -ne 0 ]; then
        d=$((d / 1000))
        printf -v REPLY '%d.%03d s' "$((d / 1000))" "$((d % 1000))"
    else
        REPLY="$d s"
    fi
}

# progress PHASE WHAT DETAIL: the line of a finished phase, with the time
# since phase_start; then the next phase starts.
progress() {
    [ "$quiet" -eq 1 ] && return 0
    elapsed_since "$phase_t0"
    printf '%s: %s %s: %s, %s\n' "$prog" "$1" "$2" "$3" "$REPLY" >&2
    phase_start
}
