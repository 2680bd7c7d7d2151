"""End-to-end `analyze` fragments/s per Dagster instance, and the share Dagster's bookkeeping takes.

    python bench/analyze.py PATH [--modes sqlite-stock,sqlite,sqlite-w2,postgres,postgres-w2,ducklake,ducklake-w2]
    python bench/analyze.py PATH --core      # the floor: the same core calls in one process

Each mode analyses PATH from nothing in a fresh data home (the corpus and index come from
GD_ASSETS_CORPUS_HOME), in this process, as `gd-assets analyze` does. Bookkeeping is the time spent
inside `DagsterInstance.handle_new_event` in this process (every event a run records: step and run
status, planned and reported materialisations, logs), timed around the call; with workers, theirs
is not seen, so the figure is then a lower bound.

Modes: `sqlite-stock` is Dagster's own sqlite storage with every event written on its own (the
baseline); `sqlite` is the data home's default instance; `postgres` starts a local cluster in that
home with `gd-assets db start` and stops it afterwards; `ducklake` is that with the analysis tables in
DuckLake (GD_ASSETS_STORE=ducklake, catalog in the same cluster, Parquet in the home); `-wK` runs evidence and judgement as K
queued runs at once (`analyze --workers K`: the daemon it starts, and its start-up, count in the wall). A small example is analysed first, untimed, so that
loading the index and the embedder counts in no mode.

`--core` runs the calls the assets make for PATH in this process, without Dagster or the store:
ingest, fragments, project context, cues + retrieval (batched as the evidence asset batches), the
evidence judge and the rewrite of flagged fragments; once with retrieval and once without (cues from
the body alone, as the judge reads them when no candidate is given). What `analyze` costs beyond it
is orchestration and storage.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import dagster as dg

from gd_assets import home, orchestrate, postgres, store

MODES = ("sqlite-stock", "sqlite", "sqlite-w2", "postgres", "postgres-w2", "ducklake", "ducklake-w2")
# Dagster's own sqlite storage, each event written on its own: what the instance was before
# `gd_assets.pooled_storage`, kept as the baseline the ratios are read against.
STOCK_SQLITE = """\
storage:
  sqlite:
    base_dir: {storage}
""" + home.INSTANCE_TAIL
WARM_UP = Path(__file__).resolve().parents[1] / "examples" / "dodge-godot3"


class EventTimer:
    """Wraps the instance's event entry point: seconds spent in it and events per type."""

    def __init__(self):
        self.seconds = 0.0
        self.counts: collections.Counter[str] = collections.Counter()
        self.original = dg.DagsterInstance.handle_new_event

    def __enter__(self):
        timer, original = self, self.original

        def timed(instance, event, *args, **kwargs):
            started = time.perf_counter()
            try:
                return original(instance, event, *args, **kwargs)
            finally:
                timer.seconds += time.perf_counter() - started
                kind = event.dagster_event.event_type_value if event.dagster_event else "log"
                timer.counts[kind] += 1

        dg.DagsterInstance.handle_new_event = timed
        return self

    def __exit__(self, *exc):
        dg.DagsterInstance.handle_new_event = self.original


def run_mode(mode: str, source: str) -> dict:
    instance, _, workers = mode.partition("-w")
    stock = instance == "sqlite-stock"
    on_postgres = instance in ("postgres", "ducklake")
    folder = Path(tempfile.mkdtemp(prefix=f"gd-bench-{mode}-"))
    folder.chmod(0o755)   # the postgres user runs the cluster when we are root
    os.environ["GD_ASSETS_HOME"] = str(folder / "home")
    os.environ.pop("DAGSTER_HOME", None)
    os.environ.pop("GD_ASSETS_POSTGRES_URL", None)
    os.environ.pop("GD_ASSETS_LAKE_PATH", None)
    os.environ["GD_ASSETS_STORE"] = "ducklake" if instance == "ducklake" else "duckdb"
    stages: dict[str, float] = {}
    last = [time.perf_counter(), "ingest"]

    def on_stage(stage: str, project: str) -> None:
        now = time.perf_counter()
        stages[last[1]] = now - last[0]
        last[:] = [now, stage]

    baseline = contextlib.ExitStack()
    if stock:
        baseline.enter_context(mock.patch.object(home, "DAGSTER_YAML", STOCK_SQLITE))
        baseline.enter_context(mock.patch.dict(os.environ, {"DAGSTER_EVENT_BATCH_SIZE": "0"}))
    try:
        if on_postgres:
            postgres.start()
        with EventTimer() as timer:
            started = time.perf_counter()
            project = orchestrate.analyze(source, "bench", on_stage=on_stage, workers=int(workers or 1))
            wall = time.perf_counter() - started
            stages[last[1]] = time.perf_counter() - last[0]
        n = store.project_fragments(project).height
        return {"mode": mode, "fragments": n, "wall": wall, "bookkeeping": timer.seconds, "stages": stages,
                "events": dict(timer.counts)}
    finally:
        baseline.close()
        if on_postgres:
            postgres.stop()
        shutil.rmtree(folder, ignore_errors=True)


