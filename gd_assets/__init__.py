"""gd-assets: Godot 3 / Godot 4 evidence pipeline as Dagster assets."""
