"""Per-fragment evidence: cues from the body, then one batched hybrid search over the three tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from gd_assets.core.cues import Cue, dense_text, extract_cues, sparse_terms
from gd_assets.core.retrieval import Candidate, CorpusIndex, Query, RetrievalParams


@dataclass
class Evidence:
    key: str
    cues: list[Cue]
    dense_text: str
    candidates: list[Candidate]


def fragment_queries(fragments: Sequence[dict], request: str) -> list[tuple[list[Cue], Query]]:
    """Cues and the retriever query of each fragment; only the body goes in, never the path. A
    fragment's `scope` (its place in the project, receivers.py), when given, resolves receivers."""
    out = []
    for frag in fragments:
        cues = extract_cues(frag["kind"], frag["text"], request, file_kind=frag.get("file_kind"),
                            scope=frag.get("scope"))
        out.append((cues, Query(sparse_terms=sparse_terms(cues), dense_text=dense_text(frag["text"], cues))))
    return out


def gather_evidence(fragments: Sequence[dict], index: CorpusIndex, params: RetrievalParams,
                    request: str) -> list[Evidence]:
    """Evidence for a batch of fragments (one embedding call, one sparse product per block)."""
    queries = fragment_queries(fragments, request)
    results = index.search([q for _, q in queries], params)
    return [Evidence(frag["key"], cues, query.dense_text, cands)
            for frag, (cues, query), cands in zip(fragments, queries, results)]
