"""Run NOOA (PyPI nooa + nooa-cli, NVIDIA NeMo) headless, from the
site-packages next to this file.

NOOA has no headless command of its own (`nooa` runs evals, a trace viewer
and config; its coding agent is driven by the TUI or ACP hosts): this file
is its headless entry. Run as `python -I -B boot.py ARGS` (bin/run does):
-I keeps PYTHON* variables, the user site and the working directory off
sys.path, so a nooa.py or sitecustomize.py of the task is never imported;
site-packages comes after the standard library.

    boot.py --prompt-file PATH --model MODEL --base-url URL --state-dir DIR
    boot.py --version     imports NOOA's coding agent and prints `nooa VERSION`

One turn of nooa-cli's CodingAgent (the agent its TUI and ACP hosts run: a
CodeAct loop whose `execute_python` tool runs model-written Python in an
in-process REPL with a shell, repo and todo tools on `self`), handed the
prompt as one user message in the working directory (the task's), through
NOOA's CompletionClient (litellm, OpenAI chat completions) at URL with the
model `openai/MODEL` and the key from OPENAI_API_KEY. Prints the turn's
explanation (`return_result(RespondReason.DONE, explanation=...)`) on
stdout, and only that: whatever else is written to stdout goes to stderr.
Exit 0 when the turn ended DONE, 1 when it ended otherwise or failed (the
error on stderr), 2 on bad arguments, 125 on an unusable prompt file.

What is pinned here, and why:
* The prompt file is read as the runner reads RUNNER_ARG_FILE: a regular
  file of at most 131071 bytes and no NUL, read bounded, its bytes kept
  exactly (os.fsdecode). Anything else is one line on stderr and exit 125,
  NOOA not started.
* libcrypto loads an empty config (os.devnull), never the image's
  openssl.cnf or the task's OPENSSL_CONF; the task's value is put back at
  once for the tools.
* Nothing of NOOA's configuration comes from the task or the image: every
  NEMO_OO_*, NEMO_TRACE_*, NOOA_*, OTLP_ENDPOINT, TRACE_EXPERIMENT,
  ATIF_OUTPUT_DIR, LITELLM_* and (CUSTOM_)TIKTOKEN_CACHE_DIR variable is
  dropped (litellm then points tiktoken at its bundled encodings, offline), and NOOA's user dir
  (~/.config/nooa: llm_config.yaml, settings.yaml, secrets.yaml) and
  project dir (<nearest pyproject.toml>/.nooa) are set to STATE/user and
  STATE/project. secrets.yaml is never loaded (only the `nooa` command
  does that).
* No network at import or start: litellm's model-cost map is its bundled
  copy (LITELLM_LOCAL_MODEL_COST_MAP=True, not fetched from GitHub), no
  .env is read (litellm calls python-dotenv's load_dotenv() at import in
  its default DEV mode: LITELLM_MODE=PRODUCTION, and dotenv's two functions
  are replaced before anything imports them), and NOOA's tracing, which
  probes localhost:5001 (or OTLP_ENDPOINT) when the first agent is made and
  then sends every prompt there, is off.
* The base URL and key are arguments to the client: OPENAI_BASE_URL,
  OPENAI_API_BASE and registry aliases are never read.
* The conversation is written to STATE/transcript.json for capture, after
  every model response (the messages sent and the answer, so a run killed
  mid-cell leaves its last call without a result) and at the end (with the
  turn's result). Each write is atomic (a temporary file renamed over it).
  Token usage (additive fields, absent where litellm reported none): each
  assistant message that is one of this client's answers carries `model`
  and `usage`, that answer's litellm usage with only its integer fields
  (`prompt_tokens`, `completion_tokens`, `total_tokens`, ... and the
  integer fields of `prompt_tokens_details` / `completion_tokens_details`,
  e.g. `cached_tokens`); the document's `usage` is the sum over every answer
  so far, those NOOA no longer sends (a compacted history, a side call)
  included. NOOA rebuilds the history it sends on each call (its own dicts:
  content null, arguments re-serialized), so an earlier answer is found in
  it by its tool call ids, or by its text when it made no call; an answer
  split over several messages (one per tool call) has its usage on the
  first.
* A CA bundle variable (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE)
  naming no file is dropped (httpx refuses one); the pinned certifi is used.
"""
import json
import os
import site
import stat
import sys
from pathlib import Path

# Linux's MAX_ARG_STRLEN less the NUL: the runner's bound on one argv word.
PROMPT_MAX = 131071
USAGE = "usage: nooa --prompt-file PATH --model MODEL --base-url URL --state-dir DIR"
# Variables of the environment that would configure NOOA or litellm.
DROPPED_PREFIXES = ("NEMO_OO_", "NEMO_TRACE_", "NOOA_", "LITELLM_")
DROPPED = (
    "OTLP_ENDPOINT",
    "TRACE_EXPERIMENT",
    "ATIF_OUTPUT_DIR",
    "CUSTOM_TIKTOKEN_CACHE_DIR",
    "TIKTOKEN_CACHE_DIR",
)


def parse(argv):
    """The options as a dict, or None when they are not exactly right."""
    want = {"--prompt-file", "--model", "--base-url", "--state-dir"}
    opts = {}
    i = 0
    while i < len(argv):
        if argv[i] not in want or i + 1 >= len(argv) or argv[i] in opts:
            return None
        opts[argv[i]] = argv[i + 1]
        i += 2
    return opts if opts.keys() == want else None


def refuse(why):
    sys.stderr.write("nooa boot.py: %s; NOOA was not started\n" % why)
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


