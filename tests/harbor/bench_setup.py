"""Benchmark (issue 39): agent setup on a fresh container, a Harbor trial
with ``shforge.harbor:Codex`` (no reused prefix: the artifacts uploaded and
installed) vs the floor of uploading the same artifacts and ``tar -x`` in
the container through the same Harbor calls (``floor_agent.py``). Prints
ratios, never asserts a time.

    PY=$(sh .ci/harbor.sh target/debug/shforge | tail -n 1)
    $PY tests/harbor/bench_setup.py [ROUNDS]

The setup time is Harbor's own ``agent_setup`` phase of ``result.json``
(``started_at`` to ``finished_at``); rounds alternate the two (and the
same again with ``auto_mounting``) so the machine's load falls on all of
them; medians are reported. Target: shforge / floor <= 1.2.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).parent))

from _harbor import ARTIFACTS, Trial, fake_model_server, run_trial, write_task  # noqa: E402
from bench_trial import KEY, model_args, phases  # noqa: E402

#: What a fresh install of codex uploads on x86_64 (installers/codex.toml's
#: x86_64 row; the image's libc is used, no private runtime).
FILES = [ARTIFACTS / "openai-codex-0.171.0-linux-x64.tgz"]


def one_round(tmp: Path, url: str, i: int) -> Dict[str, Trial]:
    tok = f"harbor-setup-{time.time_ns():x}"
    mount = ["--environment-kwarg", "auto_mounting=true"]
    floor_env = {**KEY, "SHFORGE_FLOOR_FILES": ":".join(map(str, FILES))}
    runs = {
        "floor": ("floor_agent:UploadTarFloor", [], floor_env),
        "shforge": ("shforge.harbor:Codex", model_args(url), KEY),
        "floor am": ("floor_agent:UploadTarFloor", mount, floor_env),
        "shforge am": ("shforge.harbor:Codex", [*model_args(url), *mount], KEY),
    }
    got = {}
    for name, (agent, args, env) in runs.items():
        root = tmp / f"{i}-{name.replace(' ', '')}"
        task = write_task(root, tok)
        trial = run_trial(root, task, agent, args, env=env)
        if "agent_setup" not in phases(trial) or trial.result.get("exception_info"):
            raise SystemExit(f"bench: {name} trial failed: {trial.output[-2000:]}")
        got[name] = trial
    return got


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    for f in FILES:
        if not f.is_file():
            raise SystemExit(f"bench: {f} is missing (shforge fetch codex --into {ARTIFACTS})")
    with tempfile.TemporaryDirectory(prefix="shforge-bench-setup-") as d:
        tmp = Path(d)
        proc, url = fake_model_server(tmp / "requests.jsonl")
        try:
            rounds: List[Dict[str, Trial]] = [one_round(tmp, url, i) for i in range(n)]
        finally:
            proc.terminate()
            proc.wait()
    med = statistics.median
    setup = {k: med(phases(r[k])["agent_setup"] for r in rounds) for k in rounds[0]}
    size = sum(f.stat().st_size for f in FILES) / 1e6
    print(f"{n} round(s), medians of Harbor's agent_setup phase, {size:.1f} MB of artifacts:")
    for k, v in setup.items():
        print(f"  {k:<12} {v:6.2f} s")
    for ours, floor in (("shforge", "floor"), ("shforge am", "floor am")):
        ratio = setup[ours] / setup[floor]
        print(f"{ours!r} vs {floor!r}: {ratio:.2f}x (target <= 1.2: {'met' if ratio <= 1.2 else 'NOT met'})")


if __name__ == "__main__":
    main()
