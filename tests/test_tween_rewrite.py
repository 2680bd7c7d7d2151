"""Godot 3's Tween node as Godot 4's create_tween(): where the tween is made, what each interpolation and
call becomes, the node leaving its scene and its connections moving onto each tween. The behaviour itself
is proven in Godot 3.6 and 4 by the `tween-*` cases of tests/test_behaviour.py."""

from __future__ import annotations

import pytest
from rewrite_helpers import GODOT3, migrate

from gd_assets.core.rewrite import load_rules

SCENE = ('[gd_scene load_steps=2 format=2]\n\n[ext_resource path="res://ui.gd" type="Script" id=1]\n\n'
         '[node name="UI" type="Control"]\nscript = ExtResource( 1 )\n\n[node name="Tween" type="Tween" parent="."]\n\n'
         '[connection signal="tween_all_completed" from="Tween" to="." method="_on_Tween_tween_all_completed"]\n')


@pytest.fixture(scope="module")
def rules(corpus_home):
    return load_rules(str(corpus_home / "corpora.duckdb"))


def ui(body: str, scene: str = SCENE) -> dict[str, str]:
    return {**GODOT3, "ui.tscn": scene, "ui.gd": "extends Control\n\nonready var tween = $Tween\n\n\n" + body}


def test_interpolations_become_tweeners_on_a_tween_made_where_they_are_queued(rules):
    new, edits, manual = migrate(rules, ui(
        "func show_it():\n\ttween.interpolate_property(self, \"modulate:a\", 0.0, 1.0, 0.3, Tween.TRANS_QUAD, "
        "Tween.EASE_OUT, 0.1)\n\ttween.interpolate_property($Label, \"rect_scale\", Vector2.ZERO, Vector2.ONE, 0.3)\n"
        "\ttween.start()\n\tyield(tween, \"tween_all_completed\")\n"), "ui.gd")
    assert "\nvar tween: Tween\n" in new
    assert ("\ttween = create_tween().set_parallel(true)\n\ttween.finished.connect(self._on_Tween_tween_all_completed)\n"
            "\ttween.tween_property(self, \"modulate:a\", 1.0, 0.3).from(0.0).set_trans(Tween.TRANS_QUAD)"
            ".set_ease(Tween.EASE_OUT).set_delay(0.1)\n") in new
    assert "tween.start()" not in new and "\tawait tween.finished\n" in new
    assert not [m for m in manual if m.kind == "tween"]
    assert all(e.evidence for e in edits if e.rule.startswith("tween"))


def test_the_node_and_its_connection_leave_the_scene(rules):
    new, edits, manual = migrate(rules, ui("func f():\n\ttween.interpolate_property(self, \"x\", 0, 1, 1)\n"), "ui.tscn")
    assert "Tween" not in new and "connection" not in new and '[node name="UI" type="Control"]' in new
    assert {"tween_node", "tween_signal"} <= {e.rule for e in edits}
    # Godot 3's defaults are Godot 4's; another setting is said, to be set on each tween made
    repeat = SCENE.replace('parent="."]\n', 'parent="."]\nrepeat = true\nplayback_process_mode = 1\n', 1)
    new, _, manual = migrate(rules, ui("", repeat), "ui.tscn")
    [tween] = [m for m in manual if m.kind == "tween"]
    assert "Tween" not in new and "set_loops()" in tween.why and "repeat = true" in tween.what
    assert "playback_process_mode" not in tween.what


def test_a_node_path_receiver_gets_a_local_and_a_loop_shares_one_parallel_tween(rules):
    new, _, _ = migrate(rules, ui(
        "func fade():\n\tfor c in get_children():\n\t\t$Tween.interpolate_property(c, \"modulate\", "
        "Color.white, Color(1, 1, 1, 0), 0.2)\n\t$Tween.start()\n\tyield($Tween, \"tween_completed\")\n"), "ui.gd")
    assert "\tvar tween = create_tween().set_parallel(true)\n\ttween.finished.connect(" in new
    assert "\tfor c in get_children():\n\t\ttween.tween_property(c, \"modulate\", Color(1, 1, 1, 0), 0.2)" in new
    assert "\tawait tween.finished\n" in new and "$Tween" not in new


