"""Calls Godot 4 still compiles but runs otherwise, rewritten to keep what the Godot 3 code did: slice()'s
inclusive end, right(), angle_to_point(), float results, the parent script's lifecycle callbacks, String.erase,
translated(), deferred group calls, move_and_collide's arguments. Each script is judged in its project and
rewritten there, against the built corpus; the behaviour itself is proven by tests/test_behaviour.py."""

from __future__ import annotations

import duckdb
import pytest
from rewrite_helpers import GODOT3, GODOT4, judged, migrate

from gd_assets.core.rewrite import load_rules


@pytest.fixture(scope="module")
def rules(corpus_home):
    return load_rules(str(corpus_home / "corpora.duckdb"))


def needed_of(rules, files: dict[str, str], path: str):
    """(fragment, scope, migration needed) of each fragment of `path`."""
    return ((frag, scope, j.migration_needed) for frag, scope, j in judged(rules, files, path))


def script(body: str, project: dict[str, str] = GODOT3, extends: str = "Node2D", extra: str = "") -> dict[str, str]:
    return {**project, "a.gd": f"extends {extends}\n{extra}\n\nfunc f():\n" + body}


# -- Array.slice ---------------------------------------------------------------------------------------

def test_slice_ends_fold_one_further(rules):
    new, edits, _ = migrate(rules, script(
        "\tvar a = [0, 1, 2, 3]\n\tvar n = a.size()\n\tprint(a.slice(1, 3), a.slice(0, -1), a.slice(0, -2))\n"
        "\tprint(a.slice(0, n - 1), a.slice(0, n - 3), a.slice(0, i), a.slice(0, i + 1), a.slice(0, i if b else 2))\n"
        "\tprint(a.slice(0, n - 0))\n"),
        "a.gd")
    assert "a.slice(1, 4), a.slice(0), a.slice(0, -1)" in new
    assert "a.slice(0, n), a.slice(0, n - 2), a.slice(0, i + 1), a.slice(0, i + 2), a.slice(0, (i if b else 2) + 1)" \
        in new and "a.slice(0, n + 1)" in new
    assert {e.rule for e in edits} == {"array_slice_end"}
    assert {e.evidence["id"] for e in edits} == {"docs:3:Array.method.slice"}


def test_slice_keeps_step_and_deep_in_place(rules):
    new, _, manual = migrate(rules, script(
        "\tvar a = [0, 1, 2]\n\tprint(a.slice(0, 2, 2, true), a.slice(0, -1, 1, true), a.slice(2, 0, -1), "
        "a.slice(2, 1, -1))\n\tprint(a.slice(2, x, -1))\n\tprint(a.slice(0, 1, step))\n"), "a.gd")
    assert "a.slice(0, 3, 2, true), a.slice(0, 2147483647, 1, true), a.slice(2, -2147483647, -1), a.slice(2, 0, -1)" \
        in new
    assert "a.slice(2, x, -1)" in new and "a.slice(0, 1, step)" in new  # an end or a step unknown: left to people
    assert [m.kind for m in manual].count("array_slice") == 2


def test_a_project_method_named_slice_is_not_touched(rules):
    files = {**GODOT3, "deck.gd": "class_name Deck\nextends Reference\n\n\nfunc slice(a, b):\n\treturn [a, b]\n",
             "a.gd": "extends Node\n\n\nfunc f():\n\tvar deck = Deck.new()\n\tprint(deck.slice(1, 3))\n"
                     "\tprint(slice(1, 3))\n\tyield(get_tree(), \"idle_frame\")\n\n\nfunc slice(a, b):\n\treturn a\n"}
    new, edits, _ = migrate(rules, files, "a.gd")
    assert "deck.slice(1, 3)" in new and "print(slice(1, 3))" in new
    assert "array_slice_end" not in {e.rule for e in edits}


