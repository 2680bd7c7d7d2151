"""The one place for the project-analysis tables: DuckDB DDL, polars schemas and upserts.

Every write is an upsert on a stable id, scoped to one project (or one set of fragment keys), so a
retry or a resume never duplicates a row and a re-ingest drops only what disappeared. The tables
live in `projects.duckdb` (one host) or, with GD_ASSETS_STORE=ducklake, in DuckLake (`gd_assets.lake`):
the same SQL either way, each write one transaction, retried whole when another worker's commit won.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import duckdb
import polars as pl

from gd_assets import home, lake
from gd_assets.core import duck
from gd_assets.core.duck import StoreError
from gd_assets.core.tables import TableSet, transaction

log = logging.getLogger(__name__)

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
            reason VARCHAR,                   -- parse problem, when there was one
            file_kind VARCHAR                 -- kind of the file it was cut from (gdscript, scene...)
        )""",
    "project_symbols": """
        CREATE TABLE IF NOT EXISTS project_symbols (
            id VARCHAR PRIMARY KEY,           -- <project>|<scope>|<kind>|<name>
            project VARCHAR NOT NULL,
            scope VARCHAR NOT NULL,           -- script path (`path::Inner`), or the project root folder
            kind VARCHAR NOT NULL,            -- script|class_name|extends|func|var|const|signal|enum|class|node|autoload|config_version
            name VARCHAR NOT NULL,
            type VARCHAR,                     -- declared or obvious type; for a node, its scene type
            detail VARCHAR                    -- for a node, the script attached to it
        )""",
    "project_contexts": """
        CREATE TABLE IF NOT EXISTS project_contexts (
            project VARCHAR PRIMARY KEY,
            version VARCHAR NOT NULL,         -- of the symbols: evidence made with another is stale
            counts VARCHAR NOT NULL,          -- JSON {kind: rows}
            built_at TIMESTAMP NOT NULL
        )""",
    "evidence": """
        CREATE TABLE IF NOT EXISTS evidence (
            key VARCHAR PRIMARY KEY,          -- fragment key
            project VARCHAR NOT NULL,
            path VARCHAR NOT NULL,            -- tracking only: never searched
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            content_hash VARCHAR NOT NULL,    -- of the fragment text the evidence was found for
            cues VARCHAR NOT NULL,            -- JSON [{"cue", "from"}]: the retriever input
            dense_text VARCHAR NOT NULL,
            request VARCHAR NOT NULL,         -- the analysis request the cues were made for
            corpus_version VARCHAR NOT NULL,
            index_version VARCHAR NOT NULL,
            retrieval_version VARCHAR NOT NULL,
            computed_at TIMESTAMP NOT NULL,
            data_version VARCHAR,             -- of the cues and candidates: what a judgement read
            context_version VARCHAR           -- of the project context the cues were read in
        )""",
    "candidates": """
        CREATE TABLE IF NOT EXISTS candidates (
            id VARCHAR PRIMARY KEY,           -- <fragment key>#<rank>
            key VARCHAR NOT NULL,
            project VARCHAR NOT NULL,
            rank INTEGER NOT NULL,
            corpus_table VARCHAR NOT NULL,    -- docs_chunks | api_mapping | label_prototypes
            row_id VARCHAR NOT NULL,
            title VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            sparse_score DOUBLE NOT NULL,
            sparse_rank INTEGER,
            dense_score DOUBLE NOT NULL,
            score DOUBLE NOT NULL,
            table_rank INTEGER NOT NULL,
            via VARCHAR                       -- id of the candidate whose bridge lifted this row
        )""",
    "judgements": """
        CREATE TABLE IF NOT EXISTS judgements (
            key VARCHAR PRIMARY KEY,          -- fragment key
            project VARCHAR NOT NULL,
            path VARCHAR NOT NULL,            -- tracking only
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            content_hash VARCHAR NOT NULL,    -- of the fragment text that was judged
            signal VARCHAR NOT NULL,          -- godot3 | godot4 | neutral
            migration_needed BOOLEAN NOT NULL,
            confidence DOUBLE NOT NULL,
            rationale VARCHAR NOT NULL,
            related VARCHAR NOT NULL,         -- JSON [legend number]
            evidence VARCHAR NOT NULL,        -- JSON [{"n", "table", "id", "title"}]: what migration rests on
            legend VARCHAR NOT NULL,          -- JSON {number: {"table", "id", "title"}}
            judge VARCHAR NOT NULL,           -- backend: evidence | vllm | openai
            model VARCHAR NOT NULL,
            prompt_version VARCHAR NOT NULL,
            corpus_version VARCHAR NOT NULL,
            index_version VARCHAR NOT NULL,
            retrieval_version VARCHAR NOT NULL,
            judged_at TIMESTAMP NOT NULL,
            evidence_version VARCHAR          -- data version of the evidence that was judged
        )""",
    "rewrites": """
        CREATE TABLE IF NOT EXISTS rewrites (
            key VARCHAR PRIMARY KEY,          -- fragment key
            project VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            content_hash VARCHAR NOT NULL,    -- of the fragment text that was rewritten
            migration_needed BOOLEAN NOT NULL,-- the judgement it followed (no edits when false)
            context_version VARCHAR,          -- of the project context its receivers came from
            rewrite_version VARCHAR NOT NULL, -- rules and corpus version
            edits VARCHAR NOT NULL,           -- JSON [{start_line, start_col, end_line, end_col, old, new, rule, evidence, confidence}]
            manual VARCHAR NOT NULL,          -- JSON [{kind, start_line, end_line, what, why, evidence}]
            edit_count INTEGER NOT NULL,
            manual_count INTEGER NOT NULL,
            new_text VARCHAR NOT NULL,        -- the fragment with its edits applied
            rewritten_at TIMESTAMP NOT NULL
        )""",
    "migrations": """
        CREATE TABLE IF NOT EXISTS migrations (
            project VARCHAR PRIMARY KEY,
            out VARCHAR NOT NULL,             -- the migrated copy
            patch VARCHAR NOT NULL,           -- its unified diff (the summary JSON sits beside it)
            files_changed INTEGER NOT NULL,
            renamed VARCHAR NOT NULL,         -- JSON {new path: old path} (`x.shader` -> `x.gdshader`)
            migrated_at TIMESTAMP NOT NULL
        )""",
    "verifications": """
        CREATE TABLE IF NOT EXISTS verifications (
            project VARCHAR PRIMARY KEY,
            copy VARCHAR NOT NULL,            -- the migrated copy Godot checked (on a scratch copy of it)
            godot VARCHAR NOT NULL,           -- `godot --version`
            figures VARCHAR NOT NULL,         -- JSON: scripts failing, scenes failing, properties dropped...
            problems VARCHAR NOT NULL,        -- JSON: each with its file, line, fragment, edits and cause
            verified_at TIMESTAMP NOT NULL,
            run VARCHAR                       -- JSON (`verify --run`): both runs, the copy's errors traced, the comparison
        )""",
    "verdicts": """
        CREATE TABLE IF NOT EXISTS verdicts (
            project VARCHAR PRIMARY KEY,
            verdict VARCHAR NOT NULL,         -- godot3 | godot4 | mixed | unknown
            confidence DOUBLE NOT NULL,
            explanation VARCHAR NOT NULL,
            summary VARCHAR NOT NULL,         -- JSON: counts, folders, files
            judged INTEGER NOT NULL,
            unjudged INTEGER NOT NULL,
            computed_at TIMESTAMP NOT NULL
        )""",
}

