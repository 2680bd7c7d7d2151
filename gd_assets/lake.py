"""The DuckLake store (GD_ASSETS_STORE=ducklake): the analysis tables for many workers at once.

Its catalog lives in this home's PostgreSQL (`gd-assets db start`, or GD_ASSETS_POSTGRES_URL) and its
data as Parquet in object storage (`lake/` under GD_ASSETS_OBJECT_STORE: machines share no disk), else
under `home.lake_path()`, a folder every worker mounts. DuckLake has no primary keys:
each write deletes its keys and inserts them again in one transaction, and a transaction that loses a
commit race with another worker is retried whole. Attaching costs about 0.4 s (extensions, catalog),
so a process keeps one connection and hands out a cursor per store call. A catalog that cannot be
reached (the network to PostgreSQL cut, the server restarting) is waited for, up to `PATIENCE_SECONDS`,
by every attach, read and write: DuckDB's postgres extension connects again on the next query.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import duckdb

from gd_assets import home, objects
from gd_assets.core.duck import StoreError, with_backoff

log = logging.getLogger(__name__)

ALIAS = "lake"
METADATA_SCHEMA = "gd_lake"     # DuckLake's catalog tables, apart from Dagster's in the same database
RETRY_SECONDS = 300.0
INIT_WAIT_SECONDS = 60.0      # another process creating a new catalog's tables
PATIENCE_SECONDS = home.DB_PATIENCE_SECONDS   # the catalog unreachable
T = TypeVar("T")

# The extension packages on PyPI, and the file name DuckDB loads each as (its entry point is named for it).
EXTENSIONS = {"duckdb_extension_ducklake": "ducklake", "duckdb_extension_postgres": "postgres_scanner",
              "duckdb_extension_httpfs": "httpfs"}

_lock = threading.Lock()
_attached: tuple[int, str, duckdb.DuckDBPyConnection] | None = None   # (pid, where, connection)


def extension_directory() -> Path:
    """A per-user folder laid out as DuckDB expects (`v<version>/<platform>/<name>.duckdb_extension`),
    linking the files the pinned extension packages installed; nothing is downloaded."""
    import importlib

    platform = duckdb.execute("PRAGMA platform").fetchone()[0]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gd-assets" / "duckdb-extensions"
    folder = base / f"v{duckdb.__version__}" / platform
    folder.mkdir(parents=True, exist_ok=True)
    for package, name in EXTENSIONS.items():
        try:
            module = importlib.import_module(package)
        except ImportError as error:
            raise StoreError(f"GD_ASSETS_STORE=ducklake needs the {package.replace('_', '-')} package "
                             f"(pip install -e . installs it)") from error
        found = next(Path(module.__file__).parent.glob(f"extensions/v{duckdb.__version__}/*.duckdb_extension"), None)
        if found is None:
            raise StoreError(f"{package} has no extension for DuckDB {duckdb.__version__}: install the matching release")
        link = folder / f"{name}.duckdb_extension"
        if not link.exists() or link.resolve() != found.resolve():
            temporary = link.with_suffix(f".{os.getpid()}.tmp")
            temporary.unlink(missing_ok=True)
            temporary.symlink_to(found)
            temporary.replace(link)
    return base


def catalog_url() -> str:
    url = home.postgres_url()
    if not url:
        raise StoreError("GD_ASSETS_STORE=ducklake keeps its catalog in PostgreSQL: run `gd-assets db start`, "
                         "or set GD_ASSETS_POSTGRES_URL")
    return url


def data_location() -> str:
    """Where the lake's Parquet files go: `s3://.../lake` under the object store, else the local folder."""
    where = objects.root()
    return where.url(objects.LAKE_PREFIX) if where else str(home.lake_path())


def attach(url: str, data_path: str) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB with the lake attached and in use. The first attach of a new catalog creates
    DuckLake's tables; a process that meets another one doing so fails, and tries again on what it made."""
    def once() -> duckdb.DuckDBPyConnection:
        con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": True})
        try:
            con.execute(f"SET extension_directory = '{extension_directory()}'")
            con.execute("LOAD ducklake")
            con.execute("LOAD postgres")
            if data_path.startswith("s3://"):
                con.execute("LOAD httpfs")
                con.execute(objects.duckdb_secret_sql())
            # Inlining small writes into the catalog is off: under concurrent writers it returned duplicates.
            con.execute(f"ATTACH 'ducklake:postgres:{url}' AS {ALIAS} (DATA_PATH '{data_path}/', "
                        f"METADATA_SCHEMA '{METADATA_SCHEMA}', DATA_INLINING_ROW_LIMIT 0)")
            con.execute(f"USE {ALIAS}")
        except BaseException:
            con.close()
            raise
        return con

    def creating_catalog(error: duckdb.Error) -> bool:
        text = str(error)
        return "Failed to initialize DuckLake" in text and ("already exists" in text or "duplicate key" in text) \
            or unreachable(error)

    try:
        return with_backoff(once, creating_catalog, max(INIT_WAIT_SECONDS, PATIENCE_SECONDS), first=0.1, longest=1.0)
    except duckdb.Error as error:
        raise StoreError(f"cannot attach the DuckLake store (catalog {url}, data {data_path}): {error}") from error


