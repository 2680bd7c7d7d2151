"""`verify --run`: the game booted headless in Godot 4 beside the original in Godot 3.6, in a sandbox, and
what the two runs say (the engines' output read into errors, prints and trees; the comparison)."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import threading
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO
from test_godot4_migration import run_cli

from gd_assets import home, orchestrate
from gd_assets.core import game_run
from gd_assets.core.game_run import GameRun, Phase, RunError

RUN_GAME = FIXTURES / "run-game"

GODOT4_OUTPUT = """\
Godot Engine v4.6.3.stable.debian4.6.3+ds-3 - https://godotengine.org

@@gd-run BEGIN\tmain
SCRIPT ERROR: Invalid call. Nonexistent function 'interpolate_property' in base 'Node'.
          at: _ready (res://Ship.gd:9)
          GDScript backtrace (most recent call first):
              [0] _ready (res://Ship.gd:9)
ERROR: score: no save file yet
   at: push_error (core/variant/variant_utility.cpp:1024)
   GDScript backtrace (most recent call first):
       [0] _ready (res://Score.gd:8)
ERROR: Condition "!is_inside_tree()" is true.
   at: get_global_transform (scene/main/canvas_item.cpp:84)
WARNING: Node Fade of type Tween cannot be created. A placeholder will be created instead.
     at: instantiate (scene/resources/packed_scene.cpp:254)
ship at (40.0, 100.0)
@@gd-run TREE\t600\t3
@@gd-run NODE\tScore\tNode\tres://Score.gd\t\t
@@gd-run NODE\tMain\tNode2D\tres://Main.gd\t1\t0,0
@@gd-run NODE\tMain/@Sprite2D@12\tSprite2D\t\t0\t10,20
@@gd-run DONE\t600
"""

GODOT3_SCENES = """\
Godot Engine v3.6.2.stable.debian3.6.2+ds-1+b1 - https://godotengine.org
@@gd-run BEGIN\tscene\tres://Ship.tscn
ERROR: score: no save file yet
   at: call (modules/gdscript/gdscript_functions.cpp:1327)
ship at (40, 100)
@@gd-run END\tscene\tres://Ship.tscn
@@gd-run BEGIN\tscene\tres://Crash.tscn
handle_crash: Program crashed with signal 11
"""


def test_the_engines_output_is_read_into_errors_prints_and_the_tree():
    phase = game_run.parse_run(GODOT4_OUTPUT)
    assert phase.ended == "done" and phase.frames == 600 and phase.tree_frame == 600
    assert [(e.kind, e.path, e.line) for e in phase.errors] == [("script", "Ship.gd", 9), ("pushed", "Score.gd", 8)]
    assert phase.engine_errors == ['Condition "!is_inside_tree()" is true.']   # names nothing of the project
    assert phase.printed == ["ship at (40.0, 100.0)"]                           # warnings are not prints
    # an autoload (no visibility, no position) keeps its empty fields
    assert phase.tree[0] == ("Score", "Node", "Score.gd", "", "")

    scenes = game_run.parse_run(GODOT3_SCENES)
    assert scenes.scenes == {"Ship.tscn": "done", "Crash.tscn": "crash"} and scenes.ended == "crash"
    [pushed] = scenes.errors   # Godot 3 names no script line for push_error
    assert (pushed.kind, pushed.path, pushed.scene) == ("pushed", "", "Ship.tscn")
    assert scenes.scene_prints == {"Ship.tscn": ["ship at (40, 100)"]}


def test_a_main_scene_that_does_not_load_is_said_so():
    text = ("@@gd-run BEGIN\tmain\nERROR: Failed loading scene: res://Main.tscn\n   at: start (main/main.cpp:2205)\n"
            "@@gd-run QUIT\t0\n")
    assert game_run.parse_run(text).ended == "load failed"


def _run(phase: Phase, engine: str) -> GameRun:
    return GameRun(engine, "", 600, 60, 1, "Main.tscn", phase, Phase("done"))


def test_the_copy_is_compared_with_the_original_in_godot_4s_names():
    original = _run(Phase("done", 600, [("Main", "Node2D", "Main.gd", "1", "0,0"),
                                        ("Main/Ship", "Sprite", "Ship.gd", "1", "278,100"),
                                        ("Main/Ship/@Sprite@7", "Sprite", "", "1", "0,0"),
                                        ("Main/Ship/Fade", "Tween", "", "", ""),  # no node in Godot 4
                                        ("Main/List", "ItemList", "", "1", "0,0"),
                                        ("Main/List/_v_scroll", "VScrollBar", "", "1", "0,0"),  # Godot 3's own child
                                        ("Main/Board", "TileMap", "Board.gd", "1", "0,0")], 600,
                               printed=["ship at (40, 100)", "score 10"],
                               errors=[RunError("pushed", "score: no save file yet")]), "3.6")
    copy = _run(Phase("done", 600, [("Main", "Node2D", "Main.gd", "1", "0,0"),
                                    ("Main/Ship", "Sprite2D", "Ship.gd", "1", "98,100"),
                                    ("Main/Ship/@Sprite2D@31", "Sprite2D", "", "1", "0,0"),
                                    ("Main/List", "ItemList", "", "0", "0,0"),
                                    ("Main/Board", "TileMap", "", "1", "0,0")], 600,
                           printed=["ship at (40.0, 100.0)"]), "4.6")
    errors = [{"kind": "pushed", "message": "score: no save file yet", "path": "Score.gd", "line": 8},
              {"kind": "script", "message": "Invalid call.", "path": "Ship.gd", "line": 9, "original_line": 9}]
    compared = game_run.compare(original, copy, errors, lambda c: {"Sprite": "Sprite2D"}.get(c, c))
    assert (compared["nodes_original"], compared["nodes_matched"]) == (5, 4)
    assert compared["nodes_other"] == [{"node": "Main/Board", "original": "TileMap Board.gd", "copy": "TileMap"}]
    assert compared["moved"] == [{"node": "Main/Ship", "original": "278,100", "copy": "98,100"}]
    assert compared["visibility_differs"] == [{"node": "Main/List", "original": True, "copy": False}]
    assert compared["prints_only_original"] == ["score 10"] and compared["prints_differ"] == 1
    # the error the original printed too (without a line, as Godot 3 does) is the game's own
    assert [e["path"] for e in compared["errors_own"]] == ["Score.gd"]
    assert [e["path"] for e in compared["errors_new"]] == ["Ship.gd"]


LISTENING = """\
extends Node

func _ready() -> void:
\tvar peer := StreamPeerTCP.new()
\tvar status := peer.connect_to_host("127.0.0.1", {port})
\tfor i in 20:
\t\tpeer.poll()
\t\tOS.delay_msec(20)
\tprint("connect: ", status, " status: ", peer.get_status())
\tvar outside := FileAccess.open("{outside}", FileAccess.WRITE)
\tprint("outside: ", "written" if outside != null else "refused")
\tvar inside := FileAccess.open("res://inside.txt", FileAccess.WRITE)
\tprint("inside: ", "written" if inside != null else "refused")
"""


@pytest.mark.slow
def test_a_game_gets_no_network_and_cannot_write_outside_its_copy(godot4, sandbox, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    accepted: list = []

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(listener.accept())
            except TimeoutError:
                continue

    stop = threading.Event()
    thread = threading.Thread(target=accept)
    thread.start()
    # outside the copy, and outside /tmp (the sandbox's /tmp is a private tmpfs: a write there is lost anyway)
    outside_folder = Path(tempfile.mkdtemp(prefix="gd-run-outside-", dir=Path.home()))
    outside = outside_folder / "outside.txt"
    game = tmp_path / "game"
    game.mkdir()
    (game / "project.godot").write_text('config_version=5\n\n[application]\n\nrun/main_scene="res://main.tscn"\n')
    (game / "main.gd").write_text(LISTENING.format(port=listener.getsockname()[1], outside=outside))
    (game / "main.tscn").write_text('[gd_scene load_steps=2 format=3]\n\n[ext_resource type="Script" '
                                    'path="res://main.gd" id="1"]\n\n[node name="Main" type="Node"]\n'
                                    'script = ExtResource("1")\n')
    try:
        godot4.run(["--path", str(game), "--import"], tmp_path / "home", 120, sandbox, [game])
        run = game_run.run_game(godot4, game, tmp_path, sandbox, [], game_run.RunSettings(frames=5))
    finally:
        stop.set()
        thread.join()
        listener.close()
        found = outside.exists()
        shutil.rmtree(outside_folder)
    printed = run.main.printed
    assert run.main.ended == "done" and any(line.startswith("connect: ") for line in printed), printed
    assert accepted == [] and not found
    assert "status: 2" not in " ".join(printed)                               # never STATUS_CONNECTED
    assert "outside: refused" in printed and "inside: written" in printed   # its own copy stays writable
    assert (game / "inside.txt").exists()
    assert "sandboxed with" in run.sandbox


@pytest.mark.slow
def test_verify_run_shows_where_the_copy_runs_differently_from_the_original(analysis_home, godot4, godot3, sandbox,
                                                                            tmp_path):
    game = Path(shutil.copytree(RUN_GAME, tmp_path / "run-game"))
    name, _facts = orchestrate.migrate(str(game))
    result = run_cli("verify", name, "--run", "--frames", "120", "--scene-frames", "10", "--json",
                     GODOT4=godot4.command[0], GODOT3=godot3.command[0])
    assert result.returncode == 0, result.stderr[-3000:]
    doc = json.loads(result.stdout)
    run, f = doc["run"], doc["figures"]["run"]
    assert (f["main_ended"], f["original_ended"], f["crashed_or_hung"]) == ("done", "done", [])
    assert f["scenes_run"] == 2 and f["nodes_original"] == 5   # Score, Main, Board, Ship, Label (a Tween is no node in 4)
    # the push_error the original printed too is the game's own, traced to its file and line
    own = [e for e in run["errors"] if e.get("own")]
    assert [(e["path"], e["line"], e["message"]) for e in own][:1] == [("Score.gd", 8, "score: no save file yet")]
    assert f["runtime_errors_own"] >= 1 and f["runtime_errors"] == f["runtime_errors_new"] + f["runtime_errors_own"]
    assert run["original"]["main"]["printed"][:2] == ["score ready", "board cells 0"]
    report = (home.reports_dir() / f"{name}.verify.md").read_text()
    assert "game run: Godot 4" in report and "the original's nodes kept" in report and "sandboxed with" in report


@pytest.mark.slow
def test_the_bundled_example_runs_and_says_its_main_scene_does_not_load(analysis_home, godot4, godot3, sandbox,
                                                                        tmp_path):
    """The example lacks its Bullet scene: Godot 3.6 cannot load its main scene, Godot 4 loads it without the
    bullet, and the run says so."""
    game = Path(shutil.copytree(REPO / "examples" / "dodge-godot3", tmp_path / "dodge-godot3"))
    name, _facts = orchestrate.migrate(str(game))
    doc = orchestrate.verify(name, godot4.command[0], run=True, godot3=godot3.command[0], frames=30, scene_frames=5)
    f = doc["figures"]["run"]
    assert (f["main_ended"], f["original_ended"]) == ("done", "load failed")
    assert f["crashed_or_hung"] == [] and f["original_crashed_or_hung"] == []


FREED_CAMERAS = """extends Node

func _ready():
	for i in 64:
		add_child(Camera2D.new())
"""

NEW_CAMERA = """extends Node2D

func _ready():
	for i in 8:
		var camera = Camera2D.new()
		add_child(camera)
		camera.make_current()
		print("current ", camera.is_current())
"""


def _scene4(script: str) -> str:
    return (f'[gd_scene load_steps=2 format=3]\n\n[ext_resource type="Script" path="res://{script}" id="1"]\n\n'
            f'[node name="Root" type="Node2D"]\nscript = ExtResource("1")\n')


@pytest.mark.slow
def test_a_scene_run_after_another_starts_once_the_engine_has_finished_with_the_freed_one(godot4, sandbox, tmp_path):
    """Godot 4 skips, in a group call, a node made at the address of one freed while it was still processing
    (Camera2D.make_current then does nothing): the scenes phase starts each scene as a game's own scene change
    does, after the frame's processing, so what a scene prints does not hang on where the previous one lay."""
    game = tmp_path / "game"
    game.mkdir()
    (game / "project.godot").write_text('config_version=5\n\n[application]\n\nconfig/name="scenes"\n')
    for name, text in (("cameras", FREED_CAMERAS), ("camera", NEW_CAMERA)):
        (game / f"{name}.gd").write_text(text)
        (game / f"{name}.tscn").write_text(_scene4(f"{name}.gd"))
    godot4.run(["--path", str(game), "--import"], tmp_path / "home", 120, sandbox, [game])
    run = game_run.run_game(godot4, game, tmp_path, sandbox, ["cameras.tscn", "camera.tscn"],
                            game_run.RunSettings(frames=3, scene_frames=3))
    assert run.scenes.scenes == {"cameras.tscn": "done", "camera.tscn": "done"}, run.scenes.scenes
    assert run.scenes.scene_prints["camera.tscn"] == ["current true"] * 8, run.scenes.scene_prints


def test_an_engine_printing_the_same_lines_every_frame_is_read_without_keeping_every_repeat():
    """Past its budget a capture keeps only lines it has not seen, and every marker line of the run tool."""
    import io

    from gd_assets.core.engines import Capture

    flood = (b"ERROR: Condition \"!is_inside_tree()\" is true.\n   at: get_global_transform (canvas_item.cpp:84)\n"
             * 5000)
    stream = io.BytesIO(b"before\n" + flood + b"@@gd-run END\tscene\tres://a.tscn\n" + flood +
                        b"a new line\n@@gd-run END\tscene\tres://a.tscn\n")
    capture = Capture(stream, budget=1000)
    text = capture.text()
    lines = text.splitlines()
    assert lines[0] == "before" and lines.count("@@gd-run END\tscene\tres://a.tscn") == 2
    assert "a new line" in lines and len(text) < 2000 and capture.dropped > 19000
    phase = game_run.parse_run(text)
    assert phase.engine_errors[:1] == ['Condition "!is_inside_tree()" is true.']
