"""Benchmark (not a test; prints ratios): ``shforge.rollout`` through
DockerSandbox against the floors of issue 38.

    PYTHONPATH=SITE SHFORGE_BIN=... python tests/python/bench_rollout_docker.py [N]

- a reused install: the one-call rollout vs the bare Codex CLI run by hand
  with ``docker exec`` in the same container, with the same argv and
  environment the runner gives it (read from the session's ``params.sh``),
  the same prompt on stdin, the same fake model server. Two floors: a
  **fresh** session dir (HOME, CODEX_HOME, ...) each run, as a rollout has
  (the fair one), and a **warm** one reused from run to run;
- a fresh install: ``shforge.install`` vs ``docker cp`` of the same
  artifact + ``tar -x`` in the container;
- a new container on a shared read-only prefix: the install step.

Medians of N runs (default 5), every floor measured in the same run,
interleaved with the rollouts (the same load), the docker client calls of
one rollout counted, and the rollout's time split into phases: on the host
(each ``shforge`` CLI step, each docker exec, the rest of Python), and
inside the launch exec (timestamps the benchmark adds to a copy of the
script: unpack, bootstrap, reuse check, supervised run, end-services, pack,
removal; what is left of the exec's wall time is the docker client and
daemon). The timestamps cost a ``date`` process each, so the phases come
from a series of their own: the ratios are taken from rollouts of the
shipped scripts, untouched. The launch goes through ``exec_split``: "to
the whole result" is the exec until its tar stream's end came, "its tail"
what the rollout still waited for its end (the removal) after the host
read the result; the exec's round trip line then also holds the host's
reading that overlapped the tail. Use a release CLI (``SHFORGE_BIN=target/release/shforge``): the
host-side steps run it. Prints the load average at the start and the end.
"""

from __future__ import annotations

import importlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, DefaultDict, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import shforge
from shforge import _cli
from shforge.docker import DockerSandbox

IMAGE = "local/shforge-bookworm:test"
ART = Path(os.environ.get("SHFORGE_ARTIFACTS", "/var/cache/shforge/artifacts")) / "openai-codex-0.171.0-linux-x64.tgz"
ENTRY = "/opt/shforge/codex-0.171.0/codex/bin/codex"
RO = importlib.import_module("shforge.rollout")
#: Another installer for codex to time the fresh install with beside the
#: shipped one (e.g. the previous commit's ``generated/installers/codex.sh``).
OTHER_INSTALLER = os.environ.get("SHFORGE_BENCH_OTHER_INSTALLER", "")

# Phases of the current rollout, name -> seconds (summed).
PHASES: DefaultDict[str, float] = defaultdict(float)
STAMP = 'echo "shforge-bench-ts $(date +%s.%N) {}" >&2\n'


def stamped(script: str, marks: Sequence[Tuple[str, str]]) -> str:
    """``script`` with a timestamp line before each anchor (each must be
    there: a changed script breaks the benchmark loudly)."""
    for anchor, name in marks:
        assert anchor in script, f"anchor {anchor!r} is gone from the launch script"
        script = script.replace(anchor, STAMP.format(name) + anchor, 1)
    return script


TAIL_MARKS = [('"$@" </dev/null', "setup"), ('echo "shforge-launched', "supervised"), ("cd \"$d\" || exit", "end-services"),
              ("cd / && rm", "pack")]  # fmt: skip


def removal_stamped(script: str) -> str:
    anchor = 'echo "shforge-removed" >&2\n'
    assert script.count(anchor) == 1, "the launch script's removal changed"
    return script.replace(anchor, anchor + STAMP.format("remove"))


# The shipped scripts -> their stamped copies, and the name of each.
STAMPED: Dict[str, Tuple[str, str]] = {
    getattr(RO, "_FAST_LAUNCH_SCRIPT"): ("fast launch", removal_stamped(stamped(getattr(RO, "_FAST_LAUNCH_SCRIPT"), [
        ('mkdir -p "$d" && cd "$d"', "start"), ('sh "$d/bootstrap.sh"', "unpack"), ("b=$(command -v bash", "bootstrap"),
        ('echo "shforge-fast-reused', "reuse-check"), *TAIL_MARKS]))),
    getattr(RO, "_LAUNCH_SCRIPT"): ("launch", removal_stamped(stamped(getattr(RO, "_LAUNCH_SCRIPT"),
                                                                      [('mkdir -p "$s"', "start"), *TAIL_MARKS]))),
    getattr(RO, "_BOOTSTRAP_SCRIPT"): ("bootstrap", getattr(RO, "_BOOTSTRAP_SCRIPT")),
}  # fmt: skip

