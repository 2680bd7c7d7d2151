"""Judgement figures: `analyze` on a large project (first run, then a re-run where nothing changed,
and their ratio), fragments/s of the evidence judge alone on the stored evidence, and peak memory.

    python bench/judge.py                    # a generated project (~1,000 fragments)
    python bench/judge.py PATH [--max N]     # .gd/.tscn/project.godot files of a Godot tree (0: all)

Needs a built corpus and index: GD_ASSETS_CORPUS_HOME (or GD_ASSETS_HOME) holding corpora.duckdb
and index/. The project goes to a fresh temporary GD_ASSETS_HOME; the first run starts cold (model
and corpus surface loaded inside it), as a CLI call does.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evidence import pick_files  # noqa: E402  (the sibling bench's file picker)

STAGES = ("ingest_and_slice", "run_evidence", "run_judgement", "run_verdict")


def peak_mib() -> float:
    """Peak resident memory of this process so far (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed_analyze(source: str) -> tuple[float, dict[str, float]]:
    """`orchestrate.analyze` timed as a whole and per stage (its stage functions wrapped for the call)."""
    from gd_assets import orchestrate

    spent: dict[str, float] = {}
    originals = {name: getattr(orchestrate, name) for name in STAGES}

    def wrap(name, fn):
        def run(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - started
        return run

    for name, fn in originals.items():
        setattr(orchestrate, name, wrap(name, fn))
    try:
        started = time.perf_counter()
        orchestrate.analyze(source, "bench")
        total = time.perf_counter() - started
    finally:
        for name, fn in originals.items():
            setattr(orchestrate, name, fn)
    return total, spent


def print_run(label: str, total: float, spent: dict[str, float], fragments: int) -> None:
    stages = "  ".join(f"{name.replace('run_', '')} {spent.get(name, 0.0):.1f} s" for name in STAGES)
    print(f"  {label:<34} {total:7.2f} s {fragments / total:8.1f} fragments/s   ({stages})")


def judge_alone(keys: list[str]) -> float:
    """The evidence judge on JudgeInputs built from the stored evidence and candidates; returns seconds."""
    from gd_assets import home, store
    from gd_assets.assets.judgement import inputs_of
    from gd_assets.core.corpus.surface import load_surface
    from gd_assets.core.judges import build_judge

    ev, cands = store.evidence_by_key(keys)
    rows = {e["key"]: e for e in ev.to_dicts()}
    items = inputs_of([rows[k] for k in keys], cands)
    judge = build_judge("evidence", corpus_db=str(home.corpora_db_path()))
    load_surface.cache_clear()  # the judgement stage loaded it in this process: time a cold load
    started = time.perf_counter()
    judge.surface  # noqa: B018  (loads the corpus surface)
    print(f"  {'corpus surface load (cold)':<34} {time.perf_counter() - started:7.2f} s")
    started = time.perf_counter()
    judgements = judge.judge(items)
    seconds = time.perf_counter() - started
    flagged = sum(j.migration_needed for j in judgements)
    print(f"  {'evidence judge alone':<34} {seconds:7.2f} s {len(items) / seconds:8.1f} fragments/s   "
          f"({sum(len(i.candidates) for i in items) / len(items):.1f} candidates each, {flagged} need migration)")
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", help="a Godot tree (default: a generated project)")
    parser.add_argument("--max", type=int, default=1000, help="fragments to analyse (files are whole; 0: all)")
    args = parser.parse_args(argv)

    corpus = os.environ.get("GD_ASSETS_CORPUS_HOME") or os.environ.get("GD_ASSETS_HOME") or "data"
    os.environ["GD_ASSETS_CORPUS_HOME"] = str(Path(corpus).expanduser().resolve())
    scratch = Path(tempfile.mkdtemp(prefix="gd-bench-judge-"))
    os.environ["GD_ASSETS_HOME"] = str(scratch / "home")
    os.environ.pop("DAGSTER_HOME", None)
    limit = args.max or sys.maxsize

    project_dir = scratch / "project"
    project_dir.mkdir()
    if args.path:
        kinds = pick_files(Path(args.path).resolve(), limit, project_dir)
        origin = args.path
    else:
        from slicing import generate

        generate(scratch / "generated", scripts=args.max // 10 + 1)
        kinds = pick_files(scratch / "generated", limit, project_dir)
        origin = "generated project"
    print(f"corpus {os.environ['GD_ASSETS_CORPUS_HOME']}; scratch {scratch}; peak RSS at start {peak_mib():.0f} MiB")
    print(f"{origin}: {sum(kinds.values())} fragments ({', '.join(f'{k} {v}' for k, v in kinds.most_common())})")

    from gd_assets import store

    print("analyze (the CLI's whole pipeline, through Dagster)")
    first, first_stages = timed_analyze(str(project_dir))
    keys = store.query("SELECT key FROM fragments WHERE project = 'bench' ORDER BY path, ordinal")["key"].to_list()
    print_run("first run", first, first_stages, len(keys))
    print(f"  {'peak RSS after the first run':<34} {peak_mib():7.0f} MiB")
    again, again_stages = timed_analyze(str(project_dir))
    print_run("re-run, nothing changed", again, again_stages, len(keys))
    print(f"  {'re-run / first run':<34} {again / first:7.1%}")
    verdict = store.query("SELECT verdict, confidence FROM verdicts WHERE project = 'bench'").to_dicts()[0]
    print(f"  {'verdict':<34} {verdict['verdict']} ({verdict['confidence']:.2f})")

    print("evidence judge alone, on the stored evidence of the same fragments")
    alone = judge_alone(keys)
    judged = first_stages["run_judgement"]
    print(f"  {'judgement stage / judge alone':<34} {judged / alone:7.1f} x time   "
          f"(judge alone is {alone / first_stages['run_evidence']:.1%} of the evidence stage)")
    print(f"  {'peak RSS':<34} {peak_mib():7.0f} MiB")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
