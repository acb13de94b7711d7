"""Helpers for the Harbor trials: task dirs, the compose overlay, the fake
model server on the host's loopback, Harbor run under ``unshare -n``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

VENV_BIN = Path(sys.executable).parent
HARBOR = VENV_BIN / "harbor"
ARTIFACTS = Path(os.environ.get("SHFORGE_ARTIFACTS", "/var/cache/shforge/artifacts"))

OVERLAY = """services:
  main:
    network_mode: host
    init: true
    pull_policy: never
    build:
      network: none
"""

PROMPT = (
    "Write the token below into the target file, exactly, with no newline.\n"
    "shforge-token={token} shforge-target=/app/out.txt shforge-prefer=shell\n"
)

# The verifier: reward 1 when the deliverable holds the token; 0 when any
# process of the agent is still alive in the container (a supervisor marker
# in its environment, or the harness's name in its argv).
TEST_SH = r"""#!/bin/bash
mkdir -p /logs/verifier
left=
for d in /proc/[0-9]*; do
  [ "${d#/proc/}" = "$$" ] && continue
  state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "$d/status" 2>/dev/null)
  [ "$state" = Z ] && continue
  if tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -q '^NEMO_GYM_SUPERVISOR='; then left="$left ${d#/proc/}"; continue; fi
  if tr '\0' ' ' < "$d/cmdline" 2>/dev/null | grep -Eq '{pattern}'; then left="$left ${d#/proc/}"; fi
done
# The impostor image's python3/node/... record each run here: a rollout
# that ran one of them fails.
if [ -s /var/log/shforge-impostors.log ]; then
  cp /var/log/shforge-impostors.log /logs/verifier/impostors.txt
  echo 0 > /logs/verifier/reward.txt; exit 0
fi
if [ -n "$left" ]; then
  echo "agent processes left:$left" > /logs/verifier/left.txt
  for p in $left; do tr '\0' ' ' < /proc/$p/cmdline >> /logs/verifier/left.txt; echo >> /logs/verifier/left.txt; done
  echo 0 > /logs/verifier/reward.txt; exit 0
fi
if [ '{check}' = no ] || [ "$(cat /app/out.txt 2>/dev/null)" = '{token}' ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def write_task(root: Path, token: str, *, image: str = "local/shforge-bookworm:test", agent_timeout: float = 300,
               pattern: str = "codex|claude|shforge-standin", prompt: Optional[str] = None,
               check_deliverable: bool = True, volumes: Optional[List[str]] = None, name: str = "task") -> Path:
    task = root / name
    (task / "tests").mkdir(parents=True)
    (task / "solution").mkdir()
    (task / "task.toml").write_text(
        'version = "1.0"\n\n[agent]\ntimeout_sec = %s\n\n[verifier]\ntimeout_sec = 60\n\n'
        '[environment]\ndocker_image = "%s"\n' % (agent_timeout, image)
    )
    (task / "instruction.md").write_text(prompt if prompt is not None else PROMPT.format(token=token))
    test = task / "tests" / "test.sh"
    test.write_text(TEST_SH.replace("{token}", token).replace("{pattern}", pattern)
                   .replace("{check}", "yes" if check_deliverable else "no"))
    test.chmod(0o755)
    solve = task / "solution" / "solve.sh"
    solve.write_text(f"#!/bin/bash\nmkdir -p /app\nprintf %s '{token}' > /app/out.txt\n")
    solve.chmod(0o755)
    overlay = OVERLAY
    if volumes:
        overlay += "    volumes:\n" + "".join(f"      - {v}\n" for v in volumes)
    (root / "overlay.yaml").write_text(overlay)
    return task


def fake_model_server(log: Path, script: Optional[Path] = None) -> "tuple[subprocess.Popen[bytes], str]":
    """``shforge fake-model-server`` on the host's 127.0.0.1 (the container
    reaches it through network_mode: host)."""
    shforge = shutil.which("shforge", path=str(VENV_BIN)) or "shforge"
    argv = [shforge, "fake-model-server", "--port", "0", "--log", str(log)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    assert line.startswith("listening on "), line
    return proc, line.split()[-1]


@dataclass
class Trial:
    returncode: int
    wall: float
    output: str
    dir: Optional[Path]
    result: Dict[str, Any]

    @property
    def reward(self) -> Optional[float]:
        vr = self.result.get("verifier_result") or {}
        rewards = vr.get("rewards") or {}
        r = rewards.get("reward")
        return float(r) if r is not None else None


def run_trial(root: Path, task: Path, agent: str, args: List[str], *, env: Optional[Dict[str, str]] = None,
              timeout: float = 900) -> Trial:
    trials = root / "trials"
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), e.get("PYTHONPATH")]))
    e.update({"HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": f"{VENV_BIN}:{e.get('PATH', '')}"})
    e.update(env or {})
    argv = [str(HARBOR), "trial", "start", "-p", str(task), "-a", agent, "-e", "docker",
            "--trials-dir", str(trials), "--extra-docker-compose", str(root / "overlay.yaml"), *args]
    # Harbor itself has no network: only the docker CLI's unix socket.
    cmd = ["unshare", "-n", "sh", "-c", 'ip link set lo up 2>/dev/null || true; exec "$@"', "sh", *argv]
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                       timeout=timeout)
    wall = time.monotonic() - t0
    out = p.stdout.decode(errors="replace")
    dirs = sorted(trials.glob("*/result.json")) if trials.exists() else []
    result = json.loads(dirs[-1].read_text()) if dirs else {}
    return Trial(p.returncode, wall, out, dirs[-1].parent if dirs else None, result)


