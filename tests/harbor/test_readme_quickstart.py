"""The README's Harbor quick start, run from the README's own text: its
compose overlay (the block after ``<!-- quickstart: harbor-overlay -->``)
written as host-network.yaml and its shell block (after
``<!-- quickstart: harbor -->``) run with ``sh -e`` in the Harbor venv,
against a task dir and the fake model server these tests provide."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from _harbor import ARTIFACTS, VENV_BIN, fake_model_server, write_task

CHECKOUT = Path(__file__).resolve().parents[2]


def block(marker: str, lang: str) -> str:
    """The body of the fenced block right after ``<!-- quickstart: MARKER -->``."""
    readme = (CHECKOUT / "README.md").read_text()
    line = f"<!-- quickstart: {marker} -->\n"
    assert line in readme, f"README.md has no {marker} quick start"
    rest = readme.split(line, 1)[1]
    assert rest.startswith(f"```{lang}\n"), rest[:40]
    body = rest[len(f"```{lang}\n") :]
    return body[: body.index("\n```\n") + 1]


def test_the_harbor_quickstart_runs_as_written(tmp_path: Path, harbor_ready: None) -> None:
    token = "readme-harbor"
    task = write_task(tmp_path, token)
    work = tmp_path / "work"
    work.mkdir()
    (work / "host-network.yaml").write_text(block("harbor-overlay", "yaml"))
    server, base_url = fake_model_server(tmp_path / "requests.jsonl")
    try:
        env = dict(os.environ, TASK_DIR=str(task), BASE_URL=base_url, SHFORGE_ARTIFACTS=str(ARTIFACTS))
        env.update(HARBOR_TELEMETRY="0", LITELLM_LOCAL_MODEL_COST_MAP="True", PATH=f"{VENV_BIN}:{env.get('PATH', '')}")
        # Harbor itself has no network: only the docker CLI's unix socket.
        run = subprocess.run(
            ["unshare", "-n", "sh", "-c", 'ip link set lo up 2>/dev/null || true; exec sh -ec "$1"', "sh",
             block("harbor", "sh")],
            cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait()
    said = f"exit {run.returncode}\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"
    assert run.returncode == 0, said
    results = sorted((work / "trials").glob("*/result.json"))
    assert len(results) == 1, said
    result = json.loads(results[0].read_text())
    assert result.get("exception_info") is None, result.get("exception_info")
    assert result["verifier_result"]["rewards"]["reward"] == 1.0, result
    assert (results[0].parent / "agent" / "trajectory.json").is_file(), sorted(p.name for p in results[0].parent.rglob("*"))
