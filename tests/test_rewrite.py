"""The migration rewrite, rule by rule, on real Godot 3 code read in its project (and the converter's traps)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gd_assets.core.project_context import build_context
from gd_assets.core.receivers import Scope
from gd_assets.core.rewrite import FragmentRewrite, apply_edits, load_rules, rewrite_config, rewrite_fragment
from gd_assets.core.rewrite.tree import Pending, TreeEditor, safe_edits
from gd_assets.core.slicing import slice_file

KINDS = {".gd": "gdscript", ".tscn": "scene", ".godot": "project", ".tres": "resource"}


@pytest.fixture(scope="module")
def rules(corpus_home):
    return load_rules(str(corpus_home / "corpora.duckdb"))


def rewrite_file(rules, files: dict[str, str], path: str) -> tuple[str, list[FragmentRewrite]]:
    """Rewrite every fragment of `path` in the project `files`; returns the file's new text and the rewrites."""
    context = build_context([{"path": p, "kind": KINDS[Path(p).suffix], "text": t} for p, t in files.items()])
    text = files[path]
    results, edits = [], []
    for frag in slice_file(path, KINDS[Path(path).suffix], text):
        scope = Scope.of(context, path, frag.symbol, rules.surface)
        result = rewrite_fragment(frag.kind, frag.text, frag.start_line, KINDS[Path(path).suffix], scope, rules)
        results.append(result)
        edits.extend(result.edits)
    return apply_edits(text, edits), results


def migrated(rules, body: str, extends: str = "Node", extra: dict[str, str] | None = None) -> str:
    files = {"project.godot": "config_version=4\n", "main.gd": f"extends {extends}\n\n{body}", **(extra or {})}
    return rewrite_file(rules, files, "main.gd")[0].split("\n", 2)[2]


def edits_of(rules, body: str, extends: str = "Node") -> list:
    files = {"project.godot": "config_version=4\n", "main.gd": f"extends {extends}\n\n{body}"}
    return [e for r in rewrite_file(rules, files, "main.gd")[1] for e in r.edits]


# --- engine names, by receiver --------------------------------------------------------------------


def test_engine_names_are_renamed_with_their_mapping_row(rules):
    body = ("func _ready():\n\tvar a = deg2rad(90)\n\tif Input.is_mouse_button_pressed(BUTTON_LEFT):\n"
            "\t\tmodulate = Color.white\n\tvar names = PoolStringArray()\n\tget_tree().change_scene(\"res://b.tscn\")\n")
    out = migrated(rules, body, "KinematicBody2D")
    assert "var a = deg_to_rad(90)" in out
    assert "MOUSE_BUTTON_LEFT" in out and "Color.WHITE" in out and "PackedStringArray()" in out
    assert 'get_tree().change_scene_to_file("res://b.tscn")' in out
    for edit in edits_of(rules, body, "KinematicBody2D"):
        assert edit.evidence and edit.evidence["table"] == "api_mapping" and edit.evidence["id"].startswith("map:")


def test_extends_and_types_use_the_class_renames(rules):
    files = {"project.godot": "config_version=4\n",
             "main.gd": "extends KinematicBody2D\n\nfunc hit(body: Spatial) -> void:\n\tif body is KinematicBody:\n"
                        "\t\tvar t = Position2D.new()\n\t\tvar s := body as Spatial\n"}
    out = rewrite_file(rules, files, "main.gd")[0]
    assert out.startswith("extends CharacterBody2D\n")
    assert "func hit(body: Node3D) -> void:" in out and "if body is CharacterBody3D:" in out
    assert "Marker2D.new()" in out and "body as Node3D" in out


def test_a_projects_own_names_are_never_renamed(rules):
    """The converter's traps: the project's own change_scene(), start(a, b), empty(), class_name."""
    files = {
        "project.godot": "config_version=4\n",
        "util.gd": "class_name Util\nextends Reference\n\nstatic func empty(x):\n\treturn x == null\n",
        "main.gd": ("extends Node\n\nfunc change_scene(path):\n\tprint(path)\n\nfunc start(a, b):\n\treturn a + b\n\n"
                    "func _ready():\n\tchange_scene(\"res://x.tscn\")\n\tstart(1, 2)\n\tif Util.empty(null):\n"
                    "\t\tprint(\"change_scene %s\" % \"x\")\n\t# yield(tween, \"tween_completed\") was here\n"),
    }
    out, results = rewrite_file(rules, files, "main.gd")
    assert out == files["main.gd"]
    assert not [e for r in results for e in r.edits]


