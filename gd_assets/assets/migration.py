"""`project_migration`: the migrated copy of a project, its patch and its summary.

Every file of the source is written: rewritten where its fragments have edits, copied byte for
byte otherwise (binary files too, for folder, zip and git sources; a dump writes its included
files). The source itself is never written to. The copy is built beside the target and swapped in
at the end, so a failed run leaves the previous copy whole.
"""

import datetime as dt
import json
import os
import shutil
from collections import defaultdict
from pathlib import Path

import dagster as dg

from gd_assets import home, objects, store
from gd_assets.assets.metadata import md_table
from gd_assets.assets.rewrite import fragment_rewrite
from gd_assets.assets.sources import project_sources
from gd_assets.core.ingest import IngestError, raw_files
from gd_assets.core.migration import FileMigration, migrate_file, migrated_path, summary, unified_diff
from gd_assets.core.rewrite import Edit
from gd_assets.partitions import projects_partitions

MARKER = ".gd-assets-migration"


class MigrationConfig(dg.Config):
    """Where to write; empty means `<home>/migrations/<project>/` and `<home>/migrations/<project>.patch`."""

    out: str = ""
    patch: str = ""


def migrations_dir() -> Path:
    """Where each project's migrated copy, patch and summary go: `<home>/migrations/`."""
    path = home.data_home() / "migrations"
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_paths(project: str) -> tuple[Path, Path]:
    base = migrations_dir()
    return base / project, base / f"{project}.patch"


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_target(out: Path, source: str, source_kind: str) -> None:
    """Refuse a target that is (in) the source, holds it, or is a folder of someone else's files."""
    if source_kind == "folder":
        src = Path(source).resolve()
        if _inside(out, src) or _inside(src, out):
            raise dg.Failure(f"{out} overlaps the project source {src}: the source is never written to; "
                             "pass another --out folder")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).exists())):
        raise dg.Failure(f"{out} exists and is not an earlier migration (no {MARKER} in it): "
                         "pass an empty or new --out folder")


def file_edits(project: str) -> tuple[dict[str, list[Edit]], dict[str, list[str]]]:
    """The edits and the manual item kinds of a project's current rewrites, per file."""
    edits: dict[str, list[Edit]] = defaultdict(list)
    manual: dict[str, list[str]] = defaultdict(list)
    for row in store.project_rewrites(project).to_dicts():
        edits[row["path"]].extend(Edit(**e) for e in json.loads(row["edits"]))
        manual[row["path"]].extend(m["kind"] for m in json.loads(row["manual"]))
    return edits, manual


def _migrated(f: dict, original: bytes | None, edits: dict, manual: dict, log) -> tuple[FileMigration, bytes]:
    """One analysed text file: its migration (line ends as the source's) and the bytes to write."""
    migrated = migrate_file(f["path"], f["text"], edits.get(f["path"], []), manual.get(f["path"], []))
    if migrated.problem:
        log.warning(f"{f['path']}: {migrated.problem}")
    if original is not None and b"\r\n" in original:  # the patch and the copy keep the file's line ends
        migrated.old, migrated.new = (t.replace("\n", "\r\n") for t in (migrated.old, migrated.new))
    if original is not None and not migrated.changed:
        return migrated, original
    return migrated, migrated.new.encode(f["encoding"] or "utf-8")


def _write(target: Path, data: bytes) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    except OSError as error:  # not the source's fault: stop here, the previous copy stays whole
        raise dg.Failure(f"cannot write {target}: {error.strerror or error}") from error


