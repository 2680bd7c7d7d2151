"""`fragment_judgement`: a judge decides, per fragment, Godot 3 / Godot 4 / neutral and migration.

Reads only the stored evidence (fragment body, cues, candidates): no earlier judgement is ever
fed back. Batched like the evidence, each completion recorded as soon as its batch is committed.
"""

import datetime as dt
import json
from typing import Iterator

import dagster as dg
import polars as pl

from gd_assets import store
from gd_assets.assets.evidence import fragment_evidence
from gd_assets.assets.metadata import md_table
from gd_assets.core.codec import candidates_by_key, cues_from_json, judge_input
from gd_assets.core.judges import JudgeIdentity, JudgeInput, Judgement
from gd_assets.core.judges.evidence import RULES_VERSION
from gd_assets.core.judges.prompt import PROMPT_VERSION
from gd_assets.core.places import place
from gd_assets.core.slicing import function_name
from gd_assets.freshness import judge_inputs, judgement_version, latest_inputs, lineage_tags
from gd_assets.partitions import fragment_batches, fragments_partitions, report_batch
from gd_assets.resources import JudgeBackend
from gd_assets.status import claim_run

BATCH = 512  # the largest batch (`fragment_batches`)
CODE_VERSION = f"judgement-1|{RULES_VERSION}|{PROMPT_VERSION}"


class JudgementConfig(dg.Config):
    batch_size: int = BATCH


def inputs_of(ev_rows: list[dict], cand_rows: pl.DataFrame) -> list[JudgeInput]:
    """What the judge reads of each fragment, from its evidence row (joined with the fragment) and candidates."""
    cands = candidates_by_key(cand_rows)
    return [judge_input(e, cues_from_json(e["cues"]), cands.get(e["key"], []), e["request"],
                        sorted({function_name(s) for s in e["file_functions"] or []}))
            for e in ev_rows]


def judgement_row(item: JudgeInput, ev: dict, j: Judgement, judge: JudgeIdentity) -> dict:
    legend = item.legend()
    return {
        "key": item.key, "project": ev["project"], "path": item.path, "start_line": item.start_line,
        "end_line": item.end_line, "content_hash": ev["fragment_hash"], "signal": j.signal,
        "migration_needed": j.migration_needed, "confidence": j.confidence, "rationale": j.rationale,
        "related": json.dumps(j.related), "legend": json.dumps(legend, ensure_ascii=False),
        "evidence": json.dumps([{"n": n, **legend[n]} for n in j.evidence], ensure_ascii=False),
        **judge_inputs(judge),
        "corpus_version": ev["corpus_version"], "index_version": ev["index_version"],
        "retrieval_version": ev["retrieval_version"], "evidence_version": ev["data_version"],
        "judged_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
    }


def judgement_metadata(item: JudgeInput, ev: dict, j: Judgement, judge: JudgeIdentity) -> dict:
    legend = item.legend()
    return {
        "tracking (not searched)": dg.MetadataValue.text(place({**ev, "path": item.path})),
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
        "judge": f"{judge.judge} / {judge.model}",
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
def fragment_judgement(context: dg.AssetExecutionContext, config: JudgementConfig,
                       judge_backend: JudgeBackend) -> Iterator[dg.AssetMaterialization]:
    keys = claim_run(context)
    judge = judge_backend.build()
    who = judge_backend.identity()
    done = 0
    for batch in fragment_batches(keys, config.batch_size):
        ev_frame, cand_frame = store.evidence_by_key(batch)
        evs = {e["key"]: e for e in ev_frame.to_dicts()}
        missing = [k for k in batch if k not in evs]
        if missing:
            raise dg.Failure(f"{len(missing)} fragments have no evidence yet (e.g. {missing[0]}): "
                             "materialise fragment_evidence for them first")
        ordered = [evs[k] for k in batch]
        context.log.info("judging " + ", ".join(place(e, short=True) for e in ordered)
                         + f"; {len(keys) - done - len(batch)} remain after these")
        items = inputs_of(ordered, cand_frame)
        results = judge.judge(items)
        store.upsert("judgements", store.frame("judgements", [
            judgement_row(item, evs[item.key], j, who) for item, j in zip(items, results)]))
        pointers = latest_inputs(context.instance, "fragment_evidence", batch)
        made = []
        for item, j in zip(items, results):
            ev = evs[item.key]
            pointer = pointers.get(item.key, (ev["data_version"], None))[1]
            made.append(dg.AssetMaterialization(
                asset_key=context.asset_key, partition=item.key, metadata=judgement_metadata(item, ev, j, who),
                tags=lineage_tags(CODE_VERSION, judgement_version(ev["data_version"], who, j),
                                  {"fragment_evidence": (ev["data_version"], pointer)})))
        yield from report_batch(context, made)
        done += len(batch)
