"""gd-assets: tells, with evidence, whether a Godot project is Godot 3 or Godot 4 code, fragment by
fragment, and writes its Godot 4 copy."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from gd_assets import broker, home, lake, orchestrate, postgres, serve, store, views
from gd_assets.core import heap
from gd_assets.core.duck import StoreError
from gd_assets.core.dump import to_dump
from gd_assets.core.ingest import IngestError, ingest
from gd_assets.core.judges import JudgeError, judge_names
from gd_assets.freshness import current_evidence_inputs, judge_backend
from gd_assets.printers import (
    print_db,
    print_fragments,
    print_hits,
    print_migration,
    print_server,
    print_show,
    print_status,
    print_verdict,
    print_verification,
)
from gd_assets.progress import TerminalProgress


def emit(doc, as_json: bool, printer) -> int:
    """Print a command's document as JSON or through its human-readable printer."""
    if as_json:
        json.dump(doc, sys.stdout, indent=2, ensure_ascii=False, default=str)
        print()
    else:
        printer(doc)
    return 0


# --- commands -------------------------------------------------------------------------------------


def cmd_fragments(args) -> int:
    return emit(views.fragments_document(orchestrate.ingest_and_slice(args.source, args.project)), args.json,
                print_fragments)


def in_thread(work):
    """Run `work` in a thread and wait for it here, so that Ctrl-C and SIGTERM reach this (main) thread
    as a KeyboardInterrupt instead of failing a Dagster step with a traceback."""
    result: dict = {}

    def run():
        try:
            result["value"] = work()
        except BaseException as error:  # re-raised in the main thread
            result["error"] = error

    thread = threading.Thread(target=run, daemon=True, name="gd-assets pipeline")
    thread.start()
    while thread.is_alive():
        thread.join(0.2)
    if "error" in result:
        raise result["error"]
    return result["value"]


def cmd_analyze(args) -> int:
    with TerminalProgress(args.request, args.judge) as progress:
        name = in_thread(lambda: orchestrate.analyze(args.source, args.project, args.request, args.judge,
                                                     progress.on_stage, args.workers))
    return emit(views.verdict_document(name), args.json, print_verdict)


def cmd_migrate(args) -> int:
    with TerminalProgress(judge=args.judge) as progress:
        name, facts = in_thread(lambda: orchestrate.migrate(args.source, args.project, args.out, args.patch,
                                                            args.judge, progress.on_stage))
    return emit(views.migration_document(name, facts), args.json, print_migration)


def cmd_verify(args) -> int:
    row = orchestrate.verify(args.project, args.godot, args.run, args.godot3, args.frames, args.scene_frames,
                             args.play, not args.no_frames)
    return emit(views.verification_document(row), args.json, print_verification)


def cmd_show(args) -> int:
    return emit(views.show_document(args.project, args.key), args.json, print_show)


def cmd_status(args) -> int:
    doc = views.status_document(args.project, current_evidence_inputs(args.request), judge_backend(args.judge).identity())
    return emit(doc, args.json, print_status)


def cmd_resume(args) -> int:
    done = orchestrate.resume(args.project, args.judge)
    print(f"{args.project}: closed {done['closed_runs']} dead runs; materialised {done['fragment_evidence']} evidence "
          f"and {done['fragment_judgement']} judgement partitions; verdict updated")
    return 0


def cmd_forget(args) -> int:
    print(f"{args.project}: removed {orchestrate.forget(args.project)} fragment partitions and the project's rows")
    return 0


def cmd_dump(args) -> int:
    project = ingest(orchestrate.absolute_source(args.source), name=args.project)
    files = sorted(project.files, key=lambda f: (f.dump_start_line is None, f.dump_start_line or 0, f.path))
    sys.stdout.write(to_dump(files))
    return 0


def cmd_dev(args) -> int:
    """Start the Dagster UI on this data directory (bound to loopback by default); Dagster's own command
    beside this Python, so an environment that is not activated works too."""
    beside = Path(sys.executable).with_name("dagster")
    command = [str(beside) if beside.exists() else "dagster", "dev", "-h", args.host, "-p", str(args.port), "-w", str(home.workspace_file())]
    os.execvp(command[0], command)
    return 0  # not reached


