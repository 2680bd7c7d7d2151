"""DuckDB connections that wait for the file lock instead of failing.

DuckDB allows one writing process per file. Every writer here keeps its connection short (open,
upsert a batch, close) and retries with backoff while another process holds the lock, so two
analyses and a corpus refresh can run at once without a lock error and without losing rows.

A file is attached to one in-memory DuckDB of the process rather than opened as a database of its
own: starting a database costs about 8 ms (even an empty one), attaching a file under 2, and an
analysis opens its store a few hundred times. As when DuckDB shares one database between a
process's connections to a path, connections to an attached file share it, and the file is
detached (checkpointed, its lock released) when the last one closes, or, inside `lingering(path)`
(a run of this process that is the file's only writer), when the run ends or another process waits.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, TypeVar

import duckdb

log = logging.getLogger(__name__)

LOCK_WAIT_SECONDS = 600.0
LOCK_RETRY_LONGEST = 0.25   # the longest pause between two tries at a file another process holds
YIELD_SECONDS = 0.6         # how long a lingering holder leaves a file alone for a process that waits


# A list of strings as one query parameter: `... IN (SELECT unnest(TEXT_LIST))` with `text_list(values)`.
# DuckDB 1.5 converts a Python list parameter element by element (about 0.15 ms each, 10 ms for a
# batch of 64 keys); one JSON string costs about as much as any other string.
TEXT_LIST = "CAST(?::JSON AS VARCHAR[])"


def text_list(values) -> str:
    return json.dumps(list(values), ensure_ascii=False)


class StoreError(Exception):
    """A store or corpus file cannot be opened or written as asked; the message says what to do."""


T = TypeVar("T")


def with_backoff(call: Callable[[], T], retry: Callable[[Exception], bool], wait: float,
                 first: float = 0.02, longest: float = 1.0, errors: type[Exception] | tuple = duckdb.Error) -> T:
    """`call()`, again with growing jittered pauses while it raises one of `errors` that `retry` accepts,
    for up to `wait` seconds: how this project waits for another process (a file lock, a lost commit
    race) or a server (PostgreSQL unreachable)."""
    deadline = time.monotonic() + wait
    delay = first
    while True:
        try:
            return call()
        except errors as error:
            if not retry(error) or time.monotonic() > deadline:
                raise
            log.debug("retrying after: %s", error)
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, longest)


def _is_lock_error(error: Exception) -> bool:
    text = str(error)
    return "lock" in text.lower() or "Conflicting lock" in text


@dataclass
class _Attached:
    alias: str
    read_only: bool
    users: int = 0
    since: float = 0.0   # time.time() it was attached


def _wanted(path: str) -> Path:
    """The file a process touches while it waits for `path`: the lingering holder then lets go."""
    return Path(path + ".wanted")


class _Attachments:
    """The process's in-memory DuckDB and the files attached to it, by resolved path."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pid = -1
        self.base: duckdb.DuckDBPyConnection | None = None
        self.files: dict[str, _Attached] = {}
        self.names = itertools.count()
        self.lingering: dict[str, int] = {}      # path -> open `lingering` scopes
        self.yielding: dict[str, float] = {}     # path -> monotonic time until which it is left alone

    def _own_process(self) -> None:
        if self.pid != os.getpid():   # a forked child starts its own, lingering nothing
            self.base, self.files, self.pid = duckdb.connect(":memory:"), {}, os.getpid()
            self.lingering, self.yielding = {}, {}

    def wait_turn(self, path: str) -> None:
        """Sleep out the pause this process gives a waiting process before it attaches `path` again."""
        until = self.yielding.get(path, 0.0)
        if until > time.monotonic():
            time.sleep(until - time.monotonic())

    def acquire(self, path: str, read_only: bool) -> duckdb.DuckDBPyConnection:
        """A connection whose default database is `path`, attached if no connection holds it yet."""
        with self.lock:
            self._own_process()
            held = self.files.get(path)
            if held is not None and held.read_only and not read_only:   # retried until its readers are done
                raise duckdb.BinderException(f"Unique file handle conflict: {path} is attached read-only")
            if held is None:
                alias = f"file{next(self.names)}"
                self._run(f"ATTACH '{_quoted(path)}' AS {alias}{' (READ_ONLY)' if read_only else ''}")
                held = self.files[path] = _Attached(alias, read_only, since=time.time())
            held.users += 1
            con = self.base.cursor()
        try:
            con.execute(f"USE {held.alias}")
        except BaseException:
            con.close()
            self.release(path)
            raise
        return con

    def release(self, path: str) -> None:
        with self.lock:
            held = self.files[path]
            held.users -= 1
            if held.users == 0 and not self._keeps(path, held):
                self._detach(path)

    def _keeps(self, path: str, held: _Attached) -> bool:
        """Whether an idle file stays attached: a lingering writer's, unless another process asked for it."""
        return bool(self.lingering.get(path)) and not held.read_only and not self._waited_for(path, held)

    def _waited_for(self, path: str, held: _Attached) -> bool:
        """Whether another process asked for `path` since it was attached: it gets a pause to attach it."""
        try:
            asked = _wanted(path).stat().st_mtime >= held.since
        except OSError:
            return False
        if asked:
            self.yielding[path] = time.monotonic() + YIELD_SECONDS
            _wanted(path).unlink(missing_ok=True)
        return asked

    def _detach(self, path: str) -> None:
        self._run(f"DETACH {self.files[path].alias}")   # if it fails (a full disk), the file stays attached for the next
        del self.files[path]

    def linger(self, path: str, on: bool) -> None:
        with self.lock:
            self._own_process()
            count = self.lingering.get(path, 0) + (1 if on else -1)
            self.lingering[path] = count
            if count <= 0:
                del self.lingering[path]
                held = self.files.get(path)
                if held is not None and held.users == 0:
                    self._detach(path)

    def _run(self, statement: str) -> None:
        cursor = self.base.cursor()
        try:
            cursor.execute(statement)
        finally:
            cursor.close()


