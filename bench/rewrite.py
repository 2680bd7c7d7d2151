"""Rewrite figures: what the rewrite step adds to `analyze` (stage times and their ratio), the
migrated copy (`project_migration`), and fragments/s of the rewrite core alone.

    python bench/rewrite.py PATH [--max N]   # .gd/.tscn/project.godot files of a Godot 3 tree (0: all)

Needs a built corpus and index: GD_ASSETS_CORPUS_HOME (or GD_ASSETS_HOME) holding corpora.duckdb
and index/. The project goes to a fresh temporary GD_ASSETS_HOME.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import judge as judge_bench  # noqa: E402  (the sibling bench's timed analyze)
from evidence import pick_files  # noqa: E402

judge_bench.STAGES = ("ingest_and_slice", "run_evidence", "run_judgement", "run_rewrite", "run_verdict")


def rewrite_alone(keys: list[str]) -> tuple[float, int, int, int]:
    """The rewrite core on the stored fragments judged to need migration; (seconds, fragments, edits, manual)."""
    from gd_assets import home, store
    from gd_assets.assets.project_symbols import load_context
    from gd_assets.core.receivers import Scope
    from gd_assets.core.rewrite import load_rules, rewrite_fragment

    rules = load_rules(str(home.corpora_db_path()))
    context = load_context("bench")
    rows = store.query("SELECT f.* FROM fragments f JOIN judgements j ON j.key = f.key "
                       "WHERE f.project = 'bench' AND j.migration_needed ORDER BY f.path, f.ordinal").to_dicts()
    edits = manual = 0
    started = time.perf_counter()
    for f in rows:
        result = rewrite_fragment(f["kind"], f["text"], f["start_line"], f["file_kind"],
                                  Scope.of(context, f["path"], f["symbol"], rules.surface), rules)
        edits += len(result.edits)
        manual += len(result.manual)
    return time.perf_counter() - started, len(rows), edits, manual


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", help="a Godot 3 tree")
    parser.add_argument("--max", type=int, default=0, help="fragments to analyse (files are whole; 0: all)")
    args = parser.parse_args(argv)

    corpus = os.environ.get("GD_ASSETS_CORPUS_HOME") or os.environ.get("GD_ASSETS_HOME") or "data"
    os.environ["GD_ASSETS_CORPUS_HOME"] = str(Path(corpus).expanduser().resolve())
    scratch = Path(tempfile.mkdtemp(prefix="gd-bench-rewrite-"))
    os.environ["GD_ASSETS_HOME"] = str(scratch / "home")
    os.environ.pop("DAGSTER_HOME", None)
    project_dir = scratch / "project"
    project_dir.mkdir()
    kinds = pick_files(Path(args.path).resolve(), args.max or sys.maxsize, project_dir)
    print(f"{args.path}: {sum(kinds.values())} fragments ({', '.join(f'{k} {v}' for k, v in kinds.most_common())})")

    from gd_assets import orchestrate, store

    print("analyze (through Dagster), with the rewrite stage")
    total, stages = judge_bench.timed_analyze(str(project_dir))
    keys = store.query("SELECT key FROM fragments WHERE project = 'bench'")["key"].to_list()
    judge_bench.print_run("first run", total, stages, len(keys))
    rewrite = stages.get("run_rewrite", 0.0)
    print(f"  {'rewrite stage / the rest of analyze':<34} {rewrite / (total - rewrite):7.1%}")
    started = time.perf_counter()
    facts = orchestrate.run_migration("bench")
    migration = time.perf_counter() - started
    print(f"  {'project_migration (copy + patch)':<34} {migration:7.2f} s   {facts['files_changed']} files changed, "
          f"{facts['edits']} edits, {facts['manual']} manual items")
    print(f"  {'migrate / analyze':<34} {(total + migration) / (total - rewrite):7.2f} x time")

    seconds, count, edits, manual = rewrite_alone(keys)
    print(f"  {'rewrite core alone':<34} {seconds:7.2f} s {count / max(seconds, 1e-9):8.1f} fragments/s   "
          f"({count} need migration: {edits} edits, {manual} manual items)")
    print(f"  {'rewrite stage / rewrite core':<34} {rewrite / max(seconds, 1e-9):7.1f} x time (Dagster bookkeeping)")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
