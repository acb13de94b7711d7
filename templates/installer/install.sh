# cleanup: the EXIT trap. Removes what was staged and gives the lock up.
# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
    if [ -n "$stage" ]; then
        unpack_stop
        rm -rf "$stage"
    fi
    if [ -n "$check_home" ]; then
        rm -rf "$check_home"
    fi
    if [ -n "$probe" ]; then
        rm -rf "$probe"
    fi
    if [ -n "$old" ]; then
        # A failed swap puts the previous install back; a finished one drops it.
        if [ ! -e "$final" ]; then
            mv "$old" "$final" 2>/dev/null
        fi
        rm -rf "$old"
    fi
    lock_release
}

# remove_leftovers: staging and swap directories of installers that died.
# Only called while holding the lock, so none of them is in use; a check
# home is made without the lock, so only a dead owner's is removed.
remove_leftovers() {
    local d
    for d in "$prefix/.$name-$version.stage."* "$prefix/.$name-$version.old."* \
        "$prefix/.$name-$version.check."*; do
        if [ -e "$d" ] || [ -L "$d" ]; then
            case $d in
                *.check.*) ! kill -0 "${d##*.}" 2>/dev/null || continue ;;
            esac
            say "removing the leftover ${d##*/}"
            rm -rf "$d"
        fi
    done
}

# file_size FILE: sets REPLY to the size of FILE in bytes.
file_size() {
    REPLY=$(exec 9>&-; exec wc -c < "$1") || REPLY=
    REPLY=${REPLY//[!0-9]/}
}

# hold_source FILE: open FILE on fd 8 and succeed when the file fd 8 now
# holds may be read in place, with no copy: a regular file that only root
# or this user can change (owned by uid 0 or $EUID, no write bit for group
# or others; a POSIX ACL that lets anyone else write shows as the group's
# write bit, which is its mask). A rename or a new file at FILE's path then
# changes nothing fd 8 reads. It is read through /proc/self/fd/8, which
# opens that same file afresh (offset 0): once for the digest, once for the
# decompression. Sets REPLY to its size; on failure fd 8 is closed and REPLY
# says why the file is copied instead.
hold_source() {
    local out
    if ! { exec 8< "$1"; } 2>/dev/null; then
        REPLY="it cannot be opened"
        return 1
    fi
    out=$(exec 9>&-; exec ls -lnLd /proc/self/fd/8 2>/dev/null) || out=
    set -f
    # shellcheck disable=SC2086 # the fields of ls -ln: mode, links, uid, gid, size
    set -- $out
    set +f
    REPLY=
    if [ "$#" -lt 5 ]; then
        REPLY="/proc/self/fd cannot be read"
    else
        case $1 in
            -????-??-*) ;;
            -*) REPLY="group or others can write it" ;;
            *) REPLY="it is not a regular file" ;;
        esac
        case $3 in
            0 | "$EUID") ;;
            *) REPLY=${REPLY:-"it is owned by uid $3"} ;;
        esac
        case $5 in
            '' | *[!0-9]*) REPLY=${REPLY:-"ls gave no size"} ;;
        esac
    fi
    if [ -n "$REPLY" ]; then
        exec 8<&-
        return 1
    fi
    REPLY=$5
}

# size_ok I SIZE WHERE: exit 4 when artifact I has a size in its spec and
# SIZE (of its file at WHERE) is unknown or past it.
size_ok() {
    local max=${art_size[$1]}
    [ -n "$max" ] || return 0
    if [ -z "$2" ] || [ "$2" -gt "$max" ]; then
        die 4 "artifact ${art_path[$1]} in $3 is ${2:-?} bytes, more than the $max of its spec"
    fi
}

# obtain I FILE: make artifact I readable at art_read[I], or exit 4: an
# archive in --source-dir that hold_source accepts is read in place through
# fd 8 (the caller closes it once the decompression has opened it), any
# other artifact is copied or downloaded to FILE. An artifact with a size in
# its spec is refused past that size, and a download stops there. Sets
# art_how[I] to how it was got, and art_got[I] to the size of a held file
# (ls gave it), for the progress line.
obtain() {
    local path=${art_path[$1]} max=${art_size[$1]} rc=0 why=
    art_read[$1]=$2
    if [ -n "$source_dir" ]; then
        [ -f "$source_dir/$path" ] || die 4 "artifact $path is not in $source_dir"
        if [ "${art_unpack[$1]}" != file ]; then
            if hold_source "$source_dir/$path"; then
                size_ok "$1" "$REPLY" "$source_dir"
                art_got[$1]=$REPLY
                art_read[$1]=/proc/self/fd/8
                art_how[$1]="read in place from $source_dir"
                return 0
            fi
            why=" ($REPLY)"
        fi
        if [ -n "$max" ]; then
            file_size "$source_dir/$path"
            size_ok "$1" "$REPLY" "$source_dir"
        fi
        cp "$source_dir/$path" "$2" 9>&- || die 4 "cannot copy $source_dir/$path"
        art_how[$1]="copied from $source_dir$why"
    else
        say "downloading $base_url/$path"
        download "$base_url/$path" "$2" "$max" || rc=$?
        case $rc in
            0) ;;
            3) die 4 "download of $base_url/$path stopped: more than the $max bytes of its spec" ;;
            *) die 4 "download of $base_url/$path failed" ;;
        esac
        art_how[$1]="downloaded from $base_url"
    fi
}

