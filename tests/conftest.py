"""Shared test set-up: every test gets its own data directory; `../shared/` is read where it is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("GD_ASSETS_SHARED") or REPO.parent / "shared")


def shared_path(*parts: str) -> Path:
    """A path under ../shared/, or skip the test with the reason when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: this test reads the shared fixtures and corpus next to the checkout")
    return path


@pytest.fixture
def gd_home(tmp_path, monkeypatch) -> Path:
    """A private GD_ASSETS_HOME (and Dagster instance) for one test."""
    home = tmp_path / "gd-home"
    monkeypatch.setenv("GD_ASSETS_HOME", str(home))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    return home
