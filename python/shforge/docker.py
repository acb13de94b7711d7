"""A :class:`~shforge.sandbox.Sandbox` over ``docker exec`` and ``docker cp``
(not imported by ``import shforge``).

- ``exec``: ``docker exec [-i] [-u USER] [-w CWD] [-e NAME]... CONTAINER``;
  each variable's value goes through the docker client's own environment,
  never its argv. A timeout kills the client and raises
  :class:`~shforge.errors.SandboxTimeoutError` (what runs in the container
  keeps running: :func:`shforge.rollout` stops it itself).
- ``upload``: ``docker cp`` when the files are to be root's (it creates
  root-owned files); else, and wherever ``docker cp`` is refused (a
  ``--read-only`` root filesystem, even into a tmpfs), a tar stream through
  ``docker exec -i -u USER CONTAINER tar -x``, so the files are the user's.
- ``download``: ``docker cp`` (works from read-only containers), a tar
  stream through ``docker exec`` when it fails.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._files import StrPath, extract_untrusted
from .errors import SandboxError, SandboxTimeoutError
from .sandbox import ExecResult, is_root

__all__ = ["AsyncDockerSandbox", "DockerSandbox"]

_TRANSPORT_ERRORS = (
    "Error response from daemon",
    "Error: No such container",
    "Cannot connect to the Docker daemon",
    "unable to find user",
    "unable to find group",
)


#: The most bytes an exec may send back on stdout or on stderr (the launch
#: sends the receipt and the session data): 256 MiB.
MAX_OUTPUT = 256 * 1024 * 1024


class DockerSandbox:
    """The running container ``container`` (name or ID), the rollout as
    ``user`` (None: the image's user; ``"1000:1000"`` or a name). An exec
    that sends back more than ``max_output`` bytes on stdout or on stderr
    raises :class:`~shforge.errors.SandboxError` (its client killed; as
    after a timeout, what runs in the container is not signalled)."""

    def __init__(self, container: str, user: Optional[str] = None, docker: str = "docker",
                 max_output: int = MAX_OUTPUT) -> None:
        self.container = container
        self._user = user
        self.docker = docker
        self.max_output = max_output

    @property
    def user(self) -> Optional[str]:
        """The user the rollout runs as."""
        return self._user

    def _client(self, argv: List[str], *, stdin: Optional[bytes], timeout: Optional[float],
                env: Optional[Mapping[str, str]] = None) -> "tuple[int, bytes, bytes]":
        """Run the docker client; its status, stdout and stderr. What the
        container sends back is hostile data: past ``max_output`` bytes on
        either stream the client is killed and :class:`SandboxError` raised
        (a container printing without end cannot fill the host's memory)."""
        return _Client(self, argv, stdin=stdin, timeout=timeout, env=env).finish()

    def _transport(self, code: int, stderr: bytes, argv: Sequence[str]) -> None:
        text = stderr.decode("utf-8", "replace").strip()
        if code != 0 and any(s in text for s in _TRANSPORT_ERRORS):
            raise SandboxError(f"{argv[0]} {argv[1]}: {text.splitlines()[-1][:500]}", argv=argv)

    def _exec_argv(self, command: Union[str, Sequence[str]], *, env: Optional[Mapping[str, str]],
                   cwd: Optional[str], user: Optional[str], stdin: Optional[bytes]) -> List[str]:
        argv = [self.docker, "exec"]
        if stdin is not None:
            argv.append("-i")
        who = user if user is not None else self._user
        if who is not None:
            argv += ["-u", who]
        if cwd is not None:
            argv += ["-w", cwd]
        for name in env or {}:
            argv += ["-e", name]  # the value: in the client's environment only
        argv.append(self.container)
        argv += ["sh", "-c", command] if isinstance(command, str) else list(command)
        return argv

    def exec(
        self,
        command: Union[str, Sequence[str]],
        *,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        stdin: Optional[bytes] = None,
    ) -> ExecResult:
        """As :meth:`shforge.sandbox.Sandbox.exec`."""
        argv = self._exec_argv(command, env=env, cwd=cwd, user=user, stdin=stdin)
        code, out, err = self._client(argv, stdin=stdin, timeout=timeout, env=env)
        self._transport(code, err, argv)
        return ExecResult(code, out, err)

    def exec_split(
        self,
        command: Union[str, Sequence[str]],
        *,
        complete: Callable[[bytes], bool],
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        stdin: Optional[bytes] = None,
    ) -> "Tuple[bytes, Callable[[], ExecResult]]":
        """As :meth:`exec`, but back as soon as the stdout so far is
        complete (``complete`` is called with each piece of stdout, in
        order, and says whether all that came so far is), or at its end:
        that stdout, and ``finish``, which
        waits for the exec's end and gives its :class:`ExecResult` (raising
        as :meth:`exec` does). The host works on the result while the
        command's tail (a scratch dir's removal) runs; ``finish`` must be
        called. A subclass that overrides :meth:`exec` but not this gets
        its own :meth:`exec`, whole."""
        if type(self).exec is not DockerSandbox.exec and type(self).exec_split is DockerSandbox.exec_split:
            r = self.exec(command, env=env, cwd=cwd, user=user, timeout=timeout, stdin=stdin)
            return r.stdout, lambda: r
        argv = self._exec_argv(command, env=env, cwd=cwd, user=user, stdin=stdin)
        client = _Client(self, argv, stdin=stdin, timeout=timeout, env=env, complete=complete)
        out = client.early()

        def finish() -> ExecResult:
            code, full, err = client.finish()
            self._transport(code, err, argv)
            return ExecResult(code, full, err)

        return out, finish

    def upload(self, src: StrPath, dst: str, *, user: Optional[str] = None) -> None:
        """As :meth:`shforge.sandbox.Sandbox.upload`."""
        path = Path(src)
        if not path.exists():
            raise SandboxError(f"upload: {path} does not exist")
        owner = user if user is not None else self._user
        if owner is None or is_root(owner):
            source = f"{path}/." if path.is_dir() else str(path)
            argv = [self.docker, "cp", source, f"{self.container}:{dst}"]
            code, _, err = self._client(argv, stdin=None, timeout=None)
            if code == 0:
                return
            if b"No such container" in err or b"Cannot connect" in err:
                self._transport(code, err, argv)
        self._tar_in(path, dst, owner)

    def _tar_in(self, path: Path, dst: str, owner: Optional[str]) -> None:
        import posixpath
        import subprocess
        import tarfile

        if path.is_dir():
            into, arcname = dst, "."
        else:
            into, arcname = posixpath.dirname(dst) or "/", posixpath.basename(dst)
        argv = [self.docker, "exec", "-i"]
        if owner is not None:
            argv += ["-u", owner]
        script = 'mkdir -p "$1" && cd "$1" && exec tar -x -f -'
        argv += [self.container, "sh", "-c", script, "sh", into]

        def as_owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
            # As root, tar keeps the archive's owner: root's. As a user, it
            # cannot: the files are the user's.
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            return info

        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        stdin: IO[bytes] = proc.stdin  # type: ignore[assignment]
        broken = False
        try:
            with tarfile.open(fileobj=stdin, mode="w|", format=tarfile.GNU_FORMAT) as tar:
                tar.add(str(path), arcname=arcname, filter=as_owner)
        except (BrokenPipeError, ConnectionResetError):
            broken = True
        finally:
            try:
                stdin.close()
            except OSError:
                broken = True
        err = proc.stderr.read() if proc.stderr is not None else b""
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        if proc.returncode != 0 or broken:
            self._transport(proc.returncode or 1, err, argv)
            text = [t for t in err.decode("utf-8", "replace").strip().splitlines() if "Exiting with" not in t]
            raise SandboxError(
                f"upload to {self.container}:{dst}: tar -x exited {proc.returncode}"
                + (f": {text[0][:500]}" if text else ""),
                argv=argv,
            )

    def download(self, src: str, dst: StrPath) -> None:
        """As :meth:`shforge.sandbox.Sandbox.download`."""
        target = Path(dst)
        argv = [self.docker, "cp", f"{self.container}:{src}", str(target)]
        code, _, err = self._client(argv, stdin=None, timeout=None)
        if code == 0:
            return
        if b"No such container" in err or b"Cannot connect" in err:
            self._transport(code, err, argv)
        self._tar_out(src, target, err)

    def _tar_out(self, src: str, target: Path, cp_err: bytes) -> None:
        import posixpath
        import shutil
        import subprocess
        import tarfile
        import tempfile

        parent, name = posixpath.dirname(src.rstrip("/")) or "/", posixpath.basename(src.rstrip("/"))
        argv = [self.docker, "exec", self.container, "tar", "-c", "-f", "-", "-C", parent, name]
        tmp = Path(tempfile.mkdtemp(prefix=".shforge-dl-", dir=target.parent))
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            assert proc.stdout is not None
            try:
                with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                    extract_untrusted(tar, tmp, keep_modes=True)
            except tarfile.TarError as e:
                proc.kill()
                proc.wait()
                text = cp_err.decode("utf-8", "replace").strip().splitlines()
                raise SandboxError(
                    f"download {self.container}:{src}: {text[-1][:300] if text else ''} ({e})", argv=argv
                ) from e
            err = proc.stderr.read() if proc.stderr is not None else b""
            proc.wait()
            if proc.returncode != 0:
                self._transport(proc.returncode, err, argv)
                text = (err or cp_err).decode("utf-8", "replace").strip().splitlines()
                raise SandboxError(
                    f"download {self.container}:{src}: {text[-1][:500] if text else 'failed'}", argv=argv
                )
            os.replace(tmp / name, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class _Client:
    """One docker client run: its streams pumped by threads (each capped at
    the sandbox's ``max_output``), its stdin fed by another, a timeout a
    timer that kills it. ``complete``: fed each piece of stdout; once it
    says the stdout so far is complete (or stdout ends), :meth:`early`
    returns."""

    def __init__(self, sb: DockerSandbox, argv: List[str], *, stdin: Optional[bytes], timeout: Optional[float],
                 env: Optional[Mapping[str, str]], complete: Optional[Callable[[bytes], bool]] = None) -> None:  # fmt: skip
        import subprocess
        import threading

        self.sb, self.argv, self.timeout = sb, argv, timeout
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=None if not env else {**os.environ, **env},
            )
        except OSError as e:
            raise SandboxError(f"cannot run {argv[0]}: {e.strerror}", argv=argv) from e
        self.over: List[str] = []
        self.got: Dict[str, List[bytes]] = {"stdout": [], "stderr": []}
        self.complete = complete
        self.ready = threading.Event()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.threads = [threading.Thread(target=self._pump, args=("stdout", self.proc.stdout), daemon=True),
                        threading.Thread(target=self._pump, args=("stderr", self.proc.stderr), daemon=True)]
        if stdin is not None:
            assert self.proc.stdin is not None
            self.threads.append(threading.Thread(target=self._feed, args=(self.proc.stdin, stdin), daemon=True))
        for t in self.threads:
            t.start()
        # A blocking wait, the timeout a timer that kills the client:
        # Popen.wait(timeout=) polls with sleeps of up to 50 ms, which the
        # end of every exec paid.
        self.expired = threading.Event()
        self.timer = None if timeout is None else threading.Timer(timeout, self._expire)
        if self.timer is not None:
            self.timer.daemon = True
            self.timer.start()

    def _expire(self) -> None:
        self.expired.set()
        self.proc.kill()

    def _pump(self, name: str, stream: IO[bytes]) -> None:
        total = 0
        try:
            while True:
                chunk = stream.read1(65536)  # type: ignore[attr-defined]
                if not chunk:
                    return
                total += len(chunk)
                if total > self.sb.max_output:
                    self.over.append(name)
                    self.proc.kill()
                    return
                self.got[name].append(chunk)
                if name == "stdout" and self.complete is not None and not self.ready.is_set():
                    if self.complete(chunk):
                        self.ready.set()
        finally:
            if name == "stdout":
                self.ready.set()

    @staticmethod
    def _feed(stream: IO[bytes], data: bytes) -> None:
        try:
            stream.write(data)
            stream.close()
        except OSError:
            pass  # the client is gone (killed, or it exited first)

    def early(self) -> bytes:
        """The stdout once ``complete`` passed or stdout ended (a client
        killed for its output or a timeout: at once)."""
        self.ready.wait()
        return b"".join(self.got["stdout"])

    def finish(self) -> "tuple[int, bytes, bytes]":
        """Wait for the client's end: its status, stdout and stderr."""
        try:
            self.proc.wait()
        finally:
            if self.timer is not None:
                self.timer.cancel()
            for t in self.threads:
                t.join()
            assert self.proc.stdout is not None and self.proc.stderr is not None
            for stream in (self.proc.stdout, self.proc.stderr):
                stream.close()
        argv = self.argv
        if self.expired.is_set():
            raise SandboxTimeoutError(
                f"{' '.join(argv[:2])} in {self.sb.container}: no exit within {self.timeout:g} s", argv=argv
            )
        if self.over:
            raise SandboxError(
                f"{' '.join(argv[:2])} in {self.sb.container}: more than {self.sb.max_output} bytes on {self.over[0]}",
                argv=argv,
            )
        return self.proc.returncode, b"".join(self.got["stdout"]), b"".join(self.got["stderr"])


class AsyncDockerSandbox:
    """The asyncio form of :class:`DockerSandbox` (each call in a worker
    thread: the docker client is a process either way)."""

    def __init__(self, container: str, user: Optional[str] = None, docker: str = "docker",
                 max_output: int = MAX_OUTPUT) -> None:
        self.sync = DockerSandbox(container, user, docker, max_output)

    @property
    def user(self) -> Optional[str]:
        return self.sync.user

    async def exec(
        self,
        command: Union[str, Sequence[str]],
        *,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        stdin: Optional[bytes] = None,
    ) -> ExecResult:
        import asyncio

        return await asyncio.to_thread(
            self.sync.exec, command, env=env, cwd=cwd, user=user, timeout=timeout, stdin=stdin
        )

    async def exec_split(
        self,
        command: Union[str, Sequence[str]],
        *,
        complete: Callable[[bytes], bool],
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        stdin: Optional[bytes] = None,
    ) -> "Tuple[bytes, Callable[[], Awaitable[ExecResult]]]":
        """As :meth:`DockerSandbox.exec_split`, ``finish`` awaitable."""
        import asyncio

        out, end = await asyncio.to_thread(
            lambda: self.sync.exec_split(command, complete=complete, env=env, cwd=cwd, user=user,
                                         timeout=timeout, stdin=stdin)  # fmt: skip
        )

        async def finish() -> ExecResult:
            return await asyncio.to_thread(end)

        return out, finish

    async def upload(self, src: StrPath, dst: str, *, user: Optional[str] = None) -> None:
        import asyncio

        await asyncio.to_thread(self.sync.upload, src, dst, user=user)

    async def download(self, src: str, dst: StrPath) -> None:
        import asyncio

        await asyncio.to_thread(self.sync.download, src, dst)
