"""Running the ``shforge`` executable installed with this package."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence

from .errors import BinaryNotFoundError, from_exit

#: Overrides where the executable is looked for (a development build).
BIN_ENV = "SHFORGE_BIN"


def binary() -> Path:
    """The ``shforge`` executable: ``$SHFORGE_BIN``, else the one pip
    installed next to this package (the environment's scripts dir, or the
    user scheme's), else the first on PATH."""
    # Imported here, not at the top: `import shforge` stays cheap for an
    # adapter that only wants the scripts' paths.
    import sysconfig

    override = os.environ.get(BIN_ENV)
    if override:
        return Path(override)
    dirs = [sysconfig.get_path("scripts")]
    try:
        dirs.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    except KeyError:
        pass
    for scripts in dirs:
        candidate = Path(scripts) / "shforge"
        if os.access(candidate, os.X_OK) and candidate.is_file():
            return candidate
    found = _which("shforge")
    if found is None:
        raise BinaryNotFoundError(
            "shforge: the shforge executable is not installed (pip install shforge) "
            f"and ${BIN_ENV} is not set",
            127,
        )
    return found


def _which(name: str) -> Optional[Path]:
    """The first executable ``name`` in a PATH directory (shutil.which
    without importing shutil)."""
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = Path(d or ".") / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def run(
    args: Sequence[str],
    *,
    stdin: Optional[bytes] = None,
) -> bytes:
    """Run ``shforge ARGS...``; its stdout on exit 0, else the matching
    :class:`~shforge.errors.ShforgeError`."""
    import subprocess

    argv = [str(binary()), *args]
    proc = subprocess.run(
        argv,
        input=stdin if stdin is not None else b"",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=False,
    )
    if proc.returncode != 0:
        shown = ["shforge", *args]
        raise from_exit(proc.returncode, proc.stderr.decode("utf-8", "replace"), shown)
    return proc.stdout
