"""Per-fragment progress from Dagster's partition status: done, failed, stopped, running, waiting.

A run whose process was killed stays STARTED forever in the instance, so every run this project
launches carries its process id and host; a started run whose process is gone is *dead*, and its
unfinished fragments read `stopped`. `close_dead_runs` marks such runs failed (never deletes them:
deleting a run drops its materialisation events while status caches still count them).
"""

from __future__ import annotations

import os
import socket
from collections import Counter
from collections.abc import Iterable

import dagster as dg
from dagster._core.events import DagsterEvent, DagsterEventType
from dagster._core.storage.partition_status_cache import AssetPartitionStatus

from gd_assets.home import WORKER_TAG
from gd_assets.partitions import fragments_partitions

PID_TAG = "gd_assets/pid"
HOST_TAG = "gd_assets/host"
CELERY_TAG = "gd_assets/celery_worker"   # the Celery worker running the run's step (`gd_assets.workers`)
CELERY_ENV = "GD_ASSETS_CELERY_WORKER"   # set by `gd-assets worker` to its node name
EARLIER_TAG = "gd_assets/celery_earlier"  # workers that held the run's step before it (died, cut off)
STATES = ("done", "failed", "stopped", "running", "waiting")
STAGES = ("fragment_evidence", "fragment_judgement", "fragment_rewrite")  # the per-fragment assets, in order
# A queued run carries the id of the command that submitted it, then its worker's (`claim_run`): queued
# runs whose command died are dead too, or a later daemon would run them beside that command's retry.
ACTIVE = [dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.NOT_STARTED,
          dg.DagsterRunStatus.QUEUED]


def run_tags() -> dict[str, str]:
    """Tags that let a later `status` tell whether the launching process is still alive."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def step_failure(events: Iterable[DagsterEvent]) -> str | None:
    """"<step>: <the user's error>" for the first step failure among `events`; None if there is none."""
    for event in events:
        if event.is_step_failure and event.step_failure_data:
            error = event.step_failure_data.error
            user = error.cause if error and error.cause else error
            return f"{event.step_key}: {user.message.strip() if user else 'failed'}"
    return None


def claim_run(context: dg.AssetExecutionContext) -> list[str]:
    """Record the process running a queued run (`gd_assets.run_queue`): it is not the one that created it.
    Only those runs run in one process; a UI run's steps are children of its worker. Returns the keys
    to do: the run's, less those this run already recorded (a step the broker handed to a second worker
    after the first died redoes only what the first did not finish)."""
    tags = run_tags()
    if os.environ.get(CELERY_ENV):
        tags[CELERY_TAG] = os.environ[CELERY_ENV]
        before = context.run.tags.get(CELERY_TAG)
        if before and before != tags[CELERY_TAG]:
            tags[EARLIER_TAG] = ",".join(filter(None, [context.run.tags.get(EARLIER_TAG), before]))
    if WORKER_TAG in context.run.tags and any(context.run.tags.get(k) != v for k, v in tags.items()):
        context.instance.add_run_tags(context.run_id, tags)
    keys = list(context.partition_keys)
    done = recorded_in_run(context.instance, context.run_id, context.asset_key)
    if done:
        context.log.info(f"{len(done)} of {len(keys)} fragments were recorded by an earlier attempt of this step")
    return [k for k in keys if k not in done]


def recorded_in_run(instance: dg.DagsterInstance, run_id: str, asset_key: dg.AssetKey) -> set[str]:
    """Partitions of `asset_key` that run `run_id` has recorded materialisations for."""
    done: set[str] = set()
    cursor = None
    while True:
        page = instance.get_records_for_run(run_id, cursor=cursor, of_type=DagsterEventType.ASSET_MATERIALIZATION,
                                            limit=5000)
        for record in page.records:
            event = record.event_log_entry.dagster_event
            if event is not None and event.asset_key == asset_key and event.partition:
                done.add(event.partition)
        if not page.has_more:
            return done
        cursor = page.cursor


def _alive(run: dg.DagsterRun) -> bool:
    pid, host = run.tags.get(PID_TAG), run.tags.get(HOST_TAG)
    if pid is None or host != socket.gethostname() or CELERY_TAG in run.tags:
        # launched elsewhere, or a step the broker hands to another worker if this one dies
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def dead_runs(instance: dg.DagsterInstance) -> list[dg.DagsterRun]:
    return [r for r in instance.get_runs(filters=dg.RunsFilter(statuses=ACTIVE)) if not _alive(r)]


def close_dead_runs(instance: dg.DagsterInstance) -> int:
    """Mark runs whose process died as failed, so their fragments count as failed and get resumed."""
    runs = dead_runs(instance)
    for run in runs:
        instance.report_run_failed(run)
    return len(runs)


def _run_keys(run: dg.DagsterRun, order: list[str]) -> set[str]:
    start, end = run.tags.get("dagster/asset_partition_range_start"), run.tags.get("dagster/asset_partition_range_end")
    if start in order and end in order:
        return set(order[order.index(start): order.index(end) + 1])
    key = run.tags.get("dagster/partition")
    return {key} if key else set()


def worker_name(run: dg.DagsterRun) -> str | None:
    """Who ran a fragment block: its Celery worker, or the host and process id of a local worker."""
    if CELERY_TAG in run.tags:
        return run.tags[CELERY_TAG]
    if WORKER_TAG in run.tags and PID_TAG in run.tags:
        return f"{run.tags.get(HOST_TAG, '?')}:{run.tags[PID_TAG]}"
    return None


def worker_blocks(instance: dg.DagsterInstance, project: str, limit: int = 2000) -> list[dict]:
    """The fragment blocks of `project`'s runs (latest first) with the worker that ran or runs each,
    the workers that held it before, and the run's status: which worker had what."""
    order = instance.get_dynamic_partitions(fragments_partitions.name)
    blocks = []
    for run in instance.get_runs(limit=limit):
        start = run.tags.get("dagster/asset_partition_range_start") or run.tags.get("dagster/partition") or ""
        worker = worker_name(run)
        if not worker or not start.startswith(project + "/"):
            continue
        blocks.append({"worker": worker, "stage": ",".join(sorted(a.path[-1].removeprefix("fragment_")
                                                                  for a in run.asset_selection or ())),
                       "first": start, "fragments": len(_run_keys(run, order)), "status": run.status.value,
                       "earlier": [w for w in run.tags.get(EARLIER_TAG, "").split(",") if w],
                       "run_id": run.run_id})
    return blocks


