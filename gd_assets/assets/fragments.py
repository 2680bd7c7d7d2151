"""`fragments`: included files cut into fragments, one dynamic partition registered per fragment."""


import hashlib
import json
from collections import Counter

import dagster as dg

from gd_assets import store
from gd_assets.assets.metadata import md_table
from gd_assets.assets.sources import project_sources
from gd_assets.core.fragments import coverage_problems, fragment_rows
from gd_assets.core.places import line_range
from gd_assets.partitions import projects_partitions, sync_fragment_partitions

COVERAGE_CHECK = "every_line_in_one_fragment"


@dg.asset(
    partitions_def=projects_partitions,
    deps=[project_sources],
    group_name="projects",
    code_version="2",  # 2: rows carry their file's kind
    kinds={"duckdb"},
    check_specs=[dg.AssetCheckSpec(COVERAGE_CHECK, asset="fragments",
                                   description="Every non-blank line of an included file is in exactly one fragment.")],
    description="Declaration/function fragments of .gd files (tree-sitter) and line-range slices of other text.",
)
def fragments(context: dg.AssetExecutionContext):
    project = context.partition_key
    files = store.project_files(project, included_only=True).to_dicts()
    rows = fragment_rows(project, files)
    store.upsert("fragments", store.frame("fragments", rows), replace_project=project)
    added, removed = sync_fragment_partitions(context.instance, project, [r["key"] for r in rows])
    context.log.info(f"{project}: {len(rows)} fragments ({added} new partitions, {removed} removed)")

    stored = store.project_fragments(project).to_dicts()
    problems = coverage_problems(files, stored)
    dumped = any(r["dump_start_line"] is not None for r in rows)
    version = hashlib.sha256(json.dumps(sorted((r["key"], r["content_hash"]) for r in rows)).encode()).hexdigest()[:16]
    yield dg.MaterializeResult(
        data_version=dg.DataVersion(version),  # changes only when this project's fragments change
        metadata={
            "fragments": len(rows),
            "files": len(files),
            "partitions_added": added,
            "partitions_removed": removed,
            "by_kind": dg.MetadataValue.json(dict(Counter(r["kind"] for r in rows))),
            "fragment_table": dg.MetadataValue.md(md_table(
                ["key", "path", "lines", "dump lines" if dumped else "", "kind"],
                [(r["key"], r["path"], line_range(r["start_line"], r["end_line"]),
                  line_range(r["dump_start_line"], r["dump_end_line"], "E") if dumped else "", r["kind"])
                 for r in rows])),
        },
        check_results=[dg.AssetCheckResult(
            check_name=COVERAGE_CHECK,
            passed=not problems,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata={"files_checked": len(files), "files_with_problems": len(problems),
                      "problems": dg.MetadataValue.json(problems[:50])},
        )],
    )
