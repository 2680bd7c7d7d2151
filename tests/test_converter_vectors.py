"""Godot's converter's own test vectors (177, from project_converter_3_to_4.cpp) as a second test set.

Each GDScript vector is rewritten without a project around it (as the converter sees it). Where
our text is the converter's, the test says so; where it deliberately differs, `DIFFERENT` lists our
text and why. Vectors that are not complete GDScript (regex fragments such as `(connect(A,B,C) != OK):`)
must come out parsing no worse than they went in. C# and input-map vectors are out of scope.
"""

from __future__ import annotations

import pytest
from conftest import corpus_sources

from corpora_build.api_mapping import converter_vectors
from gd_assets.core.rewrite import load_rules
from gd_assets.core.rewrite.gdscript import WRAPPER, rewrite_gdscript
from gd_assets.core.rewrite.tree import parse_errors

OUT_OF_SCOPE = ("rename_csharp_attributes", "rename_csharp_functions", "rename_joypad_buttons_and_axes",
                "rename_input_map_scancode")

UNKNOWN_RECEIVER = ("no receiver type here: by name alone it may be a project's own method or another class's "
                    "(with a known receiver it is rewritten: see test_rewrite.py)")
COMPLETE = "our output is whole Godot 4 GDScript; the converter's vector shows one of its passes (no `@` yet)"
STATEMENTS = "Godot 4 moves with properties: we set them (defaults left out) instead of calling setters"
NOT_A_STATEMENT = ("move_and_slide() inside an expression on an untyped receiver: left alone (typed, it is hoisted "
                   "before the statement and read back as `velocity`)")
STILL_VALID = "still valid in Godot 4.6 (the signature kept the argument)"
NEWER_API = "Godot 4.6's own API rather than a 4.0 workaround"
PARENT_CALL = "a line starting with `.name(` is a Godot 3 parent call"
NO_BODY = "a constructor header without a body: with one, `.(args)` becomes `super(args)` (test_rewrite.py)"
CODE_NOT_FILES = "in code `Spatial.tscn` is an attribute of the class Spatial; file names are strings and stay"

