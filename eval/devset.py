"""Score a judge on the development set, side by side with the converter-style baseline.

Scores (see ../shared/devset/README.md):
- recall on changed: share of `changed` functions of the Godot 3 side judged migration_needed;
- false flags on unchanged: share of `unchanged` functions judged migration_needed;
- false flags on Godot 4 code: share of the master branch's .gd functions (and fragments) judged
  migration_needed.
A function cut into parts counts as flagged when any part is; `<toplevel>` is every non-function
fragment of its file. Run: python eval/devset.py [--mirror PATH] [--judge evidence] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from judging import FUNCTION_KINDS, EvidenceSource, Item, attach_scopes, items_of_file, load_judge, run_judge
from trees import DEFAULT_MIRROR, cache_root, extract

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRUTH = REPO.parent / "shared" / "devset" / "demo_migration_truth.json"
TOPLEVEL = "<toplevel>"
SCORED = ("changed", "unchanged")
_PART = re.compile(r"@\d+$")


@dataclass
class Unit:
    """What the truth scores: one function (all its parts) or a file's top-level code."""

    demo: str
    path: str
    function: str
    status: str
    items: list[Item] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.demo}/{self.path}::{self.function}"


def function_name(symbol: str) -> str:
    """`name@2` -> `name` (a part of a long function); inner-class qualification is kept."""
    return _PART.sub("", symbol)


def file_units(demo: str, path: str, items: list[Item]) -> dict[str, Unit]:
    """The units of one file: each function (qualified as sliced) and `<toplevel>`."""
    units: dict[str, Unit] = {}
    for item in items:
        name = function_name(item.symbol) if item.kind in FUNCTION_KINDS else TOPLEVEL
        units.setdefault(name, Unit(demo, path, name, "")).items.append(item)
    return units


def match_truth(demo: str, rows: list[dict], by_file: dict[str, list[Item]]) -> tuple[list[Unit], list[dict]]:
    """Truth rows mapped to our fragments; rows that match nothing are returned apart."""
    units, unmatched = [], []
    per_file = {path: file_units(demo, path, items) for path, items in by_file.items()}
    for row in rows:
        ours = per_file.get(row["path"], {})
        name = row["function"]
        found = [u for n, u in ours.items() if n == name or (name != TOPLEVEL and n.endswith("." + name))]
        if not found:
            unmatched.append(row)
            continue
        items = [i for u in found for i in u.items]
        units.append(Unit(demo, row["path"], name, row["status"], items))
    return units, unmatched


def gd_items(root: Path, prefix: str) -> dict[str, list[Item]]:
    """Items of every .gd file under root, by path relative to root."""
    out = {}
    for file in sorted(root.rglob("*.gd")):
        rel = file.relative_to(root).as_posix()
        text = file.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
        out[rel] = items_of_file(prefix, rel, "gdscript", text)
    return out


def flagged(unit: Unit, judgements: dict) -> bool:
    return any(judgements[i.key].migration_needed for i in unit.items)


def share(hits: int, total: int) -> str:
    return f"{100.0 * hits / total:5.1f}% ({hits}/{total})" if total else "    -"


# ------------------------------------------------------------------------------------------ scoring


def score(truth_units: list[Unit], gd4_units: list[Unit], gd4_items: list[Item], judgements: dict) -> dict:
    by_status: dict[str, list[Unit]] = defaultdict(list)
    for unit in truth_units:
        by_status[unit.status].append(unit)
    changed = by_status["changed"]
    unchanged = by_status["unchanged"]
    style = by_status["style_only"]
    return {
        "recall_changed": (sum(flagged(u, judgements) for u in changed), len(changed)),
        "false_unchanged": (sum(flagged(u, judgements) for u in unchanged), len(unchanged)),
        "false_gd4_functions": (sum(flagged(u, judgements) for u in gd4_units), len(gd4_units)),
        "false_gd4_fragments": (sum(judgements[i.key].migration_needed for i in gd4_items), len(gd4_items)),
        "style_only_flagged": (sum(flagged(u, judgements) for u in style), len(style)),
    }


ROWS = (
    ("recall_changed", "recall on changed (higher is better)"),
    ("false_unchanged", "false flags on unchanged"),
    ("false_gd4_functions", "false flags on Godot 4 code, per function"),
    ("false_gd4_fragments", "false flags on Godot 4 code, per fragment"),
    ("style_only_flagged", "style_only flagged (not scored)"),
)


