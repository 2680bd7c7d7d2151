"""Dagster's PostgreSQL storages with pooled connections, named in a Postgres home's `dagster.yaml`.

dagster-postgres builds its engines with `NullPool` so that idle processes hold no connection; a
run worker writes two events per fragment, and a new connection per statement costs more server
CPU than the whole sqlite write. A small pool per storage keeps the connections a process uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagster_postgres.event_log import PostgresEventLogStorage
from dagster_postgres.run_storage import PostgresRunStorage
from dagster_postgres.schedule_storage import PostgresScheduleStorage
from dagster_postgres.utils import create_pg_engine, pg_url_from_config

POOL = {"pool_size": 2, "max_overflow": 4, "pool_recycle": 3600, "pool_pre_ping": True}


def _pooled(cls: type, inst_data, config_value: Mapping[str, Any]):
    storage = cls(inst_data=inst_data, postgres_url=pg_url_from_config(config_value),
                  should_autocreate_tables=config_value.get("should_autocreate_tables", True))
    storage._engine.dispose()
    storage._engine = create_pg_engine(storage.postgres_url, isolation_level="AUTOCOMMIT", **POOL)
    return storage


class PooledRunStorage(PostgresRunStorage):
    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return _pooled(cls, inst_data, config_value)


class PooledEventLogStorage(PostgresEventLogStorage):
    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return _pooled(cls, inst_data, config_value)


class PooledScheduleStorage(PostgresScheduleStorage):
    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return _pooled(cls, inst_data, config_value)
