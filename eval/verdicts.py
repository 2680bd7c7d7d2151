"""Project verdict accuracy on real projects: every demo of godot-demo-projects, both branches.

Each folder holding a project.godot is one project: those of the `3.x` branch should come out
`godot3`, those of `master` `godot4`. Each project is judged twice: as it is ("full") and with
project.godot, scenes and resources left out ("scripts"), so the verdict must come from code.
Flow, in-process: ingest -> slice -> cues -> retrieval -> judge -> aggregate.
Run: python eval/verdicts.py [--mirror PATH] [--judge evidence] [--home GD_ASSETS_HOME]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from judging import EvidenceSource, Item, attach_scopes, items_of_file, load_judge, run_judge
from trees import DEFAULT_MIRROR, cache_root, extract, project_folders

from gd_assets.core.ingest import ingest

BRANCHES = {"3.x": "godot3", "master": "godot4"}
MODES = {"full": None, "scripts": {"project", "scene", "resource"}}  # mode -> file kinds left out


@dataclass
class Project:
    branch: str
    name: str            # folder relative to the tree root, e.g. 2d/dodge_the_creeps
    expected: str
    items: list[Item]


def project_verdict(name: str, rows: list[dict]) -> dict:
    """The product's roll-up of judgement rows into a project verdict."""
    from gd_assets.core import aggregate

    if hasattr(aggregate, "verdict"):
        return aggregate.verdict(rows)
    return aggregate.roll_up(name, rows)


def load_projects(mirror: str, limit: int | None, home: str | None = None) -> list[Project]:
    """Every project of both branches, its fragments read in the project's context."""
    projects = []
    for branch, expected in BRANCHES.items():
        tree = extract(mirror, branch)
        folders = project_folders(tree)[:limit] if limit else project_folders(tree)
        for folder in folders:
            name = folder.relative_to(tree).as_posix()
            source = ingest(folder, name="demo")
            items = []
            for file in source.included:
                items += items_of_file(f"{branch}/{name}", file.path, file.kind, file.text or "")
            attach_scopes(folder, items, home)
            projects.append(Project(branch, name, expected, items))
    return projects


def rows_of(project: Project, judgements: dict, left_out: set[str] | None) -> list[dict]:
    rows = []
    for item in project.items:
        if left_out and item.file_kind in left_out:
            continue
        j = judgements[item.key]
        rows.append({"key": item.key, "path": item.path, "start_line": item.start_line,
                     "end_line": item.end_line, "kind": item.kind, "file_kind": item.file_kind,
                     "symbol": item.symbol, "signal": j.signal, "migration_needed": j.migration_needed,
                     "confidence": j.confidence, "rationale": j.rationale})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", default=DEFAULT_MIRROR, help="git dir of godot-demo-projects")
    parser.add_argument("--judge", default="evidence", help="judge backend (evidence, baseline, ...)")
    parser.add_argument("--home", default=os.environ.get("GD_ASSETS_HOME"),
                        help="GD_ASSETS_HOME with corpora.duckdb and index/ (default $GD_ASSETS_HOME)")
    parser.add_argument("--corpus-dir", default=None, help="folder of renames_map_3_to_4.cpp (baseline)")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="first N projects of each branch")
    parser.add_argument("--no-retrieval", action="store_true", help="judge from cues only (no candidates)")
    parser.add_argument("--verbose", action="store_true", help="show the explanation of each wrong verdict")
    parser.add_argument("--show", type=int, default=5, metavar="N",
                        help="with --verbose, fragments of the opposite signal shown per wrong verdict")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write every verdict as JSON")
    args = parser.parse_args(argv)
    if args.home:
        os.environ["GD_ASSETS_HOME"] = args.home

    projects = load_projects(args.mirror, args.limit, args.home)
    items = [i for p in projects for i in p.items]
    judge = load_judge(args.judge, home=args.home, corpus_dir=args.corpus_dir)
    evidence = None
    if getattr(judge, "needs_evidence", True):
        evidence = EvidenceSource(args.home, cache_root(), retrieval=not args.no_retrieval)
    judgements = run_judge(judge, items, evidence)

    results = []
    for project in projects:
        for mode, left_out in MODES.items():
            rows = rows_of(project, judgements, left_out)
            if not rows:
                results.append({"branch": project.branch, "project": project.name, "mode": mode,
                                "expected": project.expected, "verdict": None, "skipped": "no analysable file"})
                continue
            v = project_verdict(project.name, rows)
            opposite = "godot4" if project.expected == "godot3" else "godot3"
            results.append({"branch": project.branch, "project": project.name, "mode": mode,
                            "expected": project.expected, "verdict": v["verdict"], "counts": v.get("counts"),
                            "explanation": v.get("explanation", ""),
                            "opposite": [r for r in rows if r["signal"] == opposite]})

    print(f"\nverdicts: judge {judge.name} ({getattr(judge, 'model', '')}); evidence: {evidence.description if evidence else 'none'}; "
          f"{len(projects)} projects, {len(items)} fragments")
    print(f"{'branch':8} {'mode':8} {'expected':9} {'accuracy':>20}   verdicts")
    for branch, expected in BRANCHES.items():
        for mode in MODES:
            rs = [r for r in results if r["branch"] == branch and r["mode"] == mode and r["verdict"]]
            skipped = sum(1 for r in results if r["branch"] == branch and r["mode"] == mode and not r["verdict"])
            right = sum(r["verdict"] == expected for r in rs)
            tally = ", ".join(f"{k} {n}" for k, n in Counter(r["verdict"] for r in rs).most_common())
            acc = f"{100.0 * right / len(rs):5.1f}% ({right}/{len(rs)})" if rs else "-"
            print(f"{branch:8} {mode:8} {expected:9} {acc:>20}   {tally}"
                  + (f"; {skipped} skipped (nothing to analyse)" if skipped else ""))

    wrong = [r for r in results if r["verdict"] and r["verdict"] != r["expected"]]
    wrong.sort(key=lambda r: (r["verdict"] == "unknown", r["branch"], r["mode"], r["project"]))
    print(f"\n{len(wrong)} wrong verdicts ({sum(r['verdict'] == 'unknown' for r in wrong)} of them unknown):")
    for r in wrong:
        c = r.get("counts") or {}
        print(f"  {r['branch']:6} {r['mode']:7} {r['project']:45} expected {r['expected']}, got {r['verdict']} "
              f"(g3 {c.get('godot3', '?')}, g4 {c.get('godot4', '?')}, neutral {c.get('neutral', '?')})")
        if args.verbose and r.get("explanation"):
            print(f"      {r['explanation']}")
        if args.verbose:
            for row in r["opposite"][: args.show]:
                print(f"      {row['signal']} {row['path']} L{row['start_line']}-{row['end_line']} "
                      f"[{row['kind']} {row['symbol']}]: {row['rationale'][:300]}")
    for r in results:
        r.pop("opposite", None)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
