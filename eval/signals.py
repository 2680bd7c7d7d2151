"""Share of fragments the judge signals for the wrong Godot version, on every demo project of both branches.

Every fragment of the `3.x` branch is Godot 3 code, so a `godot4` signal there is wrong; every fragment
of `master` is Godot 4 code, so a `godot3` signal there is wrong. All included files of each project
(every folder holding a project.godot) are judged: scripts, project.godot, scenes, resources, shaders
and config files. Judged in project context by default; `--no-context` reads bare names, `--compare`
shows both. Retrieval is off: signals come from cues and the class reference.
Run: python eval/signals.py [--home GD_ASSETS_HOME] [--compare] [--limit N] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path, PurePosixPath

from devset import print_text, reasons
from judging import EvidenceSource, Item, attach_scopes, items_of_file, load_judge, run_judge
from trees import DEFAULT_MIRROR, cache_root, extract, project_folders

from gd_assets.core.ingest import ingest

_GD4_PART = re.compile(r"(?:^|\.\s+)Godot 4: (.*?)(?:\.\s+(?=Migration|No migration)|\.?$)")


def findings(rationale: str, signal: str) -> list[str]:
    """The findings behind a signal: the rationale's "Godot 3:" or "Godot 4:" part, split on `;`."""
    if signal == "godot3":
        return reasons(rationale)
    match = _GD4_PART.search(rationale)
    body = match.group(1) if match else rationale
    return [part.strip()[:100] for part in body.split(";") if part.strip()]


def load_tree(mirror: str, ref: str, limit: int | None) -> tuple[Path, dict[str, str], list[Item]]:
    """The tree of `ref`, the project of each item key, and the items of every included file of every
    project (paths relative to the tree root, so one project context covers the whole tree)."""
    tree = extract(mirror, ref)
    folders = project_folders(tree)[:limit] if limit else project_folders(tree)
    project_of, items = {}, []
    for folder in folders:
        name = folder.relative_to(tree).as_posix()
        for file in ingest(folder, name="demo").included:
            path = PurePosixPath(name, file.path).as_posix()  # a project at the root: no "./" prefix
            for item in items_of_file(ref, path, file.kind, file.text or ""):
                project_of[item.key] = name
                items.append(item)
    return tree, project_of, items


def share(hits: int, total: int) -> str:
    return f"{100.0 * hits / total:6.2f}% ({hits}/{total})" if total else "     -"


def measure(items: list[Item], project_of: dict[str, str], judgements: dict, wrong_signal: str) -> dict:
    """Wrong signals among all fragments and among .gd fragments, by project, and by finding."""
    wrong = [i for i in items if judgements[i.key].signal == wrong_signal]
    gd = [i for i in items if i.file_kind == "gdscript"]
    found = Counter(f for i in wrong for f in findings(judgements[i.key].rationale, wrong_signal))
    return {
        "fragments": (len(wrong), len(items)),
        "gd_fragments": (sum(judgements[i.key].signal == wrong_signal for i in gd), len(gd)),
        "projects": Counter(project_of[i.key] for i in wrong).most_common(10),
        "reasons": found.most_common(15),
        "wrong": [{"key": i.key, "signal": judgements[i.key].signal, "rationale": judgements[i.key].rationale}
                  for i in wrong],
    }


def show_wrong(items: list[Item], judgements: dict, wrong_signal: str, max_lines: int) -> None:
    for item in items:
        j = judgements[item.key]
        if j.signal != wrong_signal:
            continue
        print(f"\n  {item.key} [{item.kind} L{item.start_line}-{item.end_line}] signal={j.signal}")
        print(f"    why: {j.rationale}")
        print_text(item.text, max_lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", default=os.environ.get("GD_ASSETS_HOME"),
                        help="GD_ASSETS_HOME with corpora.duckdb (default $GD_ASSETS_HOME)")
    parser.add_argument("--mirror", default=DEFAULT_MIRROR, help="git dir of godot-demo-projects")
    parser.add_argument("--gd3-ref", default="3.x", help="branch of the Godot 3 demos")
    parser.add_argument("--gd4-ref", default="master", help="branch of the Godot 4 demos")
    parser.add_argument("--context", action=argparse.BooleanOptionalAction, default=True,
                        help="judge in project context (default) or, with --no-context, by bare names")
    parser.add_argument("--compare", action="store_true", help="judge both ways and print them side by side")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="first N projects of each branch")
    parser.add_argument("--verbose", action="store_true", help="list every wrongly signalled fragment")
    parser.add_argument("--max-lines", type=int, default=8, help="with --verbose, lines of text per fragment")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if args.home:
        os.environ["GD_ASSETS_HOME"] = args.home

    modes = {"context": True, "names": False} if args.compare else (
        {"context": True} if args.context else {"names": False})
    judge = load_judge("evidence", home=args.home)
    evidence = EvidenceSource(args.home, cache_root(), retrieval=False)
    branches = ((args.gd3_ref, "Godot 3", "godot4"), (args.gd4_ref, "Godot 4", "godot3"))
    results: dict[str, dict] = {}
    for ref, code, wrong_signal in branches:
        tree, project_of, items = load_tree(args.mirror, ref, args.limit)
        attach_scopes(tree, items, args.home)
        by_mode = {mode: run_judge(judge, items, evidence, context=in_context) for mode, in_context in modes.items()}
        results[ref] = {"code": code, "wrong_signal": wrong_signal, "projects": len(set(project_of.values())),
                        "modes": {mode: measure(items, project_of, j, wrong_signal) for mode, j in by_mode.items()}}
        if args.verbose:
            for mode, judgements in by_mode.items():
                print(f"\n===== {ref} ({mode}): fragments signalled {wrong_signal} =====")
                show_wrong(items, judgements, wrong_signal, args.max_lines)

    print(f"\nsignals: judge {judge.name}; evidence: {evidence.description}")
    for ref, r in results.items():
        gd = next(iter(r["modes"].values()))["gd_fragments"][1]
        total = next(iter(r["modes"].values()))["fragments"][1]
        print(f"\n{ref} ({r['code']} code): {r['projects']} projects, {total} fragments ({gd} .gd); "
              f"wrong signal = {r['wrong_signal']}")
        print(f"  {'':30}" + "".join(f"{mode:>22}" for mode in r["modes"]))
        for key, label in (("fragments", "all fragments wrongly signalled"), ("gd_fragments", ".gd fragments wrongly signalled")):
            print(f"  {label:30}" + "".join(f"{share(*m[key]):>22}" for m in r["modes"].values()))
        for mode, m in r["modes"].items():
            print(f"\n  {ref} ({mode}): projects with most wrong signals")
            for project, count in m["projects"]:
                print(f"    {count:4}  {project}")
            print(f"  {ref} ({mode}): most frequent reasons of wrong signals")
            for reason, count in m["reasons"]:
                print(f"    {count:4}  {reason}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
