"""The differential harness: Godot 3 snippets run in Godot 3.6, migrated, and run again in Godot 4.

A case is a folder under `tests/fixtures/behaviour/<slug>/`: `case.gd` (a Godot 3 script whose `_ready()` or
later frames print values) with header comments naming what the migration must do:

    # rule: <edit rule expected>        (one line per rule)
    # row: <evidence id on that edit>   (optional)
    # manual: <manual item kind>        (instead of a rule, where the behaviour cannot be kept)
    # frames: N                         (optional, default 10)
    # autoload: Name=file.gd            (optional: the case's file autoloaded, first, in the shared project)

and, optionally, `case.tscn` (a Godot 3 scene, format=2, its root's script `res://<slug>/case.gd`) and other
files (a parent script, a TileSet). Without a `case.tscn` the root is a Node2D holding `case.gd`.
Every case goes into ONE Godot 3 project (`res://<slug>/`), so each engine starts only a few times: the scenes
phase of `game_run` runs each case's scene alone and keeps what it printed.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from gd_assets.core import game_run, verify
from gd_assets.core.engines import Godot
from gd_assets.core.quick_migrate import migrate_core
from gd_assets.core.sandbox import Sandbox

CASES = Path(__file__).parent / "fixtures" / "behaviour"
DEFAULT_FRAMES = 10
_HEADER = re.compile(r"^#\s*(rule|row|manual|frames|autoload):\s*(.*?)\s*$")


@dataclass
class Case:
    slug: str
    folder: Path
    rules: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    manual: list[str] = field(default_factory=list)
    frames: int = DEFAULT_FRAMES
    autoloads: list[str] = field(default_factory=list)  # "Name=file.gd" of the case's folder

    @property
    def scene(self) -> str:
        return f"{self.slug}/case.tscn"


def load_case(folder: Path) -> Case:
    """A case folder's header comments, read from the top of its `case.gd`."""
    case = Case(folder.name, folder)
    for line in (folder / "case.gd").read_text(encoding="utf-8").splitlines():
        found = _HEADER.match(line)
        if not line.startswith("#"):
            break
        if found is None:
            continue
        key, value = found.groups()
        if key == "frames":
            case.frames = int(value)
        elif key == "autoload":
            case.autoloads.append(value)
        elif key in ("rule", "row", "manual"):
            getattr(case, key + ("s" if key != "manual" else "")).append(value)
    return case


def load_cases(root: Path = CASES) -> list[Case]:
    return [load_case(p) for p in sorted(root.iterdir()) if (p / "case.gd").is_file()]


def _scene(slug: str) -> str:
    return (f'[gd_scene load_steps=2 format=2]\n\n[ext_resource path="res://{slug}/case.gd" type="Script" id=1]\n\n'
            f'[node name="Case" type="Node2D"]\nscript = ExtResource( 1 )\n')


def build_project(cases: list[Case], dest: Path) -> Path:
    """One Godot 3 project holding every case in its own folder; no main scene (the scenes phase runs each)."""
    dest.mkdir(parents=True, exist_ok=True)
    autoloads = [f'{name}="*res://{c.slug}/{file}"' for c in cases for name, file in
                 (line.split("=", 1) for line in c.autoloads)]
    (dest / "project.godot").write_text('config_version=4\n\n[application]\n\nconfig/name="behaviour cases"\n' +
                                        ("\n[autoload]\n\n" + "\n".join(autoloads) + "\n" if autoloads else ""),
                                        encoding="utf-8")
    for case in cases:
        shutil.copytree(case.folder, dest / case.slug)
        if not (dest / case.scene).is_file():
            (dest / case.scene).write_text(_scene(case.slug), encoding="utf-8")
    return dest


def run_prints(godot: Godot, project: Path, scratch: Path, sandbox: Sandbox, scenes: list[str],
               frames: int) -> game_run.GameRun:
    """Import a scratch copy of `project` in `godot` and run each scene alone for `frames` frames."""
    scratch.mkdir(parents=True, exist_ok=True)
    copy = verify.prepare_copy(project, scratch)
    if godot.major >= 4:
        godot.run(["--path", str(copy), "--import"], scratch / "home", verify.IMPORT_TIMEOUT, sandbox, [copy])
    else:
        game_run.import_godot3(godot, copy, scratch, sandbox)
    # no seed: each engine starts its random generator as it does on its own (Godot 4 at random)
    settings = game_run.RunSettings(frames=frames, scene_frames=frames, timeout=240.0, seed=None)
    return game_run.run_game(godot, copy, scratch, sandbox, scenes, settings)


@dataclass
class Differential:
    """What each engine printed per case, and what the migration did to each case's files."""

    cases: list[Case]
    prints3: dict[str, list[str]]
    prints4: dict[str, list[str]]
    edits: dict[str, list[dict]]   # slug -> edits in its files
    manual: dict[str, list[dict]]  # slug -> manual items in its files
    migrated: dict[str, str]       # path -> migrated text
    errors4: list[str]             # Godot 4's script errors, as text, for the failure messages

    def normalised(self, slug: str) -> tuple[list[str], list[str]]:
        return ([game_run.normalise_print(x) for x in self.prints3.get(slug, [])],
                [game_run.normalise_print(x) for x in self.prints4.get(slug, [])])


def run_differential(cases: list[Case], godot3: Godot, godot4: Godot, sandbox: Sandbox, rules,
                     scratch: Path) -> Differential:
    """Run the cases in Godot 3.6, migrate them with the pipeline's core calls, run the copy in Godot 4."""
    source = build_project(cases, scratch / "godot3")
    scenes = [c.scene for c in cases]
    frames = max(c.frames for c in cases)
    run3 = run_prints(godot3, source, scratch / "run3", sandbox, scenes, frames)
    frags, _judged, rewrites, _originals, migrated = migrate_core("behaviour", source, scratch / "godot4", rules)
    paths = {f["key"]: f["path"] for f in frags}
    edits: dict[str, list[dict]] = {c.slug: [] for c in cases}
    manual: dict[str, list[dict]] = {c.slug: [] for c in cases}
    for key, done in rewrites.items():
        slug = paths[key].split("/", 1)[0]
        if slug in edits:
            edits[slug] += done["edits"]
            manual[slug] += done["manual"]
    run4 = run_prints(godot4, scratch / "godot4", scratch / "run4", sandbox, scenes, frames)
    by_slug = lambda run: {s.split("/", 1)[0]: p for s, p in run.scenes.scene_prints.items()}  # noqa: E731
    errors4 = [f"{e.path}:{e.line}: {e.message}" for e in run4.scenes.errors]
    return Differential(cases, by_slug(run3), by_slug(run4), edits, manual, migrated, errors4)
