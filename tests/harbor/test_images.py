"""A subset of the harnesses in images Harbor's own agents cannot use, in
one ``harbor run -c JOB -n N`` per image, the jobs side by side:

* musl-only (local/shforge-musl:test: busybox + musl, no glibc, no package
  manager): Codex (static musl), Claude Code and OpenCode (their musl builds);
* bullseye (glibc 2.31): Codex, Hermes (Python) and Gemini CLI (Node);
* bookworm-ca (local/shforge-bookworm:test plus the host's CA bundle at
  /etc/ssl/certs/ca-certificates.crt): Copilot CLI, which refuses to start
  without trust roots even for a plain-http model, and the bookworm test
  image has none;
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
from test_harnesses import AGENT_TIMEOUT, KEY, ONLY, PATTERN, agent, check_rewarded, import_path, wanted_artifacts

IMPOSTOR = "local/shforge-impostor:test"
BOOKWORM_CA = "local/shforge-bookworm-ca:test"
#: The host's CA bundle, copied into BOOKWORM_CA.
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
#: image tag -> (task name, harnesses)
MATRIX: Dict[str, tuple[str, List[str]]] = {
    "local/shforge-musl:test": ("musl", ["codex", "claude-code", "opencode"]),
    "local/shforge-bullseye:test": ("bullseye", ["codex", "hermes", "gemini-cli"]),
    IMPOSTOR: ("impostor", ["hermes", "gemini-cli"]),
    BOOKWORM_CA: ("bookworm-ca", ["copilot-cli"]),
}
CASES = [(task, h) for task, hs in MATRIX.values() for h in hs]
#: The jobs this run makes (SHFORGE_HARBOR_HARNESSES narrows them).
RUN: Dict[str, tuple[str, List[str]]] = {
    image: (task, [h for h in hs if not ONLY or h in ONLY]) for image, (task, hs) in MATRIX.items()
    if any(not ONLY or h in ONLY for h in hs)
}


def build_impostor() -> None:
    """The impostor image, FROM local/shforge-bookworm:test (no pull; the
    legacy builder with no network, as BuildKit wants a bridge)."""
    env = dict(os.environ, DOCKER_BUILDKIT="0")
    subprocess.run(["docker", "build", "-q", "--network", "none", "-t", IMPOSTOR, str(Path(__file__).parent / "impostor")],
                   check=True, env=env, stdout=subprocess.DEVNULL)


def build_bookworm_ca(context: Path) -> None:
    """BOOKWORM_CA: the bookworm test image plus the host's CA bundle (a
    file COPY, no network, no package manager)."""
    assert CA_BUNDLE.is_file(), f"{CA_BUNDLE}: the host has no CA bundle to give Copilot CLI"
    context.mkdir(parents=True, exist_ok=True)
    (context / "ca-certificates.crt").write_bytes(CA_BUNDLE.read_bytes())
    (context / "Dockerfile").write_text(
        "FROM local/shforge-bookworm:test\nCOPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt\n")
    env = dict(os.environ, DOCKER_BUILDKIT="0")
    subprocess.run(["docker", "build", "-q", "--network", "none", "-t", BOOKWORM_CA, str(context)],
                   check=True, env=env, stdout=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def image_jobs(tmp_path_factory: pytest.TempPathFactory, harbor_ready: None) -> Iterator[Dict[str, Job]]:
    for _, hs in RUN.values():
        for h in hs:
            for f in wanted_artifacts(h):
                need_artifact(f)
    musl = [f for h in MATRIX["local/shforge-musl:test"][1] for f in wanted_artifacts(h) if "musl" in f]
    assert musl, "no musl artifact named by the musl harnesses' installers"
    root = tmp_path_factory.mktemp("images")
    if IMPOSTOR in RUN:
        build_impostor()
    if BOOKWORM_CA in RUN:
        build_bookworm_ca(root / "ca-image")
    proc, url = fake_model_server(root / "requests.jsonl")
    try:
        tok = f"harbor-{time.time_ns():x}-{os.getpid()}"
        n = max(1, int(os.environ.get("SHFORGE_HARBOR_N", "4")) // len(RUN) + 1)

        def one(image: str) -> Job:
            name, hs = RUN[image]
            task = write_task(root / name, tok, image=image, pattern=PATTERN, name=name, agent_timeout=AGENT_TIMEOUT)
            return run_job(root / name, [task], [agent(h, url) for h in hs], n=n, env=KEY)

        t0 = time.monotonic()
        with ThreadPoolExecutor(len(RUN)) as pool:
            jobs = dict(zip([RUN[i][0] for i in RUN], pool.map(one, list(RUN))))
        n_trials = sum(len(hs) for _, hs in RUN.values())
        print(f"\n{n_trials} trials in {len(RUN)} images, {len(RUN)} harbor jobs side by side: "
              f"{time.monotonic() - t0:.1f} s")
        yield jobs
    finally:
        proc.terminate()
        proc.wait()


@pytest.mark.parametrize("task,harness", CASES)
def test_image(request: pytest.FixtureRequest, task: str, harness: str) -> None:
    if ONLY and harness not in ONLY:
        pytest.skip(f"{harness} not in SHFORGE_HARBOR_HARNESSES")
    image_jobs: Dict[str, Job] = request.getfixturevalue("image_jobs")
    check_rewarded(image_jobs[task], import_path(harness), task)
