"""Two analyses of different projects, one of them on three workers, and a corpus refresh at once: no lock
error, no lost or doubled row."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import duckdb
import pytest
from conftest import REPO, changed_corpus_source
from dagster._core.events import DagsterEventType
from test_resume import FILES, FUNCTIONS, write_project
from test_workers import daemons_of, worker_runs

from gd_assets import home, orchestrate, store
from gd_assets.status import PID_TAG, materialization_counts

pytestmark = pytest.mark.slow
RANGE_START = "dagster/asset_partition_range_start"


# The two deployments whose parts differ: sqlite's instance with the DuckDB store, PostgreSQL's instance with
# DuckLake. `postgres` (PostgreSQL's instance with the DuckDB store) is made of one part of each, and each
# part's locking is what this test puts under load, so it adds a third run of the heaviest test and no case.
@pytest.mark.parametrize("deployment", ["sqlite", "ducklake"], indirect=True)
def test_two_analyses_one_on_three_workers_and_a_corpus_refresh_run_at_once(analysis_home, deployment, corpus_home,
                                                                             tmp_path):
    """`analyze` of one project, `analyze --workers 3` of another and a refresh of the corpus they both read,
    started together: each fragment partition materialised exactly once, every row once, the refresh's
    change written."""
    corpus_copy = tmp_path / "corpus-home"
    shutil.copytree(corpus_home, corpus_copy, ignore=shutil.ignore_patterns("dagster", "reports"))
    changed_source = changed_corpus_source(tmp_path / "corpus-src")
    crowd = tmp_path / "crowd"
    write_project(crowd)
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env["GD_ASSETS_CORPUS_HOME"] = str(corpus_copy)

    def start(*args: str, name: str) -> tuple[subprocess.Popen, object]:
        log = (tmp_path / f"{name}.log").open("w")
        return subprocess.Popen([sys.executable, "-m", "gd_assets.cli", *args], cwd=REPO, env=env, stdout=log,
                                stderr=subprocess.STDOUT), log

    jobs = {
        "three": start("analyze", str(REPO / "examples" / "dodge-godot3"), name="three"),
        "workers": start("analyze", str(crowd), "--workers", "3", name="workers"),
        "refresh": start("corpus", "build", "--source", str(changed_source), name="refresh"),
    }
    for name, (proc, log) in jobs.items():
        proc.wait(timeout=1800)
        log.close()
        output = (tmp_path / f"{name}.log").read_text()
        assert proc.returncode == 0, f"{name} failed:\n{output[-3000:]}"
        assert "Could not set lock" not in output and "database is locked" not in output

    for project, verdict in (("dodge-godot3", "godot3"), ("crowd", "godot3")):
        fragments = store.project_fragments(project)["key"].to_list()
        assert fragments
        for table in ("evidence", "judgements"):
            rows = store.query(f"SELECT key FROM {table} WHERE project = ?", [project])["key"].to_list()
            assert sorted(rows) == sorted(fragments), (project, table)
        assert store.query("SELECT verdict FROM verdicts WHERE project = ?", [project]).item() == verdict

    # the workers: three contiguous ranges, each worker's runs through the queue in a process of its own
    total = FILES * (FUNCTIONS + 1)
    keys = store.project_fragments("crowd")["key"].to_list()
    assert len(keys) == total
    instance = orchestrate.instance()
    for asset in ("fragment_evidence", "fragment_judgement"):
        assert set(materialization_counts(instance, asset, keys).values()) == {1}, asset
        runs = worker_runs(instance, asset)
        assert {r.tags.get(RANGE_START) for r in runs} == {keys[0], keys[total // 3], keys[2 * total // 3]}, \
            "three workers, three contiguous ranges"
        assert len(runs) == 3 and len({r.tags[home.WORKER_TAG] for r in runs}) == 3, asset
        assert all(instance.all_logs(r.run_id, of_type=DagsterEventType.PIPELINE_ENQUEUED) for r in runs), \
            "each worker's run went through the run queue"
        assert len({r.tags[PID_TAG] for r in runs}) == 3, "three worker processes"
    assert not daemons_of(home.ensure_dagster_home()), "the daemon the analysis started is stopped"

    with duckdb.connect(str(corpus_copy / "corpora.duckdb"), read_only=True) as con:
        sections = con.execute("SELECT count(*) FROM docs_chunks WHERE text LIKE '%Upstream changed%'").fetchall()
    assert sections[0][0] == 1, "the refresh wrote the changed upstream section"
