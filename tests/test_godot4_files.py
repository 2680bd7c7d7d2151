"""The rewrite of what is not GDScript: scenes and resources, project.godot, shaders, and what the judge
still finds after it (closure). Real Godot 3 text, read in its project, against the built corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from gd_assets.core.judges.evidence import EvidenceJudge
from gd_assets.core.project_context import build_context
from gd_assets.core.receivers import Scope
from gd_assets.core.rewrite import apply_edits, load_rules, rewrite_fragment
from gd_assets.core.rewrite.closure import residual
from gd_assets.core.slicing import slice_file

KINDS = {".gd": "gdscript", ".tscn": "scene", ".godot": "project", ".tres": "resource", ".shader": "shader",
         ".gdshader": "shader"}
GAME = {p.name: p.read_text() for p in (FIXTURES / "godot3_game").iterdir()}


@pytest.fixture(scope="module")
def rules(corpus_home):
    return load_rules(str(corpus_home / "corpora.duckdb"))


def rewrite(rules, files: dict[str, str], path: str, closure: bool = False):
    """The file's new text, its edits and its manual items, every fragment rewritten in the project."""
    context = build_context([{"path": p, "kind": KINDS[Path(p).suffix], "text": t} for p, t in files.items()])
    judge = EvidenceJudge(surface=rules.surface)
    edits, manual = [], []
    kind = KINDS[Path(path).suffix]
    for frag in slice_file(path, kind, files[path]):
        scope = Scope.of(context, path, frag.symbol, rules.surface)
        result = rewrite_fragment(frag.kind, frag.text, frag.start_line, kind, scope, rules)
        if closure:
            row = {"key": f"p/{path}::{frag.symbol}", "path": path, "start_line": frag.start_line,
                   "end_line": frag.end_line, "kind": frag.kind, "file_kind": kind, "text": frag.text}
            left = residual(row, result, scope, judge)
            result.manual += [left] if left else []
        edits += result.edits
        manual += result.manual
    return apply_edits(files[path], edits), edits, manual


def test_a_godot_3_scene_becomes_format_3_with_godot_4_properties(rules):
    new, edits, manual = rewrite(rules, GAME, "main.tscn")
    assert new.startswith("[gd_scene load_steps=5 format=3]")
    assert '[ext_resource path="res://glow.gdshader" type="Shader" id="1"]' in new
    assert 'shader = ExtResource("1")\nshader_parameter/tint = Color( 1, 0.5, 0, 1 )' in new
    assert "size = Vector2( 32, 16 )" in new                              # extents were half the size
    assert "offset_right = -40.0" in new and "custom_minimum_size = Vector2( 320, 180 )" in new
    assert "metadata/_edit_use_anchors_ = false" in new and "__meta__" not in new
    assert "theme_override_colors/font_color = Color( 1, 1, 0, 1 )" in new
    assert "horizontal_alignment = 1\nvertical_alignment = 1" in new
    assert "enabled = true\nzoom = Vector2( 0.5, 0.5 )" in new            # Godot 4 inverted the zoom
    assert "margin_" not in new and "rect_" not in new and not manual
    cited = {e.rule: e.evidence for e in edits}
    assert cited["scene_format"]["id"] == "proto:tscn-format-2-to-3"
    assert cited["property_rename"]["table"] == "api_mapping"
    assert all(e.evidence for e in edits), [e for e in edits if not e.evidence]


def test_properties_are_read_on_their_class_through_inheritance_and_instances(rules):
    hud = '[gd_scene format=2]\n\n[node name="Hud" type="MarginContainer"]\n'
    scene = ('[gd_scene load_steps=2 format=2]\n\n[ext_resource path="res://hud.tscn" type="PackedScene" id=1]\n\n'
             '[node name="Root" type="Node2D"]\n\n[node name="Hud" parent="." instance=ExtResource( 1 )]\n'
             'margin_left = 8.0\ncustom_constants/margin_top = 4\n\n'
             '[node name="Box" type="NinePatchRect" parent="."]\npatch_margin_left = 3\n\n'
             '[node name="Sprite" type="Sprite" parent="."]\nmargin_left = 1.0\nframes = 2\n')
    new, _, manual = rewrite(rules, {"project.godot": "config_version=4\n", "hud.tscn": hud, "a.tscn": scene},
                             "a.tscn")
    assert '[node name="Hud" parent="." instance=ExtResource("1")]\noffset_left = 8.0' in new  # a Control
    assert "theme_override_constants/margin_top = 4" in new               # a MarginContainer's own constant
    assert "patch_margin_left = 3" in new                                 # Godot 4 still has it
    assert 'type="Sprite2D"' in new and "hframes" not in new
    # `margin_left` on a Sprite is no Godot 3 property: not the Control rename, and not judged
    assert "\nmargin_left = 1.0\nframes = 2" in new and not manual


