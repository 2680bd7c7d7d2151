"""The corpus code location part: assets, checks, the weekly refresh, the source resource.

`build_corpus` runs the same assets through Dagster in the data directory's instance, so a CLI build
is a real run with its history, metadata and check results in the UI.
"""

from __future__ import annotations

import os

import dagster as dg

from corpora_build.assets import ASSETS, TABLE_ASSETS, CorpusSource
from corpora_build.checks import CHECKS
from corpora_build.schedules import corpus_refresh_job, weekly_corpus_refresh

defs = dg.Definitions(
    assets=ASSETS,
    asset_checks=CHECKS,
    jobs=[corpus_refresh_job],
    schedules=[weekly_corpus_refresh],
    resources={"corpus_source": CorpusSource()},
)


def build_corpus(source: str = "auto", include_index: bool = True,
                 instance: dg.DagsterInstance | None = None) -> dg.ExecuteInJobResult:
    """Materialise the corpus assets (and run their checks) as one run in the data directory's instance."""
    if instance is None:
        from gd_assets.home import dagster_instance

        instance = dagster_instance()
    assets = ASSETS if include_index else TABLE_ASSETS
    return dg.materialize(
        [*assets, *CHECKS], instance=instance, resources={"corpus_source": CorpusSource(source=source)},
        selection=dg.AssetSelection.assets(*assets), raise_on_error=False,
        # progress (rows embedded, checks) on the console; step-level debug events stay in the UI
        run_config={"loggers": {"console": {"config": {"log_level": "DEBUG" if os.environ.get("GD_ASSETS_VERBOSE")
                                                                  else "INFO"}}}},
    )
