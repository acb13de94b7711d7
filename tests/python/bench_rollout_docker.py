"""Benchmark (not a test; prints ratios): ``shforge.rollout`` through
DockerSandbox against the floors of issue 38.

    PYTHONPATH=SITE SHFORGE_BIN=... python tests/python/bench_rollout_docker.py [N]

- a reused install: the one-call rollout vs the bare Codex CLI run by hand
  with ``docker exec`` in the same container (same config, same prompt);
- a fresh install: ``shforge.install`` vs ``docker cp`` of the same
  artifact + ``tar -x`` in the container;
- a new container on a shared read-only prefix: the install step.

Medians of N runs (default 5), every floor measured in the same run, the
docker client calls of one rollout counted. Use a release CLI
(``SHFORGE_BIN=target/release/shforge``): the host-side steps run it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Union

import shforge
from shforge.docker import DockerSandbox

IMAGE = "local/shforge-bookworm:test"
ART = Path(os.environ.get("SHFORGE_ARTIFACTS", "/var/cache/shforge/artifacts")) / "openai-codex-0.171.0-linux-x64.tgz"


def sh(*argv: str, **kw: object) -> bytes:
    return subprocess.run(argv, check=True, capture_output=True, **kw).stdout  # type: ignore[call-overload, no-any-return]


def container(*args: str) -> str:
    return sh("docker", "run", "-d", "--init", "--network", "host", *args, IMAGE, "sleep", "infinity").decode().strip()


def prompt(tok: str) -> str:
    return (
        "Write the token below into the target file, exactly, with no newline.\n"
        f"shforge-token={tok} shforge-target=/work/out.txt shforge-prefer=shell\n"
    )


class Counting(DockerSandbox):
    """Counts the docker client calls."""

    calls = 0

    def exec(self, command: Union[str, Sequence[str]], *, env: Optional[Mapping[str, str]] = None,
             cwd: Optional[str] = None, user: Optional[str] = None, timeout: Optional[float] = None,
             stdin: Optional[bytes] = None) -> shforge.ExecResult:  # fmt: skip
        Counting.calls += 1
        return super().exec(command, env=env, cwd=cwd, user=user, timeout=timeout, stdin=stdin)

    def upload(self, src: "os.PathLike[str] | str", dst: str, *, user: Optional[str] = None) -> None:
        Counting.calls += 1
        super().upload(src, dst, user=user)

    def download(self, src: str, dst: "os.PathLike[str] | str") -> None:
        Counting.calls += 1
        super().download(src, dst)


def main(n: int) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    made = []
    try:
        with shforge.fake_model_server() as srv:
            # Fresh install vs cp + tar -x.
            fresh, floor_inst = [], []
            for _ in range(n):
                c = container()
                made.append(c)
                Counting.calls = 0
                t = time.monotonic()
                shforge.install(Counting(c), "codex")
                fresh.append(time.monotonic() - t)
                fresh_calls = Counting.calls
                t = time.monotonic()
                sh("docker", "cp", str(ART), f"{c}:/tmp/a.tgz")
                sh("docker", "exec", c, "sh", "-c", "mkdir /tmp/x && tar -xzf /tmp/a.tgz -C /tmp/x")
                floor_inst.append(time.monotonic() - t)
            c = made[-1]
            sh("docker", "exec", c, "sh", "-c", "mkdir -p /work && chown 1000:1000 /work")
            # Reused install: one call vs the bare CLI.
            one, bare = [], []
            with tempfile.TemporaryDirectory() as tmp:
                s = shforge.write_session(
                    "codex", Path(tmp) / "s", session_dir="/tmp/bare", workdir="/work",
                    entry="/opt/shforge/codex-0.171.0/codex/bin/codex", base_url=srv.base_url,
                    model="fake-model", prompt=prompt("bare"), api_key_env="OPENAI_API_KEY",
                )  # fmt: skip
                sh("docker", "cp", f"{s.path}/.", f"{c}:/tmp/bare")
                sh("docker", "exec", c, "chown", "-R", "1000:1000", "/tmp/bare")
            phases: List[shforge.Timings] = []
            for i in range(n):
                Counting.calls = 0
                t = time.monotonic()
                r = shforge.rollout(Counting(c, user="1000:1000"), "codex", prompt=prompt(f"one{i}"),
                                    base_url=srv.base_url, model="fake-model", workdir="/work",
                                    api_key_env="OPENAI_API_KEY", deadline=120)  # fmt: skip
                one.append(time.monotonic() - t)
                warm_calls = Counting.calls
                phases.append(r.timings)
                assert r.receipt.is_clean and r.installed.reused
                t = time.monotonic()
                sh("docker", "exec", "-i", "-u", "1000:1000", "-w", "/work", "-e", "OPENAI_API_KEY",
                   "-e", "HOME=/tmp/bare/home", "-e", "CODEX_HOME=/tmp/bare/codex", c,
                   "/opt/shforge/codex-0.171.0/codex/bin/codex", "exec", "--json",
                   "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "-",
                   input=prompt(f"bare{i}").encode())  # fmt: skip
                bare.append(time.monotonic() - t)
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
        med = statistics.median
        print(f"medians of {n}, CLI {os.environ.get('SHFORGE_BIN', 'shforge')}")
        print(f"reused install: rollout {med(one):.3f} s vs bare CLI {med(bare):.3f} s: {med(one) / med(bare):.2f}x"
              f" ({warm_calls} docker calls)")  # fmt: skip
        for field in ("upload", "install", "launch_to_receipt", "copy_back"):
            print(f"  {field}: {med([getattr(p, field) for p in phases]):.3f} s")
        print(f"fresh install: {med(fresh):.3f} s vs cp + tar -x {med(floor_inst):.3f} s: "
              f"{med(fresh) / med(floor_inst):.2f}x ({fresh_calls} docker calls)")  # fmt: skip
        print(f"shared read-only prefix: install step {med(ro):.3f} s (whole install() call, {ro_calls} docker calls)")
    finally:
        for c in made:
            subprocess.run(["docker", "rm", "-f", c], capture_output=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
