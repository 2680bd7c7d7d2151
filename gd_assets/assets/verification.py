"""`project_verification`: what Godot 4 itself says about a project's migrated copy.

Explicit only: neither `analyze` nor `migrate` materialises it, and the MCP server reaches it only
when started with `--allow-verify`, since Godot runs the copy's tool scripts and autoloads as the
editor would. It works on a scratch copy with the editor plugins off and a time limit, never on the
copy itself; each error Godot reports is traced to its fragment and the edit (or untouched line) it
comes from.
"""

import datetime as dt
import json
from pathlib import Path

import dagster as dg

from gd_assets import home, store
from gd_assets.assets.metadata import md_table
from gd_assets.assets.migration import project_migration
from gd_assets.core.report import verification_markdown, with_verification
from gd_assets.core.verify import (
    CHECK_TIMEOUT,
    FIGURES,
    IMPORT_TIMEOUT,
    GodotNotFound,
    attribute,
    causes,
    figure_lines,
    find_godot,
    verify,
)
from gd_assets.partitions import projects_partitions


class VerificationConfig(dg.Config):
    """`godot`: a Godot 4 executable (empty: $GODOT4, $GODOT, `godot4` or `godot` on PATH)."""

    godot: str = ""
    import_timeout: float = IMPORT_TIMEOUT
    check_timeout: float = CHECK_TIMEOUT


def _texts(root: Path, paths: list[str]) -> dict[str, str]:
    out = {}
    for path in paths:
        try:
            out[path] = (root / path).read_bytes().decode("utf-8", "replace").replace("\r\n", "\n")
        except OSError:
            continue
    return out


@dg.asset(
    partitions_def=projects_partitions,
    deps=[project_migration],
    group_name="projects",
    code_version="verification-1",
    kinds={"godot"},
    description="Godot 4 on a scratch copy of the migrated project: scripts failing, scenes failing to load, "
                "properties dropped, input actions without a key, each traced to its fragment and edit.",
)
def project_verification(context: dg.AssetExecutionContext, config: VerificationConfig) -> dg.MaterializeResult:
    project = context.partition_key
    migration = store.one_row("migrations", project)
    if migration is None or not Path(migration["out"]).is_dir():
        raise dg.Failure(f"project {project!r} has no migrated copy: run `gd-assets migrate` first")
    try:
        godot = find_godot(config.godot or None)
    except GodotNotFound as error:
        raise dg.Failure(str(error)) from error
    copy = Path(migration["out"])
    context.log.info(f"{project}: Godot {godot.version} on a scratch copy of {copy}")
    report = verify(copy, godot, config.import_timeout, config.check_timeout)
    originals = {f["path"]: f["text"] for f in store.project_files(project, included_only=True).to_dicts()
                 if f["text"] is not None}
    renamed = json.loads(migration["renamed"])
    wanted = sorted({p.path for p in report.problems if p.path})
    fragments = store.project_fragments(project).to_dicts()
    rewrites = {r["key"]: {"edits": json.loads(r["edits"]), "manual": json.loads(r["manual"])}
                for r in store.project_rewrites(project).to_dicts()}
    judged = {j["key"]: j for j in store.query(
        "SELECT key, signal, migration_needed FROM judgements WHERE project = ?", [project]).to_dicts()}
    problems = attribute(report.problems, originals, _texts(copy, wanted), renamed, fragments, rewrites, judged)
    figures = {**report.figures(), "causes": causes(problems), "failing": report.failing}
    store.upsert("verifications", store.frame("verifications", [{
        "project": project, "copy": str(copy), "godot": godot.version, "figures": json.dumps(figures),
        "problems": json.dumps(problems, ensure_ascii=False),
        "verified_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)}]))
    md_path = home.reports_dir() / f"{project}.verify.md"
    md_path.write_text(verification_markdown(project, figures, figure_lines(figures), problems))
    for page, is_html in ((home.reports_dir() / f"{project}.md", False), (home.reports_dir() / f"{project}.html", True)):
        if page.exists():  # the project's report gets the figures too
            page.write_text(with_verification(page.read_text(), godot.version, figure_lines(figures), is_html))
    context.log.info(f"{project}: " + "; ".join(figure_lines(figures)))
    return dg.MaterializeResult(metadata={
        "godot": godot.version,
        **{label: report.figures()[key] for label, key, _ in FIGURES},
        "config_version": report.config_version or "",
        "timed out": report.timed_out,
        "causes": dg.MetadataValue.md(md_table(["cause", "problems"], figures["causes"].items())),
        "failing files": dg.MetadataValue.md(md_table(["file", "first error"], list(report.failing.items())[:200])),
        "problems": dg.MetadataValue.md(md_table(
            ["file", "line", "problem", "fragment", "cause"],
            [(p["path"], p["line"] or "", p["message"][:160], p["fragment"] or "", p["cause"]) for p in problems[:300]])),
        "report": dg.MetadataValue.path(str(md_path)),
    })