def test_a_continued_chain_is_not_a_parent_call(rules):
    body = "func _ready():\n\tvar t = get_tree() \\\n\t\t.create_timer(1.0)\n\t.ready_up()\n"
    out = migrated(rules, body)
    assert "get_tree() \\\n\t\t.create_timer(1.0)" in out
    assert "\tsuper.ready_up()" in out


def test_an_ambiguous_rename_needs_a_known_receiver(rules):
    body = ("export(PackedScene) var enemy\n\nfunc spawn(thing):\n\tvar e = enemy.instance()\n"
            "\tvar s = \"\"\n\tif s.empty():\n\t\tpass\n\tthing.set_mode(1)\n")
    out = migrated(rules, body)
    assert "enemy.instantiate()" in out and "s.is_empty()" in out
    assert "thing.set_mode(1)" in out  # set_mode's rename is ambiguous and `thing` has no known type


# --- GDScript 1 -> 2 syntax --------------------------------------------------------------------------


def test_annotations(rules):
    files = {"project.godot": "config_version=4\n",
             "main.gd": ("tool\nextends Node\n\nexport var speed = 400\nexport(int, 0, 10) var level = 1\n"
                         "export(String, FILE, \"*.json\") var data_file\nexport(Array, int) var ids = []\n"
                         "export(int, \"Red\", \"Blue\") var team = 0\nexport(NodePath) var target\n"
                         "export (Array, String, FILE) var scripts\nexport(Array, float, 0, 1) var weights\n"
                         "onready var sprite = $Sprite\nvar hp = 3 setget set_hp, get_hp\n\n"
                         "remote func hit():\n\tpass\n\nremotesync func die():\n\tpass\n\nmaster func sync_state():\n\tpass\n")}
    out, results = rewrite_file(rules, files, "main.gd")
    for expected in ("@tool\n", "@export var speed = 400", "@export_range(0, 10) var level: int = 1",
                     '@export_file("*.json") var data_file: String', "@export var ids: Array[int] = []",
                     '@export_enum("Red", "Blue") var team: int = 0', "@export var target = NodePath()",
                     "@export_file var scripts: Array[String]", "@export_range(0, 1) var weights: Array[float]",
                     "@onready var sprite = $Sprite", "var hp = 3: set = set_hp, get = get_hp",
                     '@rpc("any_peer") func hit():', '@rpc("any_peer", "call_local") func die():', "@rpc func sync_state():"):
        assert expected in out, expected
    assert any(m.kind == "rpc" for r in results for m in r.manual)


def test_yield_becomes_await_with_renamed_signals(rules):
    body = ("func _ready():\n\tyield(get_tree(), \"idle_frame\")\n\tyield($Timer, \"timeout\")\n"
            "\tyield(load_level(), \"completed\")\n\nfunc load_level():\n\tyield(get_tree().create_timer(1), \"timeout\")\n")
    out = migrated(rules, body, extra={"main.tscn": "[gd_scene format=2]\n\n[ext_resource path=\"res://main.gd\" "
                                                    "type=\"Script\" id=1]\n\n[node name=\"Main\" type=\"Node\"]\n"
                                                    "script = ExtResource( 1 )\n\n[node name=\"Timer\" type=\"Timer\" "
                                                    "parent=\".\"]\n"})
    assert "await get_tree().process_frame" in out
    assert "await $Timer.timeout" in out and "await load_level()\n" in out
    assert "await get_tree().create_timer(1).timeout" in out


def test_connect_forms_become_callables(rules):
    body = ("func _ready():\n\tconnect(\"hit\", self, \"_on_hit\")\n\t$Button.connect(\"pressed\", self, \"_on_pressed\", [1, 2])\n"
            "\t$Button.disconnect(\"pressed\", self, \"_on_pressed\")\n\tif not is_connected(\"hit\", self, \"_on_hit\"):\n"
            "\t\tpass\n\tconnect(\"hit\", other, method_name)\n\tvar f = funcref(self, \"_on_hit\")\n"
            "\temit_signal(\"hit\")\n")
    out = migrated(rules, body)
    assert "\thit.connect(self._on_hit)" in out
    assert "$Button.pressed.connect(self._on_pressed.bind(1, 2))" in out
    assert "$Button.pressed.disconnect(self._on_pressed)" in out
    assert "if not hit.is_connected(self._on_hit):" in out
    assert "hit.connect(Callable(other, method_name))" in out
    assert "var f = self._on_hit" in out
    assert 'emit_signal("hit")' in out  # still valid in Godot 4: left as it is


