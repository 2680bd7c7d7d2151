"""Hybrid retrieval over the three corpus tables: BM25 narrows, dense similarity re-ranks.

For each query, BM25 over the cue terms gives the best `k_sparse` rows of the whole corpus plus
the best `k_sparse_per_table` of each table; the dense neighbours of the query text are added;
the union is scored by dense cosine fused with the BM25 evidence (text, symbol names and exact
whole-name hits), rows bridged to the best candidates (the bridges table: a rename to its docs, a
prototype to its mappings) are lifted towards them, and the best `k_final` are kept, with at
least `min_per_table` rows of every table that has a candidate, so the ~170 prototypes are never
drowned by ~40k doc rows. Everything is batched: one model call for all query texts, per block of
queries one sparse bincount (and one matrix product for the common terms), one usearch call.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa

from gd_assets.core import embedding, tokens
from gd_assets.core.corpus import layout
from gd_assets.core.corpus.layout import EXACT_PREFIX, NAME_PREFIX

_BLOCK = 64  # queries per sparse-score block (block x rows float64 scores in memory)
# A term in at least this share of the rows is scored from a dense row of its BM25 weights: such
# terms (`godot` is in every row and every query) are over nine tenths of the postings a block touches,
# and adding a contiguous row costs a fraction of gathering and scattering its postings.
_COMMON_TERM_SHARE = 1 / 32
# `_top` reads every (hi - lo) / (this x k)-th score of a table for a floor under its k-th best
_SAMPLE_PER_K = 8


@dataclass(frozen=True)
class RetrievalParams:
    """Knobs of candidate generation and fusion; `version()` feeds Dagster's code_version."""

    k_sparse: int = 200
    k_sparse_per_table: int = 20
    k_dense: int = 50
    k_final: int = 20
    min_per_table: int = 3
    w_dense: float = 1.0  # weight of the cosine similarity to the query text
    w_sparse: float = 0.5  # weight of BM25 / best BM25 of the query
    w_rank: float = 0.25  # weight of rrf_k / (rrf_k + sparse_rank - 1)
    w_names: float = 1.0  # weight of a query token matched in a row's names (vs 1.0 in its text)
    w_exact: float = 3.0  # BM25 weight of a query token equal to one of a row's whole names
    w_exact_hit: float = 0.3  # fused bonus of a row one of whose whole names is a query token
    w_link: float = 0.9  # a row bridged to a strong candidate scores at least w_link x its score
    link_from: int = 10  # bridges are followed from this many best candidates
    w_link_own: float = 0.1  # ... plus this x its own score, so bridged rows keep their own order
    link_min_sparse: float = 0.25  # a bridged row needs BM25 >= this x the best BM25 ...
    link_min_dense: float = 0.5  # ... or a cosine of at least this
    rrf_k: int = 10

    def version(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True)
        return "retrieval-1-" + hashlib.sha256(blob.encode()).hexdigest()[:10]


def _best(scores: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """The `k` of each query's `rows` (positions, -1 = none) with the best scores; of rows tied at
    the last place, the lower positions."""
    if rows.shape[1] <= k:
        return rows
    values = np.where(rows >= 0, np.take_along_axis(scores, np.maximum(rows, 0), axis=1), -np.inf)
    order = np.lexsort((np.where(rows >= 0, rows, np.iinfo(np.int64).max), -values), axis=1)
    return np.take_along_axis(rows, order[:, :k], axis=1)


def _best_of(values: np.ndarray, k: int) -> np.ndarray:
    """Positions of the `k` largest `values`; of those tied at the k-th value, the first."""
    if len(values) <= k:
        return np.arange(len(values))
    kth = values[np.argpartition(values, -k)[-k]]
    above = np.flatnonzero(values > kth)
    return np.sort(np.concatenate([above, np.flatnonzero(values == kth)[: k - len(above)]]))


def _members(rows: np.ndarray, sorted_unique: np.ndarray) -> np.ndarray:
    """`np.isin(rows, sorted_unique)` for a sorted array of distinct values, by binary search."""
    if len(sorted_unique) == 0:
        return np.zeros(len(rows), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_unique, rows), len(sorted_unique) - 1)
    return sorted_unique[at] == rows


