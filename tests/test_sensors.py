"""The inbox sensor: a project dropped into <GD_ASSETS_HOME>/inbox/ is registered and sliced once per change."""

from __future__ import annotations

import os
import time
import zipfile
from pathlib import Path

import dagster as dg
import pytest
from conftest import fixture_path

from gd_assets import home
from gd_assets.assets.fragments import fragments
from gd_assets.assets.project_symbols import project_symbols
from gd_assets.assets.sources import project_sources
from gd_assets.definitions import defs
from gd_assets.partitions import projects_partitions
from gd_assets.sensors import SETTLE_SECONDS, inbox_sensor, sensors

ENEMY = """\
# enemy.gd
extends KinematicBody2D

var velocity = Vector2.ZERO

func _physics_process(delta):
    move_and_slide(velocity)
"""


def settled(path: Path) -> Path:
    """Age a dropped item (and what a folder holds) past the settle time, as a finished copy would be."""
    past = time.time() - SETTLE_SECONDS - 60
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        os.utime(p, (past, past))
    return path


def drop(name: str, text: str) -> Path:
    inbox = home.data_home() / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    path = inbox / name
    path.write_text(text)
    return settled(path)


@pytest.fixture
def instance(gd_home):
    with dg.instance_for_test() as inst:
        yield inst


def evaluate(instance: dg.DagsterInstance, cursor: str | None = None):
    context = dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(), cursor=cursor,
                                      definitions=dg.Definitions.merge(defs, dg.Definitions(sensors=sensors)))
    return inbox_sensor.evaluate_tick(context)


def added(data) -> list[str]:
    return [key for request in data.dynamic_partitions_requests for key in request.partition_keys]


def test_new_dump_registers_project_and_launches_slicing(instance):
    dump = drop("enemy.dump.txt", ENEMY)
    data = evaluate(instance)

    assert added(data) == ["enemy"]
    assert data.dynamic_partitions_requests[0].partitions_def_name == projects_partitions.name
    assert len(data.run_requests) == 1
    run = data.run_requests[0]
    assert run.partition_key == "enemy"
    assert set(run.asset_selection) == {project_sources.key, fragments.key, project_symbols.key}
    assert run.run_config == {"ops": {"project_sources": {"config": {"source": str(dump.resolve())}}}}
    assert run.run_key.startswith("enemy:")


def test_unchanged_item_is_not_run_again(instance):
    drop("enemy.dump.txt", ENEMY)
    first = evaluate(instance)
    second = evaluate(instance, first.cursor)

    assert not second.run_requests
    assert not added(second)


def test_edited_dump_is_run_again_with_a_new_run_key(instance):
    dump = drop("enemy.dump.txt", ENEMY)
    first = evaluate(instance)
    instance.add_dynamic_partitions(projects_partitions.name, ["enemy"])  # what the daemon does with the request

    dump.write_text(ENEMY.replace("Vector2.ZERO", "Vector2(1, 0)"))
    settled(dump)
    second = evaluate(instance, first.cursor)

    assert not added(second), "the project is registered already"
    assert [r.partition_key for r in second.run_requests] == ["enemy"]
    assert second.run_requests[0].run_key != first.run_requests[0].run_key


def test_touched_but_unchanged_file_is_not_run_again(instance):
    dump = drop("enemy.dump.txt", ENEMY)
    first = evaluate(instance)
    past = time.time() - SETTLE_SECONDS - 10
    os.utime(dump, (past, past))

    assert not evaluate(instance, first.cursor).run_requests


def test_item_still_being_copied_waits_for_the_next_tick(instance):
    inbox = home.data_home() / "inbox"
    inbox.mkdir(parents=True)
    dump = inbox / "enemy.dump.txt"
    dump.write_text(ENEMY)

    assert not evaluate(instance).run_requests
    settled(dump)
    assert len(evaluate(instance).run_requests) == 1


def test_folder_zip_and_dump_each_become_a_project(instance, tmp_path):
    mini = fixture_path("mini_dodge.dump.txt").read_text()
    drop("mini_dodge.dump.txt", mini)
    folder = home.data_home() / "inbox" / "Space Game"
    folder.mkdir()
    (folder / "project.godot").write_text("config_version=5\n")
    (folder / "main.gd").write_text("extends Node\n")
    (folder / ".godot").mkdir()
    (folder / ".godot" / "cache.bin").write_bytes(b"\0")
    settled(folder)
    archive = home.data_home() / "inbox" / "enemy.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("enemy.gd", "extends KinematicBody2D\n")
    settled(archive)
    (home.data_home() / "inbox" / "notes.md").write_text("not a project")

    data = evaluate(instance)
    assert sorted(added(data)) == ["enemy", "mini-dodge", "space-game"]
    assert sorted(r.partition_key for r in data.run_requests) == ["enemy", "mini-dodge", "space-game"]

    # editor caches inside a project folder do not count as a change
    (folder / ".godot" / "cache.bin").write_bytes(b"\1\2")
    assert not evaluate(instance, data.cursor).run_requests
    (folder / "main.gd").write_text("extends Node2D\n")
    settled(folder)
    again = evaluate(instance, data.cursor)
    assert [r.partition_key for r in again.run_requests] == ["space-game"]


def test_sensor_is_off_by_default_and_loads_with_the_code_location():
    assert inbox_sensor.default_status == dg.DefaultSensorStatus.STOPPED
    merged = dg.Definitions.merge(defs, dg.Definitions(sensors=sensors))
    assert merged.get_repository_def().get_sensor_def("inbox_sensor") is inbox_sensor