KEYS: dict[str, str] = {"projects": "project", "files": "id", "fragments": "key", "evidence": "key",
                        "project_symbols": "id", "project_contexts": "project",
                        "candidates": "id", "judgements": "key", "rewrites": "key", "verdicts": "project",
                        "migrations": "project", "verifications": "project"}

# Columns added after the first release: a store written before them gets them on first use.
MIGRATIONS = (
    "ALTER TABLE fragments ADD COLUMN IF NOT EXISTS file_kind VARCHAR",
    "ALTER TABLE candidates ADD COLUMN IF NOT EXISTS via VARCHAR",
    "ALTER TABLE evidence ADD COLUMN IF NOT EXISTS data_version VARCHAR",
    "ALTER TABLE judgements ADD COLUMN IF NOT EXISTS evidence_version VARCHAR",
    "ALTER TABLE evidence ADD COLUMN IF NOT EXISTS context_version VARCHAR",
    "ALTER TABLE verifications ADD COLUMN IF NOT EXISTS run VARCHAR",
)

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
        "content_hash": pl.String, "reason": pl.String, "file_kind": pl.String,
    },
    "evidence": {
        "key": pl.String, "project": pl.String, "path": pl.String, "start_line": pl.Int32, "end_line": pl.Int32,
        "content_hash": pl.String, "cues": pl.String, "dense_text": pl.String, "request": pl.String, "corpus_version": pl.String,
        "index_version": pl.String, "retrieval_version": pl.String, "computed_at": pl.Datetime,
        "data_version": pl.String, "context_version": pl.String,
    },
    "project_symbols": {
        "id": pl.String, "project": pl.String, "scope": pl.String, "kind": pl.String, "name": pl.String,
        "type": pl.String, "detail": pl.String,
    },
    "project_contexts": {
        "project": pl.String, "version": pl.String, "counts": pl.String, "built_at": pl.Datetime,
    },
    "candidates": {
        "id": pl.String, "key": pl.String, "project": pl.String, "rank": pl.Int32, "corpus_table": pl.String,
        "row_id": pl.String, "title": pl.String, "text": pl.String, "sparse_score": pl.Float64,
        "sparse_rank": pl.Int32, "dense_score": pl.Float64, "score": pl.Float64, "table_rank": pl.Int32,
        "via": pl.String,
    },
    "judgements": {
        "key": pl.String, "project": pl.String, "path": pl.String, "start_line": pl.Int32, "end_line": pl.Int32,
        "content_hash": pl.String, "signal": pl.String, "migration_needed": pl.Boolean, "confidence": pl.Float64,
        "rationale": pl.String, "related": pl.String, "evidence": pl.String, "legend": pl.String,
        "judge": pl.String, "model": pl.String, "prompt_version": pl.String, "corpus_version": pl.String,
        "index_version": pl.String, "retrieval_version": pl.String, "judged_at": pl.Datetime,
        "evidence_version": pl.String,
    },
    "rewrites": {
        "key": pl.String, "project": pl.String, "path": pl.String, "start_line": pl.Int32, "end_line": pl.Int32,
        "content_hash": pl.String, "migration_needed": pl.Boolean, "context_version": pl.String,
        "rewrite_version": pl.String, "edits": pl.String, "manual": pl.String, "edit_count": pl.Int32,
        "manual_count": pl.Int32, "new_text": pl.String, "rewritten_at": pl.Datetime,
    },
    "migrations": {
        "project": pl.String, "out": pl.String, "patch": pl.String, "files_changed": pl.Int32,
        "renamed": pl.String, "migrated_at": pl.Datetime,
    },
    "verifications": {
        "project": pl.String, "copy": pl.String, "godot": pl.String, "figures": pl.String,
        "problems": pl.String, "verified_at": pl.Datetime, "run": pl.String,
    },
    "verdicts": {
        "project": pl.String, "verdict": pl.String, "confidence": pl.Float64, "explanation": pl.String,
        "summary": pl.String, "judged": pl.Int32, "unjudged": pl.Int32, "computed_at": pl.Datetime,
    },
}


