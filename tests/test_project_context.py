"""Each fragment read in its project: the project's own names are never the engine's, and every call
has a receiver (shown by `show --json` under `cues[].receiver`). Fixture projects written here,
analysed through Dagster with the real corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from gd_assets import orchestrate, store, views
from gd_assets.core.corpus.surface import load_surface
from gd_assets.core.cues import extract_cues
from gd_assets.core.project_context import ProjectContext, build_context
from gd_assets.core.receivers import Scope

pytestmark = pytest.mark.slow

GODOT4_PROJECT = {
    "project.godot": 'config_version=5\n\n[application]\nconfig/name="Modern"\n\n[autoload]\n'
                     'Navigation="*res://autoload/navigation.gd"\n',
    "autoload/navigation.gd": "extends Node\n\nfunc get_simple_path(from, to):\n\treturn [from, to]\n",
    "logger.gd": "class_name Logger\nextends RefCounted\n\nfunc debug(message: String) -> void:\n\tprint(message)\n",
    "framework.gd": "class_name Framework\nextends RefCounted\n\nfunc get_object(name):\n\treturn self\n\n"
                    "func set_target(target):\n\treturn self\n\nfunc change_scene(path):\n\tpass\n\n"
                    "func start(target, method):\n\tpass\n\nfunc empty():\n\treturn true\n",
    "main.gd": "extends Node\n\n"
               "func _ready():\n"
               "\tvar framework = Framework.new()\n"
               "\tframework.get_object(\"player\")\\\n\t\t.set_target(self)\n"
               "\tframework.change_scene(\"res://level.tscn\")\n"
               "\tframework.start(self, \"_on_started\")\n"
               "\tLogger.new().debug(\"ready\")\n"
               "\tNavigation.get_simple_path(Vector2.ZERO, Vector2.ONE)\n"
               "\tif framework.empty():\n\t\tpass\n\n"
               "func _on_quit():\n"
               "\tget_tree().change_scene(\"res://menu.tscn\")\n\n"
               "func _wait():\n"
               "\tawait get_tree().process_frame\n",
    # never re-saved since Godot 3: Godot 4 loads it as it is
    "level.tscn": '[gd_scene load_steps=2 format=2]\n\n'
                  '[ext_resource path="res://main.gd" type="Script" id=1]\n\n'
                  '[node name="Level" type="Node2D"]\nscript = ExtResource( 1 )\n',
}

GODOT3_PROJECT = {
    "project.godot": 'config_version=4\n\n[application]\nconfig/name="Classic"\n',
    "player.gd": "extends KinematicBody2D\n\n"
                 "func _physics_process(delta):\n"
                 "\t$AnimatedSprite.play(\"run\")\n"
                 "\tmove_and_collide(Vector2.ZERO)\n",
    "player.tscn": '[gd_scene load_steps=2 format=2]\n\n'
                   '[ext_resource path="res://player.gd" type="Script" id=1]\n\n'
                   '[node name="Player" type="KinematicBody2D"]\nscript = ExtResource( 1 )\n\n'
                   '[node name="AnimatedSprite" type="AnimatedSprite" parent="."]\n',
}


def write_project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def context_of(files: dict[str, str]) -> ProjectContext:
    kinds = {".gd": "gdscript", ".tscn": "scene", ".godot": "project"}
    return build_context([{"path": p, "kind": kinds[Path(p).suffix], "text": t} for p, t in files.items()])


def test_context_survives_its_rows():
    ctx = context_of(GODOT3_PROJECT)
    again = ProjectContext.from_rows(ctx.rows())
    assert again.version() == ctx.version()
    assert again.scripts["player.gd"].nodes["AnimatedSprite"] == ("AnimatedSprite", None)
    assert again.engine_version("player.gd") == "3"


def test_what_the_rewrite_reads_of_a_script_survives_the_rows_too():
    """A dialog's own signals, the Godot 3 classes a script gets as its own, its indentation and the scenes it
    preloads in a cycle are rows too: a resumed rewrite reads them from the store."""
    files = {"project.godot": 'config_version=4\n\n[autoload]\n\nTools="*res://tools.gd"\n',
             "dialog.gd": ('extends AcceptDialog\n\nfunc _ready():\n    connect("popup_hide", self, "_x")\n'
                           '    var l = ResourceLoader.load_interactive("res://a.tscn")\n'),
             "tools.gd": 'extends Node\n\nvar pen = preload("res://pen.tscn")\n',
             "pen.gd": "extends Node\n\nfunc _ready():\n\tprint(Tools.pen)\n",
             "pen.tscn": ('[gd_scene load_steps=2 format=2]\n\n[ext_resource path="res://pen.gd" type="Script" id=1]'
                          '\n\n[node name="Pen" type="Node"]\nscript = ExtResource( 1 )\n')}
    ctx = context_of(files)
    again = ProjectContext.from_rows(ctx.rows())
    dialog = again.scripts["dialog.gd"]
    assert dialog.self_signals == {"popup_hide"} and dialog.shims == {"ResourceInteractiveLoader"}
    assert dialog.indent == "    " and again.scripts["pen.gd"].indent == "\t"
    assert again.cyclic_preloads == {("tools.gd", "pen.tscn")} and again.version() == ctx.version()


def test_the_surface_is_read_once_per_state_of_the_corpus_file(corpus_home, tmp_path):
    """The evidence step, the judge and the rewrite share one read of the corpus; a rebuilt corpus is read anew."""
    import shutil

    import duckdb

    db = tmp_path / "corpora.duckdb"
    shutil.copy(corpus_home / "corpora.duckdb", db)
    first = load_surface(str(db))
    assert load_surface(str(db)) is first
    assert first.class_renames["KinematicBody2D"] == "CharacterBody2D"
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE api_mapping SET new_name = 'MovedBody2D' WHERE source = 'rename_map' "
                    "AND category = 'class' AND old_name = 'KinematicBody2D'")
    again = load_surface(str(db))
    assert again is not first and again.class_renames["KinematicBody2D"] == "MovedBody2D"


def test_receivers_resolve_project_and_engine_names(corpus_home):
    engine = load_surface(str(corpus_home / "corpora.duckdb"))
    ctx = context_of(GODOT4_PROJECT)
    assert ctx.autoload("", "Navigation") == "autoload/navigation.gd"
    body = GODOT4_PROJECT["main.gd"].split("\n\n")[1]  # _ready
    cues = extract_cues("function", body, file_kind="gdscript", scope=Scope.of(ctx, "main.gd", "_ready", engine))
    receivers = {(c.cue, c.source): c.receiver for c in cues}
    assert receivers[(".get_object", "call")] == "project:framework.gd"
    assert receivers[(".change_scene", "call")] == "project:framework.gd"
    assert receivers[(".debug", "call")] == "project:logger.gd"
    assert receivers[("Navigation", "identifier")] == "project:autoload/navigation.gd"
    # `\`-continued chain: a method of the chain, never a Godot 3 parent call `.set_target(`
    assert (".set_target(", "syntax") not in receivers
    quit_ = extract_cues("function", "func _on_quit():\n\tget_tree().change_scene(\"res://menu.tscn\")\n",
                         file_kind="gdscript", scope=Scope.of(ctx, "main.gd", "_on_quit", engine))
    assert {c.receiver for c in quit_ if c.cue == ".change_scene"} == {"SceneTree"}
    assert {c.receiver for c in quit_ if c.cue == "get_tree"} == {"Node"}


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("DAGSTER_HOME", None)
    return subprocess.run([sys.executable, "-m", "gd_assets.cli", *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=900, check=False)


def show(project: str, key: str) -> dict:
    result = run_cli("show", project, key, "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def test_project_names_are_never_engine_evidence(analysis_home, tmp_path):
    project = orchestrate.analyze(str(write_project(tmp_path / "modern", GODOT4_PROJECT)), "modern")
    judged = {r["key"]: r for r in store.query("SELECT * FROM judgements WHERE project = ?", [project]).to_dicts()}

    ready = judged["modern/main.gd::_ready"]
    assert (ready["signal"], ready["migration_needed"]) != ("godot3", True), ready["rationale"]
    assert ready["signal"] != "godot4", ready["rationale"]  # get_object() is the framework's, not Godot 4's
    for name in ("get_object", "change_scene", "debug", "Logger", "empty", "Navigation", "start"):
        assert name not in ready["rationale"], ready["rationale"]

    quit_ = judged["modern/main.gd::_on_quit"]
    assert (quit_["signal"], quit_["migration_needed"]) == ("godot3", True)
    assert "SceneTree.change_scene" in quit_["rationale"]

    scene = [r for k, r in judged.items() if k.startswith("modern/level.tscn")]
    assert scene and not any(r["migration_needed"] or r["signal"] == "godot3" for r in scene)
    assert any("loads it as it is" in r["rationale"] for r in scene)
    assert store.query("SELECT verdict FROM verdicts WHERE project = ?", [project])["verdict"][0] == "godot4"

    doc = show(project, "modern/main.gd::_ready")
    receivers = {(c["cue"], c["from"]): c["receiver"] for c in doc["cues"]}
    assert receivers[(".get_object", "call")] == "project:framework.gd"
    assert receivers[("start(self, \"_on_started\")", "call_shape")] == "project:framework.gd"
    assert receivers[("Logger", "identifier")] == "project:logger.gd"
    assert receivers[("Navigation", "identifier")] == "project:autoload/navigation.gd"

    counts = json.loads(store.project_context_row(project)["counts"])
    assert counts["autoload"] == 1 and counts["class_name"] == 2
    assert views.status_document(project)["symbols"] == counts


def test_scene_types_reach_the_script(analysis_home, tmp_path):
    project = orchestrate.analyze(str(write_project(tmp_path / "classic", GODOT3_PROJECT)), "classic")
    doc = show(project, "classic/player.gd::_physics_process")
    receivers = {(c["cue"], c["from"]): c["receiver"] for c in doc["cues"]}
    assert receivers[("$AnimatedSprite", "node_path")] == "AnimatedSprite"
    assert receivers[(".play", "call")] == "AnimatedSprite"
    assert receivers[("move_and_collide", "call")] == "KinematicBody2D"
    judgement = doc["judgement"]
    assert (judgement["signal"], judgement["migration_needed"]) == ("godot3", True)
    assert "AnimatedSprite" in judgement["rationale"]
    # move_and_collide lives on in Godot 4's PhysicsBody2D: only the class was renamed
    assert "move_and_collide" not in judgement["rationale"]


def test_a_changed_scene_rereads_the_scripts_without_searching_again(analysis_home, tmp_path, monkeypatch):
    from gd_assets.core.retrieval import CorpusIndex
    from gd_assets.freshness import current_evidence_inputs, stale_evidence

    searched: list[int] = []
    search = CorpusIndex.search

    def counted(self, queries, params):
        searched.append(len(queries))
        return search(self, queries, params)

    monkeypatch.setattr(CorpusIndex, "search", counted)
    root = write_project(tmp_path / "classic", GODOT3_PROJECT)
    project = orchestrate.analyze(str(root), "classic")
    key = "classic/player.gd::_physics_process"
    before = show(project, key)
    assert stale_evidence(project, current_evidence_inputs()) == [] and sum(searched) > 0

    (root / "player.tscn").write_text(GODOT3_PROJECT["player.tscn"].replace('type="AnimatedSprite"', 'type="Sprite"'))
    orchestrate.ingest_and_slice(str(root), project)
    stale = stale_evidence(project, current_evidence_inputs())
    assert key in stale  # the scene changed what `$AnimatedSprite` is
    searched.clear()
    orchestrate.analyze(str(root), project)
    after = show(project, key)
    assert {c["receiver"] for c in after["cues"] if c["cue"] == "$AnimatedSprite"} == {"Sprite"}
    # the script's text did not change, so neither did its query: its candidates are kept, not searched
    # again; the one scene block whose text changed is the only fragment searched
    assert sum(searched) == 1
    assert [c["id"] for c in after["candidates"]] == [c["id"] for c in before["candidates"]]
    assert stale_evidence(project, current_evidence_inputs()) == []


CLASSIC_UI = {
    "project.godot": "config_version=4\n",
    "base.gd": "extends Control\n\nenum ShortCut { NONE, RUN }\nvar speed: float = 2.0\n\n"
               "func empty():\n\treturn true\n",
    "ui.gd": 'extends "res://base.gd"\n\n'
             "onready var check = $Panel/Check\n"
             "export(PackedScene) var bullet\n"
             "var tool := VoxelTool.new()\n"
             "const Logger = preload(\"res://base.gd\")\n\n"
             "class Inner extends Sprite:\n\tfunc f():\n\t\tpass\n\n"
             "func _init(a).(a):\n\tpass\n",
    "ui.tscn": '[gd_scene load_steps=2 format=2]\n\n[ext_resource path="res://ui.gd" type="Script" id=1]\n\n'
               '[node name="UI" type="Control"]\nscript = ExtResource( 1 )\n\n'
               '[node name="Panel" type="Panel" parent="."]\n\n'
               '[node name="Check" type="CheckBox" parent="Panel"]\nunique_name_in_owner = true\n',
}


@pytest.mark.parametrize("body, cue, source, receiver", [
    ("\trect_position = Vector2()\n", "rect_position", "name", "Control"),           # implicit self, via base.gd
    ("\tif empty():\n\t\tpass\n", "empty", "call", "project:base.gd"),               # inherited project member
    ("\tcheck.pressed = true\n", ".pressed", "property", "CheckBox"),                # onready var = $Path
    ("\t%Check.pressed = true\n", ".pressed", "property", "CheckBox"),                # %Unique
    ("\tbullet.instance()\n", ".instance", "call", "PackedScene"),                   # export(PackedScene) hint
    ("\tvar img: Image = null\n\timg.lock()\n", ".lock", "call", "Image"),           # typed local
    ("\tvar n = get_node(\"Panel\") as Panel\n\tn.rect_size = Vector2()\n", ".rect_size", "property", "Panel"),
    ("\ttool.do_sphere(Vector3(), 1)\n", ".do_sphere", "call", "other:VoxelTool"),   # a module's class
    ("\tvar speed = 3\n\tspeed += 1\n", "speed", "name", None),                     # a local is no member
    ("\tget_tree().change_scene(\"x\")\n", ".change_scene", "call", "SceneTree"),   # engine return type
    ("\tunknown.scancode = 1\n", ".scancode", "property", "?"),
    ("\tLogger.new()\n", "Logger", "identifier", "project:ui.gd"),                # the script's own constant
    ("\tget_parent().rect_size = Vector2()\n", ".rect_size", "property", "Node"),  # a scene root's parent: unknown
    ("\tvar ui = preload(\"res://ui.tscn\").instance()\n\tui.rect_scale = Vector2()\n", ".rect_scale", "property",
     "Control"),                                                                    # an instanced scene's root
    ("\tvar k: ShortCut = ShortCut.NONE\n", "ShortCut", "type", "project:base.gd"),  # an inherited enum
])
def test_receiver_of_each_name(corpus_home, body, cue, source, receiver):
    engine = load_surface(str(corpus_home / "corpora.duckdb"))
    scope = Scope.of(context_of(CLASSIC_UI), "ui.gd", "g", engine)
    found = {(c.cue, c.source): c.receiver for c in extract_cues("function", "func g():\n" + body,
                                                                   file_kind="gdscript", scope=scope)}
    assert found.get((cue, source)) == receiver, found


def test_godot3_only_syntax_in_context():
    ctx = context_of(CLASSIC_UI)
    assert ctx.scripts["ui.gd::Inner"].extends == "Sprite"
    assert ctx.scripts["ui.gd"].members["bullet"] == ("var", "PackedScene")
    init = extract_cues("function", "func _init(a).(a):\n\tpass\n", file_kind="gdscript",
                        scope=Scope.of(ctx, "ui.gd", "_init"))
    assert ("_init().(…)", "syntax") in {(c.cue, c.source) for c in init}
    path = extract_cues("function", 'func f():\n\tget_node(@"Panel")\n', file_kind="gdscript")
    assert ('@""', "syntax") in {(c.cue, c.source) for c in path}


def test_an_ambiguous_rename_is_decided_on_its_receiver(corpus_home):
    from gd_assets.core.codec import judge_input
    from gd_assets.core.judges.evidence import EvidenceJudge

    judge = EvidenceJudge(corpus_db=corpus_home / "corpora.duckdb")

    def judged(files: dict[str, str], body: str):
        text = "func g():\n" + body
        cues = extract_cues("function", text, file_kind="gdscript",
                            scope=Scope.of(context_of(files), "ui.gd", "g", judge.surface))
        item = judge_input({"key": "k", "path": "ui.gd", "start_line": 1, "end_line": 4, "kind": "function",
                            "file_kind": "gdscript", "text": text}, cues, [], "")
        return judge.judge([item])[0]

    # `pause_mode`: a rename the converter leaves alone; on a Node (self, a Control) it is Godot 3's
    engine = judged(CLASSIC_UI, "\tpause_mode = 2\n")
    assert engine.migration_needed and "Node.pause_mode" in engine.rationale and "process_mode" in engine.rationale
    own = dict(CLASSIC_UI, **{"base.gd": CLASSIC_UI["base.gd"] + "\nvar pause_mode = 0\n"})
    assert not judged(own, "\tpause_mode = 2\n").migration_needed  # the project's own variable
    other = judged(own, "\tvar menu: Control = $Menu\n\tmenu.pause_mode = 2\n")
    assert other.migration_needed and "Node.pause_mode" in other.rationale  # a Control is still a Node


def test_values_type_what_they_hold(corpus_home):
    engine = load_surface(str(corpus_home / "corpora.duckdb"))
    files = dict(CLASSIC_UI, **{"ui.gd": CLASSIC_UI["ui.gd"] + "onready var panel = $Panel\n"
                                                                "onready var box = panel.get_node(@\"Check\")\n"})
    scope = Scope.of(context_of(files), "ui.gd", "g", engine)
    text = ("func g():\n\tbox.pressed = true\n"
            "\tvar col = get_tree().root\n\tcol.size = Vector2()\n")
    found = {(c.cue, c.source): c.receiver for c in extract_cues("function", text, file_kind="gdscript", scope=scope)}
    assert found[(".pressed", "property")] == "CheckBox"   # a node below another member's node
    assert found[(".size", "property")] == "Viewport"      # a local typed by the chain it is read from


def test_paths_up_from_a_scripted_node():
    files = dict(CLASSIC_UI, **{
        "check.gd": "extends CheckBox\n",
        "ui.tscn": CLASSIC_UI["ui.tscn"].replace('type="CheckBox" parent="Panel"]',
                                                 'type="CheckBox" parent="Panel"]\nscript = ExtResource( 2 )')
                   .replace('[ext_resource path="res://ui.gd" type="Script" id=1]',
                            '[ext_resource path="res://ui.gd" type="Script" id=1]\n'
                            '[ext_resource path="res://check.gd" type="Script" id=2]')
                   + '\n[node name="Label" type="Label" parent="Panel"]\n'})
    nodes = context_of(files).scripts["check.gd"].nodes
    assert nodes[".."] == ("Panel", None) and nodes["../Label"] == ("Label", None)
    assert nodes["."] == ("CheckBox", "check.gd")


def test_a_setter_taking_more_than_one_parameter_is_read_with_whether_it_stores_the_property():
    """Godot 4 refuses such a setter: the rewrite needs to know it (and whether the value then needs a backing
    variable) while rewriting the declaration and the functions, each a fragment of its own."""
    script = ("extends Node\n\nvar a = 1 setget set_a\nvar b = 1 setget set_b\nvar c = 1 setget set_c\n"
              "var d = 1 setget set_d, get_d\nvar _b = 0\n\n"
              "func set_a(v, notify = true):\n\ta.x = v\n\n"
              "func set_b(v, notify = true):\n\t_b = v\n\tvar k = other.b\n\n"
              "func set_c(v):\n\tc = v\n\n"
              "func set_d(v, w := 2):\n\td = v\n\nfunc get_d():\n\treturn d\n")
    ctx = context_of({"project.godot": "config_version=4\n", "s.gd": script})
    assert ctx.scripts["s.gd"].wide_setters == {"a": ("set_a", "_a"), "b": ("set_b", "")}  # d's getter reads d
    again = ProjectContext.from_rows(ctx.rows())
    assert again.scripts["s.gd"].wide_setters == ctx.scripts["s.gd"].wide_setters and again.version() == ctx.version()
