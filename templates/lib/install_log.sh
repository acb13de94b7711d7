# Messages of an installer. Everything but the final entry path goes to
# stderr, so the last line of stdout is always the path a caller reads.
# die CODE MESSAGE: the one way out on failure; the EXIT trap cleans up.

say() {
    printf '%s: %s\n' "$prog" "$*" >&2
}

die() {
    local code=$1
    shift
    printf '%s: error: %s\n' "$prog" "$*" >&2
    exit "$code"
}
