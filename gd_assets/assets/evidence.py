"""`fragment_evidence`: cues and hybrid-retrieval candidates for each fragment partition.

Many partitions run in one process (one model load, batched embeddings); each fragment's
materialisation is recorded the moment its batch is committed, so a crash loses no finished one.
"""

import datetime as dt
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Iterator

import dagster as dg

from gd_assets import store
from gd_assets.assets.metadata import md_table
from gd_assets.assets.project_symbols import load_context
from gd_assets.core.codec import candidate_row, candidates_by_key, cues_from_json, cues_to_json
from gd_assets.core.corpus.surface import load_surface
from gd_assets.core.cues import DEFAULT_REQUEST, JUDGE_ONLY, sparse_terms
from gd_assets.core.evidence import Evidence, gather_evidence
from gd_assets.core.places import place
from gd_assets.core.receivers import Scope
from gd_assets.core.retrieval import Query
from gd_assets.freshness import PARAMS, RETRIEVAL_VERSION, evidence_version, latest_inputs, lineage_tags
from gd_assets.partitions import fragment_batches, fragments_partitions, report_batch
from gd_assets.resources import RetrievalIndex
from gd_assets.status import claim_run

BATCH = 512  # the largest batch (`fragment_batches`)
CODE_VERSION = f"evidence-2|{RETRIEVAL_VERSION}"  # 2: cues carry receivers from the project context


class EvidenceConfig(dg.Config):
    request: str = DEFAULT_REQUEST
    batch_size: int = BATCH


def evidence_rows(frag: dict, ev: Evidence, corpus_version: str, index_version: str,
                  request: str, context_version: str | None = None) -> tuple[dict, list[dict]]:
    cues = cues_to_json(ev.cues)
    row = {
        "key": frag["key"], "project": frag["project"], "path": frag["path"], "start_line": frag["start_line"],
        "end_line": frag["end_line"], "content_hash": frag["content_hash"], "cues": cues,
        "dense_text": ev.dense_text, "request": request, "corpus_version": corpus_version, "index_version": index_version,
        "retrieval_version": RETRIEVAL_VERSION, "computed_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
        "data_version": evidence_version(frag["content_hash"], cues, [c.id for c in ev.candidates], index_version),
        "context_version": context_version,
    }
    return row, [candidate_row(frag["key"], frag["project"], c) for c in ev.candidates]


def searched_before(keys: list[str], corpus_version: str, index_version: str,
                    request: str) -> dict[str, tuple[Query, list]]:
    """The last query and candidates of each fragment whose evidence was made with today's corpus,
    index, retrieval parameters and request: the same query would find the same candidates."""
    rows, cand_rows = store.evidence_by_key(keys)
    candidates = candidates_by_key(cand_rows)
    out = {}
    for row in rows.to_dicts():
        if (row["content_hash"], row["corpus_version"], row["index_version"], row["retrieval_version"],
                row["request"]) == (row["fragment_hash"], corpus_version, index_version, RETRIEVAL_VERSION, request):
            cues = cues_from_json(row["cues"])
            out[row["key"]] = (Query(sparse_terms(cues), row["dense_text"]), candidates.get(row["key"], []))
    return out


def debug_metadata(frag: dict, ev: Evidence) -> dict:
    """The debug view: tracking (not searched) apart from what went into the retriever."""
    return {
        "tracking (not searched)": dg.MetadataValue.text(place(frag)),
        "fragment": dg.MetadataValue.md(f"```gdscript\n{frag['text'][:4000]}\n```"),
        "cues (retriever input)": dg.MetadataValue.md(
            "\n".join(f"- `{c.cue}` ({c.source}{', judge only: not searched' if c.source in JUDGE_ONLY else ''})"
                       for c in ev.cues) or "(none)"),
        "receivers (judge only: from the project context)": dg.MetadataValue.md(
            "\n".join(f"- `{c.cue}` ({c.source}) -> `{c.receiver}`" for c in ev.cues if c.receiver) or "(none)"),
        "candidates": dg.MetadataValue.md(md_table(
            ["rank", "table", "title", "sparse rank", "dense", "score"],
            [(c.rank, c.table, c.title, c.sparse_rank or "", f"{c.dense_score:.3f}", f"{c.score:.3f}")
             for c in ev.candidates])),
        "candidate_count": len(ev.candidates),
        "content_hash": frag["content_hash"],
    }