def test_what_no_row_converts_is_left_to_people_with_the_node_and_the_reason(rules):
    scene = ('[gd_scene format=2]\n\n[node name="Body" type="RigidBody2D"]\nmode = 1\nfriction = 0.2\n\n'
             '[node name="Fade" type="Tween" parent="."]\n')
    new, _, manual = rewrite(rules, {"project.godot": "config_version=4\n", "b.tscn": scene}, "b.tscn")
    assert "freeze = true\nfreeze_mode = 0" in new
    [friction] = manual
    assert friction.kind == "scene_property" and "node `.`" in friction.what and "friction" in friction.what
    assert "Godot 4 drops it" in friction.why and friction.evidence[0]["id"] == "docs:3:RigidBody2D.property.friction"
    assert "Fade" not in new  # a Tween node goes: its scripts make a tween per animation (tests/test_tween_rewrite.py)


def test_a_class_godot_4_removed_is_a_manual_item_with_its_api_diff_row(rules):
    resource = ('[gd_resource type="NativeScript" load_steps=2 format=2]\n\n'
                '[ext_resource path="res://bin/lib.gdnlib" type="GDNativeLibrary" id=1]\n\n'
                '[resource]\nresource_name = "Lib"\nclass_name = "Lib"\nlibrary = ExtResource( 1 )\n')
    new, _, manual = rewrite(rules, {"project.godot": "config_version=4\n", "lib.tres": resource}, "lib.tres")
    assert 'type="NativeScript"' in new and 'type="GDNativeLibrary"' in new   # no rename to make up
    removed = [m for m in manual if m.kind == "class_removed"]
    assert removed and "NativeScript" in removed[0].what and removed[0].start_line == 1
    assert removed[0].evidence[0]["id"] == "map:diff:class:NativeScript"


def test_a_proxy_texture_loads_as_an_image_texture_and_its_base_is_a_manual_item(rules):
    resource = ('[gd_resource type="ProxyTexture" load_steps=2 format=2]\n\n'
                '[ext_resource path="res://icons.svg" type="Texture" id=1]\n\n[resource]\nbase = ExtResource( 1 )\n')
    new, edits, manual = rewrite(rules, {"project.godot": "config_version=4\n", "icons.tres": resource}, "icons.tres")
    assert 'type="ImageTexture"' in new and 'type="Texture2D"' in new and "ProxyTexture" not in new
    assert "map:scene:ProxyTexture" in {e.evidence["id"] for e in edits}
    [base] = manual
    assert base.kind == "scene_property" and "base" in base.what and base.start_line == 6
    assert base.evidence[0]["id"] == "docs:3:ProxyTexture.property.base"


def test_project_godot_becomes_a_godot_4_project_with_its_input_map(rules):
    new, edits, _ = rewrite(rules, GAME, "project.godot")
    assert "\nconfig_version=5\n" in new and "_global_script_class" not in new
    assert 'config/features=PackedStringArray("4.6", "GL Compatibility")' in new
    assert 'renderer/rendering_method="gl_compatibility"' in new and "driver_name" not in new
    assert "window/size/viewport_width=640" in new and 'window/stretch/mode="canvas_items"' in new
    assert '"keycode":32,' in new and '"keycode":4194305,' in new and "scancode" not in new  # Space, Escape
    assert '"ctrl_pressed":false' in new and '"command"' not in new
    assert '"button_index":6,' in new                                     # Godot 3 Start (11) is 6
    assert 'Object(InputEventJoypadMotion,"resource_local_to_scene":false,"resource_name":"","device":0,' \
           '"axis":5,"axis_value":1.0,"script":null)' in new              # the right trigger became an axis
    assert {e.evidence["id"] for e in edits if e.rule == "input_event"} >= {
        "proto:project-godot-input-scancode", "proto:project-godot-joypad-buttons-axes"}


