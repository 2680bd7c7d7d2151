"""What Godot 4.6.3 says about real Godot 3 -> 4 ports: our migrated copy, Godot's `--convert-3to4` and the
human port, side by side (scripts failing, scenes failing to load, properties dropped, input actions
without a key, config_version), per project and pooled, with the code `gd-assets verify` runs.

Per port: the Godot 3 tree and the human port are extracted from a local git mirror with their binary
files (`trees.extract`; blobs of 4 MiB and more are absent from mirrors); ours is `gd-assets migrate`
run for real (a data home under the cache, `GD_ASSETS_CORPUS_HOME` = `--home`); the converter's is
`godot --convert-3to4` on a copy (cached by commit). All three are verified with `gd_assets.core.verify`.
Nothing is written into the repository.

Run: python eval/godot4_ports.py --home CORPUS_HOME --godot GODOT4 [--port NAME ...] [--json out.json] [--verbose]
Errors of missing binary files (images, sounds, models the mirror lacks) are counted apart.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from trees import cache_root, extract

from gd_assets.core import engines, verify

MIRRORS = "/work/.mirror"
# name: (mirror, Godot 3 commit, the human port's commit, project folder)
PORTS = {
    "tps-demo": ("godotengine+tps-demo", "0abde438b276", "f41444c0bf", ""),
    "pixelorama": ("Orama-Interactive+Pixelorama", "b2c157fa07", "91bfef16b3", ""),
    "lorien": ("mbrlabs+Lorien", "2f4f18992567", "238af68c7a2a", "lorien"),
    "escoria": ("godot-escoria+escoria-demo-game", "0b7193c38bf7", "c17c019a5eaa", ""),
    "material-maker": ("RodZill4+material-maker", "112a08245294", "1c5bfcc120c0", ""),
    "retrohub": ("retrohub-org+retrohub", "61d8ca43b43c", "5339f568b300", ""),
    "arrow": ("mhgolkar+Arrow", "1f9e838eaa66", "5b963114cbbf", ""),
    "shotcaller": ("spicylobstergames+shotcaller-godot", "267aa0a7ffba", "1effa42543c5", "prototype"),
    "sonic-worlds-next": ("Techokami+SonicWorldsNext", "d5ddabb731fe", "684912497ea3", "Source"),
}
# Ports never tuned on: picked before any rule was written for them and measured apart, they stand for the next
# user's game (no rule may be written from what they fail on). Same shape as PORTS.
HELD_OUT = {
    "oxben-tower-defense": ("oxben+TowerDefense", "c263893f0796", "aad43ed30363", "TowerDefense"),
    "youtd2": ("Praytic+youtd2", "e3467504d3b1", "8d4c8e671995", ""),
    "grand-strategy": ("SamTheBlow+grand-strategy-game", "143fc488fdea", "bbdf151e5e4d", "GrandStrategyGame"),
    "sourceofmana": ("sourceofmana+sourceofmana", "8f9e7d5aac45", "131d5a7266ce", ""),
    "simple-train": ("moonbench+simple-godot-train", "d7eb33c678ba", "b38d1192f1ed", ""),
    "godot-chess": ("andrew-wilkes+godot-chess", "1effee773e8a", "4e5dccb8bee9", "src"),
    "tactical-rpg": ("ramaureirac+godot-tactical-rpg", "8e259dbc25b5", "9ab5710dd016", ""),
    "goat": ("miskatonicstudio+goat", "7ebd96092264", "47772cc9c462", ""),
}
SETS = {"tuned": PORTS, "held-out": HELD_OUT}
COLUMNS = ("ours", "converter", "port")


def tree(mirror: str, ref: str, subpath: str) -> Path:
    """The project folder of a commit, binaries included (their own cache beside the plain trees)."""
    saved = os.environ.get("GD_EVAL_CACHE")
    os.environ["GD_EVAL_CACHE"] = str(cache_root().with_name(cache_root().name + "-full"))
    try:
        return extract(f"{MIRRORS}/{mirror}/repo", ref, subpath, skip_binaries=False)
    finally:
        if saved is None:
            os.environ.pop("GD_EVAL_CACHE")
        else:
            os.environ["GD_EVAL_CACHE"] = saved


def converted(godot: engines.Godot, name: str, source: Path, commit: str) -> Path:
    """`--convert-3to4` of a copy of `source`, cached by commit."""
    out = cache_root() / "converted" / f"{name}-{commit}"
    if (out / ".converted").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(source, out, ignore=shutil.ignore_patterns(".godot", ".git"))
    with tempfile.TemporaryDirectory() as home:
        status, text = godot.run(["--path", str(out), "--convert-3to4"], Path(home), 1800)
    if status != 0:
        print(f"warning: {name}: --convert-3to4 exited with {status}: {text.strip().splitlines()[-1:]}",
              file=sys.stderr)
    (out / ".converted").write_text(commit + "\n")
    return out


def cli(label: str, corpus_home: str, *args: str) -> dict:
    """A `gd-assets ... --json` command in the data home of `label` (one per version compared)."""
    env = dict(os.environ, GD_ASSETS_HOME=str(cache_root() / f"ours-home-{label}"), GD_ASSETS_CORPUS_HOME=corpus_home)
    env.pop("DAGSTER_HOME", None)
    done = subprocess.run([sys.executable, "-m", "gd_assets.cli", *args, "--json"], env=env, capture_output=True,
                          text=True)
    if done.returncode:
        raise SystemExit(f"gd-assets {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def ours(name: str, source: Path, corpus_home: str, label: str) -> tuple[Path, dict]:
    """`gd-assets migrate` of the Godot 3 tree; returns the migrated copy and the migration document."""
    out = cache_root() / "ours" / label / name
    facts = cli(label, corpus_home, "migrate", str(source), "--project", name, "--out", str(out))
    print(f"{name}: migrated: {facts['files_changed']} files changed, {len(facts['edits'])} edits, "
          f"{len(facts['manual'])} manual items", file=sys.stderr)
    return out, facts


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n")


def closure(name: str, source: Path, out: Path, facts: dict, corpus_home: str, label: str) -> dict:
    """The copy analysed again as a new project: its verdict, and the fragments still judged to need
    migration that no manual item of the first run covers (line ranges mapped back through the patch)."""
    first = cli(label, corpus_home, "analyze", str(source), "--project", name)
    again = cli(label, corpus_home, "analyze", str(out), "--project", f"{name}-copy")
    manual: dict[str, list[tuple[int, int]]] = {}
    for m in facts["manual"]:
        manual.setdefault(m["path"], []).append((m["start_line"], m["end_line"]))
    back = {new: old for old, new in facts.get("renamed", {}).items()}
    maps: dict[str, dict[int, int]] = {}
    uncovered = []
    flagged = [f for f in again["fragments"] if f["migration_needed"]]
    for frag in flagged:
        path = back.get(frag["path"], frag["path"])
        if path not in maps:
            maps[path] = verify.line_map(_text(source / path), _text(out / frag["path"]))
        a, b = maps[path].get(frag["start_line"], 0), maps[path].get(frag["end_line"], 0)
        if not any(x <= b and a <= y for x, y in manual.get(path, ())):
            uncovered.append({"key": frag["key"], "path": frag["path"], "lines": [frag["start_line"], frag["end_line"]],
                              "rationale": frag["rationale"]})
    return {"verdict_first": first["verdict"], "flagged_first": sum(f["migration_needed"] for f in first["fragments"]),
            "verdict_copy": again["verdict"], "flagged_copy": len(flagged), "uncovered": uncovered}


def figures(report: verify.Report) -> dict:
    f = report.figures()
    f["node_properties_dropped"] = sum(1 for p in report.problems if p.kind == "property"
                                       and not p.property.startswith("["))
    f["resource_properties_dropped"] = f["properties_dropped"] - f["node_properties_dropped"]
    f["node_properties_dropped_by_scene"] = f["node_properties_dropped"] - f.get("properties_dropped_with_their_script", 0)
    return f


ROWS = [("scripts failing", "scripts_failing", "scripts"), ("scenes failing to load", "scenes_failing", "scenes"),
        ("node properties dropped", "node_properties_dropped", None),
        ("  of which not for a failing script", "node_properties_dropped_by_scene", None),
        ("resource properties dropped", "resource_properties_dropped", None),
        ("input actions without a key", "input_actions_without_key", "input_actions"),
        ("missing binary assets (not counted)", "missing_assets", None)]


def print_table(results: dict[str, dict[str, dict]]) -> None:
    pooled: dict[str, Counter] = {c: Counter() for c in COLUMNS}
    for name, cols in results.items():
        print(f"\n{name}  (config_version: " + ", ".join(f"{c} {cols[c]['config_version']}" for c in COLUMNS) + ")")
        for label, key, total in ROWS:
            cells = []
            for c in COLUMNS:
                f = cols[c]
                pooled[c][key] += f[key]
                if total:
                    pooled[c][total] += f[total]
                cells.append(f"{f[key]}/{f[total]}" if total else str(f[key]))
            print(f"  {label:<38}" + "".join(f"{cell:>14}" for cell in cells))
    print("\npooled" + " " * 34 + "".join(f"{c:>14}" for c in COLUMNS))
    for label, key, total in ROWS:
        cells = [f"{pooled[c][key]}/{pooled[c][total]}" if total else str(pooled[c][key]) for c in COLUMNS]
        print(f"  {label:<38}" + "".join(f"{cell:>14}" for cell in cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", required=True, help="a data home holding the built corpus (corpora.duckdb, index/)")
    parser.add_argument("--godot", help="a Godot 4 executable (default: as `gd-assets verify` finds one)")
    parser.add_argument("--port", action="append", choices=sorted({*PORTS, *HELD_OUT}),
                        help="only these ports (repeatable)")
    parser.add_argument("--set", choices=sorted(SETS), default="tuned",
                        help="the ports tuned on (default) or those never tuned on")
    parser.add_argument("--json", type=Path, help="write every figure and problem here")
    parser.add_argument("--skip", action="append", default=[], choices=COLUMNS, help="leave a column out")
    parser.add_argument("--label", default="current", help="names our data home and copies (compare versions)")
    parser.add_argument("--closure", action="store_true",
                        help="also analyse our copy again: verdict, and flagged fragments no manual item covers")
    args = parser.parse_args(argv)
    godot = engines.find_godot(args.godot)
    results: dict[str, dict[str, dict]] = {}
    problems: dict[str, dict[str, list]] = {}
    closures: dict[str, dict] = {}
    ports = {**PORTS, **HELD_OUT}
    for name in args.port or SETS[args.set]:
        mirror, ref3, ref4, sub = ports[name]
        gd3, gd4 = tree(mirror, ref3, sub), tree(mirror, ref4, sub)
        results[name], problems[name] = {}, {}
        for column in COLUMNS:
            if column in args.skip:
                results[name][column] = Counter()
                continue
            if column == "ours":
                folder, facts = ours(name, gd3, args.home, args.label)
                if args.closure:
                    closures[name] = closure(name, gd3, folder, facts, args.home, args.label)
                    c = closures[name]
                    print(f"{name} closure: copy {c['verdict_copy']}, {c['flagged_copy']} flagged, "
                          f"{len(c['uncovered'])} outside a manual item (first run: {c['flagged_first']} flagged)",
                          file=sys.stderr)
            else:
                folder = converted(godot, name, gd3, ref3) if column == "converter" else gd4
            report, _ = verify.verify(folder, godot)
            results[name][column] = figures(report)
            problems[name][column] = [vars(p) for p in report.problems] + [
                {"path": p, "kind": "failing", "message": e} for p, e in report.failing.items()]
            print(f"{name} {column}: {results[name][column]}", file=sys.stderr)
    print_table(results)
    if closures:
        print("\nclosure (our copy analysed again)      verdict  flagged  outside a manual item  first run flagged")
        for name, c in closures.items():
            print(f"  {name:<36} {c['verdict_copy']:>8} {c['flagged_copy']:>8} {len(c['uncovered']):>22} "
                  f"{c['flagged_first']:>18}")
        total = sum(c["flagged_first"] for c in closures.values())
        left = sum(len(c["uncovered"]) for c in closures.values())
        print(f"  pooled: {left} of {total} first-run flagged fragments ({left / max(total, 1):.1%}) left uncovered")
    if args.json:
        args.json.write_text(json.dumps({"figures": results, "problems": problems, "closure": closures}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
