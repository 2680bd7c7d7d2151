"""project.godot for Godot 4: `config_version=5` with `config/features`, renamed settings (the rename
map's project.godot rows), the renderer, the input map in Godot 4's fields and key codes, and Godot 3's 2D
gravity and window size where the project relied on their defaults (Godot 4 changed them).

Godot 4 treats a `config_version=4` file as a project to upgrade, and reads a Godot 3 key event as a
key with no key, so both are converted; `_global_script_classes` goes (Godot 4 keeps its class list
in `.godot/`). Each fragment is a section (or the preamble), rewritten on its own lines.
"""

from __future__ import annotations

import re

from gd_assets.core.receivers import Scope
from gd_assets.core.rewrite.edits import FragmentRewrite
from gd_assets.core.rewrite.input_events import convert_events
from gd_assets.core.rewrite.rules import RewriteRules
from gd_assets.core.rewrite.text import TextEdits
from gd_assets.core.scene_text import bracket_scan

_SECTION = re.compile(r"^\[([^\]]+)\]\s*$", re.M)
_KEY = re.compile(r"^([A-Za-z0-9_\"][^=\n]*?)=(.*)$", re.M)
_RENDERERS = {"GLES2": ("gl_compatibility", "GL Compatibility"), "GLES3": ("forward_plus", "Forward Plus")}
_STRETCH_MODES = {'"2d"': '"canvas_items"'}
_GONE = ("_global_script_classes", "_global_script_class_icons")


def _value_end(text: str, start: int) -> int:
    """The end of a setting's value starting at `start`: brackets and strings may run over lines."""
    return next((i for i, ch, depth in bracket_scan(text, start, len(text)) if ch == "\n" and depth <= 0), len(text))


def settings(text: str):
    """(key, key start, value start, value end) of each setting of a section's text."""
    at = 0
    while (m := _KEY.search(text, at)) is not None:
        end = _value_end(text, m.start(2))
        yield m.group(1).strip(), m.start(1), m.start(2), end
        at = max(end, m.end(1)) + 1


def rewrite_project_godot(kind: str, text: str, start_line: int, rules: RewriteRules,
                          scope: Scope | None = None) -> FragmentRewrite:
    """One section (or the preamble) of project.godot."""
    ed = TextEdits(text, start_line)
    head = _SECTION.search(text)
    section = head.group(1) if head else ""
    version_cite = rules.cite_prototype("project-godot-config-version")
    moves: dict[str, list[tuple[str, dict]]] = {}  # a section -> the settings moved into it
    for key, a, v, end in settings(text):
        value = text[v:end]
        if section == "" and key == "config_version" and value.strip() in ("3", "4"):
            ed.replace(v, end, "5", "config_version", version_cite, 0.95)
        elif section == "" and key in _GONE:
            ed.delete_lines(a, end, "global_script_classes", rules.cite_prototype("project-godot-global-script-classes"))
        elif section == "application" and key == "config/features":
            continue
        elif section == "rendering" and key == "quality/driver/driver_name" and value.strip().strip('"') in _RENDERERS:
            method = _RENDERERS[value.strip().strip('"')][0]
            ed.replace(a, end, f'renderer/rendering_method="{method}"\nrenderer/rendering_method.mobile="{method}"',
                       "renderer", rules.cite_prototype("project-godot-window-size"), 0.9)
        elif section == "rendering" and key == "quality/driver/fallback_to_gles2":
            ed.delete_lines(a, end, "renderer", rules.cite_prototype("project-godot-window-size"), 0.9)
        elif section == "input":
            godot3 = scope is None or scope.engine_version() != "4"
            for x, y, new, rule, cite in convert_events(text, v, end, rules, godot3):
                ed.replace(x, y, new, rule, cite, 0.9)
        elif not _renamed(ed, rules, section, key, a, v, end):
            _answered(ed, rules, section, key, a, v, end, moves)
    _pin_defaults(ed, rules, scope, section)   # before the moved settings: a pinned key stays in its section
    for new_section, lines in moves.items():  # Godot reads a section written twice as one
        block = "\n".join(line for line, _ in lines)
        ed.insert(len(text.rstrip()), f"\n\n[{new_section}]\n\n{block}", "setting_rename", lines[0][1], 0.9)
    if section == "application" and "config/features=" not in text:
        ed.insert(len(text.rstrip()), "\n" + features(rules, scope), "config_features", version_cite, 0.9)
    return ed.result()


# Settings whose default Godot 4 changed, where a Godot 3 project that left them unset relied on Godot 3's:
# (Godot 3 key, Godot 3's default, the Godot 4 key it is written as). Godot 4: 2D gravity 980, a window of 1152x648.
CHANGED_SETTINGS = (("physics/2d/default_gravity", "98.0", "physics/2d/default_gravity"),
                    ("display/window/size/width", "1024", "display/window/size/viewport_width"),
                    ("display/window/size/height", "600", "display/window/size/viewport_height"))


