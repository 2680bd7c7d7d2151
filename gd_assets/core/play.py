"""The input a game is played with in `verify --run`: the same events, at the same physics frames, in both engines.

An input script is a list of events, one a line: `FRAME NAME pressed|released`, where NAME is an input action
of the project (`jump`, `ui_accept`) or `click` / `click:K` (the K-th visible button on screen, in tree order,
pressed at its centre: the same button in both engines wherever their trees agree). Without a script of the
user's, one is made from the project's input map by a seeded policy that holds and taps its actions and
clicks buttons, so two runs of the same game get the same events. The run tool applies them at the start of
the physics frame they name (`Input.action_press` acts in that frame in both engines).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# The built-in actions most games read (ui_cancel is left out: many games quit or pause on it)
UI_ACTIONS = ("ui_accept", "ui_left", "ui_right", "ui_up", "ui_down")
SEED = 3
_LINE = re.compile(r"^(\d+)\s+(\S+)\s+(pressed|released)$")


class PlayScriptError(ValueError):
    """An input script line that cannot be read; the message names the file and the line."""


@dataclass(frozen=True)
class Event:
    frame: int        # physics frame, from 1
    name: str         # an action, or `click:K`
    pressed: bool

    def request(self) -> str:
        """The run tool's request line: `event <TAB> F <TAB> press|release <TAB> action` or click|unclick K."""
        if self.name.startswith("click"):
            return f"event\t{self.frame}\t{'click' if self.pressed else 'unclick'}\t{self.name.partition(':')[2] or 0}"
        return f"event\t{self.frame}\t{'press' if self.pressed else 'release'}\t{self.name}"

    def line(self) -> str:
        return f"{self.frame} {self.name} {'pressed' if self.pressed else 'released'}"


def read_script(path: Path) -> list[Event]:
    """A user's input script (`--play FILE`); `#` starts a comment."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PlayScriptError(f"{path}: cannot read the input script ({error})") from error
    events = []
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        found = _LINE.match(line)
        if found is None or int(found.group(1)) < 1:
            raise PlayScriptError(f"{path}:{number}: expected `FRAME ACTION pressed|released` (FRAME from 1; ACTION "
                                  f"an input action, `click` or `click:K`), got {raw.strip()!r}")
        name = found.group(2)
        if name.startswith("click") and not re.fullmatch(r"click(:\d+)?", name):
            raise PlayScriptError(f"{path}:{number}: a click is `click` or `click:K` (K the button's number), got {name!r}")
        events.append(Event(int(found.group(1)), name, found.group(3) == "pressed"))
    return sorted(events, key=lambda e: e.frame)


def policy(actions: Sequence[str], frames: int, seed: int = SEED) -> list[Event]:
    """A seeded player: every half second to two seconds, hold an action for a while, tap one, or click a
    button; each press released before the next begins, so no action stays down past the script."""
    rng = random.Random(seed)
    own = [a for a in dict.fromkeys(actions) if a not in UI_ACTIONS]
    events: list[Event] = []
    frame = rng.randint(30, 90)
    while frame < frames - 2:
        roll = rng.random()
        if roll < 0.25:
            name, length = f"click:{rng.randint(0, 7)}", 3
        else:
            name = rng.choice(own if own and rng.random() < 0.8 else UI_ACTIONS)  # the game's own actions first
            length = rng.randint(2, 6) if roll < 0.6 else rng.randint(15, 90)
        end = min(frame + length, frames - 1)
        events += [Event(frame, name, True), Event(end, name, False)]
        frame = end + rng.randint(10, 90)
    return events


def requests(events: Sequence[Event]) -> list[str]:
    return [e.request() for e in events]
