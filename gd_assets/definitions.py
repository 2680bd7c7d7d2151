"""The code location: project-analysis assets and the corpus build, in one Definitions (`defs`)."""

from __future__ import annotations

import dagster as dg

import corpora_build.definitions as corpus
from gd_assets.assets.evidence import fragment_evidence
from gd_assets.assets.fragments import fragments
from gd_assets.assets.judgement import fragment_judgement
from gd_assets.assets.maintenance import store_maintenance
from gd_assets.assets.migration import project_migration
from gd_assets.assets.project_symbols import project_symbols
from gd_assets.assets.rewrite import fragment_rewrite
from gd_assets.assets.sources import project_sources
from gd_assets.assets.verdict import project_verdict
from gd_assets.assets.verification import project_verification
from gd_assets.resources import JudgeBackend, RetrievalIndex
from gd_assets.sensors import sensors
from gd_assets.workers import celery_executor

project_assets = [project_sources, fragments, project_symbols, fragment_evidence, fragment_judgement,
                  fragment_rewrite, project_verdict, project_migration, project_verification, store_maintenance]

project_resources = {
    "retrieval_index": RetrievalIndex(),
    "judge_backend": JudgeBackend(),
}

defs = dg.Definitions.merge(
    # With a broker, the runs the daemon launches (queued fragment runs, backfills, the UI's) send their
    # steps to `gd-assets worker` processes (`gd_assets.workers`); without one they run where launched.
    dg.Definitions(assets=project_assets, resources=project_resources, sensors=sensors, executor=celery_executor()),
    corpus.defs,
)
