"""Dagster's storages with kept connections, named in the data home's generated `dagster.yaml`.

Dagster's stock storages open a connection per statement: dagster-postgres builds its engines
with `NullPool` so that idle processes hold none, and the sqlite event log builds a new engine for
every event. A run writes about five events per fragment, so those connections (and, on sqlite, the
statement compilation and synced commit that come with them) cost more than the analysis itself.
These subclasses keep a small pool per storage and process, and change nothing that is written.
A PostgreSQL that cannot be reached is waited for (`home.DB_PATIENCE_SECONDS`) when connecting, and a
write whose connection was cut is made once more on a new one.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import dagster
from dagster._core.events import ASSET_EVENTS, DagsterEventType
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.base import EventLogStorage
from dagster._core.storage.event_log.schema import AssetEventTagsTable, SqlEventLogStorageTable
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster_postgres.event_log import PostgresEventLogStorage
from dagster_postgres.run_storage import PostgresRunStorage
from dagster_postgres.schedule_storage import PostgresScheduleStorage
from dagster_postgres.utils import create_pg_engine, pg_url_from_config
from sqlalchemy import Table, create_engine, event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import SingletonThreadPool

from gd_assets import home
from gd_assets.core.duck import with_backoff
from gd_assets.event_templates import event_rows

log = logging.getLogger(__name__)

POOL = {"pool_size": 2, "max_overflow": 4, "pool_recycle": 3600, "pool_pre_ping": True}


def _pooled(cls: type, inst_data, config_value: Mapping[str, Any]):
    storage = cls(inst_data=inst_data, postgres_url=pg_url_from_config(config_value),
                  should_autocreate_tables=config_value.get("should_autocreate_tables", True))
    storage._engine.dispose()
    storage._engine = create_pg_engine(storage.postgres_url, isolation_level="AUTOCOMMIT", **POOL)
    event.listen(storage._engine, "do_connect", _patient_connect)
    return storage


def _patient_connect(dialect, connection_record, cargs, cparams):
    """Connect, waiting for a server that does not answer (restarting, or the network cut) for up to
    `home.DB_PATIENCE_SECONDS`; the pool's pre-ping sends every checkout after a cut here."""
    def waiting(error: Exception) -> bool:
        log.warning("the instance's PostgreSQL is unreachable; waiting up to %.0f s: %s",
                    home.DB_PATIENCE_SECONDS, str(error).strip().splitlines()[0])
        return True
    return with_backoff(lambda: dialect.dbapi.connect(*cargs, **cparams), waiting, home.DB_PATIENCE_SECONDS,
                        first=0.2, longest=5.0, errors=dialect.dbapi.OperationalError)


def _once_more(write):
    """`write()`, and once more if its connection was cut mid-statement (the pool has dropped it)."""
    try:
        return write()
    except DBAPIError as error:
        if not error.connection_invalidated:
            raise
        log.warning("an instance write lost its connection; writing it again: %s", str(error).splitlines()[0])
        return write()


class KnownSchema:
    """Dagster asks the event log whether a table or column exists on every tagged materialisation
    (a reflection query; on sqlite a new engine too). Migrations only add them, so a yes is kept."""

    def _known(self) -> set[tuple[str, str]]:
        return self.__dict__.setdefault("_known_schema", set())

    def has_table(self, table_name: str) -> bool:
        if ("table", table_name) not in self._known():
            if not super().has_table(table_name):
                return False
            self._known().add(("table", table_name))
        return True

    def _has_asset_key_col_on_connection(self, conn: Connection, column_name: str) -> bool:
        if ("column", column_name) not in self._known():
            if not super()._has_asset_key_col_on_connection(conn, column_name):
                return False
            self._known().add(("column", column_name))
        return True


class BufferedMaterializations:
    """A run's reported materialisations, written a batch at a time instead of one transaction each.

    A fragment asset reports one materialisation per fragment, a batch of them at once after the batch's
    rows are committed. They wait here until any other event of the process (the next batch's log line,
    the step's end, a failure), a read of the event log, or `LIMIT` of them: then they are written in
    one transaction per shard, in order. A killed process loses at most the batch it was reporting,
    whose rows `resume` writes again (upserts)."""

    LIMIT = 512

    def _pending(self) -> list[EventLogEntry]:
        return self.__dict__.setdefault("_pending_events", [])

    def store_event(self, event: EventLogEntry) -> None:
        pending = self._pending()
        if event.is_dagster_event and event.dagster_event_type == DagsterEventType.ASSET_MATERIALIZATION and \
                event.dagster_event.asset_key is not None:
            if pending and (pending[0].run_id, pending[0].dagster_event.asset_key) != (
                    event.run_id, event.dagster_event.asset_key):
                self.flush_pending()
            pending.append(event)
            if len(pending) >= self.LIMIT:
                self.flush_pending()
            return
        self.flush_pending()
        _once_more(lambda: super(BufferedMaterializations, self).store_event(event))

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        self.flush_pending()
        _once_more(lambda: self._store_batch(events))

    def flush_pending(self) -> None:
        pending = self._pending()
        if pending:
            events = list(pending)
            pending.clear()
            _once_more(lambda: self._store_batch(events))

    def _store_batch(self, events: Sequence[EventLogEntry]) -> None:
        super().store_event_batch(events)

    def dispose(self) -> None:
        self.flush_pending()
        super().dispose()


