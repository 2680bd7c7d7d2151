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


@pytest.fixture(scope="session")
def corpus_home(tmp_path_factory) -> Path:
    """A corpus (tables + index) built once per session from ../shared/corpus through Dagster.

    GD_ASSETS_TEST_CORPUS_HOME reuses one built earlier (same code), to keep local runs short.
    """
    reuse = os.environ.get("GD_ASSETS_TEST_CORPUS_HOME")
    if reuse and (Path(reuse) / "corpora.duckdb").exists():
        return Path(reuse)
    source = shared_path("corpus")
    from corpora_build.definitions import build_corpus

    built = tmp_path_factory.mktemp("corpus-home")
    saved = {k: os.environ.get(k) for k in ("GD_ASSETS_HOME", "GD_ASSETS_CORPUS_HOME", "DAGSTER_HOME")}
    os.environ["GD_ASSETS_HOME"] = str(built)
    os.environ.pop("GD_ASSETS_CORPUS_HOME", None)
    os.environ.pop("DAGSTER_HOME", None)
    try:
        result = build_corpus(str(source))
        assert result.success, "the corpus build failed"
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return built


@pytest.fixture
def analysis_home(gd_home, corpus_home, monkeypatch) -> Path:
    """A private data directory that reads the session's built corpus."""
    monkeypatch.setenv("GD_ASSETS_CORPUS_HOME", str(corpus_home))
    return gd_home
