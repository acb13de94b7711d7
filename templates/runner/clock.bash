# clock.bash: the wall clock of the event stamps for bash 3.2 to 4.4, which
# have no $EPOCHREALTIME, with no fork after the start: clock_wall_start
# takes one `date +%s.%N` and, just before it, the time since boot
# (clock_uptime, lib/uptime.bash); clock_wall_now adds the time since boot
# that has passed since then. Where either is missing (no /proc, or a date
# without %N: busybox's prints "%N", BSD's "N"), clock_kind is "whole" and
# clock_wall_now gives whole seconds: that date's seconds plus $SECONDS. A
# step of the system clock during the run is not followed (as $SECONDS does
# not follow it); the kernel's slewing reaches both clocks alike.

# clock_wall_start: the start of the clock, or 1 when `date +%s` gives no
# seconds. "fine": clock_base is the wall clock in microseconds when
# clock_at (then clock_up) was the time since boot in centiseconds. The
# uptime is read before date runs, so a stamp is never earlier than the
# truth by more than the uptime's 0.01 s (it is later by date's start-up,
# about a millisecond). "whole": clock_base is the wall clock in seconds
# when clock_at was $SECONDS.
clock_wall_start() {
    local cs_up='' cs_wall cs_secs cs_frac
    clock_at=$SECONDS
    clock_uptime && cs_up=$clock_up
    cs_wall=$(date +%s.%N 2>/dev/null)
    cs_secs=${cs_wall%%.*}
    cs_frac=${cs_wall#*.}
    if [[ -n $cs_up && $cs_wall == "$cs_secs.$cs_frac" && ${#cs_frac} == 9 ]] &&
        clock_digits "$cs_secs" && clock_digits "$cs_frac"; then
        clock_kind=fine
        clock_base=$((10#$cs_secs * 1000000 + 10#${cs_frac:0:6}))
        clock_at=$cs_up
        return 0
    fi
    clock_kind=whole
    # A date that refused the format may still know +%s.
    clock_digits "$cs_secs" || cs_secs=$(date +%s 2>/dev/null)
    clock_digits "$cs_secs" || return 1
    clock_base=$cs_secs
}

# clock_wall_now: the time now in clock_stamp, SECONDS.FFFFFF (the shape of
# $EPOCHREALTIME) or whole seconds (clock_wall_start). No fork: /proc/uptime is
# read by the builtin `read`; should it fail now, the last reading stands.
clock_wall_now() {
    local cn_us
    if [[ $clock_kind != fine ]]; then
        clock_stamp=$((clock_base + SECONDS - clock_at))
        return 0
    fi
    clock_uptime || :
    cn_us=$((clock_base + (clock_up - clock_at) * 10000))
    printf -v clock_stamp '%d.%06d' "$((cn_us / 1000000))" "$((cn_us % 1000000))"
}
