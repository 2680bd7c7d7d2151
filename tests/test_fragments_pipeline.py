"""Ingestion and slicing through real Dagster runs and the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from conftest import REPO, fixture_path
from test_slicing import ENEMY, MINI_DODGE

from gd_assets import home, orchestrate, store, views
from gd_assets.partitions import fragments_partitions


def run_cli(*args: str, home_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "GD_ASSETS_HOME": str(home_dir)}
    env.pop("DAGSTER_HOME", None)
    return subprocess.run([sys.executable, "-m", "gd_assets.cli", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300)


def test_definitions_load():
    from gd_assets.definitions import defs

    dg.Definitions.validate_loadable(defs)
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"project_sources", "fragments"} <= keys


@pytest.mark.parametrize("name, expected, project", [
    ("mini_dodge.dump.txt", MINI_DODGE, "mini-dodge"), ("enemy.dump.txt", ENEMY, "enemy")])
def test_cli_prints_the_design_fragments_as_json(tmp_path, name, expected, project):
    result = run_cli("fragments", str(fixture_path(name)), "--json", home_dir=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["project"] == project
    got = [(f["path"], (f["dump_start_line"], f["dump_end_line"]), (f["start_line"], f["end_line"]), f["kind"],
            f["symbol"]) for f in doc["fragments"]]
    assert got == expected
    keys = [f["key"] for f in doc["fragments"]]
    assert f"{project}/player.gd::_process" in keys or project == "enemy"
    assert len(set(keys)) == len(keys)
    assert doc["excluded"] == []


def test_fragments_run_is_recorded_and_partitions_follow_edits(gd_home, tmp_path):
    project_dir = tmp_path / "Space Game"
    project_dir.mkdir()
    (project_dir / "README.md").write_text("# docs\n")
    (project_dir / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    script = project_dir / "ship.gd"
    script.write_text("extends Node2D\n\nfunc fly():\n\tpass\n\nfunc land():\n\tpass\n\nfunc dock():\n\tpass\n")

    name = orchestrate.ingest_and_slice(str(project_dir), None)
    assert name == "space-game"
    instance = orchestrate.instance()
    assert Path(os.environ["DAGSTER_HOME"]) == home.data_home() / "dagster"
    keys = set(instance.get_dynamic_partitions(fragments_partitions.name))
    assert keys == {f"space-game/ship.gd::{s}" for s in ("extends", "fly", "land", "dock")}
    event = instance.get_latest_materialization_event(dg.AssetKey("project_sources"))
    meta = event.asset_materialization.metadata
    assert meta["excluded_files"].value == 2
    assert "documents are excluded by default in source-analysis mode" in meta["excluded"].value
    checks = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [dg.AssetCheckKey(dg.AssetKey("fragments"), "every_line_in_one_fragment")])
    assert next(iter(checks.values())).status.value == "SUCCEEDED"

    before = store.project_fragments("space-game").to_dicts()
    # edit one function, delete another: the untouched keys and hashes stay the same
    script.write_text("extends Node2D\n\nfunc fly():\n\tpass\n\nfunc dock():\n\tprint('docking')\n\tpass\n")
    orchestrate.ingest_and_slice(str(project_dir), None)
    after = {r["key"]: r for r in store.project_fragments("space-game").to_dicts()}
    assert set(instance.get_dynamic_partitions(fragments_partitions.name)) == set(after)
    assert "space-game/ship.gd::land" not in after
    old = {r["key"]: r for r in before}
    assert after["space-game/ship.gd::fly"]["content_hash"] == old["space-game/ship.gd::fly"]["content_hash"]
    assert after["space-game/ship.gd::dock"]["content_hash"] != old["space-game/ship.gd::dock"]["content_hash"]
    assert (after["space-game/ship.gd::dock"]["start_line"], after["space-game/ship.gd::dock"]["end_line"]) == (6, 8)

    # re-running changes nothing and duplicates nothing
    orchestrate.ingest_and_slice(str(project_dir), None)
    counts = store.query("SELECT count(*) AS n, count(DISTINCT key) AS d FROM fragments").to_dicts()[0]
    assert counts["n"] == counts["d"] == 3
    files = store.query("SELECT count(*) AS n FROM files WHERE project = 'space-game'").item()
    assert files == 3


def test_missing_source_fails_with_a_clear_error(tmp_path):
    result = run_cli("fragments", str(tmp_path / "nowhere"), home_dir=tmp_path / "home")
    assert result.returncode == 1
    assert "does not exist" in result.stderr
    assert "Traceback" not in result.stderr


def test_examples_slice_with_full_coverage(gd_home):
    for folder, expected_kind in (("dodge-godot3", "KinematicBody2D"), ("dodge-godot4", "CharacterBody2D")):
        name = orchestrate.ingest_and_slice(str(REPO / "examples" / folder), None)
        doc = views.fragments_document(name)
        assert any(expected_kind in f["text"] for f in doc["fragments"])
        assert [e["path"] for e in doc["excluded"]] == ["README.md"]


def test_dump_command_round_trips_the_fixture(tmp_path):
    fixture = fixture_path("mini_dodge.dump.txt")
    result = run_cli("dump", str(fixture), home_dir=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == fixture.read_text().strip()
