"""Benchmark (issue 39): a Harbor trial with ``shforge.harbor:Codex`` on a
reused read-only prefix vs Harbor's ``oracle`` on the same task and image.
Prints ratios, never asserts a time.

    PY=$(sh .ci/harbor.sh target/debug/shforge | tail -n 1)
    $PY tests/harbor/bench_trial.py [ROUNDS]

The target, "trial wall <= 1.5x the oracle's plus the harness's own run
time", is measured as

    T_shforge <= 1.5 * T_oracle + H

* T: Harbor's own trial time, ``result.json`` ``started_at`` to
  ``finished_at`` (environment start, agent setup, agent run, verifier,
  teardown; not the ``harbor`` process's start-up);
* H: the harness's own run time, the bare CLI's wall inside the trial: the
  supervisor's receipt ``stop.began_at`` (seconds from the supervisor's
  launch of the harness to the harness's exit; the trial's receipt is in
  ``agent/shforge/out/receipt.json``).

Printed: ``(T_shforge - H) / T_oracle`` (target <= 1.5) and the plain
``T_shforge / T_oracle``, the phases side by side, and the ``harbor``
process walls. "am": both again with ``--environment-kwarg
auto_mounting=true`` (Harbor bind-mounts the trial's log dirs: shforge's
agent then writes its scripts and session dir there, 2 Harbor calls a
trial instead of 6). The oracle runs twice: with no model (as Harbor's docs run
it), and with the same ``-m fake-model`` as ours: ``-m`` makes the
``harbor`` process import LiteLLM to parse the name (a start-up cost
Harbor pays for any agent given ``-m``, outside T). Rounds alternate the
three so the machine's load falls on all of them; the medians are
reported.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).parent))

from _harbor import ARTIFACTS, Trial, fake_model_server, run_trial, write_task  # noqa: E402

KEY = {"FAKE_KEY": "sk-shforge-fake-key-not-on-any-argv"}
PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
SHARED = "/opt/shforge-shared"


def _t(stamp: Optional[str]) -> Optional[datetime]:
    return datetime.fromisoformat(stamp) if stamp else None


def trial_seconds(trial: Trial) -> float:
    """T: Harbor's trial time (result.json started_at -> finished_at)."""
    r = trial.result
    return (datetime.fromisoformat(r["finished_at"]) - datetime.fromisoformat(r["started_at"])).total_seconds()


def phases(trial: Trial) -> Dict[str, float]:
    """Harbor's phases (seconds) and what lies between them: ``start`` (trial
    start to environment start), ``gaps`` (between phases), ``teardown``
    (verifier end to the trial's end: the container's stop and removal)."""
    r = trial.result
    out: Dict[str, float] = {}
    begin, end = _t(r["started_at"]), _t(r["finished_at"])
    assert begin is not None and end is not None
    spans: List[Tuple[datetime, datetime]] = []
    for p in PHASES:
        info = r.get(p) or {}
        a, b = _t(info.get("started_at")), _t(info.get("finished_at"))
        if a is not None and b is not None:
            out[p] = (b - a).total_seconds()
            spans.append((a, b))
    spans.sort()
    if spans:
        out["start"] = (spans[0][0] - begin).total_seconds()
        out["teardown"] = (end - spans[-1][1]).total_seconds()
        out["gaps"] = sum((spans[i + 1][0] - spans[i][1]).total_seconds() for i in range(len(spans) - 1))
    return out


def harness_seconds(trial: Trial) -> float:
    """H: the bare harness's wall inside the trial (the receipt's
    ``stop.began_at``: launch to the harness's own exit)."""
    assert trial.dir is not None
    receipt = json.loads((trial.dir / "agent" / "shforge" / "out" / "receipt.json").read_text())
    return float(receipt["stop"]["began_at"])


def install_prefix(into: Path) -> None:
    """Codex installed once on the host, to be shared read-only."""
    import shforge

    subprocess.run(["bash", str(shforge.installer_path("codex")), "--prefix", str(into),
                    "--source-dir", str(ARTIFACTS), "--quiet"], check=True, stdout=subprocess.DEVNULL)


