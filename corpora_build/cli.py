"""`gd-assets corpus build|stats` and `gd-assets search`: the corpus from the command line.

`corpus build` is a Dagster run in the data directory's instance (visible in the UI afterwards);
`stats` and `search` only read what a build left.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from gd_assets import home


def cmd_corpus_build(args: argparse.Namespace) -> int:
    from corpora_build.definitions import build_corpus
    from corpora_build.stats import corpus_stats

    source = os.pathsep.join(args.source)
    result = build_corpus(source, include_index=not args.no_index)
    failed = [e for e in result.get_asset_check_evaluations() if not e.passed]
    for step in result.get_step_failure_events():
        print(f"failed: {step.step_key}: {step.event_specific_data.error.message.strip()}")
    for evaluation in result.get_asset_check_evaluations():
        print(f"check {'passed' if evaluation.passed else 'FAILED'}: {evaluation.check_name}")
    stats = corpus_stats(home.corpora_db_path())
    print(", ".join(f"{t} {n}" for t, n in stats["tables"].items()), f"(corpus version {stats['corpus_version']})")
    print(f"run {result.run_id} in {home.ensure_dagster_home()}")
    return 0 if result.success and not failed else 1


def cmd_corpus_stats(args: argparse.Namespace) -> int:
    from corpora_build.stats import corpus_stats, format_stats

    stats = corpus_stats(home.corpora_db_path())
    print(json.dumps(stats, indent=2, default=str) if args.json else format_stats(stats))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from gd_assets.core.retrieval import CorpusIndex

    try:
        index = CorpusIndex.load(home.index_dir())
    except FileNotFoundError as error:
        print(f"gd-assets: error: {error} (`gd-assets corpus build`)", file=sys.stderr)
        return 1
    hits = [c.as_dict() for c in index.search_text(args.query, table=args.table, k=args.k)]
    if args.json:
        print(json.dumps(hits, indent=2))
        return 0
    for h in hits:
        print(f"{h['score']:7.3f}  {h['table']:<16} {h['id']}\n         {h['title']}")
    return 0


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    """Register `corpus build`, `corpus stats` and `search` on the top-level parser's subcommands."""
    corpus = subparsers.add_parser("corpus", help="build or inspect the Godot 3/4 reference corpus")
    sub = corpus.add_subparsers(dest="corpus_command", required=True)
    p = sub.add_parser("build", help="build or refresh the corpus tables and index (a Dagster run)")
    p.add_argument("--source", nargs="+", default=[os.environ.get("GD_ASSETS_CORPUS_SOURCE", "auto")],
                   metavar="auto|debian|github|PATH", help="where the Godot sources come from (default: auto)")
    p.add_argument("--no-index", action="store_true", help="build the tables only, not the retrieval index")
    p.set_defaults(func=cmd_corpus_build)
    p = sub.add_parser("stats", help="row counts per table, category and version; bridge shares; sources")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_corpus_stats)

    p = subparsers.add_parser("search", help="debug retrieval: search the corpus index for a text")
    p.add_argument("query")
    p.add_argument("--table", choices=("docs_chunks", "api_mapping", "label_prototypes"))
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)
