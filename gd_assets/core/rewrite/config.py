"""Scenes, resources and project.godot: the dispatch to their rewrites (scenes.py, project_settings.py)."""

from __future__ import annotations

from gd_assets.core.receivers import Scope
from gd_assets.core.rewrite.edits import FragmentRewrite
from gd_assets.core.rewrite.project_settings import rewrite_project_godot
from gd_assets.core.rewrite.rules import RewriteRules
from gd_assets.core.rewrite.scenes import rewrite_scene


def rewrite_config(kind: str, text: str, start_line: int, rules: RewriteRules, file_kind: str | None,
                   scope: Scope | None = None) -> FragmentRewrite:
    """The Godot 4 text of a `.tscn`/`.tres` block or a project.godot section."""
    if file_kind == "project":
        return rewrite_project_godot(kind, text, start_line, rules, scope)
    return rewrite_scene(kind, text, start_line, rules, scope)
