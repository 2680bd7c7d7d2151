"""`fragment_evidence`: cues and hybrid-retrieval candidates for each fragment partition.

Many partitions run in one process (one model load, batched embeddings); each fragment's
materialisation is recorded the moment its batch is committed, so a crash loses no finished one.
"""

import datetime as dt
import hashlib
import json
from typing import Iterator

import dagster as dg

from gd_assets import store
from gd_assets.assets.metadata import line_range, md_table
from gd_assets.core.cues import DEFAULT_REQUEST
from gd_assets.core.embedding import QUERY_MAX_TOKENS
from gd_assets.core.evidence import Evidence, gather_evidence
from gd_assets.core.retrieval import RetrievalParams
from gd_assets.partitions import fragments_partitions
from gd_assets.resources import AnalysisStore, RetrievalIndex

PARAMS = RetrievalParams()
BATCH = 64
# What shapes the candidates: fusion parameters and the query token budget of the embedder.
RETRIEVAL_VERSION = f"{PARAMS.version()}|q{QUERY_MAX_TOKENS}"
CODE_VERSION = f"evidence-1|{RETRIEVAL_VERSION}"


class EvidenceConfig(dg.Config):
    request: str = DEFAULT_REQUEST
    batch_size: int = BATCH


def tracking(frag: dict) -> str:
    """Where a fragment is, for people: `player.gd 12-26 (dump E020-E034)`."""
    where = f"{frag['path']} {line_range(frag['start_line'], frag['end_line'])}"
    if frag.get("dump_start_line") is not None:
        where += f" (dump {line_range(frag['dump_start_line'], frag['dump_end_line'], 'E')})"
    return where


def short_place(frag: dict) -> str:
    """`player.gd E020-E034` for dumps, `player.gd 12-26` otherwise (the seed's status notation)."""
    if frag.get("dump_start_line") is not None:
        return f"{frag['path']} {line_range(frag['dump_start_line'], frag['dump_end_line'], 'E')}"
    return f"{frag['path']} {line_range(frag['start_line'], frag['end_line'])}"


def evidence_rows(frag: dict, ev: Evidence, corpus_version: str, index_version: str,
                  request: str) -> tuple[dict, list[dict]]:
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    row = {
        "key": frag["key"], "project": frag["project"], "path": frag["path"], "start_line": frag["start_line"],
        "end_line": frag["end_line"], "content_hash": frag["content_hash"],
        "cues": json.dumps([{"cue": c.cue, "from": c.source} for c in ev.cues], ensure_ascii=False),
        "dense_text": ev.dense_text, "request": request, "corpus_version": corpus_version, "index_version": index_version,
        "retrieval_version": RETRIEVAL_VERSION, "computed_at": now,
    }
    cands = [{
        "id": f"{frag['key']}#{c.rank}", "key": frag["key"], "project": frag["project"], "rank": c.rank,
        "corpus_table": c.table, "row_id": c.id, "title": c.title, "text": c.text, "sparse_score": c.sparse_score,
        "sparse_rank": c.sparse_rank, "dense_score": c.dense_score, "score": c.score, "table_rank": c.table_rank,
    } for c in ev.candidates]
    return row, cands


def evidence_data_version(content_hash: str, cues: str, candidate_ids: list[str], index_version: str) -> str:
    """A stable version of one fragment's evidence: what the judgement records as its input."""
    blob = json.dumps([content_hash, cues, candidate_ids, index_version])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def lineage_tags(code_version: str, data_version: str, inputs: dict[str, tuple[str, int | None]]) -> dict[str, str]:
    """Tags that let Dagster tell a partition stale: its code version, and each input's data version
    with the storage id of the input's materialisation it was made from."""
    tags = {"dagster/code_version": code_version, "dagster/data_version": data_version}
    for name, (version, storage_id) in inputs.items():
        tags[f"dagster/input_data_version/{name}"] = version
        tags[f"dagster/input_event_pointer/{name}"] = "NULL" if storage_id is None else str(storage_id)
    return tags


