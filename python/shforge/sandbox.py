"""What a sandbox provider must offer :func:`shforge.rollout`.

Modelled on NeMo Gym's provider interface (``exec(handle, command, *, cwd,
env, timeout_s, user)``, ``upload_file``, ``download_file``) and Harbor's
environment (``exec(command, cwd, env, timeout_sec, user)``, upload and
download of files and dirs): one :class:`Sandbox` (synchronous) and one
:class:`AsyncSandbox` (asyncio) with the same methods. A provider wraps its
own handle in a small class with these methods; ``shforge.docker`` has one
for ``docker exec``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import (
    Any,
    Awaitable,
    Callable,
    Coroutine,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    runtime_checkable,
)

from ._files import StrPath

#: A shell command (run with ``sh -c``) or an argv (run as it is, no shell).
Command = Union[str, Sequence[str]]

T = TypeVar("T")


def is_root(user: Optional[str]) -> bool:
    """Whether a sandbox user (``NAME``, ``UID`` or ``UID:GID``) is root."""
    return user is not None and user.split(":")[0] in ("0", "root")


@dataclass(frozen=True)
class ExecResult:
    """How a command in the sandbox ended."""

    exit_code: int
    stdout: bytes
    stderr: bytes


@runtime_checkable
class Sandbox(Protocol):
    """A synchronous sandbox (Gym's providers are synchronous).

    Contract of every method:

    - a nonzero exit status is **not** an exception: it is in
      :attr:`ExecResult.exit_code`;
    - a transport failure (the sandbox is gone, the provider cannot reach
      it, a copy failed) raises :class:`~shforge.errors.SandboxError`;
    - a ``timeout`` that expires raises
      :class:`~shforge.errors.SandboxTimeoutError` (a ``SandboxError``);
      the provider stops waiting, what runs inside is the caller's to stop.
    """

    @property
    def user(self) -> Optional[str]:
        """The user the rollout runs as (name or ``uid[:gid]``); None: the
        image's default user."""
        ...

    def exec(
        self,
        command: Command,
        *,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        stdin: Optional[bytes] = None,
    ) -> ExecResult:
        """Run ``command`` (a ``str`` is run with ``sh -c``; a sequence is
        an argv, no shell) in the sandbox as ``user`` (None: :attr:`user`;
        ``"0"`` or ``"root"`` for installs), in ``cwd``, with ``env`` added
        to the sandbox's environment (values never on any argv or in any
        log), ``stdin`` as its standard input (None: empty), for at most
        ``timeout`` seconds."""
        ...

    def upload(self, src: StrPath, dst: str, *, user: Optional[str] = None) -> None:
        """Copy the local file or directory ``src`` to the path ``dst`` in
        the sandbox. A directory's content goes into ``dst`` (created, with
        its parents); a file becomes ``dst``. Files are owned by ``user``
        when given, else by :attr:`user` (the rollout must be able to open
        them), modes kept."""
        ...

    def download(self, src: str, dst: StrPath) -> None:
        """Copy the file or directory ``src`` of the sandbox to the local
        path ``dst`` (a directory's content into ``dst``, created)."""
        ...


@runtime_checkable
class AsyncSandbox(Protocol):
    """The asyncio form of :class:`Sandbox` (Harbor's environments are
    async): the same methods and contract, as coroutines."""

    @property
    def user(self) -> Optional[str]:
        """As :attr:`Sandbox.user`."""
        ...

    async def exec(
        self,
        command: Command,
        *,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        stdin: Optional[bytes] = None,
    ) -> ExecResult:
        """As :meth:`Sandbox.exec`."""
        ...

    async def upload(self, src: StrPath, dst: str, *, user: Optional[str] = None) -> None:
        """As :meth:`Sandbox.upload`."""
        ...

    async def download(self, src: str, dst: StrPath) -> None:
        """As :meth:`Sandbox.download`."""
        ...


class SyncAsAsync:
    """A :class:`Sandbox` seen as an :class:`AsyncSandbox` whose coroutines
    never suspend: the rollout logic is written once, async, and the
    synchronous API drives it with :func:`drive`."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._sandbox = sandbox

    @property
    def user(self) -> Optional[str]:
        return self._sandbox.user

    async def exec(
        self,
        command: Command,
        *,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        stdin: Optional[bytes] = None,
    ) -> ExecResult:
        return self._sandbox.exec(command, env=env, cwd=cwd, user=user, timeout=timeout, stdin=stdin)

    async def exec_split(
        self,
        command: Command,
        *,
        complete: Callable[[bytes], bool],
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        stdin: Optional[bytes] = None,
    ) -> "Tuple[bytes, Callable[[], Awaitable[ExecResult]]]":
        """The sandbox's own ``exec_split`` (``shforge.docker``'s: the
        stdout back once ``complete``, the end awaited apart), else
        :meth:`exec` whole."""
        split = getattr(self._sandbox, "exec_split", None)
        end: Callable[[], ExecResult]
        if split is None:
            r = self._sandbox.exec(command, env=env, cwd=cwd, user=user, timeout=timeout, stdin=stdin)
            out, end = r.stdout, lambda: r
        else:
            out, end = split(command, complete=complete, env=env, cwd=cwd, user=user, timeout=timeout, stdin=stdin)

        async def finish() -> ExecResult:
            return end()

        return out, finish

    async def upload(self, src: StrPath, dst: str, *, user: Optional[str] = None) -> None:
        self._sandbox.upload(src, dst, user=user)

    async def download(self, src: str, dst: StrPath) -> None:
        self._sandbox.download(src, dst)


def drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (one over :class:`SyncAsAsync`)
    to its end, without an event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        value: T = done.value
        return value
    coro.close()
    raise RuntimeError("a synchronous sandbox's coroutine suspended (it awaited real I/O)")
