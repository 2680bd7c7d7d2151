"""Per-call costs of the analysis store on a DuckDB file: opening it, upserting a batch, reading a batch
by key, and the two ways of passing a list of keys (a list parameter against one JSON string).

    python bench/store.py [--keys 64] [--repeat 30]

A batch is what the evidence asset writes and reads for 64 fragments: 1,280 candidate rows. The store
lies in a temporary data home; nothing else is touched.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import duckdb

from gd_assets import store
from gd_assets.core import duck


def timed(repeat: int, call) -> float:
    """Milliseconds per call, after one untimed call."""
    call()
    started = time.perf_counter()
    for _ in range(repeat):
        call()
    return (time.perf_counter() - started) / repeat * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    os.environ["GD_ASSETS_HOME"] = tempfile.mkdtemp(prefix="gd-bench-store-")
    os.environ["GD_ASSETS_STORE"] = "duckdb"
    keys = [f"p/a.gd#{i}" for i in range(args.keys)]
    rows = store.frame("candidates", [
        {"id": f"{k}#{r}", "key": k, "project": "p", "rank": r, "corpus_table": "docs_chunks", "row_id": "x",
         "title": "t", "text": "y" * 300, "sparse_score": 1.0, "sparse_rank": 1, "dense_score": 0.5, "score": 0.3,
         "table_rank": 1} for k in keys for r in range(20)])
    store.upsert("candidates", rows)
    select = "SELECT * FROM candidates WHERE key IN (SELECT unnest({})) ORDER BY key, rank"

    def opened() -> None:
        with store._connection():
            pass

    figures = {
        "open + table check": timed(args.repeat, opened),
        f"upsert {rows.height} rows (replacing {len(keys)} keys)": timed(
            args.repeat, lambda: store.upsert("candidates", rows, replace_keys=keys)),
    }
    with duck.connect(store.db_path()) as con:
        figures["read by key, list parameter, sql()"] = timed(
            args.repeat, lambda: con.sql(select.format("?::VARCHAR[]"), params=[keys]).to_arrow_table())
        figures["read by key, list parameter, execute()"] = timed(
            args.repeat, lambda: con.execute(select.format("?::VARCHAR[]"), [keys]).to_arrow_table())
        figures["read by key, JSON parameter, execute() (the store's)"] = timed(
            args.repeat, lambda: con.execute(select.format(duck.TEXT_LIST), [duck.text_list(keys)]).to_arrow_table())
    print(f"DuckDB {duckdb.__version__}, {len(keys)} keys, {args.repeat} calls each")
    for name, ms in figures.items():
        print(f"  {name:<55} {ms:7.2f} ms")
    slow = figures["read by key, list parameter, sql()"]
    ours = figures["read by key, JSON parameter, execute() (the store's)"]
    print(f"  the store's read is {slow / ours:.1f} x faster than a list parameter through sql()")


if __name__ == "__main__":
    main()
