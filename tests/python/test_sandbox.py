"""The sandbox protocol and the rollout's error type, without docker."""

from __future__ import annotations

import asyncio
import pickle
from pathlib import Path
from typing import Any, Coroutine

import pytest

import shforge
from shforge.docker import AsyncDockerSandbox, DockerSandbox
from shforge.sandbox import drive


def test_docker_sandboxes_satisfy_the_protocols() -> None:
    sync: shforge.Sandbox = DockerSandbox("c", user="1000:1000")
    both: shforge.AsyncSandbox = AsyncDockerSandbox("c")
    assert isinstance(sync, shforge.Sandbox) and sync.user == "1000:1000"
    assert isinstance(both, shforge.AsyncSandbox) and both.user is None


def test_import_shforge_does_not_import_docker_or_asyncio() -> None:
    import subprocess
    import sys

    code = "import sys, shforge; print('shforge.docker' in sys.modules, 'asyncio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout.decode()
    assert out.split() == ["False", "False"]


def test_drive_runs_a_coroutine_that_never_suspends() -> None:
    async def f() -> int:
        return 42

    assert drive(f()) == 42

    async def g() -> None:
        await asyncio.sleep(0)

    coro: Coroutine[Any, Any, None] = g()
    with pytest.raises(RuntimeError, match="suspended"):
        drive(coro)


def test_a_missing_docker_client_is_a_sandbox_error() -> None:
    sb = DockerSandbox("c", docker="/nonexistent/docker")
    with pytest.raises(shforge.SandboxError):
        sb.exec(["true"])


def test_rollout_error_names_step_and_cause() -> None:
    e = shforge.RolloutError("install", "installers/codex.sh exited 8 (noexec: ...)", 8)
    assert isinstance(e, shforge.ShforgeError)
    assert e.step == "install" and e.code == 8
    assert str(e) == "shforge: rollout failed at install: installers/codex.sh exited 8 (noexec: ...)"
    again = pickle.loads(pickle.dumps(e))
    assert (again.step, again.cause, again.code) == (e.step, e.cause, e.code)
    assert set(shforge.ROLLOUT_STEPS) == {"upload", "bootstrap", "install", "session", "launch", "copy-back"}


def test_an_unset_key_variable_is_refused_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHFORGE_NO_SUCH_KEY", raising=False)

    class Untouchable(DockerSandbox):
        def exec(self, *a: Any, **kw: Any) -> shforge.ExecResult:
            raise AssertionError("ran something")

    with pytest.raises(shforge.RolloutError) as err:
        shforge.rollout(Untouchable("c"), "codex", prompt="p", base_url="http://127.0.0.1:1", model="m",
                        workdir="/w", api_key_env="SHFORGE_NO_SUCH_KEY")  # fmt: skip
    assert err.value.step == "session" and "SHFORGE_NO_SUCH_KEY" in err.value.cause


def test_a_sandboxs_tar_stream_writes_nothing_outside(tmp_path: Path) -> None:
    """A tar stream out of a sandbox is hostile data: a symlink to outside
    followed by a file through it, an absolute name, a '..' name, a FIFO:
    nothing lands outside the target dir; the plain file does."""
    import io
    import tarfile

    from shforge._files import extract_untrusted

    outside = tmp_path / "outside"
    outside.mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        link = tarfile.TarInfo("evil")
        link.type, link.linkname = tarfile.SYMTYPE, str(outside)
        tar.addfile(link)
        up = tarfile.TarInfo("up")
        up.type, up.linkname = tarfile.SYMTYPE, "../outside"
        tar.addfile(up)
        fifo = tarfile.TarInfo("fifo")
        fifo.type = tarfile.FIFOTYPE
        tar.addfile(fifo)
        for name in ("evil/x", "up/y", str(outside / "z"), "../outside/w", "ok.txt"):
            data = b"data"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    into = tmp_path / "into"
    into.mkdir()
    with tarfile.open(fileobj=buf, mode="r:") as tar:
        extract_untrusted(tar, into)
    assert list(outside.iterdir()) == []
    assert (into / "ok.txt").read_bytes() == b"data"
    assert not (into / "fifo").exists() and not (into / "evil").is_symlink()
