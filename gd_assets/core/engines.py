"""The Godot engines a verification runs: found by version, run with a private home and, for anything
that runs a project's code, inside a sandbox (sandbox.py)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gd_assets.core.display import Display
from gd_assets.core.sandbox import Sandbox

_VERSION = re.compile(r"^(\d+)\.(\d+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class GodotNotFound(RuntimeError):
    """No Godot binary of the version asked for was given or found; the message says how to point at one."""


HOW_TO = ("no Godot 4 binary found: pass --godot PATH, or set GODOT4 (or GODOT) to a Godot 4 executable, "
          "or put `godot4` or `godot` (4.x) on PATH")
HOW_TO_3 = ("no Godot 3 binary found to run the original beside its copy: pass --godot3 PATH, or set GODOT3, or put "
            "`godot3`, `godot3-server` or `godot` (3.x) on PATH (on Debian, ./scripts/install-godot.sh installs both)")


@dataclass
class Godot:
    """A Godot executable, run with a private HOME so no editor settings leak in or out, and, given a
    sandbox, confined to it with only `writable` (and that HOME) writable."""

    command: list[str]
    version: str = ""

    @property
    def major(self) -> int:
        return int(self.version.split(".", 1)[0]) if self.version[:1].isdigit() else 4

    def run(self, args: Sequence[str], home: Path, timeout: float, sandbox: Sandbox | None = None,
            writable: Sequence[Path] = (), env: Mapping[str, str] | None = None, merge: bool = False,
            display: Display | None = None) -> tuple[int | None, str]:
        """Exit status (None on timeout) and stderr + stdout (one stream, in order, with `merge`); the
        whole process group dies on timeout. With a `display` the engine renders (Godot 4 with its
        Compatibility renderer, the one Mesa's llvmpipe draws) and plays no sound."""
        environ = dict(os.environ, HOME=str(home), **(env or {}))
        for name, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"),
                          ("XDG_RUNTIME_DIR", "runtime")):
            (home / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
            environ[name] = str(home / sub)
        if display is None:
            argv = [*self.command, *(["--headless"] if self.major >= 4 else []), *args]
        else:
            renderer = ["--rendering-driver", "opengl3"] if self.major >= 4 else []
            argv = display.wrap([*self.command, *renderer, "--audio-driver", "Dummy", *args])
        if sandbox is not None:
            argv = sandbox.wrap(argv, [home, *writable])
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT if merge else subprocess.PIPE, env=environ,
                                start_new_session=True, preexec_fn=sandbox.limits if sandbox is not None else None)
        captures = [Capture(proc.stderr)] if proc.stderr is not None else []
        captures.append(Capture(proc.stdout))
        try:
            status: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            status = None
        text = "\n".join(c.text() for c in captures) if len(captures) > 1 else "\n" + captures[0].text()
        return status, _ANSI.sub("", text)


class Capture:
    """What a process prints on one pipe, read as it comes. Up to `budget` bytes every line is kept; past it,
    only lines not seen before and the tools' marker lines (`@@gd-`): a game printing the same error every
    frame printed gigabytes, all held in memory, where a few distinct lines say the same."""

    BUDGET = 32 << 20
    SEEN = 1 << 18  # distinct lines remembered past the budget

    def __init__(self, stream, budget: int = BUDGET) -> None:
        self.parts: list[bytes] = []
        self.size, self.budget, self.dropped = 0, budget, 0
        self.seen: set[int] = set()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for line in iter(stream.readline, b""):
            key = hash(line)
            if self.size < self.budget or line.startswith(b"@@gd-") or \
                    key not in self.seen and len(self.seen) < self.SEEN:
                self.parts.append(line)
                self.size += len(line)
            else:
                self.dropped += 1
            if len(self.seen) < self.SEEN:
                self.seen.add(key)
        stream.close()

    def text(self) -> str:
        self.thread.join()
        return b"".join(self.parts).decode(errors="replace")


def _asked(command: Sequence[str], flag: str, timeout: float) -> str | None:
    """What `command flag` prints (stdout, then stderr) with a scratch HOME; None when it cannot run."""
    try:
        with tempfile.TemporaryDirectory(prefix="gd-verify-ask-") as tmp:
            done = subprocess.run([*command, flag], capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL, env=dict(os.environ, HOME=tmp))
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout + "\n" + done.stderr


def godot_version(command: Sequence[str], timeout: float = 60.0, major: str = "4") -> str | None:
    """What `command --version` prints when it is Godot `major`.x, else None."""
    printed = _asked(command, "--version", timeout) or ""
    line = next((s.strip() for s in printed.splitlines() if _VERSION.match(s.strip())), "")
    return line if line.startswith(major + ".") else None


# Where each engine is looked for: environment variables, then names on PATH.
_SEARCH = {"4": (("GODOT4", "GODOT"), ("godot4", "godot")), "3": (("GODOT3",), ("godot3", "godot3-server", "godot"))}
RUNNER3 = "godot3-runner"  # Godot 3's runtime that renders (Debian's `godot3-server` draws nothing)
HOW_TO_RUNNER = ("no Godot 3 runtime that renders (Debian's `godot3-runner`): set GODOT3_RUNNER or put `godot3-runner` "
                 "beside the Godot 3 found (./scripts/install-godot.sh installs it); the original ran without frames")


def _renders3(command: Sequence[str], timeout: float = 60.0) -> bool:
    """Whether a Godot 3 build draws: its `--help` offers a GLES video driver (a server build offers 'Dummy')."""
    return "'GLES" in (_asked(command, "--help", timeout) or "")


def find_renderer3(godot3: Godot, env: Mapping[str, str] | None = None) -> Godot:
    """The Godot 3 that draws frames: `godot3` itself unless it is a server build, else $GODOT3_RUNNER, a
    `godot3-runner` beside it, or one on PATH (each a Godot 3.x that offers a GLES driver)."""
    env = os.environ if env is None else env
    if _renders3(godot3.command):
        return godot3
    candidates = [env.get("GODOT3_RUNNER") or "", str(Path(godot3.command[-1]).with_name(RUNNER3)),
                  shutil.which(RUNNER3, path=env.get("PATH")) or ""]
    for candidate in dict.fromkeys(c for c in candidates if c):
        if os.access(candidate, os.X_OK) and (version := godot_version([candidate], major="3")) \
                and _renders3([candidate]):
            return Godot([candidate], version)
    raise GodotNotFound(HOW_TO_RUNNER)


def find_godot(explicit: str | None = None, env: Mapping[str, str] | None = None, major: str = "4") -> Godot:
    """The Godot `major` to run: `explicit` (an error if it is not that Godot), else for Godot 4 $GODOT4,
    $GODOT, then `godot4` and `godot` on PATH (Godot 3: $GODOT3, `godot3`, `godot3-server`, `godot`), the
    first answering `--version` with `major`.x."""
    env = os.environ if env is None else env
    if explicit:
        path = shutil.which(explicit) or explicit
        version = godot_version([path], major=major)
        if version is None:
            raise GodotNotFound(f"{explicit} is not a Godot {major} executable (`{explicit} --version` did not print "
                                f"{major}.x)")
        return Godot([path], version)
    names, programs = _SEARCH[major]
    candidates = [env[name] for name in names if env.get(name)]
    candidates += [found for name in programs if (found := shutil.which(name, path=env.get("PATH")))]
    for candidate in candidates:
        version = godot_version([candidate], major=major)
        if version is not None:
            return Godot([candidate], version)
    raise GodotNotFound(HOW_TO if major == "4" else HOW_TO_3)
