# One installer at a time per install dir.
#
# With flock: descriptor 9 on DIR/.NAME-VERSION.lock; the kernel drops the
# lock when its holder dies (every child gets 9>&- so none inherits it).
#
# Without flock: a ticket queue of owner symlinks in DIR/.NAME-VERSION.lockq,
# Lamport's bakery algorithm on a file system. Each link's target is
# "PID:STARTTIME" (field 22 of /proc/PID/stat), written atomically by ln -s.
#   c.PID.START  "choosing": present while its owner picks a ticket number;
#   t.N          a ticket; the lowest live ticket owns the lock.
# A waiter holds ticket N, waits until nobody is choosing, then until no live
# ticket below N is left. A ticket whose process is gone, or whose PID now
# belongs to a process with another start time (a recycled PID), is stale and
# removed. No ticket below N can be created while ticket N exists (numbers
# are picked above every existing one), so removing a stale one is safe.

lock_kind=
lock_ticket=
lock_queue=

{% include "lib/proc_stat.bash" %}

# proc_start_time PID: sets REPLY to the start time of PID (clock ticks after
# boot), "-" when /proc is not there, empty when the process is gone.
proc_start_time() {
    local re='^[0-9]+$'
    REPLY=
    if [ ! -d /proc/self ]; then
        REPLY=-
        return 0
    fi
    proc_stat_whole "$1" || return 0
    if [ "${#proc_f[@]}" -ge 22 ] && [[ ${proc_f[21]} =~ $re ]]; then
        REPLY=${proc_f[21]}
    fi
}

# owner_alive TARGET: succeeds when the "PID:START" process still runs.
owner_alive() {
    local pid=${1%%:*} start=${1#*:} re='^[0-9]+$'
    [[ $pid =~ $re ]] || return 1
    if [ "$start" = - ]; then
        kill -0 "$pid" 2>/dev/null
        return
    fi
    proc_start_time "$pid"
    [ -n "$REPLY" ] && [ "$REPLY" = "$start" ]
}

# lock_deadline SECONDS: sets REPLY to the $SECONDS value to give up at.
# $SECONDS counts whole wall-clock seconds, so it can tick one second after
# only a moment: one more second makes the wait at least the timeout asked
# for (and at most one second longer).
lock_deadline() {
    # 10#: digits with a leading zero are decimal here (08 is 8 s, not an
    # octal error); the caller allows at most 9 of them.
    local whole=$((10#${1%%.*}))
    case $1 in
        *.*[1-9]*) whole=$((whole + 1)) ;;
    esac
    REPLY=$((SECONDS + whole + 1))
}

# lock_nap: a short sleep between polls (1 s where sleep takes no fraction).
lock_nap() {
    sleep 0.1 2>/dev/null 9>&- || sleep 1 9>&-
}

# lock_open FILE: open the lock file as descriptor 9 without ever following
# a symlink planted in its place. It is created with noclobber (O_EXCL, which
# fails on any link), refused when it is a symlink or not a regular file,
# and opened read-only (flock needs no write access): even a link swapped in
# between the check and the open could make it create or change nothing.
lock_open() {
    if [ ! -e "$1" ] && [ ! -L "$1" ]; then
        set -C
        : > "$1" 2>/dev/null
        set +C
    fi
    if [ -L "$1" ] || [ ! -f "$1" ]; then
        die 3 "the lock file $1 is a symlink or not a regular file: refusing to open it"
    fi
    exec 9< "$1" || die 3 "cannot open the lock file $1"
}

# lock_acquire PATH TIMEOUT: take the lock (return 0) or exit 3. While
# waiting it asks `lock_satisfied` (defined by the script) each round whether
# the work was done meanwhile by the holder; if so it returns 2 without the lock.
lock_acquire() {
    local deadline
    lock_deadline "$2"
    deadline=$REPLY
    if command -v flock >/dev/null 2>&1; then
        lock_kind=flock
        lock_open "$1.lock"
        # -n in a loop works with util-linux and busybox flock alike.
        until flock -n 9; do
            if lock_satisfied; then
                exec 9>&-
                lock_kind=
                return 2
            fi
            if [ "$SECONDS" -ge "$deadline" ]; then
                die 3 "timed out after $2 s waiting for the lock $1.lock"
            fi
            lock_nap
        done
        return 0
    fi
    lock_kind=queue
    lock_queue=$1.lockq
    queue_acquire "$deadline" "$2"
}

# queue_max_ticket: sets REPLY to the highest ticket number in the queue (0 if none).
queue_max_ticket() {
    local f n re='^[0-9]+$'
    REPLY=0
    for f in "$lock_queue"/t.*; do
        n=${f##*/t.}
        [[ $n =~ $re ]] || continue
        if [ "$n" -gt "$REPLY" ]; then
            REPLY=$n
        fi
    done
}

# queue_blocked MYNUMBER: succeeds when a live chooser or a live lower ticket
# exists; removes the stale ones it meets.
queue_blocked() {
    local f n target re='^[0-9]+$'
    for f in "$lock_queue"/c.* "$lock_queue"/t.*; do
        [ -L "$f" ] || continue
        case ${f##*/} in
            t.*)
                n=${f##*/t.}
                [[ $n =~ $re ]] || continue
                [ "$n" -lt "$1" ] || continue
                ;;
        esac
        target=$(exec 9>&-; exec readlink "$f") || continue
        if owner_alive "$target"; then
            return 0
        fi
        say "removing the stale lock ticket ${f##*/} of process ${target%%:*}"
        rm -f "$f"
    done
    return 1
}

# queue_acquire DEADLINE TIMEOUT: take a ticket and wait for its turn, or exit 3.
queue_acquire() {
    local me chooser n
    mkdir "$lock_queue" 2>/dev/null 9>&-
    # Never a planted link to a directory elsewhere: tickets go only here.
    if [ -L "$lock_queue" ] || [ ! -d "$lock_queue" ]; then
        die 3 "cannot create the lock queue $lock_queue (or it is a symlink)"
    fi
    proc_start_time "$$"
    me=$$:$REPLY
    chooser=$lock_queue/c.$$.$REPLY
    ln -s "$me" "$chooser" 9>&- || die 3 "cannot write to the lock queue $lock_queue"
    while :; do
        queue_max_ticket
        n=$((REPLY + 1))
        if ln -s "$me" "$lock_queue/t.$n" 2>/dev/null 9>&-; then
            break
        fi
        if [ "$SECONDS" -ge "$1" ]; then
            rm -f "$chooser"
            die 3 "timed out after $2 s taking a ticket in $lock_queue"
        fi
    done
    lock_ticket=$lock_queue/t.$n
    rm -f "$chooser"
    while queue_blocked "$n"; do
        if lock_satisfied; then
            rm -f "$lock_ticket"
            lock_ticket=
            lock_kind=
            return 2
        fi
        if [ "$SECONDS" -ge "$1" ]; then
            rm -f "$lock_ticket"
            lock_ticket=
            die 3 "timed out after $2 s waiting for the lock queue $lock_queue"
        fi
        lock_nap
    done
}

# lock_release: give the lock up (also called from the EXIT trap).
lock_release() {
    case $lock_kind in
        flock) exec 9>&- ;;
        queue)
            if [ -n "$lock_ticket" ]; then
                rm -f "$lock_ticket"
                lock_ticket=
            fi
            ;;
    esac
    lock_kind=
}
