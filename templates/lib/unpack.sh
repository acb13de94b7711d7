# Unpacking a verified artifact into the staging directory, whatever the
# archive holds. A pinned digest proves the bytes are the ones pinned, not
# that they are well-formed: the footprint (nothing outside the install dir
# and its lock file is created or changed) is guaranteed here, with any tar
# (GNU or busybox) and no Python.
#
# An archive is decompressed once, to a plain tar in the stage (in the
# background, beside the check of its digest, which must match before
# anything reads that tar; the next artifact is fetched, checked and
# unpacked meanwhile), listed twice from it (names, then the
# verbose listing for types and link targets) and
# judged before anything is extracted; it is then unpacked from that tar
# into a fresh directory beside the install root in the stage, walked with
# find, and only then moved into place by renames that never pass through a symlink.
# Refused (exit 6, nothing placed): absolute names, empty, `.` or `..` name
# components, a name given twice, a member under a symlink or under a file,
# device nodes, FIFOs and any other type but file, directory and link,
# names holding a newline, hard links to anything but an earlier file of the
# same archive, symlinks whose target is absolute or leaves the artifact's
# own tree (checked by name first, then physically after extraction), with
# a `subdir`, an archive without it as a real directory or a symlink that
# leaves it, and a destination or launcher path that is already taken or
# passes through a symlink. Stripped: setuid and setgid bits. Directories
# are made owner-writable, so that a failed stage can always be removed.
#
# The staging directory is private: made by this process with mkdir (which
# fails on anything there, a symlink included) under the lock, and written by
# nothing else, so a check on it holds when the next step uses it.

{% include "lib/judge.sh" %}

# unpack_what: the artifact being unpacked, for messages (set by the caller).
unpack_what=
unpack_members=
unpack_nl=$'\n'

# unpack_refuse REASON: the archive or its placement is refused.
unpack_refuse() {
    die 6 "refusing $unpack_what: $1"
}

# The background processes of this run (decompressions, a listing), by
# artifact: unpack_stop ends them before the stage is removed.
unpack_pid=()

# unpack_start I KIND FILE: make artifact I's work directory and decompress
# FILE there (WORK/tar) in the background, while the caller checks its
# digest (archive_judge, the first reader of WORK/tar, runs only after). Each is one process
# (a simple command started with &: bash execs it in the child), so its pid
# is all there is to stop.
unpack_start() {
    local work=$stage/unpack.$1
    unpack_tools "$2"
    mkdir "$work" "$work/tree" 9>&- || unpack_refuse "cannot create $work"
    case $2 in
        tar.gz) gzip -dc < "$3" > "$work/tar" 8<&- 9>&- & ;;
        tar.xz) xz -dc < "$3" > "$work/tar" 8<&- 9>&- & ;;
    esac
    unpack_pid[$1]=$!
}

# unpack_wait I: wait for artifact I's background process; its status.
unpack_wait() {
    local rc=0
    wait "${unpack_pid[$1]}" || rc=$?
    unpack_pid[$1]=
    return "$rc"
}

# unpack_stop: end the background processes still running (the EXIT trap's
# cleanup, before the stage they write in is removed). KILL, not TERM: a
# child not yet past its exec still runs this shell's traps, and a TERM
# there ran the whole cleanup a second time in the child (seen on bash 5.2
# and 5.3 as a stray `wait_for: No record of process` line after the error).
# Nothing of a decompression or a listing needs a graceful end.
# shellcheck disable=SC2317 # reached through the EXIT trap
unpack_stop() {
    local p
    for p in ${unpack_pid[@]+"${unpack_pid[@]}"}; do
        [ -n "$p" ] || continue
        kill -9 "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    unpack_pid=()
}

# archive_judge I WORKDIR: wait for artifact I's decompression to
# WORKDIR/tar, list it and refuse it (exit 6) unless the judge accepts every
# member; nothing extracted. Sets unpack_members to the number of members.
archive_judge() {
    local verdict rc=0
    unpack_wait "$1" || unpack_refuse "it cannot be decompressed"
    # One decompression for all: GNU tar lists a plain tar by seeking. The
    # two listings run side by side.
    tar -tf "$2/tar" > "$2/names" 2> "$2/warnings" 9>&- &
    unpack_pid[$1]=$!
    tar -tvf "$2/tar" > "$2/verbose" 9>&- || rc=1
    unpack_wait "$1" || unpack_refuse "tar cannot list it"
    # busybox lists `/x` and `../x` as `x` and says so on stderr (GNU tar
    # lists them as they are): either way such a name is refused.
    verdict=$(exec 9>&-; exec cat "$2/warnings")
    case $verdict in
        *[Rr]emoving\ leading*) unpack_refuse "a member has an absolute or ../ name (tar: ${verdict%%"$unpack_nl"*})" ;;
    esac
    [ "$rc" -eq 0 ] || unpack_refuse "tar cannot list it"
    verdict=$(exec 9>&-; exec awk "$unpack_judge" "$2/names" "$2/verbose") ||
        unpack_refuse "${verdict:-the listing could not be checked}"
    unpack_members=$verdict
    rm -f "$2/names" "$2/warnings" "$2/verbose"
}

