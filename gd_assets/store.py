"""The one place for the project-analysis tables: DuckDB DDL, polars schemas and upserts.

Every write is an upsert on a stable id, scoped to one project (or one set of fragment keys), so a
retry or a resume never duplicates a row and a re-ingest drops only what disappeared.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import duckdb
import polars as pl

from gd_assets import duck, home

TABLES: dict[str, str] = {
    "projects": """
        CREATE TABLE IF NOT EXISTS projects (
            project VARCHAR PRIMARY KEY,
            source VARCHAR NOT NULL,
            source_kind VARCHAR NOT NULL,     -- folder|zip|git|dump
            revision VARCHAR,
            files INTEGER NOT NULL,
            included INTEGER NOT NULL,
            excluded INTEGER NOT NULL,
            ingested_at TIMESTAMP NOT NULL
        )""",
    "files": """
        CREATE TABLE IF NOT EXISTS files (
            id VARCHAR PRIMARY KEY,           -- <project>/<path>
            project VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            size BIGINT NOT NULL,
            line_count INTEGER,
            content_hash VARCHAR NOT NULL,
            included BOOLEAN NOT NULL,
            reason VARCHAR,                   -- why a file was left out, in words
            encoding VARCHAR,
            dump_start_line INTEGER,          -- dump line of the file's line 1 (dump input only)
            text VARCHAR                      -- decoded text of included files
        )""",
    "fragments": """
        CREATE TABLE IF NOT EXISTS fragments (
            key VARCHAR PRIMARY KEY,          -- the fragment's partition key
            project VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            ordinal INTEGER NOT NULL,         -- position in its file
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            dump_start_line INTEGER,
            dump_end_line INTEGER,
            kind VARCHAR NOT NULL,
            symbol VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            content_hash VARCHAR NOT NULL,
            reason VARCHAR                    -- parse problem, when there was one
        )""",
}

KEYS: dict[str, str] = {"projects": "project", "files": "id", "fragments": "key"}

POLARS: dict[str, dict[str, pl.DataType]] = {
    "projects": {
        "project": pl.String, "source": pl.String, "source_kind": pl.String, "revision": pl.String,
        "files": pl.Int32, "included": pl.Int32, "excluded": pl.Int32, "ingested_at": pl.Datetime,
    },
    "files": {
        "id": pl.String, "project": pl.String, "path": pl.String, "kind": pl.String, "size": pl.Int64,
        "line_count": pl.Int32, "content_hash": pl.String, "included": pl.Boolean, "reason": pl.String,
        "encoding": pl.String, "dump_start_line": pl.Int32, "text": pl.String,
    },
    "fragments": {
        "key": pl.String, "project": pl.String, "path": pl.String, "ordinal": pl.Int32,
        "start_line": pl.Int32, "end_line": pl.Int32, "dump_start_line": pl.Int32,
        "dump_end_line": pl.Int32, "kind": pl.String, "symbol": pl.String, "text": pl.String,
        "content_hash": pl.String, "reason": pl.String,
    },
}


def db_path() -> Path:
    return home.projects_db_path()


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    for ddl in TABLES.values():
        con.execute(ddl)


def frame(table: str, rows: Iterable[Mapping[str, object]]) -> pl.DataFrame:
    schema = POLARS[table]
    return pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema)


def upsert(table: str, rows: pl.DataFrame, replace_project: str | None = None, path: Path | None = None) -> int:
    """Insert or replace `rows` by primary key in one transaction.

    With `replace_project`, rows of that project that are not in `rows` are deleted: the table
    then holds exactly the project's current state, whatever ran before.
    """
    columns = list(POLARS[table])
    rows = rows.select(columns)
    key = KEYS[table]
    with duck.connect(path or db_path()) as con:
        create_tables(con)
        con.register("_rows", rows.to_arrow())
        con.execute("BEGIN")
        try:
            if replace_project is not None:
                con.execute(
                    f"DELETE FROM {table} WHERE project = ? AND {key} NOT IN (SELECT {key} FROM _rows)",
                    [replace_project],
                )
            con.execute(f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) SELECT {', '.join(columns)} FROM _rows")
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        finally:
            con.unregister("_rows")
    return rows.height


def query(sql: str, params: Sequence[object] = (), path: Path | None = None) -> pl.DataFrame:
    """Run a read query; an absent store reads as empty tables."""
    with duck.connect(path or db_path()) as con:
        create_tables(con)
        return pl.from_arrow(con.sql(sql, params=list(params)).to_arrow_table())


def project_files(project: str, included_only: bool = False) -> pl.DataFrame:
    where = " AND included" if included_only else ""
    return query(f"SELECT * FROM files WHERE project = ?{where} ORDER BY path", [project])


def project_fragments(project: str) -> pl.DataFrame:
    return query("SELECT * FROM fragments WHERE project = ? ORDER BY dump_start_line NULLS LAST, path, ordinal",
                 [project])


def project_row(project: str) -> dict | None:
    rows = query("SELECT * FROM projects WHERE project = ?", [project]).to_dicts()
    return rows[0] if rows else None
