"""`gd_assets.core.verify`: what Godot 4 says about a project, read from its own output (real Godot 4.6)."""

from __future__ import annotations

import shutil
import stat

import pytest
from conftest import FIXTURES

from gd_assets.core import engines, verify

GODOT3_GAME = FIXTURES / "godot3_game"

LOG = """Godot Engine v4.6.3.stable.debian - https://godotengine.org
@@gd-verify\tBEGIN\tscript\tres://a.gd
SCRIPT ERROR: Parse Error: Identifier "File" not declared in the current scope.
          at: GDScript::reload (res://a.gd:12)
ERROR: Failed to load script "res://a.gd" with error "Parse error".
   at: load (modules/gdscript/gdscript.cpp:2907)
@@gd-verify\tEND\tscript\tres://a.gd\tfail
@@gd-verify\tBEGIN\tscene\tres://s.tscn
ERROR: No loader found for resource: res://fx.shader (expected type: Shader)
   at: _load (core/io/resource_loader.cpp:341)
   GDScript backtrace (most recent call first):
       [0] _initialize (/tmp/verify_tool.gd:120)
ERROR: Failed loading resource: res://pics/bg.png.
   at: _load (core/io/resource_loader.cpp:343)
@@gd-verify\tDROPPED\tres://s.tscn\tMenu/Title\tLabel\tmargin_left\t
@@gd-verify\tDROPPED\tres://s.tscn\tMenu\tArea2D\tspeed\tscript
@@gd-verify\tEND\tscene\tres://s.tscn\tok
@@gd-verify\tACTION\tjump\tok\t1\t1
@@gd-verify\tACTION\tfire\tok\t0\t0
@@gd-verify\tDONE
"""


def test_godot_output_is_read_file_by_file_with_lines(tmp_path):
    log = verify.Log()
    verify.parse_log(LOG, log)
    assert log.done and log.ended == {"res://a.gd": False, "res://s.tscn": True}
    assert ("res://a.gd", "res://a.gd", 12, 'Parse Error: Identifier "File" not declared in the current scope.') \
        in log.errors
    assert ("res://fx.shader", "res://s.tscn", None, "No loader found for resource: res://fx.shader "
            "(expected type: Shader)") in log.errors
    (tmp_path / "project.godot").write_text("config_version=5\n")
    report = verify.build_report(log, ["a.gd", "s.tscn", "fx.shader", "pics/bg.png"], tmp_path, "4.6.3", False)
    assert (report.scripts, report.scripts_failing, report.scenes, report.scenes_failing) == (1, 1, 1, 1)
    assert report.failing["s.tscn"].startswith("No loader found for resource: res://fx.shader")  # loaded only past it
    assert report.properties_dropped == 2 and report.properties_dropped_with_their_script == 1
    assert report.input_actions == 2 and report.input_actions_without_key == 1
    assert report.missing_assets == 1  # the image is not a migration fault
    dropped = next(p for p in report.problems if p.kind == "property")
    assert dropped.path == "s.tscn" and "margin_left" in dropped.message and "Menu/Title" in dropped.message


def test_errors_are_traced_to_the_fragment_and_the_edit_of_their_line():
    original = "extends Node\n\nfunc _ready():\n\tvar f = File.new()\n\tprint(f)\n"
    migrated = "extends Node\n\nfunc _ready():\n\tvar f: FileAccess\n\tprint(f)\n\tpass\n"
    fragments = [{"key": "p/a.gd::extends", "path": "a.gd", "start_line": 1, "end_line": 1},
                 {"key": "p/a.gd::_ready", "path": "a.gd", "start_line": 3, "end_line": 5}]
    edit = {"start_line": 4, "start_col": 7, "end_line": 4, "end_col": 20, "old": " = File.new()",
            "new": ": FileAccess", "rule": "file_access", "evidence": None, "confidence": 0.85}
    problems = [verify.Problem("a.gd", 4, "Parse Error: x", "script"), verify.Problem("a.gd", 5, "y", "script"),
                verify.Problem("a.gd", None, "Failed to load script", "script"),
                verify.Problem("addons/x.gd", 3, "z", "script")]
    done = verify.attribute(problems, {"a.gd": original}, {"a.gd": migrated}, {}, fragments,
                            {"p/a.gd::_ready": {"edits": [edit], "manual": []}},
                            {"p/a.gd::_ready": {"signal": "godot3", "migration_needed": True}})
    assert [d["cause"] for d in done] == ["edited line", "untouched line of a flagged fragment", "file",
                                          "outside the analysed files"]
    assert done[0]["fragment"] == "p/a.gd::_ready" and done[0]["edits"] == [edit] and done[0]["original_line"] == 4
    assert verify.line_map("a\nb\nc", "a\nx\ny\nc") == {1: 1, 2: 2, 3: 2, 4: 3}


def test_resource_properties_and_input_actions_are_read_from_the_text():
    text = ('[gd_resource type="Theme" load_steps=2 format=2]\n\n[sub_resource type="StyleBoxFlat" id=1]\n'
            'bg_color = Color( 1, 0, 0, 1 )\n\n[resource]\ndefault_font = null\nButton/styles/normal = SubResource( 1 )\n'
            'code = "line one\nname = not a property\n"\n')
    assert verify.resource_properties(text) == [
        ("1", "bg_color", "Color( 1, 0, 0, 1 )", 4), ("", "default_font", "null", 7),
        ("", "Button/styles/normal", "SubResource( 1 )", 8), ("", "code", '"line one\nname = not a property\n"', 9)]
    project = (GODOT3_GAME / "project.godot").read_text()
    assert verify.input_actions(project) == ["jump", "pause", "fire"]


