"""The whole analysis through Dagster: evidence, judgement, verdict, on the seed example and the examples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath

import dagster as dg
import pytest
from conftest import REPO, fixture_path

from gd_assets import orchestrate, store, views

pytestmark = pytest.mark.slow


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("DAGSTER_HOME", None)
    return subprocess.run([sys.executable, "-m", "gd_assets.cli", *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=900, check=False)


def analyze_json(source: Path, *extra: str) -> dict:
    result = run_cli("analyze", str(source), "--json", *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)



def test_seed_example_verdicts_and_judgements(analysis_home, tmp_path):
    mini = analyze_json(fixture_path("mini_dodge.dump.txt"))
    frags = {f["key"]: f for f in mini["fragments"]}
    process = frags["mini-dodge/player.gd::_process"]
    assert (process["signal"], process["migration_needed"]) == ("godot4", False)
    assert mini["verdict"] == "godot4"

    enemy = analyze_json(fixture_path("enemy.dump.txt"))
    frags = {f["key"]: f for f in enemy["fragments"]}
    for key in ("enemy/enemy.gd::extends", "enemy/enemy.gd::_physics_process"):
        assert (frags[key]["signal"], frags[key]["migration_needed"]) == ("godot3", True), frags[key]
    extends = frags["enemy/enemy.gd::extends"]
    assert any(e["table"] == "api_mapping" and "KinematicBody2D" in e["title"] for e in extends["evidence"])
    assert enemy["verdict"] == "godot3"

    both = tmp_path / "mini_dodge_plus_enemy.dump.txt"
    both.write_text(fixture_path("mini_dodge.dump.txt").read_text().rstrip("\n") + "\n\n"
                    + fixture_path("enemy.dump.txt").read_text())
    mixed = analyze_json(both)
    assert mixed["verdict"] == "mixed"
    assert "enemy.gd" in mixed["explanation"]


def test_show_separates_tracking_from_retriever_input(analysis_home):
    orchestrate.analyze(str(fixture_path("enemy.dump.txt")), None)
    result = run_cli("show", "enemy", "enemy/enemy.gd::extends", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["tracking"] == {"path": "enemy.gd", "start_line": 1, "end_line": 1, "dump_start_line": 2,
                               "dump_end_line": 2}
    assert doc["text"] == "extends KinematicBody2D"
    cues = [c["cue"] for c in doc["cues"]]
    assert "KinematicBody2D" in cues and {"Godot 3", "Godot 4", "migration"} <= set(cues)
    assert [c["rank"] for c in doc["candidates"]] == list(range(1, len(doc["candidates"]) + 1))
    top5 = doc["candidates"][:5]
    assert any(c["table"] == "api_mapping" and "CharacterBody2D" in c["title"] for c in top5)
    assert doc["judgement"]["signal"] == "godot3" and doc["judgement"]["migration_needed"] is True
    assert {"corpus_version", "index_version", "judge", "model", "prompt_version"} <= set(doc["lineage"])
    text = run_cli("show", "enemy", "enemy/enemy.gd::extends").stdout
    assert "tracking only" in text and "cues (retriever input)" in text


def test_no_path_component_is_a_cue_unless_in_the_body(analysis_home):
    for folder in ("dodge-godot3", "dodge-godot4"):
        orchestrate.analyze(str(REPO / "examples" / folder), None)
    rows = store.query("SELECT e.cues, f.path, f.text FROM evidence e JOIN fragments f ON f.key = e.key").to_dicts()
    assert rows
    for row in rows:
        parts = {p for part in PurePosixPath(row["path"]).parts for p in (part, PurePosixPath(part).stem)}
        for cue in json.loads(row["cues"]):
            for part in parts:
                if part and part in cue["cue"]:
                    assert part in row["text"], f"{part!r} from the path {row['path']} is in cue {cue}"


def test_each_fragment_partition_is_materialised_once_and_reanalysis_redoes_only_edits(analysis_home, deployment,
                                                                                       tmp_path):
    project = tmp_path / "hero"
    project.mkdir()
    script = project / "hero.gd"
    script.write_text("extends KinematicBody2D\n\nfunc run():\n\tyield(get_tree(), \"idle_frame\")\n\n"
                      "func jump():\n\tpass\n")
    orchestrate.analyze(str(project), None)
    instance = orchestrate.instance()
    keys = instance.get_dynamic_partitions("fragments")
    assert set(keys) == {"hero/hero.gd::extends", "hero/hero.gd::run", "hero/hero.gd::jump"}

    def counts(asset: str) -> dict[str, int]:
        records = instance.fetch_materializations(dg.AssetKey(asset), limit=1000).records
        out: dict[str, int] = {}
        for r in records:
            out[r.partition_key] = out.get(r.partition_key, 0) + 1
        return out

    assert counts("fragment_evidence") == {k: 1 for k in keys}
    assert counts("fragment_judgement") == {k: 1 for k in keys}
    script.write_text("extends KinematicBody2D\n\nfunc run():\n\tawait get_tree().process_frame\n\n"
                      "func jump():\n\tpass\n")
    orchestrate.analyze(str(project), None)
    assert counts("fragment_judgement") == {"hero/hero.gd::extends": 1, "hero/hero.gd::run": 2,
                                            "hero/hero.gd::jump": 1}
    judged = {r["key"]: r for r in store.query("SELECT * FROM judgements").to_dicts()}
    assert judged["hero/hero.gd::run"]["signal"] == "godot4"
    assert store.query("SELECT count(*) AS n FROM candidates GROUP BY key HAVING n > 20").height == 0
    assert store.query("SELECT count(*) AS n, count(DISTINCT key) AS d FROM judgements").row(0) == (3, 3)


def test_examples_give_their_version(analysis_home):
    three = views.verdict_document(orchestrate.analyze(str(REPO / "examples" / "dodge-godot3"), None))
    four = views.verdict_document(orchestrate.analyze(str(REPO / "examples" / "dodge-godot4"), None))
    assert three["verdict"] == "godot3" and four["verdict"] == "godot4"
    report = Path(os.environ["GD_ASSETS_HOME"]) / "reports" / "dodge-godot3.html"
    assert "Player.gd" in report.read_text() and "<pre class='diff'>" in report.read_text()


def test_a_pathological_fragment_does_not_stop_the_analysis(analysis_home, tmp_path):
    """An expression nested 5,000 parentheses deep (900 levels once broke the cue reader with a
    RecursionError) is analysed like any other fragment, beside the rest of the project."""
    project = tmp_path / "deep"
    project.mkdir()
    (project / "project.godot").write_text("config_version=4\n")
    deep = "(" * 5000 + "1" + ")" * 5000
    (project / "deep.gd").write_text(f"extends Node\n\nfunc deep():\n\tvar x = {deep}\n\treturn x\n\n"
                                     "func old():\n\tyield(get_tree(), \"idle_frame\")\n")
    doc = analyze_json(project)
    frags = {f["key"]: f for f in doc["fragments"]}
    assert frags["deep/deep.gd::deep"]["migration_needed"] is False
    assert frags["deep/deep.gd::old"]["migration_needed"] is True and doc["verdict"] == "godot3"
