"""Evidence step figures: fragments/s of cue extraction, sparse retrieval, dense retrieval and the
whole batched search (and what building the project context costs next to it), then of
`fragment_evidence` through Dagster: one run over many partitions
(as the CLI runs it) against one run per partition, with the share Dagster's bookkeeping takes.

    python bench/evidence.py                    # a generated project (~1,500 fragments)
    python bench/evidence.py PATH [--max 1500]  # .gd/.tscn/project.godot files of a Godot tree

Needs a built corpus and index: GD_ASSETS_CORPUS_HOME (or GD_ASSETS_HOME) holding corpora.duckdb
and index/. The project and its Dagster runs go to a fresh temporary GD_ASSETS_HOME. Files are
picked at random (seeded) until --max fragments, so the mix of kinds is that of the tree.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TARGET = 150.0  # fragments/s the batched evidence step should reach on a 2-core machine
SUFFIXES = (".gd", ".tscn")


def pick_files(root: Path, limit: int, dest: Path, seed: int = 7) -> Counter:
    """Copy random .gd/.tscn/project.godot files of `root` to `dest` until `limit` fragments; kinds found."""
    from gd_assets.core.ingest import file_kind
    from gd_assets.core.slicing import slice_file

    paths = sorted(p for p in root.rglob("*") if p.is_file() and (p.suffix in SUFFIXES or p.name == "project.godot")
                   and ".godot" not in p.relative_to(root).parts[:-1] and ".import" not in p.parts)
    random.Random(seed).shuffle(paths)
    kinds: Counter = Counter()
    for path in paths:
        if sum(kinds.values()) >= limit:
            break
        relative = path.relative_to(root)
        kind = file_kind(str(relative))
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        kinds[kind] += len(slice_file(str(relative), kind, text))
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest / relative)
    return kinds


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:8.1f} fragments/s" if seconds > 0 else "       - fragments/s"


def line(label: str, seconds: float, count: int, whole: float | None = None) -> None:
    share = f"  {seconds / whole:6.1%} of the search" if whole else ""
    print(f"  {label:<40} {seconds:7.2f} s {rate(count, seconds)}{share}")


def batches(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def pure_figures(frags: list[dict], batch: int) -> float:
    """(a)-(d) on `frags`; returns (d) in seconds.

    The stages are timed batch by batch, one after the other on the same batch, so that load from
    other work on the machine weighs on all of them alike and their shares stay comparable.
    """
    from gd_assets.core import embedding
    from gd_assets.core.cues import DEFAULT_REQUEST
    from gd_assets.core.evidence import fragment_queries, gather_evidence
    from gd_assets.core.retrieval import CorpusIndex, RetrievalParams
    from gd_assets.home import index_dir

    params = RetrievalParams()
    started = time.perf_counter()
    index = CorpusIndex.load(index_dir())
    embedding.load_embedder()
    gather_evidence(frags[:8], index, params, DEFAULT_REQUEST)  # touch the memory maps, warm the model
    print(f"  {'index open + model load + warm-up':<40} {time.perf_counter() - started:7.2f} s"
          f"   ({index.size} corpus rows, embedder in {embedding.embed_dtype()})")
    n = len(frags)
    spent = Counter()
    pieces = []
    for chunk in batches(frags, batch):
        t0 = time.perf_counter()
        gather_evidence(chunk, index, params, DEFAULT_REQUEST)
        t1 = time.perf_counter()
        queries = [q for _, q in fragment_queries(chunk, DEFAULT_REQUEST)]
        t2 = time.perf_counter()
        # Sparse and dense through the steps CorpusIndex.search runs (query terms -> BM25 block ->
        # top-k; query embedding -> usearch), since its public API times them only together.
        scores = index._sparse_block([index._query_terms(q.sparse_terms, params) for q in queries])
        index._sparse_picks(scores, list(index.tables.values()), params)
        t3 = time.perf_counter()
        texts = [q.dense_text for q in queries]
        vectors = embedding.embed_queries(texts)
        t4 = time.perf_counter()
        index._dense.search(vectors, min(params.k_dense, index.size))
        t5 = time.perf_counter()
        spent.update(whole=t1 - t0, cues=t2 - t1, sparse=t3 - t2, embed=t4 - t3, usearch=t5 - t4)
        pieces += embedding.token_counts(texts)

    whole = spent["whole"]
    dense = spent["embed"] + spent["usearch"]
    line("(a) cue extraction", spent["cues"], n, whole)
    line("(b) sparse: terms + BM25 + top-k", spent["sparse"], n, whole)
    line("(c) dense: query embedding + usearch", dense, n, whole)
    line("      of which query embedding", spent["embed"], n, whole)
    line("      of which usearch", spent["usearch"], n, whole)
    line("    rest: fusion, selection, row text", max(whole - spent["cues"] - spent["sparse"] - dense, 0.0), n, whole)
    line(f"(d) whole batched search ({batch}/batch)", whole, n)
    cap = embedding.QUERY_MAX_TOKENS
    print(f"  {'query length in word pieces':<40} mean {sum(min(p, cap) for p in pieces) / len(pieces):.0f} "
          f"(cap {cap}); {sum(p > cap for p in pieces) / len(pieces):.0%} of queries cut there")
    verdict = "met" if n / whole >= TARGET else "not met"
    print(f"  {'(d) against the target':<40} {n / whole:7.1f} / {TARGET:.0f} fragments/s = "
          f"{n / whole / TARGET:.2f} x target ({verdict})")
    return whole


def commit_ms(folder: Path, count: int = 40) -> float:
    """Milliseconds per committed sqlite insert in `folder`: what each Dagster event-log write waits on."""
    import sqlite3

    path = folder / "commit-probe.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x TEXT)")
    con.commit()
    started = time.perf_counter()
    for _ in range(count):
        con.execute("INSERT INTO t VALUES (?)", ("x" * 2000,))
        con.commit()
    seconds = time.perf_counter() - started
    con.close()
    path.unlink()
    return seconds / count * 1000


def dagster_figures(keys: list[str], frags: list[dict], whole: float, sample: int) -> None:
    """(e) fragment_evidence through Dagster: one run over every key, then one run per key of a sample."""
    from gd_assets.assets.evidence import fragment_evidence
    from gd_assets.core.cues import DEFAULT_REQUEST
    from gd_assets.core.evidence import gather_evidence
    from gd_assets.core.retrieval import CorpusIndex
    from gd_assets.freshness import PARAMS
    from gd_assets.home import index_dir
    from gd_assets.orchestrate import materialize

    n = len(keys)
    started = time.perf_counter()
    materialize([fragment_evidence], fragment_keys=keys[:1])
    print(f"  {'first run (definitions, warm-up)':<40} {time.perf_counter() - started:7.2f} s")

    home = Path(os.environ["GD_ASSETS_HOME"])
    before = commit_ms(home)
    started = time.perf_counter()
    materialize([fragment_evidence], fragment_keys=keys)
    many = time.perf_counter() - started
    commit = (before + commit_ms(home)) / 2
    line(f"one run over {n} partitions", many, n)
    per_partition = many / n
    search = whole / n
    print(f"  {'  per partition: run / pure search':<40} {per_partition * 1000:7.1f} ms / {search * 1000:.1f} ms"
          f"  -> bookkeeping {(per_partition - search) * 1000:.1f} ms per partition "
          f"({1 - search / per_partition:.0%} of the run)")
    print(f"  {'  sqlite commit on this disk (baseline)':<40} {commit:7.1f} ms  -> bookkeeping = "
          f"{(per_partition - search) * 1000 / commit:.1f} commits' worth per partition")

    step = max(1, n // sample)
    chosen = list(range(0, n, step))[:sample]
    index = CorpusIndex.load(index_dir())
    started = time.perf_counter()
    for i in chosen:
        gather_evidence([frags[i]], index, PARAMS, DEFAULT_REQUEST)
    alone = time.perf_counter() - started
    started = time.perf_counter()
    for i in chosen:
        materialize([fragment_evidence], fragment_keys=[keys[i]])
    single = time.perf_counter() - started
    m = len(chosen)
    line(f"one run per partition ({m} runs)", single, m)
    print(f"  {'  per run: run / pure search of one':<40} {single / m * 1000:7.1f} ms / {alone / m * 1000:.1f} ms"
          f"  -> bookkeeping {(single - alone) / m * 1000:.1f} ms per run ({1 - alone / single:.0%} of the run)")
    print(f"  {'one run / one run per partition':<40} {(n / many) / (m / single):7.1f} x fragments/s")


def read_in_context(project: str, frags: list[dict]) -> tuple[float, str]:
    """Build the project context as `project_symbols` does (timed) and give each fragment its scope,
    as `fragment_evidence` does; returns the seconds and what the context holds."""
    from gd_assets import store
    from gd_assets.core.corpus.surface import load_surface
    from gd_assets.core.project_context import build_context
    from gd_assets.core.receivers import Scope
    from gd_assets.home import corpora_db_path

    files = store.project_files(project, included_only=True).select("path", "kind", "text").to_dicts()
    started = time.perf_counter()
    context = build_context(files)
    rows = context.rows()
    seconds = time.perf_counter() - started
    engine = load_surface(str(corpora_db_path()))
    for frag in frags:
        frag["scope"] = Scope.of(context, frag["path"], frag["symbol"], engine)
    return seconds, f"{len(context.scripts)} scripts, {len(rows)} symbol rows"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", help="a Godot tree (default: a generated project)")
    parser.add_argument("--max", type=int, default=1500, help="fragments to measure (files are whole)")
    parser.add_argument("--batch", type=int, default=64, help="fragments per search batch (the asset's default)")
    parser.add_argument("--sample", type=int, default=30, help="partitions run one per run")
    parser.add_argument("--no-dagster", action="store_true", help="only the pure-core figures (a)-(d)")
    args = parser.parse_args(argv)

    corpus = os.environ.get("GD_ASSETS_CORPUS_HOME") or os.environ.get("GD_ASSETS_HOME") or "data"
    os.environ["GD_ASSETS_CORPUS_HOME"] = str(Path(corpus).expanduser().resolve())
    scratch = Path(tempfile.mkdtemp(prefix="gd-bench-evidence-"))
    os.environ["GD_ASSETS_HOME"] = str(scratch / "home")
    os.environ.pop("DAGSTER_HOME", None)

    from gd_assets import store
    from gd_assets.orchestrate import ingest_and_slice

    project_dir = scratch / "project"
    project_dir.mkdir()
    if args.path:
        kinds = pick_files(Path(args.path).resolve(), args.max, project_dir)
        origin = args.path
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from slicing import generate

        generated = scratch / "generated"
        generate(generated, scripts=args.max // 10 + 1)
        kinds = pick_files(generated, args.max, project_dir)
        origin = "generated project"
    print(f"corpus {os.environ['GD_ASSETS_CORPUS_HOME']}; scratch {scratch}")
    print(f"{origin}: {sum(kinds.values())} fragments ({', '.join(f'{k} {v}' for k, v in kinds.most_common())})")

    started = time.perf_counter()
    project = ingest_and_slice(str(project_dir), "bench")
    keys = store.query("SELECT key FROM fragments WHERE project = ? ORDER BY path, ordinal", [project])["key"].to_list()
    frags = store.fragments_by_key(keys).to_dicts()
    print(f"  {'ingest + slice run (Dagster)':<40} {time.perf_counter() - started:7.2f} s   {len(keys)} fragments")

    print("pure core, in batches as fragment_evidence runs them (each fragment read in its project's context)")
    context_seconds, context_note = read_in_context(project, frags)
    whole = pure_figures(frags, args.batch)
    line("project context (all files, pure)", context_seconds, len(frags), whole)
    print(f"  {'':<40} {context_note}")
    if not args.no_dagster:
        print("fragment_evidence through Dagster")
        dagster_figures(keys, frags, whole, args.sample)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