def print_table(results: dict[str, dict]) -> None:
    names = list(results)
    width = max(len(label) for _, label in ROWS) + 2
    print(f"{'':{width}}" + "".join(f"{n:>24}" for n in names))
    for key, label in ROWS:
        print(f"{label:{width}}" + "".join(f"{share(*results[n][key]):>24}" for n in names))


def per_demo_table(truth_units: list[Unit], results: dict[str, dict]) -> None:
    print("\nper demo: recall on changed | false flags on unchanged")
    demos = list(dict.fromkeys(u.demo for u in truth_units))
    for demo in demos:
        cells = []
        for name, judgements in results.items():
            units = [u for u in truth_units if u.demo == demo]
            ch = [u for u in units if u.status == "changed"]
            un = [u for u in units if u.status == "unchanged"]
            cells.append(f"{name}: {share(sum(flagged(u, judgements) for u in ch), len(ch)).strip()} | "
                         f"{share(sum(flagged(u, judgements) for u in un), len(un)).strip()}")
        print(f"  {demo:28} " + "   ".join(cells))


# ------------------------------------------------------------------------------------------ listing


def _show(items: list[Item], judgements: dict, max_lines: int, only_flagged: bool) -> None:
    for item in items:
        j = judgements[item.key]
        if only_flagged and not j.migration_needed:
            continue
        print(f"    [{item.kind} {item.symbol} L{item.start_line}-{item.end_line}] signal={j.signal} "
              f"migration={j.migration_needed} conf={j.confidence:.2f}")
        print(f"    why: {j.rationale}")
        print_text(item.text, max_lines)


def print_text(text: str, max_lines: int) -> None:
    """A fragment's text, indented, cut to `max_lines`."""
    lines = text.split("\n")
    for line in lines[:max_lines]:
        print(f"      | {line}")
    if len(lines) > max_lines:
        print(f"      | ... ({len(lines) - max_lines} more lines)")


def list_errors(name: str, truth_units: list[Unit], gd4_units: list[Unit], judgements: dict,
                max_lines: int) -> None:
    misses = [u for u in truth_units if u.status == "changed" and not flagged(u, judgements)]
    false_unchanged = [u for u in truth_units if u.status == "unchanged" and flagged(u, judgements)]
    false_gd4 = [u for u in gd4_units if flagged(u, judgements)]
    print(f"\n===== {name}: {len(misses)} misses on changed functions =====")
    for unit in misses:
        print(f"\n  MISS {unit.label}")
        _show(unit.items, judgements, max_lines, only_flagged=False)
    print(f"\n===== {name}: {len(false_unchanged)} false flags on unchanged functions =====")
    for unit in false_unchanged:
        print(f"\n  FALSE FLAG (unchanged) {unit.label}")
        _show(unit.items, judgements, max_lines, only_flagged=True)
    print(f"\n===== {name}: {len(false_gd4)} false flags on Godot 4 functions =====")
    for unit in false_gd4:
        print(f"\n  FALSE FLAG (Godot 4) {unit.label}")
        _show(unit.items, judgements, max_lines, only_flagged=True)


def reasons(rationale: str) -> list[str]:
    """The findings a rationale lists: its "Godot 3: a; b." part when it has one, else its `;` parts."""
    match = re.search(r"Godot 3: (.*?)(?:\.\s+(?=Godot 4:|Migration|No migration)|\.?$)", rationale)
    body = match.group(1) if match else rationale
    return [part.strip()[:100] for part in body.split(";") if part.strip()]


def reason_counts(units: list[Unit], judgements: dict, top: int = 15) -> list[tuple[str, int]]:
    """The most frequent findings among flagged fragments of `units` (where false flags come from)."""
    counts: dict[str, int] = defaultdict(int)
    for unit in units:
        for item in unit.items:
            j = judgements[item.key]
            if j.migration_needed:
                for part in reasons(j.rationale):
                    counts[part] += 1
    return sorted(counts.items(), key=lambda kv: -kv[1])[:top]


