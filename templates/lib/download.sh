# Fetching artifacts over HTTP: curl, else GNU wget, else busybox wget, with
# timeouts and a bounded number of attempts. The lock descriptor (9) is closed
# for every child: an orphaned download must not keep holding the lock after
# the installer itself was killed.

download_attempts=3
download_tool=

# download_pick_tool: sets download_tool to curl, wget (GNU, with
# --no-config), wget-old (GNU before 1.17, without it) or busybox-wget.
download_pick_tool() {
    if command -v curl >/dev/null 2>&1; then
        download_tool=curl
    elif command -v wget >/dev/null 2>&1; then
        # busybox wget has no --version; GNU wget has one, and --no-config
        # from 1.17 on.
        if wget --no-config --version >/dev/null 2>&1 9>&-; then
            download_tool=wget
        elif wget --version >/dev/null 2>&1 9>&-; then
            download_tool=wget-old
        else
            download_tool=busybox-wget
        fi
    else
        return 1
    fi
}

# download_stream URL [MAX]: one attempt, bounded in time, the body on
# stdout. curl refuses up front a body whose announced length is past MAX.
# No config file is read (tool_env clears the variables): curl's -q (it
# must come first) skips .curlrc, which could send the body to a file
# (`output`), add headers or a proxy, or turn -f off; GNU wget's
# --no-config skips /etc/wgetrc and ~/.wgetrc (a wget older than 1.17 has
# no such flag: WGETRC=/dev/null skips the user's, the system's is still
# read). busybox wget reads no config file.
download_stream() {
    case $download_tool in
        curl)
            # Abort a transfer that stalls below 1 byte/s for 60 s.
            curl -q -fsS -L --connect-timeout 20 --speed-limit 1 --speed-time 60 \
                ${2:+--max-filesize "$2"} -- "$1" 9>&-
            ;;
        wget)
            wget --no-config -q -T 60 -t 1 -O - -- "$1" 9>&-
            ;;
        wget-old)
            WGETRC=/dev/null wget -q -T 60 -t 1 -O - -- "$1" 9>&-
            ;;
        busybox-wget)
            # busybox 1.35 `wget -T` segfaults: bound it from outside.
            if command -v timeout >/dev/null 2>&1; then
                timeout 1800 wget -q -O - "$1" 9>&-
            else
                wget -q -O - "$1" 9>&-
            fi
            ;;
    esac
}

# download_once URL FILE [MAX]: one attempt into FILE. With MAX, at most
# MAX + 1 bytes are written (head stops the transfer there), so an oversized
# body is seen without being fetched whole.
download_once() {
    if [ -n "${3:-}" ] && command -v head >/dev/null 2>&1; then
        download_stream "$1" "$3" | head -c "$(($3 + 1))" > "$2" 9>&-
    else
        download_stream "$1" "${3:-}" > "$2"
    fi
}

# download_too_big FILE MAX RC: the attempt failed because the body is past
# MAX (more than MAX bytes arrived, or curl refused the announced length).
download_too_big() {
    [ -n "$2" ] || return 1
    [ "$download_tool" = curl ] && [ "$3" -eq 63 ] && return 0
    file_size "$1"
    [ -n "$REPLY" ] && [ "$REPLY" -gt "$2" ]
}

# download URL FILE [MAX]: fetch URL into FILE; fails (1) after
# download_attempts tries, or at once (3) when the body is past MAX bytes.
download() {
    local attempt=1 rc max=${3:-}
    if [ -z "$download_tool" ]; then
        download_pick_tool || die 4 "neither curl nor wget is available to fetch $1"
    fi
    while :; do
        rm -f "$2"
        rc=0
        download_once "$1" "$2" "$max" || rc=$?
        if [ "$rc" -eq 0 ] && ! download_too_big "$2" "$max" 0; then
            return 0
        fi
        if download_too_big "$2" "$max" "$rc"; then
            rm -f "$2"
            return 3
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