def write_copy(project: str, out: Path, log) -> list[FileMigration]:
    """Write the migrated copy into `out` (a fresh folder), reading the source once, file by file (a
    git source is a clone that lasts as long as the reading); returns each analysed text file's migration."""
    row = store.project_row(project)
    texts = {f["path"]: f for f in store.project_files(project).to_dicts() if f["included"] and f["text"] is not None}
    edits, manual = file_edits(project)
    migrations = []
    try:
        for path, read in raw_files(row["source"], row["source_kind"]):
            if path in texts:
                migrated, data = _migrated(texts.pop(path), read(), edits, manual, log)
                migrations.append(migrated)
            else:
                data = read()
            _write(out / migrated_path(path), data)
    except (IngestError, OSError) as error:
        log.warning(f"{project}: cannot read {row['source']} again ({error}); its other files are written "
                    "from the analysed text")
    for f in texts.values():  # a dump's files, or a source that is gone
        migrated, data = _migrated(f, None, edits, manual, log)
        migrations.append(migrated)
        _write(out / migrated.new_path, data)
    return migrations


@dg.asset(
    partitions_def=projects_partitions,
    deps=[project_sources, dg.AssetDep(fragment_rewrite, partition_mapping=dg.AllPartitionMapping())],
    group_name="projects",
    code_version="migration-1",
    kinds={"duckdb"},
    description="The project's migrated copy (every file; rewritten where it has edits), its patch and summary.",
)
def project_migration(context: dg.AssetExecutionContext, config: MigrationConfig) -> dg.MaterializeResult:
    project = context.partition_key
    row = store.project_row(project)
    if row is None:
        raise dg.Failure(f"project {project!r} is not ingested: run `gd-assets analyze` first")
    out_default, patch_default = default_paths(project)
    out = Path(config.out or out_default).expanduser().resolve()
    patch_path = Path(config.patch or patch_default).expanduser().resolve()
    check_target(out, row["source"], row["source_kind"])
    building = out.parent / f".{out.name}.building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    try:
        migrations = write_copy(project, building, context.log)
        (building / MARKER).write_text(f"migrated copy of {project} ({row['source']})\n")
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    if out.exists():
        shutil.rmtree(out)
    building.rename(out)
    patch = unified_diff(migrations)
    patch_path.parent.mkdir(parents=True, exist_ok=True)
    patch_path.write_text(patch)
    facts = {"project": project, "out": str(out), "patch": str(patch_path), **summary(migrations)}
    summary_path = patch_path.with_suffix(".json")
    summary_path.write_text(json.dumps(facts, indent=2, ensure_ascii=False))
    shared = objects.publish_project(project, {"migration.patch": patch_path, "migration.json": summary_path},
                                     ("migration", out))
    if shared:
        context.log.info(f"{project}: the copy, patch and summary are also in {shared}")
    store.upsert("migrations", store.frame("migrations", [{
        "project": project, "out": str(out), "patch": str(patch_path), "files_changed": facts["files_changed"],
        "renamed": json.dumps({new: old for old, new in facts["renamed"].items()}),
        "migrated_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)}]))
    context.log.info(f"{project}: {facts['files_changed']} files changed, {facts['edits']} edits, "
                     f"{facts['manual']} manual items; copy in {out}")
    return dg.MaterializeResult(metadata={
        "out": dg.MetadataValue.path(str(out)),
        "patch": dg.MetadataValue.path(str(patch_path)),
        "summary": dg.MetadataValue.path(str(summary_path)),
        "files_changed": facts["files_changed"],
        "files_renamed": len(facts["renamed"]),
        "edits": facts["edits"],
        "manual_items": facts["manual"],
        "manual by kind": dg.MetadataValue.md(md_table(["kind", "items"], facts["manual_by_kind"].items())),
        "files": dg.MetadataValue.md(md_table(
            ["file", "edits", "manual", "problem"],
            [(f["path"], f["edits"], sum(f["manual"].values()), f["problem"] or "") for f in facts["files"]])),
        "folders": dg.MetadataValue.md(md_table(
            ["folder", "files", "edits", "manual"],
            [(f["folder"], f.get("files", 0), f.get("edits", 0), f.get("manual", 0)) for f in facts["folders"]])),
        "patch (start)": dg.MetadataValue.md(f"```diff\n{patch[:8000]}\n```"),
    })
