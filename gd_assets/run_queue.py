"""Fragment runs through the instance's run queue, so that the run launcher, not this process, runs them.

`analyze --workers K` submits each worker's contiguous blocks of keys as queued runs tagged with its
worker (`home.WORKER_TAG`): the queue runs one block per worker at a time and at most
GD_ASSETS_WORKER_LIMIT fragment runs at once. A daemon dequeues them: the one of `gd-assets dev`
when its heartbeat is fresh, else one started here for as long as it is needed. Its run launcher
runs them: local processes by default, pods or celery workers with the `dagster.yaml` the README
gives. A queued run runs in one process (in-process executor) and records that process's id, so a
killed worker reads as dead (`gd_assets.status`) and `resume` redoes only its unfinished keys.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

import dagster as dg
from dagster._core.events import DagsterEventType
from dagster._core.execution.submit_asset_runs import submit_asset_run
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import InProcessWorkspaceLoadTarget

from gd_assets import home
from gd_assets.status import PID_TAG, dead_runs, run_tags, step_failure

DAEMON_FRESH_SECONDS = 45   # a queue daemon heartbeats every 30 s: older than this, none is running
POLL_SECONDS = 1.0
STOP_SECONDS = 30
FINISHED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}
QUEUE_DAEMON = "QUEUED_RUN_COORDINATOR"
log = logging.getLogger(__name__)


class WorkerError(Exception):
    """A queued run failed, its worker died, or the daemon that dequeues them stopped."""


def die_with_parent() -> None:
    """Runs in a child's process before exec (the daemon, `gd-assets serve`'s serving child): SIGTERM it
    when the process that started it dies (even by kill -9), so none outlives what it serves."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class RunQueue:
    """Submits fragment runs to the queue and waits for them; owns the daemon it had to start."""

    def __init__(self, instance: dg.DagsterInstance):
        self.instance = instance
        self.daemon: subprocess.Popen | None = None
        self.daemon_log: Path | None = None
        self._workspace: WorkspaceProcessContext | None = None

    def workspace(self) -> WorkspaceProcessContext:
        """The code location loaded in this process under the name the daemon loads it by
        (`home.LOCATION`), so that a run created here is one the daemon can launch."""
        if self._workspace is None:
            origin = InProcessCodeLocationOrigin(
                LoadableTargetOrigin(executable_path=sys.executable, module_name="gd_assets.definitions"),
                location_name=home.LOCATION)
            self._workspace = WorkspaceProcessContext(self.instance, InProcessWorkspaceLoadTarget(origin))
        return self._workspace

    def submit(self, asset: dg.AssetKey, blocks: Sequence[tuple[str, str]], run_config: Mapping,
               tags: Mapping[str, str]) -> list[str]:
        """One queued run of `asset` per (first, last) block of fragment keys; returns their run ids."""
        workspace = self.workspace()
        ids = []
        for first, last in blocks:
            request = dg.RunRequest(asset_selection=[asset], run_config=dict(run_config), tags={
                **tags, **run_tags(), "dagster/asset_partition_range_start": first,
                "dagster/asset_partition_range_end": last,
                "dagster/max_retries": "0"})  # a failure is reported to the user, who resumes
            run = asyncio.run(submit_asset_run(None, request, len(ids), self.instance, workspace,
                                               workspace.create_request_context(), {}, None, log))
            ids.append(run.run_id)
        return ids

    def daemon_running(self) -> bool:
        if self.daemon is not None:
            return True
        beat = self.instance.get_daemon_heartbeats().get(QUEUE_DAEMON)
        return beat is not None and beat.timestamp > time.time() - DAEMON_FRESH_SECONDS

    def start_daemon(self) -> None:
        """`dagster-daemon run` on this instance and workspace, its output in the instance's folder."""
        self.daemon_log = home.ensure_dagster_home() / "daemon.log"
        with self.daemon_log.open("wb") as out:
            self.daemon = subprocess.Popen(
                [sys.executable, "-m", "dagster._daemon", "run", "-w", str(home.workspace_file())],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)

    def wait(self, run_ids: Sequence[str]) -> None:
        """Until every run has finished; starts a daemon while queued runs have none to dequeue them.
        After a failure (or a dead worker) the runs still queued are cancelled and the running ones
        finish, so nothing is left behind; then WorkerError names the first failure."""
        pending, failures, died = set(run_ids), [], {}
        while pending:
            for run in dead_runs(self.instance):
                if run.run_id in pending:
                    died[run.run_id] = f"run {run.run_id[:8]}: its worker (pid {run.tags.get(PID_TAG)}) died"
                    self.instance.report_run_failed(run)
            runs = self.instance.get_runs(dg.RunsFilter(run_ids=list(pending)))
            for run in runs:
                if run.status in FINISHED:
                    pending.discard(run.run_id)
                    if run.status != dg.DagsterRunStatus.SUCCESS:
                        failures.append(died.get(run.run_id) or self.failure(run))
            if failures and pending:
                self.cancel_queued(list(pending))
            elif any(run.status == dg.DagsterRunStatus.QUEUED for run in runs) and not self.daemon_running():
                self.start_daemon()
            if pending and self.daemon is not None and self.daemon.poll() is not None:
                raise WorkerError(f"the run queue's daemon exited with {self.daemon.returncode}; "
                                  f"its log: {self.daemon_log}")
            if pending:
                time.sleep(POLL_SECONDS)
        if failures:
            raise WorkerError(failures[0])

    def failure(self, run: dg.DagsterRun) -> str:
        """One line on why `run` failed: its step's error, else its worker's death, else the run's own."""
        steps = self.instance.all_logs(run.run_id, of_type=DagsterEventType.STEP_FAILURE)
        step = step_failure(entry.dagster_event for entry in steps if entry.dagster_event)
        if step:
            return f"run {run.run_id[:8]}: {step}"
        for entry in self.instance.all_logs(run.run_id, of_type=DagsterEventType.ENGINE_EVENT):
            if "execution process" in entry.message and ("terminated" in entry.message or "exited" in entry.message):
                # the code server saw its worker die ("Run execution process for ... was terminated by signal 9")
                return f"run {run.run_id[:8]}: its worker died: {entry.message.split('] ', 1)[-1].split('. ')[0]}"
        for entry in self.instance.all_logs(run.run_id, of_type=DagsterEventType.RUN_FAILURE):
            return f"run {run.run_id[:8]}: {entry.message or 'failed'}"
        return f"run {run.run_id[:8]} {run.status.value.lower()}"

    def cancel_queued(self, run_ids: Sequence[str]) -> None:
        """Take this command's runs that have not started off the queue (they would run with no one waiting)."""
        if not run_ids:
            return
        for run in self.instance.get_runs(dg.RunsFilter(run_ids=list(run_ids), statuses=[dg.DagsterRunStatus.QUEUED])):
            self.instance.run_coordinator.cancel_run(run.run_id)

    def close(self) -> None:
        """Stop the daemon this queue started (after its runs finished): SIGTERM, then SIGKILL."""
        if self._workspace is not None:
            self._workspace.__exit__(None, None, None)
            self._workspace = None
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.terminate()
            try:
                self.daemon.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
        self.daemon = None


def worker_tags(count: int) -> list[dict[str, str]]:
    """The tags of `count` workers: one value each, new for every command, so the queue serialises a
    worker's own blocks and runs different workers side by side."""
    batch = uuid.uuid4().hex[:8]
    return [{home.WORKER_TAG: f"{batch}-{i}"} for i in range(count)]
