"""Every shipped harness in real Harbor 0.25 trials, all at once: one
``harbor run -c JOB -n N`` with the twelve agent classes on one bookworm
task (item "one trial per shipped harness"), each trial rewarded by a
verifier that checks the deliverable and finds no agent process left, each
``trajectory.json`` validated with Harbor's own models."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from _harbor import Job, fake_model_server, harbor_run, run_job, write_task
from conftest import need_artifact

#: The checkout's harness specs: the shipped list (build.rs registers every
#: harnesses/*.toml), so a harness added there is tried here with no edit.
HARNESSES_DIR = Path(__file__).resolve().parents[2] / "harnesses"
SHIPPED: List[str] = sorted(p.stem for p in HARNESSES_DIR.glob("*.toml"))
#: Shipped harnesses that cannot run in the bookworm job, and why; each is
#: tried where it can run (test_images.py's MATRIX). None now: Copilot CLI,
#: which refuses to start without trust roots, gets a trust anchor that
#: vouches for nothing from its session (harnesses/copilot-cli.toml), so it
#: runs here with no CA bundle, and in test_images.py's bookworm-ca image
#: with one.
ELSEWHERE: Dict[str, str] = {}
#: SHFORGE_HARBOR_HARNESSES=a,b: only these harnesses' trials (a quicker
#: run while working on them); every shipped one when unset.
ONLY = {h for h in os.environ.get("SHFORGE_HARBOR_HARNESSES", "").split(",") if h}
BOOKWORM: List[str] = [h for h in SHIPPED if h not in ELSEWHERE and (not ONLY or h in ONLY)]


def classes() -> Dict[str, str]:
    """Harness -> its class in shforge.harbor (every class naming one)."""
    import shforge.harbor as sh

    found = {}
    for name in sh.__all__:
        h = getattr(getattr(sh, name), "HARNESS", None)
        if isinstance(h, str):
            found[h] = name
    return found


#: Any process of any harness (beside the supervisor's marker).
PATTERN = ("codex|claude|cline|gemini|hermes|kilo|nooa|openclaw|opencode|qwen|stirrup|/pi( |$)|"
           "continue|/cn( |$)|copilot|mini-swe-agent|/mini( |$)|kimi|vibe|shforge-standin")
KEY = {"FAKE_KEY": "sk-shforge-fake-key-not-on-any-argv"}
#: Harnesses whose session data records no token usage: their trajectory
#: has no token counts, nor AgentContext. None since NOOA's boot.py records
#: each answer's usage (bundle r2).
NO_USAGE: set[str] = set()
#: The task's agent timeout: OpenClaw and Kilo ran 290 s at load 25.
AGENT_TIMEOUT = 600
#: Trials at once: 2 cores shared with cargo test in CI.
N = int(os.environ.get("SHFORGE_HARBOR_N", "4"))


#: The generic agent with --agent-kwarg harness=codex stands for Codex in
#: the bookworm job (its class is in test_images.py's jobs).
GENERIC = {"codex"}


def import_path(harness: str, generic: bool = False) -> str:
    """The harness's class, else (generic, or a shipped harness with no
    class yet) the generic agent with ``harness=NAME``."""
    cls = None if generic else classes().get(harness)
    return f"shforge.harbor:{cls}" if cls else "shforge.harbor:ShforgeAgent"


def agent(harness: str, url: str, generic: bool = False, **kwargs: str) -> Dict[str, object]:
    """One AgentConfig: the harness's class (or the generic agent with
    ``harness=NAME``), the fake model, its default API (no --api-format:
    the harness's first)."""
    path = import_path(harness, generic)
    if path.endswith(":ShforgeAgent"):
        kwargs = {"harness": harness, **kwargs}
    return {
        "import_path": path,
        "model_name": "fake-model",
        "base_url": url,
        "model_api_key_name": "FAKE_KEY",
        "kwargs": {"workdir": "/app", **kwargs},
    }


def wanted_artifacts(harness: str) -> List[str]:
    import shforge
    from shforge._harbor_rollout import installer_artifacts

    return [f for f, a in installer_artifacts(Path(shforge.installer_path(harness))) if a in ("x86_64", "any")]


def harness_of(import_path: str, trial: object) -> str:
    """The harness a trial ran: its class's, or the generic agent's kwarg."""
    cls = import_path.rsplit(":", 1)[-1]
    for h, c in classes().items():
        if c == cls:
            return h
    return str(getattr(trial, "result")["config"]["agent"]["kwargs"].get("harness"))


def check_rewarded(job: Job, import_path: str, task: str) -> None:
    from harbor.models.trajectories import Trajectory

    trial = job.by(import_path, task)
    assert trial.dir is not None
    left = trial.dir / "verifier" / "left.txt"
    why = (json.dumps(trial.result.get("exception_info"))
           + ("\n" + left.read_text() if left.exists() else "")
           + ("\n" + (trial.dir / "trial.log").read_text()[-3000:] if (trial.dir / "trial.log").exists() else ""))
    assert trial.reward == 1.0, why
    ar = trial.result["agent_result"]
    if harness_of(import_path, trial) not in NO_USAGE:
        assert ar["n_input_tokens"] and ar["n_input_tokens"] > 0, ar
    meta = ar["metadata"]["shforge"]
    assert meta["outcome"]["status"] == "completed" and meta["stop"]["cleanup_confirmed"], meta
    # The key's value went only into the launch's environment: not in
    # Harbor's log of the trial, nor in anything the agent left on the host.
    assert KEY["FAKE_KEY"] not in (trial.dir / "trial.log").read_text(errors="replace")
    for f in (trial.dir / "agent").rglob("*"):
        if f.is_file() and f.stat().st_size < 10_000_000:
            assert KEY["FAKE_KEY"].encode() not in f.read_bytes(), f
    doc = json.loads((trial.dir / "agent" / "trajectory.json").read_text())
    Trajectory.model_validate(doc)
    assert doc["steps"], doc


@pytest.fixture(scope="module")
def every_harness(tmp_path_factory: pytest.TempPathFactory, harbor_ready: None) -> Iterator[Job]:
    """The one job: every shipped harness that runs in bookworm (not
    ELSEWHERE) x one bookworm task, N at once."""
    for h in BOOKWORM:
        for f in wanted_artifacts(h):
            need_artifact(f)
    root = tmp_path_factory.mktemp("every-harness")
    proc, url = fake_model_server(root / "requests.jsonl")
    try:
        tok = f"harbor-{time.time_ns():x}-{os.getpid()}"
        task = write_task(root, tok, pattern=PATTERN, name="bookworm", agent_timeout=AGENT_TIMEOUT)
        job = run_job(root, [task], [agent(h, url, h in GENERIC) for h in BOOKWORM], n=N, env=KEY)
        print(f"\nharbor run -n {N}: {len(BOOKWORM)} harnesses on bookworm in {job.wall:.1f} s "
              f"(exit {job.returncode}); per trial: "
              + ", ".join(f"{Path(str(t.dir)).name.split('__')[0]} {_wall(t):.0f} s" for t in job.trials))
        yield job
    finally:
        proc.terminate()
        proc.wait()


def _wall(trial: object) -> float:
    from datetime import datetime

    r = getattr(trial, "result")
    try:
        return (datetime.fromisoformat(r["finished_at"]) - datetime.fromisoformat(r["started_at"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        return float("nan")


@pytest.mark.parametrize("harness", SHIPPED)
def test_every_harness_bookworm(request: pytest.FixtureRequest, harness: str) -> None:
    if harness in ELSEWHERE:
        pytest.skip(f"{harness} not in the bookworm job: {ELSEWHERE[harness]}")
    if harness not in BOOKWORM:
        pytest.skip(f"{harness} not in SHFORGE_HARBOR_HARNESSES")
    every_harness: Job = request.getfixturevalue("every_harness")
    check_rewarded(every_harness, import_path(harness, harness in GENERIC), "bookworm")


def test_every_shipped_harness_is_tried(harbor_ready: None) -> None:
    """No shipped harness forgotten: each has its class in shforge.harbor,
    its APIs (the spec's ``apis``) in shforge's table, a pinned version in
    the catalog, and a trial: the bookworm job, else an image job with the
    reason named in ELSEWHERE."""
    import tomllib

    from shforge._harbor_rollout import HARNESS_APIS, catalog
    from test_images import MATRIX

    assert SHIPPED, HARNESSES_DIR
    have, known = classes(), catalog()
    in_images = {h for _, hs in MATRIX.values() for h in hs}
    gaps = []
    for h in SHIPPED:
        apis = tomllib.loads((HARNESSES_DIR / f"{h}.toml").read_text())["apis"]
        if h not in have:
            gaps.append(f"{h}: no class in shforge.harbor (add `X = _one({h!r}, 'X')` and __all__)")
        if HARNESS_APIS.get(h) != apis:
            gaps.append(f"{h}: shforge._harbor_rollout.HARNESS_APIS says {HARNESS_APIS.get(h)}, its spec {apis}")
        if h not in known:
            gaps.append(f"{h}: not in shforge.harbor's catalog (shforge list)")
        if h in ELSEWHERE and h not in in_images:
            gaps.append(f"{h}: kept out of the bookworm job but in no image job of test_images.py")
    assert not gaps, "\n".join(gaps)


def test_harbor_run_cli_several_tasks(tmp_path: Path, harbor_ready: None) -> None:
    """`harbor run -p DATASET -a shforge.harbor:Codex -n 3` with Harbor's own
    flags (no job file): three tasks, three trials at once, each rewarded
    for its own token."""
    for f in wanted_artifacts("codex"):
        need_artifact(f)
    proc, url = fake_model_server(tmp_path / "requests.jsonl")
    try:
        dataset = tmp_path / "dataset"
        names = [f"t{i}" for i in range(3)]
        for name in names:
            write_task(dataset, f"harbor-{time.time_ns():x}-{name}", pattern=PATTERN, name=name)
        (dataset / "overlay.yaml").rename(tmp_path / "overlay.yaml")
        job = harbor_run(tmp_path, [
            "-p", str(dataset), "-a", "shforge.harbor:Codex", "-n", "3", "-e", "docker",
            "-m", "fake-model", "--base-url", url, "--api-key-name", "FAKE_KEY", "--ak", "workdir=/app",
            "--extra-docker-compose", str(tmp_path / "overlay.yaml"),
            "-o", str(tmp_path / "jobs"), "--job-name", "job", "-y", "-q",
        ], env=KEY)
        print(f"\nharbor run -a shforge.harbor:Codex -n 3, 3 tasks: {job.wall:.1f} s")
        assert job.returncode == 0, job.output[-2000:]
        assert len(job.trials) == 3, job.output[-2000:]
        for name in names:
            check_rewarded(job, "shforge.harbor:Codex", name)
    finally:
        proc.terminate()
        proc.wait()
