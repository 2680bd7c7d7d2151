"""The migration rewrite: the Godot 4 text of each fragment, each edit with the rule and the corpus row
it rests on, and what is left to people (see gdscript.py for GDScript, config.py for scenes and
project.godot, rules.py for what the corpus allows)."""

from __future__ import annotations

import re

from gd_assets.core.receivers import Scope
from gd_assets.core.rewrite.config import rewrite_config
from gd_assets.core.rewrite.edits import Edit, FragmentRewrite, Manual, apply_edits, fragment_diff
from gd_assets.core.rewrite.gdscript import rewrite_gdscript
from gd_assets.core.rewrite.rules import RewriteRules, load_rules
from gd_assets.core.rewrite.shaders import rewrite_shader
from gd_assets.core.slicing import parse_gdscript

REWRITE_VERSION = "rewrite-6"  # 2: scenes, resources, shaders and project.godot converted for Godot 4;
# 3: scripts that compile in Godot 4 (project-wide renames, call shapes, typing); 4: what runs keep (scene
# connections, signals on untyped values, a getter's type, a member only one subclass had); 5: container
# constants the script changes become static vars, values written under a value rule without needless brackets,
# an engine method a script variable hides called through `super`, the parent's add_child_below_node() asking the
# node, blank animation frames kept; 6: overrides of Godot 3 virtuals renamed (`get_drag_data` ->
# `_get_drag_data`) with the parameters Godot 4 adds, platform names tested (`OS.has_feature("HTML5")` -> `"web"`)
GD_KINDS = {"declaration", "function", "function_part", "class"}


def rewrite_fragment(kind: str, text: str, start_line: int, file_kind: str | None, scope: Scope | None,
                     rules: RewriteRules) -> FragmentRewrite:
    """The rewrite of one fragment, whatever its file kind; comments and unparsed text stay as they are.
    A fragment nested too deep for the rewrite is left as it is, a manual item saying so."""
    if file_kind == "gdscript" and kind in GD_KINDS:
        try:
            return rewrite_gdscript(text, start_line, scope, rules)
        except RecursionError:
            return FragmentRewrite(text=text, manual=[Manual(
                "not_parsed", 0, text.count("\n"), "an expression nested too deep for the rewrite",
                "the fragment is left as it is: migrate it by hand")])
    if file_kind == "gdscript" and kind == "unparsed":
        return _inner_onready(text, start_line, scope, rules) or FragmentRewrite(text=text)
    if file_kind in ("scene", "resource", "project"):
        return rewrite_config(kind, text, start_line, rules, file_kind, scope)
    if file_kind == "shader":
        return rewrite_shader(kind, text, start_line, rules, _declared(scope, kind, text))
    return FragmentRewrite(text=text)


_ONREADY = re.compile(r"^([ \t]+)onready(?=[ \t]+var\b)", re.M)


def _inner_onready(text: str, start_line: int, scope: Scope | None, rules: RewriteRules) -> FragmentRewrite | None:
    """`onready var x = ...` in an inner class, which tree-sitter-gdscript does not parse there (the fragment is
    `unparsed`): as `@onready var`, it parses and is rewritten as any declaration; None for anything else."""
    found = list(_ONREADY.finditer(text))
    fixed = _ONREADY.sub(r"\1@onready", text)
    if not found or parse_gdscript("func __fragment__():\n" + fixed).root_node.has_error:
        return None
    result = rewrite_gdscript(fixed, start_line, scope, rules)
    shifted = {text.count("\n", 0, m.start()): len(m.group(1)) + 1 for m in found}  # row -> column of `onready`
    edits = [Edit(start_line + row, col, start_line + row, col + len("onready"), "onready", "@onready", "onready",
                  rules.cite("onready"), 0.98) for row, col in shifted.items()]
    for e in result.edits:  # placed on the fixed text: one column further right after each `@`
        row = e.start_line - start_line
        if row in shifted and e.start_col > shifted[row]:
            e.start_col -= 1
            e.end_col -= 1 if e.end_line == e.start_line else 0
        elif row in shifted and e.start_col <= shifted[row] < e.end_col:
            return None  # an edit across the keyword: leave the fragment to people
        edits.append(e)
    return FragmentRewrite(edits, result.manual, result.text)


def _declared(scope: Scope | None, kind: str, text: str) -> tuple[str, ...] | None:
    """The built-in textures whose uniform this shader fragment declares: those whose first reader in
    the file (the project context says which) is this function; None without a context."""
    if scope is None:
        return None
    symbol = scope.symbol
    return tuple(t for (shader, t), function in scope.context.shader_textures.items()
                 if shader == scope.path and function == symbol)


__all__ = ["REWRITE_VERSION", "Edit", "FragmentRewrite", "Manual", "RewriteRules", "apply_edits", "fragment_diff",
           "load_rules", "rewrite_config", "rewrite_fragment", "rewrite_gdscript"]
