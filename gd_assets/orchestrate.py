"""Running the pipeline: the command line, benches and evaluations materialise through here only.

Every run is a real Dagster run recorded in the data home's instance. What to redo comes from the
one freshness rule (`gd_assets.freshness`); fragment runs cover contiguous blocks of partition keys.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

import dagster as dg
from dagster._core.launcher import DefaultRunLauncher

from corpora_build.assets import ASSETS as CORPUS_ASSETS
from corpora_build.assets import TABLE_ASSETS, CorpusSource
from corpora_build.checks import CHECKS
from gd_assets import broker, home, lake, shared_corpus, store
from gd_assets.assets.evidence import fragment_evidence
from gd_assets.assets.fragments import fragments
from gd_assets.assets.judgement import fragment_judgement
from gd_assets.assets.maintenance import store_maintenance
from gd_assets.assets.migration import default_paths, project_migration
from gd_assets.assets.project_symbols import project_symbols
from gd_assets.assets.rewrite import fragment_rewrite
from gd_assets.assets.sources import project_sources
from gd_assets.assets.verdict import project_verdict
from gd_assets.assets.verification import project_verification
from gd_assets.core.engines import GodotNotFound, find_godot
from gd_assets.core.ingest import default_project_name, project_slug
from gd_assets.core.sandbox import SandboxUnavailable, find_sandbox
from gd_assets.definitions import project_assets, project_resources
from gd_assets.freshness import (
    current_evidence_inputs,
    judge_backend,
    rewrite_version,
    stale_evidence,
    stale_judgements,
    stale_rewrites,
)
from gd_assets.partitions import fragments_partitions, project_of_key, projects_partitions
from gd_assets.run_queue import RunQueue, WorkerError, worker_tags
from gd_assets.status import close_dead_runs, fragment_states, run_tags, step_failure
from gd_assets.workers import check_settings as check_worker_settings

UNFINISHED = ("waiting", "failed", "stopped")


class PipelineError(Exception):
    """A run failed: the message names the step and the cause, in one line."""


def check_settings() -> None:
    """The settings every run reads, checked before a command starts one: a one-line error, not a failed run."""
    store.check()
    try:
        home.worker_limit()
        check_worker_settings()
    except (ValueError, broker.BrokerError) as error:
        raise PipelineError(str(error)) from error


def instance() -> dg.DagsterInstance:
    return home.dagster_instance()


def _failure_message(result: dg.ExecuteInProcessResult) -> str:
    return step_failure(result.all_events) or "the run failed"


def contiguous_blocks(all_keys: Sequence[str], wanted: Sequence[str],
                      skippable: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(first, last) ranges over `all_keys` (the order partitions were added) covering exactly `wanted`;
    a run of `skippable` keys (ones the asset passes over) between two wanted keys does not split a range."""
    want, skip = set(wanted), set(skippable)
    blocks: list[tuple[str, str]] = []
    start = prev = None
    for key in all_keys:
        if key in want:
            start = key if start is None else start
            prev = key
        elif start is not None and key not in skip:
            blocks.append((start, prev))
            start = None
    if start is not None:
        blocks.append((start, prev))
    return blocks


def materialize(selection: Sequence, *, partition_key: str | None = None, fragment_keys: Sequence[str] | None = None,
                skippable: Sequence[str] = (), graph: Sequence | None = None, resources: dict | None = None, run_config: dict | None = None,
                log_level: str = "WARNING", raise_on_error: bool = True) -> list[dg.ExecuteInProcessResult]:
    """Materialise `selection` (assets of `graph`, the project assets by default) as recorded runs:
    one run, or one per contiguous block of `fragment_keys`. The console shows `log_level` and
    up (everything with GD_ASSETS_VERBOSE); the UI keeps every log."""
    config = dict(run_config or {})
    level = "DEBUG" if os.environ.get("GD_ASSETS_VERBOSE") else log_level
    config["loggers"] = {"console": {"config": {"log_level": level}}}
    inst = instance()
    runs: list[dict] = [{"partition_key": partition_key, "tags": {}}]
    if fragment_keys is not None:
        blocks = contiguous_blocks(inst.get_dynamic_partitions(fragments_partitions.name), fragment_keys, skippable)
        runs = [{"partition_key": None, "tags": {"dagster/asset_partition_range_start": first,
                                                 "dagster/asset_partition_range_end": last}} for first, last in blocks]
    results = []
    for run in runs:
        with store.sole_writer():   # an in-process run: this process writes the store
            result = dg.materialize(
                assets=list(graph or project_assets), selection=list(selection), partition_key=run["partition_key"],
                instance=inst, resources=resources or dict(project_resources), run_config=config,
                tags={**run_tags(), **run["tags"]}, raise_on_error=False)
        results.append(result)
        if not result.success:
            if raise_on_error:
                raise PipelineError(_failure_message(result))
            break
    return results


