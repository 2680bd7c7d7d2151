"""`gd-assets migrate` end to end through Dagster: the rewrite assets, the migrated copy, the patch, resume."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from conftest import REPO

from gd_assets import home, store

pytestmark = pytest.mark.slow

PLAYER = """extends KinematicBody2D

signal hit

export var speed = 400
onready var sprite = $Sprite
var motion = Vector2()


func _physics_process(delta):
\tmotion.x = speed * Input.get_action_strength("right")
\tmotion = move_and_slide(motion, Vector2.UP)
\tif Input.is_mouse_button_pressed(BUTTON_LEFT):
\t\tyield(get_tree(), "idle_frame")
\t\temit_signal("hit")


func start(a, b):
\treturn a + b
"""

HUD = """extends CanvasLayer

onready var tween = $Tween


func _ready():
\t$Button.connect("pressed", self, "_on_pressed")
\ttween.interpolate_property($Label, "modulate:a", 1.0, 0.0, 0.5)
\ttween.start()


func _on_pressed():
\tprint("`pressed` in a string stays")
"""

SCENE = """[gd_scene load_steps=2 format=2]

[ext_resource path="res://player.gd" type="Script" id=1]

[node name="Player" type="KinematicBody2D"]
script = ExtResource( 1 )

[node name="Sprite" type="Sprite" parent="."]
"""


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("DAGSTER_HOME", None)
    return subprocess.run([sys.executable, "-m", "gd_assets.cli", *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=900, check=False)


def write_project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "project.godot").write_text("config_version=4\n\n[application]\n\nrun/main_scene=\"res://player.tscn\"\n")
    (root / "player.gd").write_text(PLAYER)
    (root / "hud.gd").write_bytes(HUD.replace("\n", "\r\n").encode())
    (root / "player.tscn").write_text(SCENE)
    (root / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    (root / "notes").mkdir()
    (root / "notes" / "README.md").write_text("# notes\n")
    return root


def digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def migrate_json(*args: str) -> dict:
    result = run_cli("migrate", *args, "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def test_migrate_writes_the_copy_and_the_patch_and_never_the_source(analysis_home, tmp_path):
    source = write_project(tmp_path / "game")
    before = digest(source)
    doc = migrate_json(str(source))
    assert digest(source) == before

    out = Path(doc["out"])
    assert out == home.data_home() / "migrations" / "game"
    assert set(digest(out)) - {".gd-assets-migration"} == set(before)
    assert (out / "icon.png").read_bytes() == (source / "icon.png").read_bytes()
    assert (out / "notes" / "README.md").read_bytes() == (source / "notes" / "README.md").read_bytes()

    player = (out / "player.gd").read_text()
    assert player.startswith("extends CharacterBody2D\n")
    for expected in ("@export var speed = 400", "@onready var sprite = $Sprite", "\tvelocity = motion\n\tmove_and_slide()\n"
                     "\tmotion = velocity\n", "MOUSE_BUTTON_LEFT", "await get_tree().process_frame",
                     'emit_signal("hit")', "func start(a, b):"):
        assert expected in player, expected
    hud = (out / "hud.gd").read_bytes()
    assert b"\r\n" in hud and b"$Button.pressed.connect(self._on_pressed)" in hud
    assert b'print("`pressed` in a string stays")' in hud
    assert '[node name="Player" type="CharacterBody2D"]' in (out / "player.tscn").read_text()

    edits = doc["edits"]
    assert edits and all(e["evidence"] and e["evidence"]["table"] in ("api_mapping", "label_prototypes", "docs_chunks")
                         for e in edits)
    # the defaults Godot 4 changed, pinned where the project relied on them, cite the Godot 3 reference row
    assert {e["evidence"]["id"] for e in edits if e["rule"] == "changed_default"} == {
        "docs:3:ProjectSettings.property.physics/2d/default_gravity"}
    assert {e["path"] for e in edits} >= {"player.gd", "hud.gd", "player.tscn", "project.godot"}
    assert all(e["key"].startswith("game/") for e in edits)
    assert any(m["kind"] == "tween" and m["path"] == "hud.gd" and m["evidence"] for m in doc["manual"])
    assert doc["files_changed"] == 4
    assert "config_version=5" in (out / "project.godot").read_text()

    # The patch turns the source into the copy.
    check = tmp_path / "check"
    shutil.copytree(source, check)
    applied = subprocess.run(["git", "apply", "-p1", "--whitespace=nowarn", doc["patch"]], cwd=check,
                             capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    assert (check / "player.gd").read_text() == player

    # The report shows the rewrite, and inline code as code.
    report = (home.reports_dir() / "game.html").read_text()
    assert "Godot 4 rewrite:" in report and "<code>" in report
    assert "+extends CharacterBody2D" in (home.reports_dir() / "game.md").read_text()


def rewrite_materializations() -> int:
    return len(home.dagster_instance().fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("fragment_rewrite")), limit=10_000).records)


def test_migrate_again_redoes_only_what_changed(analysis_home, tmp_path):
    source = write_project(tmp_path / "game")
    migrate_json(str(source))
    first = rewrite_materializations()
    rows = store.query("SELECT count(*) AS n FROM rewrites WHERE project = 'game'")["n"].item()
    migrate_json(str(source))
    assert rewrite_materializations() == first
    assert store.query("SELECT count(*) AS n FROM rewrites WHERE project = 'game'")["n"].item() == rows

    (source / "player.gd").write_text(PLAYER.replace("func start(a, b):\n\treturn a + b\n",
                                                     "func start(a, b):\n\treturn deg2rad(a + b)\n"))
    doc = migrate_json(str(source))
    assert 1 <= rewrite_materializations() - first <= 2
    assert "return deg_to_rad(a + b)" in (Path(doc["out"]) / "player.gd").read_text()
    assert store.query("SELECT count(*) - count(DISTINCT key) AS d FROM rewrites")["d"].item() == 0


def test_migrate_refuses_to_write_into_the_source_or_someone_elses_folder(analysis_home, tmp_path):
    source = write_project(tmp_path / "game")
    before = digest(source)
    inside = run_cli("migrate", str(source), "--out", str(source / "godot4"))
    assert inside.returncode == 1 and "overlaps the project source" in inside.stderr
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    refused = run_cli("migrate", str(source), "--out", str(foreign))
    assert refused.returncode == 1 and "not an earlier migration" in refused.stderr
    assert (foreign / "keep.txt").read_text() == "mine"
    assert digest(source) == before
    chosen = tmp_path / "ported"
    doc = migrate_json(str(source), "--out", str(chosen), "--patch", str(tmp_path / "port.patch"))
    assert Path(doc["out"]) == chosen and (chosen / "player.gd").exists()
    assert (tmp_path / "port.patch").read_text().startswith("--- a/")


def test_show_gives_the_rewrite_of_a_fragment(analysis_home, tmp_path):
    source = write_project(tmp_path / "game")
    migrate_json(str(source))
    result = run_cli("show", "game", "game/player.gd::extends", "--json")
    assert result.returncode == 0, result.stderr
    rewrite = json.loads(result.stdout)["rewrite"]
    assert rewrite["new_text"].startswith("extends CharacterBody2D")
    assert rewrite["edits"][0]["rule"] == "class_rename"
    text = run_cli("show", "game", "game/player.gd::extends")
    assert "--- Godot 4 rewrite ---" in text.stdout and "KinematicBody2D -> CharacterBody2D" in text.stdout


def test_migrate_a_git_source_copies_its_binary_files(analysis_home, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = write_project(tmp_path / "repo")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    for args in (["init", "--quiet"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet",
                                                     "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)
    doc = migrate_json(repo.as_uri(), "--project", "gitgame")
    out = Path(doc["out"])
    assert (out / "icon.png").read_bytes() == (repo / "icon.png").read_bytes()
    assert (out / "player.gd").read_text().startswith("extends CharacterBody2D\n")
    assert not (out / ".git").exists()