ANALYSIS_TABLES = TableSet(TABLES, {t: (k,) for t, k in KEYS.items()}, POLARS, MIGRATIONS)


def db_path() -> Path:
    return home.projects_db_path()


def backend() -> str:
    """`duckdb` or `ducklake` (GD_ASSETS_STORE)."""
    try:
        return home.store_backend()
    except ValueError as error:
        raise StoreError(str(error)) from error


def check() -> None:
    """Before a command runs anything: a bad GD_ASSETS_STORE, or DuckLake without its PostgreSQL,
    gets its one-line error here rather than from inside a run."""
    if backend() == "ducklake":
        lake.catalog_url()


def exists() -> bool:
    """Whether anything was written yet (a lake always exists once its catalog is reachable)."""
    return backend() == "ducklake" or db_path().exists()


def _prepare_lake(con: duckdb.DuckDBPyConnection) -> None:
    ANALYSIS_TABLES.ensure(con, keyed=False)


_keys_checked: set[str] = set()   # files this process found without keys, rebuilt, or left keyed


def _prepare_file(con: duckdb.DuckDBPyConnection) -> None:
    """The tables without primary keys, as in the lake: DuckDB rewrites a table's whole key index at
    each checkpoint, so closing the file after a batch cost seven times more on a 100 MB store.
    A store made with keys is rebuilt without them once, in one transaction."""
    ANALYSIS_TABLES.ensure(con, keyed=False)
    path = str(db_path())
    if path in _keys_checked:
        return
    keyed = [t for (t,) in con.execute("SELECT DISTINCT table_name FROM duckdb_constraints() WHERE database_name = "
                                        "current_database() AND constraint_type = 'PRIMARY KEY'").fetchall()
             if t in TABLES]
    _keys_checked.add(path)
    if not keyed:
        return
    try:
        with transaction(con):
            for table in keyed:
                con.execute(f"ALTER TABLE {table} RENAME TO {table}_keyed")
            ANALYSIS_TABLES.create(con, keyed=False)
            for table in keyed:
                columns = ", ".join(POLARS[table])
                con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {table}_keyed")
                con.execute(f"DROP TABLE {table}_keyed")
    except duckdb.Error as error:   # rows today's tables refuse: the file stays as it was, and works
        log.warning("%s keeps its primary keys (slower writes): %s", path, error)


