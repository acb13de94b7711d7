# tool_env: one fixed environment for every tool this installer runs, set
# once, first thing in main, for its whole process (the entry check too).
# The image's configuration must not change what a tool prints or does:
# what the checks read (ls's sizes, tar's listings, awk's judge, a digest)
# and what lands where (curl's output file). Config files are shut out by
# flags where the tool reads them (curl -q, GNU wget --no-config, both in
# lib/download.sh); here go the variables:
#  - the locale: C for all (byte semantics in awk, sed, tr and bash's own
#    ${#var}; no translated messages to match);
#  - coreutils: POSIXLY_CORRECT, _POSIX2_VERSION, the block sizes (ls -l's
#    size column follows BLOCK_SIZE: BLOCK_SIZE=1M read a 5 MB archive as
#    5 bytes past the spec's size check), QUOTING_STYLE, TIME_STYLE,
#    LS_COLORS, COLUMNS, TABSIZE, the backup suffixes, TZ;
#  - tar, gzip, xz: TAR_OPTIONS, TAPE, GZIP, XZ_OPT, XZ_DEFAULTS; awk
#    (gawk): AWKPATH, AWKLIBPATH, AWK_HASH and GAWK_*; grep: GREP_OPTIONS;
#    shasum (perl): PERL*; getconf: GETCONF_DIR;
#  - curl and wget: CURL_HOME, WGETRC, SYSTEM_WGETRC (moot with the flags),
#    CURL_SSL_BACKEND, SSLKEYLOGFILE and QLOGDIR (they write files);
#  - OpenSSL (openssl dgst, curl's and busybox wget's TLS): an empty config,
#    so no provider or engine (a shared object) is loaded, and no
#    OPENSSL_MODULES, OPENSSL_ENGINES, OPENSSL_ia32cap;
#  - the loader's LD_* and glibc's other variables for setuid programs, and
#    the runtimes' NODE_*, BUN_* and PYTHON*: the entry check must see the
#    environment the runner gives the harness (src/harness/runtime.rs).
# Kept: PATH (the image's tools are the tools), HOME (the entry check sets
# its own), and the proxy and CA variables (http_proxy, https_proxy,
# no_proxy, ALL_PROXY, SSL_CERT_FILE, CURL_CA_BUNDLE, ...): the
# orchestrator's network, and every artifact's sha256 is checked anyway.
tool_env() {
    local n
    unset LANG LANGUAGE LC_CTYPE LC_COLLATE LC_MESSAGES LC_NUMERIC LC_TIME \
        LC_MONETARY LC_ADDRESS LC_IDENTIFICATION LC_MEASUREMENT LC_NAME \
        LC_PAPER LC_TELEPHONE
    # shellcheck disable=SC2031 # the whole process's; sha256_with sets it again for its tool, on its own
    export LC_ALL=C TZ=UTC0 OPENSSL_CONF=/dev/null
    unset POSIXLY_CORRECT _POSIX2_VERSION BLOCK_SIZE BLOCKSIZE LS_BLOCK_SIZE \
        DF_BLOCK_SIZE DU_BLOCK_SIZE QUOTING_STYLE TIME_STYLE LS_COLORS COLUMNS \
        TABSIZE VERSION_CONTROL SIMPLE_BACKUP_SUFFIX \
        TAR_OPTIONS TAPE GZIP XZ_OPT XZ_DEFAULTS AWKPATH AWKLIBPATH AWK_HASH \
        GREP_OPTIONS GETCONF_DIR CURL_HOME WGETRC SYSTEM_WGETRC \
        CURL_SSL_BACKEND SSLKEYLOGFILE QLOGDIR OPENSSL_MODULES OPENSSL_ENGINES \
        OPENSSL_ia32cap OPENSSL_armcap \
        GCONV_PATH GLIBC_TUNABLES HOSTALIASES LOCALDOMAIN LOCPATH MALLOC_TRACE \
        NIS_PATH NLSPATH RESOLV_HOST_CONF RES_OPTIONS TZDIR
    for n in ${!GAWK_@} ${!PERL@} ${!LD_@} ${!NODE_@} ${!BUN_@} ${!PYTHON@}; do
        unset -v "$n"
    done
}
