"""Harness session dirs (``shforge harness``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional, Sequence

from . import _cli
from ._files import StrPath
from .errors import UsageError

#: The shipped harness profiles (``harnesses/*.toml``;
#: tests/python/test_api.py checks this list against them).
HarnessName = Literal[
    "claude-code", "cline", "codex", "continue-cli", "copilot-cli", "gemini-cli", "hermes", "kilo",
    "kimi-cli", "mini-swe-agent", "mistral-vibe", "nooa", "openclaw", "opencode", "pi", "qwen-code",
    "stirrup",
]
#: The model APIs a profile may speak.
Api = Literal["chat", "responses", "anthropic", "gemini"]
#: ``events``: timestamped stdout and stderr in events.log; ``direct``: stdout.log.
Mode = Literal["direct", "events"]
#: What ``shforge snapshot`` reads.
SnapshotKind = Literal[
    "claude-code", "cline", "codex", "continue-cli", "copilot-cli", "gemini-cli", "hermes", "kilo",
    "kimi-cli", "mini-swe-agent", "mistral-vibe", "nooa", "opencode", "pi", "qwen-code", "stirrup",
]


@dataclass(frozen=True)
class Capture:
    """Where the harness leaves its session data (``capture.json``), as
    paths inside the sandbox: exactly one of ``db`` and ``dir`` is set."""

    harness: str
    kind: Optional[SnapshotKind]
    """The ``shforge snapshot`` kind; None when there is no reader (openclaw)."""
    db: Optional[str] = None
    dir: Optional[str] = None


@dataclass(frozen=True)
class Session:
    """A session dir written on the host, to be placed at ``session_dir``."""

    path: Path
    """The host directory written."""
    session_dir: str
    """Where it must sit inside the sandbox."""
    capture: Capture

    @property
    def params(self) -> str:
        """``params.sh`` inside the sandbox: the runner's one argument."""
        return f"{self.session_dir.rstrip('/')}/params.sh"


def write_session(
    harness: Optional[HarnessName],
    out: StrPath,
    *,
    session_dir: str,
    workdir: str,
    entry: str,
    base_url: str,
    model: str,
    prompt: str,
    api: Optional[Api] = None,
    api_key_env: Optional[str] = None,
    mode: Mode = "events",
    keep_env: Sequence[str] = (),
    spec: Optional[StrPath] = None,
) -> Session:
    """Write the session dir of one rollout into ``out`` (absent or empty;
    written whole or not at all): params.sh, the harness's config, isolated
    HOME/TMPDIR/XDG dirs, prompt.txt and capture.json.

    ``session_dir`` and ``workdir`` are absolute paths inside the sandbox,
    ``entry`` the installer's last line, ``base_url`` the model server's
    root. The prompt goes through a pipe, never argv. The API key is never
    written: ``api_key_env`` names the variable carrying it in the sandbox.
    ``keep_env`` names variables of the sandbox's environment the CLI keeps
    although its runtime's table removes them (``LD_LIBRARY_PATH``,
    ``PYTHONPATH``, ... that the task's commands need).
    ``spec`` is an adapter's own harness spec (TOML, the format of the
    source tree's ``harnesses/*.toml``), used instead of a shipped name:
    give ``harness=None`` with it.
    Bad input raises :class:`~shforge.errors.UsageError` (code 2).
    """
    if (harness is None) == (spec is None):
        raise UsageError("shforge: write_session needs exactly one of a harness name and spec", 2)
    args = ["harness", *([harness] if harness is not None else ["--spec", str(spec)]), "--out", str(out), f"--session-dir={session_dir}"]
    args += [f"--workdir={workdir}", f"--entry={entry}", f"--base-url={base_url}"]
    args += [f"--model={model}", f"--mode={mode}", "--prompt-file", "-"]
    if api is not None:
        args.append(f"--api={api}")
    if api_key_env is not None:
        args.append(f"--api-key-env={api_key_env}")
    args += [f"--keep-env={name}" for name in keep_env]
    _cli.run(args, stdin=prompt.encode("utf-8"))
    doc = json.loads((Path(out) / "capture.json").read_text(encoding="utf-8"))
    capture = Capture(
        harness=doc["harness"], kind=doc["kind"], db=doc.get("db"), dir=doc.get("dir")
    )
    return Session(path=Path(out), session_dir=session_dir, capture=capture)