_session: ContextVar[duckdb.DuckDBPyConnection | None] = ContextVar("gd_assets_store_session", default=None)


@contextmanager
def _connection() -> Iterator[duckdb.DuckDBPyConnection]:
    """The session's connection, or a short one of its own. Opening DuckDB costs about 25 ms, more
    than most queries here, and the tables are checked with one catalog query rather than created."""
    con = _session.get()
    if con is not None:
        yield con
        return
    if backend() == "ducklake":
        with lake.cursor(_prepare_lake) as con:
            yield con
        return
    with duck.connect(db_path()) as con:
        _prepare_file(con)
        yield con


def _write(write: Callable[[duckdb.DuckDBPyConnection], int | None]) -> int | None:
    """One write transaction; in DuckLake, retried whole when another worker's commit won."""
    def once() -> int | None:
        with _connection() as con:
            return write(con)
    return lake.retrying(once) if backend() == "ducklake" else once()


@contextmanager
def sole_writer() -> Iterator[None]:
    """For a run of this process that is the store's only writer: the store file stays attached
    between its transactions (`duck.lingering`) rather than being checkpointed after each one."""
    if backend() == "ducklake":
        yield
        return
    with duck.lingering(db_path()):
        yield


@contextmanager
def session() -> Iterator[None]:
    """Store calls inside share one connection: for reads and writes that follow one another, never
    around long work (the connection holds the file's lock against other processes)."""
    if _session.get() is not None:
        yield
        return
    with _connection() as con:
        token = _session.set(con)
        try:
            yield
        finally:
            _session.reset(token)


def frame(table: str, rows: Iterable[Mapping[str, object]]) -> pl.DataFrame:
    return ANALYSIS_TABLES.frame(table, rows)


def upsert(table: str, rows: pl.DataFrame, replace_project: str | None = None,
           replace_keys: Sequence[str] | None = None) -> int:
    """Insert or replace `rows` by key in one transaction.

    With `replace_project`, rows of that project that are not in `rows` are deleted: the table
    then holds exactly the project's current state, whatever ran before. With `replace_keys`
    (fragment keys), the rows of those fragments are replaced as a whole.
    """
    return upsert_many([(table, rows)], replace_project, replace_keys)


def upsert_many(writes: Sequence[tuple[str, pl.DataFrame]], replace_project: str | None = None,
                replace_keys: Sequence[str] | None = None) -> int:
    """Several tables' upserts in one transaction, so a batch is committed whole or not at all."""
    return _write(lambda con: ANALYSIS_TABLES.upsert(con, writes, replace_project=replace_project,
                                                     replace_keys=replace_keys, keyed=False))


def delete_project(project: str) -> None:
    """Drop every row of a project, in one transaction."""
    def delete(con: duckdb.DuckDBPyConnection) -> None:
        with transaction(con):
            for table in ("candidates", "evidence", "judgements", "rewrites", "fragments", "project_symbols",
                          "project_contexts", "files", "verdicts", "migrations", "verifications", "projects"):
                con.execute(f"DELETE FROM {table} WHERE project = ?", [project])
    _write(delete)


def query(sql: str, params: Sequence[object] = ()) -> pl.DataFrame:
    """Run a read query; an absent store reads as empty tables."""
    def read() -> pl.DataFrame:
        with _connection() as con:
            # `execute`, not `sql(params=)`: with parameters DuckDB 1.5 plans a relation for `sql` (about 15 ms more)
            return pl.from_arrow(con.execute(sql, list(params)).to_arrow_table())
    return lake.patient(read) if backend() == "ducklake" else read()


def project_files(project: str, included_only: bool = False) -> pl.DataFrame:
    where = " AND included" if included_only else ""
    return query(f"SELECT * FROM files WHERE project = ?{where} ORDER BY path", [project])


def project_symbols(project: str) -> pl.DataFrame:
    return query("SELECT * FROM project_symbols WHERE project = ? ORDER BY scope, kind, name", [project])


def project_context_row(project: str) -> dict | None:
    rows = query("SELECT * FROM project_contexts WHERE project = ?", [project]).to_dicts()
    return rows[0] if rows else None


def project_fragments(project: str) -> pl.DataFrame:
    return query("SELECT * FROM fragments WHERE project = ? ORDER BY dump_start_line NULLS LAST, path, ordinal",
                 [project])


