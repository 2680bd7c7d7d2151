"""The one freshness rule: what each per-fragment asset is made from, and so what must be redone.

Evidence is made from the fragment's text, its project's context (`project_symbols`), the request,
the corpus, the index and the retrieval parameters; a judgement from the fragment's text, the evidence it read (its data version) and the
judge (name, model, rules or prompt version); a rewrite from the fragment's text, its judgement, its
project's context and the rewrite rules with the corpus they cite. A row whose recorded inputs differ from today's is
stale. The same definitions give Dagster its data versions and lineage tags, the command line its
list of fragments to redo, and `status` its stale count.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

import dagster as dg

from gd_assets import store
from gd_assets.core.cues import DEFAULT_REQUEST
from gd_assets.core.embedding import QUERY_MAX_TOKENS
from gd_assets.core.judges import JudgeIdentity
from gd_assets.core.judges.evidence import RULES_VERSION
from gd_assets.core.retrieval import RetrievalParams
from gd_assets.core.rewrite import REWRITE_VERSION
from gd_assets.resources import JudgeBackend, RetrievalIndex

PARAMS = RetrievalParams()
# What shapes the candidates: fusion parameters and the query token budget of the embedder.
RETRIEVAL_VERSION = f"{PARAMS.version()}|q{QUERY_MAX_TOKENS}"


@dataclass(frozen=True)
class EvidenceInputs:
    """Today's inputs of every evidence row besides the fragment text (columns of `evidence`).

    `corpus_version` and `index_version` are None when no corpus is built: then they are not compared.
    """

    request: str
    corpus_version: str | None
    index_version: str | None
    retrieval_version: str = RETRIEVAL_VERSION


def current_evidence_inputs(request: str | None = None) -> EvidenceInputs:
    """Today's evidence inputs: the request, and the corpus and index versions (None when not built).

    Read from the index manifest, not by opening the index: `status` and `show` ask for this too."""
    index = RetrievalIndex()
    index_version = index.index_version()
    corpus = index.corpus_version() if index_version else None
    return EvidenceInputs(request=request or DEFAULT_REQUEST, corpus_version=corpus, index_version=index_version)


def judge_backend(judge: str | None = None) -> JudgeBackend:
    """The judge resource a run would use: `judge`, else GD_ASSETS_JUDGE, else the evidence judge."""
    return JudgeBackend(name=judge or "")


def judge_inputs(judge: JudgeIdentity) -> dict[str, str]:
    """Today's inputs of every judgement row besides text and evidence (columns of `judgements`)."""
    return {"judge": judge.judge, "model": judge.model, "prompt_version": judge.version}


