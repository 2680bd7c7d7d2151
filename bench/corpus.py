"""Corpus build figures: full build, no-change refresh (and its ratio to the full build), index sizes,
embedding rows/s and retrieval queries/s. Prints only; run with `python bench/corpus.py [--source PATH]`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERIES = [
    "extends KinematicBody2D", "move_and_slide(velocity)", "yield(get_tree(), \"idle_frame\")",
    "export(int) var speed = 400", "onready var sprite = $Sprite", "instance()", "connect(\"pressed\", self, \"_on\")",
    "Input.is_action_pressed", "AnimatedSprite2D", "setget set_health", "@export var speed", "await timer.timeout",
]


def timed(label: str, fn):
    started = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - started
    print(f"{label:<34} {seconds:8.2f} s")
    return result, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", default=str(REPO.parent / "shared" / "corpus"))
    parser.add_argument("--home", help="data directory (default: a fresh temporary one)")
    parser.add_argument("--no-index", action="store_true", help="tables only (no embedding)")
    args = parser.parse_args()
    os.environ["GD_ASSETS_HOME"] = args.home or tempfile.mkdtemp(prefix="gd-bench-")
    os.environ.pop("DAGSTER_HOME", None)


    from corpora_build.stats import corpus_stats
    from gd_assets.home import corpora_db_path, index_dir
    from gd_assets.orchestrate import build_corpus

    include = not args.no_index
    print(f"data directory {os.environ['GD_ASSETS_HOME']}, source {args.source}")
    full, full_s = timed("full build", lambda: build_corpus(args.source, include))
    again, again_s = timed("refresh, nothing changed", lambda: build_corpus(args.source, include))
    print(f"{'refresh / full build':<34} {again_s / full_s:8.1%}  (target under 10%)")
    stats = corpus_stats(corpora_db_path())
    rows = sum(stats["tables"][t] for t in ("docs_chunks", "api_mapping", "label_prototypes"))
    print(f"{'rows (3 searchable tables)':<34} {rows:8d}   tables/s {rows / full_s:8.0f} rows/s overall")
    print(f"{'bridged share':<34} {stats.get('bridge_shares')}")
    if not include:
        return
    index_events = [m for m in full.get_asset_materialization_events() if m.asset_key.path[-1] == "corpus_index"]
    meta = index_events[0].materialization.metadata if index_events else {}
    for key in ("embed_rows_per_second", "embed_seconds", "embedded"):
        if key in meta:
            print(f"{key:<34} {meta[key].value}")
    if "stats" in meta:
        for name, size in (meta["stats"].value.get("bytes") or {}).items():
            print(f"{'index ' + name:<34} {size / 1e6:8.1f} MB")
    try:
        from gd_assets.core.retrieval import CorpusIndex
    except ImportError:
        print("retrieval module absent: no queries/s")
        return
    index, _ = timed("index load", lambda: CorpusIndex.load(index_dir()))
    index.search_text(QUERIES[0])  # warm the embedding model
    n = 5 * len(QUERIES)
    _, seconds = timed(f"{n} searches", lambda: [index.search_text(q) for q in QUERIES * 5])
    print(f"{'retrieval':<34} {n / seconds:8.1f} queries/s")


if __name__ == "__main__":
    main()
