# sha256 of a file with whatever the image has: openssl dgst -sha256,
# sha256sum (coreutils or busybox), shasum -a 256, or the busybox applet. No
# tool means failure: a digest is never skipped. openssl comes first because
# it is the fastest where it exists: its SHA-256 uses the CPU's SHA
# extensions (measured: 150 MB in 0.12 s of CPU, against 0.51 s for
# Debian's coreutils sha256sum and 0.69 s for busybox), and the digest of
# every artifact is on the install's critical path.

# sha256_with FILE FIELD TOOL [ARG...]: run TOOL on FILE (read on stdin, so
# that no name is ever escaped in the output) and set REPLY to the FIELD
# (first or last) word of what it printed. Fails unless the tool succeeded
# and that word is a lowercase hex sha256; a TOOL that is there (busybox:
# with its sha256sum applet) sets the caller's `rc` to 1 first, so that
# sha256_of can tell "no tool" (2) from "every tool failed" (1).
sha256_with() {
    local file=$1 field=$2 out re='^[0-9a-f]{64}$'
    shift 2
    command -v "$1" >/dev/null 2>&1 || return 1
    if [ "$1" = busybox ]; then
        busybox sha256sum < /dev/null > /dev/null 2>&1 || return 1
    fi
    rc=1
    out=$(
        exec 9>&-
        # An empty config: an inherited OPENSSL_CONF could load a provider
        # or engine (a shared object) into the tool that judges the bytes.
        # tool_env set it for the whole installer already: this holds even
        # without it, and only here.
        # shellcheck disable=SC2030 # meant for this subshell's tool only
        [ "$1" != openssl ] || export OPENSSL_CONF=/dev/null
        exec "$@" < "$file" 2>/dev/null
    ) || return 1
    case $field in
        first) out=${out%% *} ;;
        *) out=${out##* } ;;
    esac
    [[ $out =~ $re ]] || return 1
    REPLY=$out
}

# sha256_of FILE: sets REPLY to the lowercase hex digest. Returns 2 when no
# tool is available, 1 when every tool there failed. A tool that fails (an
# openssl whose libcrypto is gone, say) gives way to the next: a failure can
# never make a wrong digest pass, it only costs another read of the file.
# openssl prints "SHA2-256(stdin)= HEX" (OpenSSL 3) or "(stdin)= HEX"
# (older, and LibreSSL); the others "HEX  -".
sha256_of() {
    local rc=2
    REPLY=
    sha256_with "$1" last openssl dgst -sha256 ||
        sha256_with "$1" first sha256sum ||
        sha256_with "$1" first shasum -a 256 ||
        sha256_with "$1" first busybox sha256sum ||
        return "$rc"
}

# verify_digest FILE EXPECTED WHAT: exit 5 unless FILE has sha256 EXPECTED.
verify_digest() {
    local rc=0
    sha256_of "$1" || rc=$?
    case $rc in
        0) ;;
        2) die 5 "no sha256 tool (openssl, sha256sum, shasum or busybox) to check $3" ;;
        *) die 5 "could not compute the sha256 of $3" ;;
    esac
    if [ "$REPLY" != "$2" ]; then
        die 5 "digest mismatch for $3: expected $2, got $REPLY"
    fi
}
