"""The noise floor of the frame comparison: what SSIM identical or near-identical content gets when the two engines
draw it (a sprite, a colour rect or a background tile of the original in Godot 3.6 beside the same in Godot 4.6).

Each pair is a Godot 3 project and a Godot 4 project with the same content, both played as `verify --run` plays them
(the same seeded input, two runs each): first the calibration scene this script writes for both engines (sprites
turned, scaled and tinted, a polygon, a line, text in one TrueType font at one size, a sprite a script moves), then
the pairs given, and the human ports of Godot's 2D demos (which also differ where their porters changed them: an
upper bound, not a floor). Every region and
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


# The same content written for each engine: a background, sprites (turned, scaled, tinted), a polygon, a line,
# text in one TrueType font at one size, and a sprite a script moves at a fixed speed.
_SCENE = {3: """[gd_scene load_steps=5 format=2]

[ext_resource path="res://tex.png" type="Texture" id=1]
[ext_resource path="res://font.ttf" type="DynamicFontData" id=2]
[ext_resource path="res://Mover.gd" type="Script" id=3]

[sub_resource type="DynamicFont" id=1]
size = 24
font_data = ExtResource( 2 )

[node name="Main" type="Node2D"]

[node name="Background" type="ColorRect" parent="."]
margin_right = 640.0
margin_bottom = 360.0
color = Color( 0.15, 0.2, 0.3, 1 )

{sprites}
[node name="Label" type="Label" parent="."]
margin_left = 20.0
margin_top = 290.0
margin_right = 400.0
margin_bottom = 330.0
custom_fonts/font = SubResource( 1 )
text = "Calibration 0123 AaBbCc"
""", 4: """[gd_scene load_steps=5 format=3]

[ext_resource path="res://tex.png" type="Texture2D" id="1"]
[ext_resource path="res://font.ttf" type="FontFile" id="2"]
[ext_resource path="res://Mover.gd" type="Script" id="3"]

[node name="Main" type="Node2D"]

[node name="Background" type="ColorRect" parent="."]
offset_right = 640.0
offset_bottom = 360.0
color = Color(0.15, 0.2, 0.3, 1)

{sprites}
[node name="Label" type="Label" parent="."]
offset_left = 20.0
offset_top = 290.0
offset_right = 400.0
offset_bottom = 330.0
theme_override_fonts/font = ExtResource("2")
theme_override_font_sizes/font_size = 24
text = "Calibration 0123 AaBbCc"
"""}
_SPRITES = """[node name="Plain" type="{sprite}" parent="."]
position = Vector2( 80, 80 )
texture = ExtResource( {tex} )

[node name="Turned" type="{sprite}" parent="."]
position = Vector2( 200, 80 )
rotation = 0.5
texture = ExtResource( {tex} )

[node name="Scaled" type="{sprite}" parent="."]
position = Vector2( 360, 100 )
scale = Vector2( 2, 2 )
texture = ExtResource( {tex} )

[node name="Tinted" type="{sprite}" parent="."]
modulate = Color( 1, 0.5, 0.5, 1 )
position = Vector2( 520, 80 )
texture = ExtResource( {tex} )

[node name="Shape" type="Polygon2D" parent="."]
color = Color( 0.9, 0.8, 0.2, 1 )
polygon = {polygon}( 40, 200, 140, 180, 100, 260 )

[node name="Line" type="Line2D" parent="."]
points = {polygon}( 180, 200, 260, 240, 340, 190, 420, 250 )
width = 4.0
default_color = Color( 0.4, 1, 0.6, 1 )

[node name="Mover" type="{sprite}" parent="."]
position = Vector2( 60, 330 )
texture = ExtResource( {tex} )
script = ExtResource( {script} )
"""
_MOVER = {3: "extends Sprite\n\n\nfunc _physics_process(delta):\n\tposition.x += 60 * delta\n",
          4: "extends Sprite2D\n\n\nfunc _physics_process(delta):\n\tposition.x += 60 * delta\n"}
_SETTINGS = {3: 'config_version=4\n\n[application]\n\nrun/main_scene="res://Main.tscn"\n\n[display]\n\n'
                'window/size/width=640\nwindow/size/height=360\n',
             4: 'config_version=5\n\n[application]\n\nrun/main_scene="res://Main.tscn"\n\n[display]\n\n'
                'window/size/viewport_width=640\nwindow/size/viewport_height=360\n'}


def calibration(dest: Path, font: Path) -> tuple[Path, Path]:
    """The same scene for Godot 3 and Godot 4 (identical content: what both engines draw the same way)."""
    from PIL import Image, ImageDraw

    texture = Image.new("RGBA", (48, 48), (0, 0, 0, 0))
    draw = ImageDraw.Draw(texture)
    for i in range(0, 48, 8):
        draw.rectangle([i, 0, i + 3, 47], fill=(220, 90, 60, 255))
    draw.ellipse([8, 8, 40, 40], fill=(80, 160, 240, 255), outline=(255, 255, 255, 255), width=3)
    out = []
    for major in (3, 4):
        folder = dest / f"gd{major}"
        folder.mkdir(parents=True, exist_ok=True)
        texture.save(folder / "tex.png")
        (folder / "font.ttf").write_bytes(font.read_bytes())
        sprites = _SPRITES.format(sprite="Sprite" if major == 3 else "Sprite2D", tex="1" if major == 3 else '"1"',
                                  script="3" if major == 3 else '"3"',
                                  polygon="PoolVector2Array" if major == 3 else "PackedVector2Array")
        if major == 4:
            sprites = sprites.replace("( ", "(").replace(" )", ")")
        (folder / "Main.tscn").write_text(_SCENE[major].replace("{sprites}", sprites))
        (folder / "Mover.gd").write_text(_MOVER[major])
        (folder / "project.godot").write_text(_SETTINGS[major])
        out.append(folder)
    return out[0], out[1]


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
    parser.add_argument("--font", type=Path, default=Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
                        help="the TrueType font of the calibration scene")
    args = parser.parse_args(argv)
    pairs = [calibration(CACHE / "calibration", args.font)] + [(Path(a), Path(b)) for a, b in args.pair]
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
