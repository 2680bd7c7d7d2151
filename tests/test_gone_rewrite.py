"""Godot 3 names Godot 4 lacks, as the rewrite answers them: a property read through its accessor, a member
reached through the object Godot 4 moved it to, a curated rename, a call-shape rule, else a manual item that
says what to do (a curated answer, or the nearest names of Godot 4's reference), never silence."""

from __future__ import annotations

import pytest
from rewrite_helpers import GODOT3, migrate

from gd_assets.core.rewrite import load_rules


@pytest.fixture(scope="module")
def rules(corpus_home):
    return load_rules(str(corpus_home / "corpora.duckdb"))


def script(rules, body: str, head: str = "extends Node2D\n"):
    files = {**GODOT3, "a.gd": f"{head}\nfunc _ready():\n" + "".join(f"\t{line}\n" for line in body.split("\n"))}
    return migrate(rules, files, "a.gd")


def test_a_property_godot4_reads_through_its_accessor(rules):
    new, edits, _ = script(rules, "var col: KinematicCollision2D = move_and_collide(Vector2())\n"
                                  "print(col.collider.name, col.collider_id)\n"
                                  "var c: Camera2D = Camera2D.new()\nc.current = true\nif c.current:\n\tc.current = false")
    assert "print(col.get_collider().name, col.get_collider_id())" in new
    assert "c.make_current()" in new and "if c.is_current():" in new
    assert "c.enabled = false" in new  # no setter in Godot 4: the scene-property row's name
    assert {"property_accessor", "property_rename"} <= {e.rule for e in edits}


def test_members_moved_off_scenetree_are_reached_through_their_new_owner(rules):
    new, _, _ = script(rules, "get_tree().set_input_as_handled()\n"
                              'get_tree().connect("screen_resized", self, "_on_resize")\n'
                              'get_tree().connect("network_peer_connected", self, "_on_peer")\n'
                              "if get_tree().is_network_server():\n\tget_tree().network_peer = null")
    assert "get_tree().root.set_input_as_handled()" in new
    assert "get_tree().root.size_changed.connect(self._on_resize)" in new
    assert "get_tree().get_multiplayer().peer_connected.connect(self._on_peer)" in new
    assert "if get_tree().get_multiplayer().is_server():" in new
    assert "get_tree().get_multiplayer().multiplayer_peer = null" in new


def test_curated_renames_classes_and_call_shapes(rules):
    new, edits, _ = script(rules, "var t := Thread.new()\nprint(t.is_active(), Vector2(1, 2).tangent(), decimals(0.01))\n"
                                  "var f: FuncRef\nvar nav: Navigation2D\nprint(nav.get_simple_path(Vector2(), Vector2(1, 1)))\n"
                                  "print(OS.has_touchscreen_ui_hint(), Color.cornflower)\n"
                                  "add_child_below_node($A, Node.new())\nget_parent().add_child_below_node(self, $B, true)")
    assert "t.is_started(), Vector2(1, 2).orthogonal(), step_decimals(0.01)" in new
    assert "var f: Callable" in new and "var nav: Node2D" in new
    assert "NavigationServer2D.map_get_path(nav.get_world_2d().navigation_map, Vector2(), Vector2(1, 1), true)" in new
    assert "DisplayServer.is_touchscreen_available(), Color.CORNFLOWER_BLUE" in new
    assert "$A.add_sibling(Node.new())" in new and "self.add_sibling($B, true)" in new  # asked of the node
    cited = {e.evidence["id"] for e in edits if e.evidence}
    assert {"map:answer:Thread.is_active", "map:answer:FuncRef.FuncRef", "map:answer:Color.cornflower"} <= cited


def test_opensimplexnoise_becomes_fastnoiselite_with_its_period_as_frequency(rules):
    new, _, _ = script(rules, "var n = OpenSimplexNoise.new()\nn.period = 20.0\nn.octaves = 4\nprint(n.period)")
    assert "var n = FastNoiseLite.new()" in new
    assert "n.frequency = 1.0 / 20.0" in new and "n.fractal_octaves = 4" in new
    assert "print((1.0 / n.frequency))" in new


def test_properties_that_changed_meaning_keep_their_value_in_code(rules):
    new, edits, manual = script(rules, "rotating = true\nvar r = rotating\nvar te: TextEdit = $T\nte.wrap_enabled = r\n"
                                       "te.readonly = false\nvar tr: TextureRect = $R\ntr.expand = true\n"
                                       "if tr.expand:\n\tpass", head="extends Camera2D\n")
    assert "ignore_rotation = false\n" in new and "var r = (not ignore_rotation)" in new
    assert "te.wrap_mode = 1 if (r) else 0" in new and "te.editable = true" in new
    assert "tr.expand_mode = 1" in new and "if (tr.expand_mode == 1):" in new
    assert {"property_not", "property_true_to"} <= {e.rule for e in edits}
    assert not [m for m in manual if "rotating" in m.what or "expand" in m.what]