# --- the project pipeline -----------------------------------------------------------------------


def project_name(source: str, project: str | None) -> str:
    try:
        return project_slug(project) if project else default_project_name(source)
    except ValueError as error:
        raise PipelineError(f"{error}; pass --project NAME") from error


def absolute_source(source: str) -> str:
    if "://" in source or source.startswith("git@"):
        return source
    return str(Path(source).expanduser().resolve())


def ingest_and_slice(source: str, project: str | None = None) -> str:
    """project_sources + fragments + project_symbols for a source, in one run; returns the project name."""
    name = project_name(source, project)
    instance().add_dynamic_partitions(projects_partitions.name, [name])
    materialize([project_sources, fragments, project_symbols], partition_key=name,
                run_config={"ops": {"project_sources": {"config": {"source": absolute_source(source)}}}})
    return name


def with_unmaterialised(project: str, asset: str, keys: list[str]) -> list[str]:
    """`keys` plus the project's fragments whose partition is missing or failed in the instance
    (a run can die after committing rows and before recording them), in file order."""
    frags = store.project_fragments(project)["key"].to_list()
    states = fragment_states(instance(), asset, frags)
    wanted = set(keys) | {k for k in frags if states[k] in UNFINISHED}
    return [k for k in frags if k in wanted]


def _fragment_run(asset: dg.AssetsDefinition, keys: list[str], run_config: dict | None = None,
                  judge: str | None = None, skippable: Sequence[str] = (), workers: int = 1) -> int:
    if keys and broker.url() and workers > 1:
        with worker_queue() as queue:
            _in_workers(queue, asset, keys, run_config, judge, skippable, workers)
    elif keys and workers > 1 and len(keys) >= 2 * workers:
        with worker_queue() as queue:
            _in_workers(queue, asset, keys, run_config, judge, skippable, workers)
    elif keys:
        resources = {**project_resources, "judge_backend": judge_backend(judge)}
        materialize([asset], fragment_keys=keys, skippable=skippable, resources=resources, run_config=run_config)
    return len(keys)


def split_contiguous(keys: Sequence[str], parts: int) -> list[list[str]]:
    """`keys` cut into `parts` contiguous runs of nearly equal length (no empty one)."""
    size, extra = divmod(len(keys), parts)
    cuts, start = [], 0
    for i in range(parts):
        end = start + size + (i < extra)
        if end > start:
            cuts.append(list(keys[start:end]))
        start = end
    return cuts


_queue: RunQueue | None = None


@contextmanager
def worker_queue() -> Iterator[RunQueue]:
    """The run queue of this command: every stage submits to it, and a daemon it had to start serves
    them all and stops when the outermost `with` ends."""
    global _queue
    if _queue is not None:
        yield _queue
        return
    _queue = RunQueue(instance())
    try:
        yield _queue
    finally:
        _queue.close()
        _queue = None


CELERY_BLOCK = 1024   # fragments in one step on a Celery worker: a lost worker's step is redone from its last batch


