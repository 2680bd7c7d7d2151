"""A virtual display for the engines that render: Xvfb started inside the sandbox, beside the engine.

Godot 4 draws nothing headless (a dummy rasteriser), and Godot 3's renderer needs a window too, so the
frames of `verify --run` come from each engine on a display of its own: Xvfb (Debian's `xvfb`) started in
the sandbox's private `/tmp` and network namespace, the engine run on it, the server stopped when the
engine ends. Mesa's llvmpipe draws on the CPU. Without Xvfb the run goes on headless, without frames.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SCREEN = (1920, 1080)   # big enough for the usual window sizes: a larger window is clamped by the server
NUMBER = 7              # the display's number inside the sandbox (its /tmp and network are its own)
HOW_TO = ("no virtual display to render frames on: install Debian's xvfb (`apt-get install xvfb`); the game ran "
          "headless, without frames")
_SCRIPT = ('"$0" :{n} -screen 0 {w}x{h}x24 -nolisten tcp -noreset >/dev/null 2>&1 & x=$!; i=0; '
           'while [ ! -e /tmp/.X11-unix/X{n} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; '
           'DISPLAY=:{n} "$@"; s=$?; kill $x 2>/dev/null; wait $x 2>/dev/null; exit $s')


class DisplayUnavailable(RuntimeError):
    """No Xvfb here; the message says what to install."""


@dataclass(frozen=True)
class Display:
    """Xvfb, started for one engine process and stopped after it."""

    program: str
    width: int = SCREEN[0]
    height: int = SCREEN[1]

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """`argv` run with DISPLAY set to a fresh server (to be wrapped by the sandbox, whose /tmp it uses)."""
        return ["sh", "-c", _SCRIPT.format(n=NUMBER, w=self.width, h=self.height), self.program, *argv]


def find_display(env: Mapping[str, str] | None = None) -> Display:
    """Xvfb on PATH, else DisplayUnavailable."""
    program = shutil.which("Xvfb", path=(env or os.environ).get("PATH"))
    if program is None:
        raise DisplayUnavailable(HOW_TO)
    return Display(program)