def _flushing(name: str):
    def read(self, *args, **kwargs):
        self.flush_pending()
        return getattr(super(BufferedMaterializations, self), name)(*args, **kwargs)
    read.__name__ = name
    return read


# Every read of the event log sees the materialisations still waiting in this process.
for _name in dir(EventLogStorage):
    if _name.startswith(("get_", "fetch_", "has_", "can_", "is_", "all_", "watch")) and \
            callable(getattr(EventLogStorage, _name)):
        setattr(BufferedMaterializations, _name, _flushing(_name))


class PooledRunStorage(PostgresRunStorage):
    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return _pooled(cls, inst_data, config_value)


def _one_run_of_asset_events(events: Sequence[EventLogEntry]) -> bool:
    return bool(events) and {e.run_id for e in events} == {events[0].run_id} and all(
        e.is_dagster_event and e.dagster_event_type in ASSET_EVENTS for e in events)


class PooledEventLogStorage(BufferedMaterializations, KnownSchema, PostgresEventLogStorage):
    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return _pooled(cls, inst_data, config_value)

    def _store_batch(self, events: Sequence[EventLogEntry]) -> None:
        """A run's planned materialisations as one insert, as dagster-postgres writes reported ones (which it
        batches itself): their tags at once, the asset's row once per asset, from its last event."""
        if not _one_run_of_asset_events(events) or any(
                e.dagster_event_type != DagsterEventType.ASSET_MATERIALIZATION_PLANNED for e in events):
            return PostgresEventLogStorage.store_event_batch(self, events)
        table = SqlEventLogStorageTable
        with self.index_transaction() as conn:
            ids = conn.execute(table.insert().returning(table.c.id, sort_by_parameter_order=True),
                               event_rows(self, events)).scalars().all()
            _store_index(self, conn, events, ids)

    def prepare_insert_event_batch(self, events: Sequence[EventLogEntry]) -> Any:
        """dagster-postgres' insert of a batch of reported materialisations, its rows from `event_rows`."""
        return SqlEventLogStorageTable.insert().values(event_rows(self, events))


class PooledScheduleStorage(PostgresScheduleStorage):
    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return _pooled(cls, inst_data, config_value)


