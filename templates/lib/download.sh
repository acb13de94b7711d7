# Fetching artifacts over HTTP: curl, else GNU wget, else busybox wget, with
# timeouts and a bounded number of attempts. The lock descriptor (9) is closed
# for every child: an orphaned download must not keep holding the lock after
# the installer itself was killed.

download_attempts=3
download_tool=

# download_pick_tool: sets download_tool to curl, wget or busybox-wget.
download_pick_tool() {
    if command -v curl >/dev/null 2>&1; then
        download_tool=curl
    elif command -v wget >/dev/null 2>&1; then
        # busybox wget has no --version; GNU wget has one.
        if wget --version >/dev/null 2>&1 9>&-; then
            download_tool=wget
        else
            download_tool=busybox-wget
        fi
    else
        return 1
    fi
}

# download_once URL FILE: one attempt, bounded in time.
download_once() {
    case $download_tool in
        curl)
            # Abort a transfer that stalls below 1 byte/s for 60 s.
            curl -fsS -L --connect-timeout 20 --speed-limit 1 --speed-time 60 \
                -o "$2" -- "$1" 9>&-
            ;;
        wget)
            wget -q -T 60 -t 1 -O "$2" -- "$1" 9>&-
            ;;
        busybox-wget)
            # busybox 1.35 `wget -T` segfaults: bound it from outside.
            if command -v timeout >/dev/null 2>&1; then
                timeout 1800 wget -q -O "$2" "$1" 9>&-
            else
                wget -q -O "$2" "$1" 9>&-
            fi
            ;;
    esac
}

# download URL FILE: fetch URL into FILE; fails after download_attempts tries.
download() {
    local attempt=1
    if [ -z "$download_tool" ]; then
        download_pick_tool || die 4 "neither curl nor wget is available to fetch $1"
    fi
    while :; do
        rm -f "$2"
        if download_once "$1" "$2"; then
            return 0
        fi
        if [ "$attempt" -ge "$download_attempts" ]; then
            rm -f "$2"
            return 1
        fi
        say "download of $1 failed (attempt $attempt of $download_attempts); retrying"
        attempt=$((attempt + 1))
        sleep 1 9>&-
    done
}
