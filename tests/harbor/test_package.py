"""No docker needed: the package's Harbor layer against the checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_shforge_does_not_import_harbor() -> None:
    code = "import sys, shforge; assert 'harbor' not in sys.modules and 'shforge.harbor' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_harness_apis_match_the_specs() -> None:
    tomllib = pytest.importorskip("tomllib")
    from shforge._harbor_rollout import HARNESS_APIS, catalog

    specs = {p.stem: tomllib.loads(p.read_text())["apis"] for p in (ROOT / "harnesses").glob("*.toml")}
    assert HARNESS_APIS == specs
    assert set(catalog()) == set(specs)


def test_one_class_per_harness() -> None:
    pytest.importorskip("harbor")
    from shforge import harbor

    classes = {getattr(harbor, n).HARNESS for n in harbor.__all__ if n not in ("HarborSandbox", "ShforgeAgent", "API_FORMATS")}
    assert classes == {p.stem for p in (ROOT / "harnesses").glob("*.toml")}
    assert harbor.ShforgeAgent.SUPPORTS_ATIF is True