DIFFERENT = {
    "\tvar aa = roman(r.move_and_slide( a, b, c, d, e, f )) # Roman": (None, NOT_A_STATEMENT),
    "\tmove_and_slide( a, b, c, d, e, f ) # Roman": (
        "\tvelocity = a\n\tup_direction = b\n\tfloor_stop_on_slope = c\n\tmax_slides = d\n\tfloor_max_angle = e\n"
        "\tmove_and_slide() # Roman", STATEMENTS),
    "\tvar aa = roman(r.move_and_slide_with_snap( a, g, b, c, d, e, f )) # Roman": (None, NOT_A_STATEMENT),
    "\tmove_and_slide_with_snap( a, g, b, c, d, e, f ) # Roman": (
        "\tvelocity = a\n\tup_direction = b\n\tfloor_stop_on_slope = c\n\tmax_slides = d\n\tfloor_max_angle = e\n"
        "\tfloor_snap_length = (g).length()\n\tmove_and_slide() # Roman", STATEMENTS),
    "list_dir_begin( a , b )": ("include_navigational = not (a)\ninclude_hidden = not (b)\nlist_dir_begin()",
                                "the skip arguments become Godot 4's include_* properties instead of a TODO"),
    "list_dir_begin( a )": ("include_navigational = not (a)\ninclude_hidden = true\nlist_dir_begin()",
                            "the skip arguments become Godot 4's include_* properties instead of a TODO"),
    "list_dir_begin( )": (None, UNKNOWN_RECEIVER),
    "draw_line(1, 2, 3, 4, 5)": (None, STILL_VALID),
    "draw_rect(a,b,c,d,e).abc": (None, STILL_VALID),
    "\timage.lock()": (None, UNKNOWN_RECEIVER + "; Mutex.lock() is valid Godot 4"),
    "\timage.unlock()": (None, UNKNOWN_RECEIVER + "; Mutex.unlock() is valid Godot 4"),
    "\troman.image.unlock()": (None, UNKNOWN_RECEIVER),
    "var size: Vector2 = Vector2() setget set_function, get_function": (
        "var size: Vector2 = Vector2(): set = set_function, get = get_function", "setter first, as the Godot 3 line"),
    " Transform.xform(Vector3(a,b,c) + Vector3.UP) ": (
        " Transform3D * (Vector3(a,b,c) + Vector3.UP) ", "Transform is Transform3D in Godot 4 (class rename row)"),
    " Transform.xform_inv(Vector3(a,b,c) + Vector3.UP) ": (
        " (Vector3(a,b,c) + Vector3.UP) * Transform3D ", "Transform is Transform3D in Godot 4 (class rename row)"),
    "export(float) var lifetime = 3.0": ("@export var lifetime: float = 3.0", COMPLETE),
    "export (int)var spaces=1": ("@export var spaces: int=1", COMPLETE),
    "export(String, 'AnonymousPro', 'CourierPrime') var _font_name = 'AnonymousPro'": (
        "@export_enum('AnonymousPro', 'CourierPrime') var _font_name: String = 'AnonymousPro'",
        "the enum hint becomes @export_enum instead of a comment"),
    "export(PackedScene) var mob_scene": ("@export var mob_scene: PackedScene", COMPLETE),
    "export(float) var lifetime: float = 3.0": ("@export var lifetime: float = 3.0", COMPLETE),
    "export var lifetime: float = 3.0": ("@export var lifetime: float = 3.0", COMPLETE),
    "export var lifetime := 3.0": ("@export var lifetime := 3.0", COMPLETE),
    "export(float) var lifetime := 3.0": ("@export var lifetime := 3.0", COMPLETE),
    "var d = parse_json(roman(sfs))": ("var d = JSON.parse_string(roman(sfs))", NEWER_API),
    "var rr = JSON.parse(a)": (None, "JSON.parse's result object is gone: a manual item, not a silent change"),
    ".connect(A,B,C)": ("super.connect(A,B,C)", PARENT_CALL),
    "(tween_method(A,B,C,D,E,[F,G]).foo())": (
        "(tween_method(Callable(A, B).bind(F, G), C, D, E).foo())", "binds as separate values, as `bind` takes them"),
    "(tween_callback(A,B,[C,D]).foo())": (
        "(tween_callback(Callable(A, B).bind(C, D)).foo())", "binds as separate values, as `bind` takes them"),
    "func _init(a,b,c).(d,e,f):": (None, NO_BODY),
    "func _init(a,b,c).(a.b(),c.d()):": (None, NO_BODY),
    "func _init(a: int).(d,e,f) -> void:": (None, NO_BODY),
    "create_from_image(aa, bb)": (None, UNKNOWN_RECEIVER),
    "q_ImageTexture.create_from_image(variable1, variable2)": (None, UNKNOWN_RECEIVER),
    "set_cell_item(a, b, c, d ,e) # AA": (None, UNKNOWN_RECEIVER),
    "get_cell_item_orientation(a, b,c)": (None, UNKNOWN_RECEIVER),
    "get_cell_item(a, b,c)": (None, UNKNOWN_RECEIVER),
    "map_to_world(a, b,c)": (None, UNKNOWN_RECEIVER),
    "PackedStringArray(req_godot).join('.')": (None, UNKNOWN_RECEIVER + " (a Godot 4 name already)"),
    "apply_force(position, impulse)": (None, UNKNOWN_RECEIVER + "; the same call is valid Godot 4"),
    "apply_impulse(position, impulse)": (None, UNKNOWN_RECEIVER + "; the same call is valid Godot 4"),
    "get_focus_owner()": (None, UNKNOWN_RECEIVER),
    "button.pressed = 1": (None, UNKNOWN_RECEIVER + "; `pressed` is also a signal"),
    "button.pressed=1": (None, UNKNOWN_RECEIVER + "; `pressed` is also a signal"),
    "\n\ntool": ("\n\n@tool", "the keyword becomes an annotation where it stands"),
    "pause_mode = 2": (None, "a scene property: in .tscn files it becomes `process_mode = 3` (test_rewrite.py)"),
    "Spatial.tscn": ("Node3D.tscn", CODE_NOT_FILES),
    "Spatial.gd": ("Node3D.gd", CODE_NOT_FILES),
    "Spatial.shader": ("Node3D.shader", CODE_NOT_FILES),
}


def vectors() -> list[dict]:
    return converter_vectors(corpus_sources()["converter_rules"])


@pytest.fixture(scope="module")
def rules(corpus_home):
    return load_rules(str(corpus_home / "corpora.duckdb"))


def parses(text: str) -> int:
    first = next((line for line in text.split("\n") if line.strip()), "")
    return parse_errors(WRAPPER + text if first[:1] in (" ", "\t") else text)


def test_the_converters_vectors(rules):
    seen = {"same": 0, "different": 0, "fragment": 0, "out of scope": 0}
    for vector in vectors():
        godot3, godot4 = vector["godot3"], vector["godot4"]
        if vector["rule"] in OUT_OF_SCOPE:
            seen["out of scope"] += 1
            continue
        ours = rewrite_gdscript(godot3, 1, None, rules).text
        if parses(godot3):
            seen["fragment"] += 1
            assert parses(ours) <= parses(godot3), godot3
            continue
        if godot3 in DIFFERENT:
            expected, why = DIFFERENT[godot3]
            assert ours == (godot3 if expected is None else expected), f"{godot3!r} ({why})"
            assert ours != godot4
            seen["different"] += 1
        else:
            assert ours == godot4, godot3
            seen["same"] += 1
    assert sum(seen.values()) == 177
    assert seen["different"] == len(DIFFERENT)
    assert seen["same"] >= 60, seen
