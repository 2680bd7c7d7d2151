"""`inbox_sensor`: drop a project into `<GD_ASSETS_HOME>/inbox/` and it is ingested and sliced.

Each item directly in the inbox (a project folder, a `.zip`, or a `*.dump.txt`) becomes a project:
the sensor registers its `projects` partition (named as `gd-assets analyze` would name it) and
launches `project_sources` + `fragments` + `project_symbols` for it. An item is launched again only when its content
changes; the cursor keeps one fingerprint per item. Evidence, judgement and the verdict are then
one backfill away (the `fragments` run registers the fragment partitions).

The sensor is off by default. Turn it on in the UI (Automation -> `inbox_sensor` -> toggle), or
with `dagster sensor start inbox_sensor -w workspace.yaml` (DAGSTER_HOME as `gd-assets dev` sets
it); `dagster dev` runs the daemon that evaluates it. Removing an item from the inbox keeps its
project and results.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from gd_assets import home
from gd_assets.assets.fragments import fragments
from gd_assets.assets.project_symbols import project_symbols
from gd_assets.assets.sources import project_sources
from gd_assets.core.ingest import EDITOR_CACHE_DIRS, default_project_name
from gd_assets.partitions import projects_partitions

# An item changed this recently may still be being copied in; it is picked up on a later tick.
SETTLE_SECONDS = 5.0
# Folders inside a project folder whose churn says nothing about the project's text.
IGNORED_DIRS = EDITOR_CACHE_DIRS | {".git"}
_CHUNK = 1 << 20


@dataclass(frozen=True)
class InboxItem:
    """One droppable item: its path, the cheap stat signature and when it last changed."""

    path: Path
    stat: str
    changed_at: float


def inbox_dir() -> Path:
    """`<GD_ASSETS_HOME>/inbox/`, created so a person can see where to drop projects."""
    return home.inbox_dir()


def _is_droppable(path: Path) -> bool:
    if path.name.startswith((".", "~")) or path.name.endswith("~"):
        return False
    if path.is_dir():
        return True
    name = path.name.lower()
    return path.is_file() and (name.endswith(".zip") or name.endswith(".dump.txt"))


def _folder_files(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if any(part in IGNORED_DIRS for part in parts[:-1]) or parts[-1] in IGNORED_DIRS:
            continue
        if path.is_file():
            found.append(path)
    return found


def scan(folder: Path) -> list[InboxItem]:
    """The droppable items directly in `folder`, in name order."""
    items = []
    for path in sorted(folder.iterdir()):
        if not _is_droppable(path):
            continue
        if path.is_dir():
            members = [(p.relative_to(path).as_posix(), p.stat()) for p in _folder_files(path)]
            signature = hashlib.sha256(json.dumps(
                [(name, st.st_size, st.st_mtime_ns) for name, st in members]).encode()).hexdigest()
            changed = max([st.st_mtime for _, st in members] + [path.stat().st_mtime])
            items.append(InboxItem(path, signature, changed))
        else:
            st = path.stat()
            items.append(InboxItem(path, f"{st.st_size}:{st.st_mtime_ns}", st.st_mtime))
    return items


def fingerprint(item: InboxItem) -> str:
    """What decides "changed": the bytes of a file; for a folder, its files' names, sizes and times."""
    if item.path.is_dir():
        return item.stat[:16]
    digest = hashlib.sha256()
    with item.path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def read_cursor(cursor: str | None) -> dict[str, dict[str, str]]:
    """`{item name: {"stat": ..., "fingerprint": ...}}`; an unreadable cursor starts afresh."""
    try:
        data = json.loads(cursor) if cursor else {}
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


@dg.sensor(
    target=[project_sources, fragments, project_symbols],
    minimum_interval_seconds=15,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Ingests and slices every new or changed project folder, .zip or *.dump.txt in <GD_ASSETS_HOME>/inbox/.",
)
def inbox_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    folder = inbox_dir()
    seen = read_cursor(context.cursor)
    known_projects = set(context.instance.get_dynamic_partitions(projects_partitions.name))
    now = time.time()
    cursor: dict[str, dict[str, str]] = {}
    new_projects: list[str] = []
    runs: list[dg.RunRequest] = []
    for item in scan(folder):
        entry = item.path.name
        before = seen.get(entry)
        if before and before.get("stat") == item.stat:
            cursor[entry] = before
            continue
        if now - item.changed_at < SETTLE_SECONDS:
            context.log.info(f"{entry} changed in the last {SETTLE_SECONDS:g}s; waiting for it to settle")
            if before:
                cursor[entry] = before
            continue
        digest = fingerprint(item)
        cursor[entry] = {"stat": item.stat, "fingerprint": digest}
        if before and before.get("fingerprint") == digest:
            continue  # touched, not changed
        try:
            name = default_project_name(item.path)
        except ValueError as error:
            context.log.warning(f"{item.path}: {error}; rename it in the inbox")
            continue
        if name not in known_projects and name not in new_projects:
            new_projects.append(name)
        runs.append(dg.RunRequest(
            partition_key=name,
            asset_selection=[project_sources.key, fragments.key, project_symbols.key],
            run_key=f"{name}:{digest}",
            run_config={"ops": {"project_sources": {"config": {"source": str(item.path.resolve())}}}},
            tags={"gd-assets/inbox": entry},
        ))
    if not runs and cursor == seen:
        return dg.SkipReason(f"nothing new in {folder}")
    return dg.SensorResult(
        run_requests=runs,
        dynamic_partitions_requests=[projects_partitions.build_add_request(new_projects)] if new_projects else [],
        cursor=json.dumps(cursor, sort_keys=True),
    )


sensors = [inbox_sensor]