def test_renamed_methods_by_receiver(rules):
    body = ("func _draw():\n\tpass\n\nfunc _process(delta):\n\tupdate()\n\tvar p = \"user://\".plus_file(\"save\")\n"
            "\tvar t = Thread.new()\n\tt.start(self, \"_work\", 3)\n\tvar items = []\n\titems.sort_custom(self, \"_cmp\")\n")
    out = migrated(rules, body, "Node2D")
    assert "\tqueue_redraw()" in out and '"user://".path_join("save")' in out
    assert "t.start(self._work.bind(3))" in out and "items.sort_custom(self._cmp)" in out


def test_move_and_slide_becomes_the_velocity_property(rules):
    body = ("var motion = Vector2()\n\nfunc _physics_process(delta):\n\tmotion = move_and_slide(motion, Vector2.UP)\n"
            "\tmotion.y = move_and_slide(motion, Vector2(0, -1), true).y\n")
    out = migrated(rules, body, "KinematicBody2D")
    assert "\tvelocity = motion\n\tmove_and_slide()\n\tmotion = velocity\n" in out
    assert "\tfloor_stop_on_slope = true\n" not in out
    assert "motion.y = velocity.y" in out


def test_file_new_and_open_become_file_access(rules):
    body = ("var save_file = File.new()\n\nfunc save(path, text):\n\tvar f = File.new()\n\tf.open(path, File.WRITE)\n"
            "\tf.store_string(text)\n\tf.close()\n\n"
            "func load_it(path):\n\tvar f = File.new()\n\tif f.file_exists(path):\n\t\tf.open(path, File.READ)\n"
            "\t\treturn f.get_as_text()\n\nfunc reopen(path) -> bool:\n\tif save_file.open(path, File.READ) != OK:\n"
            "\t\treturn false\n\tvar dir = Directory.new()\n\tvar err = dir.open(\"user://\")\n\treturn err == OK\n")
    out = migrated(rules, body)
    assert "var save_file: FileAccess\n" in out
    assert "\tvar f = FileAccess.open(path, FileAccess.WRITE)\n\tf.store_string(text)" in out
    assert "\tvar f: FileAccess\n\tif FileAccess.file_exists(path):\n\t\tf = FileAccess.open(path, FileAccess.READ)\n" in out
    assert "\tsave_file = FileAccess.open(path, FileAccess.READ)\n\tif FileAccess.get_open_error() != OK:" in out
    assert "\tvar dir: DirAccess\n\tdir = DirAccess.open(\"user://\")\n\tvar err = DirAccess.get_open_error()\n" in out


def test_tilemap_cells_and_renamed_notifications(rules):
    files = {"project.godot": "config_version=4\n",
             "main.gd": ("extends TileMap\n\nfunc _ready():\n\tset_cellv(Vector2(1, 2), 3)\n\n"
                         "func _notification(what):\n\tif what == NOTIFICATION_WM_QUIT_REQUEST:\n\t\tget_tree().quit()\n")}
    out, results = rewrite_file(rules, files, "main.gd")
    assert "if what == NOTIFICATION_WM_CLOSE_REQUEST:" in out
    assert "\tset_cell(0, Vector2i(1, 2), 3, Vector2i(0, 0))\n" in out
    assert [m.kind for r in results for m in r.manual] == ["tilemap_ids"]


def test_tween_is_left_to_people_with_evidence(rules):
    body = ("onready var tween = $Tween\n\nfunc fade():\n\ttween.interpolate_property(self, \"modulate:a\", 1.0, 0.0, 0.5)\n"
            "\ttween.start()\n")
    files = {"project.godot": "config_version=4\n", "main.gd": f"extends Node2D\n\n{body}"}
    _, results = rewrite_file(rules, files, "main.gd")
    manual = [m for r in results for m in r.manual if m.kind == "tween"]
    assert manual and manual[0].evidence and manual[0].evidence[0]["table"] == "api_mapping"
    assert manual[0].start_line == 6


