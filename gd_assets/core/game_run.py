"""The game run: a project booted headless for a fixed number of frames, and what it did.

`verify --run` starts the migrated copy in Godot 4 and the original in Godot 3.6, each on a scratch
copy in a sandbox (sandbox.py), at a fixed frame rate, with the random seed fixed and no input: first
the main scene with the game's autoloads for N frames, then each scene that has a script alone in a
blank game for a few frames. A small autoload (`run_tool3.gd` / `run_tool4.gd`, the first of the
scratch copy's autoloads) counts the frames, prints the scene tree at the end and marks each scene's
start and end, so every runtime error, print, crash and hang is read with the scene it happened in.
Two runs then give a fingerprint each (the tree after N frames: node paths, classes, scripts,
visibility, rounded positions; the prints; the errors), and `compare` says where the copy differs.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from gd_assets.core.display import Display
from gd_assets.core.engines import Godot
from gd_assets.core.frames import WIDTH, seen_lines
from gd_assets.core.play import Event, requests
from gd_assets.core.sandbox import Sandbox

TOOLS = {3: Path(__file__).with_name("run_tool3.gd"), 4: Path(__file__).with_name("run_tool4.gd")}
TOOL_NAME = "__gd_run"
BLANK = "__gd_run_blank.tscn"
MARK = "@@gd-run"
FRAMES = 600
SCENE_FRAMES = 30
FPS = 60
# Godot 3's global random generator started from RandomPCG's default seed (12047754176567800795, as GDScript's
# signed int); Godot 4 randomizes it at start: both runs seeded so, an unseeded game draws what it drew in Godot 3
SEED = -6398989897141750821
RUN_TIMEOUT = 300.0
IMPORT3_TIMEOUT = 600.0
IMPORT3_QUIET = 5.0  # seconds without a change to `.import/` after which Godot 3's import is taken as done

_HEADER = re.compile(r"^(SCRIPT ERROR|USER SCRIPT ERROR|ERROR|USER ERROR|WARNING|USER WARNING): (.*)$")
_FRAME = re.compile(r"^\s+(?:at: |At: |\[\d+\] )(.*)$")
_LOCATION = re.compile(r"(res://[^\s:()\"']*[^\s:()\"'.])(?::(\d+))?")
_BACKTRACE = re.compile(r"^\s+GDScript backtrace")
_CRASH = re.compile(r"Program crashed with signal|handle_crash: |Segmentation fault|CrashHandlerException")
_BANNER = re.compile(r"^Godot Engine v\d")
_NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+")
_ERROR_KINDS = {"SCRIPT ERROR": "script", "USER SCRIPT ERROR": "script", "ERROR": "error", "USER ERROR": "error",
                "WARNING": "warning", "USER WARNING": "warning"}
_NO_SCENE = ("Failed loading scene:", "(Failed loading scene:")  # the main scene did not load: nothing ran
_PUSHED = ("variant_utility.cpp", "gdscript_functions.cpp")  # where push_error reports itself from


@dataclass
class RunError:
    """One error the engine printed while the game ran."""

    kind: str           # script (SCRIPT ERROR), pushed (push_error), engine (an engine error naming project code)
    message: str
    path: str = ""      # the project file (relative), "" when the engine names none
    line: int | None = None
    scene: str = ""     # the scene being run ("" in the main run)

    def key(self) -> tuple:
        return (self.path, self.line, self.message)


@dataclass
class Phase:
    """One engine process's part of the run (the main run, or the scenes it got through)."""

    ended: str = "not run"          # done | quit | load failed | crash | hang | not run
    frames: int = 0
    tree: list[tuple[str, str, str, str, str]] = field(default_factory=list)  # path, class, script, visible, position
    tree_frame: int = 0
    printed: list[str] = field(default_factory=list)
    scene_prints: dict[str, list[str]] = field(default_factory=dict)  # scene -> what it printed (scenes phase)
    errors: list[RunError] = field(default_factory=list)
    engine_errors: list[str] = field(default_factory=list)   # errors naming nothing of the project (counted apart)
    scenes: dict[str, str] = field(default_factory=dict)     # scene -> ended (scenes phase)
    exit_status: int | None = None


