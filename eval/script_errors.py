"""Godot 4's compiler as the oracle for the rewrite: each real port's Godot 3 tree migrated in one
process with the pipeline's core calls (ingest, slicing, project context, cues, the evidence judge,
the rewrite; no Dagster and no retrieval: the evidence judge decides on its markers alone), compiled
and loaded by Godot 4 with `gd_assets.core.verify`, and every script error that is not a cascade
listed with its fragment, its judgement and the edits on its line, by cause:

  judged neutral / judged godot4          a judge miss (the fragment was not rewritten)
  edited line                             a rewrite fault (an edit there did not give Godot 4 code)
  untouched line of a flagged fragment    a missing rule
  left to people                          a manual item covers it

Run: python eval/script_errors.py --home CORPUS_HOME [--port NAME ...] [--godot GODOT4] [--top N] [--json out.json]
(ports as in godot4_ports.py; their trees are extracted from the local mirrors). Writes nothing into
the repository: copies go under the eval cache.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from godot4_ports import HELD_OUT, PORTS, SETS, tree
from trees import cache_root

from gd_assets.core import engines, verify
from gd_assets.core.migration import migrated_path
from gd_assets.core.quick_migrate import migrate_core
from gd_assets.core.rewrite import load_rules

# Errors that only repeat another script's failure (its dependents fail with these).
CASCADE = re.compile(r"Failed to load script|Could not resolve class|Could not preload|Could not parse global class|"
                     r"Failed to compile depended|because of a parser error|Could not resolve (super )?class|"
                     r"Could not find base class|Could not resolve script|Could not resolve external class member|"
                     r"super class inheritance")


def errors_by_cause(attributed: list[dict], failing: dict[str, str]) -> dict[str, Counter]:
    """Script errors of failing scripts, cascades left out, counted by cause and message shape."""
    out: dict[str, Counter] = defaultdict(Counter)
    for a in attributed:
        if a["kind"] != "script" or a["path"] not in failing or CASCADE.search(a["message"]):
            continue
        message = a["message"].replace("Parse Error: ", "").replace(" (Warning treated as error.)", "")
        out[a["cause"]][re.sub(r'variable "[^"]*"', 'variable "v"', message)[:110]] += 1
    return out


def root_causes(attributed: list[dict], failing: dict[str, str]) -> Counter:
    """Failing scripts by their own first error (not a cascade), by message shape: files per shape."""
    first: dict[str, str] = {}
    for a in attributed:
        if a["kind"] == "script" and a["path"] in failing and not CASCADE.search(a["message"]):
            message = a["message"].replace("Parse Error: ", "").replace(" (Warning treated as error.)", "")
            first.setdefault(a["path"], re.sub(r'(variable|constant) "[^"]*"', r'\1 "…"', message)[:100])
    shapes = Counter(first.values())
    shapes["(only through another script)"] = sum(1 for p in failing if p.endswith(".gd") and p not in first)
    return shapes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", required=True, help="a data home holding the built corpus (corpora.duckdb)")
    parser.add_argument("--godot", help="a Godot 4 executable (default: as `gd-assets verify` finds one)")
    parser.add_argument("--port", action="append", choices=sorted({*PORTS, *HELD_OUT}),
                        help="only these ports (repeatable)")
    parser.add_argument("--set", choices=sorted(SETS), default="tuned",
                        help="the ports tuned on (default) or those never tuned on")
    parser.add_argument("--top", type=int, default=15, help="error shapes shown per cause")
    parser.add_argument("--json", type=Path, help="write every attributed error here")
    args = parser.parse_args(argv)
    godot = engines.find_godot(args.godot)
    rules = load_rules(str(Path(args.home) / "corpora.duckdb"))
    totals, causes, shapes, dump = Counter(), defaultdict(Counter), Counter(), {}
    print(f"{'project':<20}{'scripts failing':>18}{'of them only through another':>30}")
    ports = {**PORTS, **HELD_OUT}
    for name in args.port or SETS[args.set]:
        mirror, ref3, _, sub = ports[name]
        out = cache_root() / "compile-check" / name
        frags, judged, rewrites, originals, migrated = migrate_core(name, tree(mirror, ref3, sub), out, rules)
        report, _ = verify.verify(out, godot)
        renames = {migrated_path(p): p for p in originals if migrated_path(p) != p}
        attributed = verify.attribute(report.problems, originals, migrated, renames, frags, rewrites, judged)
        failing = {p: m for p, m in report.failing.items() if p.endswith(".gd")}
        own = root_causes(attributed, failing)
        cell = f"{len(failing)}/{report.scripts}"
        print(f"{name:<20}{cell:>18}{own['(only through another script)']:>30}")
        totals["failing"] += len(failing)
        totals["scripts"] += report.scripts
        for cause, counts in errors_by_cause(attributed, failing).items():
            causes[cause].update(counts)
        shapes.update(own)
        dump[name] = {"figures": report.figures(), "errors": attributed}
    cell = f"{totals['failing']}/{totals['scripts']}"
    print(f"{'pooled':<20}{cell:>18}{shapes['(only through another script)']:>30}"
          f"  ({totals['failing'] / max(totals['scripts'], 1):.1%})")
    print("\nfailing scripts by their first own error (files)")
    for shape, n in shapes.most_common(args.top + 1):
        print(f"  {n:>5}  {shape}")
    for cause, counts in sorted(causes.items(), key=lambda kv: -sum(kv[1].values())):
        print(f"\n{cause}: {sum(counts.values())} errors")
        for message, n in counts.most_common(args.top):
            print(f"  {n:>5}  {message}")
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
