"""Ingestion + slicing speed against bare tree-sitter parsing, on a generated or given project.

    python bench/slicing.py                 # generated project (~2,000 .gd files + scenes)
    python bench/slicing.py PATH [PATH...]  # real projects, e.g. a checkout of godot-demo-projects

Prints files/s and MB/s of both, and their ratio (the overhead of ingestion and slicing).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from gd_assets.core.ingest import ingest
from gd_assets.core.slicing import gdscript_parser, slice_file

SCRIPT = """extends {base}
# Generated script {i}.

signal changed_{i}(value)

export var speed_{i} = {n}
onready var label = $Label

var items = []


func _ready():
\tconnect("changed_{i}", self, "_on_changed")
\tfor x in range({n}):
\t\titems.append(x * 2)


func _process(delta):
\tvar velocity = Vector2.ZERO
\tif Input.is_action_pressed("ui_right"):
\t\tvelocity.x += 1
\tposition += velocity * delta * speed_{i}


func _on_changed(value):
\tlabel.text = str(value)
\tyield(get_tree().create_timer(0.5), "timeout")
"""

SCENE = """[gd_scene load_steps=2 format=2]

[ext_resource path="res://s{i}.gd" type="Script" id=1]

[node name="Root{i}" type="Node2D"]
script = ExtResource( 1 )

[node name="Label" type="Label" parent="."]
text = "hello"
"""


def generate(folder: Path, scripts: int = 2000, scenes: bool = True) -> None:
    rng = random.Random(7)
    for i in range(scripts):
        sub = folder / f"part{i % 20}"
        sub.mkdir(parents=True, exist_ok=True)
        base = rng.choice(["Node2D", "KinematicBody2D", "Area2D", "Control"])
        (sub / f"s{i}.gd").write_text(SCRIPT.format(base=base, i=i, n=rng.randint(1, 99)))
        if scenes:
            (sub / f"s{i}.tscn").write_text(SCENE.format(i=i))
    (folder / "project.godot").write_text('config_version=4\n\n[application]\nconfig/name="Bench"\n')


def measure(folders: list[Path]) -> None:
    t0 = time.perf_counter()
    files = []
    for folder in folders:
        files += [f for f in ingest(folder).files if f.included]
    t1 = time.perf_counter()
    fragments = sum(len(slice_file(f.path, f.kind, f.text)) for f in files)
    t2 = time.perf_counter()
    parser = gdscript_parser()
    t3 = time.perf_counter()
    scripts = [p.read_bytes() for folder in folders for p in sorted(folder.rglob("*.gd"))]
    for blob in scripts:
        parser.parse(blob)
    t4 = time.perf_counter()
    script_time = sum(1 for f in files if f.kind == "gdscript")
    size = sum(len(f.text.encode()) for f in files) / 1e6
    script_mb = sum(len(b) for b in scripts) / 1e6
    total = t2 - t0
    print(f"files: {len(files)} included ({script_time} .gd), {size:.1f} MB, {fragments} fragments")
    print(f"ingest + slice : {total:6.2f} s  {len(files) / total:8.0f} files/s  {size / total:6.2f} MB/s"
          f"  (ingest {t1 - t0:.2f} s, slice {t2 - t1:.2f} s)")
    parse = t4 - t3
    print(f"read+parse .gd: {parse:6.2f} s  {len(scripts) / parse:8.0f} files/s  {script_mb / parse:6.2f} MB/s")
    slice_only = t2 - t1
    print(f"ratio MB/s, ingest+slice / bare read+parse: {(size / total) / (script_mb / parse):.2f}"
          f"   (slicing alone: {(size / slice_only) / (script_mb / parse):.2f})")


def main(argv: list[str]) -> None:
    if argv:
        measure([Path(a) for a in argv])
        return
    for scenes in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            generate(Path(tmp), scenes=scenes)
            print("generated project, 2,000 scripts" + (" + 2,000 scenes" if scenes else " only"))
            measure([Path(tmp)])
            print()


if __name__ == "__main__":
    main(sys.argv[1:])