def test_stops_state_and_calls_with_no_equivalent(rules):
    new, edits, manual = migrate(rules, ui(
        "func halt():\n\ttween.stop_all()\n\tif tween.is_active():\n\t\tprint(1)\n\ttween.resume_all()\n"
        "\ttween.seek(1.0)\n\ttween.start()\n"), "ui.gd")
    assert "\tif tween: tween.kill()\n" in new and "if (tween != null and tween.is_running()):" in new
    assert "\tif tween.is_valid(): tween.play()\n" in new
    assert "\tif tween and tween.is_valid(): tween.play()\n" in new
    assert [m.what for m in manual if m.kind == "tween"] == ["Tween.seek(): Godot 4's Tween has no such call here"]


def test_a_tween_made_with_new_loses_its_add_child(rules):
    files = {**GODOT3, "a.gd": ("extends Node2D\n\n\nfunc pop():\n\tvar t = Tween.new()\n\tadd_child(t)\n"
                                "\tt.interpolate_callback(self, 0.5, \"queue_free\")\n\tt.start()\n")}
    new, _, manual = migrate(rules, files, "a.gd")
    assert "\tvar t: Tween\n\tt = create_tween()\n\tt.tween_callback(self.queue_free).set_delay(0.5)\n" in new
    assert "add_child" not in new and not manual


def test_godot4_tweens_and_unknown_receivers(rules):
    godot4 = {"project.godot": "config_version=5\n",
              "a.gd": "extends Node2D\n\n\nfunc f():\n\tvar t = create_tween()\n\tt.tween_property(self, \"x\", 1, 1)\n"}
    assert migrate(rules, godot4, "a.gd")[1] == []
    unknown = {**GODOT3, "a.gd": "extends Node2D\n\n\nfunc f(t):\n\tt.interpolate_property(self, \"x\", 0, 1, 1)\n"}
    _, _, manual = migrate(rules, unknown, "a.gd")
    assert [m.kind for m in manual] == ["tween"]


def test_tweened_property_paths_take_godot4_names_and_a_kept_connect_result_is_ok(rules):
    new, _, _ = migrate(rules, ui(
        "func f():\n\tvar err = tween.connect(\"tween_all_completed\", self, \"done\")\n"
        "\ttween.interpolate_property($Arrow, \"rect_global_position:x\", 0.0, 9.0, 0.2)\n\ttween.start()\n",
        SCENE + '\n[node name="Arrow" type="Control" parent="."]\n'), "ui.gd")
    assert "\tvar err = OK\n" in new
    assert 'tween.tween_property($Arrow, "global_position:x", 9.0, 0.2).from(0.0)' in new


def test_a_member_tween_added_as_a_child_elsewhere_is_judged_and_its_add_child_goes(rules):
    files = {**GODOT3, "a.gd": ("extends Control\n\nvar _tween := Tween.new()\n\n\nfunc _ready() -> void:\n"
                                "\tadd_child(_tween)\n\tmodulate = Color(1, 1, 1, 0)\n")}
    new, _, _ = migrate(rules, files, "a.gd")
    assert "\nvar _tween: Tween\n" in new and "add_child" not in new


def test_a_script_extending_tween_is_said_and_its_node_calls_name_the_base_change(rules):
    """Godot 3's Tween was a Node; Godot 4's derives from RefCounted: `get_parent()` there is Node's, not gone."""
    files = {**GODOT3, "aura.gd": "extends Tween\n\n\nfunc _ready():\n\tinterpolate_property(get_parent(), \"scale\", "
                                  "Vector2.ONE, Vector2(2, 2), 0.5)\n\tstart()\n"}
    _, _, manual = migrate(rules, files, "aura.gd")
    by_kind = {m.kind: m for m in manual}
    assert by_kind["tween"].start_line == 1 and "extends Node" in by_kind["tween"].why
    assert by_kind["base_changed"].what == "Tween.get_parent: Godot 4's Tween is no Node"
    assert "RefCounted" in by_kind["base_changed"].why
    assert not any(m.what.startswith("Node.get_parent") for m in manual)
