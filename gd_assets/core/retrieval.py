"""Hybrid retrieval over the three corpus tables: BM25 narrows, dense similarity re-ranks.

For each query, BM25 over the cue terms gives the best `k_sparse` rows of the whole corpus plus
the best `k_sparse_per_table` of each table; the dense neighbours of the query text are added;
the union is scored by dense cosine fused with the BM25 evidence, and the best `k_final` are kept,
with at least `min_per_table` rows of every table that has a candidate, so the ~100 prototypes
are never drowned by ~40k doc rows. Everything is batched: one model call for all query texts,
one sparse product per block of queries, one usearch call.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa

from gd_assets.core import embedding, tokens

NAME_PREFIX = "n:"  # name-field tokens in the index (see corpora_build.index.NAME_FIELDS)

_BLOCK = 64  # queries per sparse-score block (block x rows float64 scores in memory)


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
    w_names: float = 1.0  # weight of a query token matched in a row's name field (vs 1.0 in its text)
    rrf_k: int = 10

    def version(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True)
        return "retrieval-1-" + hashlib.sha256(blob.encode()).hexdigest()[:10]


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

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Pool:
    """One query's candidate rows before hydration (row positions and scores, numpy)."""

    rows: np.ndarray
    sparse: np.ndarray
    sparse_rank: np.ndarray  # 0 = not a BM25 candidate
    dense: np.ndarray
    score: np.ndarray
    table_rank: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


