"""Start Hermes Agent from the site-packages next to this file.

Run as `python -I -B boot.py ARGS` (bin/run does): -I keeps PYTHON* variables,
the user site and the working directory off sys.path, and site-packages comes
after the standard library, so no package can shadow a standard module.

`--prompt-file PATH` as the first two arguments becomes Hermes's own
`-z PROMPT` inside this process: Hermes takes a one-shot prompt only in argv,
and a prompt in argv is readable by every process of the machine
(/proc/PID/cmdline). The file is read as the runner reads RUNNER_ARG_FILE:
a regular file of at most 131071 bytes and no NUL, read bounded (a huge or
sparse file is never read whole), its bytes kept exactly (decoded as argv
bytes are: os.fsdecode, so bytes that are not UTF-8 survive). Anything else
is one line on stderr and exit 125, Hermes not started.

OpenSSL: libcrypto would read the image's own openssl.cnf (its compiled-in
/usr/lib/ssl/openssl.cnf, or the task's OPENSSL_CONF), which can load
engines or providers and change every TLS default. It is loaded once, when
_hashlib initialises libcrypto; here that happens with OPENSSL_CONF set to
os.devnull (an empty config), and the task's own value (or its absence) is
put back at once, so the tools Hermes runs see the task's environment.

A CA bundle variable (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE)
naming no file is dropped: Hermes refuses to start with one and httpx cannot
load it (seen: a host's SSL_CERT_FILE inherited in a musl root); without it
httpx uses the pinned certifi bundle. A variable naming a file is kept.

Child Pythons: Hermes runs sys.executable (this python3.11) itself for its
execute_code tool and its lazy installs (the session's config turns lazy
installs off). Such a child is not under -I, so the task's PYTHONPATH and
friends reach it; it runs the model's code in the task's world, which is
what a tool run is for, and it never imports from this bundle's
site-packages unless told to.
"""
import os
import site
import stat
import sys

# Linux's MAX_ARG_STRLEN less the NUL: the runner's bound on one argv word.
PROMPT_MAX = 131071


def refuse(why):
    sys.stderr.write("hermes boot.py: %s; Hermes was not started\n" % why)
    sys.exit(125)


def read_prompt(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as e:
        refuse("--prompt-file %r: %s" % (path, e.strerror))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            refuse("--prompt-file %r is not a regular file" % path)
        chunks = []
        left = PROMPT_MAX + 1
        while left > 0:
            b = os.read(fd, left)
            if not b:
                break
            chunks.append(b)
            left -= len(b)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > PROMPT_MAX:
        refuse("--prompt-file %r is over the %d bytes one argument may hold" % (path, PROMPT_MAX))
    if b"\0" in data:
        refuse("--prompt-file %r holds a NUL byte (not possible in an argument)" % path)
    return os.fsdecode(data)


def private_openssl_config():
    task = os.environ.get("OPENSSL_CONF")
    os.environ["OPENSSL_CONF"] = os.devnull
    try:
        import _hashlib  # noqa: F401  (loads libcrypto's config, once)
    except ImportError:
        pass
    if task is None:
        del os.environ["OPENSSL_CONF"]
    else:
        os.environ["OPENSSL_CONF"] = task


private_openssl_config()
for var in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
    if var in os.environ and not os.path.isfile(os.environ[var]):
        del os.environ[var]
args = sys.argv[1:]
if len(args) >= 2 and args[0] == "--prompt-file":
    args = ["-z", read_prompt(args[1])] + args[2:]
site.addsitedir(os.path.join(os.path.dirname(os.path.realpath(__file__)), "site-packages"))
sys.argv = ["hermes"] + args
from hermes_cli.main import main  # noqa: E402

sys.exit(main())
