"""`fragment_judgement`: a judge decides, per fragment, Godot 3 / Godot 4 / neutral and migration.

Reads only the stored evidence (fragment body, cues, candidates): no earlier judgement is ever
fed back. Batched like the evidence, each completion recorded as soon as its batch is committed.
"""

import datetime as dt
import hashlib
import json
from typing import Iterator

import dagster as dg

from gd_assets import store
from gd_assets.assets.evidence import (
    evidence_data_version,
    fragment_evidence,
    latest_inputs,
    lineage_tags,
    short_place,
    tracking,
)
from gd_assets.assets.metadata import md_table
from gd_assets.core.cues import Cue
from gd_assets.core.judges import JudgeInput, Judgement
from gd_assets.core.judges.evidence import RULES_VERSION
from gd_assets.core.judges.prompt import PROMPT_VERSION
from gd_assets.core.retrieval import Candidate
from gd_assets.core.slicing import function_name
from gd_assets.partitions import fragments_partitions
from gd_assets.resources import AnalysisStore, JudgeBackend

BATCH = 64
CODE_VERSION = f"judgement-1|{RULES_VERSION}|{PROMPT_VERSION}"


class JudgementConfig(dg.Config):
    batch_size: int = BATCH


def judge_inputs(ev_rows: list[dict], cand_rows: list[dict]) -> list[JudgeInput]:
    by_key: dict[str, list[Candidate]] = {}
    for c in cand_rows:
        by_key.setdefault(c["key"], []).append(Candidate(
            rank=c["rank"], table=c["corpus_table"], id=c["row_id"], title=c["title"], text=c["text"],
            sparse_score=c["sparse_score"], sparse_rank=c["sparse_rank"], dense_score=c["dense_score"],
            score=c["score"], table_rank=c["table_rank"]))
    items = []
    for e in ev_rows:
        cues = [Cue(c["cue"], c["from"]) for c in json.loads(e["cues"])]
        items.append(JudgeInput(
            key=e["key"], path=e["path"], start_line=e["start_line"], end_line=e["end_line"], kind=e["kind"],
            file_kind=e["file_kind"], text=e["text"], cues=cues, candidates=by_key.get(e["key"], []),
            request=e["request"], file_functions=sorted({function_name(s) for s in e["file_functions"] or []})))
    return items


def judge_version(backend: str) -> str:
    """The rules (evidence judge) or prompt template (model judges) a judgement was made with."""
    return RULES_VERSION if backend == "evidence" else PROMPT_VERSION


def judgement_row(item: JudgeInput, ev: dict, j: Judgement, judge) -> dict:
    legend = item.legend()
    return {
        "key": item.key, "project": ev["project"], "path": item.path, "start_line": item.start_line,
        "end_line": item.end_line, "content_hash": ev["fragment_hash"], "signal": j.signal,
        "migration_needed": j.migration_needed, "confidence": j.confidence, "rationale": j.rationale,
        "related": json.dumps(j.related), "legend": json.dumps(legend, ensure_ascii=False),
        "evidence": json.dumps([{"n": n, **legend[n]} for n in j.evidence], ensure_ascii=False),
        "judge": judge.name, "model": judge.model,
        "prompt_version": judge_version(judge.name),
        "corpus_version": ev["corpus_version"], "index_version": ev["index_version"],
        "retrieval_version": ev["retrieval_version"],
        "judged_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
    }


def judgement_metadata(item: JudgeInput, ev: dict, j: Judgement, judge) -> dict:
    legend = item.legend()
    return {
        "tracking (not searched)": dg.MetadataValue.text(tracking({**ev, "path": item.path})),
        "fragment": dg.MetadataValue.md(f"```gdscript\n{item.text[:4000]}\n```"),
        "cues (retriever input)": dg.MetadataValue.md("\n".join(f"- `{c.cue}` ({c.source})" for c in item.cues)),
        "candidates": dg.MetadataValue.md(md_table(
            ["n", "table", "title", "related", "evidence"],
            [(n, v["table"], v["title"], "yes" if n in j.related else "", "yes" if n in j.evidence else "")
             for n, v in legend.items()])),
        "signal": j.signal,
        "migration_needed": j.migration_needed,
        "confidence": j.confidence,
        "rationale": dg.MetadataValue.text(j.rationale),
        "judge": f"{judge.name} / {judge.model}",
        "content_hash": ev["fragment_hash"],
    }


@dg.asset(
    partitions_def=fragments_partitions,
    deps=[fragment_evidence],
    # Not single_run like the evidence: a backfill then never puts both in one run, where the
    # evidence's per-partition events (no output) would make Dagster skip the judgement step.
    backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=100_000),
    output_required=False,
    group_name="projects",
    code_version=CODE_VERSION,
    kinds={"duckdb"},
    description="Per fragment: Godot 3 / Godot 4 / neutral, migration needed, confidence, rationale, evidence.",
)
def fragment_judgement(context: dg.AssetExecutionContext, config: JudgementConfig, analysis_store: AnalysisStore,
                       judge_backend: JudgeBackend) -> Iterator[dg.AssetMaterialization]:
    keys = list(context.partition_keys)
    db = analysis_store.db()
    judge = judge_backend.build()
    done = 0
    for start in range(0, len(keys), config.batch_size):
        batch = keys[start:start + config.batch_size]
        ev_frame, cand_frame = store.evidence_by_key(batch, db)
        evs = {e["key"]: e for e in ev_frame.to_dicts()}
        missing = [k for k in batch if k not in evs]
        if missing:
            raise dg.Failure(f"{len(missing)} fragments have no evidence yet (e.g. {missing[0]}): "
                             "materialise fragment_evidence for them first")
        ordered = [evs[k] for k in batch]
        context.log.info("judging " + ", ".join(short_place(e) for e in ordered)
                         + f"; {len(keys) - done - len(batch)} remain after these")
        items = judge_inputs(ordered, cand_frame.to_dicts())
        results = judge.judge(items)
        store.upsert("judgements", store.frame("judgements", [
            judgement_row(item, evs[item.key], j, judge) for item, j in zip(items, results)]), path=db)
        pointers = latest_inputs(context.instance, "fragment_evidence", batch)
        for item, j in zip(items, results):
            ev = evs[item.key]
            ev_version = evidence_data_version(ev["content_hash"], ev["cues"], [c.id for c in item.candidates],
                                               ev["index_version"])
            pointer = pointers.get(item.key, (ev_version, None))[1]
            version = hashlib.sha256(f"{ev_version}|{judge.name}|{judge.model}|{j}".encode()).hexdigest()[:16]
            yield dg.AssetMaterialization(
                asset_key=context.asset_key, partition=item.key, metadata=judgement_metadata(item, ev, j, judge),
                tags=lineage_tags(CODE_VERSION, version, {"fragment_evidence": (ev_version, pointer)}))
        done += len(batch)
