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

#: Harness -> its class in shforge.harbor.
CLASSES: Dict[str, str] = {
    "claude-code": "ClaudeCode",
    "cline": "Cline",
    "codex": "Codex",
    "gemini-cli": "GeminiCli",
    "hermes": "Hermes",
    "kilo": "Kilo",
    "nooa": "Nooa",
    "openclaw": "OpenClaw",
    "opencode": "OpenCode",
    "pi": "Pi",
    "qwen-code": "QwenCode",
    "stirrup": "Stirrup",
}
#: Any process of any harness (beside the supervisor's marker).
PATTERN = "codex|claude|cline|gemini|hermes|kilo|nooa|openclaw|opencode|qwen|stirrup|/pi( |$)|shforge-standin"
KEY = {"FAKE_KEY": "sk-shforge-fake-key-not-on-any-argv"}
#: Harnesses whose session data records no token usage (NOOA's transcript
#: has none): their trajectory has no token counts, nor AgentContext.
NO_USAGE = {"nooa"}
#: The task's agent timeout: OpenClaw and Kilo ran 290 s at load 25.
AGENT_TIMEOUT = 600
#: Trials at once: 2 cores shared with cargo test in CI.
N = int(os.environ.get("SHFORGE_HARBOR_N", "4"))


#: The generic agent with --agent-kwarg harness=codex stands for Codex in
#: the bookworm job (its class is in test_images.py's jobs).
GENERIC = {"codex"}


def import_path(harness: str, generic: bool = False) -> str:
    return "shforge.harbor:ShforgeAgent" if generic else f"shforge.harbor:{CLASSES[harness]}"


def agent(harness: str, url: str, generic: bool = False, **kwargs: str) -> Dict[str, object]:
    """One AgentConfig: the harness's class (or the generic agent with
    ``harness=NAME``), the fake model, its default API (no --api-format:
    the harness's first)."""
    if generic:
        kwargs = {"harness": harness, **kwargs}
    return {
        "import_path": import_path(harness, generic),
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
    for h, c in CLASSES.items():
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
    """The one job: twelve agents x one bookworm task, N at once."""
    for h in CLASSES:
        for f in wanted_artifacts(h):
            need_artifact(f)
    root = tmp_path_factory.mktemp("every-harness")
    proc, url = fake_model_server(root / "requests.jsonl")
    try:
        tok = f"harbor-{time.time_ns():x}-{os.getpid()}"
        task = write_task(root, tok, pattern=PATTERN, name="bookworm", agent_timeout=AGENT_TIMEOUT)
        job = run_job(root, [task], [agent(h, url, h in GENERIC) for h in CLASSES], n=N, env=KEY)
        print(f"\nharbor run -n {N}: {len(CLASSES)} harnesses on bookworm in {job.wall:.1f} s "
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


@pytest.mark.parametrize("harness", sorted(CLASSES))
def test_every_harness_bookworm(every_harness: Job, harness: str) -> None:
    check_rewarded(every_harness, import_path(harness, harness in GENERIC), "bookworm")


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
