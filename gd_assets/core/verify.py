"""What Godot 4 itself says about a migrated project: scripts that fail, scenes that do not load,
properties Godot drops, input actions left without a key.

Godot runs headless on a scratch copy (it writes `.godot/` and `.uid` files, and opening a project
runs its tool scripts and autoloads as the editor would), with the project's editor plugins turned
off and a time limit on every run: first `--import`, then one process that loads every script,
scene and resource through `verify_tool.gd` and reports between marker lines. Each error is read
with the file and line Godot names (the file being loaded when it names none). The copy itself is
never written to. Nothing here needs the pipeline: `attribute` maps the errors back to fragments
and edits from plain rows.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from gd_assets.core.display import Display
from gd_assets.core.engines import Godot
from gd_assets.core.frames import compare_plays
from gd_assets.core.game_run import (
    GameRun,
    Play,
    PlaySettings,
    RunSettings,
    import_godot3,
    play_game,
    play_key,
    run_figure_lines,
    run_game,
    scenes_with_scripts,
    tree_hash,
)
from gd_assets.core.sandbox import Sandbox, find_sandbox
from gd_assets.core.scene_text import blocks

TOOL = Path(__file__).with_name("verify_tool.gd")
MARK = "@@gd-verify"
IMPORT_TIMEOUT = 600.0
CHECK_TIMEOUT = 600.0
_VERSION = re.compile(r"^(\d+)\.(\d+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_HEADER = re.compile(r"^(?:USER )?(?:SCRIPT )?(ERROR|WARNING): (.*)$")
_AT = re.compile(r"^\s+at: .*\(([^()]*?)(?::(\d+))?\)\s*$")
_RES_LINE = re.compile(r"(res://[^\s:\"'()]*[^\s:\"'().])(?::(\d+))?")
_DEPENDENCY = re.compile(r"Could not (?:parse global class|resolve (?:script|class|super class|external class)|"
                         r"preload resource script|load (?:class|script))|Failed to load script|"
                         r"Failed to compile depended scripts")
_SECTION = re.compile(r"^\[(\w+)((?:\s+\w+=(?:\"(?:[^\"\\]|\\.)*\"|[^\s\]]+))*)\s*\]\s*$")
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')
_PROPERTY = re.compile(r"^([A-Za-z_][\w/:.\-]*) = (.*)$")
_COPY_IGNORE = shutil.ignore_patterns(".godot", ".import", ".git")
BINARY_ASSET = {".png", ".jpg", ".jpeg", ".webp", ".svg", ".tga", ".bmp", ".hdr", ".exr", ".wav", ".ogg", ".mp3",
                ".ttf", ".otf", ".woff", ".woff2", ".glb", ".gltf", ".obj", ".dae", ".fbx", ".blend", ".mesh"}


# --- the project as Godot sees it -----------------------------------------------------------------


def project_files(root: Path) -> list[str]:
    """Relative paths of the project's files, sorted; hidden folders and folders holding `.gdignore`
    are not part of a Godot project, so they are left out as Godot leaves them out."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (Path(folder, d) / ".gdignore").exists())
        found += [Path(folder, f).relative_to(root).as_posix() for f in files if not f.startswith(".")]
    return sorted(found)


def resource_properties(text: str) -> list[tuple[str, str, str, int]]:
    """(sub-resource id, or "" for a .tres's own `[resource]`, property, value text, line) of a scene or
    resource file."""
    out = []
    for block in blocks(text):
        rid = block.attr("id") if block.tag == "sub_resource" else "" if block.tag == "resource" else None
        if rid is None:
            continue
        for entry in block.entries:
            out.append((rid, entry.name, block.value(entry), block.line + block.text.count("\n", 0, entry.start)))
    return out


def input_actions(project_godot: str) -> list[str]:
    """The action names of project.godot's `[input]` section."""
    names, inside = [], False
    for line in project_godot.split("\n"):
        if line.startswith("["):
            inside = line.strip() == "[input]"
        elif inside and (m := re.match(r"^([^\s=;][^=]*?)=", line)):
            names.append(m.group(1).strip().strip('"'))
    return names


