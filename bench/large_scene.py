"""`gd-assets analyze` on a project holding one large scene: seconds and peak memory at a few sizes.

    GD_ASSETS_CORPUS_HOME=/path/to/built/corpus python bench/large_scene.py [--nodes 7500,15000,30000]

Each size is a generated Godot 3 project (`project.godot` and one `main.tscn` of N nodes: Node2D and
Sprite nodes with Godot 3 properties, as an exported level would be), analysed from nothing in its own
data home by `gd-assets analyze` in a subprocess, as a user runs it. Time should grow linearly with N:
the figures print seconds per 1,000 nodes. Peak memory is the subprocess's maximum resident set
(`ru_maxrss` of the children so far: sizes run in ascending order), which is what a user needs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def write_project(folder: Path, nodes: int) -> None:
    """A Godot 3 project of one scene with `nodes` nodes under one root."""
    folder.mkdir(parents=True)
    (folder / "project.godot").write_text('config_version=4\n\n[application]\n\nconfig/name="Level"\n'
                                          'run/main_scene="res://main.tscn"\n')
    lines = ['[gd_scene load_steps=2 format=2]', '', '[ext_resource path="res://icon.png" type="Texture" id=1]',
             '', '[node name="Level" type="Node2D"]', '']
    for i in range(nodes - 1):
        if i % 2:
            lines += [f'[node name="Tile{i}" type="Sprite" parent="."]', f"position = Vector2( {i % 640}, {i // 640} )",
                      "texture = ExtResource( 1 )", "region_rect = Rect2( 0, 0, 16, 16 )", ""]
        else:
            lines += [f'[node name="Marker{i}" type="Position2D" parent="."]',
                      f"position = Vector2( {i % 640}, {i // 640} )", "pause_mode = 2", ""]
    (folder / "main.tscn").write_text("\n".join(lines))


def analyse(project: Path, home: Path) -> tuple[float, int, int]:
    """(seconds, fragments, peak KiB) of `gd-assets analyze PROJECT --json` in a child process."""
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env["GD_ASSETS_HOME"] = str(home)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gd_assets.cli", "analyze", str(project), "--json"], cwd=REPO,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"analyze failed on {project} (exit {done.returncode})")
    # the largest resident set of any child so far: the sizes run in ascending order
    return seconds, len(json.loads(done.stdout)["fragments"]), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="7500,15000,30000", help="scene sizes, comma-separated, ascending")
    args = parser.parse_args()
    if not os.environ.get("GD_ASSETS_CORPUS_HOME"):
        sys.exit("set GD_ASSETS_CORPUS_HOME to a built corpus home")
    with tempfile.TemporaryDirectory(prefix="gd-bench-scene-") as scratch:
        for n in sorted(int(x) for x in args.nodes.split(",")):
            seconds, fragments, peak = analyse(_project(Path(scratch), n), Path(scratch) / f"home-{n}")
            print(f"{n:>6} nodes: {fragments} fragments in {seconds:.1f} s = {fragments / seconds:.1f} fragments/s, "
                  f"{1000 * seconds / n:.2f} s per 1,000 nodes; peak memory {peak / 1024:.0f} MiB", flush=True)


def _project(scratch: Path, nodes: int) -> Path:
    folder = scratch / f"level-{nodes}"
    write_project(folder, nodes)
    return folder


if __name__ == "__main__":
    main()
