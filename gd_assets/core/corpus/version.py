"""`corpus_version`: the short hash evidence and judgements carry for lineage.

It changes exactly when a source's version or content changes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb

from gd_assets.core.duck import connect


def content_hash(*parts: object) -> str:
    """Stable hash of the parts (JSON-encoded), 16 hex digits."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def version_of(con: duckdb.DuckDBPyConnection) -> str:
    rows = con.execute("SELECT name, version, content_hash FROM corpus_sources ORDER BY name").fetchall()
    return content_hash(rows)[:12] if rows else "empty"


def has_table(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ? "
                         "AND table_catalog = current_database()", [table]).fetchone()[0])


def corpus_version(db_path: Path) -> str:
    """Short stable hash of the corpus_sources versions and content hashes ('empty' before a build)."""
    if not Path(db_path).exists():
        return "empty"
    with connect(db_path, read_only=True) as con:
        return version_of(con) if has_table(con, "corpus_sources") else "empty"