def worker_run_config(asset: dg.AssetsDefinition, run_config: dict | None, judge: str | None, workers: int,
                      local: bool = True, celery: bool = False) -> dict:
    """A queued run's config: one process (its id is what tells a dead worker) or, with a broker, the
    code location's Celery executor; the judge this command was asked for; and, when the runs share
    this machine (`local`), 1/`workers` of its cores."""
    config = {**(run_config or {}), "loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    if not celery:
        config["execution"] = {"config": {"in_process": {}}}
    resources = {}
    if local and "retrieval_index" in asset.required_resource_keys:
        resources["retrieval_index"] = {"config": {"threads": max(1, (os.cpu_count() or 1) // workers)}}
    if judge and "judge_backend" in asset.required_resource_keys:
        resources["judge_backend"] = {"config": {"name": judge}}
    return {**config, "resources": resources} if resources else config


def _in_workers(queue: RunQueue, asset: dg.AssetsDefinition, keys: list[str], run_config: dict | None,
                judge: str | None, skippable: Sequence[str], workers: int) -> None:
    """`keys` cut into `workers` contiguous ranges, each submitted as its worker's queued runs (one per
    contiguous block); waits for all. A dead or failed worker leaves its range for `resume`. With a
    broker the ranges are blocks of at most CELERY_BLOCK fragments, `workers` of them at once, each
    run's step on whichever Celery worker takes it."""
    inst = queue.instance
    close_dead_runs(inst)   # runs a killed command left queued would run beside these
    order = inst.get_dynamic_partitions(fragments_partitions.name)
    celery = broker.url() is not None
    local = isinstance(inst.run_launcher, DefaultRunLauncher) and not celery   # its runs are processes of this machine
    config = worker_run_config(asset, run_config, judge, workers, local, celery)
    if celery:   # every worker gets a block at once, and none is longer than CELERY_BLOCK
        size = min(CELERY_BLOCK, -(-len(keys) // workers))
        chunks = [keys[i:i + size] for i in range(0, len(keys), size)]
    else:
        chunks = split_contiguous(keys, workers)
    slots = worker_tags(workers)
    run_ids: list[str] = []
    try:
        for i, chunk in enumerate(chunks):
            run_ids += queue.submit(asset.key, contiguous_blocks(order, chunk, skippable), config, slots[i % workers])
        queue.wait(run_ids)
    except WorkerError as error:
        raise PipelineError(f"{asset.key.to_user_string()}: {error}; "
                            f"`gd-assets resume {project_of_key(keys[0])}` finishes what it left") from error
    except BaseException:
        queue.cancel_queued(run_ids)
        raise


def run_evidence(project: str, request: str | None = None, workers: int = 1) -> int:
    """Evidence for the fragments whose evidence is stale or unrecorded; returns how many."""
    keys = with_unmaterialised(project, "fragment_evidence", stale_evidence(project, current_evidence_inputs(request)))
    config = {"ops": {"fragment_evidence": {"config": {"request": request}}}} if request else None
    return _fragment_run(fragment_evidence, keys, config, workers=workers)


def run_judgement(project: str, judge: str | None = None, workers: int = 1) -> int:
    """Judgements for the fragments whose judgement is stale or unrecorded; returns how many."""
    stale = stale_judgements(project, judge_backend(judge).identity())
    return _fragment_run(fragment_judgement, with_unmaterialised(project, "fragment_judgement", stale), judge=judge,
                         workers=workers)


def current_rewrite_version() -> str:
    """Today's rewrite version: the rules with the corpus they read."""
    return rewrite_version(project_resources["retrieval_index"].corpus_version())


def run_rewrite(project: str) -> int:
    """Rewrites for the judged fragments whose rewrite is stale or unrecorded; returns how many."""
    version = current_rewrite_version()
    judged = store.current_judgements(project)
    needed = [k for k, migration in judged.items() if migration]
    store.drop_rewrites_except(project, needed)
    keys = [k for k in with_unmaterialised(project, "fragment_rewrite", stale_rewrites(project, version))
            if judged.get(k)]
    # The judged fragments that need nothing ride along (the asset passes over them): one run per
    # stretch of the project rather than one per scattered key.
    return _fragment_run(fragment_rewrite, keys, skippable=[k for k, migration in judged.items() if not migration])


def run_verdict(project: str) -> None:
    materialize([project_verdict], partition_key=project)


def run_store_maintenance(keep: str | None = None) -> dict:
    """Compact the analysis store (`store_maintenance`); returns what it did."""
    if keep:
        lake.check_span(keep)
    config = {"ops": {"store_maintenance": {"config": {"keep": keep}}}} if keep else None
    result = materialize([store_maintenance], run_config=config)[0]
    materialization = result.asset_materializations_for_node("store_maintenance")[0]
    return {k: v.value for k, v in materialization.metadata.items()}


def run_migration(project: str, out: str | None = None, patch: str | None = None) -> dict:
    """Write the migrated copy, the patch and the summary; returns the summary."""
    config = {k: v for k, v in (("out", out), ("patch", patch)) if v}
    materialize([project_migration], partition_key=project,
                run_config={"ops": {"project_migration": {"config": config}}} if config else None)
    patch_path = Path(patch).expanduser().resolve() if patch else default_paths(project)[1]
    return json.loads(patch_path.with_suffix(".json").read_text())


def analyze(source: str, project: str | None = None, request: str | None = None, judge: str | None = None,
            on_stage: Callable[[str, str], None] | None = None, workers: int = 1) -> str:
    """The whole pipeline: sources -> fragments -> evidence -> judgement -> rewrite -> verdict; redoes only what is stale.

    `on_stage(stage, project)` is told before each fragment stage and the verdict (progress reporting).
    `workers` > 1 runs evidence and judgement as that many queued runs at once, over contiguous key
    ranges (`gd_assets.run_queue`)."""
    if workers < 1:
        raise PipelineError(f"--workers {workers}: at least 1")
    judge_backend(judge).identity()  # a judge with missing options fails here, before any work
    shared_corpus.sync()   # with an object store: the published corpus, as the workers read it
    name = ingest_and_slice(source, project)
    tell = on_stage or (lambda stage, project: None)
    with worker_queue() if workers > 1 else nullcontext():
        tell("evidence", name)
        run_evidence(name, request, workers)
        tell("judgement", name)
        run_judgement(name, judge, workers)
    tell("rewrite", name)
    run_rewrite(name)
    tell("verdict", name)
    run_verdict(name)
    if store.backend() == "ducklake":
        run_store_maintenance()   # this analysis's commits wrote many small Parquet files
    return name


def migrate(source: str, project: str | None = None, out: str | None = None, patch: str | None = None,
            judge: str | None = None, on_stage: Callable[[str, str], None] | None = None) -> tuple[str, dict]:
    """Analyse (only what is stale), then write the migrated copy; the source is never written to."""
    name = analyze(source, project, judge=judge, on_stage=on_stage)
    return name, run_migration(name, out, patch)


def verify(project: str, godot: str | None = None, run: bool = False, godot3: str | None = None,
           frames: int | None = None, scene_frames: int | None = None, play: str | None = None,
           watch: bool = True) -> dict:
    """Run Godot 4 on a scratch copy of the project's migrated copy (`project_verification`), and with `run`
    the game itself beside the original in Godot 3 (and, with `watch`, both played rendered with the same input,
    `play` or a seeded player); returns its row. Godot runs the copy's code (in a sandbox), so only an explicit
    command gets here."""
    if store.one_row("migrations", project) is None:
        raise PipelineError(f"project {project!r} has no migrated copy: run `gd-assets migrate` first")
    try:
        find_godot(godot)
        find_sandbox()
    except (GodotNotFound, SandboxUnavailable) as error:
        raise PipelineError(str(error)) from error
    if play and not Path(play).is_file():
        raise PipelineError(f"{play}: no such input script")
    config = {k: v for k, v in {"godot": godot, "godot3": godot3, "run": run or None, "frames": frames,
                                "scene_frames": scene_frames, "play": str(Path(play).resolve()) if play else None,
                                "watch": None if watch else False}.items() if v is not None and v != ""}
    materialize([project_verification], partition_key=project,
                run_config={"ops": {"project_verification": {"config": config}}} if config else None)
    row = store.one_row("verifications", project)
    return {**row, "figures": json.loads(row["figures"]), "problems": json.loads(row["problems"]),
            "run": json.loads(row["run"]) if row.get("run") else None}


def resume(project: str, judge: str | None = None) -> dict:
    """Close dead runs, then materialise only missing or failed fragments (evidence, judgement, rewrite), then the verdict."""
    inst = instance()
    closed = close_dead_runs(inst)
    keys = store.project_fragments(project)["key"].to_list()
    if not keys:
        raise PipelineError(f"project {project!r} has no fragments: run `gd-assets analyze` first")
    todo = {}
    for asset in (fragment_evidence, fragment_judgement, fragment_rewrite):
        name = asset.key.to_user_string()
        judged = store.current_judgements(project) if asset is fragment_rewrite else {}
        scope = [k for k, migration in judged.items() if migration] if asset is fragment_rewrite else keys
        states = fragment_states(inst, name, scope)
        skippable = [k for k, migration in judged.items() if not migration]
        todo[name] = _fragment_run(asset, [k for k in scope if states[k] in UNFINISHED], judge=judge,
                                   skippable=skippable)
    run_verdict(project)
    return {"closed_runs": closed, **todo}


def forget(project: str) -> int:
    """Drop a project's fragment partitions and rows (its runs and events stay in the instance's history)."""
    inst = instance()
    prefix = project + "/"
    keys = [k for k in inst.get_dynamic_partitions(fragments_partitions.name) if k.startswith(prefix)]
    for key in keys:
        inst.delete_dynamic_partition(fragments_partitions.name, key)
    if inst.has_dynamic_partition(projects_partitions.name, project):
        inst.delete_dynamic_partition(projects_partitions.name, project)
    store.delete_project(project)
    return len(keys)


# --- the corpus ---------------------------------------------------------------------------------


def build_corpus(source: str = "auto", include_index: bool = True) -> dg.ExecuteInProcessResult:
    """Materialise the corpus assets and run their checks as one run; the result carries the check outcomes."""
    assets = CORPUS_ASSETS if include_index else TABLE_ASSETS
    return materialize(assets, graph=[*assets, *CHECKS], resources={"corpus_source": CorpusSource(source=source)},
                       log_level="INFO", raise_on_error=False)[0]