def _config(project_godot: str) -> tuple[str | None, list[str]]:
    version = re.search(r"^config_version=(\d+)", project_godot, re.M)
    features = re.search(r"^config/features=PackedStringArray\((.*)\)", project_godot, re.M)
    return (version.group(1) if version else None,
            re.findall(r'"([^"]*)"', features.group(1)) if features else [])


def prepare_copy(project: Path, scratch: Path) -> Path:
    """A scratch copy of `project` with its editor plugins turned off (their code would run on import)."""
    copy = scratch / "project"
    shutil.copytree(project, copy, symlinks=False, ignore=_COPY_IGNORE)
    settings = copy / "project.godot"
    text = settings.read_text(encoding="utf-8", errors="replace")
    text = re.sub(r"(?ms)^\[editor_plugins\]\n.*?(?=^\[|\Z)", "", text)
    # Importers that need programs of their own (Blender, FBX2glTF) stop a headless import whole.
    settings.write_text(text.rstrip("\n") + "\n\n[filesystem]\n\nimport/blender/enabled=false\n"
                        "import/fbx2gltf/enabled=false\n", encoding="utf-8")
    return copy


def listing(copy: Path, files: Sequence[str]) -> list[str]:
    """The tool's requests: every script, scene and resource, the properties of their sub-resources,
    and the input actions of project.godot."""
    lines = []
    kinds = {".gd": "script", ".tscn": "scene", ".scn": "scene", ".tres": "resource"}
    for path in files:
        kind = kinds.get(PurePosixPath(path).suffix)
        if kind:
            lines.append(f"{kind}\tres://{path}")
    for path in files:
        if PurePosixPath(path).suffix in (".tscn", ".tres"):
            text = (copy / path).read_text(encoding="utf-8", errors="replace")
            for rid, name, value, _line in resource_properties(text):
                lines.append(f"subres\tres://{path}\t{rid}\t{name}\t{json.dumps(value)}")
    actions = input_actions((copy / "project.godot").read_text(encoding="utf-8", errors="replace"))
    if actions:
        lines.append("actions\t" + "\t".join(actions))
    return lines


# --- reading what Godot said -----------------------------------------------------------------------


@dataclass
class Problem:
    path: str            # the project file (relative), "" when Godot names none
    line: int | None
    message: str
    kind: str            # script | scene | resource | property | input | import | asset
    property: str = ""   # for dropped properties: the node path or [sub-resource id], class and property


@dataclass
class Log:
    ended: dict[str, bool] = field(default_factory=dict)       # res path -> loaded
    begun: list[str] = field(default_factory=list)
    errors: list[tuple[str, str, int | None, str]] = field(default_factory=list)  # (res, block res, line, message)
    dropped: list[tuple[str, str, str, str, bool]] = field(default_factory=list)  # (res, node or [id], class, prop,
    # whether the node's script failed to load: its exported variables go with it)
    actions: dict[str, tuple[str, int, int]] = field(default_factory=dict)      # name -> (state, keys, empty keys)
    done: bool = False


def parse_log(text: str, log: Log) -> None:
    """Godot's error blocks (a header line, then an `at:` line) and the tool's marker lines, into `log`."""
    current: str | None = None
    pending: str | None = None

    def flush(where: str | None, line: int | None) -> None:
        nonlocal pending
        if pending is not None:
            found = _RES_LINE.search(pending)
            if where is None and found:
                where, line = found.group(1), int(found.group(2)) if found.group(2) else None
            log.errors.append((where or current or "", current or "", line, pending))
        pending = None

    for raw in text.splitlines():
        if raw.startswith(MARK):
            flush(None, None)
            parts = raw[len(MARK):].strip().split("\t")
            word = parts[0]
            if word == "BEGIN":
                current = parts[2]
                log.begun.append(current)
            elif word == "END":
                log.ended[parts[2]] = parts[3] == "ok"
                current = None
            elif word == "DROPPED":
                log.dropped.append((parts[1], parts[2], parts[3], parts[4], parts[5:6] == ["script"]))
            elif word == "ACTION":
                log.actions[parts[1]] = (parts[2], int(parts[3]), int(parts[4]))
            elif word == "DONE":
                log.done = True
            continue
        header = _HEADER.match(raw)
        if header:
            flush(None, None)
            if header.group(1) == "ERROR":
                pending = header.group(2).strip()
            continue
        at = _AT.match(raw)
        if at and pending is not None:
            where = at.group(1) if at.group(1).startswith("res://") else None
            flush(where, int(at.group(2)) if where and at.group(2) else None)
    flush(None, None)


