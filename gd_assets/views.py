"""The read views: what `fragments`, `show`, `analyze`/verdict, `status` and `search` print, as documents.

Each is a plain dict (the `--json` output); the command line only formats them. Nothing here runs
the pipeline.
"""

from __future__ import annotations

import json

from gd_assets import home, store
from gd_assets.core.codec import cues_from_json
from gd_assets.core.corpus.layout import read_manifest
from gd_assets.core.judges import JudgeIdentity
from gd_assets.core.judges.base import SIGNALS
from gd_assets.core.retrieval import CorpusIndex
from gd_assets.core.verify import figure_lines
from gd_assets.freshness import (
    EvidenceInputs,
    current_evidence_inputs,
    judge_backend,
    stale_evidence,
    stale_judged,
    stale_judgements,
)
from gd_assets.status import STATES, materialization_counts, progress_states, worker_blocks

TRACKING = ("path", "start_line", "end_line", "dump_start_line", "dump_end_line")
CORPUS_TABLES = ("docs_chunks", "api_mapping", "label_prototypes")
PAGE_LIMIT = 500


class NotFound(LookupError):
    """A project or fragment the store does not have; the message says what to run."""


class BadArgument(ValueError):
    """A filter or size out of range; the message says what is allowed."""


def _excluded(project: str) -> list[dict]:
    return store.query("SELECT path, reason FROM files WHERE project = ? AND NOT included ORDER BY path",
                       [project]).to_dicts()


def fragments_document(project: str) -> dict:
    fields = ("key", *TRACKING, "kind", "symbol", "text")
    frags = store.project_fragments(project).to_dicts()
    return {"project": project, "fragments": [{f: r[f] for f in fields} for r in frags], "excluded": _excluded(project)}


def fragments_page(project: str, migration_needed: bool | None = None, signal: str | None = None,
                   path_prefix: str | None = None, limit: int = 50, offset: int = 0) -> dict:
    """One page of a project's fragments with their current judgement (none before judging), in file
    order, filtered by migration need, signal and path prefix; `next_offset` is None on the last page."""
    if store.project_row(project) is None:
        raise NotFound(f"no project {project!r}: run `gd-assets analyze SOURCE --project {project}`")
    if signal is not None and signal not in SIGNALS:
        raise BadArgument(f"signal {signal!r} is not one of {', '.join(SIGNALS)}")
    if not 1 <= limit <= PAGE_LIMIT or offset < 0:
        raise BadArgument(f"limit is 1 to {PAGE_LIMIT} and offset at least 0 (got {limit}, {offset})")
    where, params = ["f.project = ?"], [project]
    if migration_needed is not None:
        where.append("j.migration_needed = ?")
        params.append(migration_needed)
    if signal is not None:
        where.append("j.signal = ?")
        params.append(signal)
    if path_prefix:
        where.append("starts_with(f.path, ?)")
        params.append(path_prefix)
    body = ("FROM fragments f LEFT JOIN judgements j ON j.key = f.key AND j.content_hash = f.content_hash "
            f"WHERE {' AND '.join(where)}")
    total = store.query(f"SELECT count(*) AS n {body}", params)["n"][0]
    rows = store.query(
        "SELECT f.key, f.path, f.start_line, f.end_line, f.kind, f.symbol, j.signal, j.migration_needed, "
        f"j.confidence, j.rationale {body} ORDER BY f.dump_start_line NULLS LAST, f.path, f.ordinal "
        "LIMIT ? OFFSET ?", [*params, limit, offset]).to_dicts()
    following = offset + len(rows)
    return {"project": project, "total": total, "offset": offset, "limit": limit,
            "next_offset": following if following < total else None, "fragments": rows}


def search_corpus(query: str, table: str | None = None, k: int = 10) -> list[dict]:
    """`gd-assets search`: the corpus rows nearest a text, through the same hybrid retrieval as the evidence."""
    if table is not None and table not in CORPUS_TABLES:
        raise BadArgument(f"table {table!r} is not one of {', '.join(CORPUS_TABLES)}")
    if not 1 <= k <= PAGE_LIMIT:
        raise BadArgument(f"k is 1 to {PAGE_LIMIT} (got {k})")
    return [c.as_dict() for c in _corpus_index().search_text(query, table=table, k=k)]


