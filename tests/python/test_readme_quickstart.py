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

import dockerfix
from conftest import CHECKOUT

ARTIFACTS = Path(os.environ.get("SHFORGE_ARTIFACTS", "/var/cache/shforge/artifacts"))
#: The artifact installers/codex.toml pins for x86_64.
CODEX_ARTIFACT = "openai-codex-0.171.0-linux-x64.tgz"


def block(name: str) -> str:
    """The body of the ```python block right after the README's line
    ``<!-- quickstart: NAME -->``."""
    readme = (CHECKOUT / "README.md").read_text()
    marker = f"<!-- quickstart: {name} -->\n"
    assert marker in readme, f"README.md has no {name} quick start marker"
    rest = readme.split(marker, 1)[1]
    assert rest.startswith("```python\n"), rest[:40]
    body = rest[len("```python\n") :]
    return body[: body.index("\n```\n") + 1]


def quickstart() -> str:
    """The host quick start in Python."""
    return block("python")


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


#: The image the Docker quick start runs in here: the Alpine-like one
#: without bash (.ci/docker.sh imports it from the musl test root), the
#: hardest case the README promises.
DOCKER_IMAGE = "local/shforge-musl-nobash:test"


def docker_quickstart() -> str:
    """The Docker quick start."""
    return block("docker")


def test_the_docker_block_is_python() -> None:
    compile(docker_quickstart(), "README.md docker quickstart", "exec")


def docker_image_missing() -> str:
    """Why the Docker quick start cannot run here ('' when it can)."""
    if os.environ.get(dockerfix.SKIP_ENV) == "1":
        return f"{dockerfix.SKIP_ENV}=1"
    try:
        probe = subprocess.run(
            ["docker", "image", "inspect", DOCKER_IMAGE],
            stdin=subprocess.DEVNULL, capture_output=True, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        return "no docker client"
    if probe.returncode != 0:
        return f"docker or the image {DOCKER_IMAGE} is missing (sh .ci/docker.sh)"
    return ""


def test_the_docker_quickstart_runs_as_written(tmp_path: Path) -> None:
    why = docker_image_missing()
    if why:
        dockerfix.loud_skip(why)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), SHFORGE_ARTIFACTS=str(ARTIFACTS), SHFORGE_IMAGE=DOCKER_IMAGE)
    run = subprocess.run(
        [sys.executable, "-c", docker_quickstart()],
        env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
    )  # fmt: skip
    said = f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert run.returncode == 0, said
    assert "receipt clean: True return code: 0\n" in run.stdout, said
    assert "deliverable: hello-docker\n" in run.stdout, said
    assert "outcome: completed tokens:" in run.stdout, said
    # The host's temp dir holds nothing of the rollout afterwards.
    assert list(tmp.iterdir()) == [], said
