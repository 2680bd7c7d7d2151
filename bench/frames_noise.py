"""The noise floor of the frame comparison: what SSIM identical or near-identical content gets when the two engines
draw it (a sprite, a colour rect or a background tile of the original in Godot 3.6 beside the same in Godot 4.6).

Each pair is a Godot 3 project and a Godot 4 project with the same content (a human port of a demo, or a copy a
person fixed), both played as `verify --run` plays them (the same seeded input, two runs each). Every region and
tile that `gd_assets.core.frames` judges is scored, and the scores are printed as quantiles beside the floors in
force (PIXEL_FLOOR, TILE_FLOOR), with the share of scores under each: the floors must sit under what identical
content scores, and above what a real difference scores.

Run: python bench/frames_noise.py [--demos MIRROR_GIT_DIR] [--demo 2d/pong ...] [--pair GD3 GD4 ...] [--frames 600]
(`--demos`: godotengine/godot-demo-projects, its `3.x` branch beside `master`.)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from gd_assets.core import display, engines, frames, game_run, play, sandbox, verify

DEMOS = ("2d/pong", "2d/dodge_the_creeps", "2d/platformer", "2d/kinematic_character", "2d/physics_platformer",
         "2d/finite_state_machine", "2d/role_playing_game", "2d/isometric")
CACHE = Path(tempfile.gettempdir()) / "gd-frames-noise"


def extract(mirror: str, ref: str, sub: str, dest: Path) -> Path:
    if not (dest / "project.godot").is_file():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "--git-dir", mirror, "archive", f"{ref}:{sub}"], capture_output=True, check=True)
        subprocess.run(["tar", "x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def scores(original: list[Path], copy: list[Path]) -> tuple[list[float], list[float], dict]:
    """Every content region's and tile's score (floors lifted past 1 so that each is reported), and the findings
    at the floors in force."""
    kept = frames.PIXEL_FLOOR, frames.TILE_FLOOR
    found = frames.compare_plays(original, copy, CACHE / "pictures")["findings"]
    frames.PIXEL_FLOOR = frames.TILE_FLOOR = 1.01
    try:
        seen = frames.compare_plays(original, copy, CACHE / "pictures")
    finally:
        frames.PIXEL_FLOOR, frames.TILE_FLOOR = kept
    regions = [f["score"] for x in seen["frames"] for f in x["findings"] if f["kind"] == "pixels"]
    tiles = [f["score"] for x in seen["frames"] for f in x["findings"] if f["kind"] == "tile"]
    return regions, tiles, found


def quantiles(values: list[float], floor: float) -> str:
    if not values:
        return "none"
    v = np.asarray(values)
    q = np.quantile(v, [0.0, 0.01, 0.05, 0.5])
    return (f"n={len(v):<5} min {q[0]:.3f}  p1 {q[1]:.3f}  p5 {q[2]:.3f}  median {q[3]:.3f}  "
            f"under the floor ({floor}) {np.mean(v < floor):.1%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--demos", help="godot-demo-projects' git directory (3.x beside master)")
    parser.add_argument("--demo", action="append", help=f"demos to take (default: {', '.join(DEMOS)})")
    parser.add_argument("--pair", nargs=2, action="append", default=[], metavar=("GD3", "GD4"))
    parser.add_argument("--frames", type=int, default=600)
    args = parser.parse_args(argv)
    pairs = [(Path(a), Path(b)) for a, b in args.pair]
    if args.demos:
        for demo in args.demo or DEMOS:
            name = demo.replace("/", "-")
            pairs.append((extract(args.demos, "3.x", demo, CACHE / "demos" / name / "gd3"),
                          extract(args.demos, "master", demo, CACHE / "demos" / name / "gd4")))
    godot, godot3 = engines.find_godot(None), engines.find_godot(None, major="3")
    runner, screen, box = engines.find_renderer3(godot3), display.find_display(), sandbox.find_sandbox()
    all_regions: list[float] = []
    all_tiles: list[float] = []
    for gd3, gd4 in pairs:
        actions = verify.input_actions((gd3 / "project.godot").read_text(encoding="utf-8", errors="replace"))
        settings = game_run.PlaySettings(frames=args.frames, events=tuple(play.policy(actions, args.frames)))
        original = [Path(p.folder) for p in verify.played(runner, gd3, settings, screen, box, CACHE / "plays", godot3)]
        copy = [Path(p.folder) for p in verify.played(godot, gd4, settings, screen, box, CACHE / "plays")]
        regions, tiles, found = scores(original, copy)
        all_regions += regions
        all_tiles += tiles
        print(f"{gd3.parent.name:<28} findings at the floors: {found or 'none'}")
        print(f"    content regions  {quantiles(regions, frames.PIXEL_FLOOR)}")
        print(f"    tiles            {quantiles(tiles, frames.TILE_FLOOR)}", flush=True)
    print(f"\nall {len(pairs)} pairs")
    print(f"    content regions  {quantiles(all_regions, frames.PIXEL_FLOOR)}")
    print(f"    tiles            {quantiles(all_tiles, frames.TILE_FLOOR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
