"""Real Godot 3 games run, whole with their assets: the original's main scene in Godot 3.6, and in Godot
4.6 our migrated copy, `--convert-3to4`'s and the human port, each for N frames at a fixed frame rate and
seed with no input (`gd_assets.core.game_run`, what `verify --run` does, sandboxed). Per game and pooled:
runtime errors (unique by file, line and message), crash or hang, and the share of the original's nodes
after N frames each copy has with the same class and script.

A games folder holds one folder per game with `gd3/` (the Godot 3 project at its last Godot 3 commit) and
`gd4/` (the human port's project), binary files included; a `missing3.txt` there lists files the mirror
lacked (they are said, not counted). `git --git-dir MIRROR archive COMMIT:SUBDIR | tar x -C NAME/gd3` makes
one; GAMES below names the commits used. Our copy is `gd-assets migrate` run for real (a data home per
`--label` under the eval cache: use a new label after a change); the original's, the converter's and the
port's runs are cached under the eval cache (the engines do not change between runs of this script).

Run: python eval/game_runs.py --games DIR --home CORPUS_HOME [--game NAME ...] [--label L] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from godot4_ports import converted, ours
from trees import cache_root

from gd_assets.core import engines, game_run, verify
from gd_assets.core.rewrite import load_rules

# name: (repository, Godot 3 commit, the human port's commit, project folder)
GAMES = {
    "arrow": ("mhgolkar/Arrow", "1f9e838eaa66", "5b963114cbbf", ""),
    "defending-todot": ("crystal-bit/defending-todot", "0cf12e4fdd4f", "f364b739aaef", ""),
    "escoria-demo-game": ("godot-escoria/escoria-demo-game", "0b7193c38bf7", "c17c019a5eaa", ""),
    "game-template": ("crystal-bit/godot-game-template", "2105046e0d9b", "f6374b9d8bb8", ""),
    "lorien": ("mbrlabs/Lorien", "2f4f18992567", "238af68c7a2a", "lorien"),
    "open-rpg": ("gdquest-demos/godot-open-rpg", "e181ec3110cf", "88ddc3adc37c", "godot"),
    "retrohub": ("retrohub-org/retrohub", "61d8ca43b43c", "5339f568b300", ""),
    "shotcaller": ("spicylobstergames/shotcaller-godot", "267aa0a7ffba", "1effa42543c5", "prototype"),
    "sonic-worlds-next": ("Techokami/SonicWorldsNext", "d5ddabb731fe", "684912497ea3", "Source"),
    "space-game": ("gdquest-demos/godot-2d-space-game", "145b6204ca03", "d8e72f29fc8d", "project"),
    "starship-olympics": ("notapixelstudio/starship-olympics", "54938a5b9f86", "7326c74136c3", "godot"),
    "tps-demo": ("godotengine/tps-demo", "0abde438b276", "f41444c0bfe6", ""),
    "visual-novel": ("gdquest-demos/godot-2d-visual-novel", "aac8a6eba6dd", "7937f302db10", "godot"),
}
COLUMNS = ("ours", "converter", "port")


def _run(godot: engines.Godot, project: Path, settings: game_run.RunSettings, cache: Path | None,
         original: Path | None = None, godot3: engines.Godot | None = None) -> tuple:
    """verify's run of `project` (and of `original` in Godot 3); cached as JSON when `cache` is given."""
    if cache is not None and cache.is_file():
        return _load(json.loads(cache.read_text())), None
    _report, runs = verify.verify(project, godot, run=settings, original=original, godot3=godot3)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(runs.copy.to_json()))
    return runs.copy, runs.original


def _load(doc: dict) -> game_run.GameRun:
    def phase(p: dict) -> game_run.Phase:
        p = dict(p, errors=[game_run.RunError(**e) for e in p["errors"]], tree=[tuple(n) for n in p["tree"]])
        return game_run.Phase(**p)
    return game_run.GameRun(**dict(doc, main=phase(doc["main"]), scenes=phase(doc["scenes"])))