def _relative(res: str) -> str:
    return res[len("res://"):] if res.startswith("res://") else res


@dataclass
class Report:
    """What one verification found, with the figures `status`, the report and the UI show."""

    godot: str
    config_version: str | None
    features: list[str]
    scripts: int = 0
    scripts_failing: int = 0
    scripts_failing_through_dependency: int = 0
    scenes: int = 0
    scenes_failing: int = 0
    resources: int = 0
    resources_failing: int = 0
    properties_dropped: int = 0
    properties_dropped_with_their_script: int = 0
    input_actions: int = 0
    input_actions_without_key: int = 0
    missing_assets: int = 0
    failing_through_assets: int = 0
    scripts_failing_roots: int = 0  # failing scripts that fail on their own: the ones to fix first
    timed_out: bool = False
    failing: dict[str, str] = field(default_factory=dict)    # path -> its first error, the roots first
    through: dict[str, str] = field(default_factory=dict)    # a script failing only through another -> its root
    asset_only: dict[str, str] = field(default_factory=dict)  # a script failing only for a missing binary asset
    problems: list[Problem] = field(default_factory=list)

    def figures(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k not in ("failing", "problems", "through", "asset_only")}

    def dependents(self, root: str) -> list[str]:
        """The failing scripts that fail only because `root` does."""
        return [path for path, r in self.through.items() if r == root]

    def to_json(self) -> dict:
        return asdict(self)


def _first_error(res: str, log: Log) -> str | None:
    """The error to show for one file: its own first error (not one that only blames a dependency),
    else an error met while loading it; None when it loaded and no error names it."""
    own = [m for where, _b, _l, m in log.errors if where == res]
    if own:
        return next((e for e in own if not _DEPENDENCY.search(e)), own[0])
    if log.ended.get(res, False):
        return None
    during = [m for _w, block, _l, m in log.errors if block == res]
    if during:
        return next((e for e in during if not _DEPENDENCY.search(e)), during[0])
    if res in log.ended:
        return "did not load (Godot printed no error)"
    if res in log.begun:
        return "Godot crashed or timed out while loading it"
    return "not checked: Godot stopped before loading it"


def _is_asset_error(message: str) -> bool:
    """An error about an image, sound, font or model, or an import product of one: what a copy without
    its binaries (or without Blender) gives, not a migration fault."""
    found = _RES_LINE.search(message)
    if not found:
        return False
    rel = _relative(found.group(1))
    return rel.startswith((".godot/", ".import/")) or PurePosixPath(rel).suffix.lower() in BINARY_ASSET


_LOAD_FAILED = re.compile(r"(?:No loader found for resource|Failed loading resource): (res://\S+?)\.?(?:\s|$)")


def _broken_dependency(res: str, log: Log) -> str | None:
    """An error met while `res` loaded saying a file it uses (not an asset) could not be loaded: the scene
    loads here only because the check goes on past missing resources, the game would not."""
    for _w, block, _l, message in log.errors:
        found = _LOAD_FAILED.search(message)
        if block == res and found and found.group(1) != res and not _is_asset_error(message):
            return message
    return None


