"""A file judged and rewritten as the pipeline does it, without Dagster: every fragment judged in its project
by the evidence judge, the flagged ones rewritten against the built corpus. Shared by the rewrite tests."""

from __future__ import annotations

from pathlib import Path

from gd_assets.core.codec import judge_input
from gd_assets.core.cues import DEFAULT_REQUEST, extract_cues
from gd_assets.core.judges.evidence import EvidenceJudge
from gd_assets.core.project_context import build_context
from gd_assets.core.receivers import Scope
from gd_assets.core.rewrite import apply_edits, rewrite_fragment
from gd_assets.core.slicing import slice_file

KINDS = {".gd": "gdscript", ".tscn": "scene", ".godot": "project"}
GODOT3 = {"project.godot": "config_version=4\n"}
GODOT4 = {"project.godot": "config_version=5\n"}


def judged(rules, files: dict[str, str], path: str):
    """(fragment, scope, judgement) of each fragment of `path`, judged in its project."""
    context = build_context([{"path": p, "kind": KINDS[Path(p).suffix], "text": t} for p, t in files.items()])
    judge = EvidenceJudge(surface=rules.surface)
    kind = KINDS[Path(path).suffix]
    for frag in slice_file(path, kind, files[path]):
        scope = Scope.of(context, path, frag.symbol, rules.surface)
        cues = extract_cues(frag.kind, frag.text, DEFAULT_REQUEST, kind, scope)
        row = {"key": frag.symbol, "path": path, "start_line": frag.start_line, "end_line": frag.end_line,
               "kind": frag.kind, "file_kind": kind, "text": frag.text}
        yield frag, scope, judge.judge_one(judge_input(row, cues, [], DEFAULT_REQUEST))


def migrate_judged(rules, files: dict[str, str], path: str):
    """(new text, edits, manual items, judgements by symbol) of `path`."""
    edits, manual, judgements = [], [], {}
    for frag, scope, judgement in judged(rules, files, path):
        judgements[frag.symbol] = judgement
        if judgement.migration_needed:
            result = rewrite_fragment(frag.kind, frag.text, frag.start_line, KINDS[Path(path).suffix], scope, rules)
            edits += result.edits
            manual += result.manual
    return apply_edits(files[path], edits), edits, manual, judgements


def migrate(rules, files: dict[str, str], path: str):
    """(new text, edits, manual items) of `path`."""
    return migrate_judged(rules, files, path)[:3]
