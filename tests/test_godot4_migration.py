"""`gd-assets migrate` then `gd-assets verify` on a Godot 3 game, through Dagster and real Godot 4.6: the
copy opens as a Godot 4 project, and what Godot still reports is traced to its fragment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

from gd_assets import home, orchestrate, store, views
from gd_assets.core.verify import line_map

pytestmark = pytest.mark.slow


def run_cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    return subprocess.run([sys.executable, "-m", "gd_assets.cli", *args], capture_output=True, text=True,
                          env={**environ, **env}, cwd=REPO, timeout=900, check=False)


@pytest.fixture
def game(tmp_path) -> Path:
    return Path(shutil.copytree(FIXTURES / "godot3_game", tmp_path / "game"))


def test_the_migrated_game_opens_as_a_godot_4_project(analysis_home, game, godot4, monkeypatch, tmp_path):
    monkeypatch.setenv("GODOT4", godot4.command[0])
    name, facts = orchestrate.migrate(str(game))
    out = Path(facts["out"])
    assert facts["renamed"] == {"glow.shader": "glow.gdshader"}
    assert (out / "glow.gdshader").exists() and not (out / "glow.shader").exists()
    patch = Path(facts["patch"]).read_text()
    assert "rename from glow.shader\nrename to glow.gdshader\n" in patch
    check = tmp_path / "check"
    shutil.copytree(game, check)
    applied = subprocess.run(["git", "apply", "-p1", "--whitespace=nowarn", facts["patch"]], cwd=check,
                             capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    assert sorted(p.name for p in check.iterdir()) == sorted(p.name for p in out.iterdir() if p.name[0] != ".")

    result = run_cli("verify", name, "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    doc = json.loads(result.stdout)
    f = doc["figures"]
    assert (f["config_version"], f["features"]) == ("5", ["4.6", "GL Compatibility"])
    assert (f["scripts"], f["scripts_failing"]) == (2, 1) and list(f["failing"]) == ["broken.gd"]
    assert (f["scenes"], f["scenes_failing"], f["properties_dropped"]) == (1, 0, 0)
    assert (f["input_actions"], f["input_actions_without_key"]) == (3, 0)
    [parse] = [p for p in doc["problems"] if p["path"] == "broken.gd" and p["line"]]
    assert parse["line"] == 6 and parse["original_line"] == 6 and parse["fragment"].startswith("game/broken.gd::")
    assert not (out / ".godot").exists()               # Godot ran on a scratch copy

    status = views.status_document(name)
    assert status["verification"]["figures"]["scripts_failing"] == 1
    assert "scripts failing: 1 of 2" in (home.reports_dir() / f"{name}.verify.md").read_text()
    assert "scripts failing: 1 of 2" in run_cli("status", name).stdout


def test_analysing_the_copy_again_finds_only_what_was_left_to_people(analysis_home, game):
    name, facts = orchestrate.migrate(str(game))
    first = {}
    for row in store.project_rewrites(name).to_dicts():
        for m in json.loads(row["manual"]):
            first.setdefault(row["path"], []).append((m["start_line"], m["end_line"]))
    out = Path(facts["out"])
    again = orchestrate.analyze(str(out), "game-copy")
    doc = views.verdict_document(again)
    assert doc["verdict"] == "godot4"
    renamed = {new: old for old, new in facts["renamed"].items()}
    originals = {f["path"]: f["text"] for f in store.project_files(name, included_only=True).to_dicts()}
    for frag in (f for f in doc["fragments"] if f["migration_needed"]):
        source = renamed.get(frag["path"], frag["path"])
        lines = line_map(originals[source], (out / frag["path"]).read_text())
        span = (lines[frag["start_line"]], lines[frag["end_line"]])
        assert any(a <= span[1] and span[0] <= b for a, b in first.get(source, ())), frag

    # migrate on its own output changes nothing
    name2, facts2 = orchestrate.migrate(str(out), "game-copy", out=str(Path(facts["out"]).parent / "again"))
    assert facts2["edits"] == 0 and facts2["renamed"] == {}


def test_verify_needs_a_migration_and_says_how_to_point_at_godot(analysis_home, game):
    name = orchestrate.analyze(str(game))
    refused = run_cli("verify", name)
    assert refused.returncode == 1 and "run `gd-assets migrate` first" in refused.stderr
    orchestrate.run_migration(name)
    missing = run_cli("verify", name, GODOT4="", GODOT="", PATH=str(Path(sys.executable).parent))
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines() == [
        "gd-assets: error: no Godot 4 binary found: pass --godot PATH, or set GODOT4 (or GODOT) to a Godot 4 "
        "executable, or put `godot4` or `godot` (4.x) on PATH"]