def model_args(url: str) -> List[str]:
    return ["-m", "fake-model", "--base-url", url, "--api-format", "openai_responses", "--api-key-name", "FAKE_KEY",
            "--agent-kwarg", "workdir=/app"]


def one_round(tmp: Path, prefix: Path, url: str, i: int) -> Dict[str, Trial]:
    vol = [f"{prefix}:{SHARED}:ro"]
    tok = f"harbor-bench-{time.time_ns():x}-{os.getpid()}"
    ours = ["shforge.harbor:Codex", [*model_args(url), "--agent-kwarg", f"prefix={SHARED}"]]
    mount = ["--environment-kwarg", "auto_mounting=true"]
    runs = {
        "oracle": ("oracle", []),
        "oracle -m": ("oracle", ["-m", "fake-model"]),
        "shforge": (ours[0], ours[1]),
        "oracle am": ("oracle", mount),
        "shforge am": (ours[0], [*ours[1], *mount]),
    }
    got = {}
    for name, (agent, args) in runs.items():
        root = tmp / f"{i}-{name.replace(' ', '')}"
        task = write_task(root, tok, volumes=vol)
        trial = run_trial(root, task, agent, args, env=KEY)
        if trial.reward != 1.0:
            raise SystemExit(f"bench: {name} trial not rewarded: {trial.output[-2000:]}\n"
                             f"{json.dumps(trial.result.get('exception_info'))}")
        got[name] = trial
    return got


def report(rounds: List[Dict[str, Trial]]) -> Dict[str, float]:
    """Print the medians and the ratios; return them."""
    med = statistics.median
    t = {k: med(trial_seconds(r[k]) for r in rounds) for k in rounds[0]}
    wall = {k: med(r[k].wall for r in rounds) for k in rounds[0]}
    h = med(harness_seconds(r["shforge"]) for r in rounds)
    h_am = med(harness_seconds(r["shforge am"]) for r in rounds)
    calls = rounds[-1]["shforge"].result["agent_result"]["metadata"]["shforge"]["harbor_calls"]
    calls_am = rounds[-1]["shforge am"].result["agent_result"]["metadata"]["shforge"]["harbor_calls"]
    print(f"{len(rounds)} round(s), medians, load average {os.getloadavg()[0]:.1f}:")
    print(f"{'phase (s)':<18}" + "".join(f"{k:>12}" for k in t))
    # (the columns are the runs of a round, in order)
    keys = ["start", *PHASES, "gaps", "teardown"]
    for p in keys:
        print(f"{p:<18}" + "".join(f"{med(phases(r[k]).get(p, 0.0) for r in rounds):>12.2f}" for k in t))
    print(f"{'trial T':<18}" + "".join(f"{t[k]:>12.2f}" for k in t))
    print(f"{'harbor process':<18}" + "".join(f"{wall[k]:>12.2f}" for k in t))
    print(f"harness's own run H (receipt stop.began_at): {h:.2f} s ({h_am:.2f} s am); Harbor calls in the "
          f"last round: setup {calls['setup']}, run {calls['run']}; am: setup {calls_am['setup']}, "
          f"run {calls_am['run']}")
    out = {}
    for ours, base, hh in (("shforge", "oracle", h), ("shforge", "oracle -m", h), ("shforge am", "oracle am", h_am)):
        ratio = (t[ours] - hh) / t[base]
        out[f"{ours} / {base}"] = ratio
        print(f"{ours!r} vs {base!r}: (T_shforge - H) / T_oracle = {ratio:.2f} (target <= 1.5: "
              f"{'met' if ratio <= 1.5 else 'NOT met'}); T_shforge / T_oracle = {t[ours] / t[base]:.2f}; "
              f"harbor process wall ratio {wall[ours] / wall[base]:.2f}")
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory(prefix="shforge-bench-trial-") as d:
        tmp = Path(d)
        prefix = tmp / "prefix"
        install_prefix(prefix)
        proc, url = fake_model_server(tmp / "requests.jsonl")
        try:
            rounds = [one_round(tmp, prefix, url, i) for i in range(n)]
        finally:
            proc.terminate()
            proc.wait()
        report(rounds)


if __name__ == "__main__":
    main()
