"""The coverage of Godot 3's API: every name Godot 4 lacks where Godot 3 had it (from the two class references),
and the answer the pipeline's own judge and rewrite give one use of it, as the `api_coverage` table holds it."""

from __future__ import annotations

import pytest

from corpora_build.api_coverage import coverage_counts, coverage_markdown, godot3_signatures
from corpora_build.checks import answer_problems
from gd_assets.core.coverage import (
    ANSWERS,
    GoneName,
    classify,
    coverage_rows,
    gone_names,
    probe,
    singleton_classes,
)
from gd_assets.core.duck import connect
from gd_assets.core.rewrite import load_rules


@pytest.fixture(scope="module")
def rules(corpus_home):
    return load_rules(str(corpus_home / "corpora.duckdb"))


@pytest.fixture(scope="module")
def signatures(corpus_home):
    with connect(corpus_home / "corpora.duckdb", read_only=True) as con:
        return godot3_signatures(con)


@pytest.fixture(scope="module")
def table(rules, signatures) -> dict[str, dict]:
    """The `api_coverage` rows of this code (the corpus build's table is the code's it was built with)."""
    return {r["id"]: r for r in coverage_rows(rules, signatures)}


def test_gone_names_are_read_from_both_class_references(rules, signatures):
    names = {g.id: g for g in gone_names(rules.surface, signatures)}
    assert names["cov:method:KinematicBody2D.get_floor_velocity"].cls4 == "CharacterBody2D"
    assert names["cov:class:VisualScript"].cls4 is None
    assert "cov:project_setting:ProjectSettings.physics/common/physics_fps" in names
    assert "cov:global_function:@GDScript.deg2rad" in names          # a global Godot 4 renamed
    assert "cov:method:Node.get_node" not in names                    # kept as it was
    assert "cov:property:Sprite.texture" not in names                 # Sprite2D still has it
    assert "cov:method:KinematicBody2D.move_and_slide" not in names   # kept, with another shape
    assert "cov:global_function:@GDScript.lerp" not in names          # @GDScript's, now @GlobalScope's
    assert not [g for g in names.values() if g.kind == "property" and "/" in g.name]  # scenes' grouped keys


def test_every_curated_answer_names_real_names_of_both_references(corpus_home):
    db = corpus_home / "corpora.duckdb"
    from gd_assets.core.corpus.surface import load_surface

    with connect(db, read_only=True) as con:
        assert answer_problems(con, load_surface(str(db))) == []


def test_the_table_holds_the_pipelines_answer_of_each_kind(table):
    expect = {
        "cov:method:Thread.is_active": ("rename", "is_started"),
        "cov:method:OS.get_ticks_msec": ("moved", "Time.get_ticks_msec"),
        "cov:property:KinematicCollision2D.collider": ("call_shape", "get_collider()"),
        "cov:method:Navigation2D.get_simple_path": ("call_shape", "NavigationServer2D.map_get_path("),
        "cov:class:FuncRef": ("rename", "Callable"),
        "cov:project_setting:ProjectSettings.physics/common/physics_fps": ("rename", "physics_ticks_per_second"),
        "cov:method:Control.show_modal": ("manual", "exclusive"),
        "cov:method:AStar2D.get_points": ("manual", "AStar2D."),
        "cov:method:Node._get_configuration_warning": ("behaviour", "func _get_configuration_warnings()"),
    }
    for rid, (answer, text) in expect.items():
        row = table[rid]
        assert row["answer"] == answer and text in row["godot4"], row
    assert table["cov:method:Control.show_modal"]["rule"] == "api_answer"  # curated
    assert table["cov:method:AStar2D.get_points"]["rule"] == "api_hint"    # the reference's nearest names
    assert {r["answer"] for r in table.values()} <= set(ANSWERS)
    assert all(r["evidence"] for r in table.values() if r["answer"] not in ("none",)), "an answer without its row"


def test_nearly_every_godot3_name_is_answered_and_the_rest_are_listed(table):
    counts = coverage_counts(list(table.values()))
    assert counts["all"]["total"] == len(table) > 2500
    assert counts["all"]["answered"] / counts["all"]["total"] > 0.97
    unanswered = [r for r in table.values() if r["answer"] == "none"]
    assert all(r["rule"] in ("not flagged", "api_gone", "") for r in unanswered)
    assert "| all |" in coverage_markdown(counts) and "| method |" in coverage_markdown(counts)


def test_a_probe_reads_the_answer_off_what_the_rewrite_wrote(rules):
    gone = GoneName("method", "Thread", "is_active", "Thread", "bool is_active() const")
    answer = probe(gone, rules, singleton_classes(rules.surface))
    assert (answer.kind, answer.godot4) == ("rename", "is_started")
    # a connection rewritten around a signal Godot 4 lacks does not answer for the signal
    signal = GoneName("signal", "Tabs", "right_button_pressed", "TabBar", "")
    edit = {"start_line": 6, "end_line": 6, "old": 'connect("right_button_pressed", self, "f")',
            "new": "right_button_pressed.connect(self.f)", "rule": "signal_callable", "evidence": None}
    assert classify(signal, [edit], [], 6, True).kind == "none"
    manual = {"start_line": 6, "end_line": 6, "kind": "api_gone", "what": "x", "why": "y", "evidence": []}
    assert classify(signal, [], [manual], 6, True).kind == "none"  # said to be gone is not an answer
    # a member of a class the script gets as its own is that class's; one it lacks is a manual item
    poll = probe(GoneName("method", "ResourceInteractiveLoader", "poll", None, "int poll()"), rules,
                 singleton_classes(rules.surface))
    assert (poll.kind, poll.rule) == ("behaviour", "godot3_class_shim")
    cache = probe(GoneName("property", "ResourceInteractiveLoader", "no_subresource_cache", None, ""), rules,
                  singleton_classes(rules.surface))
    assert cache.kind == "manual"


def test_the_corpus_build_materialises_the_table_through_dagster(corpus_home, rules, signatures):
    with connect(corpus_home / "corpora.duckdb", read_only=True) as con:
        built = dict(con.execute("SELECT id, answer FROM api_coverage").fetchall())
    assert set(built) == {g.id for g in gone_names(rules.surface, signatures)}
    assert set(built.values()) <= set(ANSWERS) and "rename" in built.values() and "manual" in built.values()