_run = _cli.run


def timed_cli(args: Sequence[str], *a: Any, **kw: Any) -> bytes:
    t = time.monotonic()
    try:
        return _run(args, *a, **kw)
    finally:
        PHASES[f"host: shforge {args[0]}"] += time.monotonic() - t


setattr(_cli, "run", timed_cli)


def sh(*argv: str, **kw: object) -> bytes:
    return subprocess.run(argv, check=True, capture_output=True, **kw).stdout  # type: ignore[call-overload, no-any-return]


def container(*args: str) -> str:
    return sh("docker", "run", "-d", "--init", "--network", "host", *args, IMAGE, "sleep", "infinity").decode().strip()


def prompt(tok: str) -> str:
    return (
        "Write the token below into the target file, exactly, with no newline.\n"
        f"shforge-token={tok} shforge-target=/work/out.txt shforge-prefer=shell\n"
    )


def exec_name(command: Union[str, Sequence[str]]) -> Tuple[str, Union[str, Sequence[str]]]:
    """The name of the exec's script, and the command with that script's
    stamped copy in its place."""
    words = [command] if isinstance(command, str) else list(command)
    for i, w in enumerate(words):
        if w in STAMPED:
            name, copy = STAMPED[w]
            words[i] = copy
            return name, words if not isinstance(command, str) else copy
    return " ".join(words)[:40], command


class Counting(DockerSandbox):
    """Counts the docker client calls, times each, runs the stamped copy of
    the launch's script and splits its exec by the timestamps printed."""

    calls = 0

    def exec(self, command: Union[str, Sequence[str]], *, env: Optional[Mapping[str, str]] = None,
             cwd: Optional[str] = None, user: Optional[str] = None, timeout: Optional[float] = None,
             stdin: Optional[bytes] = None) -> shforge.ExecResult:  # fmt: skip
        Counting.calls += 1
        name, command = exec_name(command)
        t = time.monotonic()
        r = super().exec(command, env=env, cwd=cwd, user=user, timeout=timeout, stdin=stdin)
        PHASES[f"exec: {name} (wall)"] += time.monotonic() - t
        return self.split_phases(name, time.monotonic() - t, r)

    def exec_split(self, command: Union[str, Sequence[str]], *, complete: Callable[[bytes], bool],
                   env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None, user: Optional[str] = None,
                   timeout: Optional[float] = None, stdin: Optional[bytes] = None,
                   ) -> Tuple[bytes, Callable[[], shforge.ExecResult]]:  # fmt: skip
        Counting.calls += 1
        name, command = exec_name(command)
        t = time.monotonic()
        out, end = super().exec_split(command, complete=complete, env=env, cwd=cwd, user=user, timeout=timeout,
                                      stdin=stdin)  # fmt: skip
        PHASES[f"exec: {name} (to the whole result)"] += time.monotonic() - t

        def finish() -> shforge.ExecResult:
            w = time.monotonic()
            r = end()
            PHASES[f"exec: {name} (its tail, awaited after the host read the result)"] += time.monotonic() - w
            return self.split_phases(name, time.monotonic() - t, r)

        return out, finish

    def split_phases(self, name: str, wall: float, r: shforge.ExecResult) -> shforge.ExecResult:
        """``r`` after recording its exec's phases (the script's stamps)."""
        stamps = [ln.split()[1:] for ln in r.stderr.decode().splitlines() if ln.startswith("shforge-bench-ts ")]
        if stamps:
            inside = 0.0
            for (t0, _), (t1, what) in zip(stamps, stamps[1:]):
                PHASES[f"  in {name}: {what}"] += float(t1) - float(t0)
                inside += float(t1) - float(t0)
            PHASES[f"  in {name}: docker exec round trip (wall - inside)"] += wall - inside
        return r

    def upload(self, src: "os.PathLike[str] | str", dst: str, *, user: Optional[str] = None) -> None:
        Counting.calls += 1
        super().upload(src, dst, user=user)

    def download(self, src: str, dst: "os.PathLike[str] | str") -> None:
        Counting.calls += 1
        super().download(src, dst)