def harbor_env(env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), e.get("PYTHONPATH")]))
    e.update({"HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": f"{VENV_BIN}:{e.get('PATH', '')}"})
    e.update(env or {})
    return e


@dataclass
class Job:
    returncode: int
    wall: float
    output: str
    trials: List[Trial]

    def by(self, agent: str, task: str) -> Trial:
        """The one trial of ``agent`` (import path) on ``task`` (dir name)."""
        found = [t for t in self.trials
                 # `-a module:Class` on the command line lands in `name`.
                 if agent in ((t.result.get("config") or {}).get("agent", {}).get("import_path"),
                              (t.result.get("config") or {}).get("agent", {}).get("name"))
                 and Path(str((t.result.get("config") or {}).get("task", {}).get("path"))).name == task]
        assert len(found) == 1, (agent, task, [t.dir for t in self.trials], self.output[-2000:])
        return found[0]


def run_job(root: Path, tasks: List[Path], agents: List[Dict[str, Any]], *, n: int,
            env: Optional[Dict[str, str]] = None, timeout: float = 1500) -> Job:
    """``harbor run -c JOB.json -n N``: every agent (an AgentConfig dict:
    ``import_path``, ``model_name``, ``base_url``, ``kwargs``, ...) on every
    task, ``n`` trials at once, under ``unshare -n`` like run_trial."""
    root.mkdir(parents=True, exist_ok=True)
    overlay = root / "overlay.yaml"
    overlay.write_text(OVERLAY)
    config = {
        "job_name": "job",
        "jobs_dir": str(root / "jobs"),
        "n_concurrent_trials": n,
        "quiet": True,
        "environment": {"type": "docker", "extra_docker_compose": [str(overlay)]},
        "agents": agents,
        "tasks": [{"path": str(t)} for t in tasks],
    }
    (root / "job.json").write_text(json.dumps(config, indent=2))
    return harbor_run(root, ["-c", str(root / "job.json"), "-n", str(n), "-y"], env=env, timeout=timeout)


def harbor_run(root: Path, args: List[str], *, env: Optional[Dict[str, str]] = None, timeout: float = 1500) -> Job:
    """``harbor run ARGS`` under ``unshare -n``; the trials are read from
    ROOT/jobs/job (ARGS name that job dir, or the config does)."""
    argv = [str(HARBOR), "run", *args]
    cmd = ["unshare", "-n", "sh", "-c", 'ip link set lo up 2>/dev/null || true; exec "$@"', "sh", *argv]
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=harbor_env(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    wall = time.monotonic() - t0
    trials = []
    for res in sorted((root / "jobs" / "job").glob("*/result.json")):
        trials.append(Trial(p.returncode, wall, p.stdout.decode(errors="replace"), res.parent, json.loads(res.read_text())))
    return Job(p.returncode, wall, p.stdout.decode(errors="replace"), trials)