def _corpus_index() -> CorpusIndex:
    """The loaded index, kept while its build is the published one (a long-lived server reloads after a rebuild)."""
    directory = home.index_dir()
    manifest = read_manifest(directory)
    if manifest is None:
        raise NotFound(f"no corpus index in {directory}: run `gd-assets corpus build`")
    key = (str(directory), manifest["index_version"])
    if key not in _INDEXES:
        _INDEXES.clear()
        _INDEXES[key] = CorpusIndex.load(directory)
    return _INDEXES[key]


_INDEXES: dict[tuple[str, str], CorpusIndex] = {}


def show_document(project: str, key: str, now: EvidenceInputs | None = None, judge: JudgeIdentity | None = None) -> dict:
    """The debug view of one fragment: tracking apart from what was searched, then the candidates;
    its lineage says whether re-analysing against `now` and `judge` (default: today's) would redo it."""
    frag = store.query("SELECT * FROM fragments WHERE key = ? AND project = ?", [key, project]).to_dicts()
    if not frag:
        raise NotFound(f"no fragment {key!r} in project {project!r}: `gd-assets fragments` lists the keys")
    frag = frag[0]
    ev = store.query("SELECT * FROM evidence WHERE key = ?", [key]).to_dicts()
    cands = store.query("SELECT * FROM candidates WHERE key = ? ORDER BY rank", [key]).to_dicts()
    doc = {
        "key": key, "project": project, "tracking": {f: frag[f] for f in TRACKING}, "text": frag["text"],
        "cues": [{"cue": c.cue, "from": c.source, "receiver": c.receiver}
                 for c in cues_from_json(ev[0]["cues"])] if ev else [],
        "candidates": [{"rank": c["rank"], "table": c["corpus_table"], "id": c["row_id"], "title": c["title"],
                        "text": c["text"], "sparse_rank": c["sparse_rank"], "dense_score": c["dense_score"],
                        "score": c["score"], "via": c["via"]} for c in cands],
    }
    judged = store.query("SELECT * FROM judgements WHERE key = ?", [key]).to_dicts()
    if judged:
        j = judged[0]
        doc["judgement"] = {
            "signal": j["signal"], "migration_needed": j["migration_needed"], "confidence": j["confidence"],
            "rationale": j["rationale"], "related": json.loads(j["related"]), "evidence": json.loads(j["evidence"]),
            "legend": json.loads(j["legend"]), "judge": j["judge"], "model": j["model"],
        }
    rewritten = store.query("SELECT * FROM rewrites WHERE key = ? AND content_hash = ?",
                            [key, frag["content_hash"]]).to_dicts()
    if rewritten:
        r = rewritten[0]
        doc["rewrite"] = {"edits": json.loads(r["edits"]), "manual": json.loads(r["manual"]), "new_text": r["new_text"]}
    if ev:
        lineage = {f: ev[0][f] for f in ("corpus_version", "index_version", "retrieval_version")}
        now = now or current_evidence_inputs()
        lineage["evidence_stale"] = key in stale_evidence(project, now)
        if judged:
            stale = key in stale_judgements(project, judge or judge_backend().identity())
            lineage.update({"judge": judged[0]["judge"], "model": judged[0]["model"],
                            "prompt_version": judged[0]["prompt_version"],
                            "judged_at": str(judged[0]["judged_at"]),
                            "judgement_stale": stale or lineage["evidence_stale"]})
        doc["lineage"] = lineage
    return doc


def verdict_document(project: str) -> dict:
    """The `analyze --json` document."""
    row = store.query("SELECT * FROM verdicts WHERE project = ?", [project]).to_dicts()
    if not row:
        raise NotFound(f"project {project!r} has no verdict yet: run `gd-assets analyze`")
    row = row[0]
    summary = json.loads(row["summary"])
    frags = store.query(
        "SELECT f.key, f.path, f.start_line, f.end_line, f.kind, j.signal, j.migration_needed, j.confidence, "
        "j.rationale, j.evidence FROM fragments f JOIN judgements j ON j.key = f.key AND j.content_hash = f.content_hash "
        "WHERE f.project = ? ORDER BY f.dump_start_line NULLS LAST, f.path, f.ordinal", [project]).to_dicts()
    for f in frags:
        f["evidence"] = [{k: e[k] for k in ("table", "id", "title")} for e in json.loads(f["evidence"])]
    return {"project": project, "verdict": row["verdict"], "confidence": row["confidence"],
            "counts": summary["counts"], "explanation": row["explanation"], "folders": summary["folders"],
            "files": summary["files"], "fragments": frags, "excluded": _excluded(project)}


