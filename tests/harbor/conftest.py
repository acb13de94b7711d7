"""Harbor trials need docker (with compose v2) and Harbor 0.25 in this
Python (.ci/harbor.sh makes that venv). Without them every test here is
skipped loudly; SHFORGE_REQUIRE_HARBOR=1 turns the skip into a failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


def _missing() -> str:
    try:
        import harbor  # noqa: F401
    except ImportError:
        return f"harbor is not importable in {sys.executable} (run sh .ci/harbor.sh and use the python it prints)"
    try:
        ok = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30).returncode == 0
        ok = ok and subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        return "docker with compose v2 is not usable (sh .ci/docker.sh, then sh .ci/harbor.sh)"
    image = subprocess.run(["docker", "image", "inspect", "local/shforge-bookworm:test"], capture_output=True)
    if image.returncode != 0:
        return "image local/shforge-bookworm:test is missing (sh .ci/docker.sh)"
    return ""


@pytest.fixture(scope="session")
def harbor_ready() -> None:
    why = _missing()
    if why:
        message = f"SKIPPED LOUDLY: Harbor trials: {why}"
        if os.environ.get("SHFORGE_REQUIRE_HARBOR") == "1":
            pytest.fail(message + " and SHFORGE_REQUIRE_HARBOR=1")
        print(message, file=sys.stderr)
        pytest.skip(message)


def need_artifact(name: str) -> None:
    from _harbor import ARTIFACTS

    if not (ARTIFACTS / name).is_file():
        message = f"SKIPPED LOUDLY: {ARTIFACTS / name} is missing (shforge fetch)"
        if os.environ.get("SHFORGE_REQUIRE_HARBOR") == "1":
            pytest.fail(message + " and SHFORGE_REQUIRE_HARBOR=1")
        pytest.skip(message)
