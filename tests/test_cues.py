"""Cue extraction: symbols and call shapes from the tree, version markers, never the path."""

from __future__ import annotations

from conftest import fixture_path

from gd_assets.core.cues import DEFAULT_REQUEST, extract_cues, request_cues
from gd_assets.core.dump import parse_dump
from gd_assets.core.slicing import slice_file


def cues_of(text: str, kind: str = "function", file_kind: str = "gdscript", request: str = DEFAULT_REQUEST):
    return {c.cue: c.source for c in extract_cues(kind, text, request, file_kind=file_kind)}


def test_process_cues_match_the_seed():
    body = next(b for p, _, b in parse_dump(fixture_path("mini_dodge.dump.txt").read_text())
                if p == "player.gd")
    process = next(f for f in slice_file("player.gd", "gdscript", body) if f.symbol == "_process")
    cues = cues_of(process.text)
    for expected in ("Input.is_action_pressed", "Vector2.ZERO", "velocity.normalized", "position.clamp",
                     "AnimatedSprite2D", "_process", "Godot 3", "Godot 4", "migration"):
        assert expected in cues, expected
    assert cues["Godot 3"] == "request"


def test_call_shapes_keep_their_arguments():
    cues = cues_of('func f():\n\tvelocity = move_and_slide(velocity)\n\tconnect("hit", self, "_on_hit")\n'
                   '\tyield(get_tree().create_timer(1.0), "timeout")\n')
    assert "move_and_slide(velocity)" in cues
    assert 'connect("hit", self, "_on_hit")' in cues
    assert 'yield(…, "timeout")' in cues and cues["yield("] == "syntax"


def test_version_syntax_markers_of_both_languages():
    gd3 = cues_of("tool\nexport(int) var speed = 1 setget set_speed\nonready var a = $A\nremote func r():\n\tpass\n",
                  kind="declaration")
    assert {"tool", "export(", "setget", "onready", "remote"} <= set(gd3)
    gd4 = cues_of("func f():\n\tsuper()\n\tawait get_tree().process_frame\n\thit.connect(func(): pass)\n"
                  "\tvar s = &\"x\"\n")
    assert {"super(", "await", "func() lambda", ".connect(callable)", '&""'} <= set(gd4)
    assert cues_of("@export var a = 1\n@onready var b = $B\n", kind="declaration").keys() >= {"@export", "@onready"}


def test_project_and_scene_cues():
    project = cues_of('config_version=5\n\n[application]\nconfig/features=PackedStringArray("4.3")\n',
                      kind="section", file_kind="project")
    assert "config_version=5" in project and "config/features" in project
    scene = cues_of('[gd_scene load_steps=3 format=2]\n', kind="gd_scene", file_kind="scene")
    assert "format=2" in scene
    node = cues_of('[node name="P" type="KinematicBody2D"]\nscript = ExtResource( 1 )\n', kind="node",
                   file_kind="scene")
    assert node["KinematicBody2D"] == "node_type" and "ExtResource( … )" in node


def test_converter_leftovers_are_cues():
    cues = cues_of("func f():\n\t# TODOConverter40 Create tweens with create_tween()\n\tpass\n")
    assert cues["TODOConverter"] == "converter_leftover"


def test_request_words_only_when_asked_about_versions():
    assert [c.cue for c in request_cues(DEFAULT_REQUEST)] == ["Godot 3", "Godot 4", "migration"]
    assert request_cues("list the signals of this scene") == []


def test_the_path_is_never_a_cue():
    text = "func _ready():\n\tpass\n"
    for kind in ("function",):
        cues = cues_of(text, kind=kind)
        assert "player" not in " ".join(cues) and "player.gd" not in cues