class PooledSqliteEventLogStorage(BufferedMaterializations, KnownSchema, SqliteEventLogStorage):
    """Dagster's run-sharded sqlite event log, keeping one engine per shard for the process.

    The stock storage builds and disposes an engine for every statement, so each event pays a new
    connection, sqlalchemy's statement compilation (its cache lives in the engine) and a synced commit.
    Kept engines reuse all three; WAL with `synchronous=NORMAL` stays consistent through a killed
    process (only a power cut can lose the last commits). At most `KEEP` run shards stay open.
    """

    KEEP = 8

    def __init__(self, base_dir: str, inst_data=None):
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._pid = os.getpid()
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls(inst_data=inst_data, **config_value)

    def _engine(self, shard: str) -> Engine:
        if self._pid != os.getpid():   # a forked child never shares its parent's connections
            self._engines.clear()
            self._pid = os.getpid()
        engine = self._engines.pop(shard, None)
        if engine is None:
            fresh = shard != INDEX_SHARD_NAME and shard not in self._initialized_dbs and self._copy_template(shard)
            engine = create_engine(self.conn_string_for_shard(shard), poolclass=SingletonThreadPool,
                                   connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False})
            event.listen(engine, "connect", _relaxed_sync)
            if shard not in self._initialized_dbs:
                if not fresh:
                    self._initdb(engine)
                self._initialized_dbs.add(shard)
        self._engines[shard] = engine
        runs = [name for name in self._engines if name != INDEX_SHARD_NAME]
        for name in runs[:max(0, len(runs) - self.KEEP)]:
            self._engines.pop(name).dispose()
        return engine

    def _copy_template(self, shard: str) -> bool:
        """A new run shard as a copy of an empty one made once per Dagster version: creating its tables and
        stamping its schema revision (alembic reads its migration scripts) takes 50-70 ms a run, a copy
        under one. False (then the stock way) when the shard already exists or no copy could be placed."""
        target = os.path.join(self._base_dir, f"{shard}.db")
        if os.path.exists(target):
            return False
        template = os.path.join(self._base_dir, f".run-shard-{dagster.__version__}.db")
        if not os.path.exists(template):
            made = _scratch(self._base_dir)
            engine = create_engine(f"sqlite:///{made}", poolclass=SingletonThreadPool)
            try:
                self._initdb(engine)
                engine.dispose()
                os.replace(made, template)   # whole or not at all, if two processes make it at once
            except BaseException:
                engine.dispose()
                os.unlink(made)
                raise
        copy = _scratch(self._base_dir)
        try:
            shutil.copyfile(template, copy)
            os.link(copy, target)   # never over a shard another process made meanwhile
        except OSError:
            return False
        finally:
            os.unlink(copy)
        return True

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:
            with self._engine(shard).connect() as conn, conn.begin():
                yield conn

    def _store_batch(self, events: Sequence[EventLogEntry]) -> None:
        """A batch (a run's planned or reported materialisations) in one transaction per shard instead
        of two per event. The events and their tags are what `store_event` writes for each; the asset's
        row, which each event overwrites with itself, is written once per asset, from its last event
        (as dagster-postgres does for a batch)."""
        if not _one_run_of_asset_events(events):
            for event in events:
                SqliteEventLogStorage.store_event(self, event)
            return
        rows = event_rows(self, events)  # each event serialised once, for both shards
        with self.run_connection(events[0].run_id) as conn:
            _insert(conn, SqlEventLogStorageTable, rows)
        with self.index_transaction() as conn:
            _store_index(self, conn, events, _insert(conn, SqlEventLogStorageTable, rows))

    def _store_asset_event_tags(self, conn: Connection, events: Sequence[EventLogEntry],
                                event_ids: Sequence[int]) -> None:
        """The rows Dagster's own method inserts, through `_insert`."""
        rows = [{"event_id": event_id, "asset_key": event.get_dagster_event().asset_key.to_string(), "key": key,
                 "value": value, "event_timestamp": self._event_insert_timestamp(event)}
                for event_id, event in zip(event_ids, events) for key, value in self._tags_for_asset_event(event).items()]
        if rows and self.has_table(AssetEventTagsTable.name):
            _insert(conn, AssetEventTagsTable, rows)

    def _close_engines(self) -> None:
        with self._db_lock:
            for engine in self._engines.values():
                engine.dispose()
            self._engines.clear()

    def wipe(self) -> None:
        self._close_engines()
        super().wipe()

    def dispose(self) -> None:
        super().dispose()
        self._close_engines()


def _store_index(storage, conn: Connection, events: Sequence[EventLogEntry], ids: Sequence[int]) -> None:
    """The asset index of a batch of asset events: every event's tags, and each asset's row written once,
    from its last event of each kind (every event of a kind overwrites the row with itself)."""
    storage._store_asset_event_tags(conn, list(events), list(ids))
    last = {(e.dagster_event.asset_key.to_string(), e.dagster_event_type): (e, i) for e, i in zip(events, ids)}
    for entry, event_id in sorted(last.values(), key=lambda pair: pair[1]):
        storage._store_asset_event(conn, entry, event_id)


def _insert(conn: Connection, table: Table, rows: Sequence[Mapping[str, Any]]) -> list[int]:
    """`conn.execute(table.insert(), rows)` on sqlite, as one executemany of the driver: the same rows
    without SQLAlchemy's processing of each row's parameters, which cost most of a batch's write. The new
    rows' ids: the transaction holds the file's write lock from its first insert to its commit, and sqlite
    gives each new row the next id, so they are the `len(rows)` ending at the last one inserted."""
    if not rows:
        return []
    columns = list(rows[0])
    convert = [table.c[name].type.dialect_impl(conn.dialect).bind_processor(conn.dialect) for name in columns]
    values = [tuple(row[name] if to is None or row[name] is None else to(row[name]) for name, to in zip(columns, convert))
              for row in rows]
    names = ", ".join(f'"{name}"' for name in columns)
    cursor = conn.connection.driver_connection.cursor()
    try:
        cursor.executemany(f'INSERT INTO "{table.name}" ({names}) VALUES ({", ".join("?" * len(columns))})', values)
        if cursor.rowcount != len(values):
            raise RuntimeError(f"{table.name}: {cursor.rowcount} of {len(values)} rows inserted")
        last = cursor.execute("SELECT last_insert_rowid()").fetchone()[0]
    finally:
        cursor.close()
    return list(range(last - len(values) + 1, last + 1))


def _scratch(folder: str) -> str:
    """A new empty file's path in `folder`, its name starting with a dot (not a run shard's `<run id>.db`)."""
    handle, path = tempfile.mkstemp(dir=folder, prefix=".shard-", suffix=".db")
    os.close(handle)
    return path


def _relaxed_sync(dbapi_connection, _record) -> None:
    dbapi_connection.execute("PRAGMA synchronous=NORMAL")