def test_a_godot_3_project_that_relied_on_default_settings_godot_4_changed_keeps_them(rules):
    """Godot 3's physics/2d/default_gravity was 98 (Godot 4's is 980: bodies would fall ten times faster), its
    window 1024x600 (Godot 4's 1152x648)."""
    plain = 'config_version=4\n\n[application]\n\nconfig/name="g"\n'
    new, edits, _ = rewrite(rules, {"project.godot": plain}, "project.godot")
    assert "\n[physics]\n\n2d/default_gravity=98.0\n\n[display]\n\nwindow/size/viewport_width=1024\n" \
           "window/size/viewport_height=600\n\n[application]\n" in new
    [pin] = [e for e in edits if e.rule == "changed_default"]
    assert pin.evidence["id"] == "docs:3:ProjectSettings.property.physics/2d/default_gravity"
    sections = plain + '\n[display]\n\nwindow/size/width=800\nwindow/stretch/mode="2d"\n\n' \
        '[physics]\n\n3d/default_gravity=9.8\n'
    files = {"project.godot": sections}
    new, _, _ = rewrite(rules, files, "project.godot")
    assert new.count("[physics]") == 1 and "3d/default_gravity=9.8\n2d/default_gravity=98.0" in new
    assert new.count("[display]") == 1 and "window/size/viewport_width=800\nwindow/stretch/mode=\"canvas_items\"\n" \
        "window/size/viewport_height=600" in new                  # the height it left unset is pinned beside
    for own in (plain + "\n[physics]\n\n2d/default_gravity=500\n[display]\n\nwindow/size/width=800\n"
                "window/size/height=450\n",                              # the game's own settings stay
                'config_version=5\n\n[application]\n\nconfig/name="g"\n'):     # a Godot 4 project is Godot 4's
        new, edits, _ = rewrite(rules, {"project.godot": own}, "project.godot")
        assert "98.0" not in new and not [e for e in edits if e.rule == "changed_default"]


FONT_TRES = ('[gd_resource type="DynamicFont" load_steps=2 format=2]\n\n'
             '[ext_resource path="res://font.ttf" type="DynamicFontData" id=1]\n\n'
             '[resource]\nsize = 28\nfont_data = ExtResource( 1 )\n')


def test_a_dynamic_fonts_size_goes_where_godot_4_keeps_it(rules):
    """Godot 4 sizes a font where it is used: a Control's `theme_override_font_sizes/*`, a Theme's
    `default_font_size` or `<Type>/font_sizes/*`; the font's own size line goes once every use has it."""
    scene = ('[gd_scene load_steps=4 format=2]\n\n[ext_resource path="res://big.tres" type="DynamicFont" id=1]\n'
             '[ext_resource path="res://font.ttf" type="DynamicFontData" id=2]\n\n'
             '[sub_resource type="DynamicFont" id=1]\nsize = 44\noutline_size = 2\nfont_data = ExtResource( 2 )\n\n'
             '[node name="Title" type="Label"]\ncustom_fonts/font = SubResource( 1 )\ntext = "Hi"\n\n'
             '[node name="Notes" type="RichTextLabel" parent="."]\ncustom_fonts/normal_font = ExtResource( 1 )\n')
    theme = ('[gd_resource type="Theme" load_steps=2 format=2]\n\n'
             '[ext_resource path="res://big.tres" type="DynamicFont" id=1]\n\n'
             '[resource]\ndefault_font = ExtResource( 1 )\nLabel/fonts/font = ExtResource( 1 )\n')
    files = {"project.godot": "config_version=4\n", "title.tscn": scene, "big.tres": FONT_TRES, "ui.tres": theme}
    new, edits, manual = rewrite(rules, files, "title.tscn")
    assert "theme_override_fonts/font = SubResource(\"1\")\ntheme_override_font_sizes/font_size = 44\n" in new
    assert "theme_override_fonts/normal_font = ExtResource(\"1\")\ntheme_override_font_sizes/normal_font_size = 28" in new
    assert "\nsize = 44" not in new                                  # the sub-resource's size went to its use
    assert {e.evidence["id"] for e in edits if e.rule in ("font_size", "font_size_moved")} == {"map:scene:DynamicFont.size"}
    assert [m.what for m in manual] == ["`outline_size = 2` of sub-resource 1 (DynamicFont)"]
    new, _, _ = rewrite(rules, files, "ui.tres")
    assert "default_font = ExtResource(\"1\")\ndefault_font_size = 28\n" in new
    assert "Label/fonts/font = ExtResource(\"1\")\nLabel/font_sizes/font_size = 28" in new
    new, _, manual = rewrite(rules, files, "big.tres")
    assert "size = 28" not in new and not manual
    # a font a script loads gets no size from the scenes: its size stays a manual item
    files["hud.gd"] = 'extends Label\n\nfunc _ready():\n\tadd_font_override("font", load("res://big.tres"))\n'
    new, _, manual = rewrite(rules, files, "big.tres")
    assert "size = 28" in new and [m.what for m in manual] == ["`size = 28` of `[resource]` (DynamicFont)"]


