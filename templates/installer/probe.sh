# prefix_probe: refuse, before the lock and before anything big is fetched,
# a prefix where the install could never work: one this user cannot write
# (2: a read-only mount, or another owner's directory) and one on a file
# system mounted noexec (8; Docker's --tmpfs is noexec by default). Without
# this, a noexec prefix fails only at the entry check, after every download,
# with a message that hides the cause (EACCES).
# The probe is a file of one line with no #! line: an exec-able mount makes
# execve fail with ENOEXEC, and bash then runs the file itself (status 0,
# no interpreter of the image needed); a noexec mount makes execve fail with
# EACCES, which bash reports as 126 even for root.
# The file lives in a directory of its own that mkdir makes: mkdir fails
# on any name already there (a link planted in a shared prefix included),
# so the write, the chmod and the run never go through someone else's link.
prefix_probe() {
    local rc=0
    probe=$prefix/.$name-$version.probe.$$
    # Not made: nothing of ours to remove (the EXIT trap removes it once made).
    mkdir -m 0700 "$probe" 9>&- 2>/dev/null || probe=
    if [ -z "$probe" ] || ! (umask 022 && printf 'exit 0\n' > "$probe/p") 2>/dev/null; then
        die 2 "$prefix is not writable (a read-only mount, or a directory this user may not write): the install needs a writable prefix; an install already complete there is reused without writing"
    fi
    chmod 0755 "$probe/p" 9>&- 2>/dev/null
    ("$probe/p") > /dev/null 2>&1 9>&- || rc=$?
    rm -rf "$probe" 9>&-
    probe=
    if [ "$rc" -eq 126 ]; then
        # A prefix this run made (its last directory) goes again: a refused
        # install leaves nothing behind.
        [ "$prefix_made" -eq 0 ] || rmdir -- "$prefix" 2>/dev/null
        die 8 "$prefix is on a file system mounted noexec$(prefix_noexec_mount): programs installed there cannot run; give the prefix an exec-able mount"
    fi
}

# prefix_noexec_mount: " (on MOUNT POINT)" when /proc/self/mountinfo says
# the mount holding the prefix (the last of the longest mount points that
# are the prefix or a parent of it) is noexec, else nothing. Read with the
# builtin, no fork; a mount point with a space is named as mountinfo writes
# it (\040).
prefix_noexec_mount() {
    local id parent dev root point opts rest top='' noexec=''
    [ -r /proc/self/mountinfo ] || return 0
    while read -r id parent dev root point opts rest; do
        case $prefix/ in
            "${point%/}"/*) ;;
            *) continue ;;
        esac
        [ "${#point}" -ge "${#top}" ] || continue
        top=$point
        case ,$opts, in
            *,noexec,*) noexec=1 ;;
            *) noexec='' ;;
        esac
    done < /proc/self/mountinfo
    [ -z "$noexec" ] || printf ' (on %s)' "$top"
}
