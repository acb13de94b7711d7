"""The scripts inside the package are generated/ of the checkout, byte for byte."""

from __future__ import annotations

import hashlib
import json
import os
import stat

import pytest
from conftest import CHECKOUT

import shforge


def test_manifest_is_the_checkouts() -> None:
    shipped = (shforge.scripts_dir() / "manifest.json").read_bytes()
    assert shipped == (CHECKOUT / "generated" / "manifest.json").read_bytes()


def test_every_script_matches_its_digest() -> None:
    committed = json.loads((CHECKOUT / "generated" / "manifest.json").read_text())["files"]
    assert [e.file for e in shforge.manifest()] == [f["file"] for f in committed]
    for f in committed:
        path = shforge.script_path(f["file"])
        assert hashlib.sha256(path.read_bytes()).hexdigest() == f["sha256"], f["file"]
    shforge.verify()


def test_scripts_are_executable_and_found_by_name() -> None:
    for name in [shforge.BOOTSTRAP, shforge.SUPERVISOR, shforge.RUNNER, "installers/codex.sh"]:
        mode = os.stat(shforge.script_path(name)).st_mode
        assert stat.S_IMODE(mode) & 0o111, name
    assert shforge.installer_path("codex") == shforge.script_path("installers/codex.sh")
    with pytest.raises(KeyError, match="not a shipped script"):
        shforge.script_path("../Cargo.toml")


def test_marker_var_is_the_supervisors() -> None:
    text = shforge.script_path(shforge.SUPERVISOR).read_text()
    assert f"{shforge.MARKER_VAR}=" in text