def _only_assets(res: str, log: Log, own: bool = False) -> bool:
    """Whether every error naming a file while `res` loaded (`own`: every error of `res` itself) is about an
    asset, and there is one."""
    if own:
        mine = [m for where, _b, _l, m in log.errors if where == res and not (_DEPENDENCY.search(m) and res in m)]
        return bool(mine) and all(_RES_LINE.search(m) and _is_asset_error(m) for m in mine)
    named = [m for _w, block, _l, m in log.errors if block == res and _RES_LINE.search(m)]
    return bool(named) and all(_is_asset_error(m) for m in named)


_CLASS_NAME = re.compile(r"^class_name\s+(\w+)", re.M)
_NAMED_SCRIPT = re.compile(r'"(res://[^"]+\.gd)"')
_NAMED_CLASS = re.compile(r'"(\w+)"')


def _order_by_root(report: Report, copy: Path) -> None:
    """Trace each script failing only through another (`Could not resolve class "X"`, `Failed to load script
    "res://x.gd"`) to the script that fails on its own, and list those roots first: one root cause a class, not
    one error for every script using it."""
    scripts = [p for p in report.failing if p.endswith(".gd")]
    classes = {}
    for path in scripts:
        file = copy / path
        found = _CLASS_NAME.search(file.read_text(encoding="utf-8", errors="replace")) if file.is_file() else None
        if found:
            classes[found.group(1)] = path
    target: dict[str, str] = {}
    for path in scripts:
        error = report.failing[path]
        if not _DEPENDENCY.search(error):
            continue
        named = _NAMED_SCRIPT.search(error)
        other = _relative(named.group(1)) if named else next(
            (classes[c] for c in _NAMED_CLASS.findall(error) if c in classes), None)
        if other is None and (copy / path).is_file():  # `Failed to compile depended scripts`: the one it names
            text = (copy / path).read_text(encoding="utf-8", errors="replace")
            other = next((p for c, p in classes.items() if p != path and re.search(rf"\b{c}\b", text)), None) or next(
                (p for p in scripts if p != path and f"res://{p}" in text), None)
        if other is not None and other != path and other in report.failing:
            target[path] = other
    for path in target:
        root, seen = path, {path}
        while root in target and target[root] not in seen:
            root = target[root]
            seen.add(root)
        if root != path and root not in target:
            report.through[path] = root
    roots = [p for p in report.failing if p not in report.through]
    report.scripts_failing_roots = sum(1 for p in roots if p.endswith(".gd"))
    report.failing = {p: report.failing[p] for p in [*roots, *report.through]}


def build_report(log: Log, files: Sequence[str], copy: Path, godot: str, timed_out: bool) -> Report:
    config_version, features = _config((copy / "project.godot").read_text(encoding="utf-8", errors="replace"))
    report = Report(godot, config_version, features, timed_out=timed_out)
    kinds = {".gd": "script", ".tscn": "scene", ".scn": "scene", ".tres": "resource"}
    totals = {"script": "scripts", "scene": "scenes", "resource": "resources"}
    for path in files:
        kind = kinds.get(PurePosixPath(path).suffix)
        if kind is None:
            continue
        setattr(report, totals[kind], getattr(report, totals[kind]) + 1)
        res = f"res://{path}"
        if kind == "script" and _only_assets(res, log, own=True):
            report.failing_through_assets += 1  # a `preload` of an image the copy lacks: not the migration's
            report.asset_only[path] = _first_error(res, log) or ""
            continue
        if kind == "script":
            error = _first_error(res, log)
        elif log.ended.get(res, False):
            # It loaded, but only because the check goes past a missing resource; the game stops there.
            error = _broken_dependency(res, log)
        elif _only_assets(res, log):
            report.failing_through_assets += 1
            continue
        else:
            error = _first_error(res, log)
        if error is None:
            continue
        report.failing[path] = error
        failing = f"{totals[kind]}_failing"
        setattr(report, failing, getattr(report, failing) + 1)
        if kind == "script":
            report.scripts_failing_through_dependency += bool(_DEPENDENCY.search(error))
    _order_by_root(report, copy)
    seen = set()
    for where, _block, line, message in log.errors:
        if (where, line, message) in seen:
            continue
        seen.add((where, line, message))
        path = _relative(where)
        if _is_asset_error(message):
            report.missing_assets += 1
            report.problems.append(Problem(path, line, message, "asset"))
            continue
        kind = kinds.get(PurePosixPath(path).suffix, "import" if not path else "resource")
        report.problems.append(Problem(path, line, message, kind))
    for res, where, cls, prop, scripted in log.dropped:
        report.properties_dropped += 1
        report.properties_dropped_with_their_script += scripted
        why = " (the node's script did not load)" if scripted else ""
        report.problems.append(Problem(_relative(res), None, f"Godot 4 drops `{prop}` of {where} ({cls}){why}",
                                       "property", f"{where}\t{cls}\t{prop}"))
    for name, (state, keys, empty) in log.actions.items():
        report.input_actions += 1
        if state == "missing" or (keys and empty == keys):
            report.input_actions_without_key += 1
            why = "is not in Godot's input map" if state == "missing" else \
                f"has {keys} key event{'s' if keys != 1 else ''}, none with a key Godot 4 reads"
            report.problems.append(Problem("project.godot", None, f"input action `{name}` {why}", "input", name))
    return report