class Whole(DockerSandbox):
    """Overrides ``exec`` only: ``exec_split`` then runs the exec whole,
    as before the split launch (the same-run comparison)."""

    def exec(self, command: Union[str, Sequence[str]], *, env: Optional[Mapping[str, str]] = None,
             cwd: Optional[str] = None, user: Optional[str] = None, timeout: Optional[float] = None,
             stdin: Optional[bytes] = None) -> shforge.ExecResult:  # fmt: skip
        return super().exec(command, env=env, cwd=cwd, user=user, timeout=timeout, stdin=stdin)


def runner_params(session: Path) -> Tuple[List[str], List[str]]:
    """The argv and the environment the runner gives the CLI (params.sh)."""
    text = (session / "params.sh").read_text()

    def array(name: str) -> List[str]:
        return [v.replace("'\\''", "'") for v in re.findall(r"^" + name + r"\[\d+\]='((?:[^']|'\\'')*)'$", text, re.M)]

    return array("RUNNER_ARGV"), array("RUNNER_ENV")


def stage_bare(c: str, url: str, tmp: Path, name: str) -> Tuple[List[str], List[str]]:
    """A session dir at /tmp/NAME in the container, as the rollout's is
    before its CLI starts (its dirs made, the user's): not timed."""
    s = shforge.write_session(
        "codex", tmp / name, session_dir=f"/tmp/{name}", workdir="/work", entry=ENTRY, base_url=url,
        model="fake-model", prompt="-", api_key_env="OPENAI_API_KEY",
    )  # fmt: skip
    argv, env = runner_params(tmp / name)
    dirs = [e.split("=", 1)[1] for e in env if e.split("=", 1)[1].startswith(f"/tmp/{name}/")]
    sh("docker", "cp", f"{s.path}/.", f"{c}:/tmp/{name}")
    sh("docker", "exec", c, "sh", "-c", 'mkdir -p "$@" && chown -R 1000:1000 "$0"', f"/tmp/{name}", *dirs)
    return argv, env


def bare(c: str, argv: List[str], env: List[str], tok: str) -> float:
    e = [w for kv in env for w in ("-e", kv)]
    t = time.monotonic()
    sh("docker", "exec", "-i", "-u", "1000:1000", "-w", "/work", "-e", "OPENAI_API_KEY", *e, c, *argv,
       input=prompt(tok).encode())  # fmt: skip
    return time.monotonic() - t


