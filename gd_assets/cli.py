"""`gd-assets`: the command line. Pipeline work always goes through a Dagster run in the instance."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from gd_assets import home, store
from gd_assets.assets.metadata import line_range
from gd_assets.core.dump import to_dump
from gd_assets.core.ingest import IngestError, default_project_name, ingest, project_slug

REPO = Path(__file__).resolve().parents[1]


class CliError(Exception):
    """A failure to report in one line, without a traceback."""


# --- running the pipeline -------------------------------------------------------------------------


def _absolute(source: str) -> str:
    if "://" in source or source.startswith("git@"):
        return source
    return str(Path(source).expanduser().resolve())


def instance() -> dg.DagsterInstance:
    home.ensure_dagster_home()
    return dg.DagsterInstance.get()


def _failure_message(result: dg.ExecuteInProcessResult) -> str:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data:
            error = event.step_failure_data.error
            user = error.cause if error and error.cause else error
            return f"{event.step_key}: {user.message.strip() if user else 'failed'}"
    return "the run failed"


def run_assets(assets: Sequence[dg.AssetsDefinition], partition_key: str,
               run_config: dict | None = None, tags: dict | None = None) -> dg.ExecuteInProcessResult:
    """Materialise `assets` for one partition as a real run recorded in the instance."""
    from gd_assets.definitions import project_defs

    result = dg.materialize(
        assets=list(assets),
        partition_key=partition_key,
        instance=instance(),
        resources=dict(project_defs.resources or {}),
        run_config=run_config or {},
        tags=tags,
        raise_on_error=False,
    )
    if not result.success:
        raise CliError(_failure_message(result))
    return result


def ingest_and_slice(source: str, project: str | None) -> str:
    """Run project_sources + fragments for a source; returns the project name."""
    from gd_assets.assets.fragments import fragments
    from gd_assets.assets.sources import project_sources
    from gd_assets.partitions import projects_partitions

    try:
        name = project_slug(project) if project else default_project_name(source)
    except ValueError as error:
        raise CliError(f"{error}; pass --project NAME") from error
    instance().add_dynamic_partitions(projects_partitions.name, [name])
    run_assets([project_sources, fragments], name,
               run_config={"ops": {"project_sources": {"config": {"source": _absolute(source)}}}})
    return name


# --- output ---------------------------------------------------------------------------------------


def fragments_document(project: str) -> dict:
    frags = store.project_fragments(project).to_dicts()
    excluded = store.query(
        "SELECT path, reason FROM files WHERE project = ? AND NOT included ORDER BY path", [project]).to_dicts()
    fields = ("key", "path", "start_line", "end_line", "dump_start_line", "dump_end_line", "kind", "symbol", "text")
    return {"project": project, "fragments": [{f: r[f] for f in fields} for r in frags], "excluded": excluded}


def print_fragments(doc: dict, out=sys.stdout) -> None:
    rows = doc["fragments"]
    dumped = any(r["dump_start_line"] is not None for r in rows)
    width = max([len(r["key"]) for r in rows] + [3])
    print(f"{doc['project']}: {len(rows)} fragments", file=out)
    for r in rows:
        dump = line_range(r["dump_start_line"], r["dump_end_line"], "E") if dumped else ""
        print(f"  {r['key']:<{width}}  {line_range(r['start_line'], r['end_line']):>9}  {dump:>9}  {r['kind']}",
              file=out)
    if doc["excluded"]:
        print(f"excluded ({len(doc['excluded'])}):", file=out)
        for r in doc["excluded"]:
            print(f"  {r['path']}: {r['reason']}", file=out)


# --- commands -------------------------------------------------------------------------------------


def cmd_fragments(args: argparse.Namespace) -> int:
    project = ingest_and_slice(args.source, args.project)
    doc = fragments_document(project)
    if args.json:
        json.dump(doc, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print_fragments(doc)
    return 0


def cmd_dump(args: argparse.Namespace) -> int:
    try:
        project = ingest(_absolute(args.source), name=args.project)
    except IngestError as error:
        raise CliError(str(error)) from error
    files = sorted(project.files, key=lambda f: (f.dump_start_line is None, f.dump_start_line or 0, f.path))
    sys.stdout.write(to_dump(files))
    return 0


def cmd_dev(args: argparse.Namespace) -> int:
    """Start the Dagster UI on this data directory (bound to loopback by default)."""
    home.ensure_dagster_home()
    command = ["dagster", "dev", "-h", args.host, "-p", str(args.port)]
    workspace = REPO / "workspace.yaml"
    command += ["-w", str(workspace)] if workspace.exists() else ["-m", "gd_assets.definitions"]
    os.execvp(command[0], command)
    return 0  # not reached


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="gd-assets", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("fragments", help="ingest and slice a project through Dagster; print its fragments")
    p.add_argument("source", help="a folder, a .zip, a git repository or URL, or a '# <path>' dump")
    p.add_argument("--project", help="project name (default: from the source's name)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_fragments)

    p = sub.add_parser("dump", help="print the '# <path>' dump of a project's included files")
    p.add_argument("source")
    p.add_argument("--project")
    p.set_defaults(func=cmd_dump)

    p = sub.add_parser("dev", help="open the Dagster UI (dagster dev) on this data directory")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=3000)
    p.set_defaults(func=cmd_dev)

    try:
        from corpora_build.cli import add_commands
    except ImportError:
        pass
    else:
        add_commands(sub)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except (CliError, IngestError) as error:
        print(f"gd-assets: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