@dataclass
class GameRun:
    """A project's run in one engine: the main run and the scene-by-scene run."""

    engine: str
    sandbox: str
    frames: int
    fps: int
    seed: int | None
    main_scene: str
    main: Phase
    scenes: Phase
    seconds: float = 0.0

    def errors(self) -> list[RunError]:
        """Each runtime error once (by file, line, message), the main run's first."""
        seen, out = set(), []
        for error in [*self.main.errors, *self.scenes.errors]:
            if error.key() not in seen:
                seen.add(error.key())
                out.append(error)
        return out

    def crashed_or_hung(self) -> list[str]:
        """`main: crash`, `res://x.tscn: hang`: every part of the run that did not end by itself."""
        out = [f"main: {self.main.ended}"] if self.main.ended in ("crash", "hang") else []
        return out + [f"{scene}: {how}" for scene, how in self.scenes.scenes.items() if how in ("crash", "hang")]

    def to_json(self) -> dict:
        return asdict(self)


# --- reading what the engine printed ----------------------------------------------------------------------


def _relative(res: str) -> str:
    return res[len("res://"):] if res.startswith("res://") else res


def _is_tool(path: str) -> bool:
    return PurePosixPath(path).name in (TOOL_NAME + ".gd", BLANK)


def parse_run(text: str) -> Phase:
    """The markers of the run tool, the game's own prints and the engine's error blocks (a header line,
    then `at:` lines and a GDScript backtrace; the first frame inside the project gives file and line)."""
    phase = Phase()
    scene = ""
    pending: tuple[str, str] | None = None  # (header kind, message)
    where: tuple[str, int | None] | None = None
    frames: list[str] = []

    def flush() -> None:
        nonlocal pending, where, frames
        if pending is None:
            return
        kind, message = pending
        if kind == "warning":  # a warning is not an error: its block is read and dropped
            pending, where, frames = None, None, []
            return
        found = _LOCATION.search(message)
        location = where or ((_relative(found.group(1)), int(found.group(2)) if found.group(2) else None)
                             if found else None)
        pushed = any(p in f for f in frames[:1] for p in _PUSHED)
        if location is not None and _is_tool(location[0]):
            location = None
        if kind == "script" or pushed or location is not None:
            phase.errors.append(RunError("script" if kind == "script" else "pushed" if pushed else "engine",
                                         message, *(location or ("", None)), scene))
        else:
            phase.engine_errors.append(message)
        if message.startswith(_NO_SCENE):
            phase.ended = "load failed"
        pending, where, frames = None, None, []

    for raw in text.split("\n"):
        line = raw.rstrip("\r")
        if line.startswith(MARK):
            flush()
            parts = line[len(MARK):].lstrip(" ").split("\t")  # empty fields at the end are facts too
            word = parts[0]
            if word == "NODE" and len(parts) >= 6:
                phase.tree.append((parts[1], parts[2], _relative(parts[3]), parts[4], parts[5]))
            elif word == "TREE":
                phase.tree, phase.tree_frame = [], int(parts[1])
            elif word == "BEGIN" and parts[1:2] == ["scene"]:
                scene = _relative(parts[2])
                phase.scenes[scene] = "running"
            elif word == "END" and parts[1:2] == ["scene"]:
                phase.scenes[_relative(parts[2])] = "fail" if parts[3:4] == ["fail"] else "done"
                scene = ""
            elif word in ("DONE", "QUIT"):
                if phase.ended != "load failed":
                    phase.ended = "done" if word == "DONE" else "quit"
                phase.frames = int(parts[1])
                if word == "QUIT" and scene:
                    phase.scenes[scene] = "quit"
            continue
        header = _HEADER.match(line)
        if header:
            flush()
            pending = (_ERROR_KINDS[header.group(1)], header.group(2).strip())
            continue
        frame = _FRAME.match(line)
        if frame and pending is not None:
            frames.append(frame.group(1))
            found = _LOCATION.search(frame.group(1))
            if where is None and found and not _is_tool(_relative(found.group(1))):
                where = (_relative(found.group(1)), int(found.group(2)) if found.group(2) else None)
            continue
        if pending is not None and (_BACKTRACE.match(line) or line.startswith("   ")):
            continue
        flush()
        if _CRASH.search(line):
            phase.ended = "crash"
            if scene:
                phase.scenes[scene] = "crash"
            continue
        if line.strip() and not _BANNER.match(line):
            phase.printed.append(line)
            if scene:
                phase.scene_prints.setdefault(scene, []).append(line)
    flush()
    return phase


