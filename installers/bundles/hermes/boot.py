"""Start Hermes Agent from the site-packages next to this file.

Run as `python -I -B boot.py ARGS` (bin/run does): -I keeps PYTHON* variables,
the user site and the working directory off sys.path, and site-packages comes
after the standard library, so no package can shadow a standard module.

`--prompt-file PATH` as the first two arguments becomes Hermes's own
`-z PROMPT` inside this process: Hermes takes a one-shot prompt only in argv,
and a prompt in argv is readable by every process of the machine
(/proc/PID/cmdline).

A CA bundle variable (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE)
naming no file is dropped: Hermes refuses to start with one and httpx cannot
load it (seen: a host's SSL_CERT_FILE inherited in a musl root); without it
httpx uses the pinned certifi bundle. A variable naming a file is kept.
"""
import os
import site
import sys

for var in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
    if var in os.environ and not os.path.isfile(os.environ[var]):
        del os.environ[var]
site.addsitedir(os.path.join(os.path.dirname(os.path.realpath(__file__)), "site-packages"))
args = sys.argv[1:]
if len(args) >= 2 and args[0] == "--prompt-file":
    with open(args[1], encoding="utf-8") as f:
        args = ["-z", f.read()] + args[2:]
sys.argv = ["hermes"] + args
from hermes_cli.main import main  # noqa: E402

sys.exit(main())
