# uptime.bash: the time since boot, with a fraction and no fork, for bash
# 3.2 to 4.4 (no $EPOCHREALTIME): clock_uptime reads /proc/uptime
# (hundredths of a second) with the builtin `read`. The installer's progress
# lines time their phases with it; the runner's event stamps add it to one
# `date +%s.%N` (runner/clock.bash).

# clock_digits WORD: WORD is 1 to 12 ASCII digits (no sign, no blank; short
# enough for bash's 64-bit arithmetic once scaled to microseconds).
clock_digits() {
    case $1 in
        '' | *[!0123456789]*) return 1 ;;
    esac
    ((${#1} <= 12))
}

# clock_uptime: the time since boot in centiseconds, in clock_up, from
# /proc/uptime ("SECONDS.CC IDLE"). 1 when the file is unreadable or its
# first word has another shape; clock_up is then left as it was.
clock_uptime() {
    local cu_line='' cu_int cu_frac
    read -r cu_line _ 2>/dev/null </proc/uptime || return 1
    cu_int=${cu_line%.*}
    cu_frac=${cu_line##*.}
    [[ $cu_line == "$cu_int.$cu_frac" && ${#cu_frac} == 2 ]] || return 1
    clock_digits "$cu_int" && clock_digits "$cu_frac" || return 1
    clock_up=$((10#$cu_int * 100 + 10#$cu_frac))
}
