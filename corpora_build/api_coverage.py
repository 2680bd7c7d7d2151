"""api_coverage: every Godot 3 name of the class reference that Godot 4 does not have where Godot 3 had it,
with the answer the pipeline gives a use of it (gd_assets/core/coverage.py probes the judge and the rewrite).

Unlike the other tables it depends on the code as well as on the sources, so it is rebuilt on every
materialisation (a few seconds); its figures by kind and answer are the asset's metadata and the README's.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from gd_assets.core import duck
from gd_assets.core.coverage import ANSWERS, KINDS, coverage_rows
from gd_assets.core.rewrite import load_rules


def godot3_signatures(con) -> dict[tuple[str, str, str], str]:
    """(class, member kind, member name) -> the Godot 3 signature ('' for a class row's name)."""
    rows = con.execute("SELECT class_name, member_kind, coalesce(member_name, ''), signature FROM docs_chunks "
                       "WHERE godot_version = '3' AND class_name IS NOT NULL").fetchall()
    return {(cls, kind, name): sig for cls, kind, name, sig in rows}


def build_api_coverage(corpus_db: Path, version: str, progress=None) -> list[dict]:
    with duck.connect(corpus_db, read_only=True) as con:
        signatures = godot3_signatures(con)
    return coverage_rows(load_rules(str(corpus_db), version), signatures, progress)


def coverage_counts(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Names by kind and answer, with totals: {kind: {answer: n, 'total': n, 'answered': n}}."""
    out: dict[str, dict[str, int]] = {}
    for kind in (*KINDS, "all"):
        counted = Counter(r["answer"] for r in rows if kind in ("all", r["kind"]))
        if not counted:
            continue
        out[kind] = {a: counted[a] for a in ANSWERS if counted[a]}
        out[kind]["total"] = sum(counted.values())
        out[kind]["answered"] = out[kind]["total"] - counted["none"]
    return out


def coverage_markdown(counts: dict[str, dict[str, int]]) -> str:
    """The README's table: names by kind, answered, and by answer."""
    lines = ["| kind | Godot 3 names | answered | " + " | ".join(ANSWERS) + " |",
             "|---|---|---|" + "---|" * len(ANSWERS)]
    for kind, c in counts.items():
        share = f"{c['answered']} ({c['answered'] / c['total']:.0%})"
        lines.append(f"| {kind} | {c['total']} | {share} | " + " | ".join(str(c.get(a, 0)) for a in ANSWERS) + " |")
    return "\n".join(lines)
