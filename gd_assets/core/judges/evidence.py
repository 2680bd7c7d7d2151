"""The evidence judge: deterministic, CPU only, and the default.

It reads a fragment's cues against what the corpora document for each version (see surface.py):
version-specific syntax, names only the 3.x or only the 4.x reference has, non-ambiguous renames,
call shapes whose arguments changed, scene and project format markers. Each finding is a marker;
markers decide the signal, and the retrieved candidates that name a marker are the evidence.
It answers in the same form as the model judges: related candidates by legend number, signal,
migration flag, confidence and a short rationale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pydantic

from gd_assets.core.corpus.surface import Surface, load_surface, split_args
from gd_assets.core.judges import JudgeIdentity, register
from gd_assets.core.judges.base import JudgeInput, Judgement

RULES_VERSION = "evidence-rules-1"

# GDScript 1 (Godot 3) syntax that Godot 4 rejects, and GDScript 2 syntax Godot 3 rejects.
GD3_SYNTAX = {
    "export": "`export` keyword (Godot 4: `@export`)",
    "export(": "`export(...)` hint syntax (Godot 4: `@export_*` annotations)",
    "onready": "`onready` keyword (Godot 4: `@onready`)",
    "setget": "`setget` (Godot 4: property `set`/`get` blocks)",
    "yield(": "`yield()` (Godot 4: `await`)",
    "tool": "`tool` keyword (Godot 4: `@tool`)",
    "remote": "`remote` RPC keyword (Godot 4: `@rpc`)",
    "master": "`master` RPC keyword (Godot 4: `@rpc`)",
    "puppet": "`puppet` RPC keyword (Godot 4: `@rpc`)",
    "remotesync": "`remotesync` RPC keyword (Godot 4: `@rpc(\"call_local\")`)",
    "mastersync": "`mastersync` RPC keyword (Godot 4: `@rpc`)",
    "puppetsync": "`puppetsync` RPC keyword (Godot 4: `@rpc`)",
    "sync": "`sync` RPC keyword (Godot 4: `@rpc(\"call_local\")`)",
    "slave": "`slave` RPC keyword (Godot 4: `@rpc`)",
}
GD4_SYNTAX = {
    "await": "`await`",
    "super(": "`super()` call",
    "func() lambda": "lambda function",
    '&""': "StringName literal `&\"...\"`",
    '^""': "NodePath literal `^\"...\"`",
    "set(value):": "property `set`/`get` block",
    ".connect(callable)": "signal `.connect(callable)`",
}
MIGRATION_TABLES = ("api_mapping", "label_prototypes")
WEAK = 0.6  # a Godot 3 name with no Godot 4 successor: could be the project's own class


@dataclass
class Marker:
    side: str          # "3" or "4"
    name: str          # the symbol or syntax it is about (matched against candidate titles)
    reason: str
    strength: float    # 0..1


@register
class EvidenceJudge:
    """Decides from cues and candidates with the corpus surface; needs a built corpus."""

    name = "evidence"
    model = RULES_VERSION
    env: dict[str, str] = {}

    class Options(pydantic.BaseModel):
        corpus_db: str = pydantic.Field("", description="the corpus DuckDB file the surface is read from")

    @classmethod
    def identity(cls, options: Options) -> JudgeIdentity:
        return JudgeIdentity(cls.name, RULES_VERSION, RULES_VERSION)

    def __init__(self, corpus_db: str | Path | None = None, surface: Surface | None = None):
        if not corpus_db and surface is None:
            raise ValueError("the evidence judge needs the corpus file (corpus_db) or a loaded surface")
        self.corpus_db = Path(corpus_db) if corpus_db else None
        self._surface = surface

    @property
    def surface(self) -> Surface:
        if self._surface is None:
            if self.corpus_db is None or not self.corpus_db.exists():
                raise FileNotFoundError(f"{self.corpus_db} does not exist: build the corpora first")
            self._surface = load_surface(str(self.corpus_db))
        return self._surface

    def judge(self, items: Sequence[JudgeInput]) -> list[Judgement]:
        return [self.judge_one(item).validate(item) for item in items]

    # -- one fragment -------------------------------------------------------------------------------

    def judge_one(self, item: JudgeInput) -> Judgement:
        markers = self.markers(item)
        gd3 = [m for m in markers if m.side == "3"]
        gd4 = [m for m in markers if m.side == "4"]
        related = _related(item, markers)
        if not gd3 and not gd4:
            return Judgement(item.key, "neutral", False, 0.6, "No version-specific syntax or API in this fragment; "
                             "it reads the same in Godot 3 and Godot 4.", related=related)
        s3 = max((m.strength for m in gd3), default=0.0)
        s4 = max((m.strength for m in gd4), default=0.0)
        signal = "godot3" if s3 >= s4 and gd3 else "godot4"
        migration = bool(gd3)
        evidence = _supporting(item, gd3) if migration else []
        confidence = round(min(0.99, 0.5 + 0.5 * max(s3, s4) - (0.2 if gd3 and gd4 else 0.0)), 2)
        return Judgement(item.key, signal, migration, confidence, _rationale(gd3, gd4, item, evidence),
                         related=related, evidence=evidence)

    def markers(self, item: JudgeInput) -> list[Marker]:
        found: dict[tuple[str, str], Marker] = {}
        finders = {"gdscript": self._gdscript_markers, "project": _project_markers, "config": _project_markers,
                   "scene": self._scene_markers, "resource": self._scene_markers, "shader": self._shader_markers}
        for marker in finders.get(item.file_kind, self._gdscript_markers)(item):
            key = (marker.side, marker.name)
            if key not in found or found[key].strength < marker.strength:
                found[key] = marker
        markers = list(found.values())
        if any(m.side == "4" and m.strength >= 0.9 for m in markers):
            # A name Godot 4 removed, in code written in GDScript 2, is most likely the project's own class.
            markers = [m for m in markers if not (m.side == "3" and m.strength <= WEAK)]
        return markers

    def _gdscript_markers(self, item: JudgeInput) -> list[Marker]:
        out: list[Marker] = []
        defined = {c.cue for c in item.cues if c.source == "function"} | set(item.file_functions)
        for cue in item.cues:
            text, source = cue.cue, cue.source
            if source == "converter_leftover" and text == "TODOConverter":
                out.append(Marker("3", "TODOConverter", "a converter TODO left for a manual fix", 0.6))
            if source in ("syntax",) and text in GD3_SYNTAX:
                out.append(Marker("3", text.rstrip("("), GD3_SYNTAX[text], 0.95))
            elif source == "syntax" and text in GD4_SYNTAX:
                out.append(Marker("4", text, GD4_SYNTAX[text], 0.9))
            elif source == "syntax" and text.startswith(".") and text.endswith("("):
                out.append(Marker("3", text, f"`{text}...)` calls the parent's method (Godot 4: `super.{text[1:]}...)`)", 0.9))
            elif source == "syntax" and text == 'connect("signal", …) string':
                pass  # decided from the call shape below
            elif source == "annotation":
                out.append(Marker("4", text, f"`{text}` annotation (GDScript 2)", 0.95))
            elif source in ("extends", "type", "identifier", "node_path") and text[:1].isupper():
                out.extend(self._name_markers(text, source))
            elif source == "attribute":
                out.extend(self._attribute_markers(text))
            elif source == "call" and not text.startswith(".") and text not in defined:
                out.extend(self._global_call_markers(text) or self._method_markers(text, implicit=True))
            elif source == "name":
                out.extend(self._bare_name_markers(text))
            elif source == "call" and text.startswith("."):
                out.extend(self._method_markers(text[1:]))
            elif source == "call_shape":
                out.extend(self._shape_markers(text, defined))
        return out

    def _name_markers(self, name: str, source: str) -> list[Marker]:
        s = self.surface
        if source == "node_path":
            # `$AnimatedSprite`: nodes keep their class's default name, so the node is likely of that class.
            if s.has_class("3", name) and not s.has_class("4", name) and name in s.class_renames:
                return [Marker("3", name, f"node `{name}` is named after a Godot 3 class (Godot 4: "
                                          f"`{s.class_renames[name]}`)", WEAK)]
            return []
        in3, in4 = s.has_class("3", name), s.has_class("4", name)
        if in3 and not in4:
            new = s.class_renames.get(name)
            hint = f" (Godot 4: `{new}`)" if new else " (removed in Godot 4)"
            return [Marker("3", name, f"class `{name}` exists only in Godot 3{hint}", 0.9 if new else WEAK)]
        if in4 and not in3:
            return [Marker("4", name, f"class `{name}` exists only in Godot 4", 0.85)]
        if re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+", name):
            c3, c4 = s.is_global_constant("3", name), s.is_global_constant("4", name)
            if not c3 and s.member_classes("3", "constant", name) and not s.any_member("4", name):
                classes = ", ".join(sorted(s.member_classes("3", "constant", name))[:2])
                return [Marker("3", name, f"constant `{name}` ({classes}) exists only in Godot 3", 0.8)]
            if c3 and not c4:
                new = s.renames.get("enum", {}).get(name)
                hint = f" (Godot 4: `{new}`)" if new else ""
                return [Marker("3", name, f"global constant `{name}` exists only in Godot 3{hint}", 0.85)]
            if c4 and not c3:
                return [Marker("4", name, f"global constant `{name}` exists only in Godot 4", 0.8)]
        return []

    def _attribute_markers(self, pair: str) -> list[Marker]:
        s = self.surface
        base, _, member = pair.partition(".")
        if not base or not member or not base[:1].isupper() or "(" in base:
            return []
        if not (s.has_class("3", base) and s.has_class("4", base)):
            return []  # class-level markers already cover a class that exists in one version only
        in3, in4 = s.class_member("3", base, member), s.class_member("4", base, member)
        if in3 and not in4:
            return [Marker("3", member, f"`{base}.{member}` exists only in Godot 3", 0.9)]
        if in4 and not in3:
            return [Marker("4", member, f"`{base}.{member}` exists only in Godot 4", 0.85)]
        return []

    def _global_call_markers(self, name: str) -> list[Marker]:
        s = self.surface
        if name[:1].isupper():
            return []
        g3, g4 = s.is_global_function("3", name), s.is_global_function("4", name)
        if g3 and not g4 and not s.any_member("4", name):
            new = s.renames.get("function", {}).get(name)
            hint = f" (Godot 4: `{new}`)" if new else " (removed in Godot 4)"
            return [Marker("3", name, f"global function `{name}()` exists only in Godot 3{hint}", 0.9)]
        if g4 and not g3 and not s.any_member("3", name):
            return [Marker("4", name, f"global function `{name}()` exists only in Godot 4", 0.85)]
        return []

    def _method_markers(self, name: str, implicit: bool = False) -> list[Marker]:
        s = self.surface
        m3 = bool(s.member_classes("3", "method", name))
        m4 = bool(s.member_classes("4", "method", name))
        if (name.startswith("_") and not implicit) or name[:1].isupper() or s.has_class("3", name):
            return []  # virtual callbacks and constructors (`Vector2()`, `int()`) are not API renames
        if implicit and name not in s.renames.get("function", {}) and len(name) < 10:
            return []  # a short bare call is as likely the project's own function
        renamed = s.renames.get("function", {}).get(name)
        call = f"`{name}()`" if implicit else f"method `{name}()`"
        if m3 and not m4 and not s.any_member("4", name):
            hint = f" (Godot 4: `{renamed}()`)" if renamed else " (gone from Godot 4)"
            return [Marker("3", name, f"{call} exists only in Godot 3{hint}", 0.85 if renamed else 0.8)]
        if m4 and not m3 and not s.any_member("3", name):
            return [Marker("4", name, f"{call} exists only in Godot 4", 0.7)]
        return []

    def _bare_name_markers(self, name: str) -> list[Marker]:
        """`rect_position = ...`: an implicit member whose name only the Godot 3 reference documents."""
        s = self.surface
        renamed = s.renames.get("property", {}).get(name)
        if renamed and s.member_classes("3", "property", name) and not s.any_member("4", name):
            return [Marker("3", name, f"property `{name}` exists only in Godot 3 (Godot 4: `{renamed}`)", 0.8)]
        return []

    def _shape_markers(self, shape: str, defined: set[str]) -> list[Marker]:
        s = self.surface
        match = re.fullmatch(r"(\w+)\((.*)\)", shape)
        if match is None:
            return []
        name, args = match.groups()
        if name in defined:
            return []
        count = 0 if not args.strip() else len(split_args(args))
        if name in ("connect", "disconnect", "is_connected") and count >= 3 and args.strip().startswith('"'):
            third = split_args(args)[2].strip()
            if third.startswith('"'):
                return [Marker("3", name, f'`{name}("signal", target, "method")` (Godot 4: `signal.{name}(callable)`)',
                               0.9)]
        parts = [p.strip() for p in split_args(args)]
        if name in _CALLBACK_PAIRS and len(parts) >= 2 and parts[0] == "self" and parts[1].startswith('"'):
            return [Marker("3", name, f'`{name}(self, "method")` passes a method by name (Godot 4: a Callable)', 0.85)]
        if args.strip() == "…":
            return []
        fit3, fit4 = s.arity_fits("3", name, count), s.arity_fits("4", name, count)
        if fit3 and fit4 is False and s.member_classes("3", "method", name) and name in _SHAPE_WATCHED:
            return [Marker("3", name, f"`{shape}`: Godot 4's `{name}` takes another number of arguments", 0.85)]
        if fit4 and fit3 is False and name in _SHAPE_WATCHED:
            return [Marker("4", name, f"`{shape}`: the Godot 4 call shape of `{name}`", 0.75)]
        return []

    def _scene_markers(self, item: JudgeInput) -> list[Marker]:
        out = []
        for cue in item.cues:
            text = cue.cue
            if text == "format=2" or text == "format=1":
                out.append(Marker("3", "format", f"scene/resource `{text}` (Godot 3 text format)", 0.95))
            elif text == "format=3" or text == "format=4":
                out.append(Marker("4", "format", f"scene/resource `{text}` (Godot 4 text format)", 0.95))
            elif text == "ExtResource( … )":
                out.append(Marker("3", "ExtResource", "`ExtResource( 1 )` integer id (Godot 3 scene syntax)", 0.8))
            elif cue.source in ("node_type", "resource_type", "value_type"):
                out.extend(m for m in self._name_markers(text, "type"))
        return out

    def _shader_markers(self, item: JudgeInput) -> list[Marker]:
        renames = self.surface.renames.get("shader", {})
        out = []
        for cue in item.cues:
            if cue.cue in renames:
                out.append(Marker("3", cue.cue, f"shader `{cue.cue}` (Godot 4: `{renames[cue.cue]}`)", 0.85))
            elif cue.cue in renames.values() and cue.cue not in renames:
                out.append(Marker("4", cue.cue, f"shader `{cue.cue}` (Godot 4 name)", 0.75))
        return out


# Methods whose call shape the API diff records as changed and that are rarely user-defined.
_SHAPE_WATCHED = {
    "move_and_slide", "move_and_slide_with_snap", "move_and_collide", "test_move", "look_at_from_position",
    "set_cell", "set_cellv", "get_cell", "get_cellv", "play", "interpolate_property", "connect", "save",
    "load", "raycast", "intersect_ray", "intersect_point", "emit", "get_slide_collision",
}


# Godot 3 APIs that took (object, "method") where Godot 4 takes a Callable.
_CALLBACK_PAIRS = {"start", "funcref", "interpolate_callback", "interpolate_deferred_callback", "follow_method",
                   "targeting_method", "interpolate_method"}


def _project_markers(item: JudgeInput) -> list[Marker]:
    out = []
    for cue in item.cues:
        text = cue.cue
        if text in ("config_version=3", "config_version=4"):
            out.append(Marker("3", "config_version", f"project.godot `{text}` (Godot 3)", 0.95))
        elif text == "config_version=5":
            out.append(Marker("4", "config_version", "project.godot `config_version=5` (Godot 4)", 0.95))
        elif text in ("scancode", "physical_scancode"):
            out.append(Marker("3", "scancode", f"input event `{text}` (Godot 4: `keycode`)", 0.85))
        elif text in ("physical_keycode", "key_label", "ctrl_pressed", "window_id"):
            out.append(Marker("4", "keycode", f"input event `{text}` (Godot 4)", 0.8))
        elif text.startswith("config/features=") and "4." in text:
            out.append(Marker("4", "config/features", f"`{text}` names a Godot 4 release", 0.9))
        elif cue.source == "value_type" and text.startswith("Pool") and text.endswith("Array"):
            out.append(Marker("3", text, f"`{text}` (Godot 4: `Packed...Array`)", 0.85))
        elif cue.source == "value_type" and text.startswith("Packed") and text.endswith("Array"):
            out.append(Marker("4", text, f"`{text}` (Godot 4)", 0.85))
    return out


def _words(title: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_@][A-Za-z0-9_]*", title))


def _related(item: JudgeInput, markers: Sequence[Marker]) -> list[int]:
    """Candidates whose title names a marker or one of the fragment's own symbols."""
    names = {m.name.lstrip(".@") for m in markers}
    symbols = set()
    for cue in item.cues:
        if cue.source in ("call", "attribute", "extends", "type", "identifier", "node_type", "resource_type",
                          "annotation", "key", "section"):
            symbols.update(part for part in re.split(r"[.()]", cue.cue.lstrip(".@$")) if len(part) > 2)
    related = []
    for number, cand in enumerate(item.candidates, start=1):
        words = {w.lstrip("@") for w in _words(cand.title)}
        if words & names or (cand.table == "docs_chunks" and len(words & symbols) >= 1 and
                             any(w in symbols for w in words if w[:1].islower() or "." in cand.title)):
            related.append(number)
    return related


def _supporting(item: JudgeInput, gd3: Sequence[Marker]) -> list[int]:
    """api_mapping / label_prototypes candidates that name a Godot 3 marker: what migration rests on."""
    names = {m.name.lstrip(".@") for m in gd3}
    out = []
    for number, cand in enumerate(item.candidates, start=1):
        if cand.table in MIGRATION_TABLES and {w.lstrip("@") for w in _words(cand.title + " " + cand.id)} & names:
            out.append(number)
    return out


def _rationale(gd3: Sequence[Marker], gd4: Sequence[Marker], item: JudgeInput, evidence: Sequence[int]) -> str:
    parts = []
    if gd3:
        parts.append("Godot 3: " + "; ".join(m.reason for m in gd3[:4]) + ".")
    if gd4:
        parts.append("Godot 4: " + "; ".join(m.reason for m in gd4[:4]) + ".")
    if evidence:
        parts.append("Migration rests on " + ", ".join(f"({n})" for n in evidence[:6]) + ".")
    elif gd3:
        parts.append("No migration row was among the candidates; the finding comes from the class reference.")
    return " ".join(parts)
