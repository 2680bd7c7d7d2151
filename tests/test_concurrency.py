"""Two analyses of different projects and a corpus refresh at once: no lock error, no lost row."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import REPO, changed_corpus_source, corpus_source
from dagster._core.events import DagsterEventType
from test_workers import daemons_of, worker_runs

from gd_assets import home, store
from gd_assets.status import PID_TAG

pytestmark = pytest.mark.slow


def test_two_analyses_and_a_corpus_refresh_run_at_once(analysis_home, deployment, corpus_home, tmp_path):
    corpus_copy = tmp_path / "corpus-home"
    shutil.copytree(corpus_home, corpus_copy, ignore=shutil.ignore_patterns("dagster", "reports"))
    changed_source = changed_corpus_source(tmp_path / "corpus-src")
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env["GD_ASSETS_CORPUS_HOME"] = str(corpus_copy)

    def start(*args: str, name: str) -> tuple[subprocess.Popen, object]:
        log = (tmp_path / f"{name}.log").open("w")
        return subprocess.Popen([sys.executable, "-m", "gd_assets.cli", *args], cwd=REPO, env=env, stdout=log,
                                stderr=subprocess.STDOUT), log

    jobs = {
        "three": start("analyze", str(REPO / "examples" / "dodge-godot3"), name="three"),
        "four": start("analyze", str(REPO / "examples" / "dodge-godot4"), name="four"),
        "refresh": start("corpus", "build", "--source", str(changed_source), name="refresh"),
    }
    for name, (proc, log) in jobs.items():
        proc.wait(timeout=1200)
        log.close()
        output = (tmp_path / f"{name}.log").read_text()
        assert proc.returncode == 0, f"{name} failed:\n{output[-3000:]}"
        assert "Could not set lock" not in output and "database is locked" not in output

    for project in ("dodge-godot3", "dodge-godot4"):
        fragments = store.project_fragments(project)["key"].to_list()
        assert fragments
        judged = store.query("SELECT key FROM judgements WHERE project = ?", [project])["key"].to_list()
        assert sorted(judged) == sorted(fragments)
        verdict = store.query("SELECT verdict FROM verdicts WHERE project = ?", [project]).item()
        assert verdict == ("godot3" if project.endswith("3") else "godot4")
    n, distinct = store.query("SELECT count(*), count(DISTINCT key) FROM judgements").row(0)
    assert n == distinct
    import duckdb

    with duckdb.connect(str(corpus_copy / "corpora.duckdb"), read_only=True) as con:
        sections = con.execute("SELECT count(*) FROM docs_chunks WHERE text LIKE '%Upstream changed%'").fetchall()
    assert sections[0][0] == 1, "the refresh wrote the changed upstream section"


def test_three_workers_on_one_project_and_a_corpus_refresh(analysis_home, deployment, corpus_home, tmp_path):
    """`analyze --workers 3` next to a corpus refresh: each fragment partition materialised exactly once,
    no row lost or doubled, no lock error surfacing."""
    from test_resume import FILES, FUNCTIONS, write_project

    from gd_assets import orchestrate
    from gd_assets.status import materialization_counts

    corpus_copy = tmp_path / "corpus-home"
    shutil.copytree(corpus_home, corpus_copy, ignore=shutil.ignore_patterns("dagster", "reports"))
    project = tmp_path / "crowd"
    write_project(project)
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env["GD_ASSETS_CORPUS_HOME"] = str(corpus_copy)
    logs = {name: (tmp_path / f"{name}.log").open("w") for name in ("workers", "refresh")}
    jobs = {
        "workers": subprocess.Popen([sys.executable, "-m", "gd_assets.cli", "analyze", str(project), "--workers", "3"],
                                    cwd=REPO, env=env, stdout=logs["workers"], stderr=subprocess.STDOUT),
        "refresh": subprocess.Popen([sys.executable, "-m", "gd_assets.cli", "corpus", "build", "--source",
                                     str(corpus_source())], cwd=REPO, env=env, stdout=logs["refresh"],
                                    stderr=subprocess.STDOUT),
    }
    for name, proc in jobs.items():
        proc.wait(timeout=1800)
        logs[name].close()
        output = (tmp_path / f"{name}.log").read_text()
        assert proc.returncode == 0, f"{name} failed:\n{output[-3000:]}"
        assert "Could not set lock" not in output and "database is locked" not in output

    total = FILES * (FUNCTIONS + 1)
    keys = store.project_fragments("crowd")["key"].to_list()
    assert len(keys) == total
    instance = orchestrate.instance()
    for asset in ("fragment_evidence", "fragment_judgement"):
        assert set(materialization_counts(instance, asset, keys).values()) == {1}, asset
    starts = {run.tags.get("dagster/asset_partition_range_start") for run in instance.get_runs()} - {None}
    assert starts == {keys[0], keys[total // 3], keys[2 * total // 3]}, "three workers, three contiguous ranges"
    for asset in ("fragment_evidence", "fragment_judgement"):
        runs = worker_runs(instance, asset)
        assert len(runs) == 3 and len({r.tags[home.WORKER_TAG] for r in runs}) == 3, asset
        assert all(instance.all_logs(r.run_id, of_type=DagsterEventType.PIPELINE_ENQUEUED) for r in runs), \
            "each worker's run went through the run queue"
        assert len({r.tags[PID_TAG] for r in runs}) == 3, "three worker processes"
    assert not daemons_of(home.ensure_dagster_home()), "the daemon the analysis started is stopped"
    for table in ("evidence", "judgements"):
        n, distinct = store.query(f"SELECT count(*), count(DISTINCT key) FROM {table}").row(0)
        assert n == distinct == total, table
    assert store.query("SELECT verdict FROM verdicts WHERE project = 'crowd'").item() == "godot3"