def test_shaders_get_godot_4_names_and_a_uniform_for_the_screen_texture(rules):
    files = {**GAME, "two.shader": "shader_type spatial;\nrender_mode depth_draw_alpha_prepass;\n\n"
             "void vertex() {\n\tVERTEX = (WORLD_MATRIX * vec4(VERTEX, 1.0)).xyz;\n}\n\n"
             "void fragment() {\n\tALBEDO = texture(SCREEN_TEXTURE, SCREEN_UV).rgb; // SCREEN_TEXTURE\n}\n\n"
             "void light() {\n\tDIFFUSE_LIGHT = texture(SCREEN_TEXTURE, SCREEN_UV).rgb;\n}\n"}
    glow, _, _ = rewrite(rules, files, "glow.shader")
    assert "uniform vec4 tint : source_color = vec4(1.0);" in glow
    assert glow.count("hint_screen_texture") == 1 and "texture(screen_texture, SCREEN_UV)" in glow
    two, _, _ = rewrite(rules, files, "two.shader")
    assert "render_mode depth_prepass_alpha;" in two and "MODEL_MATRIX" in two
    assert two.count("uniform sampler2D screen_texture : hint_screen_texture") == 1  # before fragment(), once
    assert two.index("uniform sampler2D screen_texture") < two.index("void fragment")
    assert "// SCREEN_TEXTURE" in two and "SCREEN_TEXTURE," not in two       # comments stay as they are
    hud, _, _ = rewrite(rules, GAME, "hud.gd")
    assert 'preload("res://glow.gdshader")' in hud


def test_shader_files_are_cut_into_declarations_and_functions():
    frags = slice_file("a.gdshader", "shader", GAME["glow.shader"])
    assert [(f.kind, f.symbol, f.start_line, f.end_line) for f in frags] == [
        ("declaration", "shader_type", 1, 1), ("declaration", "uniform.tint", 3, 3), ("function", "fragment", 5, 8)]
    unbalanced = slice_file("b.gdshader", "shader", "shader_type spatial;\nvoid fragment() {\n\tALBEDO = vec3(1.0);\n")
    assert [f.kind for f in unbalanced] == ["block"]       # braces that do not close: cut by blank lines


def test_what_the_judge_still_finds_after_the_rewrite_is_a_manual_item(rules):
    scene = '[gd_scene format=2]\n\n[node name="Body" type="RigidBody2D"]\nweight = 2.0\n'
    _, _, manual = rewrite(rules, {"project.godot": "config_version=4\n", "c.tscn": scene}, "c.tscn", closure=True)
    assert [m.kind for m in manual] == ["scene_property"]   # the rewrite said it: no second item
    code = 'extends Node\n\nfunc _ready():\n\tvar img = Image.new()\n\timg.create(4, 4, false, Image.FORMAT_RGBA8)\n'
    new, _, manual = rewrite(rules, {"project.godot": "config_version=4\n", "d.gd": code}, "d.gd", closure=True)
    assert "img.create(4, 4" in new      # no rule for it (Godot 4: `img = Image.create(...)`, static)
    [left] = [m for m in manual if m.kind == "judged_godot3"]
    assert "Image.create" in left.why and (left.start_line, left.end_line) == (3, 5)


def test_the_rewrite_of_a_rewritten_project_changes_nothing(rules):
    files = {}
    for path in GAME:
        files[path.replace(".shader", ".gdshader")] = rewrite(rules, GAME, path)[0]
    for path in files:
        if path != "broken.gd":
            assert rewrite(rules, files, path)[1] == [], path


