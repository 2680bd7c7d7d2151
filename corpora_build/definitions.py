"""The corpus part of the code location: assets, checks, the weekly refresh, the source resource.

`gd_assets.orchestrate.build_corpus` runs the same assets in the data directory's instance, so a
command-line build is a real run with its history, metadata and check results in the UI.
"""

from __future__ import annotations

import dagster as dg

from corpora_build.assets import ASSETS, CorpusSource
from corpora_build.checks import CHECKS
from corpora_build.schedules import corpus_refresh_job, weekly_corpus_refresh

defs = dg.Definitions(
    assets=ASSETS,
    asset_checks=CHECKS,
    jobs=[corpus_refresh_job],
    schedules=[weekly_corpus_refresh],
    resources={"corpus_source": CorpusSource()},
)
