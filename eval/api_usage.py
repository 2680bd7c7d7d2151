"""Which of the Godot 3 names Godot 4 lacks real Godot 3 code uses, and how the migration answers each
(the `api_coverage` table, computed here when the corpus lacks it): the names read off every fragment's
cues with their receivers, counted by the scripts using them, across the given project folders.

Run: python eval/api_usage.py --home CORPUS_HOME DIR [DIR ...] [--top N] [--json out.json]
(each DIR a Godot 3 project, or a folder of games holding `<game>/gd3`).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from gd_assets.core import duck
from gd_assets.core.coverage import coverage_rows
from gd_assets.core.cues import DEFAULT_REQUEST, extract_cues
from gd_assets.core.ingest import ingest
from gd_assets.core.project_context import build_context
from gd_assets.core.receivers import Scope, is_engine
from gd_assets.core.rewrite import load_rules
from gd_assets.core.slicing import slice_file


def projects(dirs: list[Path]) -> list[Path]:
    out = []
    for d in dirs:
        out += [d] if (d / "project.godot").is_file() else sorted(p.parent for p in d.glob("*/gd3/project.godot"))
    return out


def table(home: Path) -> list[dict]:
    db = home / "corpora.duckdb"
    rules = load_rules(str(db))
    with duck.connect(db, read_only=True) as con:
        has = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'api_coverage' "
                          "AND table_catalog = current_database()").fetchone()[0]
        if has:
            return con.sql("SELECT * FROM api_coverage").pl().to_dicts()
        sigs = {(c, k, n): s for c, k, n, s in con.execute(
            "SELECT class_name, member_kind, coalesce(member_name, ''), signature FROM docs_chunks "
            "WHERE godot_version = '3' AND class_name IS NOT NULL").fetchall()}
    return coverage_rows(rules, sigs)


def uses(project: Path, rules, ids: set[str]) -> Counter:
    """Scripts of `project` using each gone name (by coverage id)."""
    files = [{"path": f.path, "kind": f.kind, "text": f.text} for f in ingest(project, project.name).files
             if f.included and f.text is not None]
    context = build_context(files)
    surface = rules.surface
    found: dict[str, set[str]] = defaultdict(set)
    for f in files:
        if f["kind"] != "gdscript":
            continue
        for frag in slice_file(f["path"], "gdscript", f["text"]):
            scope = Scope.of(context, f["path"], frag.symbol, surface)
            for cue in extract_cues(frag.kind, frag.text, DEFAULT_REQUEST, "gdscript", scope):
                name = cue.cue.removeprefix("signal:").lstrip(".").split(".")[-1].split("(")[0]
                candidates = [f"cov:class:{name}", f"cov:global_function:@GDScript.{name}",
                              f"cov:global_function:@GlobalScope.{name}", f"cov:global_constant:@GlobalScope.{name}"]
                if is_engine(cue.receiver):
                    owner = surface.owner_of("3", cue.receiver, name)
                    if owner is not None:
                        candidates += [f"cov:{k}:{owner}.{name}" for k in ("method", "property", "signal", "constant")]
                for c in candidates:
                    if c in ids:
                        found[c].add(f["path"])
    return Counter({k: len(v) for k, v in found.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--top", type=int, default=60)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = {r["id"]: r for r in table(args.home)}
    rules = load_rules(str(args.home / "corpora.duckdb"))
    total: Counter = Counter()
    per_project = {}
    for project in projects(args.dirs):
        counted = uses(project, rules, set(rows))
        per_project[str(project)] = dict(counted)
        total.update(counted)
    by_answer: Counter = Counter()
    for rid, n in total.items():
        by_answer[rows[rid]["answer"]] += n
    print(f"{len(per_project)} projects; gone names used: {len(total)} names, {sum(total.values())} script uses")
    for answer, n in by_answer.most_common():
        print(f"  {answer:12} {n:6} uses ({n / max(sum(total.values()), 1):.0%})")
    print(f"\nmost used, unanswered first (top {args.top}):")
    ranked = sorted(total.items(), key=lambda kv: (rows[kv[0]]["answer"] != "none", -kv[1]))
    for rid, n in ranked[:args.top]:
        r = rows[rid]
        print(f"  {n:4}  {r['answer']:10} {rid:60} {r['godot4'][:60]}")
    if args.json:
        args.json.write_text(json.dumps({"total": dict(total), "per_project": per_project}, indent=1))


if __name__ == "__main__":
    main()
