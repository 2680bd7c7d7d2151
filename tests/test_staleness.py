"""A corpus refresh with new upstream content makes existing judgements stale; re-analysing redoes them."""

from __future__ import annotations

import shutil

import dagster as dg
import pytest
from conftest import changed_corpus_source, corpus_source, fixture_path
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.loader import LoadingContextForTest

from gd_assets import orchestrate, views
from gd_assets.definitions import defs
from gd_assets.status import materialization_counts

pytestmark = pytest.mark.slow


def dagster_status(asset: str, key: str) -> StaleStatus:
    instance = orchestrate.instance()
    resolver = CachingStaleStatusResolver(instance, defs.resolve_asset_graph(), LoadingContextForTest(instance))
    return resolver.get_status(dg.AssetKey(asset), key)


def test_corpus_change_marks_judgements_stale_and_reanalysis_refreshes_them(gd_home, corpus_home, tmp_path,
                                                                              monkeypatch):
    corpus_copy = tmp_path / "corpus-home"
    shutil.copytree(corpus_home, corpus_copy, ignore=shutil.ignore_patterns("dagster", "reports"))
    monkeypatch.setenv("GD_ASSETS_CORPUS_HOME", str(corpus_copy))
    from gd_assets.orchestrate import build_corpus

    assert build_corpus(str(corpus_source())).success  # same upstream: recorded in this instance, no change
    project = orchestrate.analyze(str(fixture_path("enemy.dump.txt")), None)
    key = "enemy/enemy.gd::extends"
    assert views.status_document(project)["counts"]["stale"] == 0
    assert dagster_status("fragment_evidence", key) == StaleStatus.FRESH

    changed = changed_corpus_source(tmp_path / "corpus-src")  # upstream docs changed
    assert build_corpus(str(changed)).success
    assert views.status_document(project)["counts"]["stale"] == 3
    assert dagster_status("fragment_evidence", key) == StaleStatus.STALE

    orchestrate.analyze(str(fixture_path("enemy.dump.txt")), None)
    status = views.status_document(project)
    assert status["counts"]["stale"] == 0 and status["counts"]["done"] == 3
    keys = [f["key"] for f in status["fragments"]]
    assert set(materialization_counts(orchestrate.instance(), "fragment_judgement", keys).values()) == {2}
    assert dagster_status("fragment_evidence", key) == StaleStatus.FRESH
