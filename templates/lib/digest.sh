# sha256 of a file with whatever the image has: openssl dgst -sha256,
# sha256sum (coreutils or busybox), shasum -a 256, or the busybox applet. No
# tool means failure: a digest is never skipped. openssl comes first because
# it is the fastest where it exists: its SHA-256 uses the CPU's SHA
# extensions (measured: 150 MB in 0.12 s of CPU, against 0.51 s for
# Debian's coreutils sha256sum and 0.69 s for busybox), and the digest of
# every artifact is on the install's critical path.

# sha256_of FILE: sets REPLY to the lowercase hex digest. Returns 2 when no
# tool is available, 1 when the tool failed.
sha256_of() {
    local out re='^[0-9a-f]{64}$'
    REPLY=
    # The file is read on stdin so that no name is ever escaped in the output.
    if command -v openssl >/dev/null 2>&1; then
        # "SHA2-256(stdin)= HEX" (OpenSSL 3) or "(stdin)= HEX" (older, and
        # LibreSSL). An empty config: an inherited OPENSSL_CONF could load
        # a provider or engine (a shared object) into the tool that judges
        # the bytes.
        out=$(exec 9>&-; OPENSSL_CONF=/dev/null exec openssl dgst -sha256 < "$1") || return 1
        out=${out##* }
    elif command -v sha256sum >/dev/null 2>&1; then
        out=$(exec 9>&-; exec sha256sum < "$1") || return 1
        out=${out%% *}
    elif command -v shasum >/dev/null 2>&1; then
        out=$(exec 9>&-; exec shasum -a 256 < "$1") || return 1
        out=${out%% *}
    elif command -v busybox >/dev/null 2>&1 && busybox sha256sum < /dev/null > /dev/null 2>&1; then
        out=$(exec 9>&-; exec busybox sha256sum < "$1") || return 1
        out=${out%% *}
    else
        return 2
    fi
    [[ $out =~ $re ]] || return 1
    REPLY=$out
}

# verify_digest FILE EXPECTED WHAT: exit 5 unless FILE has sha256 EXPECTED.
verify_digest() {
    local rc=0
    sha256_of "$1" || rc=$?
    case $rc in
        0) ;;
        2) die 5 "no sha256 tool (sha256sum, shasum, openssl or busybox) to check $3" ;;
        *) die 5 "could not compute the sha256 of $3" ;;
    esac
    if [ "$REPLY" != "$2" ]; then
        die 5 "digest mismatch for $3: expected $2, got $REPLY"
    fi
}
