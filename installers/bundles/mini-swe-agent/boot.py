"""Run mini-swe-agent (PyPI mini-swe-agent) headless, from the site-packages
next to this file.

`mini -y --exit-immediately -t TASK` is mini-swe-agent's own headless run
(Harbor's adapter uses it); this file does what its `main` does (mini.yaml,
the litellm model, the local environment, the interactive agent in yolo mode
with no exit confirmation) with the task read from a file instead of argv.
Run as `python -I -B boot.py ARGS` (bin/run does): -I keeps PYTHON*
variables, the user site and the working directory off sys.path, so a
minisweagent.py or sitecustomize.py of the task is never imported;
site-packages comes after the standard library.

    boot.py --prompt-file PATH --model MODEL --base-url URL --state-dir DIR
    boot.py --version     imports mini-swe-agent's agent and prints
                          `mini-swe-agent VERSION`

The model is litellm's `openai/MODEL` (OpenAI chat completions, one `bash`
tool) at URL with the key from OPENAI_API_KEY (the environment's). The agent's only tool runs
`bash -c` in the working directory (the task's); it ends when a command's
output starts with the line COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT. Prints
the submission (that output's other lines) on stdout, and only that:
whatever else is written to stdout (the agent's rich panels) goes to
stderr. Exit 0 when the agent submitted, 1 when it stopped otherwise
(RepeatedFormatError, LimitsExceeded, an API error: the exit status on
stderr), 2 on bad arguments, 125 on an unusable prompt file.

What is pinned here, and why:
* The prompt file is read as the runner reads RUNNER_ARG_FILE: a regular
  file of at most 131071 bytes and no NUL, read bounded, its bytes kept
  exactly (os.fsdecode). Anything else is one line on stderr and exit 125.
* libcrypto loads an empty config (os.devnull), never the image's
  openssl.cnf or the task's OPENSSL_CONF; the task's value is put back at
  once for the tools.
* Nothing of mini-swe-agent's configuration comes from the task or the
  image: every MSWEA_* and LITELLM_* variable is dropped; the config is the
  builtin mini.yaml by its absolute path (`-c mini.yaml` would read a
  mini.yaml of the working directory first); its global config dir (the
  `.env` it loads, default ~/.config/mini-swe-agent) is STATE/config; its
  first-run setup wizard is never reached (the run does not go through
  `mini`).
* No network at import or start: litellm's model-cost map is its bundled
  copy (LITELLM_LOCAL_MODEL_COST_MAP=True), no .env of the working
  directory is read (litellm calls python-dotenv's load_dotenv() at import
  in its default DEV mode: LITELLM_MODE=PRODUCTION, and dotenv's
  find_dotenv is replaced), cost tracking ignores unknown models (a local
  model has no price: the run would stop at the first answer).
* The base URL is an argument to the client (model_kwargs api_base):
  OPENAI_BASE_URL and OPENAI_API_BASE are never read. The key is litellm's
  openai provider's OPENAI_API_KEY, read from the environment, never put
  in the config (mini saves the model's config in the trajectory).
* The trajectory (mini-swe-agent's own format: `messages` in OpenAI chat
  form with an `extra` each, `info.exit_status`, `info.model_stats`) is
  STATE/trajectory.json, written by the agent after every step and here
  also after every model response (so a run killed mid-command leaves its
  last call without a result; the agent alone saves only once the step's
  commands have ended); each write is atomic (a temporary file renamed
  over it): the capture.
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
USAGE = "usage: mini-swe-agent --prompt-file PATH --model MODEL --base-url URL --state-dir DIR"
DROPPED_PREFIXES = ("MSWEA_", "LITELLM_")


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
    sys.stderr.write("mini-swe-agent boot.py: %s; mini-swe-agent was not started\n" % why)
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


def setup(config_dir):
    """The environment and imports every run gets (see the module doc)."""
    private_openssl_config()
    for var in list(os.environ):
        if var.startswith(DROPPED_PREFIXES):
            del os.environ[var]
    for var in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        if var in os.environ and not os.path.isfile(os.environ[var]):
            del os.environ[var]
    os.environ["MSWEA_GLOBAL_CONFIG_DIR"] = str(config_dir)
    os.environ["MSWEA_SILENT_STARTUP"] = "1"
    os.environ["MSWEA_CONFIGURED"] = "true"
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["LITELLM_MODE"] = "PRODUCTION"
    site.addsitedir(os.path.join(os.path.dirname(os.path.realpath(__file__)), "site-packages"))
    sys.argv = ["mini"]
    import dotenv

    # Only an explicit path is loaded (mini-swe-agent's STATE/config/.env);
    # no search upwards from the working directory.
    dotenv.find_dotenv = lambda *a, **k: ""


def save_atomic(path, data):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
    tmp.replace(path)


def run(opts, prompt, state):
    import yaml
    from minisweagent.agents.interactive import InteractiveAgent
    from minisweagent.config import builtin_config_dir
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_model import LitellmModel
    from minisweagent.utils.serialize import recursive_merge

    config = yaml.safe_load((builtin_config_dir / "mini.yaml").read_text(encoding="utf-8"))
    config = recursive_merge(
        config,
        {
            "agent": {"mode": "yolo", "confirm_exit": False},
            "model": {
                "model_name": "openai/" + opts["--model"],
                "cost_tracking": "ignore_errors",
                # The key stays in the environment (litellm's openai
                # provider reads OPENAI_API_KEY): in model_kwargs it would
                # be saved in the trajectory's info.config.model.
                "model_kwargs": {"api_base": opts["--base-url"]},
            },
        },
    )
    out = state / "trajectory.json"

    class Agent(InteractiveAgent):
        """mini's agent; each save is atomic (see the module doc)."""

        def save(self, path, *extra_dicts):
            data = self.serialize(*extra_dicts)
            save_atomic(out, data)
            return data

        def query(self):
            message = super().query()
            self.save(out)
            return message

    model = LitellmModel(**config.get("model", {}))
    env = LocalEnvironment(**config.get("environment", {}))
    agent = Agent(model, env, **config.get("agent", {}))
    try:
        return agent.run(prompt)
    except Exception as e:
        print("mini-swe-agent: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return {"exit_status": type(e).__name__, "submission": ""}


def main():
    if sys.argv[1:] == ["--version"]:
        # Nothing is written: mini-swe-agent's import makes its global
        # config dir (here the bundle's own, which exists and has no .env).
        setup(Path(os.path.dirname(os.path.realpath(__file__))))
        import minisweagent.agents.interactive  # noqa: F401 (the check: the agent imports)
        import minisweagent.models.litellm_model  # noqa: F401

        print("mini-swe-agent", minisweagent.__version__)
        return 0
    opts = parse(sys.argv[1:])
    if opts is None:
        print(USAGE, file=sys.stderr)
        return 2
    prompt = read_prompt(opts["--prompt-file"])
    state = Path(opts["--state-dir"]).absolute()
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    state.mkdir(parents=True, exist_ok=True)
    setup(state / "config")
    result = run(opts, prompt, state)
    print(result.get("submission", ""), file=answer, end="")
    answer.close()
    if result.get("exit_status") != "Submitted":
        print("mini-swe-agent: the agent stopped: %s" % result.get("exit_status"), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
