"""Shared by the wheel's tests: they run against the installed package only."""

from __future__ import annotations

from pathlib import Path

import pytest

import shforge

#: The checkout these tests live in (for generated/manifest.json only).
CHECKOUT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def installed_not_checkout() -> None:
    """The package under test is the installed wheel, not python/ of the checkout."""
    assert CHECKOUT / "python" not in Path(shforge.__file__).resolve().parents, shforge.__file__
