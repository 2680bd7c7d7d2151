"""`fragments`: included files cut into fragments, one dynamic partition registered per fragment."""


import hashlib
import json
from collections import Counter

import dagster as dg

from gd_assets import store
from gd_assets.assets.metadata import line_range, md_table
from gd_assets.assets.sources import project_sources
from gd_assets.core.slicing import Fragment, slice_file, uncovered_lines
from gd_assets.partitions import fragment_key, projects_partitions, sync_fragment_partitions, unique_keys
from gd_assets.resources import AnalysisStore

COVERAGE_CHECK = "every_line_in_one_fragment"


def fragment_rows(project: str, files: list[dict]) -> list[dict]:
    """Slice every included file and give each fragment its key, provenance and content hash."""
    rows: list[dict] = []
    for file in files:
        for frag in slice_file(file["path"], file["kind"], file["text"] or ""):
            rows.append(_row(project, file, frag))
    for row, key in zip(rows, unique_keys([r["key"] for r in rows])):
        row["key"] = key
    return rows


def _row(project: str, file: dict, frag: Fragment) -> dict:
    offset = file.get("dump_start_line")
    return {
        "key": fragment_key(project, frag.path, frag.symbol),
        "project": project, "path": frag.path, "ordinal": frag.ordinal,
        "start_line": frag.start_line, "end_line": frag.end_line,
        "dump_start_line": None if offset is None else offset + frag.start_line - 1,
        "dump_end_line": None if offset is None else offset + frag.end_line - 1,
        "kind": frag.kind, "symbol": frag.symbol, "text": frag.text, "reason": frag.reason,
        "content_hash": hashlib.sha256(frag.text.encode()).hexdigest()[:16],
    }


def coverage_problems(files: list[dict], fragments: list[dict]) -> list[dict]:
    """Files whose non-blank lines are not each in exactly one fragment (must be empty)."""
    by_path: dict[str, list[Fragment]] = {}
    for row in fragments:
        by_path.setdefault(row["path"], []).append(
            Fragment(row["path"], row["start_line"], row["end_line"], row["kind"], row["symbol"]))
    problems = []
    for file in files:
        missing, doubled = uncovered_lines(file["text"] or "", by_path.get(file["path"], []))
        if missing or doubled:
            problems.append({"path": file["path"], "missing": missing[:20], "doubled": doubled[:20]})
    return problems


@dg.asset(
    partitions_def=projects_partitions,
    deps=[project_sources],
    group_name="projects",
    code_version="1",
    kinds={"duckdb"},
    check_specs=[dg.AssetCheckSpec(COVERAGE_CHECK, asset="fragments",
                                   description="Every non-blank line of an included file is in exactly one fragment.")],
    description="Declaration/function fragments of .gd files (tree-sitter) and line-range slices of other text.",
)
def fragments(context: dg.AssetExecutionContext, analysis_store: AnalysisStore):
    project = context.partition_key
    db = analysis_store.db()
    files = store.project_files(project, included_only=True).to_dicts()
    rows = fragment_rows(project, files)
    store.upsert("fragments", store.frame("fragments", rows), replace_project=project, path=db)
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