@dataclass(frozen=True)
class Query:
    """What the retriever gets for one fragment: cue terms for BM25, a text for the dense side."""

    sparse_terms: list[str]
    dense_text: str


@dataclass
class Candidate:
    rank: int  # 1-based position in the final list
    table: str
    id: str
    title: str
    text: str
    sparse_score: float  # BM25 score (0.0 when no cue term matched)
    sparse_rank: int | None  # position in the query's BM25 candidate list; None if not from BM25
    dense_score: float  # cosine similarity of the row to the query text
    score: float  # fused score the list is ordered by
    table_rank: int  # 1-based position among the candidates of its own table
    via: str | None = None  # id of the candidate whose bridge gave this row its score, if any

    def as_dict(self) -> dict:
        return asdict(self)


def _group_positions(owner: np.ndarray, groups: int) -> np.ndarray:
    """Each element's 0-based position within its group, for a flat array ordered by group."""
    counts = np.bincount(owner, minlength=groups)
    return np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)


def _running(mask: np.ndarray, owner: np.ndarray, groups: int) -> np.ndarray:
    """How many elements of `mask` are true up to each element, within its group (ordered by group)."""
    total = np.cumsum(mask)
    counts = np.bincount(owner, minlength=groups)
    before = np.concatenate([[0], total])[np.cumsum(counts) - counts]
    return total - np.repeat(before, counts)


@dataclass
class _Pools:
    """The candidate rows of a block of queries, flat and numpy: query `owner` (position in the block),
    row position and scores; ordered by query and row until `_selected` orders each query's by score."""

    owner: np.ndarray
    rows: np.ndarray
    sparse: np.ndarray
    sparse_rank: np.ndarray  # 0 = not a BM25 candidate
    dense: np.ndarray
    score: np.ndarray
    via: np.ndarray  # row position of the bridging candidate, -1 for none
    table_rank: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def take(self, at: np.ndarray) -> "_Pools":
        """The rows at `at` (before selection)."""
        return _Pools(*(getattr(self, f.name)[at] for f in fields(self) if f.name != "table_rank"))

    def joined(self, other: "_Pools", at: np.ndarray) -> "_Pools":
        """Both pools' rows together (before selection), in the order `at` gives to their concatenation."""
        return _Pools(*(np.concatenate([getattr(self, f.name), getattr(other, f.name)])[at]
                        for f in fields(self) if f.name != "table_rank"))


@dataclass(frozen=True)
class Postings:
    """The BM25 weights bm25s saved (a term x row CSC matrix of precomputed scores, and its vocabulary),
    read with numpy alone: importing bm25s (scipy, numba) costs a third of a second a process and the
    queries need none of it."""

    vocab: dict[str, int]
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    size: int

    @classmethod
    def load(cls, folder: Path) -> "Postings":
        params = json.loads((folder / "params.index.json").read_text())
        if params.get("method") not in ("lucene", "robertson", "atire"):   # bm25l and bm25+ need more arrays
            raise ValueError(f"{folder}: BM25 method {params.get('method')!r} is not read here: rebuild the index")
        vocab = json.loads((folder / "vocab.index.json").read_text(encoding="utf-8"))
        arrays = [np.load(folder / f"{name}.csc.index.npy", mmap_mode="r") for name in ("data", "indices", "indptr")]
        return cls(vocab, *arrays, int(params["num_docs"]))


