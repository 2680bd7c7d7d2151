"""The corpus in object storage: built once, published, and fetched by every worker by its version.

`publish` uploads the corpus home's current index build and the corpus tables it was built from to
`corpus/<build>/` under GD_ASSETS_OBJECT_STORE, then names the build in `corpus/CURRENT`. `sync` (a
worker, before each fragment run) reads that pointer and, when its own corpus home holds another
build, downloads the published one beside it and switches to it the way a local build publishes:
the index's CURRENT pointer is replaced last, so a reader never sees half of one.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time

from gd_assets import home, objects
from gd_assets.core.corpus.layout import CURRENT, current_build
from gd_assets.core.duck import StoreError

POINTER = "CURRENT"
TABLES_FILE = "corpora.duckdb"
BUILD_MARK = ".published-build"   # in the corpus home: the build its corpus tables came with
CHECK_SECONDS = 10.0              # a process asks the store for the pointer at most this often

_checked: tuple[float, str] | None = None


def _prefix(*parts: str) -> str:
    return objects.root().key(objects.CORPUS_PREFIX, *parts)


def publish() -> dict:
    """Upload this corpus home's current build; returns what was published."""
    if objects.root() is None:
        raise StoreError("corpus publish: set GD_ASSETS_OBJECT_STORE=s3://bucket/prefix first")
    build = current_build(home.index_dir())
    if build is None or not home.corpora_db_path().exists():
        raise StoreError("corpus publish: no corpus is built here: run `gd-assets corpus build` first")
    files = objects.upload_tree(build, _prefix(build.name, "index"))
    objects.upload_file(home.corpora_db_path(), _prefix(build.name, TABLES_FILE))
    objects.put_bytes(_prefix(POINTER), build.name.encode())
    (home.corpus_home() / BUILD_MARK).write_text(build.name)
    return {"build": build.name, "files": files + 1, "url": objects.root().url(objects.CORPUS_PREFIX, build.name)}


def published_build() -> str | None:
    data = objects.get_bytes(_prefix(POINTER))
    return data.decode().strip() if data else None


def _local_build() -> str | None:
    build = current_build(home.index_dir())
    mark = home.corpus_home() / BUILD_MARK
    if build is None or not mark.exists() or mark.read_text().strip() != build.name:
        return None
    return build.name


def sync(force: bool = False) -> str | None:
    """Make the corpus home hold the published build; returns its name (None without an object store).
    Asks the store at most every CHECK_SECONDS unless `force`."""
    global _checked
    if objects.root() is None:
        return None
    if not force and _checked and time.monotonic() - _checked[0] < CHECK_SECONDS:
        return _checked[1]
    wanted = published_build()
    if wanted is None:
        raise StoreError(f"no corpus is published in {objects.root().url(objects.CORPUS_PREFIX)}: "
                         "run `gd-assets corpus publish` where it is built")
    if _local_build() != wanted:
        with open(home.corpus_home() / ".sync.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)   # one download per machine; the others wait for it
            if _local_build() != wanted:
                _download(wanted)
    _checked = (time.monotonic(), wanted)
    return wanted


def _download(build: str) -> None:
    index = home.index_dir()
    target = index / build
    if not (target / "manifest.json").exists():
        partial = index / f".{build}.partial-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        if objects.download_tree(_prefix(build, "index"), partial) == 0:
            raise StoreError(f"the published corpus build {build} has no index files")
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
    tables = home.corpora_db_path()
    fresh = tables.with_name(f".{tables.name}.{os.getpid()}")
    objects.download_file(_prefix(build, TABLES_FILE), fresh)
    fresh.replace(tables)   # a reader with the old file open keeps reading it
    pointer = index / f".{CURRENT}.{os.getpid()}"
    pointer.write_text(build)
    pointer.replace(index / CURRENT)
    (home.corpus_home() / BUILD_MARK).write_text(build)
