"""One helper for every DuckDB table set (the analysis store, the corpus): DDL, polars schemas, upsert.

Writes are upserts on each table's key, in one transaction, so a retry never doubles a row; the
`replace_*` options say which old rows a write also removes (a project's, some fragments', or all
rows absent from the write), which is how a re-run drops exactly what disappeared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import duckdb
import polars as pl

from gd_assets.core.duck import TEXT_LIST, text_list


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN ... COMMIT, rolled back on any error. A failed COMMIT has already ended the transaction:
    its error, not the ROLLBACK's "no transaction is active", is the one raised."""
    con.execute("BEGIN")
    try:
        yield con
        con.execute("COMMIT")
    except Exception:
        try:
            con.execute("ROLLBACK")
        except duckdb.TransactionException:
            pass
        raise


@dataclass(frozen=True)
class TableSet:
    ddl: Mapping[str, str]                            # table -> CREATE TABLE IF NOT EXISTS ...
    keys: Mapping[str, tuple[str, ...]]               # table -> primary key columns
    schemas: Mapping[str, Mapping[str, pl.DataType]]  # table -> polars schema (column order)
    migrations: Sequence[str] = field(default_factory=tuple)  # idempotent ALTERs for older files

    def create(self, con: duckdb.DuckDBPyConnection, keyed: bool = True) -> None:
        """The tables and their migrations; without `keyed` (DuckLake has no constraints) the primary
        keys are left out and `upsert` keeps them unique itself."""
        for ddl in self.ddl.values():
            con.execute(ddl if keyed else re.sub(r"\s+PRIMARY KEY\b", "", ddl))
        for statement in self.migrations:
            con.execute(statement)

    def ensure(self, con: duckdb.DuckDBPyConnection, keyed: bool = True) -> None:
        """`create` unless every table and column is already there: one catalog query (about 1 ms)
        instead of a statement per table and migration (about 10 ms), for stores opened per call."""
        present = set(con.execute("SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = "
                                  f"current_database() AND table_name IN (SELECT unnest({TEXT_LIST}))",
                                  [text_list(self.schemas)]).fetchall())
        if any((table, column) not in present for table, schema in self.schemas.items() for column in schema):
            self.create(con, keyed)

    def frame(self, table: str, rows: Iterable[Mapping[str, object]]) -> pl.DataFrame:
        """Rows as a polars frame with the table's schema (missing columns become NULL)."""
        schema, rows = self.schemas[table], list(rows)
        return pl.DataFrame({c: [r.get(c) for r in rows] for c in schema}, schema=schema)

    def upsert(self, con: duckdb.DuckDBPyConnection, writes: Sequence[tuple[str, pl.DataFrame]],
               replace_project: str | None = None, replace_keys: Sequence[str] | None = None,
               replace_all: bool = False, keyed: bool = True) -> int:
        """Insert or replace each (table, rows) by key, all in one transaction.

        `replace_project`: that project's rows absent from `rows` are deleted. `replace_keys`
        (fragment keys): those fragments' rows are replaced as a whole. `replace_all`: every row
        absent from `rows` is deleted (a full rebuild). Without `keyed` (tables without a primary
        key) the rows with the written keys are deleted before the insert, in the same transaction.
        The tables must exist: whoever opens the connection runs `ensure` once.
        """
        written = 0
        with transaction(con):
            for table, rows in writes:
                columns = list(self.schemas[table])
                rows = rows.select(columns)
                keys = self.keys[table]
                match = " AND ".join(f"t.{k} = r.{k}" for k in keys)
                con.register("_rows", rows.to_arrow())
                absent = f"NOT EXISTS (SELECT 1 FROM _rows r WHERE {match})"
                if replace_all:
                    con.execute(f"DELETE FROM {table} t WHERE {absent}")
                if replace_project is not None:
                    con.execute(f"DELETE FROM {table} t WHERE t.project = ? AND {absent}", [replace_project])
                if replace_keys is not None:
                    con.execute(f"DELETE FROM {table} WHERE key IN (SELECT unnest({TEXT_LIST}))",
                                [text_list(replace_keys)])
                if not keyed:
                    con.execute(f"DELETE FROM {table} t WHERE EXISTS (SELECT 1 FROM _rows r WHERE {match})")
                verb = "INSERT OR REPLACE" if keyed else "INSERT"
                con.execute(f"{verb} INTO {table} ({', '.join(columns)}) SELECT {', '.join(columns)} FROM _rows")
                con.unregister("_rows")
                written += rows.height
        return written