def test_godot4_code_is_neither_flagged_nor_rewritten(rules):
    body = ("\tvar a = [0, 1, 2]\n\tprint(a.slice(1, 3), \"abc\".right(1), Vector2.ZERO.angle_to_point(Vector2.ONE))\n"
            "\tvar s = \"abc\"\n\ts.erase(0, 1)\n\tget_tree().call_group(\"g\", \"m\")\n\tprint(Transform2D().translated("
            "Vector2.ONE), Color.RED.to_html())\n")
    files = script(body, GODOT4)
    assert not any(needed for _, _, needed in needed_of(rules, files, "a.gd"))
    files = script(body + "\tawait get_tree().process_frame\n\tprint(stepify(1, 2))\n", GODOT4)  # flagged otherwise
    new, edits, manual = migrate(rules, files, "a.gd")
    assert "a.slice(1, 3)" in new and ".right(1)" in new and "angle_to_point" in new and "\ts.erase(0, 1)" in new
    assert "call_group(\"g\"" in new and ".translated(" in new and not manual
    files = {**GODOT4, "base.gd": "extends Node\n\n\nfunc _ready():\n\tpass\n",
             "a.gd": "extends \"res://base.gd\"\n\n\nfunc _ready():\n\tprint(1)\n"}
    assert not any(needed for _, _, needed in needed_of(rules, files, "a.gd"))


def test_godot3_calls_are_judged_a_migration_need(rules):
    for call in ("a.slice(1, 3)", "s.right(2)", "v.angle_to_point(w)", "s.erase(0, 2)", "t.translated(v)",
                 "get_tree().call_group(\"g\", \"m\")", "c.to_html()", "move_and_collide(v, true)"):
        files = script(f"\tprint({call})\n", extends="KinematicBody2D")
        assert any(needed for _, _, needed in needed_of(rules, files, "a.gd")), call
    files = script("\tprint(a.erase(x), c.to_html(false), move_and_collide(v))\n", extends="KinematicBody2D")
    assert not any(needed for frag, _, needed in needed_of(rules, files, "a.gd") if frag.symbol == "f")


# -- String, Vector2, float results ------------------------------------------------------------------------

def test_right_becomes_substr(rules):
    new, edits, _ = migrate(rules, script("\tvar s = \"hello\"\n\tprint(s.right(2), \"ab\".right(s.length() - 1))\n"),
                            "a.gd")
    assert "print(s.substr(2), \"ab\".substr(s.length() - 1))" in new
    assert {e.evidence["id"] for e in edits} == {"docs:3:String.method.right"}


def test_a_project_method_named_right_is_not_touched(rules):
    files = {**GODOT3, "paddle.gd": "class_name Paddle\nextends Node\n\n\nfunc right(n):\n\treturn n\n",
             "a.gd": "extends Node\n\n\nfunc f(p: Paddle, s: String):\n\tprint(p.right(2), s.right(1), q.right(1))\n"}
    new, _, _ = migrate(rules, files, "a.gd")
    assert "p.right(2), s.substr(1), q.right(1)" in new  # `q` may be a Paddle: left


def test_angle_to_point_is_measured_from_the_point(rules):
    new, _, _ = migrate(rules, script("\tprint(a.angle_to_point(b), position.angle_to_point(b + c))\n"), "a.gd")
    assert "print((a - b).angle(), (position - (b + c)).angle())" in new


def test_float_results_keep_a_float(rules):
    new, edits, _ = migrate(rules, script(
        "\tvar n: int = 3\n\tprint(stepify(x, 2), floor(7 / 2), ceil(n), round(len(s) * 2), floor(x), floor(n / y))\n"),
        "a.gd")
    assert "print(snappedf(x, 2), floorf(7 / 2), ceilf(n), roundf(len(s) * 2), floor(x), floor(n / y))" in new
    assert {e.rule for e in edits} == {"float_result"}


def test_erase_on_a_string_is_assigned_back(rules):
    new, _, _ = migrate(rules, script("\tvar s = \"abc\"\n\ts.erase(0, 1)\n\tself.name_text.erase(1, 1)\n"
                                      "\titems.erase(x)\n\tvar d = s.erase(0, 1)\n\tget_s().erase(0, 1)\n"), "a.gd")
    assert "\ts = s.erase(0, 1)\n\tself.name_text = self.name_text.erase(1, 1)\n\titems.erase(x)\n" in new
    assert "var d = s.erase(0, 1)" in new and "\tget_s().erase(0, 1)" in new