def check(godot: Godot, copy: Path, scratch: Path, files: Sequence[str], timeout: float,
          sandbox: Sandbox | None = None) -> tuple[Log, bool]:
    """Run the tool over every request; after a crash or a timeout, go on after the file being loaded,
    so one bad file costs only itself. Returns the log and whether some run timed out."""
    home = scratch / "home"
    home.mkdir(parents=True, exist_ok=True)
    tool = home / "verify_tool.gd"  # in the engine's home: a sandbox shows it that folder and the copy only
    shutil.copyfile(TOOL, tool)
    requests = listing(copy, files)
    log, timed_out = Log(), False
    remaining = list(requests)
    while remaining:
        path = home / "requests.txt"
        path.write_text("\n".join(remaining) + "\n", encoding="utf-8")
        status, text = godot.run(["--path", str(copy), "-s", str(tool), "--", str(path)], home, timeout, sandbox,
                                 [copy])
        timed_out |= status is None
        begun_before = len(log.begun)
        parse_log(text, log)
        started = log.begun[begun_before:]
        if log.done or not started:
            break
        last = next(i for i, r in enumerate(remaining) if r.split("\t")[1:2] == [started[-1]])
        remaining = remaining[last + 1:]
    return log, timed_out


@dataclass
class Runs:
    """What `verify --run` adds: the copy's run in Godot 4 and, when Godot 3 and the original are there,
    the original's in Godot 3 (game_run.py)."""

    copy: GameRun
    original: GameRun | None = None
    original_missing: str = ""  # why the original did not run beside the copy
    plays: dict[str, list[Play]] = field(default_factory=dict)   # copy / original: the played runs
    seen: dict | None = None     # their frames and traces compared (frames.compare_plays)
    seen_missing: str = ""       # why they were not


@dataclass
class Watch:
    """What the played run needs (`verify --run` with a display): its settings, the display, Godot 3's renderer,
    the folder its plays are kept in by content, and where the pictures of the worst frames go."""

    settings: PlaySettings
    display: Display
    renderer3: Godot | None
    cache: Path
    out: Path
    missing: str = ""            # why the original cannot be played (no renderer)
    laid_out: Callable[[str], bool] = lambda cls: False   # whether a Godot 3 class is a Control


def played(godot: Godot, project: Path, settings: PlaySettings, display: Display, sandbox: Sandbox, cache: Path,
           godot3: Godot | None = None) -> list[Play]:
    """`project` played on its own (as `verify --run` plays it): imported on a scratch copy (by `godot3`'s editor
    for a Godot 3 project, then played by `godot`, its renderer), each play kept under `cache` by content."""
    tree = tree_hash(project)
    keys = [play_key(tree, godot, settings, n) for n in range(1, settings.plays + 1)]
    if all((cache / key / "play.json").is_file() for key in keys):
        return [play_game(godot, project, cache, sandbox, display, settings, cache / key, n)
                for n, key in enumerate(keys, 1)]
    with tempfile.TemporaryDirectory(prefix="gd-play-") as tmp:
        scratch = Path(tmp)
        copy = prepare_copy(project, scratch)
        if godot3 is not None:
            import_godot3(godot3, copy, scratch, sandbox)
        else:
            godot.run(["--path", str(copy), "--import"], scratch / "home", IMPORT_TIMEOUT, sandbox, [copy])
        return [play_game(godot, copy, scratch, sandbox, display, settings, cache / key, n)
                for n, key in enumerate(keys, 1)]