def _in_order(frame_: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    order = {k: i for i, k in enumerate(keys)}
    return frame_.with_columns(pl.col("key").replace_strict(order, default=None).alias("_order")).sort("_order").drop("_order")


def fragments_by_key(keys: Sequence[str]) -> pl.DataFrame:
    """Fragment rows for `keys`, in the order of `keys`."""
    return _in_order(query(f"SELECT * FROM fragments WHERE key IN (SELECT unnest({duck.TEXT_LIST}))",
                           [duck.text_list(keys)]), keys)


def judgements_by_key(keys: Sequence[str]) -> dict[str, dict]:
    """The judgement of each of `keys` made on its fragment's current text (others are absent)."""
    return {j["key"]: j for j in query(
        "SELECT j.key, j.migration_needed, j.signal, j.evidence FROM judgements j JOIN fragments f "
        f"ON f.key = j.key AND f.content_hash = j.content_hash WHERE j.key IN (SELECT unnest({duck.TEXT_LIST}))",
        [duck.text_list(keys)]).to_dicts()}


def evidence_by_key(keys: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(evidence rows joined with their fragment and the functions of its file, candidate rows) for `keys`."""
    with session():
        ev = query(
            f"WITH wanted AS (SELECT f.* FROM fragments f WHERE f.key IN (SELECT unnest({duck.TEXT_LIST}))), "
            "functions AS (SELECT g.project, g.path, list(g.symbol) AS file_functions FROM fragments g "
            "WHERE g.kind IN ('function', 'function_part') AND (g.project, g.path) IN (SELECT project, path FROM wanted) "
            "GROUP BY g.project, g.path) "
            "SELECT e.*, f.kind, f.text, f.dump_start_line, f.dump_end_line, f.content_hash AS fragment_hash, "
            "f.file_kind, functions.file_functions FROM evidence e JOIN wanted f ON f.key = e.key "
            "LEFT JOIN functions ON functions.project = f.project AND functions.path = f.path", [duck.text_list(keys)])
        cands = query(f"SELECT * FROM candidates WHERE key IN (SELECT unnest({duck.TEXT_LIST})) ORDER BY key, rank",
                      [duck.text_list(keys)])
    return ev, cands


def project_rewrites(project: str) -> pl.DataFrame:
    """The rewrites of a project's current fragments (same text as rewritten) that still need
    migration, in file order."""
    return query("SELECT r.* FROM rewrites r JOIN fragments f ON f.key = r.key AND f.content_hash = r.content_hash "
                 "JOIN judgements j ON j.key = r.key AND j.content_hash = f.content_hash AND j.migration_needed "
                 "WHERE r.project = ? ORDER BY f.path, f.ordinal", [project])


def current_judgements(project: str) -> dict[str, bool]:
    """Fragment key -> migration needed, for the fragments with a judgement of their current text."""
    rows = query("SELECT f.key, j.migration_needed FROM fragments f JOIN judgements j ON j.key = f.key "
                 "AND j.content_hash = f.content_hash WHERE f.project = ? ORDER BY f.path, f.ordinal", [project])
    return dict(zip(rows["key"].to_list(), rows["migration_needed"].to_list()))


def drop_rewrites_except(project: str, keys: Sequence[str]) -> None:
    """Forget the rewrites of fragments no longer judged to need migration (their edits must not apply)."""
    def delete(con: duckdb.DuckDBPyConnection) -> None:
        con.execute(f"DELETE FROM rewrites WHERE project = ? AND NOT list_contains({duck.TEXT_LIST}, key)",
                    [project, duck.text_list(keys)])
    _write(delete)


def maintain(keep: str = "1 hour") -> dict:
    """Compact the store: DuckLake merges its small Parquet files and drops snapshots older than
    `keep` with the files only they used; a DuckDB file is checkpointed. Returns what it did."""
    if backend() == "ducklake":
        with _connection() as con:
            return {"store": "ducklake", **lake.retrying(lambda: lake.maintain(con, keep))}
    with duck.connect(db_path()) as con:
        con.execute("CHECKPOINT")
    return {"store": "duckdb", "bytes": db_path().stat().st_size}


def one_row(table: str, project: str) -> dict | None:
    """A project's row of a per-project table (`migrations`, `verifications`, `verdicts`), if any."""
    rows = query(f"SELECT * FROM {table} WHERE project = ?", [project]).to_dicts()
    return rows[0] if rows else None


def project_row(project: str) -> dict | None:
    rows = query("SELECT * FROM projects WHERE project = ?", [project]).to_dicts()
    return rows[0] if rows else None
