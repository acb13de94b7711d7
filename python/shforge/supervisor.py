"""The supervised launch, its cleanup receipt and ending preserved services.

The argv are built by the CLI (``shforge launch``, ``shforge end-services-argv``)
from the Rust library's ``supervised_launch``: the same checks and the same
words as every other host of ``process_supervisor.sh``.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, Union

from . import _cli
from ._files import StrPath
from .errors import UsageError

#: The variable through which the supervisor marks every process it starts
#: (``NAME=MARKER`` in ``/proc/PID/environ``).
MARKER_VAR = "NEMO_GYM_SUPERVISOR"

#: Seconds as a number or a :class:`datetime.timedelta`.
Seconds = Union[int, float, datetime.timedelta]


def _seconds(name: str, value: Seconds) -> str:
    secs = value.total_seconds() if isinstance(value, datetime.timedelta) else value
    if isinstance(secs, bool) or not isinstance(secs, (int, float)):
        raise UsageError(f"shforge: {name} must be a number of seconds, not {secs!r}", 2)
    # Plain decimal notation (never 1e-05); the CLI refuses a negative,
    # infinite or NaN value with its own message.
    return f"{secs:.9f}" if isinstance(secs, float) else str(secs)


def launch_argv(
    supervisor: str,
    receipt: str,
    command: Sequence[str],
    *,
    deadline: Optional[Seconds] = None,
    grace: Optional[Seconds] = None,
    marker: Optional[str] = None,
    cgroup: Optional[str] = None,
    max_procs: Optional[int] = None,
    bash: str = "bash",
) -> List[str]:
    """The argv that runs ``command`` under ``process_supervisor.sh``.

    ``supervisor`` and ``receipt`` are paths inside the sandbox. The argv
    starts ``env -u BASH_ENV -u ENV -u SHELLOPTS -u BASHOPTS -u TMOUT ...
    bash --noprofile --norc SUPERVISOR --receipt RECEIPT``: bash's own
    variables that would change how the supervisor runs are cleared (the
    docs/security.md, "What the image's environment cannot change"). ``deadline`` and ``grace`` are
    seconds (rounded down to 0.01); ``marker`` is 1-256 printable ASCII
    characters without blanks (default: a fresh one); ``cgroup`` is an
    absolute cgroup v2 directory or ``"none"``; ``max_procs`` needs a
    cgroup directory. A refused value raises
    :class:`~shforge.errors.UsageError` with the CLI's message.
    """
    args = ["launch", "--supervisor", supervisor, "--receipt", receipt, "--bash", bash]
    if deadline is not None:
        args += [f"--deadline={_seconds('deadline', deadline)}"]
    if grace is not None:
        args += [f"--grace={_seconds('grace', grace)}"]
    if marker is not None:
        args += [f"--marker={marker}"]
    if cgroup is not None:
        args += [f"--cgroup={cgroup}"]
    if max_procs is not None:
        args += [f"--max-procs={max_procs}"]
    args += ["--", *command]
    return _json_argv(args)


def end_services_argv(
    supervisor: str,
    receipt: str,
    *,
    grace: Optional[Seconds] = None,
    bash: str = "bash",
) -> List[str]:
    """The argv that ends exactly the services ``receipt`` lists, run inside
    the sandbox after the rollout (``process_supervisor.sh --end-services``):
    exit 0 when none is left, 125 when one outlived the KILL, 2 when the
    receipt is unreadable."""
    args = ["end-services-argv", "--supervisor", supervisor, "--receipt", receipt]
    args += ["--bash", bash]
    if grace is not None:
        args += [f"--grace={_seconds('grace', grace)}"]
    return _json_argv(args)


def _json_argv(args: List[str]) -> List[str]:
    argv = json.loads(_cli.run(args))
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
    return argv


@dataclass(frozen=True)
class Service:
    """A process the supervisor preserved: marked, but outside the harness
    when the stop began (a server the agent started for the task)."""

    pid: int
    """Its PID in the sandbox's PID namespace."""
    start_time: int
    """Its start time in clock ticks after boot (``/proc/PID/stat`` field 22)."""
    argv0: str
    """The first word of its command line when the stop began (a hint)."""