def latest_inputs(instance: dg.DagsterInstance, asset: str, partitions: list[str] | None = None
                  ) -> dict[str | None, tuple[str, int | None]]:
    """(data version, storage id) of the latest materialisation of `asset`, per partition."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=partitions),
        limit=max(1, len(partitions or ())) * 4).records
    out: dict[str | None, tuple[str, int | None]] = {}
    for record in records:  # newest first
        if record.partition_key not in out:
            tags = record.asset_materialization.tags or {}
            out[record.partition_key] = (tags.get("dagster/data_version", ""), record.storage_id)
    return out


def debug_metadata(frag: dict, ev: Evidence) -> dict:
    """The debug view: tracking (not searched) apart from what went into the retriever."""
    return {
        "tracking (not searched)": dg.MetadataValue.text(tracking(frag)),
        "fragment": dg.MetadataValue.md(f"```gdscript\n{frag['text'][:4000]}\n```"),
        "cues (retriever input)": dg.MetadataValue.md(
            "\n".join(f"- `{c.cue}` ({c.source}{', judge only: not searched' if c.source == 'name' else ''})"
                      for c in ev.cues) or "(none)"),
        "candidates": dg.MetadataValue.md(md_table(
            ["rank", "table", "title", "sparse rank", "dense", "score"],
            [(c.rank, c.table, c.title, c.sparse_rank or "", f"{c.dense_score:.3f}", f"{c.score:.3f}")
             for c in ev.candidates])),
        "candidate_count": len(ev.candidates),
        "content_hash": frag["content_hash"],
    }


@dg.asset(
    partitions_def=fragments_partitions,
    deps=[dg.AssetDep("fragments", partition_mapping=dg.AllPartitionMapping()), dg.AssetKey("corpus_index")],
    backfill_policy=dg.BackfillPolicy.single_run(),
    output_required=False,
    group_name="projects",
    code_version=CODE_VERSION,
    kinds={"duckdb"},
    description="Cues of each fragment's body and the candidates hybrid retrieval found in the three tables.",
)
def fragment_evidence(context: dg.AssetExecutionContext, config: EvidenceConfig, analysis_store: AnalysisStore,
                      retrieval_index: RetrievalIndex) -> Iterator[dg.AssetMaterialization]:
    keys = list(context.partition_keys)
    db = analysis_store.db()
    index = retrieval_index.load()
    corpus_version = retrieval_index.corpus_version()
    index_input = latest_inputs(context.instance, "corpus_index").get(None, (index.version, None))
    index_input = (index.version, index_input[1])
    done = 0
    for start in range(0, len(keys), config.batch_size):
        batch = keys[start:start + config.batch_size]
        frags = store.fragments_by_key(batch, db).to_dicts()
        missing = set(batch) - {f["key"] for f in frags}
        if missing:
            raise dg.Failure(f"{len(missing)} fragment partitions have no fragment row (e.g. {sorted(missing)[0]}): "
                             "re-run `fragments` for their project")
        context.log.info("on " + ", ".join(short_place(f) for f in frags) + f"; {len(keys) - done - len(frags)} remain after these")
        found = gather_evidence(frags, index, PARAMS, config.request)
        rows, cands = [], []
        for frag, ev in zip(frags, found):
            row, cand_rows = evidence_rows(frag, ev, corpus_version, index.version, config.request)
            rows.append(row)
            cands.extend(cand_rows)
        store.upsert_many([("evidence", store.frame("evidence", rows)),
                           ("candidates", store.frame("candidates", cands))], path=db, replace_keys=batch)
        by_key: dict[str, list[str]] = {}
        for cand in cands:
            by_key.setdefault(cand["key"], []).append(cand["row_id"])
        projects = latest_inputs(context.instance, "fragments", sorted({f["project"] for f in frags}))
        for frag, ev, row in zip(frags, found, rows):
            version = evidence_data_version(frag["content_hash"], row["cues"], by_key.get(frag["key"], []),
                                            index.version)
            inputs = {"corpus_index": index_input, "fragments": projects.get(frag["project"], ("", None))}
            yield dg.AssetMaterialization(
                asset_key=context.asset_key, partition=frag["key"], metadata=debug_metadata(frag, ev),
                tags=lineage_tags(CODE_VERSION, version, inputs))
        done += len(frags)
