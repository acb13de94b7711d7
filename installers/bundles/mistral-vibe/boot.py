"""Run Mistral Vibe (PyPI mistral-vibe) headless, from the site-packages next
to this file.

`vibe -p --auto-approve --output text` is Vibe's own programmatic mode
(Harbor's adapter uses it with the prompt in argv; here `-p` has no text and
Vibe reads the prompt from stdin, stripped of surrounding whitespace). Run
as `python -I -B boot.py ARGS` (bin/run does): -I keeps PYTHON* variables,
the user site and the working directory off sys.path, so a vibe.py or
sitecustomize.py of the task is never imported; site-packages comes after
the standard library.

    boot.py ARGS...       Vibe's own command line (vibe.cli.entrypoint:main)
    boot.py --version     imports Vibe's CLI and programmatic mode, then
                          prints `mistral-vibe VERSION`

What is pinned here, and why:
* Nothing of Vibe's configuration comes from the task or the image: every
  VIBE_* variable but VIBE_HOME is dropped (Vibe reads any VIBE_<FIELD> as
  a config override, VIBE_PROVIDERS or VIBE_ACTIVE_MODEL included, above
  its config.toml); VIBE_HOME is the session's (the harness spec sets it).
  MISTRAL_API_KEY is dropped too: the session's provider names its own key
  variable.
* libcrypto loads an empty config (os.devnull), never the image's
  openssl.cnf or the task's OPENSSL_CONF; the task's value is put back at
  once for the tools.
* A CA bundle variable (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE)
  naming no file is dropped (httpx refuses one); the pinned certifi is used.
"""
import os
import site
import sys

KEPT = {"VIBE_HOME"}


def private_openssl_config():
    """libcrypto's config is loaded once, here, from an empty file."""
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


def setup():
    """The environment and imports every run gets (see the module doc)."""
    private_openssl_config()
    for var in list(os.environ):
        if (var.startswith("VIBE_") and var not in KEPT) or var == "MISTRAL_API_KEY":
            del os.environ[var]
    for var in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        if var in os.environ and not os.path.isfile(os.environ[var]):
            del os.environ[var]
    site.addsitedir(os.path.join(os.path.dirname(os.path.realpath(__file__)), "site-packages"))


def main():
    setup()
    if sys.argv[1:] == ["--version"]:
        import importlib.metadata

        import vibe.cli.cli  # noqa: F401 (the check: the CLI imports)
        import vibe.cli.programmatic  # noqa: F401

        print("mistral-vibe", importlib.metadata.version("mistral-vibe"))
        return 0
    sys.argv[0] = "vibe"
    from vibe.cli.entrypoint import main as vibe_main

    return vibe_main()


if __name__ == "__main__":
    sys.exit(main())