class CorpusIndex:
    """A published index, memory-mapped: BM25 postings, f16 vectors, usearch graph, row metadata."""

    def __init__(self, build_dir: Path, manifest: dict, bm25, dense, vectors: np.ndarray, rows: pa.Table):
        self.build_dir = build_dir
        self.manifest = manifest
        self.version: str = manifest["index_version"]
        self.vocab: dict[str, int] = bm25.vocab_dict
        self._data = bm25.scores["data"]
        self._indices = bm25.scores["indices"]
        self._indptr = bm25.scores["indptr"]
        self.size = int(bm25.scores["num_docs"])
        self._dense = dense
        self._vectors = vectors
        self._rows = rows
        self.tables: dict[str, tuple[int, int]] = {
            t: (int(a), int(b)) for t, (a, b) in manifest["tables"].items() if b > a
        }
        self._table_of = np.zeros(self.size, dtype=np.int8)
        self._table_names = list(self.tables)
        for i, (a, b) in enumerate(self.tables.values()):
            self._table_of[a:b] = i

    @classmethod
    def load(cls, index_dir: Path | str) -> "CorpusIndex":
        """Open the published build under `index_dir` without reading it into memory."""
        import bm25s
        from usearch.index import Index

        from corpora_build import index as layout

        index_dir = Path(index_dir)
        build = layout.current_build(index_dir)
        if build is None:
            raise FileNotFoundError(f"{index_dir} holds no built index: run the corpus index build first")
        manifest = json.loads((build / layout.MANIFEST).read_text())
        if manifest.get("embed_signature", "").split("|")[0] != embedding.MODEL_NAME:
            raise ValueError(f"{build} was embedded with another model: rebuild the index")
        bm25 = bm25s.BM25.load(str(build / layout.BM25_DIR), mmap=True, show_progress=False)
        dense = Index.restore(str(build / layout.DENSE_FILE), view=True)
        vectors = np.load(build / layout.VECTORS_FILE, mmap_mode="r")
        rows = pa.ipc.open_file(pa.memory_map(str(build / layout.ROWS_FILE), "r")).read_all()
        return cls(build, manifest, bm25, dense, vectors, rows)

    # -- candidate generation -------------------------------------------------------------
    def _query_terms(self, terms: Sequence[str], params: RetrievalParams) -> tuple[np.ndarray, np.ndarray]:
        """Vocabulary ids of a query's tokens (each once) and their weights: text field and name field."""
        weights: dict[int, float] = {}
        for t in set(tokens.tokenize_terms(terms)):
            if t in self.vocab:
                weights[self.vocab[t]] = 1.0
            name = NAME_PREFIX + t
            if name in self.vocab and params.w_names > 0:
                weights[self.vocab[name]] = params.w_names
        ids = np.fromiter(weights.keys(), dtype=np.int64, count=len(weights))
        return ids, np.fromiter(weights.values(), dtype=np.float64, count=len(weights))

    def _sparse_block(self, terms: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """BM25 scores of every row for a block of queries (queries x rows), in one bincount."""
        n, nq = self.size, len(terms)
        ids = np.concatenate([t[0] for t in terms]) if terms else np.zeros(0, np.int64)
        qweight = np.concatenate([t[1] for t in terms]) if terms else np.zeros(0)
        owner = np.repeat(np.arange(nq), [len(t[0]) for t in terms])
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
        """Row positions of the best `k` positive scores within [lo, hi), per query (-1 = none)."""
        part = scores[:, lo:hi]
        k = min(k, hi - lo)
        if k <= 0:
            return np.full((scores.shape[0], 0), -1, dtype=np.int64)
        idx = np.argpartition(part, -k, axis=1)[:, -k:] if k < hi - lo else np.tile(np.arange(hi - lo), (len(part), 1))
        top = np.where(np.take_along_axis(part, idx, axis=1) > 0, idx + lo, -1)
        return top

    def _pools(self, queries: Sequence[Query], params: RetrievalParams, table: str | None) -> list[_Pool]:
        ranges = [self.tables[table]] if table else list(self.tables.values())
        lo_all, hi_all = (ranges[0] if table else (0, self.size))
        qvecs = embedding.embed_queries([q.dense_text for q in queries])
        k_dense = min(params.k_dense * (4 if table else 1), self.size)
        matches = self._dense.search(qvecs, k_dense)
        dense_keys = np.atleast_2d(matches.keys).astype(np.int64)
        # usearch answers a single query with `Matches` (no counts), several with `BatchMatches`
        dense_counts = np.atleast_1d(getattr(matches, "counts", dense_keys.shape[1]))
        pools: list[_Pool] = []
        for b0 in range(0, len(queries), _BLOCK):
            block = queries[b0 : b0 + _BLOCK]
            scores = self._sparse_block([self._query_terms(q.sparse_terms, params) for q in block])
            picks = [self._top(scores, params.k_sparse, lo_all, hi_all)]
            picks += [self._top(scores, params.k_sparse_per_table, lo, hi) for lo, hi in ranges]
            sparse_pick = np.concatenate(picks, axis=1)
            for j in range(len(block)):
                qi = b0 + j
                s_rows = np.unique(sparse_pick[j][sparse_pick[j] >= 0])
                d_rows = dense_keys[qi, : dense_counts[qi]]
                if table:
                    d_rows = d_rows[(d_rows >= lo_all) & (d_rows < hi_all)]
                rows = np.union1d(s_rows, d_rows)
                pools.append(self._fuse(rows, s_rows, scores[j], qvecs[qi], params))
        return pools

    def _fuse(self, rows: np.ndarray, s_rows: np.ndarray, scores: np.ndarray, qvec: np.ndarray,
              params: RetrievalParams) -> _Pool:
        sparse = scores[rows].astype(np.float64)
        dense = np.asarray(self._vectors[rows], dtype=np.float32) @ qvec
        sparse_rank = np.zeros(len(rows), dtype=np.int64)
        if len(s_rows):
            order = s_rows[np.argsort(-scores[s_rows], kind="stable")]
            sparse_rank[np.searchsorted(rows, order)] = np.arange(1, len(order) + 1)
        best = float(sparse.max()) if len(sparse) and sparse.max() > 0 else 1.0
        rank_term = np.where(sparse_rank > 0, params.rrf_k / (params.rrf_k + np.maximum(sparse_rank, 1) - 1), 0.0)
        score = params.w_dense * dense + params.w_sparse * (sparse / best) + params.w_rank * rank_term
        return _Pool(rows, sparse, sparse_rank, dense.astype(np.float64), score)

    def _select(self, pool: _Pool, params: RetrievalParams) -> _Pool:
        """Best `k_final` by fused score, with each table's best `min_per_table` guaranteed."""
        order = np.argsort(-pool.score, kind="stable")
        tables = self._table_of[pool.rows[order]]
        table_rank = np.zeros(len(order), dtype=np.int64)
        for t in np.unique(tables):
            mask = tables == t
            table_rank[mask] = np.arange(1, int(mask.sum()) + 1)
        guaranteed = np.flatnonzero(table_rank <= params.min_per_table)
        if len(guaranteed) >= params.k_final:
            keep = guaranteed[: params.k_final]
        else:
            rest = np.flatnonzero(table_rank > params.min_per_table)[: params.k_final - len(guaranteed)]
            keep = np.sort(np.concatenate([guaranteed, rest]))
        chosen = order[keep]
        return _Pool(pool.rows[chosen], pool.sparse[chosen], pool.sparse_rank[chosen], pool.dense[chosen],
                     pool.score[chosen], table_rank[keep])

    # -- public API -----------------------------------------------------------------------
    def search(self, queries: Sequence[Query], params: RetrievalParams | None = None,
               table: str | None = None) -> list[list[Candidate]]:
        """Candidates for every query, best first; `table` restricts the search to one table."""
        params = params or RetrievalParams()
        if not queries:
            return []
        if table is not None and table not in self.tables:
            raise ValueError(f"unknown or empty table {table!r}: the index has {', '.join(self.tables)}")
        chosen = [self._select(p, params) for p in self._pools(queries, params, table)]
        all_rows = np.concatenate([c.rows for c in chosen]) if chosen else np.zeros(0, np.int64)
        meta = self._rows.select(["table", "id", "title", "text"]).take(pa.array(all_rows, type=pa.int64()))
        columns = {c: meta.column(c).to_pylist() for c in ("table", "id", "title", "text")}
        out: list[list[Candidate]] = []
        at = 0
        for c in chosen:
            cands = []
            for r in range(len(c.rows)):
                i = at + r
                cands.append(Candidate(
                    rank=r + 1, table=columns["table"][i], id=columns["id"][i], title=columns["title"][i],
                    text=columns["text"][i], sparse_score=round(float(c.sparse[r]), 4),
                    sparse_rank=int(c.sparse_rank[r]) or None, dense_score=round(float(c.dense[r]), 4),
                    score=round(float(c.score[r]), 4), table_rank=int(c.table_rank[r]),
                ))
            at += len(c.rows)
            out.append(cands)
        return out

    def search_text(self, query: str, table: str | None = None, k: int = 10,
                    params: RetrievalParams | None = None) -> list[Candidate]:
        """One free-text search (the `gd-assets search` debug command): the text is both sides."""
        params = params or RetrievalParams()
        params = RetrievalParams(**{**asdict(params), "k_final": k,
                                    "min_per_table": min(params.min_per_table, k)})
        return self.search([Query(sparse_terms=[query], dense_text=query)], params, table=table)[0]
