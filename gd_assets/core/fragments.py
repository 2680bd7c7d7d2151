"""Fragment rows: every included file sliced, each fragment with its key, provenance and hash.

The row carries what every later stage needs (file kind, line ranges, dump lines), so no stage
goes back to the files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from gd_assets.core.keys import fragment_key, unique_keys
from gd_assets.core.slicing import Fragment, function_name, slice_file, uncovered_lines

FUNCTION_KINDS = ("function", "function_part")


def fragment_rows(project: str, files: Sequence[Mapping]) -> list[dict]:
    """Slice every file (`path`, `kind`, `text`, optional `dump_start_line`) into keyed rows."""
    rows: list[dict] = []
    for file in files:
        for frag in slice_file(file["path"], file["kind"], file["text"] or ""):
            rows.append(_row(project, file, frag))
    for row, key in zip(rows, unique_keys([r["key"] for r in rows])):
        row["key"] = key
    return rows


def _row(project: str, file: Mapping, frag: Fragment) -> dict:
    offset = file.get("dump_start_line")
    return {
        "key": fragment_key(project, frag.path, frag.symbol),
        "project": project, "path": frag.path, "ordinal": frag.ordinal,
        "start_line": frag.start_line, "end_line": frag.end_line,
        "dump_start_line": None if offset is None else offset + frag.start_line - 1,
        "dump_end_line": None if offset is None else offset + frag.end_line - 1,
        "kind": frag.kind, "symbol": frag.symbol, "text": frag.text, "reason": frag.reason,
        "content_hash": hashlib.sha256(frag.text.encode()).hexdigest()[:16],
        "file_kind": file["kind"],
    }


def file_functions(rows: Sequence[Mapping]) -> dict[str, list[str]]:
    """Per path, the functions its fragments define (a call to one of them is local, not the engine's)."""
    out: dict[str, set[str]] = {}
    for row in rows:
        if row["kind"] in FUNCTION_KINDS:
            out.setdefault(row["path"], set()).add(function_name(row["symbol"]))
    return {path: sorted(names) for path, names in out.items()}


def coverage_problems(files: Sequence[Mapping], fragments: Sequence[Mapping]) -> list[dict]:
    """Files whose non-blank lines are not each in exactly one fragment (must be empty)."""
    by_path: dict[str, list[Fragment]] = {}
    for row in fragments:
        by_path.setdefault(row["path"], []).append(
            Fragment(row["path"], row["start_line"], row["end_line"], row["kind"], row["symbol"]))
    problems = []
    for file in files:
        missing, doubled = uncovered_lines(file["text"] or "", by_path.get(file["path"], []))
        if missing or doubled:
            problems.append({"path": file["path"], "missing": missing[:20], "doubled": doubled[:20]})
    return problems