def private_environment(state):
    """NOOA's and litellm's settings, none from the task (see the module doc)."""
    for var in list(os.environ):
        if var.startswith(DROPPED_PREFIXES) or var in DROPPED:
            del os.environ[var]
    for var in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        if var in os.environ and not os.path.isfile(os.environ[var]):
            del os.environ[var]
    os.environ["NEMO_OO_USER_DIR"] = str(state / "user")
    os.environ["NEMO_OO_PROJECT_DIR"] = str(state / "project")
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["LITELLM_MODE"] = "PRODUCTION"


def seal_imports():
    """No .env, and no tracing (see the module doc)."""
    import dotenv

    dotenv.load_dotenv = lambda *a, **k: False
    dotenv.find_dotenv = lambda *a, **k: ""
    import nooa.agent

    nooa.agent._auto_tracing_attempted = True


def setup(state):
    """The environment and imports every run gets (see the module doc)."""
    private_openssl_config()
    private_environment(state)
    site.addsitedir(os.path.join(os.path.dirname(os.path.realpath(__file__)), "site-packages"))
    sys.argv = ["nooa"]
    seal_imports()


def usage_of(usage):
    """litellm's usage (a dict, maybe nested) with only its integer fields,
    or None when none is left."""
    if not isinstance(usage, dict):
        return None
    out = {}
    for key, value in usage.items():
        if isinstance(value, dict):
            value = usage_of(value)
        elif isinstance(value, bool) or not isinstance(value, int):
            value = None
        if value is not None:
            out[str(key)] = value
    return out or None


def add_usage(total, usage):
    """The sum of two usage dicts of integers (nested ones summed alike)."""
    out = dict(total)
    for key, value in usage.items():
        if isinstance(value, dict):
            out[key] = add_usage(out.get(key) or {}, value)
        else:
            out[key] = out.get(key, 0) + value
    return out


def call_ids(message):
    """The tool call ids of an assistant message."""
    calls = message.get("tool_calls") or []
    return {c.get("id") for c in calls if isinstance(c, dict) and c.get("id")}


class Answers:
    """Every answer of this client, with its usage (see the module doc)."""

    def __init__(self, model):
        self.model = model
        self.answers = []  # (tool call ids, text, usage)
        self.total = None

    def add(self, message, usage):
        usage = usage_of(usage)
        self.answers.append((call_ids(message), message.get("content"), usage))
        if usage is not None:
            self.total = add_usage(self.total or {}, usage)

    def annotate(self, msgs):
        """`model` and `usage` on each message of msgs (copies) that is an
        answer, the first message of each answer only."""
        used = set()
        for m in msgs:
            if m.get("role") != "assistant":
                continue
            ids = call_ids(m)
            for n, (their_ids, text, usage) in enumerate(self.answers):
                if n in used:
                    continue
                if (ids & their_ids) if ids else (not their_ids and text == m.get("content")):
                    used.add(n)
                    m["model"] = self.model
                    if usage is not None:
                        m["usage"] = usage
                    break


def save(state, answers, messages, answer=None, result=None):
    """STATE/transcript.json: the chat messages, the answer added, the
    answers' usage, and the turn's result once there is one."""
    msgs = [dict(m) for m in messages]
    if answer is not None:
        msgs.append(dict(answer))
    answers.annotate(msgs)
    dump = {"model": answers.model, "messages": msgs, "result": result}
    if answers.total is not None:
        dump["usage"] = answers.total
    tmp = state / "transcript.json.tmp"
    tmp.write_text(json.dumps(dump, indent=1, default=str), encoding="utf-8")
    tmp.replace(state / "transcript.json")


async def run(opts, prompt, state):
    from nooa import Context
    from nooa.unifiedllm import CompletionClient
    from nooa_cli.coding import CodingAgent

    model = opts["--model"]
    last = {"messages": []}
    answers = Answers(model)

    class RecordingClient(CompletionClient):
        """NOOA's client; the conversation so far is saved after each answer."""

        async def acall(self, messages, *args, **kwargs):
            answer = await super().acall(messages, *args, **kwargs)
            answers.add(answer.assistant_message, answer.usage)
            last["messages"] = [*messages, answer.assistant_message]
            save(state, answers, messages, answer.assistant_message)
            return answer

    llm = RecordingClient(
        model="openai/" + model,
        api_base=opts["--base-url"],
        api_key=os.environ.get("OPENAI_API_KEY", ""),
        drop_params=True,
    )
    agent = CodingAgent(llm, cwd=os.getcwd())
    # The prompt, whole and verbatim, in a context block of every request:
    # NOOA shows the turn's notification only through its prefill cell,
    # pprinted (the prompt as a Python repr, cut after 2000 characters).
    agent.context["request"] = Context(prompt)
    try:
        result = await agent.handle({"user_messages": [prompt]})
    finally:
        await agent.close()
    outcome = {"kind": str(result.kind), "explanation": result.explanation}
    save(state, answers, last["messages"], result=outcome)
    return result


def main():
    if sys.argv[1:] == ["--version"]:
        # Nothing is written: the state dir named does not exist.
        setup(Path("/nonexistent/nooa-state"))
        import importlib.metadata

        import nooa_cli.coding  # noqa: F401 (the check: the agent imports)

        print("nooa", importlib.metadata.version("nooa"))
        return 0
    opts = parse(sys.argv[1:])
    if opts is None:
        print(USAGE, file=sys.stderr)
        return 2
    prompt = read_prompt(opts["--prompt-file"])
    state = Path(opts["--state-dir"]).absolute()
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    setup(state)
    state.mkdir(parents=True, exist_ok=True)
    import asyncio  # after setup(): asyncio imports ssl, which loads libcrypto's config

    result = asyncio.run(run(opts, prompt, state))
    print(result.explanation, file=answer)
    answer.close()
    if str(result.kind) != "DONE":
        print("nooa: the turn ended %s" % result.kind, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
