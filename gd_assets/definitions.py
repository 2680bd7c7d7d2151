"""The code location: project-analysis assets and the corpus build, in one Definitions."""

from __future__ import annotations

import dagster as dg

from gd_assets.assets.fragments import fragments
from gd_assets.assets.sources import project_sources
from gd_assets.resources import AnalysisStore

project_assets = [project_sources, fragments]

project_defs = dg.Definitions(
    assets=project_assets,
    resources={"analysis_store": AnalysisStore()},
)


def _corpus_defs() -> dg.Definitions:
    try:
        from corpora_build.definitions import defs
    except ImportError:  # the corpus build is optional while it is being set up
        return dg.Definitions()
    return defs


defs = dg.Definitions.merge(project_defs, _corpus_defs())