def _plays(godot: Godot, copy: Path, scratch: Path, sandbox: Sandbox, watch: Watch, source: Path) -> list[Play]:
    """The played runs of one engine, each kept by the content of `source` (the project as given), the engine,
    the run tool and the input: a second verify of the same copy replays nothing."""
    tree = tree_hash(source)
    return [play_game(godot, copy, scratch, sandbox, watch.display, watch.settings,
                      watch.cache / play_key(tree, godot, watch.settings, n), n)
            for n in range(1, watch.settings.plays + 1)]


def verify(project: Path, godot: Godot, import_timeout: float = IMPORT_TIMEOUT,
           check_timeout: float = CHECK_TIMEOUT, sandbox: Sandbox | None = None, run: RunSettings | None = None,
           original: Path | None = None, godot3: Godot | None = None, why_no_original: str = "",
           watch: Watch | None = None) -> tuple[Report, Runs | None]:
    """Import a scratch copy of `project` once, then check it and, with `run`, run it (and `original`, the
    Godot 3 project it was migrated from, in `godot3` on a scratch copy of its own). Every engine runs in
    `sandbox` (found here when not given); `project` and `original` are never written to. With `watch`, both
    are also played rendered, with input, and their frames and traces compared."""
    if not (project / "project.godot").is_file():
        raise FileNotFoundError(f"{project}: no project.godot, not a Godot project folder")
    sandbox = sandbox or find_sandbox()
    with tempfile.TemporaryDirectory(prefix="gd-verify-") as tmp:
        scratch = Path(tmp)
        copy = prepare_copy(project, scratch)
        files = project_files(copy)
        status, _text = godot.run(["--path", str(copy), "--import"], scratch / "home", import_timeout, sandbox, [copy])
        log, timed_out = check(godot, copy, scratch, files, check_timeout, sandbox)
        report = build_report(log, files, copy, godot.version, timed_out or status is None)
        if run is None:
            return report, None
        runs = Runs(run_game(godot, copy, scratch, sandbox, scenes_with_scripts(copy, files), run),
                    original_missing=why_no_original)
        if original is not None and godot3 is not None:
            first = prepare_copy(original, scratch / "original")
            import_godot3(godot3, first, scratch / "original", sandbox, import_timeout)
            runs.original = run_game(godot3, first, scratch / "original", sandbox,
                                     scenes_with_scripts(first, project_files(first)), run)
        if watch is not None:
            runs.plays["copy"] = _plays(godot, copy, scratch, sandbox, watch, project)
            if original is None or godot3 is None or watch.renderer3 is None:
                runs.seen_missing = watch.missing or why_no_original or "no original to play beside the copy"
            else:
                runs.plays["original"] = _plays(watch.renderer3, first, scratch / "original", sandbox, watch, original)
                folders = {side: [Path(p.folder) for p in plays] for side, plays in runs.plays.items()}
                runs.seen = compare_plays(folders["original"], folders["copy"], watch.out, laid_out=watch.laid_out)
        return report, runs


# --- the figures, and back to the fragments and edits ---------------------------------------------------------------


# (label, figure, the total it is out of)
FIGURES = (("scripts failing", "scripts_failing", "scripts"), ("scenes failing to load", "scenes_failing", "scenes"),
           ("resources failing to load", "resources_failing", "resources"),
           ("properties Godot drops", "properties_dropped", None),
           ("input actions without a key", "input_actions_without_key", "input_actions"))


