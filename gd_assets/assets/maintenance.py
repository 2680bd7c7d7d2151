"""`store_maintenance`: keeps the analysis store compact. In DuckLake every commit writes Parquet files
(a worker's batch is a few small ones), so they are merged and the snapshots and files nobody reads any
more are dropped; a DuckDB file is checkpointed."""

import dagster as dg

from gd_assets import store


class MaintenanceConfig(dg.Config):
    keep: str = "1 hour"   # DuckLake snapshots younger than this stay readable (a running worker's reads)


@dg.asset(
    group_name="store",
    kinds={"duckdb"},
    description="Merges the store's small files and drops what no snapshot still reads (DuckLake); checkpoints a DuckDB file.",
)
def store_maintenance(context: dg.AssetExecutionContext, config: MaintenanceConfig) -> dg.MaterializeResult:
    done = store.maintain(config.keep)
    context.log.info(f"store maintenance: {done}")
    return dg.MaterializeResult(metadata=done)
