"""The evidence judge: decisions from the corpus surface and the cues, citing only offered candidates."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gd_assets.core.cues import DEFAULT_REQUEST, extract_cues
from gd_assets.core.judges import JudgeError, JudgeInput, Judgement, get_judge
from gd_assets.core.retrieval import Candidate

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def judge(corpus_home):
    return get_judge("evidence", corpus_db=str(corpus_home / "corpora.duckdb"))


def item(text: str, candidates=(), file_kind: str = "gdscript", kind: str = "function") -> JudgeInput:
    return JudgeInput("p/a.gd::f", "a.gd", 1, text.count("\n") + 1, kind, file_kind, text,
                      extract_cues(kind, text, DEFAULT_REQUEST, file_kind=file_kind), list(candidates), DEFAULT_REQUEST)


def cand(rank: int, table: str, row_id: str, title: str) -> Candidate:
    return Candidate(rank, table, row_id, title, title, 1.0, rank, 0.5, 1.0, rank)


@pytest.mark.parametrize("text", [
    "extends KinematicBody2D",
    'func f():\n\tyield(get_tree().create_timer(1.0), "timeout")',
    "export(int) var speed = 3",
    "onready var sprite = $Sprite",
    "func f():\n\tvelocity = move_and_slide(velocity, Vector2.UP)",
    'func f():\n\tconnect("hit", self, "_on_hit")',
    "func f():\n\tvar r = rand_range(0, 1)",
    "func f():\n\tOS.window_fullscreen = true",
    "func f():\n\tif Input.is_mouse_button_pressed(BUTTON_LEFT):\n\t\tpass",
    "func _ready():\n\t._ready()",
])
def test_godot3_code_needs_migration(judge, text):
    j = judge.judge([item(text, kind="declaration" if not text.startswith("func") else "function")])[0]
    assert (j.signal, j.migration_needed) == ("godot3", True), j.rationale
    assert j.rationale.startswith("Godot 3:")


@pytest.mark.parametrize("text", [
    "extends CharacterBody2D",
    "@export var speed := 3",
    "func f():\n\tawait get_tree().create_timer(1.0).timeout",
    "func f():\n\tvelocity = dir * speed\n\tmove_and_slide()",
    "func f():\n\thit.connect(_on_hit)",
    "func f():\n\tvar b = preload(\"res://b.tscn\").instantiate()",
    'func f():\n\tif Input.is_action_pressed(&"jump"):\n\t\tpass',
])
def test_godot4_code_needs_no_migration(judge, text):
    j = judge.judge([item(text, kind="declaration" if not text.startswith("func") else "function")])[0]
    assert (j.signal, j.migration_needed) == ("godot4", False), j.rationale


@pytest.mark.parametrize("text", ["extends Node2D", "func f():\n\tposition += velocity * delta\n\tshow()",
                                  "signal hit", "var speed = 400"])
def test_code_valid_in_both_is_neutral(judge, text):
    j = judge.judge([item(text, kind="declaration" if not text.startswith("func") else "function")])[0]
    assert (j.signal, j.migration_needed) == ("neutral", False), j.rationale


def test_scene_and_project_formats(judge):
    assert judge.judge([item("[gd_scene load_steps=2 format=2]", file_kind="scene", kind="gd_scene")])[0].signal \
        == "godot3"
    assert judge.judge([item("config_version=5", file_kind="project", kind="preamble")])[0].signal == "godot4"


def test_migration_rests_only_on_offered_candidates(judge):
    offered = [cand(1, "docs_chunks", "docs:4:CharacterBody2D.class", "CharacterBody2D (Godot 4 class)"),
               cand(2, "api_mapping", "map:rename:class:KinematicBody2D",
                    "KinematicBody2D -> CharacterBody2D (class rename)"),
               cand(3, "docs_chunks", "docs:4:Node.method.get_tree", "Node.get_tree (Godot 4 method)")]
    j = judge.judge([item("extends KinematicBody2D", offered, kind="declaration")])[0]
    assert j.evidence == [2] and 2 in j.related and 3 not in j.related
    assert "(2)" in j.rationale


def test_answers_naming_unoffered_candidates_are_rejected():
    it = item("extends Node", [cand(1, "docs_chunks", "d", "Node (Godot 4 class)")])
    with pytest.raises(JudgeError, match="not offered"):
        Judgement(it.key, "neutral", False, 0.5, "x", related=[1, 7]).validate(it)
    with pytest.raises(JudgeError, match="signal"):
        Judgement(it.key, "godot5", False, 0.5, "x").validate(it)


def test_missing_corpus_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="build the corpora first"):
        get_judge("evidence", corpus_db=str(tmp_path / "none.duckdb")).judge([item("extends Node")])


def test_a_rationale_reads_the_same_in_every_process(corpus_home):
    """Findings come in one order whatever the process's string hash seed (a set of setting keys once
    listed them by hash, so two analyses of one project.godot worded its rationale differently)."""
    code = (
        "import sys\n"
        "from gd_assets.core.cues import DEFAULT_REQUEST, extract_cues\n"
        "from gd_assets.core.judges import JudgeInput, get_judge\n"
        "text = sys.stdin.read()\n"
        "cues = extract_cues('section', text, DEFAULT_REQUEST, file_kind='project')\n"
        "judge = get_judge('evidence', corpus_db=sys.argv[1])\n"
        "item = JudgeInput('p/project.godot::preamble', 'project.godot', 1, 9, 'section', 'project', text, cues, [],\n"
        "                  DEFAULT_REQUEST)\n"
        "print(judge.judge_one(item).rationale)\n")
    text = ("config_version=4\n\n_global_script_classes=[  ]\n_global_script_class_icons={}\n\n[display]\n\n"
            "window/size/width=640\nwindow/size/height=480\n")
    said = {subprocess.run([sys.executable, "-c", code, str(corpus_home / "corpora.duckdb")], input=text,
                           capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2, 3)}
    assert len(said) == 1, said
    assert "_global_script_class" in said.pop()
