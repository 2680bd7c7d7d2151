"""The weekly corpus refresh: every corpus asset and its checks, incremental by content hash."""

from __future__ import annotations

import dagster as dg

from corpora_build.assets import GROUP

corpus_refresh_job = dg.define_asset_job(
    "corpus_refresh", selection=dg.AssetSelection.groups(GROUP),
    description="Re-read the sources; rebuild only tables whose inputs changed; re-embed only changed rows.",
)

weekly_corpus_refresh = dg.ScheduleDefinition(
    name="weekly_corpus_refresh", job=corpus_refresh_job, cron_schedule="0 4 * * 1",
    default_status=dg.DefaultScheduleStatus.STOPPED,
)
