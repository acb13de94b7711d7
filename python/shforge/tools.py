"""Wrappers of the CLI adapters asked for: ``fetch``, ``pin``, ``outcome`` and the
fake model server as a context manager."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Dict, Iterator, Optional, Sequence

from . import _cli
from ._files import StrPath
from .errors import OperationError, UsageError


def fetch(names: Sequence[str], *, into: StrPath, specs: Sequence[StrPath] = ()) -> None:
    """Fetch and verify the pinned artifacts of the harnesses ``names`` (and
    of the installer spec files ``specs``) into the host directory ``into``
    (``shforge fetch NAME... --into DIR``); artifacts already there and
    matching their sha256 are kept. A failed fetch raises
    :class:`~shforge.errors.OperationError`, an unknown name
    :class:`~shforge.errors.UsageError`."""
    if not names and not specs:
        raise UsageError("shforge: fetch needs at least one harness name or spec", 2)
    args = ["fetch", *names, "--into", str(into)]
    for spec in specs:
        args += ["--spec", str(spec)]
    _cli.run(args)


@dataclass(frozen=True)
class Pinned:
    """What :func:`pin` wrote."""

    installer: Path
    """The installer spec (``OUT/installers/NAME.toml``)."""
    harness: Optional[Path]
    """The harness spec (``OUT/harnesses/NAME.toml``); ``None`` when the checkout's
    spec was replaced in place (its harness spec is unchanged)."""


def pin(
    name_at_version: str,
    *,
    out: Optional[StrPath] = None,
    arch: Sequence[str] = (),
    artifacts: Optional[StrPath] = None,
) -> Pinned:
    """Move a shipped harness to another release (``shforge pin
    NAME@VERSION``): its npm rows (or its bundle, locked again) made again
    for that version into the artifact cache ``artifacts`` (default
    /var/cache/shforge/artifacts), the specs written under ``out`` (without
    it: the checkout in the current directory). ``arch`` limits the rows to
    those arches. Bad input raises :class:`~shforge.errors.UsageError` (exit
    2); a version or platform package the registry lacks (exit 3) and a
    changed layout (exit 4) raise :class:`~shforge.errors.ShforgeError` with that ``code``; a
    failed fetch :class:`~shforge.errors.OperationError`. Nothing is written
    on error."""
    args = ["pin", name_at_version]
    if out is not None:
        args += ["--out", str(out)]
    for a in arch:
        args += ["--arch", a]
    if artifacts is not None:
        args += ["--artifacts", str(artifacts)]
    wrote = [
        Path(line[len("wrote ") :])
        for line in _cli.run(args).decode().splitlines()
        if line.startswith("wrote ")
    ]
    if not wrote:
        raise OperationError("shforge: pin printed no `wrote` line", 1, args)
    return Pinned(installer=wrote[0], harness=wrote[1] if len(wrote) > 1 else None)


def outcome(
    *,
    receipt: StrPath,
    harness: str,
    capture: Optional[StrPath] = None,
    events: Optional[StrPath] = None,
    stderr: Optional[StrPath] = None,
    stdout: Optional[StrPath] = None,
) -> Dict[str, Any]:
    """Why a rollout ended (``shforge outcome``): ``{"status", "cause",
    "evidence", ...}`` from the host copies of the receipt, the capture
    (the session dir or DB capture.json names), the runner's events file or
    stdout, and the CLI's stderr. An unreadable receipt raises
    :class:`~shforge.errors.UsageError`."""
    args = ["outcome", "--receipt", str(receipt), "--harness", harness]
    for flag, value in (("--capture", capture), ("--events", events), ("--stderr", stderr), ("--stdout", stdout)):
        if value is not None:
            args += [flag, str(value)]
    doc = json.loads(_cli.run(args))
    assert isinstance(doc, dict)
    return doc


@dataclass(frozen=True)
class FakeModelServer:
    """A running ``shforge fake-model-server``."""

    base_url: str
    """Its root URL (``http://127.0.0.1:PORT``)."""
    port: int


@contextmanager
def fake_model_server(
    *,
    port: int = 0,
    log: Optional[StrPath] = None,
    token: Optional[str] = None,
    target: Optional[str] = None,
    prefer: Optional[str] = None,
    timeout: Optional[float] = None,
) -> Iterator[FakeModelServer]:
    """Start ``shforge fake-model-server`` on 127.0.0.1 (``port=0``: a free
    one), yield it, stop it on exit. A container reaches it with
    ``--network host``. A server that does not start raises
    :class:`~shforge.errors.OperationError` with its message."""
    import subprocess

    args = [str(_cli.binary()), "fake-model-server", "--port", str(port)]
    for flag, value in (("--log", log), ("--token", token), ("--target", target), ("--prefer", prefer)):
        if value is not None:
            args += [flag, str(value)]
    if timeout is not None:
        args += ["--timeout", str(timeout)]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode("utf-8", "replace")
        if not line.startswith("listening on "):
            proc.kill()
            _, err = proc.communicate()
            text = err.decode("utf-8", "replace").strip().splitlines()
            raise OperationError(text[-1] if text else "shforge: fake-model-server did not start", 1)
        base_url = line.split()[-1]
        yield FakeModelServer(base_url=base_url, port=int(base_url.rsplit(":", 1)[-1].strip("/")))
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
