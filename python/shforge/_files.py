"""Writing a file as the CLI does: whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Union

from .errors import OperationError, UsageError

StrPath = Union[str, "os.PathLike[str]"]


def write_atomic(path: StrPath, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a temporary file (mode 0600 until
    whole) in the same directory and one rename, so a reader sees the old
    file or the new one, never a part, as the CLI's ``--out`` does. A target
    that exists and is not a regular file is refused (code 2)."""
    import tempfile

    target = Path(path)
    # As the CLI: a target that is not a regular file (a directory, FIFO,
    # device) is bad input, left as it is; a link is replaced, not followed.
    if target.exists() and not target.is_file():
        kind = "a directory" if target.is_dir() else "a file that is not regular"
        if target.is_symlink():
            kind = f"a symlink to {kind}"
        raise UsageError(f"shforge: {target}: refusing to replace {kind}", 2)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    except OSError as e:
        raise OperationError(f"shforge: cannot write {target}: {e.strerror}", 1) from e
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as e:
        os.unlink(tmp)
        raise OperationError(f"shforge: cannot write {target}: {e.strerror}", 1) from e
