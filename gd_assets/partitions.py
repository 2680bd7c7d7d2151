"""The `projects` and `fragments` dynamic partitions; one fragment partition per fragment key
(`gd_assets.core.keys`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import dagster as dg

from gd_assets.core.keys import fragment_key, project_of_key, unique_keys

__all__ = ["FIRST_BATCH", "fragment_batches", "fragment_key", "fragments_partitions", "project_of_key",
           "projects_partitions", "report_batch", "sync_fragment_partitions", "unique_keys"]

FIRST_BATCH = 64
projects_partitions = dg.DynamicPartitionsDefinition(name="projects")
fragments_partitions = dg.DynamicPartitionsDefinition(name="fragments")


def sync_fragment_partitions(instance: dg.DagsterInstance, project: str, keys: list[str]) -> tuple[int, int]:
    """Register the project's current fragment keys and remove those that disappeared.

    Returns (added, removed).
    """
    existing = set(instance.get_dynamic_partitions(fragments_partitions.name))
    prefix = project + "/"
    wanted = set(keys)
    new = [k for k in keys if k not in existing]
    gone = [k for k in existing if k.startswith(prefix) and k not in wanted]
    if new:
        instance.add_dynamic_partitions(fragments_partitions.name, new)
    for key in gone:
        instance.delete_dynamic_partition(fragments_partitions.name, key)
    return len(new), len(gone)


def fragment_batches(keys: list[str], largest: int):
    """A fragment run's keys in batches that double from FIRST_BATCH up to `largest`: the first results
    are recorded soon, and a long run pays each batch's fixed costs (a store read and write, an event-log
    read, an event-log transaction) once per `largest` fragments. A kill loses at most the batch in hand
    (the evidence step: the one it commits and the one it searches meanwhile)."""
    size, start = min(FIRST_BATCH, largest), 0
    while start < len(keys):
        yield keys[start:start + size]
        start += size
        size = min(size * 2, largest)


def report_batch(context: dg.AssetExecutionContext,
                 materializations: Sequence[dg.AssetMaterialization]) -> Iterator[dg.AssetMaterialization]:
    """A batch's partition materialisations, recorded one by one as Dagster records yielded ones. Dagster
    runs every value a step yields through its error boundary, which swaps the process's signal handlers
    twice (about 0.2 ms): per fragment, more than recording the event. So all but the last are logged with
    `log_event` (the same event, recorded at once) and the last is yielded, which hands the others on."""
    for materialization in materializations[:-1]:
        context.log_event(materialization)
    yield from materializations[-1:]
