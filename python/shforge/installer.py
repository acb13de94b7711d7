"""Installers from an adapter's own TOML spec (``shforge installer``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from . import _cli
from ._files import StrPath


def installer_script(spec: StrPath, *, out: Optional[StrPath] = None) -> str:
    """The installer script for the spec at ``spec`` (see installers/README.md
    of the source tree for the format); also written to ``out`` (atomically,
    executable) when given. A bad spec raises
    :class:`~shforge.errors.UsageError` naming the field
    (``artifact[1].sha256: expected 64 hex digits``)."""
    if out is None:
        return _cli.run(["installer", "--spec", str(spec)]).decode("utf-8")
    _cli.run(["installer", "--spec", str(spec), "--out", str(out)])
    return Path(out).read_text(encoding="utf-8")
