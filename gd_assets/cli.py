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
from gd_assets.core.cues import DEFAULT_REQUEST
from gd_assets.core.dump import to_dump
from gd_assets.core.ingest import IngestError, default_project_name, ingest, project_slug
from gd_assets.runs import materialize_fragments
from gd_assets.status import close_dead_runs, fragment_states, materialization_counts, run_tags

REPO = Path(__file__).resolve().parents[1]
CONSOLE = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def _with_console(run_config: dict | None) -> dict:
    """Run config with the console logger at WARNING unless GD_ASSETS_VERBOSE is set (the UI keeps every log)."""
    config = dict(run_config or {})
    if not os.environ.get("GD_ASSETS_VERBOSE"):
        config.update(CONSOLE)
    return config


class CliError(Exception):
    """A failure to report in one line, without a traceback."""


# --- running the pipeline -------------------------------------------------------------------------


def _absolute(source: str) -> str:
    if "://" in source or source.startswith("git@"):
        return source
    return str(Path(source).expanduser().resolve())


def instance() -> dg.DagsterInstance:
    return home.dagster_instance()


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
    from gd_assets.definitions import project_resources

    result = dg.materialize(
        assets=list(assets),
        partition_key=partition_key,
        instance=instance(),
        resources=dict(project_resources),
        run_config=_with_console(run_config),
        tags={**run_tags(), **(tags or {})},
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


def stale_keys(project: str, table: str, version_sql: str) -> list[str]:
    """Fragment keys of a project whose `table` row is missing or was made from other text/versions."""
    rows = store.query(
        f"SELECT f.key FROM fragments f LEFT JOIN {table} t ON t.key = f.key "
        f"WHERE f.project = ? AND (t.key IS NULL OR t.content_hash <> f.content_hash OR {version_sql}) "
        "ORDER BY f.path, f.ordinal", [project])
    return rows["key"].to_list()


def _resources(judge: str | None = None) -> dict:
    from gd_assets.definitions import project_resources
    from gd_assets.resources import JudgeBackend

    resources = dict(project_resources)
    if judge:
        resources["judge_backend"] = JudgeBackend(backend=judge)
    return resources


def run_fragment_asset(asset: dg.AssetsDefinition, keys: Sequence[str], run_config: dict | None = None,
                       judge: str | None = None) -> int:
    """Materialise a per-fragment asset for `keys` (one run per contiguous block); returns how many."""
    from gd_assets.definitions import project_assets

    if not keys:
        return 0
    results = materialize_fragments(instance(), project_assets, [asset], keys, _resources(judge),
                                    run_config=_with_console(run_config), tags=run_tags())
    failed = [r for r in results if not r.success]
    if failed:
        raise CliError(_failure_message(failed[0]))
    return len(keys)


def with_unmaterialised(project: str, asset: str, keys: list[str]) -> list[str]:
    """`keys` plus the project's fragments whose partition is missing or failed in the instance
    (a run can die after committing rows and before recording them), in file order."""
    frags = store.project_fragments(project)["key"].to_list()
    states = fragment_states(instance(), asset, frags)
    wanted = set(keys) | {k for k in frags if states[k] in ("waiting", "failed", "stopped")}
    return [k for k in frags if k in wanted]


def current_versions() -> tuple[str | None, str | None]:
    """(corpus version, index version) of the corpus this data directory reads; None when not built."""
    from gd_assets.resources import RetrievalIndex

    index = RetrievalIndex()
    try:
        return index.corpus_version(), index.load().version
    except (dg.Failure, FileNotFoundError):
        return None, None


def run_evidence(project: str, request: str | None = None) -> int:
    """Evidence for fragments that lack it for their current text, request, corpus and parameters."""
    from gd_assets.assets.evidence import RETRIEVAL_VERSION, fragment_evidence

    def quoted(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    corpus, index = current_versions()
    version = f"t.retrieval_version <> {quoted(RETRIEVAL_VERSION)}"
    if corpus and index:
        version += f" OR t.corpus_version <> {quoted(corpus)} OR t.index_version <> {quoted(index)}"
    version += f" OR t.request <> {quoted(request or DEFAULT_REQUEST)}"
    keys = with_unmaterialised(project, "fragment_evidence", stale_keys(project, "evidence", version))
    config = {"ops": {"fragment_evidence": {"config": {"request": request}}}} if request else {}
    return run_fragment_asset(fragment_evidence, keys, config)


def run_judgement(project: str, judge: str | None = None) -> int:
    """Judgements for fragments whose evidence is newer than their judgement, or judged by other rules."""
    from gd_assets.assets.judgement import fragment_judgement, judge_version
    from gd_assets.resources import JudgeBackend

    backend = judge or JudgeBackend().backend
    rows = store.query(
        "SELECT f.key FROM fragments f JOIN evidence e ON e.key = f.key LEFT JOIN judgements j ON j.key = f.key "
        "WHERE f.project = ? AND (j.key IS NULL OR j.content_hash <> f.content_hash OR j.judge <> ? "
        "OR j.prompt_version <> ? OR j.judged_at < e.computed_at) ORDER BY f.path, f.ordinal",
        [project, backend, judge_version(backend)])
    keys = with_unmaterialised(project, "fragment_judgement", rows["key"].to_list())
    return run_fragment_asset(fragment_judgement, keys, judge=judge)


def run_verdict(project: str) -> None:
    from gd_assets.assets.verdict import project_verdict
    from gd_assets.definitions import project_assets

    result = dg.materialize(assets=list(project_assets), selection=[project_verdict], partition_key=project,
                            instance=instance(), resources=_resources(), raise_on_error=False,
                            run_config=_with_console(None), tags=run_tags())
    if not result.success:
        raise CliError(_failure_message(result))


def analyze(source: str, project: str | None, request: str | None = None, judge: str | None = None) -> str:
    """The whole pipeline: sources -> fragments -> evidence -> judgement -> verdict."""
    name = ingest_and_slice(source, project)
    run_evidence(name, request)
    run_judgement(name, judge)
    run_verdict(name)
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
    return emit(fragments_document(ingest_and_slice(args.source, args.project)), args.json, print_fragments)


def show_document(project: str, key: str) -> dict:
    """The debug view of one fragment: tracking apart from what was searched, then the candidates."""
    frag = store.query("SELECT * FROM fragments WHERE key = ? AND project = ?", [key, project]).to_dicts()
    if not frag:
        raise CliError(f"no fragment {key!r} in project {project!r}: `gd-assets fragments` lists the keys")
    frag = frag[0]
    ev = store.query("SELECT * FROM evidence WHERE key = ?", [key]).to_dicts()
    cands = store.query("SELECT * FROM candidates WHERE key = ? ORDER BY rank", [key]).to_dicts()
    doc = {
        "key": key, "project": project,
        "tracking": {f: frag[f] for f in ("path", "start_line", "end_line", "dump_start_line", "dump_end_line")},
        "text": frag["text"],
        "cues": json.loads(ev[0]["cues"]) if ev else [],
        "candidates": [{"rank": c["rank"], "table": c["corpus_table"], "id": c["row_id"], "title": c["title"],
                        "text": c["text"], "sparse_rank": c["sparse_rank"], "dense_score": c["dense_score"],
                        "score": c["score"]} for c in cands],
    }
    judged = store.query("SELECT * FROM judgements WHERE key = ?", [key]).to_dicts()
    if judged:
        j = judged[0]
        doc["judgement"] = {
            "signal": j["signal"], "migration_needed": j["migration_needed"], "confidence": j["confidence"],
            "rationale": j["rationale"], "related": json.loads(j["related"]), "evidence": json.loads(j["evidence"]),
            "legend": json.loads(j["legend"]), "judge": j["judge"], "model": j["model"],
        }
    if ev:
        lineage = {f: ev[0][f] for f in ("corpus_version", "index_version", "retrieval_version")}
        lineage["evidence_stale"] = ev[0]["content_hash"] != frag["content_hash"]
        if judged:
            lineage.update({"judge": judged[0]["judge"], "model": judged[0]["model"],
                            "prompt_version": judged[0]["prompt_version"],
                            "judged_at": str(judged[0]["judged_at"]),
                            "judgement_stale": judged[0]["content_hash"] != frag["content_hash"]})
        doc["lineage"] = lineage
    return doc


def print_show(doc: dict, out=sys.stdout) -> None:
    t = doc["tracking"]
    print(f"fragment      {doc['key']}", file=out)
    print(f"current file  {t['path']}            (tracking only: never searched)", file=out)
    dump = f"   dump lines {line_range(t['dump_start_line'], t['dump_end_line'], 'E')}" if t["dump_start_line"] else ""
    print(f"line range    {line_range(t['start_line'], t['end_line'])}{dump}", file=out)
    print("\n--- body ---", file=out)
    print(doc["text"], file=out)
    print("\n--- cues (retriever input) ---", file=out)
    for c in doc["cues"]:
        note = ", judge only: not searched" if c["from"] == "name" else ""
        print(f"  {c['cue']}   [{c['from']}{note}]", file=out)
    print(f"\n--- candidates ({len(doc['candidates'])}) ---", file=out)
    for c in doc["candidates"]:
        sparse = c["sparse_rank"] if c["sparse_rank"] is not None else "-"
        print(f"  ({c['rank']:>2}) {c['table']:<16} {c['title'][:70]:<70} sparse#{sparse:<4} dense {c['dense_score']:.3f}"
              f"  score {c['score']:.3f}", file=out)
    if "judgement" in doc:
        j = doc["judgement"]
        print("\n--- judgement ---", file=out)
        print(f"  {j['signal']}, migration {'needed' if j['migration_needed'] else 'not needed'}, "
              f"confidence {j['confidence']:.2f}  [{j['judge']}]", file=out)
        print(f"  {j['rationale']}", file=out)
    if "lineage" in doc:
        print("\n--- lineage ---", file=out)
        for name, value in doc["lineage"].items():
            print(f"  {name}: {value}", file=out)


def verdict_document(project: str) -> dict:
    """The `analyze --json` document."""
    row = store.query("SELECT * FROM verdicts WHERE project = ?", [project]).to_dicts()
    if not row:
        raise CliError(f"project {project!r} has no verdict yet: run `gd-assets analyze`")
    row = row[0]
    summary = json.loads(row["summary"])
    frags = store.query(
        "SELECT f.key, f.path, f.start_line, f.end_line, f.kind, j.signal, j.migration_needed, j.confidence, "
        "j.rationale, j.evidence FROM fragments f JOIN judgements j ON j.key = f.key AND j.content_hash = f.content_hash "
        "WHERE f.project = ? ORDER BY f.dump_start_line NULLS LAST, f.path, f.ordinal", [project]).to_dicts()
    for f in frags:
        f["evidence"] = [{k: e[k] for k in ("table", "id", "title")} for e in json.loads(f["evidence"])]
    excluded = store.query("SELECT path, reason FROM files WHERE project = ? AND NOT included ORDER BY path",
                           [project]).to_dicts()
    return {"project": project, "verdict": row["verdict"], "confidence": row["confidence"],
            "counts": summary["counts"], "explanation": row["explanation"], "folders": summary["folders"],
            "files": summary["files"], "fragments": frags, "excluded": excluded}


def print_verdict(doc: dict, out=sys.stdout) -> None:
    c = doc["counts"]
    print(f"{doc['project']}: {doc['verdict']} (confidence {doc['confidence']:.2f})", file=out)
    print(f"  {doc['explanation']}", file=out)
    print(f"  {c['fragments']} fragments: {c['godot3']} Godot 3, {c['godot4']} Godot 4, {c['neutral']} neutral, "
          f"{c['migration_needed']} need migration", file=out)
    todo = [f for f in doc["fragments"] if f["migration_needed"]]
    if todo:
        print("  needs migration:", file=out)
        for f in todo[:40]:
            print(f"    {f['path']} {line_range(f['start_line'], f['end_line'])}  {f['key'].split('::', 1)[-1]}: "
                  f"{f['rationale'][:110]}", file=out)
        if len(todo) > 40:
            print(f"    … {len(todo) - 40} more (see the report or --json)", file=out)
    print(f"  report: {home.data_home() / 'reports' / (doc['project'] + '.html')}", file=out)


def emit(doc: dict, as_json: bool, printer) -> int:
    """Print a command's document as JSON or through its human-readable printer."""
    if as_json:
        json.dump(doc, sys.stdout, indent=2, ensure_ascii=False, default=str)
        print()
    else:
        printer(doc)
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    return emit(verdict_document(analyze(args.source, args.project, args.request, args.judge)), args.json,
                print_verdict)


def stale_judgements(project: str) -> int:
    """Judgements made from other text, corpus, index, retrieval parameters or judge rules than now."""
    from gd_assets.assets.evidence import RETRIEVAL_VERSION
    from gd_assets.assets.judgement import judge_version

    corpus, index_version = current_versions()
    rows = store.query(
        "SELECT j.*, f.content_hash AS now_hash FROM judgements j JOIN fragments f ON f.key = j.key "
        "WHERE f.project = ?", [project]).to_dicts()
    stale = 0
    for r in rows:
        versions = (r["retrieval_version"] != RETRIEVAL_VERSION or r["prompt_version"] != judge_version(r["judge"])
                    or (corpus is not None and (r["corpus_version"] != corpus or r["index_version"] != index_version)))
        stale += r["content_hash"] != r["now_hash"] or versions
    return stale


def status_document(project: str) -> dict:
    frags = store.project_fragments(project).to_dicts()
    if not frags:
        raise CliError(f"project {project!r} has no fragments: run `gd-assets analyze SOURCE --project {project}`")
    keys = [f["key"] for f in frags]
    inst = instance()
    states = fragment_states(inst, "fragment_judgement", keys)
    counts = materialization_counts(inst, "fragment_judgement", keys)
    fields = ("key", "path", "start_line", "end_line", "dump_start_line", "dump_end_line")
    rows = [{**{k: f[k] for k in fields}, "status": states[f["key"]], "materializations": counts[f["key"]]}
            for f in frags]
    totals = {s: 0 for s in ("done", "failed", "stopped", "running", "waiting")}
    for r in rows:
        totals[r["status"]] += 1
    totals["stale"] = stale_judgements(project)
    return {"project": project, "counts": totals, "fragments": rows}


def print_status(doc: dict, out=sys.stdout) -> None:
    """The seed's view: `player.gd E016-E018  stopped`, one line per fragment in file order."""
    from gd_assets.assets.evidence import short_place

    places = [short_place(r) for r in doc["fragments"]]
    width = max(len(p) for p in places)
    for place, r in zip(places, doc["fragments"]):
        print(f"{place:<{width}}  {r['status']}", file=out)
    c = doc["counts"]
    print(f"{len(places)} fragments: " + ", ".join(f"{c[k]} {k}" for k in ("done", "failed", "stopped", "running",
                                                                              "waiting", "stale")), file=out)


def cmd_status(args: argparse.Namespace) -> int:
    return emit(status_document(args.project), args.json, print_status)


def resume(project: str, judge: str | None = None) -> dict:
    """Close dead runs, then materialise only missing or failed fragments (evidence, judgement), then the verdict."""
    from gd_assets.assets.evidence import fragment_evidence
    from gd_assets.assets.judgement import fragment_judgement

    inst = instance()
    closed = close_dead_runs(inst)
    keys = store.project_fragments(project)["key"].to_list()
    if not keys:
        raise CliError(f"project {project!r} has no fragments: run `gd-assets analyze` first")
    todo = {}
    for asset in (fragment_evidence, fragment_judgement):
        states = fragment_states(inst, asset.key.to_user_string(), keys)
        todo[asset.key.to_user_string()] = [k for k in keys if states[k] in ("waiting", "failed", "stopped")]
        run_fragment_asset(asset, todo[asset.key.to_user_string()], judge=judge)
    run_verdict(project)
    return {"closed_runs": closed, **{k: len(v) for k, v in todo.items()}}


def cmd_resume(args: argparse.Namespace) -> int:
    done = resume(args.project, args.judge)
    print(f"{args.project}: closed {done['closed_runs']} dead runs; materialised {done['fragment_evidence']} evidence "
          f"and {done['fragment_judgement']} judgement partitions; verdict updated")
    return 0


def forget(project: str) -> int:
    """Drop a project's fragment partitions and rows (its runs and events stay in the instance's history)."""
    from gd_assets.partitions import fragments_partitions, projects_partitions

    inst = instance()
    prefix = project + "/"
    keys = [k for k in inst.get_dynamic_partitions(fragments_partitions.name) if k.startswith(prefix)]
    for key in keys:
        inst.delete_dynamic_partition(fragments_partitions.name, key)
    if inst.has_dynamic_partition(projects_partitions.name, project):
        inst.delete_dynamic_partition(projects_partitions.name, project)
    from gd_assets import duck

    with duck.connect(store.db_path()) as con:
        store.create_tables(con)
        for table in ("candidates", "evidence", "judgements", "fragments", "files", "verdicts", "projects"):
            con.execute(f"DELETE FROM {table} WHERE project = ?", [project])
    return len(keys)


def cmd_forget(args: argparse.Namespace) -> int:
    print(f"{args.project}: removed {forget(args.project)} fragment partitions and the project's rows")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    return emit(show_document(args.project, args.key), args.json, print_show)


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
    top.add_argument("-v", "--verbose", action="store_true", help="print the Dagster run logs too")
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("fragments", help="ingest and slice a project through Dagster; print its fragments")
    p.add_argument("source", help="a folder, a .zip, a git repository or URL, or a '# <path>' dump")
    p.add_argument("--project", help="project name (default: from the source's name)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_fragments)

    p = sub.add_parser("analyze", help="run the whole pipeline on a project and print the verdict")
    p.add_argument("source", help="a folder, a .zip, a git repository or URL, or a '# <path>' dump")
    p.add_argument("--project", help="project name (default: from the source's name)")
    p.add_argument("--request", help="the analysis request (default: find Godot 3 / 4 evidence)")
    p.add_argument("--judge", choices=["evidence", "vllm", "openai"],
                   help="judge backend (default: GD_ASSETS_JUDGE or evidence); vllm/openai read GD_ASSETS_JUDGE_MODEL "
                        "and GD_ASSETS_JUDGE_URL")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("show", help="the debug view of one fragment: tracking, body, cues, candidates")
    p.add_argument("project")
    p.add_argument("key", help="fragment key, e.g. mini-dodge/player.gd::_process")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("status", help="per-fragment progress: done, failed, stopped, running, waiting")
    p.add_argument("project")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("resume", help="close dead runs and materialise only missing or failed fragments")
    p.add_argument("project")
    p.add_argument("--judge", choices=["evidence", "vllm", "openai"])
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser("forget", help="remove a project: its fragment partitions and its rows")
    p.add_argument("project")
    p.set_defaults(func=cmd_forget)

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
    import signal

    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `gd-assets status X | head` ends quietly
    args = parser().parse_args(argv)
    if args.verbose:
        os.environ["GD_ASSETS_VERBOSE"] = "1"
    try:
        return args.func(args)
    except (CliError, IngestError) as error:
        print(f"gd-assets: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
