"""Godot 3's Tween node (interpolate_property, start, its signals) as Godot 4's create_tween() chains."""

from __future__ import annotations


class TweenRules:
    """Godot 3's Tween node (interpolate_property, start, its signals) as Godot 4's create_tween() chains."""

    SHAPES: dict[str, tuple[str, tuple]] = {}
