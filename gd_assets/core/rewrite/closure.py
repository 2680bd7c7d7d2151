"""What the evidence judge still finds in a rewritten fragment: a need no rule met is left to people
with the judge's evidence, instead of passing in silence.

The rewritten text is judged as the migrated copy will be: in the same project, now a Godot 4 one
(`config_version=5`), by the deterministic evidence judge whatever judge decided the first time (its
markers do not depend on retrieval). So analysing the copy again finds nothing that is not inside a
manual item of the first run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from gd_assets.core.codec import judge_input
from gd_assets.core.cues import DEFAULT_REQUEST, extract_cues
from gd_assets.core.judges.evidence import EvidenceJudge
from gd_assets.core.receivers import Scope
from gd_assets.core.rewrite.edits import FragmentRewrite, Manual


def as_migrated(scope: Scope | None) -> Scope | None:
    """The same place in the project once migrated: every project root reads `config_version=5`."""
    if scope is None:
        return None
    context = scope.context.__dict__.get("_as_migrated")  # once per project: what it computes once stays
    if context is None:
        context = dataclasses.replace(scope.context, config_versions={r: "5" for r in scope.context.config_versions},
                                      _roots={})
        scope.context.__dict__["_as_migrated"] = context
    return dataclasses.replace(scope, context=context)


def residual(frag: Mapping, result: FragmentRewrite, scope: Scope | None, judge: EvidenceJudge,
             file_functions: Sequence[str] = (), evidence: Sequence[dict] = ()) -> Manual | None:
    """A manual item for what the judge still calls Godot 3 in the rewritten fragment, unless the
    rewrite's own manual items already name every finding."""
    cues = extract_cues(frag["kind"], result.text, DEFAULT_REQUEST, frag["file_kind"], as_migrated(scope))
    item = judge_input({**frag, "text": result.text}, cues, [], DEFAULT_REQUEST, file_functions)
    markers = [m for m in judge.markers(item) if m.side == "3"]
    judged = judge.judge_one(item)
    if not judged.migration_needed:
        return None
    said = " ".join(f"{m.what} {m.why}" for m in result.manual)
    if result.manual and all(m.name in said for m in markers):
        return None
    return Manual("judged_godot3", int(frag["start_line"]), int(frag["end_line"]),
                  "still Godot 3 after the rewrite: no rule converts it",
                  judged.rationale, [dict(e) for e in evidence])