def figure_lines(figures: dict) -> list[str]:
    """`scripts failing: 3 of 40`, one line a figure (status, the report and the UI read these)."""
    out = []
    for label, key, total in FIGURES:
        out.append(f"{label}: {figures[key]}" + (f" of {figures[total]}" if total else ""))
        if key == "scripts_failing" and figures.get(key) and figures.get("scripts_failing_roots") is not None:
            out[-1] += f" ({figures['scripts_failing_roots']} on their own, the others through them)"
        if key == "scripts_failing" and figures.get("failing_through_assets"):
            out[-1] += f"; {figures['failing_through_assets']} files fail only for missing binary assets"
        if key == "properties_dropped" and figures.get("properties_dropped_with_their_script"):
            out[-1] += f" ({figures['properties_dropped_with_their_script']} of them because their node's script did not load)"
    out.append(f"config_version: {figures['config_version']}"
               + (f" (features {', '.join(figures['features'])})" if figures["features"] else ""))
    return out + (run_figure_lines(figures["run"]) if figures.get("run") else [])


def line_map(old: str, new: str) -> dict[int, int]:
    """New line number -> old line number (1-based); a line an edit wrote maps to the first old line
    of the block it replaced."""
    matcher = difflib.SequenceMatcher(a=old.split("\n"), b=new.split("\n"), autojunk=False)
    out = {}
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        for j in range(b0, b1):
            out[j + 1] = a0 + (j - b0 if tag == "equal" else min(j - b0, max(a1 - a0 - 1, 0))) + 1
    return out


def attribute(problems: Iterable[Problem], originals: Mapping[str, str], migrated: Mapping[str, str],
              renames: Mapping[str, str], fragments: Sequence[Mapping], rewrites: Mapping[str, Mapping],
              judgements: Mapping[str, Mapping]) -> list[dict]:
    """Each problem with where it comes from: the original file and line, the fragment holding that
    line, how that fragment was judged, and the edits on that line (or `untouched`).

    `renames` maps a migrated path to its original path (`x.gdshader` -> `x.shader`); `rewrites` maps
    fragment keys to their `{"edits": [...], "manual": [...]}`."""
    by_path: dict[str, list[Mapping]] = {}
    for frag in fragments:
        by_path.setdefault(frag["path"], []).append(frag)
    maps: dict[str, dict[int, int]] = {}
    out = []
    for problem in problems:
        doc = asdict(problem)
        source = renames.get(problem.path, problem.path)
        doc["original_path"] = source if source in originals else None
        doc["original_line"] = doc["fragment"] = None
        doc["edits"], doc["cause"] = [], "outside the analysed files"
        if doc["original_path"] is not None and problem.path in migrated:
            if problem.path not in maps:
                maps[problem.path] = line_map(originals[source], migrated[problem.path])
            line = maps[problem.path].get(problem.line) if problem.line else None
            doc["original_line"] = line
            frag = next((f for f in by_path.get(source, ()) if line is not None
                         and f["start_line"] <= line <= f["end_line"]), None)
            if frag is None and line is None and by_path.get(source):
                doc["cause"] = "file"
            elif frag is None:
                doc["cause"] = "no fragment"
            else:
                doc["fragment"] = frag["key"]
                judged = judgements.get(frag["key"], {})
                doc["judged"] = judged.get("signal"), bool(judged.get("migration_needed"))
                rewrite = rewrites.get(frag["key"], {})
                doc["edits"] = [e for e in rewrite.get("edits", []) if e["start_line"] <= line <= e["end_line"]]
                manual = [m for m in rewrite.get("manual", []) if m["start_line"] <= line <= m["end_line"]]
                doc["manual"] = manual
                doc["cause"] = ("edited line" if doc["edits"] else "left to people" if manual else
                                "untouched line of a flagged fragment" if judged.get("migration_needed") else
                                "judged " + (judged.get("signal") or "not at all"))
        out.append(doc)
    return out


def causes(attributed: Iterable[Mapping]) -> dict[str, int]:
    """How many problems each cause accounts for, most first."""
    return dict(Counter(a["cause"] for a in attributed).most_common())