_attached = _Attachments()


def _quoted(path: str) -> str:
    return path.replace("'", "''")


@contextmanager
def lingering(path: Path | str) -> Iterator[None]:
    """Inside, `path` stays attached between this process's connections: a run that writes the file in
    many short transactions pays one attach and one checkpoint instead of one per transaction (DETACH
    checkpoints the file). Only for a run of a process that is the file's only writer; another process
    that waits for the file is let in within a pause (`YIELD_SECONDS`), and the file is detached when
    the outermost scope ends."""
    key = str(Path(path).resolve())
    _attached.linger(key, True)
    try:
        yield
    finally:
        _attached.linger(key, False)


@contextmanager
def connect(path: Path | str, read_only: bool = False, wait: float = LOCK_WAIT_SECONDS) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open `path`, retrying while another process holds its lock (or another thread is between opening
    and closing it); commit and close on exit."""
    path = Path(path)
    if read_only and not path.exists():
        raise FileNotFoundError(f"{path} does not exist yet: build it first")
    path.parent.mkdir(parents=True, exist_ok=True)
    key = str(path.resolve())

    asked = []

    def lock_held(error: duckdb.Error) -> bool:
        if "Unique file handle conflict" in str(error):
            return True   # another thread of this process is opening or closing the same file
        held = isinstance(error, (duckdb.IOException, duckdb.ConnectionException)) and _is_lock_error(error)
        if held:   # another process has it: tell it, in case it lingers
            try:
                _wanted(key).touch()
                asked.append(True)
            except OSError:
                pass
        return held

    def attach() -> duckdb.DuckDBPyConnection:
        _attached.wait_turn(key)
        return _attached.acquire(key, read_only)

    try:
        con = with_backoff(attach, lock_held, wait, longest=LOCK_RETRY_LONGEST)
    except duckdb.Error as error:
        if "newer version of DuckDB" in str(error):
            raise StoreError(f"{path} was written by a newer DuckDB than {duckdb.__version__}, which gd-assets "
                             "uses: move it aside and build it again (`gd-assets corpus build` for the corpus, "
                             "`gd-assets analyze` for the projects store)") from error
        raise
    finally:
        if asked:
            _wanted(key).unlink(missing_ok=True)
    try:
        yield con
    finally:
        con.close()   # rolls back what it left open, before the file may be detached
        _attached.release(key)
