# Placing into the install root being staged (inst): directories made one
# name at a time and trees moved by rename, never through a symlink and
# never over anything already there (used by lib/unpack.sh and the launcher).

# stage_mkdir REL: make INST/REL a real directory, one name at a time,
# never through a symlink and never over a file.
stage_mkdir() {
    local rest=$1 p=$inst c
    while [ -n "$rest" ] && [ "$rest" != . ]; do
        c=${rest%%/*}
        case $rest in
            */*) rest=${rest#*/} ;;
            *) rest= ;;
        esac
        p=$p/$c
        if [ -L "$p" ]; then
            unpack_refuse "${p#"$inst"/} is a symlink (from an earlier artifact): nothing is placed through it"
        elif [ ! -e "$p" ]; then
            mkdir "$p" 9>&- || unpack_refuse "cannot create ${p#"$inst"/}"
        elif [ ! -d "$p" ]; then
            unpack_refuse "${p#"$inst"/} is a file (from an earlier artifact), not a directory"
        fi
    done
}

# place_tree SRC DST: move SRC to DST by rename; where DST is already a real
# directory, merge SRC's entries into it. Nothing is ever overwritten.
place_tree() {
    local e
    if [ -L "$2" ]; then
        unpack_refuse "${2#"$inst"/} is a symlink (from an earlier artifact): nothing is placed through it"
    elif [ ! -e "$2" ]; then
        mv "$1" "$2" 9>&- || unpack_refuse "cannot move ${2#"$inst"/} into place"
    elif [ -d "$2" ] && [ -d "$1" ] && [ ! -L "$1" ]; then
        for e in "$1"/* "$1"/.[!.]* "$1"/..?*; do
            if [ -e "$e" ] || [ -L "$e" ]; then
                place_tree "$e" "$2/${e##*/}"
            fi
        done
    else
        unpack_refuse "${2#"$inst"/} is already in the install (from an earlier artifact)"
    fi
}