def test_translated_moves_along_the_transforms_axes(rules):
    new, edits, _ = migrate(rules, script("\tvar t = Transform2D()\n\tprint(t.translated(v), t.rotated(1))\n"), "a.gd")
    assert "t.translated_local(v), t.rotated(1)" in new
    assert "docs:3:Transform2D.method.translated" in {e.evidence["id"] for e in edits}


# -- groups, KinematicBody, Color -------------------------------------------------------------------

def test_group_calls_are_deferred_as_in_godot3(rules):
    new, _, manual = migrate(rules, script(
        "\tget_tree().call_group(\"g\", \"m\", 1)\n\tget_tree().set_group(\"g\", \"p\", 2)\n"
        "\tget_tree().notify_group(\"g\", 3)\n\tget_tree().call_group_flags(SceneTree.GROUP_CALL_REALTIME, \"g\", \"m\")\n"
        "\tget_tree().call_group_flags(SceneTree.GROUP_CALL_REVERSE | 4, \"g\", \"m\")\n"
        "\tget_tree().call_group_flags(flags, \"g\", \"m\")\n"), "a.gd")
    assert "call_group_flags(SceneTree.GROUP_CALL_DEFERRED, \"g\", \"m\", 1)" in new
    assert "set_group_flags(SceneTree.GROUP_CALL_DEFERRED, \"g\", \"p\", 2)" in new
    assert "notify_group_flags(SceneTree.GROUP_CALL_DEFERRED, \"g\", 3)" in new
    assert "call_group_flags(SceneTree.GROUP_CALL_DEFAULT, \"g\", \"m\")" in new
    assert ("call_group_flags(SceneTree.GROUP_CALL_REVERSE | SceneTree.GROUP_CALL_DEFERRED | "
            "SceneTree.GROUP_CALL_UNIQUE, \"g\", \"m\")") in new
    assert [m.kind for m in manual] == ["group_call"]


def test_move_and_collide_drops_godot3s_inertia_arguments(rules):
    new, edits, _ = migrate(rules, script(
        "\tmove_and_collide(v, true)\n\tmove_and_collide(v, false, true, true)\n\tmove_and_collide(v, a, b, c)\n"
        "\tprint(test_move(transform, v, true), move_and_collide(v))\n", extends="KinematicBody2D"), "a.gd")
    assert "\tmove_and_collide(v)\n\tmove_and_collide(v, true)\n\tmove_and_collide(v, c)\n" in new
    assert "test_move(transform, v), move_and_collide(v)" in new
    assert {e.rule for e in edits} >= {"kinematic_arguments", "class_rename"}


def test_to_html_is_left_to_people(rules):
    _, _, manual = migrate(rules, script("\tvar c = Color.red\n\tprint(c.to_html(), c.to_html(false))\n"), "a.gd")
    assert [m.kind for m in manual] == ["color_html"]


# -- lifecycle callbacks -----------------------------------------------------------------------------

BASE = ("extends Node2D\n\n\nfunc _init():\n\tpass\n\n\nfunc _ready():\n\tpass\n\n\nfunc _process(delta):\n\tpass\n\n\n"
        "func _input(event):\n\tpass\n\n\nfunc _notification(what):\n\tpass\n")


def derived(body: str, extends: str = "\"res://base.gd\"") -> dict[str, str]:
    return {**GODOT3, "base.gd": BASE, "a.gd": f"extends {extends}\n\n\n" + body}


