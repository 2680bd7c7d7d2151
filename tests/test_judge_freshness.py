"""Changing the judge's model re-judges exactly the fragments the old model judged, and nothing else.

Two model names served by one real OpenAI-compatible vLLM server (the tiny model) stand for two
models; the freshness rule compares judge, model and prompt version with what each judgement
recorded, so `status` counts the old model's judgements stale before the re-analysis redoes them.
"""

from __future__ import annotations

import pytest
from conftest import REPO, needs_vllm

from gd_assets import orchestrate, store, views
from gd_assets.status import materialization_counts

pytestmark = pytest.mark.slow


def judged_by(project: str) -> dict[str, str]:
    return dict(store.query("SELECT j.key, j.model FROM judgements j JOIN fragments f ON f.key = j.key "
                            "WHERE f.project = ?", [project]).iter_rows())


def counts(asset: str, keys: list[str]) -> dict[str, int]:
    return materialization_counts(orchestrate.instance(), asset, keys)


@needs_vllm
def test_changing_the_judge_model_rejudges_exactly_what_the_old_model_judged(analysis_home, vllm_server,
                                                                               monkeypatch):
    monkeypatch.setenv("GD_ASSETS_JUDGE", "openai")
    monkeypatch.setenv("GD_ASSETS_JUDGE_URL", vllm_server)
    monkeypatch.setenv("GD_ASSETS_JUDGE_PROMPT_CHARS", "3200")   # the tiny model's context is short
    monkeypatch.setenv("GD_ASSETS_JUDGE_MODEL", "tiny")
    old = orchestrate.analyze(str(REPO / "examples" / "dodge-godot3"), "old")
    monkeypatch.setenv("GD_ASSETS_JUDGE_MODEL", "tiny-b")
    new = orchestrate.analyze(str(REPO / "examples" / "dodge-godot4"), "new")
    old_keys, new_keys = list(judged_by(old)), list(judged_by(new))
    assert set(judged_by(old).values()) == {"tiny"} and set(judged_by(new).values()) == {"tiny-b"}
    assert len(old_keys) > 5 and len(new_keys) > 5

    # with tiny-b configured, every judgement tiny made is stale, and none of tiny-b's
    assert views.status_document(old)["counts"]["stale"] == len(old_keys)
    assert views.status_document(new)["counts"]["stale"] == 0
    evidence_before = counts("fragment_evidence", old_keys)

    orchestrate.analyze(str(REPO / "examples" / "dodge-godot3"), "old")
    orchestrate.analyze(str(REPO / "examples" / "dodge-godot4"), "new")
    assert set(judged_by(old).values()) == {"tiny-b"} and set(judged_by(new).values()) == {"tiny-b"}
    assert set(counts("fragment_judgement", old_keys).values()) == {2}   # each re-judged once
    assert set(counts("fragment_judgement", new_keys).values()) == {1}   # none re-judged
    assert counts("fragment_evidence", old_keys) == evidence_before      # the evidence was not redone
    assert views.status_document(old)["counts"]["stale"] == 0

    # the judge's options are part of its identity too: another prompt size is another judgement
    monkeypatch.setenv("GD_ASSETS_JUDGE_PROMPT_CHARS", "3000")
    assert views.status_document(new)["counts"]["stale"] == len(new_keys)


def test_a_model_judge_without_a_model_fails_before_any_work_naming_the_variable(gd_home, monkeypatch):
    monkeypatch.setenv("GD_ASSETS_JUDGE", "openai")
    monkeypatch.setenv("GD_ASSETS_JUDGE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("GD_ASSETS_JUDGE_MODEL", raising=False)
    with pytest.raises(Exception, match="model.*GD_ASSETS_JUDGE_MODEL"):
        orchestrate.analyze(str(REPO / "examples" / "dodge-godot3"), "nomodel")
    assert store.query("SELECT count(*) AS n FROM fragments WHERE project = 'nomodel'")["n"][0] == 0