# --- preparing a scratch copy and running it --------------------------------------------------------------


def main_scene(project_godot: str) -> str:
    """`run/main_scene` of a project.godot ("" when it sets none)."""
    found = re.search(r'^run/main_scene\s*=\s*"([^"]*)"', project_godot, re.M)
    return found.group(1) if found else ""


def _with_tool(project_godot: str, major: int, blank: bool) -> str:
    """project.godot with the run tool as its first autoload (and, for the scenes phase, a blank main scene)."""
    line = f'{TOOL_NAME}="*res://{TOOL_NAME}.gd"'
    text = project_godot.replace("\r\n", "\n")
    if re.search(r"^\[autoload\]\s*$", text, re.M):
        text = re.sub(r"^\[autoload\]\s*\n", lambda m: f"[autoload]\n\n{line}\n", text, count=1, flags=re.M)
    else:
        text = text.rstrip("\n") + f"\n\n[autoload]\n\n{line}\n"
    if blank:
        setting = f'run/main_scene="res://{BLANK}"'
        if re.search(r"^run/main_scene\s*=.*$", text, re.M):
            text = re.sub(r"^run/main_scene\s*=.*$", lambda m: setting, text, count=1, flags=re.M)
        elif re.search(r"^\[application\]\s*$", text, re.M):
            text = re.sub(r"^\[application\]\s*\n", lambda m: f"[application]\n\n{setting}\n", text, count=1, flags=re.M)
        else:
            text = text.rstrip("\n") + f"\n\n[application]\n\n{setting}\n"
    return text


def install_tool(copy: Path, major: int, blank: bool, original_settings: str) -> None:
    """The run tool, its autoload line and the blank scene in a scratch copy (never in the user's copy)."""
    shutil.copyfile(TOOLS[major], copy / f"{TOOL_NAME}.gd")
    fmt = 3 if major >= 4 else 2
    (copy / BLANK).write_text(f'[gd_scene format={fmt}]\n\n[node name="{TOOL_NAME}_blank" type="Node"]\n')
    (copy / "project.godot").write_text(_with_tool(original_settings, major, blank), encoding="utf-8")


@dataclass
class RunSettings:
    frames: int = FRAMES
    scene_frames: int = SCENE_FRAMES
    fps: int = FPS
    seed: int | None = SEED  # None: each engine starts its generator as it does on its own
    timeout: float = RUN_TIMEOUT


def _phase(godot: Godot, copy: Path, scratch: Path, sandbox: Sandbox, settings: RunSettings, mode: str,
           scenes: Sequence[str], settings_text: str) -> Phase:
    """One mode of the run; the scenes mode starts the engine again after a scene that crashed, hung or
    quit the game, so one bad scene costs only itself."""
    install_tool(copy, godot.major, mode == "scenes", settings_text)
    home = scratch / f"home{godot.major}"
    home.mkdir(parents=True, exist_ok=True)
    requests = home / f"run-{mode}.txt"  # inside the sandbox's view: its /tmp is its own
    total = Phase()
    remaining = list(scenes)
    while True:
        requests.write_text("\n".join([f"mode\t{mode}", f"frames\t{settings.frames}",
                                       f"scene_frames\t{settings.scene_frames}",
                                       *([f"seed\t{settings.seed}"] if settings.seed is not None else []),
                                       *(f"scene\tres://{s}" for s in remaining)]) + "\n", encoding="utf-8")
        status, text = godot.run(["--path", str(copy), "--fixed-fps", str(settings.fps)], home,
                                 settings.timeout, sandbox, [copy], {"GD_RUN_REQUESTS": str(requests)}, merge=True)
        phase = parse_run(text)
        phase.exit_status = status
        if status is None:
            phase.ended = "hang"
        elif phase.ended not in ("done", "quit", "load failed") and (status < 0 or status >= 128 or phase.ended == "crash"):
            phase.ended = "crash"
        elif phase.ended == "not run":
            phase.ended = "crash" if status else "quit"
        if mode == "main":
            return phase
        stopped = next((s for s, how in phase.scenes.items() if how == "running"), None)
        if stopped is not None:
            phase.scenes[stopped] = phase.ended if phase.ended in ("crash", "hang", "quit") else "crash"
        total.scenes.update(phase.scenes)
        total.errors += phase.errors
        total.engine_errors += phase.engine_errors
        total.printed += phase.printed
        total.scene_prints.update(phase.scene_prints)
        total.frames += phase.frames
        started = [s for s in remaining if s in phase.scenes]
        if phase.ended == "done" or not started:
            total.ended = "done" if phase.ended == "done" else phase.ended
            return total
        remaining = remaining[remaining.index(started[-1]) + 1:]
        if not remaining:
            total.ended = "done"
            return total