def cmd_corpus_build(args) -> int:
    from corpora_build.stats import corpus_stats

    result = orchestrate.build_corpus(os.pathsep.join(args.source), include_index=not args.no_index)
    for step in result.get_step_failure_events():
        print(f"failed: {step.step_key}: {step.event_specific_data.error.message.strip()}")
    checks = result.get_asset_check_evaluations()
    for evaluation in checks:
        print(f"check {'passed' if evaluation.passed else 'FAILED'}: {evaluation.check_name}")
    stats = corpus_stats(home.corpora_db_path())
    print(", ".join(f"{t} {n}" for t, n in stats["tables"].items()), f"(corpus version {stats['corpus_version']})")
    print(f"run {result.run_id} in {home.ensure_dagster_home()}")
    return 0 if result.success and all(e.passed for e in checks) else 1


def cmd_corpus_publish(args) -> int:
    from gd_assets import shared_corpus

    return emit(shared_corpus.publish(), args.json,
                lambda doc: print(f"published corpus build {doc['build']} ({doc['files']} files) to {doc['url']}"))


def cmd_broker(args) -> int:
    doc = {"start": broker.start, "stop": broker.stop, "status": broker.status}[args.action]()
    return emit(doc, args.json, lambda d: print(f"broker: {d['broker'] or 'none'}"
                                                + (f" (from {d['from']})" if d["from"] else "")
                                                + f"; local server {'running' if d['running'] else 'stopped'} in {d['folder']}"))


def cmd_worker(args) -> int:
    from gd_assets import workers

    workers.run_worker(args.name, args.concurrency)
    return 0


def cmd_corpus_stats(args) -> int:
    from corpora_build.stats import corpus_stats, format_stats

    return emit(corpus_stats(home.corpora_db_path()), args.json, lambda stats: print(format_stats(stats)))


def cmd_search(args) -> int:
    return emit(views.search_corpus(args.query, table=args.table, k=args.k), args.json, print_hits)


def cmd_db(args) -> int:
    if args.action == "maintain":
        doc = {**postgres.status(), "maintenance": orchestrate.run_store_maintenance(args.keep)}
    else:
        doc = {"start": postgres.start, "stop": postgres.stop, "status": postgres.status}[args.action]()
    backend = store.backend()
    doc.update(store=backend, lake=lake.data_location() if backend == "ducklake" else None)
    return emit(doc, args.json, print_db)


def cmd_serve(args) -> int:
    if args.child is not None:
        serve.serve_child(args.child, args.idle, serve.Commands(parser().parse_args, run, resume_hint))  # never returns
    if args.stop or args.status:
        doc = serve.control("stop" if args.stop else "status")
        return emit(doc, args.json, print_server)
    return serve.serve(args.idle)


def cmd_mcp(args) -> int:
    from gd_assets.mcp_server import serve

    serve(args.root or [os.getcwd()], args.http, args.allow_verify)
    return 0