def figures(run: game_run.GameRun, original: game_run.GameRun, classes) -> dict:
    errors = [asdict(e) for e in run.errors()]
    compared = game_run.compare(original, run, errors, classes)
    return {"runtime_errors": len(errors), "runtime_errors_main": len({e.key() for e in run.main.errors}),
            "new": len(compared["errors_new"]), "ended": run.main.ended, "crashed_or_hung": run.crashed_or_hung(),
            "nodes_matched": compared["nodes_matched"], "nodes_original": compared["nodes_original"],
            "share": compared["nodes_matched_share"], "errors": [f"{e['path']}:{e['line']} {e['message'][:150]}"
                                                                for e in errors]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=Path, required=True, help="one folder per game with gd3/ and gd4/")
    parser.add_argument("--home", required=True, help="a data home holding the built corpus (corpora.duckdb)")
    parser.add_argument("--game", action="append", help="only these games (repeatable)")
    parser.add_argument("--label", default="current", help="names our copies (compare versions)")
    parser.add_argument("--frames", type=int, default=game_run.FRAMES)
    parser.add_argument("--scene-frames", type=int, default=game_run.SCENE_FRAMES)
    parser.add_argument("--skip", action="append", default=[], choices=COLUMNS, help="leave a column out")
    parser.add_argument("--json", type=Path, help="write every figure and error here")
    args = parser.parse_args(argv)
    godot, godot3 = engines.find_godot(None), engines.find_godot(None, major="3")
    rules = load_rules(Path(args.home) / "corpora.duckdb")
    classes = rules.scene_class4
    settings = game_run.RunSettings(frames=args.frames, scene_frames=args.scene_frames)
    names = args.game or sorted(p.name for p in args.games.iterdir() if (p / "gd3" / "project.godot").is_file())
    runs_cache = cache_root() / "game-runs" / f"{godot.version}-{godot3.version}-{args.frames}-{args.scene_frames}"
    results: dict[str, dict] = {}
    for name in names:
        folder = args.games / name
        cached = runs_cache / f"{name}-original.json"
        copy, _facts = ours(name, folder / "gd3", args.home, args.label)
        mine, original = _run(godot, copy, settings, None, folder / "gd3", godot3) if not cached.is_file() else (
            _run(godot, copy, settings, None)[0], _load(json.loads(cached.read_text())))
        if not cached.is_file():
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps(original.to_json()))
        row = {"original": {"ended": original.main.ended, "runtime_errors": len(original.errors()),
                            "crashed_or_hung": original.crashed_or_hung(),
                            "nodes": sum(game_run.tree_keys(original.main.tree, classes, True)[0].values()),
                            "errors": [f"{e.path}:{e.line} {e.message[:150]}" for e in original.errors()]},
               "ours": figures(mine, original, classes)}
        if "converter" not in args.skip:
            conv = converted(godot, name, folder / "gd3", GAMES.get(name, ("", name))[1])
            row["converter"] = figures(_run(godot, conv, settings, runs_cache / f"{name}-converter.json")[0],
                                       original, classes)
        if "port" not in args.skip:
            row["port"] = figures(_run(godot, folder / "gd4", settings, runs_cache / f"{name}-port.json")[0],
                                  original, classes)
        missing = folder / "missing3.txt"
        row["missing3"] = missing.read_text().split("\n") if missing.is_file() and missing.read_text().strip() else []
        results[name] = row
        print_game(name, row)
        shutil.rmtree(copy / ".godot", ignore_errors=True)
    print_pooled(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def _cell(f: dict) -> str:
    bad = "!" if f["crashed_or_hung"] else ""
    share = f"{f['share']:.0%}" if f["share"] is not None else "-"
    return f"{f['runtime_errors']:>4} err {share:>5}{bad}"


def print_game(name: str, row: dict) -> None:
    o = row["original"]
    cols = [c for c in COLUMNS if c in row]
    print(f"{name:<20} original {o['ended']:<11} {o['runtime_errors']:>4} err {o['nodes']:>5} nodes | "
          + " | ".join(f"{c} {_cell(row[c])}" for c in cols)
          + (f"  ({len(row['missing3'])} files missing)" if row["missing3"] else ""), flush=True)


def print_pooled(results: dict[str, dict]) -> None:
    pooled: dict[str, Counter] = {c: Counter() for c in COLUMNS}
    for row in results.values():
        for c in COLUMNS:
            if c not in row:
                continue
            f = row[c]
            pooled[c]["errors"] += f["runtime_errors"]
            pooled[c]["crash_or_hang"] += bool(f["crashed_or_hung"])
            pooled[c]["matched"] += f["nodes_matched"]
            pooled[c]["nodes"] += f["nodes_original"]
            pooled[c]["share90"] += (f["share"] or 0) >= 0.9
            if c == "ours" and "port" in row:
                pooled[c]["at_most_port"] += f["runtime_errors"] <= row["port"]["runtime_errors"]
    print(f"\npooled over {len(results)} games")
    for c, p in pooled.items():
        if p["nodes"]:
            print(f"  {c:<10} runtime errors {p['errors']:>5}  games crashed or hung {p['crash_or_hang']}  "
                  f"nodes matched {p['matched']}/{p['nodes']} ({p['matched'] / p['nodes']:.0%})  "
                  f"games >=90% nodes {p['share90']}" + (f"  errors <= port's in {p['at_most_port']} games"
                                                          if c == "ours" else ""))


if __name__ == "__main__":
    sys.exit(main())