def test_the_parent_scripts_callback_is_called_where_godot3_called_it(rules):
    new, edits, _ = migrate(rules, derived(
        "func _init():\n\tprint(0)\n\n\nfunc _ready():\n\t# first\n\tprint(1)\n\tprint(2)\n\n\n"
        "func _process(my_delta: float) -> void:\n\tif my_delta > 1:\n\t\tprint(3)\n\n\n"
        "func _input(event): print(event)\n"), "a.gd")
    assert "func _init():\n\tsuper()\n\tprint(0)\n" in new
    assert "func _ready():\n\t# first\n\tsuper()\n\tprint(1)\n\tprint(2)\n" in new
    assert "\tif my_delta > 1:\n\t\tprint(3)\n\tsuper(my_delta)\n" in new
    assert "func _input(event): print(event); super(event)\n" in new
    assert {e.rule for e in edits} == {"parent_callback"}
    assert {e.evidence["id"] for e in edits} == {"docs:3:Object.method._init", "docs:3:Node.method._ready",
                                                 "docs:3:Node.method._process", "docs:3:Node.method._input"}


def test_a_parent_found_by_class_name_and_through_a_grandparent(rules):
    files = {**GODOT3, "base.gd": "class_name Base\n" + BASE, "mid.gd": "extends Base\n\n\nfunc other():\n\tpass\n",
             "a.gd": "extends \"res://mid.gd\"\n\n\nfunc _ready():\n\tprint(1)\n"}
    new, _, _ = migrate(rules, files, "a.gd")
    assert "func _ready():\n\tsuper()\n\tprint(1)\n" in new


def test_a_body_calling_the_parent_already_is_left(rules):
    new, edits, _ = migrate(rules, derived("func _ready():\n\t._ready()\n\tprint(1)\n"), "a.gd")
    assert new.count("super") == 1 and "\tsuper._ready()\n" in new


def test_a_return_before_the_parents_turn_is_left_to_people(rules):
    new, edits, manual = migrate(rules, derived("func _process(delta):\n\tif delta > 1:\n\t\treturn\n\tprint(1)\n"),
                                 "a.gd")
    assert "super" not in new
    assert [m.kind for m in manual] == ["parent_callback"]


def test_notification_order_is_said_not_rewritten(rules):
    new, _, manual = migrate(rules, derived("func _notification(what):\n\tprint(what)\n"), "a.gd")
    assert "super" not in new and [m.kind for m in manual] == ["notification_order"]


def test_no_parent_script_callback_no_rewrite(rules):
    files = {**GODOT3, "base.gd": "extends Node2D\n\n\nfunc helper():\n\tpass\n",
             "a.gd": "extends \"res://base.gd\"\n\n\nfunc _ready():\n\tprint(1)\n\tyield(get_tree(), \"idle_frame\")\n",
             "b.gd": "extends Node2D\n\n\nfunc _ready():\n\tprint(1)\n\tyield(get_tree(), \"idle_frame\")\n"}
    for path in ("a.gd", "b.gd"):
        new, edits, _ = migrate(rules, files, path)
        assert "super" not in new and "parent_callback" not in {e.rule for e in edits}


# -- the global random generator: Godot 4 randomizes it at start ----------------------------------------

SEED = "seed(-6398989897141750821)"
NOTE = "# Godot 3 started the global random generator from one fixed seed; Godot 4 randomizes it at start"
ROLLS = "extends Node2D\n\n\nfunc roll():\n\treturn randi() % 6\n"


def test_the_first_autoload_seeds_an_unseeded_project(rules):
    files = {"project.godot": 'config_version=4\n\n[autoload]\n\nGame="*res://game.gd"\nSave="*res://save.gd"\n',
             "game.gd": "extends Node\n\nvar score = 0\n", "save.gd": "extends Node\n\n\nfunc _init():\n\tpass\n",
             "dice.gd": ROLLS}
    new, edits, _ = migrate(rules, files, "game.gd")
    assert new == f"extends Node\n\n\n{NOTE}\nfunc _init() -> void: {SEED}\n\nvar score = 0\n"
    assert [(e.rule, e.evidence["id"]) for e in edits] == [("random_seed", "docs:4:@GlobalScope.method.randomize")]
    for path in ("save.gd", "dice.gd"):  # only the script that runs first
        assert "seed(" not in migrate(rules, files, path)[0]