# --- arguments ------------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="gd-assets", description=__doc__)
    top.add_argument("-v", "--verbose", action="store_true", help="print the Dagster run logs too")
    sub = top.add_subparsers(dest="command", required=True)
    source_help = "a folder, a .zip, a git repository or URL, or a '# <path>' dump"
    judge_help = ("judge (default: GD_ASSETS_JUDGE or evidence); model judges read GD_ASSETS_JUDGE_MODEL "
                  "and GD_ASSETS_JUDGE_URL")

    def command(name: str, func, help_: str, *positional: tuple[str, str | None], json_: bool = True):
        p = sub.add_parser(name, help=help_)
        for arg, arg_help in positional:
            p.add_argument(arg, help=arg_help)
        if json_:
            p.add_argument("--json", action="store_true", help="print JSON instead of text")
        p.set_defaults(func=func)
        return p

    p = command("fragments", cmd_fragments, "ingest and slice a project through Dagster; print its fragments",
                ("source", source_help))
    p.add_argument("--project", help="project name (default: from the source's name)")
    p = command("analyze", cmd_analyze, "run the whole pipeline on a project and print the verdict",
                ("source", source_help))
    p.add_argument("--project", help="project name (default: from the source's name)")
    p.add_argument("--request", help="the analysis request (default: find Godot 3 / 4 evidence)")
    p.add_argument("--judge", choices=judge_names(), help=judge_help)
    p.add_argument("--workers", type=int, default=1, metavar="K",
                   help="split evidence and judgement into K concurrent runs over contiguous fragment ranges")
    p = command("migrate", cmd_migrate, "analyse if needed, then write the Godot 4 copy of a project and its patch",
                ("source", source_help))
    p.add_argument("--project", help="project name (default: from the source's name)")
    p.add_argument("--out", help="folder for the migrated copy (default: <home>/migrations/<project>)")
    p.add_argument("--patch", help="where to write the unified diff (default: <home>/migrations/<project>.patch)")
    p.add_argument("--judge", choices=judge_names(), help=judge_help)
    p = command("verify", cmd_verify, "run Godot 4 headless on a scratch copy of the migrated project: scripts "
                "failing, scenes failing to load, properties dropped, input actions without a key; with --run, the "
                "game itself beside the original in Godot 3.6", ("project", None))
    p.add_argument("--godot", metavar="PATH", help="a Godot 4 executable (default: $GODOT4, $GODOT, or godot4 / "
                   "godot on PATH); Godot runs the copy's tool scripts and autoloads, never the source's")
    p.add_argument("--run", action="store_true",
                   help="also run the game: the main scene for --frames frames at 60 fps (random seed fixed, no input), "
                   "then each scene with a script alone; runtime errors, crashes and hangs traced to their fragment and "
                   "edit, and the original run the same way in Godot 3 beside it. This runs all of the game's code: each "
                   "engine runs sandboxed (bubblewrap, else unshare: no network, nothing writable but its scratch copy "
                   "and home, 4 GiB of memory, a time limit)")
    p.add_argument("--godot3", metavar="PATH", help="a Godot 3 executable for the original's run (default: $GODOT3, "
                   "or godot3 / godot3-server / godot on PATH); without one the copy runs alone")
    p.add_argument("--frames", type=int, help="frames of the main scene's run (default 600)")
    p.add_argument("--scene-frames", type=int, help="frames of each scene's run alone (default 30)")
    p.add_argument("--play", metavar="FILE", help="with --run: the input both are played with, a line an event: "
                   "`FRAME ACTION pressed|released` (ACTION an input action, or click:K, the K-th button on screen); "
                   "default: a seeded player of the project's input map")
    p.add_argument("--no-frames", action="store_true", help="with --run: no rendered play (frames and play traces "
                   "beside the original's, on a virtual display)")
    command("show", cmd_show, "the debug view of one fragment: tracking, body, cues, candidates",
            ("project", None), ("key", "fragment key, e.g. mini-dodge/player.gd::_process"))
    p = command("status", cmd_status, "per-fragment progress: done, failed, stopped, running, waiting; stale count",
                ("project", None))
    p.add_argument("--judge", choices=judge_names(), help="count judgements stale against this judge; " + judge_help)
    p.add_argument("--request", help="count evidence stale against this request")
    p = command("resume", cmd_resume, "close dead runs and materialise only missing or failed fragments",
                ("project", None), json_=False)
    p.add_argument("--judge", choices=judge_names(), help=judge_help)
    command("forget", cmd_forget, "remove a project: its fragment partitions and its rows", ("project", None),
            json_=False)
    p = command("dump", cmd_dump, "print the '# <path>' dump of a project's included files", ("source", source_help),
                json_=False)
    p.add_argument("--project")
    p = command("dev", cmd_dev, "open the Dagster UI (dagster dev) on this data directory", json_=False)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=3000)

    corpus = sub.add_parser("corpus", help="build or inspect the Godot 3/4 reference corpus")
    corpus_sub = corpus.add_subparsers(dest="corpus_command", required=True)
    p = corpus_sub.add_parser("build", help="build or refresh the corpus tables and index (a Dagster run)")
    p.add_argument("--source", nargs="+", default=[os.environ.get("GD_ASSETS_CORPUS_SOURCE", "auto")],
                   metavar="auto|debian|github|PATH", help="where the Godot sources come from (default: auto)")
    p.add_argument("--no-index", action="store_true", help="build the tables only, not the retrieval index")
    p.set_defaults(func=cmd_corpus_build)
    p = corpus_sub.add_parser("publish", help="upload the built corpus to the object store (GD_ASSETS_OBJECT_STORE), "
                              "where every worker fetches it by its version")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_corpus_publish)
    p = corpus_sub.add_parser("stats", help="row counts per table, category and version; bridge shares; sources")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_corpus_stats)
    p = command("search", cmd_search, "debug retrieval: search the corpus index for a text", ("query", None))
    p.add_argument("--table", choices=views.CORPUS_TABLES)
    p.add_argument("-k", type=int, default=10)
    p = command("db", cmd_db, "start, stop or show the local PostgreSQL that holds this home's Dagster instance "
                "(and the DuckLake catalog with GD_ASSETS_STORE=ducklake); maintain compacts the analysis store")
    p.add_argument("action", choices=("start", "stop", "status", "maintain"))
    p.add_argument("--keep", default=None, metavar="SPAN",
                   help="maintain: DuckLake snapshots younger than this stay readable (default '1 hour')")
    p = command("broker", cmd_broker, "start, stop or show the local Redis server that hands fragment steps to "
                "`gd-assets worker` processes (GD_ASSETS_BROKER_URL names another)")
    p.add_argument("action", choices=("start", "stop", "status"))
    p = command("worker", cmd_worker, "serve fragment steps from the broker on this machine until stopped "
                "(Dagster's Celery executor)", json_=False)
    p.add_argument("--name", help="the worker's Celery node name (default: gd-assets-<pid>@<host>)")
    p.add_argument("--concurrency", type=int, default=1, metavar="N", help="steps at once (default 1)")
    p = command("serve", cmd_serve, "keep a warm process for this data directory that runs the commands of "
                "every shell (analyze, migrate, status...), sparing each Python's and Dagster's start-up; until "
                "stopped")
    p.add_argument("--idle", type=float, default=0, metavar="MINUTES",
                   help="stop after this long without a command (default: never)")
    p.add_argument("--stop", action="store_true", help="stop this data directory's server")
    p.add_argument("--status", action="store_true", help="whether a server runs for this data directory, and what it does")
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)   # the serving process `serve` starts, on this socket
    p = command("mcp", cmd_mcp, "serve the analyses to coding agents over the Model Context Protocol (stdio)",
                json_=False)
    p.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP on a loopback address instead of stdio")
    p.add_argument("--root", action="append", metavar="DIR",
                   help="a folder whose projects may be analysed (repeatable; default: the current folder)")
    p.add_argument("--allow-verify", action="store_true",
                   help="offer the verify tool: Godot 4 runs the migrated copies' tool scripts and autoloads")
    return top