def test_curated_moves_and_renames_reach_godot_4s_owner(rules):
    new, _, _ = script(rules, 'print(ResourceLoader.has("res://a.tres"), OS.get_tablet_driver_name(0))\n'
                              "print(TabContainer.ALIGN_CENTER, get_focus_owner())\n"
                              "match 0:\n\tMainLoop.NOTIFICATION_WM_QUIT_REQUEST:\n\t\tpass\n"
                              'ResourceSaver.save("res://a.tres", Resource.new(), \\\n\t\tResourceSaver.FLAG_COMPRESS)',
                       head="extends Control\n")
    assert 'ResourceLoader.has_cached("res://a.tres"), DisplayServer.tablet_get_driver_name(0)' in new
    assert "print(TabBar.ALIGNMENT_CENTER, get_viewport().gui_get_focus_owner())" in new
    assert "Node.NOTIFICATION_WM_CLOSE_REQUEST:" in new
    assert 'ResourceSaver.save(Resource.new(), "res://a.tres", ResourceSaver.FLAG_COMPRESS)' in new  # over two lines


def test_a_popup_script_reads_its_windows_size_and_input(rules):
    new, _, _ = script(rules, "rect_min_size = Vector2(10, 10)\nvar w = rect_size.x / 2\nrect_size.x = 40\n"
                              "popup(Rect2(Vector2(), get_minimum_size()))\naccept_event()", head="extends WindowDialog\n")
    assert "extends Window" in new and "min_size = Vector2(10, 10)" in new
    assert "var w = Vector2(size).x / 2" in new and "size.x = 40" in new   # a Vector2i, read as Godot 3 computed
    assert "get_contents_minimum_size()" in new and "set_input_as_handled()" in new


def test_a_signal_reached_by_its_string_where_the_script_has_a_method_of_its_name(rules):
    files = {**GODOT3, "a.gd": "extends Area2D\n\nvar ref: Control\n\nfunc _ready():\n"
                               '\tif not is_connected("mouse_exited", self, "_on_exit"):\n'
                               '\t\tconnect("mouse_exited", self, "_on_exit")\n'
                               '\tref.connect("minimum_size_changed", ref, "minimum_size_changed")\n\n'
                               "func _on_exit():\n\tpass\n\nfunc mouse_exited():\n\tpass\n"}
    new, _, _ = migrate(rules, files, "a.gd")
    assert 'if not is_connected("mouse_exited", self._on_exit):' in new   # `mouse_exited` is the script's method
    assert 'connect("mouse_exited", self._on_exit)' in new
    assert "ref.minimum_size_changed.connect(ref.update_minimum_size)" in new  # the method Godot 4 renamed


def test_a_script_extending_viewport_goes_with_its_subviewport_node(rules):
    new, _, _ = script(rules, "size = Vector2(8, 8)", head="extends Viewport\n")
    assert new.startswith("extends SubViewport\n")


def test_a_gone_name_without_a_rule_gets_a_manual_item_that_says_what_to_do(rules):
    new, _, manual = script(rules, "var r: RichTextLabel = RichTextLabel.new()\nr.push_align(0)\n"
                                   "var a := AStar2D.new()\nprint(a.get_points(), JOY_L2)")
    assert "r.push_align(0)" in new  # left as it was, for a person
    items = {m.what: m for m in manual}
    curated = items["RichTextLabel.push_align(): no Godot 4 counterpart under this name"]
    assert curated.kind == "api_answer" and "push_paragraph" in curated.why
    assert {e["id"] for e in curated.evidence} >= {"map:answer:RichTextLabel.push_align",
                                                   "map:diff:method:RichTextLabel.push_align"}
    hint = items["AStar2D.get_points(): no Godot 4 counterpart under this name"]
    assert hint.kind == "api_hint" and "AStar2D." in hint.why
    assert items["JOY_L2: no Godot 4 counterpart under this name"].kind == "api_answer"


def test_the_projects_own_name_is_never_a_gone_engine_name(rules):
    files = {**GODOT3, "a.gd": "extends KinematicBody2D\n\nfunc get_floor_velocity():\n\treturn Vector2()\n\n"
                               "func _physics_process(delta):\n\tprint(get_floor_velocity())\n"}
    new, _, manual = migrate(rules, files, "a.gd")
    assert "print(get_floor_velocity())" in new
    assert not [m for m in manual if "get_floor_velocity" in m.what]


def project_godot(rules, text: str):
    return migrate(rules, {"project.godot": "config_version=4\n\n" + text}, "project.godot")


def test_settings_godot4_reads_elsewhere_move_with_their_values(rules):
    new, _, manual = project_godot(rules, '[audio]\n\n2d_panning_strength=0.5\n\n'
                                          '[display]\n\nwindow/size/fullscreen=true\n\n'
                                          '[locale]\n\ntranslations=PoolStringArray( "res://t.en.translation" )\n'
                                          'fallback="en"\n\n'
                                          '[logging]\n\nfile_logging/log_path=""\n\n'
                                          '[rendering]\n\nbatching/options/use_batching=false\n'
                                          'environment/default_clear_color=Color( 0, 0, 0, 1 )\n')
    assert "general/2d_panning_strength=0.5" in new
    assert "window/size/mode=3" in new and "fullscreen" not in new
    assert '[internationalization]\n\nlocale/translations=PoolStringArray( "res://t.en.translation" )\n' \
           'locale/fallback="en"' in new
    assert "translations=" not in new.split("[internationalization]")[0]
    assert "log_path" not in new  # an empty path: Godot 4.6 crashes on it, its default is kept
    assert "environment/defaults/default_clear_color=" in new
    assert "batching/options/use_batching=false" in new  # kept, with what to do
    batching = [m for m in manual if m.what.startswith("rendering/batching/options/use_batching")]
    assert batching and batching[0].kind == "api_answer"
