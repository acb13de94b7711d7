"""The exceptions of the shforge API: one per kind of CLI exit.

Every error the API raises for bad input or a failed operation is a
:class:`ShforgeError`. Its message is the CLI's own one-line message and its
``code`` is the CLI's exit code, so an adapter that logs or branches on
either sees exactly what ``shforge`` on the command line would have said.
"""

from __future__ import annotations

from typing import Sequence


class ShforgeError(Exception):
    """A shforge command refused its input or failed.

    ``str(err)`` is the CLI's one-line message (``shforge: ...``), ``code``
    its exit code and ``argv`` the command that was run (empty when the
    Python layer refused the input before running anything).
    """

    code: int
    message: str
    argv: tuple[str, ...]

    def __init__(self, message: str, code: int, argv: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.argv = tuple(argv)


class UsageError(ShforgeError):
    """Bad input (exit 2): a refused value, file or argument; nothing was written."""


class OperationError(ShforgeError):
    """The operation itself failed (exit 1): a write, a run, a missing result."""


class NoSessionDataError(OperationError):
    """``snapshot`` found no session data (exit 1)."""


class BinaryNotFoundError(ShforgeError):
    """The ``shforge`` executable of this installation cannot be found (code 127)."""


def from_exit(code: int, stderr: str, argv: Sequence[str]) -> ShforgeError:
    """The exception for a CLI run that exited ``code`` having printed ``stderr``."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    # The CLI's error is its last line; progress lines may come before it.
    message = lines[-1] if lines else f"shforge: exit {code} without a message"
    if code == 2:
        return UsageError(message, code, argv)
    if code == 1 and len(argv) > 1 and argv[1] == "snapshot":
        return NoSessionDataError(message, code, argv)
    if code == 1:
        return OperationError(message, code, argv)
    return ShforgeError(message, code, argv)


class SandboxError(ShforgeError):
    """A sandbox's transport failed: the command could not be run, a file
    could not be copied (code 1). A command that ran and exited nonzero is
    not an error: its :class:`~shforge.sandbox.ExecResult` says so."""

    def __init__(self, message: str, code: int = 1, argv: Sequence[str] = ()) -> None:
        super().__init__(message, code, argv)


class SandboxTimeoutError(SandboxError):
    """A sandbox command outlived its ``timeout`` (code 124); the provider
    stopped waiting for it (what is left inside the sandbox is the caller's
    to stop)."""

    def __init__(self, message: str, code: int = 124, argv: Sequence[str] = ()) -> None:
        super().__init__(message, code, argv)


#: The steps of :func:`shforge.rollout`, as :attr:`RolloutError.step` names them.
ROLLOUT_STEPS = ("upload", "bootstrap", "install", "session", "launch", "copy-back")


class RolloutError(ShforgeError):
    """The rollout machinery failed at ``step`` (one of :data:`ROLLOUT_STEPS`)
    because of ``cause`` (one line, never holding the API key). The host
    kept nothing of the rollout and, where the sandbox is still alive, the
    rollout's processes were stopped. ``code`` is the failing script's exit
    status when one said why (the installer's table), else 1."""

    step: str
    cause: str

    def __init__(self, step: str, cause: str, code: int = 1) -> None:
        super().__init__(f"shforge: rollout failed at {step}: {cause}", code)
        self.step = step
        self.cause = cause

    def __reduce__(self) -> "tuple[type, tuple[str, str, int]]":
        return (type(self), (self.step, self.cause, self.code))