def resume_hint(args) -> str:
    """What to type after an interrupted command: every fragment recorded so far is kept."""
    if getattr(args, "source", None) and args.command in ("analyze", "migrate"):
        name = orchestrate.project_name(orchestrate.absolute_source(args.source), args.project)
        return f"gd-assets: interrupted; what was recorded is kept: `gd-assets resume {name}` (or the same command again) finishes the rest"
    return "gd-assets: interrupted"


def main(argv: Sequence[str] | None = None) -> int:
    """The process's command: its signals, its heap (`gd_assets.core.heap`) and its exit on Ctrl-C."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `gd-assets status X | head` ends quietly
    signal.signal(signal.SIGTERM, serve.interrupted)
    args = parser().parse_args(argv)
    heap.settle(collect=False)   # the modules are imported and stay: collections pass them over
    try:
        return run(args)
    except KeyboardInterrupt:
        print(resume_hint(args), file=sys.stderr)
        sys.stderr.flush()
        os._exit(130)  # the pipeline thread stops with the process; its finished batches are recorded
    finally:
        heap.before_exit()


def run(args) -> int:
    """One parsed command; a known error is one line on stderr (`gd_assets.serve` runs commands here too)."""
    if args.verbose:
        os.environ["GD_ASSETS_VERBOSE"] = "1"
    try:
        if args.command not in ("db", "broker", "serve"):
            postgres.check_reachable()
            orchestrate.check_settings()
        return args.func(args)
    except (orchestrate.PipelineError, views.NotFound, views.BadArgument, IngestError, JudgeError,
            postgres.DatabaseError, StoreError, broker.BrokerError, serve.ServeError) as error:
        print(f"gd-assets: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
