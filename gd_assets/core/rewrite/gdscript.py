"""The Godot 4 text of one Godot 3 fragment: edits on its tree-sitter tree, each with its rule and evidence.

Edits replace tree nodes (or the tokens around them), never raw lines, so strings and comments stay
as they are. Engine names are renamed only where the project context says they are the engine's
(receivers.py); what cannot be converted safely becomes a manual item with the evidence. Every
rewritten fragment is parsed again: an edit that adds a parse error is dropped and reported instead.
"""

from __future__ import annotations

from gd_assets.core.receivers import Scope, fragment_locals
from gd_assets.core.rewrite.behaviour import BehaviourRules
from gd_assets.core.rewrite.calls import CallRules
from gd_assets.core.rewrite.camera import CameraRules
from gd_assets.core.rewrite.edits import FragmentRewrite
from gd_assets.core.rewrite.files import FileRules
from gd_assets.core.rewrite.gone import GoneRules
from gd_assets.core.rewrite.names import NameRules
from gd_assets.core.rewrite.native_overrides import OverrideRules
from gd_assets.core.rewrite.rules import RewriteRules
from gd_assets.core.rewrite.syntax import SyntaxRules
from gd_assets.core.rewrite.tilemap import TileMapRules
from gd_assets.core.rewrite.tree import TreeEditor, apply_pending, placed, safe_edits
from gd_assets.core.rewrite.tweens import TweenRules
from gd_assets.core.rewrite.window import WindowRules
from gd_assets.core.slicing import parse_gdscript

WRAPPER = "func __fragment__():\n"


class GDScriptRewriter(TweenRules, TileMapRules, CameraRules, BehaviourRules, WindowRules, FileRules, OverrideRules, GoneRules,
                       NameRules, CallRules, SyntaxRules, TreeEditor):
    """All GDScript rules over one fragment."""

    SHAPES = {**CallRules.SHAPES, **FileRules.SHAPES, **TileMapRules.SHAPES, **TweenRules.SHAPES,
              **BehaviourRules.SHAPES}


def rewrite_gdscript(text: str, start_line: int, scope: Scope | None, rules: RewriteRules) -> FragmentRewrite:
    """The edits and manual items of one GDScript fragment starting at file line `start_line`."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    wrapped = first[:1] in (" ", "\t")
    parsed_text = (WRAPPER + text) if wrapped else text
    offset = 1 if wrapped else 0
    tree = parse_gdscript(parsed_text)
    if scope is not None:
        declared, assigned = fragment_locals(tree.root_node, scope)
        scope = Scope(scope.context, scope.scope, scope.engine, declared, assigned)
    rewriter = GDScriptRewriter(text, parsed_text, offset, scope, rules)
    rewriter.visit(tree.root_node)
    rewriter.answer_gone()
    rewriter.keep_blocks(tree.root_node)
    pending = sorted(rewriter.pending, key=lambda p: p.start)
    kept, manual = safe_edits(parsed_text, pending, rewriter)
    lines = parsed_text.split("\n")
    edits = [placed(p, lines, offset, start_line, rewriter) for p in kept]
    new_text = apply_pending(parsed_text, kept)
    if wrapped:
        new_text = new_text[len(WRAPPER):]
    for item in rewriter.manual + manual:
        item.start_line += start_line
        item.end_line += start_line
    return FragmentRewrite(edits, rewriter.manual + manual, new_text)
