"""`analyze --workers K` through the run queue: queued runs a daemon dequeues, a killed worker, the settings."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
from conftest import REPO, use_deployment
from dagster._core.events import DagsterEventType
from dagster._daemon.types import DaemonHeartbeat

from gd_assets import home, orchestrate, prompt_queue, store
from gd_assets.run_queue import QUEUE_DAEMON, RunQueue
from gd_assets.status import PID_TAG, materialization_counts


def daemons_of(dagster_home: Path) -> list[int]:
    """Processes running `dagster._daemon` on this instance (read from /proc: nothing is signalled)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if b"dagster._daemon" in command and f"DAGSTER_HOME={dagster_home}".encode() in environ.split(b"\0"):
            found.append(int(proc.name))
    return found


def worker_runs(instance: dg.DagsterInstance, asset: str) -> list[dg.DagsterRun]:
    return [r for r in instance.get_runs() if home.WORKER_TAG in r.tags and dg.AssetKey(asset) in (r.asset_selection or ())]


@pytest.fixture(params=["sqlite", "ducklake"])
def queue_deployment(request, monkeypatch) -> str:
    return use_deployment(request.param, request, monkeypatch)


@pytest.mark.slow
def test_a_killed_worker_fails_the_analysis_and_resume_redoes_only_its_keys(analysis_home, queue_deployment, tmp_path):
    from test_resume import FILES, FUNCTIONS, write_project

    project = tmp_path / "crowd"
    write_project(project)
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    instance = orchestrate.instance()
    log_path = tmp_path / "analyze.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "gd_assets.cli", "analyze", str(project), "--workers", "2"],
                                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 600
            victim = None
            while victim is None:
                assert proc.poll() is None, log_path.read_text()[-3000:]
                assert time.monotonic() < deadline, "no worker started"
                # a queued run carries the command's process id until its worker records its own
                started = [r for r in worker_runs(instance, "fragment_evidence")
                           if r.status == dg.DagsterRunStatus.STARTED and r.tags[PID_TAG] != str(proc.pid)]
                victim = started[0] if started else None
                time.sleep(0.1)
            os.kill(int(victim.tags[PID_TAG]), signal.SIGKILL)
            assert proc.wait(timeout=600) != 0
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    output = log_path.read_text()
    assert "fragment_evidence" in output and "died" in output and "gd-assets resume crowd" in output, output[-3000:]
    assert "Traceback" not in output
    assert not daemons_of(home.ensure_dagster_home()), "the daemon the analysis started is stopped"

    runs = {r.run_id: r for r in worker_runs(instance, "fragment_evidence")}
    assert len(runs) == 2 and len({r.tags[home.WORKER_TAG] for r in runs.values()}) == 2
    assert runs[victim.run_id].status == dg.DagsterRunStatus.FAILURE
    other = next(r for r in runs.values() if r.run_id != victim.run_id)
    assert other.status == dg.DagsterRunStatus.SUCCESS, "the other worker finished its range"
    assert not worker_runs(instance, "fragment_judgement"), "no judgement after a failed evidence stage"
    for run in runs.values():
        assert instance.all_logs(run.run_id, of_type=DagsterEventType.PIPELINE_ENQUEUED), "it went through the queue"

    keys = store.project_fragments("crowd")["key"].to_list()
    total = FILES * (FUNCTIONS + 1)
    assert len(keys) == total
    first, last = victim.tags["dagster/asset_partition_range_start"], victim.tags["dagster/asset_partition_range_end"]
    victim_keys = keys[keys.index(first): keys.index(last) + 1]
    before = materialization_counts(instance, "fragment_evidence", keys)
    assert all(before[k] == 1 for k in keys if k not in victim_keys)
    unfinished = [k for k in victim_keys if before[k] == 0]
    assert unfinished, "the worker was killed before finishing its range"

    result = orchestrate.resume("crowd")
    assert result["fragment_evidence"] == len(unfinished), "resume redoes only the killed worker's unfinished keys"
    for asset in ("fragment_evidence", "fragment_judgement"):
        assert set(materialization_counts(instance, asset, keys).values()) == {1}, asset
    for table in ("evidence", "judgements"):
        n, distinct = store.query(f"SELECT count(*), count(DISTINCT key) FROM {table}").row(0)
        assert n == distinct == total, table
    assert store.query("SELECT verdict FROM verdicts WHERE project = 'crowd'").item() == "godot3"


