"""`project_sources`: a project expanded to files, each included or excluded with a reason."""


import datetime as dt
from collections import Counter

import dagster as dg

from gd_assets import store
from gd_assets.assets.metadata import md_table
from gd_assets.core.ingest import IngestError, IngestOptions, ingest
from gd_assets.partitions import projects_partitions


class ProjectSourceConfig(dg.Config):
    """Where the project comes from; empty `source` re-reads the one recorded for this project."""

    source: str = ""
    include_documents: bool = False
    max_file_bytes: int = 5_000_000


@dg.asset(
    partitions_def=projects_partitions,
    group_name="projects",
    code_version="1",
    kinds={"duckdb"},
    description="Every file of the project with kind, size, lines and hash; excluded files keep their reason.",
)
def project_sources(context: dg.AssetExecutionContext, config: ProjectSourceConfig) -> dg.MaterializeResult:
    project = context.partition_key
    source = config.source
    if not source:
        known = store.project_row(project) if store.exists() else None
        if known is None:
            raise dg.Failure(
                f"project '{project}' has no recorded source: launch with config "
                "`ops: project_sources: config: source: <folder|zip|git url|dump>`"
            )
        source = known["source"]
    try:
        found = ingest(source, name=project, options=IngestOptions(
            include_documents=config.include_documents, max_file_bytes=config.max_file_bytes))
    except IngestError as error:
        raise dg.Failure(str(error)) from error
    files = found.files
    store.upsert("files", store.frame("files", [
        {**vars(f), "id": f"{project}/{f.path}", "project": project} for f in files
    ]), replace_project=project)
    included = [f for f in files if f.included]
    excluded = [f for f in files if not f.included]
    store.upsert("projects", store.frame("projects", [{
        "project": project, "source": found.source, "source_kind": found.source_kind,
        "revision": found.revision, "files": len(files), "included": len(included),
        "excluded": len(excluded), "ingested_at": dt.datetime.now(dt.UTC).replace(tzinfo=None),
    }]))
    context.log.info(f"{project}: {len(included)} files included, {len(excluded)} excluded")
    reasons = Counter(f.reason for f in excluded)
    return dg.MaterializeResult(metadata={
        "source": dg.MetadataValue.text(f"{found.source_kind}: {found.source}"),
        "revision": found.revision or "",
        "included_files": len(included),
        "excluded_files": len(excluded),
        "lines": sum(f.line_count or 0 for f in included),
        "excluded": dg.MetadataValue.md(
            md_table(["path", "reason"], [(f.path, f.reason) for f in excluded])),
        "exclusion_reasons": dg.MetadataValue.md(md_table(["reason", "files"], reasons.most_common())),
        "included": dg.MetadataValue.md(
            md_table(["path", "kind", "lines", "bytes"], [(f.path, f.kind, f.line_count, f.size) for f in included])),
    })
