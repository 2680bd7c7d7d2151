"""Camera2D's inverted `zoom`: writes store the reciprocal, reads read it back, so the script's numbers keep
their Godot 3 meaning (proven in both engines by the `camera-zoom` case of tests/test_behaviour.py)."""

from __future__ import annotations

import pytest
from rewrite_helpers import GODOT3, migrate

from gd_assets.core.rewrite import load_rules

SCENE = ('[gd_scene load_steps=2 format=2]\n\n[ext_resource path="res://a.gd" type="Script" id=1]\n\n'
         '[node name="A" type="Node2D"]\nscript = ExtResource( 1 )\n\n[node name="Camera2D" type="Camera2D" parent="."]\n')


@pytest.fixture(scope="module")
def rules(corpus_home):
    return load_rules(str(corpus_home / "corpora.duckdb"))


def test_writes_store_the_reciprocal_and_reads_read_it_back(rules):
    body = ("func _ready():\n\t$Camera2D.zoom = Vector2(2, 4)\n\t$Camera2D.zoom *= 1.1\n\tvar z = $Camera2D.zoom\n"
            "\t$Camera2D.zoom = z * 2\n\tprint($Camera2D.zoom.x)\n")
    files = {**GODOT3, "a.tscn": SCENE, "a.gd": "extends Node2D\n\n\n" + body}
    new, edits, manual = migrate(rules, files, "a.gd")
    assert "\t$Camera2D.zoom = Vector2(0.5, 0.25)\n" in new
    assert "\t$Camera2D.zoom /= 1.1\n" in new
    assert "\tvar z = (Vector2.ONE / $Camera2D.zoom)\n" in new
    assert "\t$Camera2D.zoom = Vector2.ONE / (z * 2)\n" in new
    assert "\tprint((Vector2.ONE / $Camera2D.zoom).x)\n" in new
    assert all(e.evidence for e in edits if e.rule == "camera_zoom") and not manual


def test_what_cannot_be_inverted_in_place_is_left_to_people(rules):
    body = "func _ready():\n\t$Camera2D.zoom.x = 2\n\t$Camera2D.zoom += Vector2(1, 1)\n"
    files = {**GODOT3, "a.tscn": SCENE, "a.gd": "extends Node2D\n\n\n" + body}
    new, _, manual = migrate(rules, files, "a.gd")
    assert [m.kind for m in manual] == ["camera_zoom", "camera_zoom"]
    assert "\t$Camera2D.zoom.x = 2\n" in new


def test_other_zooms_and_godot4_cameras_stay(rules):
    godot4 = {"project.godot": "config_version=5\n", "a.tscn": SCENE.replace("format=2", "format=3"),
              "a.gd": "extends Node2D\n\n\nfunc _ready():\n\t$Camera2D.zoom = Vector2(2, 2)\n"}
    assert "Vector2(2, 2)" in migrate(rules, godot4, "a.gd")[0]
    other = {**GODOT3, "a.gd": "extends Node2D\n\nvar zoom = 2\n\n\nfunc _ready():\n\tzoom = 3\n\tprint(zoom)\n"}
    assert "zoom = 3" in migrate(rules, other, "a.gd")[0]