# next_line: split the first line off `lines` into `line`; fails when none
# is left. (No here-string: bash before 5.1 writes those to a temp file.)
next_line() {
    [ -n "$lines" ] || return 1
    line=${lines%%"$unpack_nl"*}
    case $lines in
        *"$unpack_nl"*) lines=${lines#*"$unpack_nl"} ;;
        *) lines= ;;
    esac
}

# tree_check DIR: refuse what the listing did not show in DIR (fresh) or tar did on its own.
tree_check() {
    local dir=$1 found n c lines line
    # Directories without owner rwx could not be walked or removed.
    find "$dir" -type d ! -perm -700 -exec chmod u+rwx {} \; 9>&- ||
        unpack_refuse "cannot make its directories writable"
    # One walk finds what is refused or stripped; a clean tree needs no other.
    found=$(exec 9>&-; exec find "$dir" \( -name "*$unpack_nl*" -o \
        \( ! -type f ! -type d ! -type l \) -o \
        \( ! -type l \( -perm -4000 -o -perm -2000 \) \) \) -print) ||
        unpack_refuse "cannot walk it"
    [ -z "$found" ] || tree_refuse_or_strip "$dir"
    # A file linked more often than the tree holds it is linked from outside.
    lines=$(exec 9>&-; exec find "$dir" -type f -links +1)
    while next_line; do
        n=$(exec 9>&-; exec ls -ld "$line") || unpack_refuse "cannot stat ${line#"$dir"/}"
        set -f
        # shellcheck disable=SC2086 # the fields of ls -l: the link count is the second
        set -- $n
        set +f
        c=$(exec 9>&-; find "$dir" -samefile "$line" | wc -l)
        c=${c//[!0-9]/}
        [ "$c" = "$2" ] || unpack_refuse "${line#"$dir"/} is a hard link to a file outside the archive"
    done
    links_inside "$dir" "the archive"
}

# tree_refuse_or_strip DIR: refuse newlines in names and special files; strip setuid/setgid.
tree_refuse_or_strip() {
    local dir=$1 found
    found=$(exec 9>&-; exec find "$dir" -name "*$unpack_nl*")
    [ -z "$found" ] || unpack_refuse "a name holds a newline"
    found=$(exec 9>&-; exec find "$dir" ! -type f ! -type d ! -type l)
    [ -z "$found" ] || unpack_refuse "it holds a device node, FIFO or socket: ${found#"$dir"/}"
    # setuid and setgid bits never land in an install.
    find "$dir" ! -type l \( -perm -4000 -o -perm -2000 \) -exec chmod ug-s {} \; 9>&- ||
        unpack_refuse "cannot strip setuid/setgid bits"
    found=$(exec 9>&-; exec find "$dir" ! -type l \( -perm -4000 -o -perm -2000 \))
    [ -z "$found" ] || unpack_refuse "setuid/setgid bits remain on ${found#"$dir"/}"
}

# links_inside DIR WHAT: refuse unless every symlink under DIR resolves
# inside DIR (or nowhere), physically, so that a link through other links
# counts too. WHAT names DIR in the message.
links_inside() {
    local dir=$1 here=$PWD real target lines line
    CDPATH='' cd -P -- "$dir" || unpack_refuse "cannot enter $dir"
    real=$PWD
    cd -- "$here" || unpack_refuse "cannot go back to $here"
    lines=$(exec 9>&-; exec find "$dir" -type l)
    [ -n "$lines" ] || return 0
    links_resolved_inside "$real" && return 0
    while next_line; do
        target=$(exec 9>&-; exec readlink -f "$line") || continue
        case $target in
            "$real" | "$real"/*) ;;
            *) unpack_refuse "symlink ${line#"$dir"/} leads outside $2" ;;
        esac
    done
}

# links_resolved_inside REAL: one readlink for all symlinks in `lines` (no
# name holds a newline); fails, for the caller's loop of one readlink a link,
# unless each resolves inside REAL (busybox readlink takes one name only).
links_resolved_inside() {
    local IFS=$unpack_nl real=$1 targets n t
    set -f
    # shellcheck disable=SC2086 # one name a line
    set -- $lines
    n=$#
    targets=$(exec 9>&-; exec readlink -f -- "$@" 2>/dev/null) || { set +f; return 1; }
    # shellcheck disable=SC2086 # one target a line
    set -- $targets
    set +f
    [ "$#" -eq "$n" ] || return 1
    for t; do
        case $t in
            "$real" | "$real"/*) ;;
            *) return 1 ;;
        esac
    done
}

# tree_subdir TREE REL: refuse unless TREE/REL is a real directory reached
# through real directories only (the spec's `subdir`).
tree_subdir() {
    local p=$1 rest=$2 c
    while [ -n "$rest" ]; do
        c=${rest%%/*}
        case $rest in
            */*) rest=${rest#*/} ;;
            *) rest= ;;
        esac
        p=$p/$c
        if [ -L "$p" ] || [ ! -d "$p" ]; then
            unpack_refuse "it has no directory $2 (${p#"$1"/} is missing, a file or a symlink)"
        fi
    done
}

