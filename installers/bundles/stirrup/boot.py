"""Run Stirrup (PyPI stirrup, Artificial Analysis) headless, from the
site-packages next to this file.

Stirrup is a library with no command line of its own: this file is its
headless entry. Run as `python -I -B boot.py ARGS` (bin/run does): -I keeps
PYTHON* variables, the user site and the working directory off sys.path, so
a stirrup.py or sitecustomize.py of the task is never imported;
site-packages comes after the standard library.

    boot.py --prompt-file PATH --model MODEL --base-url URL --state-dir DIR
            [--max-turns N]
    boot.py --version     imports Stirrup and prints `stirrup VERSION`

One `Agent.session().run(PROMPT)` with Stirrup's own chat-completions client
(the OpenAI SDK) at URL, the key from OPENAI_API_KEY, and two tools:
Stirrup's `code_exec` (bash) and its `finish`. Prints the finish reason on
stdout, and only that: everything else written to stdout (Stirrup's rich
panels of turns and token usage) goes to stderr; exit 0 when the agent
called finish, 1 when it stopped without (max turns) or failed (the error
on stderr), 2 on bad arguments, 125 on an unusable prompt file.

What is pinned here, and why:
* The prompt file is read as the runner reads RUNNER_ARG_FILE: a regular
  file of at most 131071 bytes and no NUL, read bounded (a huge or sparse
  file is never read whole), its bytes kept exactly (os.fsdecode, as argv
  bytes are decoded). Anything else is one line on stderr and exit 125,
  Stirrup not started.
* libcrypto loads an empty config (os.devnull), never the image's
  openssl.cnf or the task's OPENSSL_CONF (which can load engines or
  providers); the task's value is put back at once for the tools.
* code_exec runs in the working directory (the task's), not in a temporary
  directory of its own that Stirrup deletes afterwards, and Stirrup's
  refusal of commands naming /tmp/, /home/ or ~/ is off: the sandbox is the
  boundary, as for Stirrup's own Docker and E2B backends.
* The base URL and key are arguments to the client: OPENAI_BASE_URL and
  OPENROUTER_API_KEY of the environment are never read.
* No .env is read: moviepy (a dependency) calls python-dotenv's
  load_dotenv(find_dotenv()) at import, which walks up from its own
  directory and adds what it finds to the environment. dotenv's two
  functions are replaced before anything imports them.
* moviepy's configuration module is replaced too: at import it would run
  the image's `ffplay` (or FFMPEG_BINARY/FFPLAY_BINARY of the environment)
  and the bundled ffmpeg, which the bundle leaves out (leave-out). Video and
  audio inputs are then unavailable; a coding task sends neither.
* Stirrup's resume cache (default ~/.cache/stirrup) goes to STATE/cache, and
  the conversation is written to STATE/transcript.json for capture: after
  every model response (the messages sent and the answer, so a run killed
  mid-tool leaves its last call without a result) and, at the end, the
  whole history. Stirrup itself writes it only at the end. Each write is
  atomic (a temporary file renamed over it). Stirrup's messages name no
  model: each assistant message gets `"model"`, the client's.
* A CA bundle variable (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE)
  naming no file is dropped (httpx refuses one); the pinned certifi is used.
"""
import json
import os
import site
import stat
import sys
import types
from pathlib import Path

# Linux's MAX_ARG_STRLEN less the NUL: the runner's bound on one argv word.
PROMPT_MAX = 131071
USAGE = "usage: stirrup --prompt-file PATH --model MODEL --base-url URL --state-dir DIR [--max-turns N]"


def parse(argv):
    """The options as a dict, or None when they are not exactly right."""
    want = {"--prompt-file", "--model", "--base-url", "--state-dir", "--max-turns"}
    opts = {}
    i = 0
    while i < len(argv):
        if argv[i] not in want or i + 1 >= len(argv) or argv[i] in opts:
            return None
        opts[argv[i]] = argv[i + 1]
        i += 2
    if not want - {"--max-turns"} <= opts.keys():
        return None
    try:
        opts["--max-turns"] = int(opts.get("--max-turns", "30"))
    except ValueError:
        return None
    return opts if opts["--max-turns"] > 0 else None


