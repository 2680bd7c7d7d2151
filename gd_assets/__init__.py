"""gd-assets: Godot 3 / Godot 4 evidence pipeline as Dagster assets."""

import warnings

# Single-run backfills of fragment partitions are how batching works here; Dagster marks the policy beta.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`")