def test_godot_is_found_only_when_it_is_godot_4(tmp_path, monkeypatch):
    fake = tmp_path / "godot"
    fake.write_text("#!/bin/sh\necho 3.6.2.stable.official\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(engines.GodotNotFound, match="is not a Godot 4 executable"):
        engines.find_godot(str(fake))
    with pytest.raises(engines.GodotNotFound, match="pass --godot PATH, or set GODOT4"):
        engines.find_godot(env={"PATH": str(tmp_path)})
    fake.write_text("#!/bin/sh\necho 4.6.3.stable.custom\n")
    assert engines.find_godot(env={"GODOT4": str(fake), "PATH": ""}).version == "4.6.3.stable.custom"


@pytest.mark.slow
def test_godot_4_says_what_a_godot_3_project_loses(godot4, tmp_path):
    """The unconverted game: its scene fails on the `.shader` it uses, its scripts do not compile, its
    key bindings are gone; the folder itself is left as it was."""
    project = tmp_path / "game"
    shutil.copytree(GODOT3_GAME, project)
    before = {p.name: p.read_bytes() for p in project.iterdir()}
    report, _ = verify.verify(project, godot4)
    assert report.config_version == "4" and not report.timed_out
    assert (report.scripts, report.scripts_failing) == (2, 2)
    assert "onready" in report.failing["hud.gd"] and "Expected \":\"" in report.failing["broken.gd"]
    assert report.scenes_failing == 1 and "main.tscn" in report.failing
    assert (report.input_actions, report.input_actions_without_key) == (3, 2)
    broken = next(p for p in report.problems if p.path == "broken.gd" and p.line)
    assert broken.line == 6
    assert {p.name: p.read_bytes() for p in project.iterdir()} == before
    assert not (project / ".godot").exists()


@pytest.mark.slow
def test_dropped_properties_are_counted_on_the_nodes_godot_4_builds(godot4, tmp_path):
    project = tmp_path / "game"
    project.mkdir()
    (project / "project.godot").write_text("config_version=5\n\n[application]\n\nconfig/name=\"P\"\n")
    (project / "ui.tscn").write_text(
        '[gd_scene format=3]\n\n[sub_resource type="StyleBoxTexture" id="1"]\nmargin_left = 2.0\n'
        'texture_margin_top = 2.0\n\n[node name="UI" type="Control"]\nmargin_left = 4.0\noffset_top = 2.0\n'
        'rect_min_size = Vector2(1, 1)\n\n[node name="Label" type="Label" parent="."]\nalign = 1\ntext = "x"\n'
        'theme_override_styles/normal = SubResource("1")\n')
    report, _ = verify.verify(project, godot4)
    dropped = sorted(tuple(p.property.split("\t")) for p in report.problems if p.kind == "property")
    # `align` is still read by Godot 4.6 (a compatibility setter): not dropped
    assert dropped == [(".", "Control", "margin_left"), (".", "Control", "rect_min_size"),
                       ("[1]", "StyleBoxTexture", "margin_left")]
    assert report.scenes == 1 and report.scenes_failing == 0


@pytest.mark.slow
def test_scripts_failing_through_a_class_name_are_traced_to_it_and_the_roots_come_first(godot4, tmp_path):
    """One broken `class_name` script takes its users down: the report says which script to fix, once,
    and a script that fails only for a missing image is counted apart from the migration's failures."""
    project = tmp_path / "game"
    project.mkdir()
    (project / "project.godot").write_text("config_version=5\n\n[application]\n\nconfig/name=\"P\"\n")
    (project / "a_user.gd").write_text("extends Node\n\nvar base: Base\n\nfunc _ready():\n\tprint(base)\n")
    (project / "b_child.gd").write_text("extends Base\n\nfunc _ready():\n\tprint(1)\n")
    (project / "c_grandchild.gd").write_text('extends "res://b_child.gd"\n')
    (project / "z_base.gd").write_text("extends Node\nclass_name Base\n\nfunc f():\n\treturn undeclared_name\n")
    (project / "art.gd").write_text('extends Node\n\nconst ICON = preload("res://missing.png")\n')
    report, _ = verify.verify(project, godot4)
    assert set(report.failing) == {"a_user.gd", "b_child.gd", "c_grandchild.gd", "z_base.gd"}
    assert list(report.failing)[0] == "z_base.gd" and report.scripts_failing_roots == 1
    assert report.through == {"a_user.gd": "z_base.gd", "b_child.gd": "z_base.gd", "c_grandchild.gd": "z_base.gd"}
    assert sorted(report.dependents("z_base.gd")) == ["a_user.gd", "b_child.gd", "c_grandchild.gd"]
    assert "art.gd" in report.asset_only and "art.gd" not in report.failing
    assert "(1 on their own, the others through them)" in verify.figure_lines(report.figures())[0]