def scenes_with_scripts(copy: Path, files: Sequence[str]) -> list[str]:
    """The scenes of a project whose text gives some node a script (what the scenes phase runs)."""
    out = []
    for path in files:
        if PurePosixPath(path).suffix == ".tscn" and not _is_tool(path):
            text = (copy / path).read_text(encoding="utf-8", errors="replace")
            if re.search(r"^script\s*=\s*(?:ExtResource|SubResource)", text, re.M):
                out.append(path)
    return out


def run_game(godot: Godot, copy: Path, scratch: Path, sandbox: Sandbox, scenes: Sequence[str],
             settings: RunSettings | None = None) -> GameRun:
    """Run the scratch copy `copy` (imported already) in `godot`: the main scene, then each of `scenes`."""
    settings = settings or RunSettings()
    started = time.monotonic()
    text = (copy / "project.godot").read_text(encoding="utf-8", errors="replace")
    main = _phase(godot, copy, scratch, sandbox, settings, "main", (), text) if main_scene(text) else Phase()
    alone = _phase(godot, copy, scratch, sandbox, settings, "scenes", scenes, text) if scenes else Phase("done")
    (copy / "project.godot").write_text(text, encoding="utf-8")
    return GameRun(godot.version, sandbox.describe(), settings.frames, settings.fps, settings.seed,
                   _relative(main_scene(text)), main, alone, round(time.monotonic() - started, 1))


def _listing(folder: Path) -> tuple:
    """The names and sizes in a folder the editor is writing to (its temporary files come and go)."""
    out = []
    for entry in os.scandir(folder) if folder.is_dir() else ():
        try:
            out.append((entry.name, entry.stat().st_size))
        except FileNotFoundError:
            continue
    return tuple(sorted(out))


def import_godot3(godot: Godot, copy: Path, scratch: Path, sandbox: Sandbox, timeout: float = IMPORT3_TIMEOUT,
                  quiet: float = IMPORT3_QUIET) -> bool:
    """Godot 3 imports a project's assets only through its editor (`-e --quit`), which often stays up once
    done: it is stopped when `.import/` has not changed for `quiet` seconds. Returns whether it finished."""
    home = scratch / "home3"
    (home / "config").mkdir(parents=True, exist_ok=True)
    argv = sandbox.wrap([*godot.command, "--path", str(copy), "-e", "--quit"], [home, copy])
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
           "XDG_CACHE_HOME": str(home / "cache"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, start_new_session=True, preexec_fn=sandbox.limits)
    folder = copy / ".import"
    start = last_change = time.monotonic()
    state: tuple = ()
    try:
        while proc.poll() is None:
            time.sleep(0.5)
            now = time.monotonic()
            seen = _listing(folder)
            if seen != state:
                state, last_change = seen, now
            if now - start > timeout or (now - last_change > quiet and now - start > quiet):
                break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return time.monotonic() - start <= timeout


# --- the played run: rendered, with input, frames and a trace ------------------------------------------------


SHOT_EVERY = 60
TRACE_EVERY = 10
BURST = 2  # frames kept on each side of a kept frame: what is animated is compared at its best alignment
PLAYS = 2  # runs per engine: what differs between an engine's own two runs is its noise, not the copy's
LOG_KEPT = 1 << 20  # the end of what a play printed, kept beside its frames


