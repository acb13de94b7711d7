"""The PEP 517 backend of the shforge package (pyproject.toml's
``build-backend``): maturin's hooks as they are, except ``build_sdist``.

maturin writes every file of an sdist with mode 0644, so a wheel built from
it would install the generated scripts without their executable bits.
``build_sdist`` rewrites the archive maturin made, giving each file the
executable bits its source has in this tree (``python/shforge/scripts`` is
read through its symlink to ``generated/``); names and bytes are unchanged.
Not part of the wheel: maturin packs only ``python/shforge``.
"""

from __future__ import annotations

import gzip
import os
import tarfile
from typing import Any, Mapping, Optional

import maturin as _maturin

# Every other hook is maturin's own (the set differs between its versions).
for _hook in (
    "build_wheel",
    "build_editable",
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "prepare_metadata_for_build_editable",
):
    if hasattr(_maturin, _hook):
        globals()[_hook] = getattr(_maturin, _hook)


def build_sdist(sdist_directory: str, config_settings: Optional[Mapping[str, Any]] = None) -> str:
    name: str = _maturin.build_sdist(sdist_directory, config_settings)
    _restore_modes(os.path.join(sdist_directory, name), os.getcwd())
    return name


def _restore_modes(archive: str, source_root: str) -> None:
    """Give each regular file in ``archive`` (a .tar.gz whose members sit
    under one top directory) mode 0755 when its source under
    ``source_root`` is executable; the rest of each member is kept."""
    tmp = archive + ".tmp"
    with tarfile.open(archive, "r:gz") as src, open(tmp, "wb") as raw:
        # mtime 0 in the gzip header, as maturin's: the same tree gives the
        # same bytes.
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as dst:
                for member in src.getmembers():
                    data = None
                    if member.isfile():
                        _, _, rel = member.name.partition("/")
                        path = os.path.join(source_root, rel)
                        if rel and os.path.isfile(path) and os.stat(path).st_mode & 0o111:
                            member.mode = 0o755
                        data = src.extractfile(member)
                    dst.addfile(member, data)
    os.replace(tmp, archive)