def run_core(source: str, retrieval: bool, batch: int = 256) -> dict:
    """The core calls of an analysis in one process; seconds per step."""
    from gd_assets.core.codec import judge_input
    from gd_assets.core.cues import DEFAULT_REQUEST, extract_cues
    from gd_assets.core.evidence import gather_evidence
    from gd_assets.core.fragments import file_functions, fragment_rows
    from gd_assets.core.ingest import ingest
    from gd_assets.core.judges.evidence import EvidenceJudge
    from gd_assets.core.project_context import build_context
    from gd_assets.core.receivers import Scope
    from gd_assets.core.retrieval import CorpusIndex, RetrievalParams
    from gd_assets.core.rewrite import load_rules, rewrite_fragment

    corpus = Path(os.environ["GD_ASSETS_CORPUS_HOME"])
    rules = load_rules(str(corpus / "corpora.duckdb"))
    index = CorpusIndex.load(corpus / "index") if retrieval else None
    steps: collections.Counter[str] = collections.Counter()
    clock = [time.perf_counter()]

    def lap(step: str) -> None:
        now = time.perf_counter()
        steps[step] += now - clock[0]
        clock[0] = now

    project = ingest(Path(source), "bench")
    files = [{"path": f.path, "kind": f.kind, "text": f.text, "encoding": f.encoding}
             for f in project.files if f.included and f.text is not None]
    lap("ingest")
    frags = fragment_rows("bench", files)
    functions = file_functions(frags)
    lap("fragments")
    context = build_context(files)
    for frag in frags:
        frag["scope"] = Scope.of(context, frag["path"], frag["symbol"], rules.surface)
    lap("project context")
    found: dict[str, tuple] = {}
    for start in range(0, len(frags), batch):
        chunk = frags[start:start + batch]
        if index is not None:
            for frag, ev in zip(chunk, gather_evidence(chunk, index, RetrievalParams(), DEFAULT_REQUEST)):
                found[frag["key"]] = (ev.cues, ev.candidates)
        else:
            for frag in chunk:
                found[frag["key"]] = (extract_cues(frag["kind"], frag["text"], DEFAULT_REQUEST, frag["file_kind"],
                                                   frag["scope"]), [])
    lap("cues + retrieval" if index is not None else "cues")
    judge = EvidenceJudge(surface=rules.surface)
    flagged = []
    for frag in frags:
        cues, candidates = found[frag["key"]]
        item = judge_input(frag, cues, candidates, DEFAULT_REQUEST, functions.get(frag["path"], ()))
        if judge.judge_one(item).migration_needed:
            flagged.append(frag)
    lap("judgement")
    for frag in flagged:
        rewrite_fragment(frag["kind"], frag["text"], frag["start_line"], frag["file_kind"], frag["scope"], rules)
    lap("rewrite")
    return {"mode": "core" + ("" if retrieval else " (no retrieval)"), "fragments": len(frags),
            "flagged": len(flagged), "wall": sum(steps.values()), "steps": dict(steps)}


def print_core(source: str) -> None:
    run_core(str(WARM_UP), retrieval=True)  # the index and the embedder load outside the figures
    for r in (run_core(source, retrieval=True), run_core(source, retrieval=False)):
        n = r["fragments"]
        print(f"{r['mode']:<21} {n} fragments in {r['wall']:.1f} s = {n / r['wall']:.1f} fragments/s "
              f"({r['flagged']} flagged and rewritten)")
        print("          steps: " + ", ".join(f"{k} {v:.2f} s" for k, v in r["steps"].items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a Godot project (3,000 fragments or more for the figures that matter)")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--core", action="store_true", help="the core calls in one process instead (the floor)")
    args = parser.parse_args()
    if not os.environ.get("GD_ASSETS_CORPUS_HOME"):
        sys.exit("set GD_ASSETS_CORPUS_HOME to a built corpus home")
    source = str(Path(args.path).resolve())
    if args.core:
        print_core(source)
        return
    run_mode("sqlite", str(WARM_UP))  # loads the index and the embedder once, outside the figures
    results = [run_mode(mode, source) for mode in args.modes.split(",")]
    for r in results:
        n = r["fragments"]
        per_fragment = sum(r["events"].values()) / n
        print(f"{r['mode']:<11} {n} fragments in {r['wall']:.1f} s = {n / r['wall']:.1f} fragments/s; bookkeeping "
              f"{r['bookkeeping']:.1f} s ({r['bookkeeping'] / r['wall']:.0%} of the wall), "
              f"{r['bookkeeping'] / n * 1000:.1f} ms and {per_fragment:.1f} events per fragment"
              + (" (this process only: the workers' evidence and judgement events are not timed)"
                 if "-w" in r["mode"] else ""))
        print("          stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in r["stages"].items()))
        top = sorted(r["events"].items(), key=lambda kv: -kv[1])[:6]
        print("          events: " + ", ".join(f"{k} {v}" for k, v in top))
    by_mode = {r["mode"]: r for r in results}
    single = [r for r in results if "-w" not in r["mode"]]
    if single:
        print("bookkeeping per fragment: " + ", ".join(
            f"{r['mode']} {r['bookkeeping'] / r['fragments'] * 1000:.1f} ms" for r in single))
    if "sqlite-stock" in by_mode:
        stock = by_mode["sqlite-stock"]
        for r in results:
            less = "" if "-w" in r["mode"] else \
                f", {stock['bookkeeping'] / r['bookkeeping']:.2f} x less bookkeeping per fragment"
            print(f"{r['mode']}: {stock['wall'] / r['wall']:.2f} x the fragments/s of sqlite-stock{less}")


if __name__ == "__main__":
    main()
