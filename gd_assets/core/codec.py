"""One codec between the evidence objects and the store's rows: cues, candidates, judge inputs.

Both directions live here so a field added to `Candidate` or `Cue` cannot be written and lost on
the way back (as `Candidate.via` once was).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import fields

import polars as pl

from gd_assets.core.cues import Cue
from gd_assets.core.judges.base import JudgeInput
from gd_assets.core.retrieval import Candidate

# Candidate attribute -> candidates column, where the names differ.
_COLUMN = {"table": "corpus_table", "id": "row_id"}
# (attribute, column) of every Candidate field, read once: `fields()` per row cost more than the row.
_CANDIDATE_COLUMNS = tuple((f.name, _COLUMN.get(f.name, f.name)) for f in fields(Candidate))


def cues_to_json(cues: Sequence[Cue]) -> str:
    return json.dumps([{"cue": c.cue, "from": c.source, **({"receiver": c.receiver} if c.receiver else {})}
                       for c in cues], ensure_ascii=False)


def cues_from_json(text: str | None) -> list[Cue]:
    return [Cue(c["cue"], c["from"], c.get("receiver")) for c in json.loads(text or "[]")]


def candidate_row(key: str, project: str, cand: Candidate) -> dict:
    """The `candidates` row of one candidate of fragment `key` (id `<key>#<rank>`)."""
    row = {"id": f"{key}#{cand.rank}", "key": key, "project": project}
    for name, column in _CANDIDATE_COLUMNS:
        row[column] = getattr(cand, name)
    return row


def candidate_from_row(row: Mapping) -> Candidate:
    return Candidate(**{name: row.get(column) for name, column in _CANDIDATE_COLUMNS})


def candidates_by_key(rows: pl.DataFrame) -> dict[str, list[Candidate]]:
    """Candidate rows grouped per fragment key, in rank order; read column by column (a batch holds
    about 10,000 of them, and a dict per row cost more than the judge)."""
    out: dict[str, list[Candidate]] = {}
    if rows.is_empty():
        return out
    rows = rows.sort(["key", "rank"])
    columns = [rows[column].to_list() if column in rows.columns else [None] * rows.height
               for _, column in _CANDIDATE_COLUMNS]
    for key, values in zip(rows["key"].to_list(), zip(*columns)):
        out.setdefault(key, []).append(Candidate(*values))
    return out


def judge_input(frag: Mapping, cues: Sequence[Cue], candidates: Sequence[Candidate], request: str,
                file_functions: Sequence[str] = ()) -> JudgeInput:
    """What a judge reads of one fragment: its row (key, path, lines, kinds, text), cues and candidates."""
    return JudgeInput(key=frag["key"], path=frag["path"], start_line=frag["start_line"], end_line=frag["end_line"],
                      kind=frag["kind"], file_kind=frag["file_kind"], text=frag["text"], cues=list(cues),
                      candidates=list(candidates), request=request, file_functions=list(file_functions))