def test_animations_windows_fonts_and_materials_get_godot_4_forms(rules):
    anim = ('[gd_resource type="Animation" format=2]\n\n[resource]\nlength = 1.0\nloop = true\n'
            'tracks/0/type = "transform"\ntracks/0/path = NodePath("Arm")\ntracks/0/interp = 1\n'
            'tracks/0/loop_wrap = true\ntracks/0/imported = false\ntracks/0/enabled = true\n'
            'tracks/0/keys = PoolRealArray( 0, 1, 1, 2, 3, 0, 0, 0, 1, 1, 1, 1 )\n'
            'tracks/1/type = "value"\ntracks/1/path = NodePath("Arm:visible")\ntracks/1/interp = 1\n'
            'tracks/1/loop_wrap = true\ntracks/1/imported = false\ntracks/1/enabled = true\n'
            'tracks/1/keys = {\n"times": PoolRealArray( 0 ),\n"transitions": PoolRealArray( 1 ),\n"update": 1,\n'
            '"values": [ true ]\n}\n')
    new, edits, manual = rewrite(rules, {"project.godot": "config_version=4\n", "a.tres": anim}, "a.tres")
    assert not manual and "loop_mode = 1" in new and '"transform"' not in new
    assert 'tracks/0/type = "position_3d"' in new and "tracks/0/keys = PackedFloat32Array(0, 1, 1, 2, 3)" in new
    assert "tracks/1/keys = PackedFloat32Array(0, 1, 0, 0, 0, 1)" in new      # the rotation quaternion
    assert "tracks/2/keys = PackedFloat32Array(0, 1, 1, 1, 1)" in new         # the scale
    assert 'tracks/3/type = "value"' in new and '"times": PackedFloat32Array( 0 )' in new
    assert {e.evidence["id"] for e in edits if e.rule == "animation_tracks"} == {"proto:animation-transform-tracks"}

    scene = ('[gd_scene load_steps=3 format=2]\n\n[ext_resource path="res://font.ttf" type="DynamicFontData" id=1]\n\n'
             '[sub_resource type="DynamicFont" id=1]\nsize = 24\nfont_data = ExtResource( 1 )\nextra_spacing_top = 2\n\n'
             '[sub_resource type="OpenSimplexNoise" id=2]\nperiod = 64.0\n\n'
             '[node name="Root" type="Control"]\n\n'
             '[node name="Dialog" type="AcceptDialog" parent="."]\nmargin_left = 100.0\nmargin_top = 50.0\n'
             'margin_right = 400.0\nmargin_bottom = 250.0\nwindow_title = "Hello"\n')
    new, _, manual = rewrite(rules, {"project.godot": "config_version=4\n", "s.tscn": scene}, "s.tscn")
    assert '[ext_resource path="res://font.ttf" type="FontFile" id="1"]' in new
    assert '[sub_resource type="FontVariation" id="1"]' in new and 'base_font = ExtResource("1")' in new
    assert "spacing_top = 2" in new and "frequency = 0.015625" in new
    assert "position = Vector2i(100, 50)\nsize = Vector2i(300, 200)\ntitle = \"Hello\"" in new
    assert [m.what.split(" = ")[0] for m in manual] == ["`size"]                # the font size moves to the theme


def test_editor_metadata_keeps_values_holding_commas(rules):
    scene = ('[gd_scene format=2]\n\n[node name="Stats" type="Control"]\n__meta__ = {\n'
             '"_edit_horizontal_guides_": [ -98.0, -149.0 ],\n"_edit_vertical_guides_": [ 150.0 ]\n}\n')
    new, _, _ = rewrite(rules, {"project.godot": "config_version=4\n", "s.tscn": scene}, "s.tscn")
    assert "metadata/_edit_horizontal_guides_ = [ -98.0, -149.0 ]\nmetadata/_edit_vertical_guides_ = [ 150.0 ]" in new


def test_a_blank_frame_of_a_godot_3_animation_keeps_its_beat(rules):
    """Godot 3 showed nothing for a `null` frame (a blink); Godot 4.6.3 drops it when loading ("Condition
    !f.has("texture")", checked) and the animation plays faster: it becomes a frame without a texture."""
    scene = ('[gd_scene load_steps=3 format=2]\n\n[ext_resource path="res://star.png" type="Texture" id=1]\n\n'
             '[sub_resource type="SpriteFrames" id=1]\nanimations = [ {\n"frames": [ ExtResource( 1 ), null, '
             'ExtResource( 1 ), null ],\n"loop": true,\n"name": "blink",\n"speed": 8.0\n} ]\n\n'
             '[node name="Star" type="AnimatedSprite"]\nframes = SubResource( 1 )\nanimation = "blink"\n')
    new, edits, _ = rewrite(rules, {"project.godot": "config_version=4\n", "s.tscn": scene}, "s.tscn")
    blank = '{"duration": 1.0, "texture": null}'
    assert f'"frames": [ ExtResource("1"), {blank}, ExtResource("1"), {blank} ],' in new
    assert [e.evidence["id"] for e in edits if e.rule == "blank_frame"] == ["docs:4:SpriteFrames.method.add_frame"] * 2
