"""The README's Python quick start, run from the README's own text against
the installed package, so it cannot rot: the fenced block after the line
``<!-- quickstart: python -->`` (tests/it/readme.rs runs the CLI one).

One real Codex rollout: its pinned artifact from ``SHFORGE_ARTIFACTS``
(default /var/cache/shforge/artifacts), skipped loudly when it is missing,
a failure under ``SHFORGE_REQUIRE_SHELLS=1``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CHECKOUT

ARTIFACTS = Path(os.environ.get("SHFORGE_ARTIFACTS", "/var/cache/shforge/artifacts"))
#: The artifact installers/codex.toml pins for x86_64.
CODEX_ARTIFACT = "openai-codex-0.171.0-linux-x64.tgz"
MARKER = "<!-- quickstart: python -->\n"


def quickstart() -> str:
    """The body of the fenced block right after the marker line."""
    readme = (CHECKOUT / "README.md").read_text()
    assert MARKER in readme, "README.md has no python quick start marker"
    rest = readme.split(MARKER, 1)[1]
    assert rest.startswith("```python\n"), rest[:40]
    body = rest[len("```python\n") :]
    end = body.index("\n```\n")
    return body[: end + 1]


def test_the_block_is_python() -> None:
    compile(quickstart(), "README.md quickstart", "exec")


def test_the_python_quickstart_runs_as_written(tmp_path: Path) -> None:
    if not (ARTIFACTS / CODEX_ARTIFACT).is_file():
        message = f"SKIPPED LOUDLY: {ARTIFACTS / CODEX_ARTIFACT} is missing (run shforge fetch codex --into {ARTIFACTS})"
        if os.environ.get("SHFORGE_REQUIRE_SHELLS") == "1":
            pytest.fail(message + " and SHFORGE_REQUIRE_SHELLS=1")
        pytest.skip(message)
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = dict(os.environ, HOME=str(home), TMPDIR=str(tmp), SHFORGE_ARTIFACTS=str(ARTIFACTS))
    run = subprocess.run(
        [sys.executable, "-c", quickstart()],
        env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
    )  # fmt: skip
    said = f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert run.returncode == 0, said
    assert "deliverable: hello-shforge\n" in run.stdout, said
    assert "receipt clean: True return code: 0\n" in run.stdout, said
    assert "'tool': 'exec_command'" in run.stdout, said
    results = list(tmp.glob("*/out/result.txt"))
    assert [r.read_text() for r in results] == ["hello-shforge"], said