def _hash(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def evidence_version(content_hash: str, cues: str, candidate_ids: list[str], index_version: str) -> str:
    """The data version of one fragment's evidence: what a judgement records as its input."""
    return _hash(content_hash, cues, candidate_ids, index_version)


def judgement_version(evidence: str, judge: JudgeIdentity, answer: object) -> str:
    return _hash(evidence, judge.judge, judge.model, judge.version, str(answer))


def _differs(columns: dict[str, str | None], alias: str) -> tuple[str, list[object]]:
    """`t.a IS DISTINCT FROM ? OR ...` over the columns whose value is known, and the parameters."""
    known = {c: v for c, v in columns.items() if v is not None}
    return " OR ".join(f"{alias}.{c} IS DISTINCT FROM ?" for c in known) or "FALSE", list(known.values())


def stale_evidence(project: str, now: EvidenceInputs) -> list[str]:
    """Fragments of `project` whose evidence is missing or made from other inputs, in file order."""
    differs, params = _differs(asdict(now), "e")
    return store.query(
        "SELECT f.key FROM fragments f LEFT JOIN evidence e ON e.key = f.key "
        "LEFT JOIN project_contexts c ON c.project = f.project WHERE f.project = ? AND "
        f"(e.key IS NULL OR e.data_version IS NULL OR e.content_hash IS DISTINCT FROM f.content_hash "
        f"OR e.context_version IS DISTINCT FROM c.version OR {differs}) "
        "ORDER BY f.path, f.ordinal", [project, *params])["key"].to_list()


def stale_judgements(project: str, judge: JudgeIdentity) -> list[str]:
    """Fragments of `project` with evidence whose judgement is missing, made from other text, other
    evidence or by another judge, model or rule/prompt version, in file order."""
    differs, params = _differs(judge_inputs(judge), "j")
    return store.query(
        "SELECT f.key FROM fragments f JOIN evidence e ON e.key = f.key LEFT JOIN judgements j ON j.key = f.key "
        "WHERE f.project = ? AND (j.key IS NULL OR j.content_hash IS DISTINCT FROM f.content_hash "
        f"OR j.evidence_version IS DISTINCT FROM e.data_version OR {differs}) ORDER BY f.path, f.ordinal",
        [project, *params])["key"].to_list()


def rewrite_version(corpus_version: str | None) -> str:
    """What a rewrite is made from besides the fragment, its judgement and its context: the rules, the
    evidence judge's rules (it says what is left after the rewrite) and the corpus."""
    return f"{REWRITE_VERSION}|{RULES_VERSION}|{corpus_version or '-'}"


def rewrite_data_version(content_hash: str, edits: str, manual: str) -> str:
    return _hash(content_hash, edits, manual)


def stale_rewrites(project: str, version: str) -> list[str]:
    """Fragments of `project` judged to need migration whose rewrite is missing or made from other
    text, another judgement, another project context or other rules, in file order. A fragment that
    needs no migration has nothing to rewrite: it gets no rewrite (and no partition event)."""
    return store.query(
        "SELECT f.key FROM fragments f JOIN judgements j ON j.key = f.key AND j.content_hash = f.content_hash "
        "LEFT JOIN rewrites r ON r.key = f.key LEFT JOIN project_contexts c ON c.project = f.project "
        "WHERE f.project = ? AND j.migration_needed AND (r.key IS NULL OR r.content_hash IS DISTINCT FROM f.content_hash "
        "OR r.migration_needed IS DISTINCT FROM j.migration_needed OR r.context_version IS DISTINCT FROM c.version "
        "OR r.rewrite_version IS DISTINCT FROM ?) ORDER BY f.path, f.ordinal", [project, version])["key"].to_list()


def stale_judged(project: str, now: EvidenceInputs, judge: JudgeIdentity) -> list[str]:
    """Fragments that have a judgement which re-analysing would redo (its own inputs or its evidence's)."""
    judged = set(store.query("SELECT j.key FROM judgements j JOIN fragments f ON f.key = j.key WHERE f.project = ?",
                             [project])["key"].to_list())
    redo = set(stale_evidence(project, now)) | set(stale_judgements(project, judge))
    return sorted(judged & redo)


# --- Dagster lineage ----------------------------------------------------------------------------

DATA_VERSION_TAG = "dagster/data_version"


def lineage_tags(code_version: str, data_version: str, inputs: dict[str, tuple[str, int | None]]) -> dict[str, str]:
    """Tags that let Dagster tell a partition stale: its code version, and each input's data version
    with the storage id of the input's materialisation it was made from."""
    tags = {"dagster/code_version": code_version, DATA_VERSION_TAG: data_version}
    for name, (version, storage_id) in inputs.items():
        tags[f"dagster/input_data_version/{name}"] = version
        tags[f"dagster/input_event_pointer/{name}"] = "NULL" if storage_id is None else str(storage_id)
    return tags


def latest_inputs(instance: dg.DagsterInstance, asset: str, partitions: list[str] | None = None
                  ) -> dict[str | None, tuple[str, int | None]]:
    """(data version, storage id) of the latest materialisation of `asset`, per partition.

    For partitions, two index queries (latest event id, latest data version tag): the events
    themselves, metadata and all, are never read back and deserialised."""
    if partitions is None:
        records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset)), limit=1).records
        return {None: ((records[0].asset_materialization.tags or {}).get(DATA_VERSION_TAG, ""),
                       records[0].storage_id)} if records else {}
    if not partitions:
        return {}
    storage, key = instance.event_log_storage, dg.AssetKey(asset)
    ids = storage.get_latest_storage_id_by_partition(key, dg.DagsterEventType.ASSET_MATERIALIZATION, set(partitions))
    tags = storage.get_latest_tags_by_partition(key, dg.DagsterEventType.ASSET_MATERIALIZATION, [DATA_VERSION_TAG],
                                                list(partitions))
    return {p: (tags.get(p, {}).get(DATA_VERSION_TAG, ""), storage_id) for p, storage_id in ids.items()}