# write_launcher: the small sh script that starts the entry with its
# runtime. Its path must be free (an artifact's file or link there is
# refused), and it is created new (noclobber: O_EXCL), never written through
# a link.
write_launcher() {
    [ -n "$launcher_path" ] || return 0
    unpack_what="the launcher $launcher_path"
    case $launcher_path in
        */*) stage_mkdir "${launcher_path%/*}" ;;
    esac
    if [ -e "$inst/$launcher_path" ] || [ -L "$inst/$launcher_path" ]; then
        unpack_refuse "$launcher_path is already in the install (from an artifact)"
    fi
    set -C
    if ! printf '%s' "$launcher_text" > "$inst/$launcher_path"; then
        set +C
        return 1
    fi
    set +C
    chmod 755 "$inst/$launcher_path" 9>&-
}

# write_stamp: .shforge-artifacts in the install, one line: the sha256 of
# every artifact this installer pins. installed_ok reuses an install only
# when it holds the same line, so an install of an earlier pin of the same
# version (a rebuilt bundle, a fixed runtime) is replaced, not reused because
# its entry still runs. Created new, like the launcher.
write_stamp() {
    unpack_what="the stamp .shforge-artifacts"
    if [ -e "$inst/.shforge-artifacts" ] || [ -L "$inst/.shforge-artifacts" ]; then
        unpack_refuse ".shforge-artifacts is already in the install (from an artifact)"
    fi
    set -C
    if ! printf '%s\n' "$install_stamp" > "$inst/.shforge-artifacts"; then
        set +C
        return 1
    fi
    set +C
}

# install_fresh: get (obtain) and verify every selected artifact (an
# archive's decompression to a plain tar starts beside its digest, and runs
# on while the next is got; nothing reads it before the digest matched),
# then unpack them in order, check the entry, and swap the install into
# place with one rename. The stage holds the install root (root/), the
# downloads, the unpacking areas and the entry check's home, so nothing of
# the installer's own is ever inside the root.
install_fresh() {
    local k=0 i file t0
    phase_start
    t0=$phase_t0
    remove_leftovers
    stage=$prefix/.$name-$version.stage.$$
    inst=$stage/root
    mkdir "$stage" 9>&- || die 4 "cannot create $stage"
    mkdir "$inst" "$stage/download" 9>&- || die 4 "cannot populate $stage"
    mkdir -m 700 "$stage/home" "$stage/home/tmp" 9>&- || die 4 "cannot populate $stage"
    while [ "$k" -lt "$selected_count" ]; do
        i=${selected[$k]}
        unpack_what=${art_path[$i]}
        file=$stage/download/$i
        phase_start
        obtain "$i" "$file"
        if [ "$quiet" -eq 0 ]; then
            if [ -z "${art_got[$i]-}" ]; then
                file_size "${art_read[$i]}"
                art_got[i]=${REPLY:-?}
            fi
            progress get "$unpack_what" "${art_got[$i]} bytes, ${art_how[$i]}"
        fi
        # The decompression (to a plain tar in the stage: nothing listed or
        # extracted yet) runs beside the digest, on the other core; nothing
        # reads that tar before the digest matched. A mismatch exits 5, and
        # the EXIT trap kills the decompression and removes the stage.
        [ "${art_unpack[$i]}" = file ] || unpack_start "$i" "${art_unpack[$i]}" "${art_read[$i]}"
        verify_digest "${art_read[$i]}" "${art_sha256[$i]}" "${art_path[$i]}"
        progress verify "$unpack_what" "${art_got[$i]-?} bytes, sha256 ok"
        # The decompression and the digest have opened their own copies of
        # fd 8 (if held).
        exec 8<&-
        k=$((k + 1))
    done
    k=0
    while [ "$k" -lt "$selected_count" ]; do
        i=${selected[$k]}
        unpack_what=${art_path[$i]}
        phase_start
        unpack_artifact "$i" "$stage/download/$i" "${art_unpack[$i]}" "${art_dest[$i]}" "${art_mode[$i]}" "${art_subdir[$i]}"
        rm -f "$stage/download/$i"
        k=$((k + 1))
    done
    write_launcher || die 6 "cannot write the launcher $launcher_path"
    write_stamp || die 6 "cannot write $inst/.shforge-artifacts"
    if [ "$use_private" -eq 1 ]; then
        # The prepared programs hold absolute paths of the final place and
        # run only there: checked right after the rename, taken back if bad.
        relocate_selected "$inst"
        progress relocate "prepared programs" "the private glibc runtime's paths set"
        put_in_place
        if ! entry_ok "$final" "$stage/home"; then
            mv "$final" "$stage/failed" 2>/dev/null || rm -rf "$final"
            die 6 "entry check failed: $entry ${check_args[*]+${check_args[*]}} did not run or did not print '$check_expect' (with the private glibc runtime)"
        fi
        progress "entry check" "$entry${check_args[*]+ }${check_args[*]+${check_args[*]}}" "ok"
    else
        entry_ok "$inst" "$stage/home" || die 6 "entry check failed: $entry ${check_args[*]+${check_args[*]}} did not run or did not print '$check_expect'"
        progress "entry check" "$entry${check_args[*]+ }${check_args[*]+${check_args[*]}}" "ok"
        put_in_place
    fi
    rm -rf "$stage"
    stage=
    if [ -n "$old" ]; then
        rm -rf "$old"
        old=
    fi
    elapsed_since "$t0"
    install_took=$REPLY
}

# put_in_place: the staged install becomes final (a broken one there is
# moved aside first, and put back by cleanup when this run fails).
put_in_place() {
    if [ -e "$final" ] || [ -L "$final" ]; then
        say "replacing $final: its entry check fails or it holds other artifacts"
        old=$prefix/.$name-$version.old.$$
        mv "$final" "$old" || die 4 "cannot move the broken $final aside"
    fi
    mv "$inst" "$final" || die 4 "cannot rename $inst to $final"
}