def migration_document(project: str, facts: dict) -> dict:
    """The `migrate --json` document: where the copy went, and every edit and manual item with its fragment."""
    edits, manual = [], []
    for row in store.project_rewrites(project).to_dicts():
        for e in json.loads(row["edits"]):
            edits.append({"key": row["key"], "path": row["path"], **{k: e[k] for k in (
                "start_line", "start_col", "end_line", "end_col", "old", "new", "rule", "evidence", "confidence")}})
        for m in json.loads(row["manual"]):
            manual.append({"key": row["key"], "path": row["path"], **m})
    return {"project": project, "out": facts["out"], "patch": facts["patch"], "files_changed": facts["files_changed"],
            "renamed": facts.get("renamed", {}), "edits": edits, "manual": manual, "manual_by_kind": facts["manual_by_kind"], "files": facts["files"],
            "problems": facts["problems"]}


def status_document(project: str, now: EvidenceInputs | None = None, judge: JudgeIdentity | None = None) -> dict:
    """Per fragment: done / failed / stopped / running / waiting, and how many judgements are stale
    against `now` and `judge` (default: today's evidence inputs and the configured judge)."""
    frags = store.project_fragments(project).to_dicts()
    if not frags:
        raise NotFound(f"project {project!r} has no fragments: run `gd-assets analyze SOURCE --project {project}`")
    keys = [f["key"] for f in frags]
    inst = home.dagster_instance()
    states, stages = progress_states(inst, keys)
    counts = materialization_counts(inst, "fragment_judgement", keys)
    rows = [{**{k: f[k] for k in ("key", *TRACKING)}, "status": states[f["key"]], "materializations": counts[f["key"]]}
            for f in frags]
    totals = {s: sum(r["status"] == s for r in rows) for s in STATES}
    now = now or current_evidence_inputs()
    judge = judge or judge_backend().identity()
    totals["stale"] = len(stale_judged(project, now, judge))
    context = store.project_context_row(project)
    symbols = json.loads(context["counts"]) if context else {}
    verified = store.one_row("verifications", project)
    verification = verification_document({**verified, "figures": json.loads(verified["figures"]), "problems": []}) \
        if verified else None
    return {"project": project, "counts": totals, "stages": {stage: {s: n[s] for s in STATES} for stage, n in stages.items()},
            "symbols": symbols, "fragments": rows, "workers": worker_summary(worker_blocks(inst, project)),
            "verification": verification and {k: verification[k] for k in ("godot", "verified_at", "lines", "figures")}}


def worker_summary(blocks: list[dict]) -> dict[str, dict]:
    """Per worker: its blocks, and fragments by stage and run status; the blocks it held and lost."""
    workers: dict[str, dict] = {}
    for block in blocks:
        mine = workers.setdefault(block["worker"], {"blocks": [], "fragments": {}, "lost": 0})
        mine["blocks"].append({k: block[k] for k in ("stage", "first", "fragments", "status", "earlier", "run_id")})
        by_status = mine["fragments"].setdefault(block["stage"], {})
        by_status[block["status"]] = by_status.get(block["status"], 0) + block["fragments"]
        for earlier in block["earlier"]:
            workers.setdefault(earlier, {"blocks": [], "fragments": {}, "lost": 0})["lost"] += 1
    return workers


def verification_document(row: dict) -> dict:
    """The `verify --json` document: the figures (and a line each), every problem with its cause."""
    return {"project": row["project"], "copy": row["copy"], "godot": row["godot"],
            "verified_at": str(row["verified_at"]), "figures": row["figures"], "lines": figure_lines(row["figures"]),
            "problems": row["problems"], "run": row.get("run")}
