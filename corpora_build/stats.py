"""What the corpus holds: row counts per table, category and version, bridge shares, source versions.

`corpus_version` is the short hash that judgements carry for lineage: it changes exactly when a
source's version or content changes.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from corpora_build.bridges import bridge_shares
from corpora_build.schema import TABLES
from gd_assets.core.corpus.version import corpus_version, has_table, version_of
from gd_assets.core.duck import connect

__all__ = ["corpus_stats", "corpus_version", "format_stats", "version_of"]

BREAKDOWNS = {
    "docs_chunks": ("godot_version", "member_kind"),
    "api_mapping": ("source", "category", "change_kind", "ambiguous"),
    "label_prototypes": ("label",),
    "bridges": ("relation",),
}



def collect(con: duckdb.DuckDBPyConnection) -> dict:
    """All figures as one JSON-ready dict."""
    out: dict = {"tables": {}, "breakdown": {}, "sources": [], "corpus_version": "empty"}
    for table in TABLES:
        out["tables"][table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] if has_table(con, table) else 0
    for table, columns in BREAKDOWNS.items():
        if not has_table(con, table):
            continue
        cols = ", ".join(columns)
        rows = con.execute(f"SELECT {cols}, count(*) FROM {table} GROUP BY ALL ORDER BY ALL").fetchall()
        out["breakdown"][table] = [dict(zip((*columns, "rows"), r)) for r in rows]
    if has_table(con, "corpus_sources"):
        rows = con.execute("SELECT name, adapter, version, location, content_hash FROM corpus_sources ORDER BY name")
        out["sources"] = [dict(zip(("name", "adapter", "version", "location", "content_hash"), r))
                          for r in rows.fetchall()]
        out["corpus_version"] = version_of(con)
    if all(has_table(con, t) for t in ("bridges", "api_mapping", "label_prototypes", "docs_chunks")):
        out["bridge_shares"] = bridge_shares(con)
    return out


def corpus_stats(db_path: Path) -> dict:
    if not Path(db_path).exists():
        return collect(duckdb.connect(":memory:"))
    with connect(db_path, read_only=True) as con:
        return collect(con)


def format_stats(stats: dict) -> str:
    """The figures as a short plain-text report."""
    lines = [f"corpus version {stats['corpus_version']}", ""]
    for s in stats["sources"]:
        lines.append(f"source {s['name']:<16} {s['adapter']:<7} {s['version']:<45} {s['content_hash']}")
    lines.append("")
    for table, n in stats["tables"].items():
        lines.append(f"{table:<17} {n:>7} rows")
    for table, rows in stats["breakdown"].items():
        lines.append(f"\n{table}:")
        for r in rows:
            key = " / ".join(str(v) for k, v in r.items() if k != "rows")
            lines.append(f"  {key:<60} {r['rows']:>7}")
    if "bridge_shares" in stats:
        lines.append("\nbridged share: " + ", ".join(f"{t} {v:.1%}" for t, v in stats["bridge_shares"].items()))
    return "\n".join(lines)
