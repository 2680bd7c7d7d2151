"""A whole project migrated in-process with the core calls, no Dagster: for the evaluations, the differential
tests and the API coverage probes, which need the pipeline's edits without a data home or a daemon."""

from __future__ import annotations

import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from gd_assets.core.codec import judge_input
from gd_assets.core.cues import DEFAULT_REQUEST, extract_cues
from gd_assets.core.fragments import file_functions, fragment_rows
from gd_assets.core.ingest import ingest
from gd_assets.core.judges.evidence import EvidenceJudge
from gd_assets.core.migration import migrate_file
from gd_assets.core.project_context import build_context
from gd_assets.core.receivers import Scope
from gd_assets.core.rewrite import rewrite_fragment


@dataclass
class Migrated:
    """What the core calls made of a set of files: fragments, judgements and rewrites by fragment key,
    and each file's edits."""

    fragments: list[dict]
    judgements: dict[str, dict]
    rewrites: dict[str, dict]
    edits: dict[str, list]


def migrate_files(name: str, files: list[dict], rules, judge: EvidenceJudge | None = None) -> Migrated:
    """Judge every fragment of `files` (dicts with path, kind, text) in their project and rewrite the flagged ones."""
    frags = fragment_rows(name, files)
    functions = file_functions(frags)
    context = build_context(files)
    judge = judge or EvidenceJudge(surface=rules.surface)
    judgements, rewrites, edits = {}, {}, defaultdict(list)
    for frag in frags:
        scope = Scope.of(context, frag["path"], frag["symbol"], rules.surface)
        cues = extract_cues(frag["kind"], frag["text"], DEFAULT_REQUEST, frag["file_kind"], scope)
        judged = judge.judge_one(judge_input(frag, cues, [], DEFAULT_REQUEST, functions.get(frag["path"], ())))
        judgements[frag["key"]] = {"signal": judged.signal, "migration_needed": judged.migration_needed}
        if judged.migration_needed:
            result = rewrite_fragment(frag["kind"], frag["text"], frag["start_line"], frag["file_kind"], scope, rules)
            rewrites[frag["key"]] = {"edits": [vars(e) for e in result.edits], "manual": [vars(m) for m in result.manual]}
            edits[frag["path"]] += result.edits
    return Migrated(frags, judgements, rewrites, edits)


def migrate_core(name: str, source: Path, out: Path, rules) -> tuple[list[dict], dict, dict, dict, dict]:
    """Migrate `source` into `out` with the core calls; returns (fragments, judgements, rewrites,
    original texts, migrated texts), keyed as `verify.attribute` reads them."""
    project = ingest(source, name)
    files = [{"path": f.path, "kind": f.kind, "text": f.text, "encoding": f.encoding}
             for f in project.files if f.included and f.text is not None]
    done = migrate_files(name, files, rules)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(source, out, ignore=shutil.ignore_patterns(".godot", ".git", ".import"))
    originals, migrated = {}, {}
    for f in files:
        result = migrate_file(f["path"], f["text"], done.edits.get(f["path"], []))
        originals[f["path"]] = f["text"]
        migrated[result.new_path] = result.new
        if result.renamed:
            (out / f["path"]).unlink(missing_ok=True)
        (out / result.new_path).write_text(result.new, encoding="utf-8")
    return done.fragments, done.judgements, done.rewrites, originals, migrated