def fragment_states(instance: dg.DagsterInstance, asset: str, keys: list[str]) -> dict[str, str]:
    """State of each fragment key for `asset` (the judgement is what "done" means to a user)."""
    statuses = instance.get_status_by_partition(dg.AssetKey(asset), keys, fragments_partitions) or {}
    order = instance.get_dynamic_partitions(fragments_partitions.name)
    stopped: set[str] = set()
    for run in dead_runs(instance):
        stopped |= _run_keys(run, order)
    states = {}
    for key in keys:
        status = statuses.get(key)
        if status == AssetPartitionStatus.MATERIALIZED:
            states[key] = "done"
        elif status == AssetPartitionStatus.FAILED:
            states[key] = "failed"
        elif status == AssetPartitionStatus.IN_PROGRESS:
            states[key] = "stopped" if key in stopped else "running"
        else:
            states[key] = "waiting"
    return states


def progress_states(instance: dg.DagsterInstance, keys: list[str]) -> tuple[dict[str, str], dict[str, Counter]]:
    """Each fragment's state as a user reads it, and the states of each per-fragment stage. The
    judgement says "done"; a fragment it has not reached yet reads as the evidence does while that
    stage is at it (running, stopped, failed), and as running once its evidence is recorded while a
    live run is still going, so a long analysis never reads "0 done, 0 running"."""
    by_stage = {asset: fragment_states(instance, asset, keys) for asset in STAGES}
    live = any(_alive(r) for r in instance.get_runs(filters=dg.RunsFilter(statuses=ACTIVE), limit=50))
    states = {}
    for key in keys:
        state, evidence = by_stage["fragment_judgement"][key], by_stage["fragment_evidence"][key]
        if state == "waiting" and evidence != "waiting":
            state = evidence if evidence != "done" else ("running" if live else "waiting")
        states[key] = state
    return states, {asset.removeprefix("fragment_"): Counter(s.values()) for asset, s in by_stage.items()}


def materialization_counts(instance: dg.DagsterInstance, asset: str, keys: list[str]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    cursor = None
    while True:
        result = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=keys), limit=1000, cursor=cursor)
        counts.update(r.partition_key for r in result.records)
        if not result.has_more:
            break
        cursor = result.cursor
    return {k: counts.get(k, 0) for k in keys}