# ------------------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", default=DEFAULT_MIRROR, help="git dir of godot-demo-projects")
    parser.add_argument("--judge", default="evidence", help="judge to score next to the baseline")
    parser.add_argument("--home", default=os.environ.get("GD_ASSETS_HOME"),
                        help="GD_ASSETS_HOME with corpora.duckdb and index/ (default $GD_ASSETS_HOME)")
    parser.add_argument("--truth", default=str(DEFAULT_TRUTH), help="demo_migration_truth.json")
    parser.add_argument("--corpus-dir", default=None, help="folder of renames_map_3_to_4.cpp (baseline)")
    parser.add_argument("--gd4-ref", default="master", help="branch of the Godot 4 demos")
    parser.add_argument("--limit-gd4", type=int, default=None, metavar="N",
                        help="judge only the first N .gd files of the Godot 4 tree (quick runs)")
    parser.add_argument("--no-retrieval", action="store_true", help="judge from cues only (no candidates)")
    parser.add_argument("--verbose", action="store_true", help="list misses and false flags with their text")
    parser.add_argument("--max-lines", type=int, default=40, help="lines of text shown per fragment")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if args.home:
        os.environ["GD_ASSETS_HOME"] = args.home

    truth = json.loads(Path(args.truth).read_text(encoding="utf-8"))
    truth_units: list[Unit] = []
    items: list[Item] = []
    for demo in truth["demos"]:
        gd3 = demo["gd3"]
        root = extract(args.mirror, gd3["commit"], gd3["subpath"])
        by_file = gd_items(root, f"gd3/{demo['demo']}")
        attach_scopes(root, [i for file_items in by_file.values() for i in file_items], args.home)
        units, unmatched = match_truth(demo["demo"], demo["functions"], by_file)
        for row in unmatched:
            if row["status"] in SCORED:
                print(f"warning: {demo['demo']}/{row['path']}::{row['function']} ({row['status']}) matches no "
                      "fragment and is not scored", file=sys.stderr)
        truth_units += units
        items += [i for file_items in by_file.values() for i in file_items]

    gd4_root = extract(args.mirror, args.gd4_ref)
    gd4_by_file = gd_items(gd4_root, "gd4")
    if args.limit_gd4 is not None:
        gd4_by_file = dict(list(gd4_by_file.items())[: args.limit_gd4])
    gd4_units = [u for path, file_items in gd4_by_file.items()
                 for u in file_units("gd4", path, file_items).values()]
    gd4_items = [i for file_items in gd4_by_file.values() for i in file_items]
    attach_scopes(gd4_root, gd4_items, args.home)
    items += gd4_items

    # (label, judge, read in project context)
    runs = [("baseline", "baseline", False)]
    if args.judge != "baseline":
        runs += [(f"{args.judge} (names)", args.judge, False), (args.judge, args.judge, True)]
    judge_names = [label for label, _, _ in runs]
    evidence = None
    if len(runs) > 1:
        evidence = EvidenceSource(args.home, cache_root(), retrieval=not args.no_retrieval)
    results, judgements_by = {}, {}
    for name, judge_name, in_context in runs:
        started = time.monotonic()
        judge = load_judge(judge_name, home=args.home, corpus_dir=args.corpus_dir)
        judgements = run_judge(judge, items, evidence, context=in_context)
        judgements_by[name] = judgements
        results[name] = score(truth_units, gd4_units, gd4_items, judgements)
        results[name]["seconds"] = round(time.monotonic() - started, 1)
        results[name]["model"] = getattr(judge, "model", "")

    print(f"\ndevset: {len(truth_units)} truth units of {len(truth['demos'])} demos; Godot 4 tree {args.gd4_ref}: "
          f"{len(gd4_by_file)} .gd files, {len(gd4_units)} functions, {len(gd4_items)} fragments")
    if evidence is not None:
        print(f"evidence: {evidence.description}")
    print("judges: " + ", ".join(f"{n} ({results[n]['model']}, {results[n]['seconds']}s)" for n in judge_names))
    print()
    print_table(results)
    per_demo_table(truth_units, judgements_by)
    for name in judge_names:
        print(f"\n{name}: most frequent reasons of false flags on Godot 4 code")
        for reason, count in reason_counts(gd4_units, judgements_by[name]):
            print(f"  {count:4}  {reason}")
    if args.verbose:
        for name in judge_names[-1:]:
            list_errors(name, truth_units, gd4_units, judgements_by[name], args.max_lines)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
