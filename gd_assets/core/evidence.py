"""Per-fragment evidence: cues from the body, then one batched hybrid search over the three tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

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
        try:
            cues = extract_cues(frag["kind"], frag["text"], request, file_kind=frag.get("file_kind"),
                                scope=frag.get("scope"))
        except RecursionError:  # past what the cue reader follows: this fragment alone says so
            cues = [Cue("nested too deep to read its cues", "analysis_limit")]
        out.append((cues, Query(sparse_terms=sparse_terms(cues), dense_text=dense_text(frag["text"], cues))))
    return out


def gather_evidence(fragments: Sequence[dict], index: CorpusIndex, params: RetrievalParams,
                    request: str, known: Mapping[str, tuple[Query, list[Candidate]]] | None = None
                    ) -> list[Evidence]:
    """Evidence for a batch of fragments (one embedding call, one sparse product per block).

    `known`: a fragment's last query and candidates, made with today's index and parameters; when
    its query is the same again (only receivers changed: the project around it moved), the
    candidates are kept and the fragment is not searched."""
    queries = fragment_queries(fragments, request)
    known = known or {}
    todo = [i for i, (frag, (_, query)) in enumerate(zip(fragments, queries))
            if frag["key"] not in known or known[frag["key"]][0] != query]
    found = dict(zip(todo, index.search([queries[i][1] for i in todo], params))) if todo else {}
    return [Evidence(frag["key"], cues, query.dense_text, found[i] if i in found else known[frag["key"]][1])
            for i, (frag, (cues, query)) in enumerate(zip(fragments, queries))]