def _pin_defaults(ed: TextEdits, rules: RewriteRules, scope: Scope | None, section: str) -> None:
    """Godot 3's value of each setting in CHANGED_SETTINGS the project left unset: in its section where
    project.godot has it, else in a new section written just before [application]."""
    written = scope.context.settings.get(scope.root) if scope is not None else None
    if written is None:
        return
    here: list[str] = []
    elsewhere: dict[str, list[str]] = {}
    cite = None
    for old, value, new in CHANGED_SETTINGS:
        home, _, key = new.partition("/")
        if old in written or (section != home and section != "application"):
            continue
        if section == home and f"[{home}]" in written:
            here.append(f"{key}={value}")
        elif section == "application" and f"[{home}]" not in written:
            elsewhere.setdefault(home, []).append(f"{key}={value}")
        else:
            continue
        cite = cite or rules.cite_member("3", "ProjectSettings", "property", old)
    if here:
        ed.insert(len(ed.text.rstrip()), "".join(f"\n{line}" for line in here), "changed_default", cite, 0.9)
    if elsewhere:
        ed.insert(0, "".join(f"[{home}]\n\n" + "\n".join(lines) + "\n\n" for home, lines in elsewhere.items()),
                  "changed_default", cite, 0.9)


def features(rules: RewriteRules, scope: Scope | None) -> str:
    """`config/features` as the Godot 4 editor writes it: the release the corpus documents and the renderer."""
    names = [rules.godot4_release]
    renderer = scope.context.renderers.get(scope.root) if scope is not None else None
    names.append(_RENDERERS.get(renderer or "GLES3", _RENDERERS["GLES3"])[1])
    return "config/features=PackedStringArray(" + ", ".join(f'"{n}"' for n in names) + ")"


def _renamed(ed: TextEdits, rules: RewriteRules, section: str, key: str, a: int, v: int, end: int) -> bool:
    """A setting the rename map renames (its key within the section, or its full path), and the values
    whose type changed with it (v-sync became a mode; the "2d" stretch mode became "canvas_items")."""
    row = next(iter(rules.renames.get(("project_godot", key), [])), None) or next(
        iter(rules.renames.get(("project_setting", f"{section}/{key}"), [])), None)
    value = ed.text[v:end].strip()
    if row is not None and not row.ambiguous:
        new = row.new.split("/", 1)[1] if row.new.startswith(section + "/") else row.new
        ed.replace(a, a + len(key), new, "setting_rename", row.cite(), 0.9)
        if new.endswith("vsync_mode") and value in ("true", "false"):
            ed.replace(v, end, "1" if value == "true" else "0", "setting_value", row.cite(), 0.9)
        return True
    if section == "display" and key == "window/stretch/mode" and value in _STRETCH_MODES:
        ed.replace(v, end, _STRETCH_MODES[value], "setting_value", rules.cite_prototype("project-godot-window-size"), 0.9)
        return True
    return False


def _answered(ed: TextEdits, rules: RewriteRules, section: str, key: str, a: int, v: int, end: int,
              moves: dict[str, list[tuple[str, dict]]]) -> None:
    """A setting Godot 4 reads under another key (a curated answer: moved within its section or to another,
    its value converted where the answer says how), else a manual item when Godot 4 dropped it."""
    full = f"{section}/{key}" if section else key
    answer = rules.setting_answer(full)
    gone = rules.surface.gone("ProjectSettings", full, "property") is not None
    if answer is None and not gone:
        return  # the project's own setting, or one both versions read
    if answer is not None and answer.kind == "renamed" and answer.new:
        values = dict(pair.split("=", 1) for pair in answer.value.split(",") if "=" in pair)
        value = ed.text[v:end].strip()
        new_value = values.get(value, value)
        new_section, _, new_key = answer.new.partition("/")
        if new_value == '""':  # an empty path Godot 3 ignored; Godot 4 takes it (an empty log path crashes 4.6)
            ed.delete_lines(a, end, "setting_rename", answer.cite(), 0.9)
        elif new_section == section:
            ed.replace(a, a + len(key), new_key, "setting_rename", answer.cite(), 0.9)
            if new_value != value:
                ed.replace(v, end, new_value, "setting_value", answer.cite(), 0.9)
        elif ed.delete_lines(a, end, "setting_rename", answer.cite(), 0.9):
            moves.setdefault(new_section, []).append((f"{new_key}={new_value}", answer.cite()))
        return
    if answer is not None:
        ed.manual_item(a, end, "api_answer", f"{full}: no Godot 4 setting under this name", answer.text,
                       [answer.cite(), rules.cite(f"map:diff:property:ProjectSettings.{full}")])
        return
    found = rules.gone_answer("project_setting", "ProjectSettings", full)
    ed.manual_item(a, end, found.kind, f"{full}: no Godot 4 setting under this name", found.why, list(found.cites))
