"""The generated scripts shipped inside this package, byte-identical to the
``generated/`` directory of the source tree they were built from (in that
tree, ``python/shforge/scripts`` is a symlink to ``generated/``, which the
build reads through)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import List, Literal

#: ``bootstrap.sh``: runs first, under any POSIX sh.
BOOTSTRAP = "bootstrap.sh"
#: ``process_supervisor.sh``: the supervisor (bash 3.2+).
SUPERVISOR = "process_supervisor.sh"
#: ``harness_runner.sh``: runs one harness CLI from a parameter file (bash 3.2+).
RUNNER = "harness_runner.sh"


@dataclass(frozen=True)
class ScriptEntry:
    """One line of ``manifest.json``."""

    file: str
    """Path relative to the scripts dir (``installers/codex.sh``)."""
    dialect: Literal["posix", "bash"]
    sha256: str


def scripts_dir() -> Path:
    """The directory holding the scripts and ``manifest.json`` (upload it,
    or the files you need, into the sandbox as it is)."""
    from importlib import resources

    root = resources.files("shforge") / "scripts"
    # Installed from a wheel, the package is a plain directory.
    path = Path(str(root))
    if not (path / "manifest.json").is_file():
        raise FileNotFoundError(
            f"{path}/manifest.json: shforge was built without its scripts"
            " (python/shforge/scripts is a symlink to generated/ in the source tree;"
            " a checkout without symlinks, git's core.symlinks=false, lacks it)"
        )
    return path


def script_path(name: str) -> Path:
    """The path of one script: ``bootstrap.sh``, ``process_supervisor.sh``,
    ``harness_runner.sh`` or ``installers/NAME.sh``."""
    entries = {e.file for e in manifest()}
    if name not in entries:
        raise KeyError(f"{name!r} is not a shipped script (one of: {', '.join(sorted(entries))})")
    return scripts_dir() / name


def installer_path(harness: str) -> Path:
    """The generated installer of a shipped harness (``installers/NAME.sh``)."""
    return script_path(f"installers/{harness}.sh")


def manifest() -> List[ScriptEntry]:
    """The shipped ``manifest.json``: file, dialect and sha256 of each script."""
    doc = json.loads((scripts_dir() / "manifest.json").read_text(encoding="utf-8"))
    return [ScriptEntry(file=f["file"], dialect=f["dialect"], sha256=f["sha256"]) for f in doc["files"]]


def verify() -> None:
    """Raise ``ValueError`` unless every shipped script matches its digest in
    ``manifest.json`` (and no other file lies beside them)."""
    import hashlib

    root = scripts_dir()
    listed = {e.file: e.sha256 for e in manifest()}
    present = {
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != "manifest.json"
    }
    if present != set(listed):
        raise ValueError(f"scripts differ from manifest.json: {sorted(present ^ set(listed))}")
    for name, digest in listed.items():
        actual = hashlib.sha256((root / name).read_bytes()).hexdigest()
        if actual != digest:
            raise ValueError(f"{name}: sha256 {actual}, manifest.json says {digest}")
