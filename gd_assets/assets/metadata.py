"""Markdown tables for materialisation metadata, cut to a size the UI shows comfortably."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

MAX_ROWS = 300


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Iterable[Sequence[object]], limit: int = MAX_ROWS) -> str:
    rows = list(rows)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows[:limit]]
    if len(rows) > limit:
        lines.append(f"\n… {len(rows) - limit} more rows (see the DuckDB store)")
    if not rows:
        lines.append("| " + " | ".join("—" for _ in headers) + " |")
    return "\n".join(lines)
