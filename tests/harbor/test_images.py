"""A subset of the harnesses in images Harbor's own agents cannot use, in
one ``harbor run -c JOB -n N`` per image, the jobs side by side:

* musl-only (local/shforge-musl:test: busybox + musl, no glibc, no package
  manager): Codex (static musl), Claude Code and OpenCode (their musl builds);
* bullseye (glibc 2.31): Codex, Hermes (Python) and Gemini CLI (Node);
* the impostor-python image (tests/harbor/impostor: bookworm whose python3,
  python, node, nodejs, npm, npx record each run and fail): Hermes and
  Gemini CLI, which must use the runtimes they carry. The verifier gives
  reward 0 when any impostor ran.

The musl-nobash image cannot
host a Harbor trial at all: Harbor 0.25 runs every exec in the task's main
container as ``bash -c`` (oracle included), see docs/harbor.md."""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from _harbor import Job, fake_model_server, run_job, write_task
from conftest import need_artifact
from test_harnesses import AGENT_TIMEOUT, CLASSES, KEY, PATTERN, agent, check_rewarded, wanted_artifacts

IMPOSTOR = "local/shforge-impostor:test"
#: image tag -> (task name, harnesses)
MATRIX: Dict[str, tuple[str, List[str]]] = {
    "local/shforge-musl:test": ("musl", ["codex", "claude-code", "opencode"]),
    "local/shforge-bullseye:test": ("bullseye", ["codex", "hermes", "gemini-cli"]),
    IMPOSTOR: ("impostor", ["hermes", "gemini-cli"]),
}
CASES = [(task, h) for task, hs in MATRIX.values() for h in hs]


def build_impostor() -> None:
    """The impostor image, FROM local/shforge-bookworm:test (no pull; the
    legacy builder with no network, as BuildKit wants a bridge)."""
    env = dict(os.environ, DOCKER_BUILDKIT="0")
    subprocess.run(["docker", "build", "-q", "--network", "none", "-t", IMPOSTOR, str(Path(__file__).parent / "impostor")],
                   check=True, env=env, stdout=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def image_jobs(tmp_path_factory: pytest.TempPathFactory, harbor_ready: None) -> Iterator[Dict[str, Job]]:
    for _, hs in MATRIX.values():
        for h in hs:
            for f in wanted_artifacts(h):
                need_artifact(f)
    musl = [f for h in MATRIX["local/shforge-musl:test"][1] for f in wanted_artifacts(h) if "musl" in f]
    assert musl, "no musl artifact named by the musl harnesses' installers"
    build_impostor()
    root = tmp_path_factory.mktemp("images")
    proc, url = fake_model_server(root / "requests.jsonl")
    try:
        tok = f"harbor-{time.time_ns():x}-{os.getpid()}"
        n = max(1, int(os.environ.get("SHFORGE_HARBOR_N", "4")) // len(MATRIX) + 1)

        def one(image: str) -> Job:
            name, hs = MATRIX[image]
            task = write_task(root / name, tok, image=image, pattern=PATTERN, name=name, agent_timeout=AGENT_TIMEOUT)
            return run_job(root / name, [task], [agent(h, url) for h in hs], n=n, env=KEY)

        t0 = time.monotonic()
        with ThreadPoolExecutor(len(MATRIX)) as pool:
            jobs = dict(zip([MATRIX[i][0] for i in MATRIX], pool.map(one, list(MATRIX))))
        print(f"\n{len(CASES)} trials in {len(MATRIX)} images, {len(MATRIX)} harbor jobs side by side: "
              f"{time.monotonic() - t0:.1f} s")
        yield jobs
    finally:
        proc.terminate()
        proc.wait()


@pytest.mark.parametrize("task,harness", CASES)
def test_image(image_jobs: Dict[str, Job], task: str, harness: str) -> None:
    check_rewarded(image_jobs[task], f"shforge.harbor:{CLASSES[harness]}", task)
