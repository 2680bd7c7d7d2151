"""The instance's run coordinator: Dagster's queue, with a daemon that answers a click within seconds.

Dagster's daemon works through backfills on a fixed 30 s loop, and an asset backfill moves one asset
at a time: a backfill of a fragment's evidence and judgement from the UI started a minute or more after
the click. This coordinator (named in the generated `dagster.yaml`, so the daemon builds it before it
starts its loops) sets that loop to `BACKFILL_TICK_SECONDS`; the queue itself is dequeued every second
(`home.INSTANCE_TAIL`). Nothing else changes: the other daemons keep their own intervals.
"""

from __future__ import annotations

from dagster._core.run_coordinator import QueuedRunCoordinator

BACKFILL_TICK_SECONDS = 1


class PromptRunCoordinator(QueuedRunCoordinator):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        import dagster._daemon.controller as controller

        controller.DEFAULT_DAEMON_INTERVAL_SECONDS = BACKFILL_TICK_SECONDS   # read by the backfill loop as it starts
