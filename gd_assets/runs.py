"""Runs over many fragment partitions: one run per contiguous block of keys (order of addition).

A dynamic partition range selects keys in the order they were added, so a project's keys that
were added at different times may need more than one run; each run still handles its keys in
batches inside one process.
"""

from __future__ import annotations

from typing import Sequence

import dagster as dg

from gd_assets.partitions import fragments_partitions


def contiguous_blocks(all_keys: Sequence[str], wanted: Sequence[str]) -> list[tuple[str, str]]:
    """(first, last) ranges over `all_keys` that cover exactly the keys in `wanted`."""
    want = set(wanted)
    blocks: list[tuple[str, str]] = []
    start = prev = None
    for key in all_keys:
        if key in want:
            if start is None:
                start = key
            prev = key
        elif start is not None:
            blocks.append((start, prev))
            start = None
    if start is not None:
        blocks.append((start, prev))
    return blocks


def materialize_fragments(instance: dg.DagsterInstance, assets: Sequence[dg.AssetsDefinition],
                          selection: Sequence[dg.AssetsDefinition], keys: Sequence[str], resources: dict,
                          run_config: dict | None = None, tags: dict | None = None) -> list[dg.ExecuteInProcessResult]:
    """Materialise `selection` for the fragment partitions `keys` as recorded runs."""
    results = []
    all_keys = instance.get_dynamic_partitions(fragments_partitions.name)
    for first, last in contiguous_blocks(all_keys, keys):
        results.append(dg.materialize(
            assets=list(assets), selection=list(selection), instance=instance, resources=resources,
            run_config=run_config or {}, raise_on_error=False,
            tags={**(tags or {}), "dagster/asset_partition_range_start": first,
                  "dagster/asset_partition_range_end": last},
        ))
        if not results[-1].success:
            break
    return results
