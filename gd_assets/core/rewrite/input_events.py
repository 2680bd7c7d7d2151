"""Serialised input events, as project.godot's input map and scenes hold them
(`Object(InputEventKey,...,"scancode":32,...)`), in the fields and numbers Godot 4 reads.

Godot 4 reads a Godot 3 key event as a key with no key at all (`"scancode"` is not a field of its
InputEventKey), so every keyboard binding is lost unless converted. Field names follow the rename
map's input-map rows; key codes follow the two class references' `KEY_*` constants (special keys
moved from bit 24 to bit 22); joypad buttons follow Godot 4's SDL layout, the triggers becoming axes
(the table of Godot's own converter, which the joypad prototype row describes).
"""

from __future__ import annotations

import re

from gd_assets.core.rewrite.rules import RewriteRules
from gd_assets.core.scene_text import scan

_OBJECT = re.compile(r"Object\((InputEvent\w+),")
_FIELD = re.compile(r'"(\w+)":')
_SCANCODE = re.compile(r'"(physical_)?scancode":(\d+)')
_BUTTON = re.compile(r'"button_index":(\d+),("pressure":[-\d.e]+,"pressed":(?:true|false))')
_AXIS = re.compile(r'"axis":(\d+)\b')
_COMMAND = re.compile(r'"command":(true|false),')
# Godot 3 joypad button -> Godot 4 button (-1: the trigger became an axis), as Godot's converter numbers them.
JOY_BUTTONS = (0, 1, 2, 3, 9, 10, -1, -1, 7, 8, 4, 6, 11, 12, 13, 14, 5, 15, 16, 17, 18, 19, 20)
TRIGGER_AXES = {6: 4, 7: 5}  # Godot 3 L2/R2 buttons and axes -> Godot 4 trigger axes


def _closing(text: str, start: int, end: int) -> int | None:
    """The offset after the `)` closing the parenthesis opened just before `start`."""
    depth = 1
    for i, ch, inside in scan(text, start, end):
        if not inside and ch in "()":
            depth += 1 if ch == "(" else -1
            if depth == 0:
                return i + 1
    return None


def convert_event(kind: str, body: str, rules: RewriteRules, joypad: bool = True) -> tuple[str, str, str]:
    """(new kind, new body, what changed: keys | joypad | fields) of one serialised event; `joypad`: the
    project is a Godot 3 one, whose joypad numbers are Godot 3's (field names alone cannot tell)."""
    what = "fields"
    renames = {old.strip(',":'): rows[0].new.strip(',":') for (category, old), rows in rules.renames.items()
               if category == "input_map" and rows}

    def field(m: re.Match) -> str:
        return f'"{renames.get(m.group(1), m.group(1))}":'

    def key(m: re.Match) -> str:
        return f'"{m.group(1) or ""}keycode":{rules.key_code(int(m.group(2)))}'

    if kind == "InputEventKey" and _SCANCODE.search(body):
        body, what = _SCANCODE.sub(key, body), "keys"
    if kind == "InputEventJoypadButton" and joypad:
        found = _BUTTON.search(body)
        if found and int(found.group(1)) in TRIGGER_AXES:
            axis = TRIGGER_AXES[int(found.group(1))]
            return ("InputEventJoypadMotion", body[:found.start()] + f'"axis":{axis},"axis_value":1.0'
                    + body[found.end():], "joypad")
        if found and int(found.group(1)) < len(JOY_BUTTONS):
            body = body[:found.start(1)] + str(JOY_BUTTONS[int(found.group(1))]) + body[found.end(1):]
            what = "joypad"
    if kind == "InputEventJoypadMotion" and joypad:
        body = _AXIS.sub(lambda m: f'"axis":{TRIGGER_AXES.get(int(m.group(1)), int(m.group(1)))}', body)
        what = "joypad"
    body = _COMMAND.sub(lambda m: '"command_or_control_autoremap":true,' if m.group(1) == "true" else "", body)
    return kind, _FIELD.sub(field, body), what


def convert_events(text: str, start: int, end: int, rules: RewriteRules, joypad: bool = True):
    """(a, b, new, rule, evidence) for each Godot 3 serialised event in text[start:end]."""
    cites = {"keys": rules.cite_prototype("project-godot-input-scancode"),
             "joypad": rules.cite_prototype("project-godot-joypad-buttons-axes"),
             "fields": rules.cite_prototype("project-godot-input-scancode")}
    at = start
    while (m := _OBJECT.search(text, at, end)) is not None:
        close = _closing(text, m.start() + len("Object("), end)
        if close is None:
            return
        body = text[m.end():close - 1]
        kind, new_body, what = convert_event(m.group(1), body, rules, joypad)
        if (kind, new_body) != (m.group(1), body):
            yield m.start(), close, f"Object({kind},{new_body})", "input_event", cites[what]
        at = close