@dataclass
class PlaySettings:
    """The played run: `frames` frames rendered at `fps` with `events` (play.py), a frame kept every
    `shot_every` frames and once each new scene has settled, the drawn nodes traced every `trace_every`."""

    frames: int = FRAMES
    fps: int = FPS
    seed: int | None = SEED
    events: tuple[Event, ...] = ()
    shot_every: int = SHOT_EVERY
    trace_every: int = TRACE_EVERY
    burst: int = BURST
    plays: int = PLAYS
    timeout: float | None = None   # None: a minute, and a quarter of a second a frame (llvmpipe draws 5-40 a second)

    def limit(self) -> float:
        return self.timeout if self.timeout is not None else 60 + 0.25 * self.frames

    def requests(self, folder: Path) -> list[str]:
        return ["mode\tplay", f"frames\t{self.frames}", f"shots\t{folder}", f"shot_every\t{self.shot_every}",
                f"trace_every\t{self.trace_every}", f"burst\t{self.burst}", f"shot_width\t{WIDTH}",
                *([f"seed\t{self.seed}"] if self.seed is not None else []),
                *requests(self.events)]


@dataclass
class Play:
    """One played run of one engine: where its frames (`f000060.png`..., and `b000059.png`... around them) and its
    trace (`trace.tsv`) are."""

    engine: str
    folder: str
    ended: str
    frames: int
    shots: list[int]
    errors: list[RunError]
    seconds: float
    cached: bool = False

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict) -> Play:
        return cls(**{**doc, "errors": [RunError(**e) for e in doc["errors"]]})