@dataclass(frozen=True)
class StopReport:
    """How the supervisor's stop went (seconds since the launch, 0.01 s)."""

    reason: Literal["exit", "deadline", "signal", "lost"]
    signal: Optional[str]
    began_at: float
    term_at: Optional[float]
    kill_at: Optional[float]
    ended_at: float
    grace_s: Optional[float]
    reached_term: int
    reached_kill: int
    harness_exited_by_itself: bool

    @classmethod
    def from_dict(cls, doc: Dict[str, Any]) -> "StopReport":
        return cls(
            reason=doc["reason"],
            signal=doc.get("signal"),
            began_at=float(doc["began_at"]),
            term_at=None if doc.get("term_at") is None else float(doc["term_at"]),
            kill_at=None if doc.get("kill_at") is None else float(doc["kill_at"]),
            ended_at=float(doc["ended_at"]),
            grace_s=None if doc.get("grace_s") is None else float(doc["grace_s"]),
            reached_term=int(doc["reached_term"]),
            reached_kill=int(doc["reached_kill"]),
            harness_exited_by_itself=bool(doc["harness_exited_by_itself"]),
        )


@dataclass(frozen=True)
class Zombie:
    """A zombie of the harness nobody reaps (run containers with ``--init``)."""

    pid: int
    ppid: int
    start_time: int


@dataclass(frozen=True)
class Receipt:
    """The cleanup receipt ``process_supervisor.sh`` writes."""

    cleanup_confirmed: bool
    """The final scan found no reached process alive."""
    return_code: Optional[int]
    """The command's shell status (128+N for a signal death); None when it never ran."""
    error: Optional[str]
    """The supervisor's own failure, if any."""
    timed_out: bool
    """The deadline expired."""
    containment: Literal["proc", "cgroup"]
    """How the stop contained the harness."""
    services: Tuple[Service, ...]
    """Preserved services; end them with :func:`end_services_argv`."""
    stop: Optional[StopReport] = None
    """How the stop went; None when the harness never ran (or an older supervisor)."""
    zombies: Tuple[Zombie, ...] = ()
    """Zombies of the harness left after the stop (a PID 1 that does not reap)."""
    marker: Optional[str] = None
    """The run's marker token (``NEMO_GYM_SUPERVISOR=MARKER``); not a secret."""

    @property
    def is_clean(self) -> bool:
        """Cleanup confirmed and no supervisor error."""
        return self.cleanup_confirmed and self.error is None

    @classmethod
    def from_dict(cls, doc: Dict[str, Any]) -> "Receipt":
        """A receipt from the normalised JSON of ``shforge receipt``."""
        containment = doc["containment"]
        assert containment in ("proc", "cgroup")
        return cls(
            cleanup_confirmed=bool(doc["cleanup_confirmed"]),
            return_code=doc["return_code"],
            error=doc["error"],
            timed_out=bool(doc["timed_out"]),
            containment=containment,
            services=tuple(
                Service(pid=s["pid"], start_time=s["start_time"], argv0=s["argv0"])
                for s in doc["services"]
            ),
            stop=StopReport.from_dict(doc["stop"]) if doc.get("stop") else None,
            zombies=tuple(
                Zombie(pid=z["pid"], ppid=z["ppid"], start_time=z["start_time"]) for z in doc.get("zombies") or ()
            ),
            marker=doc.get("marker"),
        )


def read_receipt(path: StrPath) -> Receipt:
    """Read and validate a receipt copied out of the sandbox (``shforge
    receipt``): strict on its four original keys, tolerant of extra ones. A
    missing, oversized or malformed receipt raises
    :class:`~shforge.errors.UsageError` (code 2)."""
    return Receipt.from_dict(json.loads(_cli.run(["receipt", str(path)])))
