"""`fragment_rewrite`: the Godot 4 text of each fragment judged to need migration, edit by edit.

Reads the fragment, its judgement and its project's context; writes the edits (each with its rule
and the corpus row it rests on) and the manual items, including what the evidence judge still finds
in the rewritten text (`core/rewrite/closure.py`). Only fragments judged to need migration are
materialised: the others have nothing to rewrite and are passed over (no row, no event: a partition
event costs far more than a rewrite), so a run may cover a whole stretch of a project.
"""

import datetime as dt
import json
from collections import Counter
from typing import Iterator

import dagster as dg

from gd_assets import store
from gd_assets.assets.judgement import fragment_judgement
from gd_assets.assets.metadata import md_table
from gd_assets.assets.project_symbols import load_context
from gd_assets.core.fragments import file_functions
from gd_assets.core.judges.evidence import EvidenceJudge
from gd_assets.core.places import place
from gd_assets.core.receivers import Scope
from gd_assets.core.rewrite import REWRITE_VERSION, FragmentRewrite, fragment_diff, rewrite_fragment
from gd_assets.core.rewrite.closure import residual
from gd_assets.core.rewrite.rules import load_rules
from gd_assets.freshness import latest_inputs, lineage_tags, rewrite_data_version, rewrite_version
from gd_assets.partitions import fragment_batches, fragments_partitions, report_batch
from gd_assets.resources import RetrievalIndex
from gd_assets.status import claim_run

BATCH = 512  # the largest batch (`fragment_batches`)
CODE_VERSION = REWRITE_VERSION


class RewriteConfig(dg.Config):
    batch_size: int = BATCH


def rewrite_row(frag: dict, judged: dict, result: FragmentRewrite, context_version: str | None,
                version: str) -> dict:
    doc = result.to_json()
    return {
        "key": frag["key"], "project": frag["project"], "path": frag["path"], "start_line": frag["start_line"],
        "end_line": frag["end_line"], "content_hash": frag["content_hash"],
        "migration_needed": judged["migration_needed"], "context_version": context_version,
        "rewrite_version": version, "edits": json.dumps(doc["edits"], ensure_ascii=False),
        "manual": json.dumps(doc["manual"], ensure_ascii=False), "edit_count": len(result.edits),
        "manual_count": len(result.manual), "new_text": result.text,
        "rewritten_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
    }


def rewrite_metadata(frag: dict, result: FragmentRewrite) -> dict:
    meta = {
        "tracking (not searched)": dg.MetadataValue.text(place(frag)),
        "edits": len(result.edits),
        "manual items": len(result.manual),
    }
    if result.edits:
        meta["diff"] = dg.MetadataValue.md(f"```diff\n{fragment_diff(frag, result.text)[:6000]}\n```")
        meta["rules"] = dg.MetadataValue.md(md_table(
            ["line", "old", "new", "rule", "evidence", "confidence"],
            [(e.start_line, e.old[:60], e.new[:60], e.rule, (e.evidence or {}).get("title", ""), e.confidence)
             for e in result.edits]))
    if result.manual:
        meta["left to people"] = dg.MetadataValue.md(md_table(
            ["lines", "kind", "what", "why"],
            [(f"{m.start_line}-{m.end_line}", m.kind, m.what, m.why) for m in result.manual]))
    return meta


@dg.asset(
    partitions_def=fragments_partitions,
    deps=[fragment_judgement],
    backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=100_000),
    output_required=False,
    group_name="projects",
    code_version=CODE_VERSION,
    kinds={"duckdb"},
    description="Per fragment that needs migration: the Godot 4 edits with their evidence, and what is left to people.",
)
def fragment_rewrite(context: dg.AssetExecutionContext, config: RewriteConfig,
                     retrieval_index: RetrievalIndex) -> Iterator[dg.AssetMaterialization]:
    keys = claim_run(context)
    corpus = retrieval_index.corpus_path()
    if not corpus.exists():
        raise dg.Failure(f"no corpus at {corpus}: run `gd-assets corpus build` first")
    version = rewrite_version(retrieval_index.corpus_version())
    rules = load_rules(str(corpus), version)
    judge = EvidenceJudge(surface=rules.surface)
    contexts: dict[str, tuple] = {}
    totals: Counter = Counter()
    done = 0
    for batch in fragment_batches(keys, config.batch_size):
        with store.session():
            judged = store.judgements_by_key(batch)
            missing = [k for k in batch if k not in judged]
            if missing:
                raise dg.Failure(f"{len(missing)} fragments have no current judgement (e.g. {missing[0]}): "
                                 "materialise fragment_judgement for them first")
            frags = store.fragments_by_key([k for k in batch if judged[k]["migration_needed"]]).to_dicts()
        rows, results = [], []
        for frag in frags:
            if frag["project"] not in contexts:
                known = store.project_context_row(frag["project"])
                contexts[frag["project"]] = (load_context(frag["project"]), known["version"] if known else None,
                                             file_functions(store.project_fragments(frag["project"]).to_dicts()))
            ctx, ctx_version, functions = contexts[frag["project"]]
            scope = Scope.of(ctx, frag["path"], frag["symbol"], rules.surface)
            result = rewrite_fragment(frag["kind"], frag["text"], frag["start_line"], frag["file_kind"], scope, rules)
            left = residual(frag, result, scope, judge, functions.get(frag["path"], ()),
                            json.loads(judged[frag["key"]]["evidence"] or "[]"))
            if left is not None:
                result.manual.append(left)
            rows.append(rewrite_row(frag, judged[frag["key"]], result, ctx_version, version))
            results.append(result)
            totals["edits"] += len(result.edits)
            totals["manual"] += len(result.manual)
        if rows:
            store.upsert("rewrites", store.frame("rewrites", rows))
        pointers = latest_inputs(context.instance, "fragment_judgement", [f["key"] for f in frags])
        made = []
        for frag, row, result in zip(frags, rows, results):
            data_version = rewrite_data_version(row["content_hash"], row["edits"], row["manual"])
            upstream = pointers.get(frag["key"], ("", None))
            made.append(dg.AssetMaterialization(
                asset_key=context.asset_key, partition=frag["key"], metadata=rewrite_metadata(frag, result),
                tags=lineage_tags(CODE_VERSION, data_version, {"fragment_judgement": upstream})))
        yield from report_batch(context, made)
        done += len(batch)
        context.log.info(f"rewrote {done}/{len(keys)} fragments: "
                         f"{totals['edits']} edits, {totals['manual']} manual items so far")
