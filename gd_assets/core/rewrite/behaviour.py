"""Calls that compile in Godot 4 but do something else: rewritten to keep what the Godot 3 code did."""

from __future__ import annotations


class BehaviourRules:
    """Calls that compile in Godot 4 but do something else: rewritten to keep what the Godot 3 code did."""

    SHAPES: dict[str, tuple[str, tuple]] = {}
