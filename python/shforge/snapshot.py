"""Session snapshots (``shforge snapshot``)."""

from __future__ import annotations

import json
from typing import Any, Dict, Literal, Optional

from . import _cli
from ._files import StrPath
from .errors import UsageError
from .harness import SnapshotKind


def snapshot(
    kind: SnapshotKind,
    *,
    db: Optional[StrPath] = None,
    dir: Optional[StrPath] = None,
    format: Literal["json", "atif"] = "json",
) -> Dict[str, Any]:
    """A harness's session data, copied out of the sandbox, as one JSON
    document (``{"harness", "sessions", "summary"}``).

    Give ``db`` for opencode and kilo (``FILE-wal`` beside it is read too),
    ``dir`` for claude-code, pi and codex. ``format="atif"`` asks for an
    ATIF trajectory instead (``--format atif``; a CLI without that option
    refuses it with exit 2, :class:`~shforge.errors.UsageError`). No session
    data raises :class:`~shforge.errors.NoSessionDataError` (code 1);
    unreadable or foreign input :class:`~shforge.errors.UsageError` (code 2).
    """
    if (db is None) == (dir is None):
        raise UsageError("shforge: snapshot needs exactly one of db and dir", 2)
    args = ["snapshot", kind]
    args += ["--db", str(db)] if db is not None else ["--dir", str(dir)]
    if format != "json":
        # Only when asked: "json" is the default of every CLI, with or
        # without --format.
        args.append(f"--format={format}")
    doc = json.loads(_cli.run(args))
    assert isinstance(doc, dict)
    return doc
