"""Real Godot 3 games seen and played beside their copies: the original rendered in Godot 3.6 (godot3-runner) and,
in Godot 4.6, our migrated copy, `--convert-3to4`'s and the human port, each played twice with the same seeded
input (`gd_assets.core.play.policy` of the original's input map) for N frames on a virtual display, sandboxed,
as `verify --run` plays them. Per game and pooled: the share of kept frames that match the original within the
engines' noise (`gd_assets.core.frames`), the first traced frame where a node leaves the original, and how many
nodes do; the kinds of differences found.

A games folder holds one folder per game with `gd3/` and `gd4/` (as for eval/game_runs.py). Plays are kept by
content under the eval cache, so a second run redoes only what changed (our copy, after a change of the rules).

Run: python eval/seen.py --games DIR --home CORPUS_HOME [--game NAME ...] [--label L] [--frames 600] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from game_runs import GAMES
from godot4_ports import HELD_OUT, PORTS, converted, ours
from trees import cache_root

from gd_assets.core import display, engines, frames, game_run, play, sandbox, verify
from gd_assets.core.rewrite import load_rules

COLUMNS = ("ours", "converter", "port")
# Ports whose games rules were written from (the rest stand for the next user's game)
TUNED = {*PORTS, "escoria-demo-game", "sonic-worlds-next", "shotcaller", "lorien", "arrow", "retrohub"}


def plays(godot: engines.Godot, project: Path, settings: game_run.PlaySettings, screen: display.Display,
          box: sandbox.Sandbox, godot3: engines.Godot | None = None) -> list[Path]:
    """The played runs of `project`, kept by content under the eval cache (a Godot 3 project: imported by
    `godot3`, played by its renderer)."""
    runner = engines.find_renderer3(godot3) if godot3 is not None else godot
    return [Path(p.folder) for p in verify.played(runner, project, settings, screen, box, cache_root() / "plays", godot3)]


def figures(seen: dict) -> dict:
    trace = seen["trace"]
    return {"frames": seen["frames_compared"], "matching": seen["frames_matching"],
            "share": seen["frames_matching_share"], "findings": seen["findings"],
            "nodes_differing": seen["nodes_differing"], "nodes": seen["nodes"],
            "first_divergence": trace["first_divergence"], "nodes_diverging": trace["nodes_diverging"],
            "trace_frames": trace["last_frame"], "at_first": [f"{d['node']}: {d['differs']}"[:200]
                                                              for d in trace["nodes_at_first"][:5]],
            "worst": [{"frame": f["frame"], "findings": [x["what"] if not x.get("node") else f"{x['node']}: {x['what']}"
                                                         for x in f["findings"][:5]], "image": f["image"]}
                      for f in seen["frames"] if not f["matches"]][:5]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=Path, required=True, help="one folder per game with gd3/ and gd4/")
    parser.add_argument("--home", required=True, help="a data home holding the built corpus (corpora.duckdb)")
    parser.add_argument("--game", action="append", help="only these games (repeatable)")
    parser.add_argument("--label", default="current", help="names our copies (compare versions)")
    parser.add_argument("--frames", type=int, default=game_run.FRAMES)
    parser.add_argument("--skip", action="append", default=[], choices=COLUMNS, help="leave a column out")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args(argv)
    godot, godot3 = engines.find_godot(None), engines.find_godot(None, major="3")
    surface = load_rules(Path(args.home) / "corpora.duckdb").surface
    screen, box = display.find_display(), sandbox.find_sandbox()
    names = args.game or sorted(p.name for p in args.games.iterdir() if (p / "gd3" / "project.godot").is_file())
    results: dict[str, dict] = {}
    for name in names:
        folder = args.games / name
        started = time.monotonic()
        actions = verify.input_actions((folder / "gd3" / "project.godot").read_text(encoding="utf-8", errors="replace"))
        settings = game_run.PlaySettings(frames=args.frames, events=tuple(play.policy(actions, args.frames)))
        original = plays(godot, folder / "gd3", settings, screen, box, godot3)
        copies = {}
        if "ours" not in args.skip:
            copies["ours"] = ours(name, folder / "gd3", args.home, args.label)[0]
        if "converter" not in args.skip:
            commit = (GAMES.get(name) or PORTS.get(name) or HELD_OUT.get(name) or ("", name))[1]
            copies["converter"] = converted(godot, name, folder / "gd3", commit)
        if "port" not in args.skip:
            copies["port"] = folder / "gd4"
        row = {"set": "tuned" if name in TUNED else "never tuned",
               "original_ended": json.loads((original[0] / "play.json").read_text())["ended"]}
        for column, project in copies.items():
            played = plays(godot, project, settings, screen, box)
            out = cache_root() / "seen" / args.label / name / column
            shutil.rmtree(out, ignore_errors=True)
            row[column] = figures(frames.compare_plays(original, played, out,
                                                       laid_out=lambda cls: "Control" in surface.ancestors("3", cls)))
            row[column]["ended"] = json.loads((played[0] / "play.json").read_text())["ended"]
        row["seconds"] = round(time.monotonic() - started, 1)
        results[name] = row
        print_game(name, row)
    print_pooled(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def _cell(f: dict) -> str:
    share = f"{f['share']:.0%}" if f["share"] is not None else "-"
    first = f["first_divergence"] if f["first_divergence"] is not None else "-"
    return f"{f['matching']:>2}/{f['frames']:<2} {share:>4} {f['nodes_differing']:>3} nodes leaves@{first!s:<4}"


def print_game(name: str, row: dict) -> None:
    print(f"{name:<20} {row['set']:<11} original {row['original_ended']:<11} | "
          + " | ".join(f"{c} {_cell(row[c])}" for c in COLUMNS if c in row) + f"  ({row['seconds']} s)", flush=True)
    for column in COLUMNS:
        if column in row and row[column]["at_first"]:
            print(f"    {column}: first leaves at {row[column]['first_divergence']}: " + "; ".join(row[column]["at_first"][:3]))


def print_pooled(results: dict[str, dict]) -> None:
    for group in ("never tuned", "tuned", "all"):
        rows = [r for r in results.values() if group == "all" or r["set"] == group]
        if not rows:
            continue
        print(f"\n{group}: {len(rows)} games")
        for column in COLUMNS:
            cells = [r[column] for r in rows if column in r]
            if not cells:
                continue
            frames_all, matching = sum(c["frames"] for c in cells), sum(c["matching"] for c in cells)
            within = sum(c["first_divergence"] is None for c in cells)
            print(f"  {column:<10} frames matching {matching}/{frames_all}"
                  + (f" ({matching / frames_all:.0%})" if frames_all else "")
                  + f"  nodes differing {sum(c['nodes_differing'] for c in cells)}"
                  + f"  traces within noise throughout: {within} of {len(cells)} games")
        if all("ours" in r and "port" in r for r in rows):
            at_least = sum((r["ours"]["share"] or 0) >= (r["port"]["share"] or 0) for r in rows)
            print(f"  ours matches at least as often as the port in {at_least} of {len(rows)} games")


if __name__ == "__main__":
    sys.exit(main())
