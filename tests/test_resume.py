"""Stop and resume per fragment: a run killed with SIGKILL midway, then `status` and `resume`."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import dagster as dg
import pytest
from conftest import REPO

from gd_assets import orchestrate, store, views
from gd_assets.status import materialization_counts

pytestmark = pytest.mark.slow

FUNCTIONS = 10
FILES = 30


def write_project(folder, files: int = FILES) -> None:
    folder.mkdir()
    for f in range(files):
        body = ["extends KinematicBody2D", ""]
        for i in range(FUNCTIONS):
            body += [f"func step_{i}(delta):", f"\tvar v = Vector2({i}, {f})", "\tv = move_and_slide(v)",
                     "\tyield(get_tree(), \"idle_frame\")" if i % 2 else "\tposition += v * delta", ""]
        (folder / f"actor_{f}.gd").write_text("\n".join(body))


def judged_count(instance: dg.DagsterInstance) -> int:
    return instance.fetch_materializations(dg.AssetKey("fragment_judgement"), limit=10_000).records.__len__()


def test_killed_run_resumes_only_unfinished_fragments(analysis_home, deployment, tmp_path):
    project = tmp_path / "crowd"
    write_project(project)
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    instance = orchestrate.instance()
    assert type(instance.run_storage).__name__ == {"sqlite": "SqliteRunStorage", "postgres": "PooledRunStorage",
                                                  "ducklake": "PooledRunStorage"}[deployment]
    log = (tmp_path / "analyze.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "gd_assets.cli", "analyze", str(project)], cwd=REPO, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    total = FILES * (FUNCTIONS + 1)
    try:
        deadline = time.monotonic() + 600
        while judged_count(instance) < 64:
            assert proc.poll() is None, (tmp_path / "analyze.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the analysis did not get going"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()
    finished = judged_count(instance)
    assert 64 <= finished < total, "kill the run midway"

    status = views.status_document("crowd")
    counts = status["counts"]
    assert counts["done"] == finished and counts["running"] == 0
    assert counts["stopped"] + counts["waiting"] + counts["failed"] == total - finished
    assert counts["stopped"] > 0, "fragments of the killed run read `stopped`"
    text = subprocess.run([sys.executable, "-m", "gd_assets.cli", "status", "crowd"], cwd=REPO, env=env,
                          capture_output=True, text=True, check=True).stdout
    assert "stopped" in text and "done" in text

    done_before = {r["key"] for r in status["fragments"] if r["status"] == "done"}
    result = orchestrate.resume("crowd")
    assert result["closed_runs"] >= 1
    assert result["fragment_judgement"] == total - finished

    keys = store.project_fragments("crowd")["key"].to_list()
    assert len(keys) == total
    assert set(materialization_counts(instance, "fragment_judgement", keys).values()) == {1}
    assert set(materialization_counts(instance, "fragment_evidence", keys).values()) == {1}
    final = views.status_document("crowd")
    assert final["counts"]["done"] == total and all(r["materializations"] == 1 for r in final["fragments"])
    assert done_before <= {r["key"] for r in final["fragments"]}
    for table in ("evidence", "judgements"):
        n, distinct = store.query(f"SELECT count(*), count(DISTINCT key) FROM {table}").row(0)
        assert n == distinct == total, table
    assert store.query("SELECT count(*) FROM candidates GROUP BY key HAVING count(*) > 20").height == 0
    checks = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [dg.AssetCheckKey(dg.AssetKey("project_verdict"), "project_rows_unique")])
    assert next(iter(checks.values())).status.value == "SUCCEEDED"
    doc = json.loads(json.dumps(views.verdict_document("crowd"), default=str))
    assert doc["verdict"] == "godot3" and doc["counts"]["fragments"] == total


def evidence_count(instance: dg.DagsterInstance) -> int:
    return len(instance.fetch_materializations(dg.AssetKey("fragment_evidence"), limit=10_000).records)


def test_an_interrupted_analysis_shows_progress_and_says_how_to_resume(analysis_home, tmp_path):
    """While it runs, `status` counts fragments whose evidence is in as running, never "0 done, 0 running";
    stopped with Ctrl-C (SIGINT) or SIGTERM, `analyze` prints one line saying how to resume, no traceback."""
    # Large enough that what is left after the first batch outlasts the `status` call below on a busy
    # machine (the first batch is 64 fragments, then 128, 256 and the rest: 1,320 fragments in four; with
    # 660 the rest took less than the call on a busy machine, and the test skipped).
    files = 4 * FILES
    project = tmp_path / "crowd"
    write_project(project, files)
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    instance = orchestrate.instance()
    proc = subprocess.Popen([sys.executable, "-m", "gd_assets.cli", "analyze", str(project), "--json"], cwd=REPO,
                            env={**env, "GD_ASSETS_PROGRESS_EVERY": "0.5"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    total = files * (FUNCTIONS + 1)
    try:
        deadline = time.monotonic() + 600
        while evidence_count(instance) < 64:
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the analysis did not get going"
            time.sleep(0.05)
        status = views.status_document("crowd")
        assert status["stages"]["evidence"]["done"] >= 64
        assert status["counts"]["running"] + status["counts"]["done"] >= 64, status["counts"]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
    if proc.returncode == 0:
        pytest.skip("the analysis finished before the interrupt reached it")
    assert proc.returncode == 130 and "Traceback" not in err, err[-3000:]
    assert re.search(r"(evidence|judgement): \d+ of \d+ fragment steps current", err), "progress lines on stderr"
    assert not out.strip(), "nothing on stdout with --json when no verdict was reached"
    last = err.strip().splitlines()[-1]
    assert "gd-assets resume crowd" in last, err[-2000:]
    result = orchestrate.resume("crowd")
    assert result["closed_runs"] >= 0
    final = views.status_document("crowd")
    assert final["counts"]["done"] == total and all(r["materializations"] == 1 for r in final["fragments"])


def test_runs_cover_contiguous_keys_and_ride_over_skippable_ones():
    order = ["p/a", "p/b", "p/c", "q/x", "p/d", "p/e"]
    assert orchestrate.contiguous_blocks(order, ["p/a", "p/c", "p/e"]) == [("p/a", "p/a"), ("p/c", "p/c"),
                                                                           ("p/e", "p/e")]
    skippable = ["p/b", "p/d"]
    assert orchestrate.contiguous_blocks(order, ["p/a", "p/c", "p/e"], skippable) == [("p/a", "p/c"), ("p/e", "p/e")]
    assert orchestrate.contiguous_blocks(order, ["p/c"], ["p/a", "p/b", "p/d", "p/e"]) == [("p/c", "p/c")]