def test_os_window_properties(rules):
    body = ("func _ready():\n\tpause_mode = 2\n\tOS.window_fullscreen = true\n\tOS.set_use_vsync(settings.vsync)\n\tOS.set_window_size(Vector2(640, 480))\n"
            "\tif OS.is_window_maximized():\n\t\tprint(OS.get_screen_size())\n")
    out = migrated(rules, body)
    assert "\tget_window().mode = Window.MODE_EXCLUSIVE_FULLSCREEN\n" in out
    assert ("DisplayServer.window_set_vsync_mode(DisplayServer.VSYNC_ENABLED if (settings.vsync) "
            "else DisplayServer.VSYNC_DISABLED)") in out
    assert "get_window().size = Vector2(640, 480)" in out and "\tprocess_mode = 3\n" in out
    assert "if (get_window().mode == Window.MODE_MAXIMIZED):" in out and "DisplayServer.screen_get_size()" in out


def test_a_one_line_block_is_left_to_people(rules):
    body = "func _physics_process(delta):\n\tif true: motion = move_and_slide(motion)\n"
    files = {"project.godot": "config_version=4\n", "main.gd": f"extends KinematicBody2D\n\nvar motion\n\n{body}"}
    out, results = rewrite_file(rules, files, "main.gd")
    assert "if true: motion = move_and_slide(motion)" in out
    assert any(m.kind == "move_and_slide" for r in results for m in r.manual)


def test_an_edit_that_would_not_parse_is_dropped_and_reported(rules):
    text = "func f():\n\tvar a = deg2rad(1)\n\tvar b = 2\n"
    editor = TreeEditor(text, text, 0, None, rules)
    good = Pending((1, 9), (1, 16), "deg_to_rad", "global_rename", {"table": "api_mapping", "id": "x", "title": "x"}, 1.0)
    bad = Pending((2, 9), (2, 10), "(2", "broken", None, 1.0)
    kept, manual = safe_edits(text, [good, bad], editor)
    assert kept == [good]
    assert [(m.kind, m.start_line) for m in manual] == [("not_parsed", 2)]


def test_godot4_code_is_left_as_it_is(rules):
    text = ("extends CharacterBody2D\n\n@export var speed := 200.0\n@onready var sprite: Sprite2D = $Sprite2D\n\n"
            "func _physics_process(delta: float) -> void:\n\tvelocity = Input.get_vector(&\"l\", &\"r\", &\"u\", &\"d\") * speed\n"
            "\tmove_and_slide()\n\tawait get_tree().process_frame\n\t$Timer.timeout.connect(_on_timeout)\n"
            "\tsuper._physics_process(delta)\n\tvar vp: Viewport = get_viewport()\n\t$Button.pressed.connect(_on_timeout)\n"
            "\t$Camera2D.make_current()\n\nvar hp := 3: set = set_hp\n\nfunc set_hp(v):\n\thp = v\n\n"
            "func _on_timeout():\n\tqueue_redraw()\n")
    files = {"project.godot": "config_version=5\n", "main.gd": text}
    out, results = rewrite_file(rules, files, "main.gd")
    assert out == text
    assert not [m for r in results for m in r.manual]


# --- scenes and project.godot -----------------------------------------------------------------------


def test_scene_types_properties_and_project_keys(rules):
    scene = ('[gd_scene load_steps=2 format=2]\n\n[node name="Player" type="KinematicBody2D"]\npause_mode = 2\n\n'
             '[node name="Panel" type="Panel" parent="."]\nmargin_left = 10.0\n')
    files = {"project.godot": "config_version=4\n\n[display]\n\nwindow/size/width=640\n", "player.tscn": scene}
    out, _ = rewrite_file(rules, files, "player.tscn")
    assert '[node name="Player" type="CharacterBody2D"]\nprocess_mode = 3\n' in out
    assert "offset_left = 10.0" in out
    project, _ = rewrite_file(rules, files, "project.godot")
    assert "window/size/viewport_width=640" in project
    direct = rewrite_config("section", "[display]\n\nwindow/size/width=640", 3, rules, "project")
    assert direct.edits[0].start_line == 5 and direct.edits[0].evidence["table"] == "api_mapping"


def test_apply_edits_refuses_text_that_changed(rules):
    text = "extends KinematicBody2D\n"
    _, results = rewrite_file(rules, {"project.godot": "config_version=4\n", "main.gd": text}, "main.gd")
    edits = [e for r in results for e in r.edits]
    assert apply_edits(text, edits) == "extends CharacterBody2D\n"
    with pytest.raises(ValueError, match="line 1"):
        apply_edits("extends Node2D\n", edits)