def tree_hash(folder: Path) -> str:
    """A project folder's content, paths and bytes, as one hash (what a played run is kept by)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if relative.startswith((".godot/", ".import/")):
            continue
        digest.update(relative.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def play_key(tree: str, godot: Godot, settings: PlaySettings, number: int) -> str:
    """What a played run's frames and trace depend on: the project, the engine, the run tool, the input."""
    parts = [tree, godot.version, TOOLS[godot.major].read_text(encoding="utf-8"),
             "\n".join(settings.requests(Path("-"))), str(settings.fps), str(number)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def play_game(godot: Godot, copy: Path, scratch: Path, sandbox: Sandbox, display: Display, settings: PlaySettings,
              out: Path, number: int = 1) -> Play:
    """Play the scratch copy `copy` (imported already) rendered on `display`; its frames and trace go to `out`
    (a folder of the cache: when `out` holds a finished play already, that is returned as it is)."""
    done = out / "play.json"
    if done.is_file():
        play = Play.from_json(json.loads(done.read_text(encoding="utf-8")))
        play.cached = True
        return play
    started = time.monotonic()
    text = (copy / "project.godot").read_text(encoding="utf-8", errors="replace")
    install_tool(copy, godot.major, False, text)
    home = scratch / f"home{godot.major}"
    home.mkdir(parents=True, exist_ok=True)
    shots = home / f"play-{number}"
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir()
    request = home / f"run-play-{number}.txt"
    request.write_text("\n".join(settings.requests(shots)) + "\n", encoding="utf-8")
    status, log = godot.run(["--path", str(copy), "--fixed-fps", str(settings.fps)], home, settings.limit(), sandbox,
                            [copy], {"GD_RUN_REQUESTS": str(request)}, merge=True, display=display)
    (copy / "project.godot").write_text(text, encoding="utf-8")
    phase = parse_run(log)
    ended = "hang" if status is None else phase.ended if phase.ended in ("done", "quit", "load failed") else \
        "crash" if status else "quit"
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(shots, out)
    taken = sorted(int(p.stem[1:]) for p in out.glob("f*.png") if p.stem[1:].isdigit())
    play = Play(godot.version, str(out), ended, phase.frames, taken, phase.errors, round(time.monotonic() - started, 1))
    (out / "log.txt").write_text(log[-LOG_KEPT:], encoding="utf-8")
    done.write_text(json.dumps(play.to_json()), encoding="utf-8")  # last: a play without it is done again
    return play


# --- the fingerprint and the comparison ---------------------------------------------------------------------


_BOOLEAN = re.compile(r"\b(True|False)\b")


def normalise_print(line: str) -> str:
    """A printed line with its numbers and booleans written one way: Godot 4 prints `1.0`, `(1.0, 2.0)` and
    `true` where Godot 3 printed `1`, `(1, 2)` and `True`, and floats to more digits."""
    def number(m: re.Match) -> str:
        value = float(m.group(0))
        text = f"{value:.4f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    return _BOOLEAN.sub(lambda m: m.group(0).lower(), _NUMBER.sub(number, line.strip()))


def _segment(name: str, cls: str) -> str:
    """A node name the engine made up (`@Sprite@12`, `@@4`) names its class only: the numbers differ."""
    return f"@{cls}@" if name.startswith("@") else name


NOT_NODES4 = ("Tween",)  # Godot 3 node classes that are no node in Godot 4: a copy cannot keep them as nodes


def _internal3(name: str, script: str) -> bool:
    """Godot 3 lists the children engine classes add for themselves (`_h_scroll`, `_v_scroll`); Godot 4 hides
    them as internal children."""
    return not script and name.startswith(("_", "@@"))


@dataclass
class NodeKey:
    path: str
    cls: str
    script: str


def tree_keys(tree: Sequence[tuple], classes: Callable[[str], str] = lambda c: c, godot3: bool = False,
              scripts: Mapping[str, str] | None = None) -> tuple[Counter, dict[str, tuple[str, str, str, str]]]:
    """The tree as a multiset of normalised paths with their (class, script), and per path its facts;
    Godot 3 classes and script paths are read in Godot 4's names."""
    keys: Counter = Counter()
    facts: dict[str, tuple[str, str, str, str]] = {}
    skipped: set[str] = set()
    renamed: dict[str, str] = {}
    for path, cls, script, visible, position in tree:
        parent, _, name = path.rpartition("/")
        if parent in skipped or (godot3 and (_internal3(name, script) or cls in NOT_NODES4)):
            skipped.add(path)
            continue
        cls4 = classes(cls) if godot3 else cls
        script4 = (scripts or {}).get(script, script) if godot3 else script
        own = (renamed.get(parent, parent) + "/" if parent else "") + _segment(name, cls4)
        renamed[path] = own
        keys[(own, cls4, script4)] += 1
        facts.setdefault(own, (cls4, script4, visible, position))
    return keys, facts


def _error_sites(error: Mapping) -> set[tuple]:
    """Where an error happened in the original's terms: its file and line, and its message read loosely
    (Godot 3 names no script line for push_error and engine errors, and words messages a little apart)."""
    path, line = error.get("original_path") or error.get("path"), error.get("original_line") or error.get("line")
    loose = re.sub(r"[^a-z#]+", " ", re.sub(r"\d+", "#", (error.get("message") or "").lower())).strip()
    return ({(path, line)} if path and line else set()) | {("", loose)}


def compare(original: GameRun, copy: GameRun, copy_errors: Sequence[Mapping], classes: Callable[[str], str],
            scripts: Mapping[str, str] | None = None, limit: int = 50) -> dict:
    """Where the copy's run differs from the original's: nodes missing or of another class or script (and the
    share of the original's nodes the copy has with the same class and script), visibility and positions,
    prints, and errors the original did not have. `copy_errors` are the copy's errors attributed to the
    original's files and lines (verify.attribute); an error the original had too is the game's own."""
    want, want_facts = tree_keys(original.main.tree, classes, True, scripts)
    have, have_facts = tree_keys(copy.main.tree)
    matched = sum(min(n, have[k]) for k, n in want.items())
    by_path = {path: (cls, script) for path, cls, script in have}
    missing, other = [], []
    for (path, cls, script), n in sorted(want.items()):
        lost = n - min(n, have[(path, cls, script)])
        if not lost:
            continue
        if path in by_path:
            other.append({"node": path, "original": f"{cls} {script}".strip(),
                          "copy": " ".join(x for x in by_path[path] if x)})
        else:
            missing.append({"node": path, "class": cls, "script": script})
    visibility, moved = [], []
    for path, (cls, script, visible, position) in want_facts.items():
        got = have_facts.get(path)
        if got is None or (got[0], got[1]) != (cls, script):
            continue
        if visible and got[2] and visible != got[2]:
            visibility.append({"node": path, "original": visible == "1", "copy": got[2] == "1"})
        if position and got[3] and position != got[3]:
            moved.append({"node": path, "original": position, "copy": got[3]})
    before = [normalise_print(p) for p in original.main.printed]
    after = [normalise_print(p) for p in copy.main.printed]
    only_original, only_copy = [], []
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            only_original += before[a0:a1]
        if tag in ("replace", "insert"):
            only_copy += after[b0:b1]
    theirs = set().union(*(_error_sites(asdict(e)) for e in [*original.main.errors, *original.scenes.errors]),
                         *(_error_sites({"message": m})
                           for m in [*original.main.engine_errors, *original.scenes.engine_errors]))
    new = [e for e in copy_errors if not _error_sites(e) & theirs]
    own = [e for e in copy_errors if _error_sites(e) & theirs]
    total = sum(want.values())
    return {
        "original_engine": original.engine, "original_ended": original.main.ended, "copy_ended": copy.main.ended,
        "frames_original": original.main.tree_frame, "frames_copy": copy.main.tree_frame,
        "nodes_original": total, "nodes_copy": sum(have.values()), "nodes_matched": matched,
        "nodes_matched_share": round(matched / total, 4) if total else None,
        "nodes_missing": missing[:limit], "nodes_missing_count": len(missing),
        "nodes_other": other[:limit], "nodes_other_count": len(other),
        "visibility_differs": visibility[:limit], "visibility_differs_count": len(visibility),
        "moved": moved[:limit], "moved_count": len(moved),
        "prints_original": len(before), "prints_copy": len(after),
        "prints_only_original": only_original[:limit], "prints_only_copy": only_copy[:limit],
        "prints_differ": len(only_original) + len(only_copy),
        "errors_original": len(original.errors()), "errors_new": new, "errors_own": own,
    }


# --- the run report ----------------------------------------------------------------------------------------


def run_figures(copy: GameRun, original: GameRun | None, comparison: dict | None, errors: Sequence[Mapping]) -> dict:
    """The run's figures for `status`, the report and the UI: the copy's runtime errors (unique) and how many
    the original did not have, crashes and hangs, and the share of the original's nodes the copy kept."""
    own = sum(1 for e in errors if e.get("own"))
    return {
        "engine": copy.engine, "frames": copy.frames, "fps": copy.fps, "seed": copy.seed,
        "main_scene": copy.main_scene, "main_ended": copy.main.ended,
        "runtime_errors": len(errors), "runtime_errors_new": (len(errors) - own) if original else None,
        "runtime_errors_own": own if original else None,
        "crashed_or_hung": copy.crashed_or_hung(), "scenes_run": len(copy.scenes.scenes),
        "scenes_with_errors": len({e["scene"] for e in errors if e.get("scene")}),
        "engine_errors": len(set(copy.main.engine_errors) | set(copy.scenes.engine_errors)),
        "original_engine": original.engine if original else None,
        "original_ended": original.main.ended if original else None,
        "original_runtime_errors": len(original.errors()) if original else None,
        "original_crashed_or_hung": original.crashed_or_hung() if original else None,
        "nodes_original": comparison["nodes_original"] if comparison else None,
        "nodes_matched": comparison["nodes_matched"] if comparison else None,
        "nodes_matched_share": comparison["nodes_matched_share"] if comparison else None,
        "prints_differ": comparison["prints_differ"] if comparison else None,
    }


def run_figure_lines(f: Mapping) -> list[str]:
    """`runtime errors: 3 (1 the original had too)`, one line a figure."""
    out = [f"game run: Godot {f['engine']}, {f['frames']} frames at {f['fps']} fps, seed {f['seed']}, main scene "
           f"{f['main_scene'] or '(none)'}: {f['main_ended']}; {f['scenes_run']} scenes alone"]
    errors = f"runtime errors: {f['runtime_errors']}"
    if f.get("runtime_errors_new") is not None:
        errors += f" ({f['runtime_errors_new']} the original did not have, {f['runtime_errors_own']} the game's own)"
    out.append(errors + (f" in {f['scenes_with_errors']} scenes run alone" if f["scenes_with_errors"] else ""))
    out.append("crashes and hangs: " + (", ".join(f["crashed_or_hung"]) or "none"))
    if f.get("original_engine"):
        out.append(f"original in Godot {f['original_engine']}: {f['original_ended']}, {f['original_runtime_errors']} "
                   f"runtime errors" + (", " + ", ".join(f["original_crashed_or_hung"])
                                        if f["original_crashed_or_hung"] else ""))
        share = f["nodes_matched_share"]
        out.append(f"the original's nodes kept (same class and script): {f['nodes_matched']} of {f['nodes_original']}"
                   + (f" ({share:.0%})" if share is not None else ""))
        out.append(f"printed lines that differ: {f['prints_differ']}")
    return out + (seen_lines(f["seen"]) if f.get("seen") else [])