class CorpusIndex:
    """A published index, memory-mapped: BM25 postings, f16 vectors, usearch graph, row metadata."""

    def __init__(self, build_dir: Path, manifest: dict, bm25: "Postings", dense, vectors: np.ndarray, rows: pa.Table,
                 links: tuple[np.ndarray, np.ndarray] | None = None):
        self.build_dir = build_dir
        self.manifest = manifest
        self.version: str = manifest["index_version"]
        self.vocab: dict[str, int] = bm25.vocab
        # plain arrays over the same mapped pages: numpy's memmap wraps every slice it returns (tens of µs)
        self._data = np.asarray(bm25.data)
        self._indices = np.asarray(bm25.indices)
        self._indptr = np.asarray(bm25.indptr)
        self.size = bm25.size
        self._dense = dense
        self._vectors = np.asarray(vectors)
        self._vectors32: np.ndarray | None = None  # the vectors as float32 (`_float_rows`)
        self._widened = 0
        self._rows = rows
        self._link_ptr, self._link_idx = links if links is not None else (np.zeros(self.size + 1, np.int64),
                                                                           np.zeros(0, np.int32))
        self.tables: dict[str, tuple[int, int]] = {
            t: (int(a), int(b)) for t, (a, b) in manifest["tables"].items() if b > a
        }
        self._table_of = np.zeros(self.size, dtype=np.int8)
        self._table_names = list(self.tables)
        frequency = np.diff(self._indptr)
        self._common = np.flatnonzero(frequency >= max(1, int(self.size * _COMMON_TERM_SHARE)))
        self._common_slot = np.full(len(frequency), -1, dtype=np.int64)
        self._common_slot[self._common] = np.arange(len(self._common))
        self._common_rows: np.ndarray | None = None  # (common terms x rows) BM25 weights, made on first use
        for i, (a, b) in enumerate(self.tables.values()):
            self._table_of[a:b] = i

    @classmethod
    def load(cls, index_dir: Path | str) -> "CorpusIndex":
        """Open the published build under `index_dir` without reading it into memory; a process that
        analyses again (the next run, a worker's next batch of runs) reuses the build it opened."""
        index_dir = Path(index_dir)
        build = layout.current_build(index_dir)
        if build is None:
            raise FileNotFoundError(f"{index_dir} holds no built index: run the corpus index build first")
        manifest_text = (build / layout.MANIFEST).read_text()
        if json.loads(manifest_text).get("embed_signature", "").split("|")[0] != embedding.model_name():
            raise ValueError(f"{build} was embedded with another model: rebuild the index")
        return cls._open(build, manifest_text)

    @classmethod
    @lru_cache(maxsize=2)
    def _open(cls, build: Path, manifest_text: str) -> "CorpusIndex":
        from usearch.index import Index

        manifest = json.loads(manifest_text)
        bm25 = Postings.load(build / layout.BM25_DIR)
        dense = Index.restore(str(build / layout.DENSE_FILE), view=True)
        vectors = np.load(build / layout.VECTORS_FILE, mmap_mode="r")
        rows = pa.ipc.open_file(pa.memory_map(str(build / layout.ROWS_FILE), "r")).read_all()
        links = None
        if (build / layout.LINKS_FILE).exists():
            with np.load(build / layout.LINKS_FILE) as z:
                links = (z["indptr"], z["indices"])
        return cls(build, manifest, bm25, dense, vectors, rows, links)

    # -- candidate generation -------------------------------------------------------------
    def _query_terms(self, terms: Sequence[str], params: RetrievalParams) -> tuple[np.ndarray, np.ndarray]:
        """Vocabulary ids of a query's tokens (each once) and their weights: text, names, whole names."""
        weights: dict[int, float] = {}
        for t in set(tokens.tokenize_terms(terms)):
            if t in self.vocab:
                weights[self.vocab[t]] = 1.0
            for prefix, w in ((NAME_PREFIX, params.w_names), (EXACT_PREFIX, params.w_exact)):
                if w > 0 and prefix + t in self.vocab:
                    weights[self.vocab[prefix + t]] = w
        ids = np.fromiter(weights.keys(), dtype=np.int64, count=len(weights))
        return ids, np.fromiter(weights.values(), dtype=np.float64, count=len(weights))

    def _exact_hits(self, queries: Sequence[Query]) -> list[np.ndarray]:
        """Per query, the rows one of whose whole names equals a query token (short postings)."""
        out = []
        for q in queries:
            ids = [self.vocab[x] for x in {EXACT_PREFIX + t for t in tokens.tokenize_terms(q.sparse_terms)}
                   if x in self.vocab]
            rows = [np.asarray(self._indices[self._indptr[i]:self._indptr[i + 1]]) for i in ids]
            out.append(np.unique(np.concatenate(rows)).astype(np.int64) if rows else np.zeros(0, np.int64))
        return out

    def _float_rows(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of `rows` as float32. Widening half floats costs more than the product with the
        query, so once this process has widened as many rows as the index has, it keeps them all widened
        (about 80 MB here); a small analysis never pays for that copy."""
        if self._vectors32 is None:
            self._widened += len(rows)
            if self._widened < self.size:
                return self._vectors[rows].astype(np.float32)
            self._vectors32 = self._vectors.astype(np.float32)
        return self._vectors32[rows]

    def _common_weights(self) -> np.ndarray:
        if self._common_rows is None:
            rows = np.zeros((len(self._common), self.size), dtype=self._data.dtype)  # about 32 MB here
            for slot, term in enumerate(self._common):
                start, end = int(self._indptr[term]), int(self._indptr[term + 1])
                rows[slot, np.asarray(self._indices[start:end])] = self._data[start:end]
            self._common_rows = rows
        return self._common_rows

    def _sparse_block(self, terms: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """BM25 scores of every row for a block of queries (queries x rows): one bincount over the
        postings of the rarer terms, plus a dense row per common term."""
        n, nq = self.size, len(terms)
        if not terms:
            return np.zeros((0, n), dtype=np.float64)
        ids = np.concatenate([t[0] for t in terms])
        qweight = np.concatenate([t[1] for t in terms])
        owner = np.repeat(np.arange(nq), [len(t[0]) for t in terms])
        slot = self._common_slot[ids]
        common = slot >= 0
        scores = self._postings_scores(ids[~common], qweight[~common], owner[~common], nq)
        if common.any():   # one matrix product: (queries x common terms used) @ (those terms x rows)
            used, column = np.unique(slot[common], return_inverse=True)
            weights = np.zeros((nq, len(used)))
            weights[owner[common], column] = qweight[common]
            scores += weights @ self._common_weights()[used].astype(np.float64)
        return scores

    def _postings_scores(self, ids: np.ndarray, qweight: np.ndarray, owner: np.ndarray, nq: int) -> np.ndarray:
        n = self.size
        starts = np.asarray(self._indptr[ids], dtype=np.int64)
        lengths = np.asarray(self._indptr[ids + 1], dtype=np.int64) - starts
        total = int(lengths.sum())
        if total == 0:
            return np.zeros((nq, n), dtype=np.float64)
        # positions of every posting of every query term, without a Python loop over terms
        offsets = np.cumsum(lengths) - lengths
        positions = np.arange(total, dtype=np.int64) - np.repeat(offsets - starts, lengths)
        docs = np.asarray(self._indices[positions], dtype=np.int64)
        weights = np.asarray(self._data[positions], dtype=np.float64) * np.repeat(qweight, lengths)
        flat = np.bincount(np.repeat(owner, lengths) * n + docs, weights=weights, minlength=nq * n)
        return flat.reshape(nq, n)

    def _top(self, scores: np.ndarray, k: int, lo: int, hi: int) -> np.ndarray:
        """Row positions of the best `k` positive scores within [lo, hi), per query (-1 = none); of
        rows tied at the last place, the lower positions.

        Partitioning every score of a large table is most of a search; so the `k`-th best score of
        every `stride`-th row, which no row of the true `k` best scores less than, leaves about
        `k x stride` rows per query to choose from, and only those are partitioned."""
        part = scores[:, lo:hi]
        k = min(k, hi - lo)
        top = np.full((len(part), max(k, 0)), -1, dtype=np.int64)
        if k <= 0:
            return top
        stride = max(1, (hi - lo) // (_SAMPLE_PER_K * k))
        floor = np.partition(part[:, ::stride], -k, axis=1)[:, -k] if k < hi - lo else np.zeros(len(part))
        for i, (values, at_least) in enumerate(zip(part, floor.tolist())):
            rows = np.flatnonzero(values > 0) if at_least <= 0 else np.flatnonzero(values >= at_least)
            rows = rows[_best_of(values[rows], k)]
            top[i, : len(rows)] = rows + lo
        return top

    def _sparse_picks(self, scores: np.ndarray, ranges: list[tuple[int, int]], params: RetrievalParams) -> np.ndarray:
        """Per query, the rows of the best `k_sparse` positive scores of all and of the best
        `k_sparse_per_table` of each table (-1 = none). The best of all are among each table's best
        `k_sparse`, so every row is partitioned once, not once for all and again for its table."""
        per_table = [self._top(scores, max(params.k_sparse, params.k_sparse_per_table), lo, hi) for lo, hi in ranges]
        picks = [_best(scores, np.concatenate(per_table, axis=1), params.k_sparse)]
        picks += [_best(scores, rows, params.k_sparse_per_table) for rows in per_table]
        return np.concatenate(picks, axis=1)

    def _pools(self, queries: Sequence[Query], params: RetrievalParams, table: str | None) -> list[_Pools]:
        """The selected candidates of each block of queries. Every step works on the whole block's
        candidates at once (flat arrays, each row tagged with its query): a numpy call per step and
        block, where one per step and query made half of the search's time."""
        ranges = [self.tables[table]] if table else list(self.tables.values())
        lo_all, hi_all = (ranges[0] if table else (0, self.size))
        qvecs = embedding.embed_queries([q.dense_text for q in queries])
        k_dense = min(params.k_dense * (4 if table else 1), self.size)
        matches = self._dense.search(qvecs, k_dense)
        dense_keys = np.atleast_2d(matches.keys).astype(np.int64)
        # usearch answers a single query with `Matches` (no counts), several with `BatchMatches`
        dense_counts = np.atleast_1d(getattr(matches, "counts", dense_keys.shape[1]))
        out: list[_Pools] = []
        for b0 in range(0, len(queries), _BLOCK):
            block = queries[b0 : b0 + _BLOCK]
            nq, n = len(block), self.size
            scores = self._sparse_block([self._query_terms(q.sparse_terms, params) for q in block])
            exact = self._exact_hits(block) if params.w_exact_hit else []
            exact_keys = np.concatenate([np.zeros(0, np.int64)] + [q * n + e for q, e in enumerate(exact)])
            sparse_pick = self._sparse_picks(scores, ranges, params)
            base = np.arange(nq, dtype=np.int64)[:, None] * n
            picked = np.unique((base + sparse_pick)[sparse_pick >= 0])
            dense_rows = dense_keys[b0 : b0 + nq]
            near = np.arange(dense_rows.shape[1]) < dense_counts[b0 : b0 + nq, None]
            if table:
                near &= (dense_rows >= lo_all) & (dense_rows < hi_all)
            keys = np.union1d(picked, (base + dense_rows)[near])
            owner, rows = np.divmod(keys, n)
            sparse = scores[owner, rows]
            # each query's BM25 picks ranked by score, then by row
            is_pick = np.flatnonzero(_members(keys, picked))
            ranked = is_pick[np.lexsort((rows[is_pick], -sparse[is_pick], owner[is_pick]))]
            sparse_rank = np.zeros(len(keys), dtype=np.int64)
            sparse_rank[ranked] = _group_positions(owner[ranked], nq) + 1
            top = np.zeros(nq)   # each query's best BM25 pick (0 for none)
            firsts = ranked[sparse_rank[ranked] == 1]
            top[owner[firsts]] = sparse[firsts]
            best_any = np.maximum(scores.max(axis=1), 1e-9)
            pools = self._fused(owner, rows, sparse, sparse_rank, np.where(top > 0, top, best_any),
                                qvecs[b0 : b0 + nq], exact_keys, params)
            pools = self._follow_links(pools, scores, qvecs[b0 : b0 + nq], top, best_any, exact_keys, params,
                                       lo_all, hi_all)
            out.append(self._selected(pools, params, nq))
        return out

    def _fused(self, owner: np.ndarray, rows: np.ndarray, sparse: np.ndarray, sparse_rank: np.ndarray,
               best: np.ndarray, qvecs: np.ndarray, exact_keys: np.ndarray, params: RetrievalParams) -> _Pools:
        """Dense cosine fused with BM25 (over the query's `best`), its rank and exact whole-name hits."""
        vectors = self._float_rows(rows)
        dense = np.empty(len(rows), dtype=np.float32)
        bounds = np.searchsorted(owner, np.arange(len(qvecs) + 1))
        for q in np.flatnonzero(np.diff(bounds)).tolist():   # one product per query, as a lone query gets
            dense[bounds[q] : bounds[q + 1]] = vectors[bounds[q] : bounds[q + 1]] @ qvecs[q]
        rank_term = np.where(sparse_rank > 0, params.rrf_k / (params.rrf_k + np.maximum(sparse_rank, 1) - 1), 0.0)
        score = params.w_dense * dense + params.w_sparse * (sparse / best[owner]) + params.w_rank * rank_term
        score = score + params.w_exact_hit * _members(owner * self.size + rows, exact_keys)
        return _Pools(owner, rows, sparse, sparse_rank, dense.astype(np.float64), score, np.full(len(rows), -1))

    def _follow_links(self, pools: _Pools, scores: np.ndarray, qvecs: np.ndarray, top: np.ndarray,
                      best_any: np.ndarray, exact_keys: np.ndarray, params: RetrievalParams,
                      lo: int, hi: int) -> _Pools:
        """Bridged rows of each query's best candidates score at least `w_link` x the candidate's score.

        A hit on `KinematicBody2D -> CharacterBody2D` so brings the CharacterBody2D docs, and a
        prototype hit the mappings it illustrates, whatever their own wording.
        """
        if params.w_link <= 0 or len(self._link_idx) == 0 or len(pools.rows) == 0:
            return pools
        n, nq = self.size, len(qvecs)
        order = np.lexsort((pools.rows, -pools.score, pools.owner))
        best = order[_group_positions(pools.owner[order], nq) < params.link_from]
        parents = pools.rows[best]
        starts, ends = self._link_ptr[parents], self._link_ptr[parents + 1]
        counts = ends - starts
        if counts.sum() == 0:
            return pools
        offsets = np.cumsum(counts) - counts
        idx = np.arange(int(counts.sum())) - np.repeat(offsets - starts, counts)
        linked = np.asarray(self._link_idx[idx], dtype=np.int64)
        owner = np.repeat(pools.owner[best], counts)
        parent_of = np.repeat(parents, counts)
        inherited = params.w_link * np.repeat(pools.score[best], counts)
        keep = (linked >= lo) & (linked < hi)
        linked_keys, parent_of, inherited = owner[keep] * n + linked[keep], parent_of[keep], inherited[keep]
        keys = pools.owner * n + pools.rows
        new = np.setdiff1d(linked_keys, keys)
        if len(new):   # none of them is a BM25 pick: fused over the query's best score of any row
            new_owner, new_rows = np.divmod(new, n)
            extra = self._fused(new_owner, new_rows, scores[new_owner, new_rows], np.zeros(len(new), np.int64),
                                best_any, qvecs, exact_keys, params)
            merged = np.concatenate([keys, new])
            at = np.argsort(merged, kind="stable")
            pools, keys = pools.joined(extra, at), merged[at]
        # one inherited score per linked row: its best parent's, raised a little per further parent
        targets, inverse = np.unique(linked_keys, return_inverse=True)
        best_parent = np.zeros(len(targets))
        np.maximum.at(best_parent, inverse, inherited)
        winner = np.full(len(targets), -1, dtype=np.int64)
        winner[inverse[inherited == best_parent[inverse]]] = parent_of[inherited == best_parent[inverse]]
        at = np.searchsorted(keys, targets)
        gain = best_parent + params.w_link_own * pools.score[at]
        # a bridge only vouches for a row that has evidence of its own (a BM25 match or a close vector)
        own = (pools.sparse[at] >= params.link_min_sparse * top[targets // n]) & (pools.sparse[at] > 0)
        own |= pools.dense[at] >= params.link_min_dense
        raise_ = own & (gain > pools.score[at])
        pools.score[at[raise_]] = gain[raise_]
        pools.via[at[raise_]] = winner[raise_]
        return pools

    def _selected(self, pools: _Pools, params: RetrievalParams, nq: int) -> _Pools:
        """Each query's best `k_final` by fused score (ties: lower row first), with each table's best
        `min_per_table` guaranteed; in score order."""
        order = np.lexsort((pools.rows, -pools.score, pools.owner))
        owner = pools.owner[order]
        groups = owner * len(self._table_names) + self._table_of[pools.rows[order]]
        by_table = np.argsort(groups, kind="stable")
        table_rank = np.empty(len(order), dtype=np.int64)
        table_rank[by_table] = _group_positions(groups[by_table], nq * len(self._table_names)) + 1
        guaranteed = table_rank <= params.min_per_table
        room = params.k_final - np.bincount(owner, weights=guaranteed, minlength=nq).astype(np.int64)
        keep = (guaranteed & (_running(guaranteed, owner, nq) <= params.k_final)) | (
            ~guaranteed & (_running(~guaranteed, owner, nq) <= room[owner]))
        chosen = pools.take(order[keep])
        chosen.table_rank = table_rank[keep]
        return chosen

    # -- public API -----------------------------------------------------------------------
    def search(self, queries: Sequence[Query], params: RetrievalParams | None = None,
               table: str | None = None) -> list[list[Candidate]]:
        """Candidates for every query, best first; `table` restricts the search to one table. A query
        asked again in the same call (scenes repeat their node blocks) is searched once."""
        params = params or RetrievalParams()
        if table is not None and table not in self.tables:
            raise ValueError(f"unknown or empty table {table!r}: the index has {', '.join(self.tables)}")
        slot: dict[tuple, int] = {}
        distinct: list[Query] = []
        for q in queries:
            key = (tuple(q.sparse_terms), q.dense_text)
            if key not in slot:
                slot[key] = len(distinct)
                distinct.append(q)
        if not distinct:
            return []
        blocks = self._pools(distinct, params, table)
        chosen = _Pools(*(np.concatenate([getattr(b, f.name) for b in blocks]) for f in fields(_Pools)))
        sizes = np.concatenate([np.bincount(b.owner, minlength=min(_BLOCK, len(distinct) - i * _BLOCK))
                                for i, b in enumerate(blocks)]).tolist()
        found = self._candidates(chosen, sizes)
        return [list(found[slot[(tuple(q.sparse_terms), q.dense_text)]]) for q in queries]

    def _candidates(self, chosen: _Pools, sizes: list[int]) -> list[list[Candidate]]:
        """The selected pools as candidates with their rows' ids, titles and texts: `sizes[j]` for query j."""
        columns = self._take(chosen.rows, ("table", "id", "title", "text"))
        vias = chosen.via
        via_ids = self._take(np.maximum(vias, 0), ("id",))["id"]
        # every pool's values as Python numbers at once (numpy scalars one by one cost more than the rows)
        sparse, dense, score = ([round(x, 4) for x in getattr(chosen, name).tolist()]
                                for name in ("sparse", "dense", "score"))
        sparse_rank, table_rank, has_via = chosen.sparse_rank.tolist(), chosen.table_rank.tolist(), (vias >= 0).tolist()
        out: list[list[Candidate]] = []
        at = 0
        for size in sizes:
            out.append([Candidate(
                rank=i - at + 1, table=columns["table"][i], id=columns["id"][i], title=columns["title"][i],
                text=columns["text"][i], sparse_score=sparse[i], sparse_rank=sparse_rank[i] or None,
                dense_score=dense[i], score=score[i], table_rank=table_rank[i],
                via=via_ids[i] if has_via[i] else None,
            ) for i in range(at, at + size)])
            at += size
        return out

    def _take(self, positions: np.ndarray, names: tuple[str, ...]) -> dict[str, list]:
        """Columns of the row metadata at `positions` (one gather from the memory-mapped file)."""
        picked = self._rows.select(list(names)).take(pa.array(positions, type=pa.int64()))
        return {n: picked.column(n).to_pylist() for n in names}

    def search_text(self, query: str, table: str | None = None, k: int = 10,
                    params: RetrievalParams | None = None) -> list[Candidate]:
        """One free-text search (the `gd-assets search` debug command): the text is both sides."""
        params = params or RetrievalParams()
        params = RetrievalParams(**{**asdict(params), "k_final": k,
                                    "min_per_table": min(params.min_per_table, k)})
        return self.search([Query(sparse_terms=[query], dense_text=query)], params, table=table)[0]
