"""`project_symbols`: what the project itself defines (scripts, autoloads, scene nodes), per project.

Evidence reads each fragment in this context, so the project's own `get_object()` or
`class_name Logger` is never taken for the engine's (see `gd_assets.core.project_context`).
"""

import datetime as dt
import json

import dagster as dg

from gd_assets import store
from gd_assets.assets.metadata import md_table
from gd_assets.assets.sources import project_sources
from gd_assets.core.project_context import ProjectContext, build_context
from gd_assets.partitions import projects_partitions


def symbol_rows(project: str, ctx: ProjectContext) -> list[dict]:
    return [{**row, "project": project, "id": f"{project}|{row['scope']}|{row['kind']}|{row['name']}"}
            for row in ctx.rows()]


def load_context(project: str) -> ProjectContext:
    """The stored context of a project (empty when none was built)."""
    return ProjectContext.from_rows(store.project_symbols(project).to_dicts())


@dg.asset(
    partitions_def=projects_partitions,
    deps=[project_sources],
    group_name="projects",
    code_version="1",
    kinds={"duckdb"},
    description="The project's own classes, members, autoloads and scene nodes: what its names resolve to.",
)
def project_symbols(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    project = context.partition_key
    files = store.project_files(project, included_only=True).select("path", "kind", "text").to_dicts()
    ctx = build_context(files)
    rows = symbol_rows(project, ctx)
    version, counts = ctx.version(), ctx.counts()
    store.upsert_many([
        ("project_symbols", store.frame("project_symbols", rows)),
        ("project_contexts", store.frame("project_contexts", [{
            "project": project, "version": version, "counts": json.dumps(counts),
            "built_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)}])),
    ], replace_project=project)
    scripts = [s for s in ctx.scripts.values() if "::" not in s.scope]
    context.log.info(f"{project}: {len(scripts)} scripts, {len(ctx.autoloads)} autoloads, {len(rows)} symbols")
    return dg.MaterializeResult(
        data_version=dg.DataVersion(version),
        metadata={
            "symbols": len(rows),
            "scripts": len(scripts),
            "class_names": sum(1 for s in scripts if s.class_name),
            "autoloads": len(ctx.autoloads),
            "nodes_resolved": counts.get("node", 0),
            "by_kind": dg.MetadataValue.json(counts),
            "classes": dg.MetadataValue.md(md_table(
                ["script", "class_name", "extends", "members", "nodes"],
                [(s.scope, s.class_name or "", s.extends or "", len(s.members), len(s.nodes))
                 for s in list(ctx.scripts.values())[:500]])),
            "autoload_table": dg.MetadataValue.md(md_table(
                ["name", "script or scene"], [(name, target) for (_, name), target in sorted(ctx.autoloads.items())])),
        },
    )
