"""Docker fixtures and checks shared by the container tests (imported by
them; no test here). Containers are made from local images only (never
pulled), on ``--network host`` or ``none`` (never a bridge), with
``--init``, and always removed."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence

import pytest

import shforge
from shforge.docker import DockerSandbox

ARTIFACTS = Path(os.environ.get("SHFORGE_ARTIFACTS", "/var/cache/shforge/artifacts"))
CODEX_ARTIFACT = "openai-codex-0.171.0-linux-x64.tgz"
BOOKWORM = "local/shforge-bookworm:test"
MUSL = "local/shforge-musl:test"
MUSL_NOBASH = "local/shforge-musl-nobash:test"
PREFIX = "/opt/shforge"
#: The strict container of issue 38: a user, read-only root, no capabilities.
STRICT = [
    "--user", "1000:1000", "--read-only", "--tmpfs", "/tmp",
    "--tmpfs", f"{PREFIX}:exec,uid=1000,gid=1000", "--tmpfs", "/work:uid=1000,gid=1000",
    "--cap-drop", "ALL", "--pids-limit", "256",
]  # fmt: skip


#: Set by the CI runs that test packaging, not containers (the clone and
#: sdist installs, the aarch64 wheel under qemu): the native wheel's run
#: has the container tests.
SKIP_ENV = "SHFORGE_SKIP_DOCKER"


def loud_skip(message: str) -> None:
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"SKIPPED LOUDLY: {SKIP_ENV}=1 ({message})")
    if os.environ.get("SHFORGE_REQUIRE_DOCKER") == "1":
        pytest.fail(f"{message} and SHFORGE_REQUIRE_DOCKER=1")
    pytest.skip(f"SKIPPED LOUDLY: {message}")


def docker_ok(images: Sequence[str]) -> Optional[str]:
    """Why docker cannot be used here, or None."""
    if os.environ.get(SKIP_ENV) == "1":
        return f"{SKIP_ENV}=1: the container tests run elsewhere"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"docker is unavailable ({e})"
    if info.returncode != 0:
        return "docker info failed: " + info.stderr.decode(errors="replace").strip()[-200:]
    for image in images:
        r = subprocess.run(["docker", "image", "inspect", image], capture_output=True)
        if r.returncode != 0:
            return f"the local image {image} is missing (imported by .ci/docker.sh, never pulled)"
    return None


@pytest.fixture
def docker_images() -> None:
    why = docker_ok([BOOKWORM])
    if why is not None:
        loud_skip(why)
    if not (ARTIFACTS / CODEX_ARTIFACT).is_file():
        loud_skip(f"{ARTIFACTS / CODEX_ARTIFACT} is missing (shforge fetch codex --into {ARTIFACTS})")


Start = Callable[..., str]


@pytest.fixture
def private_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The host temp dir of this test alone (other rollouts may run beside
    it): ``host_temps()`` sees only this test's leftovers."""
    tmp = tmp_path / "host-tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


@pytest.fixture
def container(docker_images: None, private_tmp: Path) -> Iterator[Start]:
    """``container(image, *docker_run_args, network="host", setup=None)``: a
    running ``sleep infinity`` container, removed at the end. ``setup`` is a
    shell command run as root in it first (not in a strict one)."""
    made: List[str] = []

    def start(image: str, *args: str, network: str = "host", setup: Optional[str] = None) -> str:
        argv = ["docker", "run", "-d", "--init", "--network", network, *args, image, "sleep", "infinity"]
        cid = subprocess.run(argv, capture_output=True, check=True).stdout.decode().strip()
        made.append(cid)
        if setup is not None:
            subprocess.run(["docker", "exec", "-u", "0", cid, "sh", "-c", setup], check=True)
        return cid

    yield start
    for cid in made:
        subprocess.run(["docker", "rm", "-f", cid], capture_output=True)


@pytest.fixture(scope="module")
def model() -> Iterator[shforge.FakeModelServer]:
    with shforge.fake_model_server() as server:
        yield server


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    value = "sk-host-only-" + os.urandom(6).hex()
    monkeypatch.setenv("OPENAI_API_KEY", value)
    return value


def prompt(token: str, target: str, extra: str = "") -> str:
    """The fake model's script: one shell tool call writing ``token``."""
    return (
        "Write the token below into the target file, exactly, with no newline.\n"
        f"shforge-token={token} shforge-target={target} shforge-prefer=shell{extra}\n"
    )


def host_temps() -> List[str]:
    # The rollout's host scratch: in /dev/shm when it has room, else the
    # temp dir.
    return sorted(str(p) for d in {tempfile.gettempdir(), "/dev/shm"} for p in Path(d).glob("shforge-rollout-*"))


def processes(cid: str) -> List[str]:
    """The container's processes (``docker top``): their command lines."""
    out = subprocess.run(["docker", "top", cid, "-o", "pid,args"], capture_output=True, check=True).stdout
    return [ln.split(None, 1)[1] for ln in out.decode().splitlines()[1:] if ln.strip()]


def only_init_left(cid: str) -> None:
    """Only ``docker-init`` and ``sleep infinity``. Polled for up to 3 s:
    busybox's ``timeout`` (the installer's entry check on a busybox image)
    leaves its watcher process up to a second after the program exited."""
    import time

    for _ in range(15):
        left = processes(cid)
        if len(left) == 2 and all("sleep infinity" in p for p in left):
            return
        time.sleep(0.2)
    assert len(left) == 2 and all("sleep infinity" in p for p in left), left


def diff_outside(cid: str, allowed: Sequence[str]) -> List[str]:
    """``docker diff`` lines outside ``allowed`` (and their parents, and the
    ``--init`` binary docker adds)."""
    out = subprocess.run(["docker", "diff", cid], capture_output=True, check=True).stdout.decode()
    bad = []
    for ln in out.splitlines():
        kind, path = ln.split(" ", 1)
        if path in ("/usr", "/usr/sbin", "/usr/sbin/docker-init", "/sbin", "/sbin/docker-init", "/dev", "/etc"):
            continue  # docker's own (--init, /etc/hosts and friends)
        if any(path == a or path.startswith(a + "/") for a in allowed):
            continue
        if kind in ("C", "A") and any(a.startswith(path.rstrip("/") + "/") for a in allowed):
            continue  # a parent of an allowed path (created when missing: /opt)
        bad.append(ln)
    return bad


def read(cid: str, path: str) -> str:
    r = subprocess.run(["docker", "exec", cid, "cat", path], capture_output=True)
    return r.stdout.decode() if r.returncode == 0 else ""


def sandbox(cid: str, user: Optional[str] = None) -> DockerSandbox:
    return DockerSandbox(cid, user=user)