{%- if !chmods.is_empty() %}
# tree_chmod TREE I: give the files of artifact I's unpacked TREE the modes
# of its [[artifact.chmod]]. TREE is what will be placed (after subdir),
# already checked; each path must be a regular file reached through real
# directories of TREE only, so no mode ever lands outside this artifact.
tree_chmod() {
    local k=0 p rest c
    while [ "$k" -lt "$chm_count" ]; do
        if [ "${chm_art[$k]}" = "$2" ]; then
            p=$1
            rest=${chm_path[$k]}
            while [ -n "$rest" ]; do
                c=${rest%%/*}
                case $rest in
                    */*) rest=${rest#*/} ;;
                    *) rest= ;;
                esac
                p=$p/$c
                if [ -L "$p" ]; then
                    unpack_refuse "chmod ${chm_path[$k]}: ${p#"$1"/} is a symlink"
                elif [ -n "$rest" ] && [ ! -d "$p" ]; then
                    unpack_refuse "chmod ${chm_path[$k]}: ${p#"$1"/} is missing or not a directory"
                fi
            done
            if [ -d "$p" ]; then
                unpack_refuse "chmod ${chm_path[$k]}: it is a directory, not a file"
            elif [ ! -f "$p" ]; then
                unpack_refuse "chmod ${chm_path[$k]}: no such file in the archive"
            fi
            chmod "${chm_mode[$k]}" "$p" 9>&- || unpack_refuse "cannot set the mode of ${chm_path[$k]}"
        fi
        k=$((k + 1))
    done
}
{%- endif %}

# unpack_tools KIND: exit 6 unless the tools to unpack and check KIND exist.
unpack_tools() {
    local t
    for t in tar awk find readlink ls wc; do
        command -v "$t" >/dev/null 2>&1 || die 6 "$t is needed to unpack and check $unpack_what"
    done
    case $1 in
        tar.gz) t=gzip ;;
        tar.xz) t=xz ;;
    esac
    command -v "$t" >/dev/null 2>&1 || die 6 "$t is needed to unpack $unpack_what"
}

# unpack_artifact I FILE KIND DEST MODE SUBDIR: place verified artifact I in
# the install root being staged (inst); an archive's decompression has been
# started (unpack_start). DEST is relative to the root: the path of a
# `file`, the directory an archive is unpacked into (`.` for the root).
# SUBDIR (`.` for all) is the archive's directory whose contents go to DEST;
# the rest of the archive is left out. Exits 6 on refusal.
unpack_artifact() {
    local i=$1 work=$stage/unpack.$1 src tar_bytes='?'
    shift
    case $2 in
        file)
            case $3 in
                */*) stage_mkdir "${3%/*}" ;;
            esac
            if [ -e "$inst/$3" ] || [ -L "$inst/$3" ]; then
                unpack_refuse "$3 is already in the install (from an earlier artifact)"
            fi
            mv "$1" "$inst/$3" 9>&- || unpack_refuse "cannot place $3"
            chmod "$4" "$inst/$3" 9>&- || unpack_refuse "cannot set the mode of $3"
            progress place "$unpack_what" "${art_got[$i]-?} bytes as $3, mode $4"
            ;;
        tar.gz | tar.xz)
            archive_judge "$i" "$work"
            rm -f "$1"
            # -o: never restore the archive's owners, even as root.
            tar -xof "$work/tar" -C "$work/tree" 9>&- ||
                unpack_refuse "tar failed"
            if [ "$quiet" -eq 0 ]; then
                file_size "$work/tar"
                tar_bytes=${REPLY:-?}
            fi
            rm -f "$work/tar"
            tree_check "$work/tree"
            progress unpack "$unpack_what" "$unpack_members members, $tar_bytes bytes of tar"
            src=$work/tree
            if [ "${5:-.}" != . ]; then
                tree_subdir "$src" "$5"
                src=$src/$5
                # Checked against the whole archive above; what is kept must
                # not lead into what is left out.
                links_inside "$src" "$5"
            fi
{%- if !chmods.is_empty() %}
            tree_chmod "$src" "$i"
{%- endif %}
            stage_mkdir "$3"
            if [ "$3" = . ]; then
                place_tree "$src" "$inst"
            else
                place_tree "$src" "$inst/$3"
            fi
            rm -rf "$work" 9>&-
            progress place "$unpack_what" "into $3"
            ;;
        *)
            unpack_refuse "unknown kind $2"
            ;;
    esac
}
