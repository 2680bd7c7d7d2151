"""`project_verdict`: judgements rolled up fragment -> file -> folder -> project, plus the report (with
each fragment's Godot 4 diff and manual items when its rewrite is current)."""

import datetime as dt
import json

import dagster as dg

from gd_assets import home, objects, store
from gd_assets.assets.judgement import fragment_judgement
from gd_assets.assets.metadata import md_table
from gd_assets.assets.rewrite import fragment_rewrite
from gd_assets.core.aggregate import roll_up
from gd_assets.core.report import html_page, markdown
from gd_assets.partitions import projects_partitions


def current_judgements(project: str) -> tuple[list[dict], int]:
    """Judgements of the project's current fragments (same text as judged), and how many lack one."""
    rows = store.query(
        "SELECT f.key, f.path, f.start_line, f.end_line, f.dump_start_line, f.dump_end_line, f.kind, f.text, "
        "j.signal, j.migration_needed, j.confidence, j.rationale, j.evidence, j.content_hash = f.content_hash AS fresh, "
        "r.new_text, r.manual "
        "FROM fragments f LEFT JOIN judgements j ON j.key = f.key "
        "LEFT JOIN rewrites r ON r.key = f.key AND r.content_hash = f.content_hash "
        "AND r.migration_needed IS NOT DISTINCT FROM j.migration_needed WHERE f.project = ? "
        "ORDER BY f.dump_start_line NULLS LAST, f.path, f.ordinal", [project]).to_dicts()
    judged = [r for r in rows if r["signal"] is not None and r["fresh"]]
    return judged, len(rows) - len(judged)


UNIQUE_CHECK = "project_rows_unique"
PROJECT_TABLES = ("files", "fragments", "evidence", "candidates", "judgements", "rewrites")


def duplicate_ids(project: str) -> dict[str, int]:
    """Rows sharing an id, per project table (every write is an upsert, so all must be 0)."""
    out = {}
    for table in PROJECT_TABLES:
        key = store.KEYS[table]
        out[table] = store.query(f"SELECT count(*) - count(DISTINCT {key}) FROM {table} WHERE project = ?",
                                 [project]).item()
    return out


@dg.asset(
    partitions_def=projects_partitions,
    deps=[dg.AssetDep(fragment_judgement, partition_mapping=dg.AllPartitionMapping()),
          dg.AssetDep(fragment_rewrite, partition_mapping=dg.AllPartitionMapping())],
    check_specs=[dg.AssetCheckSpec(UNIQUE_CHECK, asset="project_verdict",
                                   description="No two rows of this project's tables share an id.")],
    group_name="projects",
    code_version="verdict-1",
    kinds={"duckdb"},
    description="godot3 / godot4 / mixed / unknown from the fragment judgements, with where and a report.",
)
def project_verdict(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    project = context.partition_key
    judged, unjudged = current_judgements(project)
    if unjudged:
        context.log.warning(f"{project}: {unjudged} fragments have no current judgement; the verdict leaves them out")
    summary = roll_up(project, judged)
    store.upsert("verdicts", store.frame("verdicts", [{
        "project": project, "verdict": summary["verdict"], "confidence": summary["confidence"],
        "explanation": summary["explanation"],
        "summary": json.dumps({k: summary[k] for k in ("counts", "folders", "files")}),
        "judged": len(judged), "unjudged": unjudged,
        "computed_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)}]))
    reports = home.reports_dir()
    md_path, html_path = reports / f"{project}.md", reports / f"{project}.html"
    md_path.write_text(markdown(summary, judged))
    html_path.write_text(html_page(summary, judged))
    objects.publish_project(project, {md_path.name: md_path, html_path.name: html_path})
    c = summary["counts"]
    duplicates = duplicate_ids(project)
    return dg.MaterializeResult(check_results=[dg.AssetCheckResult(
        check_name=UNIQUE_CHECK, passed=not any(duplicates.values()), severity=dg.AssetCheckSeverity.ERROR,
        metadata={"duplicates": dg.MetadataValue.json(duplicates)})], metadata={
        "verdict": summary["verdict"],
        "confidence": summary["confidence"],
        "explanation": dg.MetadataValue.text(summary["explanation"]),
        "godot3": c["godot3"], "godot4": c["godot4"], "neutral": c["neutral"],
        "migration_needed": c["migration_needed"], "unjudged": unjudged,
        "files": dg.MetadataValue.md(md_table(
            ["file", "verdict", "Godot 3", "Godot 4", "neutral", "migration"],
            [(f["path"], f["verdict"], f["godot3"], f["godot4"], f["neutral"], f["migration_needed"])
             for f in summary["files"]])),
        "report_markdown": dg.MetadataValue.path(str(md_path)),
        "report_html": dg.MetadataValue.path(str(html_path)),
    })
