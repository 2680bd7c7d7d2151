"""Rows and objects round-trip through one codec: nothing a candidate or a cue carries is lost."""

from __future__ import annotations

from dataclasses import fields

import polars as pl

from gd_assets import store
from gd_assets.core.codec import (
    candidate_from_row,
    candidate_row,
    candidates_by_key,
    cues_from_json,
    cues_to_json,
)
from gd_assets.core.cues import Cue
from gd_assets.core.retrieval import Candidate


def candidate(rank: int, via: str | None = None) -> Candidate:
    return Candidate(rank=rank, table="api_mapping", id=f"map:rename:class:K{rank}", title=f"K{rank} -> C{rank}",
                     text="renamed", sparse_score=2.5, sparse_rank=rank, dense_score=0.42, score=1.0 / rank,
                     table_rank=rank, via=via)


def test_a_candidate_round_trips_through_its_store_row_with_every_field(gd_home):
    original = [candidate(1), candidate(2, via="map:rename:class:K1")]
    rows = [candidate_row("p/a.gd::f", "p", c) for c in original]
    assert set(store.POLARS["candidates"]) == set(rows[0])   # the codec writes exactly the table's columns
    store.upsert("candidates", store.frame("candidates", rows))
    stored = store.query("SELECT * FROM candidates ORDER BY rank").to_dicts()
    assert [candidate_from_row(r) for r in stored] == original
    assert candidates_by_key(pl.DataFrame(list(reversed(stored))))["p/a.gd::f"] == original   # rank order restored
    assert {f.name for f in fields(Candidate)} >= {"via"}


def test_cues_round_trip_with_their_source():
    cues = [Cue("KinematicBody2D", "extends"), Cue("move_and_slide(velocity)", "call"), Cue("übung", "name")]
    assert cues_from_json(cues_to_json(cues)) == cues
    assert cues_from_json(None) == []