def test_queued_runs_run_alone_with_a_share_of_the_cores_and_the_asked_judge():
    from gd_assets.assets.evidence import fragment_evidence
    from gd_assets.assets.judgement import fragment_judgement

    evidence = orchestrate.worker_run_config(fragment_evidence, {"ops": {"x": {}}}, "vllm", 2)
    assert evidence["execution"] == {"config": {"in_process": {}}}
    assert evidence["ops"] == {"x": {}}
    assert evidence["resources"] == {"retrieval_index": {"config": {"threads": max(1, (os.cpu_count() or 1) // 2)}}}
    judgement = orchestrate.worker_run_config(fragment_judgement, None, "vllm", 2)
    assert judgement["resources"] == {"judge_backend": {"config": {"name": "vllm"}}}
    assert "resources" not in orchestrate.worker_run_config(fragment_judgement, None, None, 2)
    elsewhere = orchestrate.worker_run_config(fragment_evidence, None, None, 2, local=False)
    assert "resources" not in elsewhere, "a pod's cores are its own: no thread cap from this machine's"


def test_the_queue_limits_fragment_runs_and_serialises_each_worker(gd_home, monkeypatch):
    monkeypatch.setenv("GD_ASSETS_WORKER_LIMIT", "3")
    instance = orchestrate.instance()
    coordinator = instance.run_coordinator
    assert type(coordinator).__name__ == "PromptRunCoordinator"   # Dagster's queue, its backfill loop prompt
    import dagster._daemon.controller as controller

    assert controller.DEFAULT_DAEMON_INTERVAL_SECONDS == prompt_queue.BACKFILL_TICK_SECONDS
    limits = {(limit["key"], str(limit.get("value"))): limit["limit"] for limit in coordinator.get_run_queue_config().tag_concurrency_limits}
    assert limits[(home.WORKER_TAG, "None")] == 3
    assert limits[(home.WORKER_TAG, str({"applyLimitPerUniqueValue": True}))] == 1
    workspace = home.workspace_file().read_text()
    assert "module_name: gd_assets.definitions" in workspace and f"location_name: {home.LOCATION}" in workspace
    for bad in ("0", "many"):
        monkeypatch.setenv("GD_ASSETS_WORKER_LIMIT", bad)
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        with pytest.raises(ValueError, match="GD_ASSETS_WORKER_LIMIT"):
            home.ensure_dagster_home()
        with pytest.raises(orchestrate.PipelineError, match="at least 1"):
            orchestrate.check_settings()
        errors = subprocess.run([sys.executable, "-m", "gd_assets.cli", "status", "crowd"], cwd=REPO, capture_output=True,
                                text=True, env={k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"})
        assert errors.returncode == 1 and "GD_ASSETS_WORKER_LIMIT" in errors.stderr
        assert "Traceback" not in errors.stderr


def test_a_fresh_daemon_heartbeat_is_used_and_a_stale_one_is_not(gd_home):
    instance = orchestrate.instance()
    queue = RunQueue(instance)
    assert not queue.daemon_running()
    instance.add_daemon_heartbeat(DaemonHeartbeat(time.time() - 600, QUEUE_DAEMON, "old", None))
    assert not queue.daemon_running(), "a daemon that stopped ten minutes ago dequeues nothing"
    instance.add_daemon_heartbeat(DaemonHeartbeat(time.time(), QUEUE_DAEMON, "gd-assets-dev", None))
    assert queue.daemon_running()


def test_runs_a_killed_command_left_queued_are_closed_not_run_later(gd_home):
    """A command killed while its runs wait in the queue: the next command (or `resume`) fails them, so
    a daemon started later does not run them beside that command's own."""
    instance = orchestrate.instance()
    instance.add_dynamic_partitions("fragments", ["p/a", "p/b"])
    queue = RunQueue(instance)
    try:
        [run_id] = queue.submit(dg.AssetKey("fragment_evidence"), [("p/a", "p/b")], {}, {home.WORKER_TAG: "w-0"})
    finally:
        queue.close()
    run = instance.get_run_by_id(run_id)
    assert run.status == dg.DagsterRunStatus.QUEUED and run.tags[PID_TAG] == str(os.getpid())
    assert orchestrate.close_dead_runs(instance) == 0, "its command is alive"
    gone = subprocess.Popen(["true"])
    gone.wait()
    instance.add_run_tags(run_id, {PID_TAG: str(gone.pid)})
    assert orchestrate.close_dead_runs(instance) == 1
    assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.FAILURE