def _connection(prepare: Callable[[duckdb.DuckDBPyConnection], None]) -> duckdb.DuckDBPyConnection:
    """This process's attached lake, made on first use (`prepare` then creates the tables); a forked
    child or a change of catalog or folder attaches anew."""
    global _attached
    url, data_path = catalog_url(), data_location()
    where = f"{url} {data_path}"
    with _lock:
        if _attached is None or _attached[0] != os.getpid() or _attached[1] != where:
            if _attached is not None and _attached[0] == os.getpid():
                _attached[2].close()
            _attached = None
            con = attach(url, data_path)
            try:
                retrying(lambda: prepare(con))
            except Exception:
                con.close()
                raise
            _attached = (os.getpid(), where, con)
        return _attached[2]


@contextmanager
def cursor(prepare: Callable[[duckdb.DuckDBPyConnection], None]) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor on the process's lake: its own transactions, safe to use from another thread."""
    cur = _connection(prepare).cursor()
    try:   # a cursor starts in the in-memory database, not in the lake
        patient(lambda: cur.execute(f"USE {ALIAS}"))
    except BaseException:
        cur.close()
        raise
    try:
        yield cur
    finally:
        cur.close()


def is_conflict(error: Exception) -> bool:
    """A commit that lost to another worker's (DuckLake retries some itself; these it gives up on)."""
    text = str(error)
    return isinstance(error, duckdb.TransactionException) or "Failed to commit DuckLake transaction" in text \
        or "conflict" in text.lower()


def unreachable(error: Exception) -> bool:
    """The catalog's PostgreSQL could not be reached or dropped the connection: worth waiting for."""
    text = str(error)
    return "Unable to connect to Postgres" in text or "server closed the connection" in text \
        or "could not connect to server" in text or "Connection refused" in text


def _waiting(error: duckdb.Error) -> bool:
    if unreachable(error):
        log.warning("the DuckLake catalog is unreachable; waiting up to %.0f s for it: %s", PATIENCE_SECONDS,
                    str(error).splitlines()[0])
        return True
    return False


def patient(call: Callable[[], T]) -> T:
    """`call()` (a read, or a statement of no effect until commit), again while the catalog is unreachable."""
    return with_backoff(call, _waiting, PATIENCE_SECONDS, first=0.2, longest=5.0)


def retrying(write: Callable[[], T], wait: float = RETRY_SECONDS) -> T:
    """Run `write` (one whole transaction), again after a lost commit race or while the catalog is
    unreachable, with backoff. A transaction cut off at its commit is written again: each write replaces
    its keys, so twice is once."""
    def lost_race(error: duckdb.Error) -> bool:
        if is_conflict(error):
            log.debug("DuckLake commit conflict, retrying: %s", error)
            return True
        return _waiting(error)
    return with_backoff(write, lost_race, max(wait, PATIENCE_SECONDS), first=0.05, longest=5.0)


def check_span(keep: str) -> str:
    """`keep` as maintenance takes it: a number and a unit ('1 hour', '0 seconds')."""
    if not re.fullmatch(r"\d+ (second|minute|hour|day)s?", keep):
        raise StoreError(f"keep {keep!r}: a span such as '1 hour' or '0 seconds'")
    return keep


def maintain(con: duckdb.DuckDBPyConnection, keep: str = "1 hour") -> dict:
    """Merge the small Parquet files each commit writes, expire snapshots older than `keep` and delete
    the files only they used; returns the data file counts before and after."""
    check_span(keep)

    def files() -> int:
        return int(con.execute(f"SELECT count(*) FROM glob('{data_location()}/**/*.parquet')").fetchone()[0])

    before = files()
    con.execute(f"CALL ducklake_merge_adjacent_files('{ALIAS}')")
    con.execute(f"CALL ducklake_expire_snapshots('{ALIAS}', older_than => now() - INTERVAL '{keep}')")
    con.execute(f"CALL ducklake_cleanup_old_files('{ALIAS}', older_than => now() - INTERVAL '{keep}')")
    return {"files_before": before, "files_after": files()}
