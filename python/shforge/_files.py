"""Writing a file as the CLI does (whole or not at all), and unpacking a
sandbox's tar stream (hostile data) under one directory only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    import tarfile

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


def extract_untrusted(tar: "tarfile.TarFile", into: Path, *, keep_modes: bool = False) -> None:
    """Extract a tar stream that came out of a sandbox under ``into`` only:
    plain files, directories and symlinks; no member named absolute or with
    ``..``, no symlink pointing absolute or with ``..`` (so no later member
    can be written through one to outside ``into``). ``keep_modes``: the
    members' modes and times too (the data filter, where the Python has
    it, drops setuid bits and others' write)."""
    import tarfile

    for member in tar:
        if not (member.isfile() or member.isdir() or member.issym()):
            continue
        names = [member.name] + ([member.linkname] if member.issym() else [])
        if any(n.startswith("/") or ".." in Path(n).parts for n in names):
            continue
        if hasattr(tarfile, "data_filter"):
            tar.extract(member, into, set_attrs=keep_modes, filter="data")
        else:
            tar.extract(member, into, set_attrs=keep_modes)