@dg.asset(
    partitions_def=fragments_partitions,
    deps=[dg.AssetDep("fragments", partition_mapping=dg.AllPartitionMapping()),
          dg.AssetDep("project_symbols", partition_mapping=dg.AllPartitionMapping()), dg.AssetKey("corpus_index")],
    backfill_policy=dg.BackfillPolicy.single_run(),
    output_required=False,
    group_name="projects",
    code_version=CODE_VERSION,
    kinds={"duckdb"},
    description="Cues of each fragment's body and the candidates hybrid retrieval found in the three tables.",
)
def fragment_evidence(context: dg.AssetExecutionContext, config: EvidenceConfig,
                      retrieval_index: RetrievalIndex) -> Iterator[dg.AssetMaterialization]:
    keys = claim_run(context)
    index = retrieval_index.load()
    corpus_version = retrieval_index.corpus_version()
    index_input = latest_inputs(context.instance, "corpus_index").get(None, (index.version, None))
    index_input = (index.version, index_input[1])
    engine = load_surface(str(retrieval_index.corpus_path()))
    contexts: dict[str, tuple] = {}  # project -> (context, version)
    project_inputs: dict[str, dict] = {}  # project -> its fragments' and symbols' (data version, storage id)

    def read_batch(batch: list[str], remain: int) -> tuple[list[dict], dict]:
        """A batch's fragments with their place in the project, and what was searched before."""
        with store.session():  # this batch's reads share one connection
            frags = store.fragments_by_key(batch).to_dicts()
            missing = set(batch) - {f["key"] for f in frags}
            if missing:
                raise dg.Failure(f"{len(missing)} fragment partitions have no fragment row (e.g. {sorted(missing)[0]}): "
                                 "re-run `fragments` for their project")
            context.log.info("on " + ", ".join(place(f, short=True) for f in frags) + f"; {remain} remain after these")
            for frag in frags:
                if frag["project"] not in contexts:
                    known = store.project_context_row(frag["project"])
                    contexts[frag["project"]] = (load_context(frag["project"]), known["version"] if known else None)
                frag["scope"] = Scope.of(contexts[frag["project"]][0], frag["path"], frag["symbol"], engine)
            return frags, searched_before(batch, corpus_version, index.version, config.request)

    def record(batch: list[str], frags: list[dict], known: dict, search: Future) -> Iterator[dg.AssetMaterialization]:
        """A searched batch's rows committed, then its materialisations reported."""
        found = search.result()
        if known:
            context.log.info(f"{sum(f['key'] in known for f in frags)} of these kept their candidates "
                             "(same query; only their project context changed)")
        rows, cands = [], []
        for frag, ev in zip(frags, found):
            row, cand_rows = evidence_rows(frag, ev, corpus_version, index.version, config.request,
                                           contexts[frag["project"]][1])
            rows.append(row)
            cands.extend(cand_rows)
        store.upsert_many([("evidence", store.frame("evidence", rows)),
                           ("candidates", store.frame("candidates", cands))], replace_keys=batch)
        new = sorted({f["project"] for f in frags} - set(project_inputs))
        if new:   # a project's fragments and symbols are not re-materialised while this run goes on
            made = {asset: latest_inputs(context.instance, asset, new) for asset in ("fragments", "project_symbols")}
            project_inputs.update({name: {asset: made[asset].get(name, ("", None)) for asset in made} for name in new})
        made = []
        for frag, ev, row in zip(frags, found, rows):
            inputs = {"corpus_index": index_input, **project_inputs[frag["project"]]}
            made.append(dg.AssetMaterialization(
                asset_key=context.asset_key, partition=frag["key"], metadata=debug_metadata(frag, ev),
                tags=lineage_tags(CODE_VERSION, row["data_version"], inputs)))
        yield from report_batch(context, made)

    # Each batch is searched in a thread while the one before is committed and reported (the search is
    # mostly numpy and the commit DuckDB, which let the other thread run): a kill loses those two at most.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="evidence-search") as searcher:
        searching, done = None, 0
        for batch in fragment_batches(keys, config.batch_size):
            done += len(batch)
            frags, known = read_batch(batch, len(keys) - done)
            previous, searching = searching, (batch, frags, known, searcher.submit(
                gather_evidence, frags, index, PARAMS, config.request, known))
            if previous:
                yield from record(*previous)
        if searching:
            yield from record(*searching)