def refuse(why):
    sys.stderr.write("stirrup boot.py: %s; Stirrup was not started\n" % why)
    sys.exit(125)


def read_prompt(path):
    """The prompt file's text, bounded and byte-exact (see the module doc)."""
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


def seal_imports():
    """No .env, and no program run by moviepy's import (see the module doc)."""
    import dotenv

    dotenv.load_dotenv = lambda *a, **k: False
    dotenv.find_dotenv = lambda *a, **k: ""
    config = types.ModuleType("moviepy.config")
    config.DOTENV = None
    config.IS_POSIX_OS = os.name == "posix"
    config.FFMPEG_BINARY = "unset"
    config.FFPLAY_BINARY = "unset"
    config.try_cmd = lambda cmd: (False, OSError("ffmpeg is not part of this bundle"))
    config.check = lambda: None
    sys.modules["moviepy.config"] = config


async def run(opts, prompt):
    import stirrup.core.cache as cache
    from stirrup import Agent
    from stirrup.clients.chat_completions_client import ChatCompletionsClient
    from stirrup.tools import LocalCodeExecToolProvider

    state = Path(opts["--state-dir"])
    cache.DEFAULT_CACHE_DIR = state / "cache"

    class RecordingClient(ChatCompletionsClient):
        """Stirrup's client; the conversation so far is saved after each answer."""

        async def generate(self, messages, tools):
            answer = await super().generate(messages, tools)
            save(state, opts["--model"], [[*messages, answer]])
            return answer

    class WorkdirCodeExec(LocalCodeExecToolProvider):
        """Stirrup's local code_exec, in the working directory, kept."""

        async def __aenter__(self):
            self._temp_dir = Path.cwd()
            return self.get_code_exec_tool(description=self._description)

        async def __aexit__(self, *exc):
            self._temp_dir = None

        def _check_absolute_paths(self, argv, cmd):
            return None

    client = RecordingClient(
        model=opts["--model"],
        max_tokens=8192,
        context_window_tokens=128_000,
        base_url=opts["--base-url"],
        api_key=os.environ.get("OPENAI_API_KEY", ""),
    )
    agent = Agent(
        client=client,
        name="stirrup",
        tools=[WorkdirCodeExec()],
        max_turns=opts["--max-turns"],
    )
    async with agent.session(cache_on_interrupt=False) as session:
        finish, history, _meta = await session.run(prompt)
    save(state, opts["--model"], history)
    return finish


def save(state, model, history):
    """STATE/transcript.json: the history's groups of messages, as pydantic
    dumps them, the model added to each assistant message."""

    def one(m):
        if not hasattr(m, "model_dump"):
            return str(m)
        d = m.model_dump(mode="json")
        if d.get("role") == "assistant":
            d["model"] = model
        return d

    dump = [[one(m) for m in g] if isinstance(g, list) else one(g) for g in history]
    tmp = state / "transcript.json.tmp"
    tmp.write_text(json.dumps(dump, indent=1, default=str), encoding="utf-8")
    tmp.replace(state / "transcript.json")


def setup():
    """The environment and imports every run gets (see the module doc)."""
    private_openssl_config()
    for var in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        if var in os.environ and not os.path.isfile(os.environ[var]):
            del os.environ[var]
    site.addsitedir(os.path.join(os.path.dirname(os.path.realpath(__file__)), "site-packages"))
    sys.argv = ["stirrup"]
    seal_imports()


def main():
    if sys.argv[1:] == ["--version"]:
        setup()
        import importlib.metadata

        import stirrup  # noqa: F401 (the check: the whole package imports)

        print("stirrup", importlib.metadata.version("stirrup"))
        return 0
    opts = parse(sys.argv[1:])
    if opts is None:
        print(USAGE, file=sys.stderr)
        return 2
    prompt = read_prompt(opts["--prompt-file"])
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    setup()
    Path(opts["--state-dir"]).mkdir(parents=True, exist_ok=True)
    import asyncio  # after setup(): asyncio imports ssl, which loads libcrypto's config

    finish = asyncio.run(run(opts, prompt))
    if finish is None:
        print("stirrup: stopped without calling finish", file=sys.stderr)
        return 1
    print(finish.reason, file=answer)
    answer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