def test_an_init_gets_the_seed_first(rules):
    files = {"project.godot": 'config_version=4\n\n[application]\n\nrun/main_scene="res://main.tscn"\n',
             "main.tscn": '[gd_scene load_steps=2 format=2]\n\n[ext_resource path="res://main.gd" type="Script" id=1]'
                          '\n\n[node name="Main" type="Node2D"]\nscript = ExtResource( 1 )\n',
             "main.gd": "extends Node2D\n\n\nfunc _init():\n\tprint(1)\n", "dice.gd": ROLLS}
    new, _, _ = migrate(rules, files, "main.gd")
    assert f"func _init():\n\t{NOTE}\n\t{SEED}\n\tprint(1)\n" in new


def test_the_seed_goes_before_the_first_function_below_the_header(rules):
    """`class_name` after `extends` (or the other way round): Godot 4 refuses a function above either."""
    files = {"project.godot": 'config_version=4\n\n[autoload]\n\nGame="*res://game.gd"\n', "dice.gd": ROLLS}
    for header in ("extends Node\nclass_name Game, \"res://icon.png\"\n", "class_name Game\nextends Node\n"):
        files["game.gd"] = header + "\nvar score = 0\n\n\nfunc _ready():\n\tpass\n\n\nfunc add():\n\tscore += 1\n"
        new, edits, _ = migrate(rules, files, "game.gd")
        assert f"var score = 0\n\n\n{NOTE}\nfunc _init() -> void: {SEED}\n\n\nfunc _ready():" in new
        assert new.count("seed(") == 1
    files["game.gd"] = "class_name Game\nextends Node\n\nvar score = 0\n"
    new, _, _ = migrate(rules, files, "game.gd")
    assert new.startswith(f"class_name Game\nextends Node\n\n\n{NOTE}\nfunc _init() -> void: {SEED}\n")


def test_a_project_that_seeds_or_draws_nothing_is_left(rules):
    autoload = {"project.godot": 'config_version=4\n\n[autoload]\n\nGame="*res://game.gd"\n',
                "game.gd": "extends Node\n\nvar score = 0\n"}
    seeded = {**autoload, "dice.gd": ROLLS, "start.gd": "extends Node\n\n\nfunc _ready():\n\trandomize()\n"}
    rng = {**autoload, "dice.gd": "extends Node\n\nvar rng = RandomNumberGenerator.new()\n\n\nfunc roll():\n"
                                  "\treturn rng.randi() % 6\n"}
    godot4 = {**autoload, "project.godot": autoload["project.godot"].replace("=4", "=5"), "dice.gd": ROLLS}
    for files in (seeded, rng, godot4):
        new, edits, _ = migrate(rules, files, "game.gd")
        assert "seed(" not in new and "random_seed" not in {e.rule for e in edits}


# -- the rows cited --------------------------------------------------------------------------------------

def test_every_row_the_rules_cite_is_in_the_corpus(rules, corpus_home):
    files = {**derived("func _ready():\n\tprint(1)\n"), "b.gd": (
        "extends KinematicBody2D\n\n\nfunc f():\n\tprint(a.slice(1, 3), s.right(1), a.angle_to_point(b), "
        "stepify(1, 2), floor(3))\n\ts.erase(0, 1)\n\tprint(t.translated(v))\n\tget_tree().call_group(\"g\", \"m\")\n"
        "\tmove_and_collide(v, true)\n\tprint(Color.red.to_html())\n")}
    cited = set()
    for path in ("a.gd", "b.gd"):
        _, edits, manual = migrate(rules, files, path)
        cited |= {e.evidence["id"] for e in edits if e.evidence} | {c["id"] for m in manual for c in m.evidence}
    assert len(cited) >= 10
    with duckdb.connect(str(corpus_home / "corpora.duckdb"), read_only=True) as con:
        found = {r[0] for r in con.execute(f"SELECT id FROM docs_chunks WHERE id IN ({', '.join('?' * len(cited))})",
                                           sorted(cited)).fetchall()}
        found |= {r[0] for r in con.execute(f"SELECT id FROM api_mapping WHERE id IN ({', '.join('?' * len(cited))})",
                                            sorted(cited)).fetchall()}
    assert cited <= found, sorted(cited - found)
