"""Slicing: the worked example's fragments, line by line, and the coverage invariant."""

from __future__ import annotations

import pytest
from conftest import fixture_path

from gd_assets.core.dump import parse_dump
from gd_assets.core.slicing import MAX_FUNCTION_LINES, slice_file, uncovered_lines

KINDS = {"project.godot": "project", "player.gd": "gdscript", "player.tscn": "scene", "enemy.gd": "gdscript"}

# DESIGN.md section 2: (path, dump lines, file lines, kind, symbol)
MINI_DODGE = [
    ("project.godot", (2, 2), (1, 1), "preamble", "preamble"),
    ("project.godot", (4, 6), (3, 5), "section", "section.application"),
    ("player.gd", (9, 9), (1, 1), "declaration", "extends"),
    ("player.gd", (11, 11), (3, 3), "declaration", "signal.hit"),
    ("player.gd", (13, 14), (5, 6), "declaration", "var.speed"),
    ("player.gd", (16, 18), (8, 10), "function", "_ready"),
    ("player.gd", (20, 34), (12, 26), "function", "_process"),
    ("player.gd", (36, 39), (28, 31), "function", "start"),
    ("player.tscn", (42, 42), (1, 1), "gd_scene", "gd_scene"),
    ("player.tscn", (44, 44), (3, 3), "ext_resource", "ext_resource.1"),
    ("player.tscn", (46, 47), (5, 6), "node", "node.Player"),
]
ENEMY = [
    ("enemy.gd", (2, 2), (1, 1), "declaration", "extends"),
    ("enemy.gd", (4, 4), (3, 3), "declaration", "var.velocity"),
    ("enemy.gd", (6, 7), (5, 6), "function", "_physics_process"),
]


def slice_dump(name: str) -> list[tuple]:
    text = fixture_path(name).read_text()
    out = []
    for path, dump_start, body in parse_dump(text):
        for frag in slice_file(path, KINDS[path], body):
            dump = (dump_start + frag.start_line - 1, dump_start + frag.end_line - 1)
            out.append((path, dump, (frag.start_line, frag.end_line), frag.kind, frag.symbol, frag.text))
    return out


@pytest.mark.parametrize("name, expected", [("mini_dodge.dump.txt", MINI_DODGE), ("enemy.dump.txt", ENEMY)])
def test_seed_example_gives_exactly_the_design_fragments(name, expected):
    got = slice_dump(name)
    assert [g[:5] for g in got] == expected
    dump_lines = fixture_path(name).read_text().split("\n")
    for path, (d0, d1), _, _, _, text in got:
        assert text == "\n".join(dump_lines[d0 - 1 : d1]), f"{path} {d0}-{d1} text differs from the dump"


def test_process_keeps_its_inner_blank_lines():
    frag = next(g for g in slice_dump("mini_dodge.dump.txt") if g[4] == "_process")
    assert frag[5].count("\n") == 14 and "\n\n\tif velocity.length() > 0:" in frag[5]


GD3_FILE = """tool
extends KinematicBody2D
# Movement speed in pixels per second.
export(int) var speed = 200 setget set_speed
onready var sprite = $Sprite

# A stand-alone note about the file.

# Attached to the function below.
func _ready():
\tyield(get_tree(), "idle_frame")

remote func hit(damage):
\tpass

class Inner:
\tvar a = 1
\tfunc inner_method():
\t\treturn a

\tclass Deeper extends Reference:
\t\tfunc deep():
\t\t\tpass

func set_speed(value):
\tspeed = value
"""


def test_gdscript3_syntax_comments_and_inner_classes():
    frags = slice_file("enemy.gd", "gdscript", GD3_FILE)
    got = [(f.start_line, f.end_line, f.kind, f.symbol) for f in frags]
    assert got == [
        (1, 5, "declaration", "tool"),
        (7, 7, "comment", "comment"),
        (9, 11, "function", "_ready"),
        (13, 14, "function", "hit"),
        (16, 17, "class", "class.Inner"),
        (18, 19, "function", "Inner.inner_method"),
        (21, 21, "class", "class.Inner.Deeper"),
        (22, 23, "function", "Inner.Deeper.deep"),
        (25, 26, "function", "set_speed"),
    ]
    assert uncovered_lines(GD3_FILE, frags) == ([], [])


