"""Class renames in scenes and resources, renamed keys in project.godot, by the same mapping rows."""

from __future__ import annotations

import re

from gd_assets.core.receivers import Scope, is_project
from gd_assets.core.rewrite.edits import Edit, FragmentRewrite, apply_edits
from gd_assets.core.rewrite.rules import RewriteRules

_TYPE_ATTR = re.compile(r'\btype="(\w+)"')
_PROPERTY = re.compile(r"^([A-Za-z_]\w*) = (.*)$")
# Node.pause_mode (inherit, stop, process) -> process_mode (inherit, pausable, always)
PAUSE_TO_PROCESS = {"0": "0", "1": "1", "2": "3"}


def _property_edit(out: FragmentRewrite, line: str, number: int, cls: str, rules: RewriteRules) -> None:
    """A renamed property of a node or resource of engine class `cls` (`margin_left` -> `offset_left`);
    `pause_mode = 2` also gets Godot 4's value (`process_mode = 3`)."""
    name, value = _PROPERTY.match(line).groups()
    if not rules.surface.is_class(cls):
        return
    row = rules.member_rename("property", name, cls)
    if row is None:
        return
    out.edits.append(Edit(number, 1, number, len(name) + 1, name, row.new, "property_rename", row.cite(), 0.9))
    if name == "pause_mode" and value.strip() in PAUSE_TO_PROCESS:
        start = len(name) + 4
        out.edits.append(Edit(number, start, number, start + len(value), value, PAUSE_TO_PROCESS[value.strip()],
                              "pause_mode_value", rules.cite("pause_mode"), 0.9))


def rewrite_config(kind: str, text: str, start_line: int, rules: RewriteRules, file_kind: str | None,
                   scope: Scope | None = None) -> FragmentRewrite:
    """Class renames in `.tscn`/`.tres` headers (`type="KinematicBody2D"`), renamed properties of typed
    nodes and sub-resources, and renamed keys of project.godot, by the same mapping rows; values
    and other lines stay as they are."""
    out = FragmentRewrite(text=text)
    lines = text.split("\n")
    section_type = None  # the engine class of the node or resource whose properties follow
    for i, line in enumerate(lines):
        if file_kind in ("scene", "resource") and line.startswith("["):
            found = _TYPE_ATTR.search(line)
            section_type = found.group(1) if found and line.startswith(("[node", "[sub_resource")) else None
            for match in _TYPE_ATTR.finditer(line):
                name = match.group(1)
                row = rules.class_rename(name)
                if row is None or name in ("File", "Directory", "Tween") or (
                        scope is not None and is_project(scope.class_type(name) or "")):
                    continue
                out.edits.append(Edit(start_line + i, match.start(1) + 1, start_line + i, match.end(1) + 1, name,
                                      row.new, "class_rename", row.cite(), 0.95))
        elif file_kind in ("scene", "resource") and section_type and _PROPERTY.match(line):
            _property_edit(out, line, start_line + i, section_type, rules)
        elif file_kind == "project" and "=" in line and not line.startswith(("[", ";")):
            key = line.split("=", 1)[0].strip()
            row = next(iter(rules.renames.get(("project_godot", key), [])), None) or next(
                iter(rules.renames.get(("project_setting", key), [])), None)
            if row is not None and not row.ambiguous:
                at = line.index(key)
                out.edits.append(Edit(start_line + i, at + 1, start_line + i, at + len(key) + 1, key, row.new,
                                      "setting_rename", row.cite(), 0.9))
    out.text = apply_edits(text, out.edits, start_line)
    return out