def main(n: int) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    made = []
    load0 = os.getloadavg()
    med = statistics.median
    try:
        with shforge.fake_model_server() as srv:
            # Fresh install vs cp + tar -x.
            fresh, floor_inst, other_inst = [], [], []
            for _ in range(n):
                c = container()
                made.append(c)
                Counting.calls = 0
                t = time.monotonic()
                shforge.install(Counting(c), "codex")
                fresh.append(time.monotonic() - t)
                fresh_calls = Counting.calls
                installed = c
                t = time.monotonic()
                sh("docker", "cp", str(ART), f"{c}:/tmp/a.tgz")
                sh("docker", "exec", c, "sh", "-c", "mkdir /tmp/x && tar -xzf /tmp/a.tgz -C /tmp/x")
                floor_inst.append(time.monotonic() - t)
                if OTHER_INSTALLER:
                    o = container()
                    made.append(o)
                    t = time.monotonic()
                    shforge.install(DockerSandbox(o), "codex", installer=OTHER_INSTALLER)
                    other_inst.append(time.monotonic() - t)
                    sh("docker", "rm", "-f", o)
            c = installed  # the last container the shipped installer installed into
            sh("docker", "exec", c, "sh", "-c", "mkdir -p /work && chown 1000:1000 /work")
            # Reused install: one call vs the bare CLI (a fresh session dir
            # each run; a warm one), interleaved.
            one: List[float] = []
            stamped_runs: List[float] = []
            whole: List[float] = []
            floor_fresh: List[float] = []
            floor_warm: List[float] = []
            phases: List[Dict[str, float]] = []
            calls: List[int] = []  # docker client calls of each stamped rollout
            with tempfile.TemporaryDirectory() as tmp:
                argv, env = stage_bare(c, srv.base_url, Path(tmp), "bare-warm")
                bare(c, argv, env, "warm-up")
                fresh_dirs = [stage_bare(c, srv.base_url, Path(tmp), f"bare-{i}") for i in range(n)]
                def rolled(box: DockerSandbox, tag: str) -> float:
                    t = time.monotonic()
                    r = shforge.rollout(box, "codex", prompt=prompt(tag), base_url=srv.base_url, model="fake-model",
                                        workdir="/work", api_key_env="OPENAI_API_KEY", deadline=120)  # fmt: skip
                    took = time.monotonic() - t
                    assert r.receipt.is_clean and r.installed.reused, r.outcome
                    return took

                def plain(i: int) -> None:
                    one.append(rolled(DockerSandbox(c, user="1000:1000"), f"one{i}"))

                def with_stamps(i: int) -> None:
                    PHASES.clear()
                    Counting.calls = 0
                    stamped_runs.append(rolled(Counting(c, user="1000:1000"), f"stamped{i}"))
                    calls.append(Counting.calls)
                    counted = sum(v for k, v in PHASES.items() if not k.startswith("  "))
                    PHASES["host: the rest (Python: scripts, tar, untar, ...)"] = stamped_runs[-1] - counted
                    phases.append(dict(PHASES))

                def exec_whole(i: int) -> None:
                    whole.append(rolled(Whole(c, user="1000:1000"), f"whole{i}"))

                def fresh_floor(i: int) -> None:
                    floor_fresh.append(bare(c, *fresh_dirs[i], f"fresh{i}"))

                def warm_floor(i: int) -> None:
                    floor_warm.append(bare(c, argv, env, f"warm{i}"))

                # Each round in another order: no series always follows the
                # same one (the previous run's caches, its removal's tail).
                series = [plain, with_stamps, exec_whole, fresh_floor, warm_floor]
                for i in range(n):
                    for run_one in series[i % len(series):] + series[: i % len(series)]:
                        run_one(i)
            # Shared read-only prefix: a new container's install step.
            with tempfile.TemporaryDirectory() as shared:
                os.chmod(shared, 0o755)
                a = container("-v", f"{shared}:/opt/shforge")
                made.append(a)
                shforge.install(DockerSandbox(a), "codex")
                ro = []
                for _ in range(n):
                    b = container("-v", f"{shared}:/opt/shforge:ro", "--user", "1000:1000")
                    made.append(b)
                    Counting.calls = 0
                    t = time.monotonic()
                    inst = shforge.install(Counting(b, user="1000:1000"), "codex")
                    ro.append(time.monotonic() - t)
                    ro_calls = Counting.calls
                    assert inst.reused
                sh("docker", "exec", a, "rm", "-rf", "/opt/shforge/codex-0.171.0", "/opt/shforge/.codex-0.171.0")
        print(f"medians of {n}, CLI {os.environ.get('SHFORGE_BIN', 'shforge')}, load average "
              f"{load0[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")  # fmt: skip
        print(f"reused install: rollout {med(one):.3f} s ({max(calls)} docker calls)")
        print(f"  vs the bare CLI, fresh session dir (the floor): {med(floor_fresh):.3f} s: "
              f"{med(one) / med(floor_fresh):.2f}x (target <= 1.3x)")  # fmt: skip
        print(f"  vs the bare CLI, warm session dir: {med(floor_warm):.3f} s: {med(one) / med(floor_warm):.2f}x")
        print(f"  the same rollout with the launch exec whole (no exec_split: the removal before the host reads):"
              f" {med(whole):.3f} s: {med(whole) / med(floor_fresh):.2f}x the fresh floor")  # fmt: skip
        print(f"  rollout phases, from a series of their own with the launch script stamped ({med(stamped_runs):.3f} s"
              " a rollout: each stamp is a process; medians of each; the lines indented: inside an exec's wall time;"
              " the readers (receipt, snapshot, outcome) run at once, so their times overlap and 'the rest' can be"
              " below 0):")  # fmt: skip
        for name in sorted({k for p in phases for k in p}, key=lambda k: (k.strip().split(":")[0], k)):
            print(f"    {med([p.get(name, 0.0) for p in phases]):.3f} s  {name}")
        print(f"fresh install: {med(fresh):.3f} s vs cp + tar -x {med(floor_inst):.3f} s: "
              f"{med(fresh) / med(floor_inst):.2f}x ({fresh_calls} docker calls; target <= 1.2x)")  # fmt: skip
        if OTHER_INSTALLER:
            print(f"  the install with {OTHER_INSTALLER} (a new container each): {med(other_inst):.3f} s: "
                  f"{med(other_inst) / med(floor_inst):.2f}x")  # fmt: skip
        print(f"shared read-only prefix: install step {med(ro):.3f} s (whole install() call, {ro_calls} docker calls;"
              " target <= 0.5 s)")  # fmt: skip
    finally:
        for c in made:
            subprocess.run(["docker", "rm", "-f", c], capture_output=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