def test_long_function_is_split_at_statement_boundaries():
    body = "".join(f"\tvar v{i} = {i}\n" for i in range(200))
    text = "extends Node\n\nfunc big():\n" + body + "\nfunc small():\n\tpass\n"
    frags = slice_file("big.gd", "gdscript", text)
    parts = [f for f in frags if f.kind == "function_part"]
    assert [p.symbol for p in parts] == ["big@1", "big@2", "big@3"]
    assert all(p.end_line - p.start_line + 1 <= MAX_FUNCTION_LINES for p in parts)
    assert parts[0].start_line == 3 and parts[-1].end_line == 203
    assert [f.symbol for f in frags][-1] == "small"
    assert uncovered_lines(text, frags) == ([], [])


def test_syntax_error_becomes_unparsed_or_flagged_and_no_line_is_lost():
    text = "extends Node\n\nfunc ok():\n\tpass\n\n)))) ((( ]]\nvar x = \n\nfunc broken(:\n\tif\n\nfunc after():\n\tpass\n"
    frags = slice_file("bad.gd", "gdscript", text)
    assert uncovered_lines(text, frags) == ([], [])
    flagged = [f for f in frags if f.kind == "unparsed" or f.reason]
    assert flagged and all(f.reason for f in flagged)
    assert any("line 6" in (f.reason or "") or f.start_line <= 6 <= f.end_line for f in flagged)
    assert "ok" in [f.symbol for f in frags]


def test_scene_and_project_sections():
    scene = (
        '[gd_scene load_steps=2 format=2]\n\n[ext_resource path="res://a.gd" type="Script" id=1]\n\n'
        '[sub_resource type="RectangleShape2D" id=2]\nextents = Vector2( 8, 8 )\n\n'
        '[node name="Root" type="Node2D"]\n\n[node name="Body" type="KinematicBody2D" parent="."]\n'
        'script = ExtResource( 1 )\ntext = "[not a header]\n[node name=\\"fake\\"] inside a string"\n\n'
        '[node name="Shape" type="CollisionShape2D" parent="Body"]\n\n'
        '[connection signal="hit" from="Body" to="." method="_on_hit"]\n'
    )
    got = [(f.start_line, f.end_line, f.symbol) for f in slice_file("a.tscn", "scene", scene)]
    # a multi-line string value whose line starts with "[node" is not a header
    assert got == [(1, 1, "gd_scene"), (3, 3, "ext_resource.1"), (5, 6, "sub_resource.2"), (8, 8, "node.Root"),
                   (10, 13, "node.Body"), (15, 15, "node.Body/Shape"), (17, 17, "connection.hit.Body._on_hit")]
    assert uncovered_lines(scene, slice_file("a.tscn", "scene", scene)) == ([], [])


def test_crlf_normalised_text_keeps_editor_line_numbers():
    text = "extends Node\r\n\r\nfunc a():\r\n\tpass\r\n".replace("\r\n", "\n")
    assert [(f.start_line, f.symbol) for f in slice_file("a.gd", "gdscript", text)] == [(1, "extends"), (3, "a")]


def test_a_column_0_comment_inside_a_function_does_not_end_it():
    text = ("func load_menu():\n# disabled for the web export\n\tvar menu = 1\n#\tprint(menu)\n\treturn menu\n\n"
            "# the next one\nfunc other():\n\tpass\n")
    frags = slice_file("menu.gd", "gdscript", text)
    assert [(f.start_line, f.end_line, f.kind, f.symbol) for f in frags] == [
        (1, 5, "function", "load_menu"), (7, 9, "function", "other")]
    assert uncovered_lines(text, frags) == ([], [])
