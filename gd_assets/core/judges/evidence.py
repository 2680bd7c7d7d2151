"""The evidence judge: deterministic, CPU only, and the default.

It reads a fragment's cues against what the corpora document for each version (see surface.py):
version-specific syntax, names only the 3.x or only the 4.x reference has, non-ambiguous renames,
call shapes whose arguments changed, scene and project format markers. Each finding is a marker;
markers decide the signal, and the retrieved candidates that name a marker are the evidence.
It answers in the same form as the model judges: related candidates by legend number, signal,
migration flag, confidence and a short rationale.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pydantic

from gd_assets.core import properties
from gd_assets.core.corpus.surface import Surface, load_surface, split_args
from gd_assets.core.cues import VARIANT_RESULTS, WHOLE_RENAMED
from gd_assets.core.judges import JudgeIdentity, register
from gd_assets.core.judges.base import JudgeInput, Judgement
from gd_assets.core.platforms import FEATURE_TAGS, GONE, OS_NAMES
from gd_assets.core.shading import SCREEN_TEXTURES

RULES_VERSION = "evidence-rules-8"  # 2: receivers and project context; 3: members Godot 4 classes took;
# 4: scene properties per class, resource ids, input maps, project settings and shader textures; 5: what
# Godot 4's compiler rejects (call shapes, results that changed type, builtin types by their Godot 4 names);
# 6: the receiver read further in the references (a getter's type, the one subclass with the member), why a
# member is gone where Godot 4 keeps the name, raw strings, a Godot 4 addon's silenced warnings; 7: container
# constants the script changes, constants Godot 4 does not fold, engine methods called by the name of a script
# variable, the return of a call returning nothing; 8: overrides of Godot 3 virtuals Godot 4 renamed or dropped, platform names Godot 4 renamed

# GDScript 1 (Godot 3) syntax that Godot 4 rejects, and GDScript 2 syntax Godot 3 rejects.
GD3_SYNTAX = {
    "export": "`export` keyword (Godot 4: `@export`)",
    "export(": "`export(...)` hint syntax (Godot 4: `@export_*` annotations)",
    "onready": "`onready` keyword (Godot 4: `@onready`)",
    "\\/ escape": "a `\\/` escape in a string: Godot 3 read it as `/`, Godot 4 rejects it",
    "enum without commas": "enum entries separated by line breaks alone: Godot 4 needs a comma after each",
    "mixed dictionary styles": "a dictionary mixing `key = value` and `\"key\": value`: Godot 4 rejects the mix",
    "mixed indentation": "a line indented with both tabs and spaces: Godot 4 rejects it (Godot 3 counted each as a "
                         "column)",
    'const = "…" % […]': "a constant holding a `%` format: Godot 4 does not fold it into a constant expression",
    "node name as NodePath": "`has_node(child.name)`: a Node's name is a StringName in Godot 4, which `has_node`/"
                             "`get_node` take only as a NodePath (`NodePath(child.name)`)",
    "cyclic preload": "`preload()` of a scene whose scripts need this one to compile: Godot 3 loaded it lazily, Godot 4 "
                      "resolves preloads while compiling and refuses the cycle (`load()` breaks it)",
    "coroutine returning another type": "a coroutine typed `-> T` returns a value of another type: Godot 3 never "
                                        "checked it (its callers got a function state), Godot 4 refuses it",
    "write past a wide setter": "a bare write of the class's property whose setter takes more than one parameter: "
                                "Godot 3 stored the value, Godot 4 refuses such a setter and would call the one "
                                "that replaces it (the value goes to a backing variable)",
    "return without a value": "`return` alone in a function typed `-> bool` (etc.): Godot 3 returned null, Godot 4 "
                              "refuses it",
    "enum changed at run time": "a project enum grown or shrunk at run time (`merge()`, `erase()`): Godot 3's "
                                "enums were Dictionaries a script could change, Godot 4's are constant",
    "constant changed at run time": "an Array or Dictionary constant that the script changes (`K[k] = v`, "
                                    "`K.append(v)`): Godot 3's constants were shared and could change, Godot 4's "
                                    "are read-only and it refuses the write",
    "constant Godot 4 cannot fold": "a constant built with a Pool array constructor (or reading one that is): "
                                    "Godot 3 folded it, Godot 4 refuses it as not a constant expression (a "
                                    "`static var` holds it)",
    "return of a call returning nothing": "`return node.accept_event()` of an engine method that returns nothing: "
                                          "Godot 3 returned null, Godot 4 refuses the value (the call, then "
                                          "`return`)",
    "method hidden by a variable": "a bare call of an engine method (`translate(v)`) in a script that declares a "
                                   "variable of the same name: Godot 3 called the method, Godot 4 reads the "
                                   "variable and refuses the call (`super.translate(v)` calls the method)",
    "NodePath <op> String": "a NodePath compared with or added to a string: Godot 3 converted one to the other, "
                            "Godot 4 rejects the operands",
    "is <expression>": "`x is get_script()`: Godot 3 tested against any script value, Godot 4's `is` takes a "
                       "type name only (`is_instance_of(x, value)`)",
    "var parameter": "`var` before a parameter (`func f(var x)`): Godot 3 accepted it, Godot 4 rejects it",
    "narrowed input callback": "an input callback whose event parameter is typed narrower than InputEvent: Godot 4 "
                               "wants the parent's signature (`event: InputEvent`)",
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
    '@""': "NodePath literal `@\"...\"` (Godot 4: `^\"...\"`)",
    "_init().(…)": "`func _init(...).(...)` passes arguments to the parent constructor (Godot 4: `super(...)`)",
    'class_name, "icon"': '`class_name Name, "icon"` (Godot 4: `@icon("...")` before `class_name Name`)',
}
GD4_SYNTAX = {
    "await": "`await`",
    "super(": "`super()` call",
    "func() lambda": "lambda function",
    '&""': "StringName literal `&\"...\"`",
    '^""': "NodePath literal `^\"...\"`",
    'r""': "raw string literal `r\"...\"`",
    "set(value):": "property `set`/`get` block",
    ".connect(callable)": "signal `.connect(callable)`",
}
MIGRATION_TABLES = ("api_mapping", "label_prototypes")
WEAK = 0.6  # a Godot 3 name with no Godot 4 successor: could be the project's own class
SIGNAL_ONLY = 0.45  # may tell the version, never a migration need (a Godot 3 scene file in a Godot 4 project)
HINT = 0.3  # said in the rationale only (a generic name on a receiver nothing resolves)
MIGRATION = 0.5  # the least strength of a Godot 3 marker that makes a migration need


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
        hints = [m for m in markers if m.strength < SIGNAL_ONLY]
        markers = [m for m in markers if m.strength >= SIGNAL_ONLY]
        gd3 = [m for m in markers if m.side == "3"]
        gd4 = [m for m in markers if m.side == "4"]
        related = _related(item, markers)
        if not gd3 and not gd4:
            why = "No version-specific syntax or API in this fragment; it reads the same in Godot 3 and Godot 4."
            if hints:
                why += " Weak hints only: " + "; ".join(m.reason for m in hints[:3]) + "."
            return Judgement(item.key, "neutral", False, 0.6, why, related=related)
        s3 = max((m.strength for m in gd3), default=0.0)
        s4 = max((m.strength for m in gd4), default=0.0)
        signal = "godot3" if s3 >= s4 and gd3 else "godot4"
        migration = any(m.strength >= MIGRATION for m in gd3)
        gd3 = [m for m in gd3 if m.strength >= MIGRATION] if migration else gd3
        evidence = _supporting(item, gd3) if migration else []
        confidence = round(min(0.99, 0.5 + 0.5 * max(s3, s4) - (0.2 if gd3 and gd4 else 0.0)), 2)
        return Judgement(item.key, signal, migration, confidence, _rationale(gd3, gd4, item, evidence),
                         related=related, evidence=evidence)

    def markers(self, item: JudgeInput) -> list[Marker]:
        found: dict[tuple[str, str], Marker] = {}
        finders = {"gdscript": self._gdscript_markers, "project": self._project_markers, "config": _project_markers,
                   "scene": self._scene_markers, "resource": self._scene_markers, "shader": self._shader_markers}
        for marker in finders.get(item.file_kind, self._gdscript_markers)(item):
            key = (marker.side, marker.name)
            if key not in found or found[key].strength < marker.strength:
                found[key] = marker
        markers = list(found.values())
        if any(m.side == "4" and m.strength >= 0.9 for m in markers):
            # A name Godot 4 removed, in code written in GDScript 2, is most likely the project's own class;
            # an engine member with no successor there is most likely one Godot 4 keeps for compatibility.
            markers = [m for m in markers if not (m.side == "3" and m.strength <= WEAK)]
            markers = [Marker(m.side, m.name, m.reason + " (in GDScript 2 code)", HINT)
                       if m.side == "3" and m.strength == 0.85 and "(gone from Godot 4)" in m.reason else m
                       for m in markers]
        return markers

    def _gdscript_markers(self, item: JudgeInput) -> list[Marker]:
        out: list[Marker] = []
        defined = {c.cue for c in item.cues if c.source == "function"} | set(item.file_functions)
        godot3 = _in_godot3_project(item.cues)  # once per fragment, not per call cue
        for cue in item.cues:
            text, source = cue.cue, cue.source
            if cue.receiver is not None and source != "syntax":
                out.extend(self._received_markers(cue, defined, item.cues, godot3))
                continue
            if source == "resource_path" and text == ".shader":
                out.append(Marker("3", "shader", "a path to a `.shader` file: Godot 4 loads shaders only as `.gdshader`",
                                  0.85))
            if source == "converter_leftover" and text == "TODOConverter":  # in a Godot 4 project: a note only
                out.append(Marker("3", "TODOConverter", "a converter TODO left for a manual fix", 0.6 if godot3 else HINT))
            if source in ("syntax",) and text in GD3_SYNTAX:
                out.append(Marker("3", text.rstrip("("), GD3_SYNTAX[text], 0.95))
            elif source == "syntax" and text in GD4_SYNTAX:
                out.append(Marker("4", text, GD4_SYNTAX[text], 0.9))
            elif source == "syntax" and text.startswith(".") and text.endswith("("):
                out.append(Marker("3", text, f"`{text}...)` calls the parent's method (Godot 4: `super.{text[1:]}...)`)", 0.9))
            elif source == "syntax" and text == "String(value)":
                if godot3:  # Godot 3's String(x) took any value (`String(id)`); Godot 4's only a String,
                    # StringName or NodePath (which `x.name` and `get_path()` now are: not cued)
                    out.append(Marker("3", "String", "`String(x)` of a value: Godot 4's String() does not convert "
                                                     "other values (`str()` does)", 0.8))
            elif source == "syntax" and text.startswith(":= ") and text[3:-2] in VARIANT_RESULTS:
                out.append(Marker("3", text[3:-2], f"`var x {text}`: Godot 4's `{text[3:]}` returns a Variant, so no type "
                                  f"can be inferred (an error by default there; `{VARIANT_RESULTS[text[3:-2]]}()` "
                                  "computes the float Godot 3's gave)", 0.85))
            elif source == "syntax" and text == "add_child(Tween)":
                out.append(Marker("3", "Tween", "`add_child(tween)` of a Tween: a Godot 3 Tween node (Godot 4's "
                                                "Tween is made by `create_tween()`, no node)", 0.85))
            elif source == "syntax" and text == 'connect("signal", …) string':
                pass  # decided from the call shape below
            elif source == "annotation":
                out.append(Marker("4", text, f"`{text}` annotation (GDScript 2)", 0.95))
            elif source in ("extends", "type", "identifier", "node_path") and text[:1].isupper():
                out.extend(self._name_markers(text, source))
            elif source == "attribute" and text == "Tween.new":  # an error in Godot 4 too ("created directly")
                out.append(Marker("3", "Tween", "`Tween.new()`: a Godot 3 Tween node (Godot 4: `create_tween()`)", 0.9))
            elif source == "attribute":
                out.extend(self._attribute_markers(text))
            elif source == "call" and not text.startswith(".") and text not in defined:
                out.extend(self._global_call_markers(text) or self._method_markers(text, implicit=True))
            elif source == "name":
                out.extend(self._bare_name_markers(text))
            elif source == "call" and text.startswith("."):
                out.extend(self._method_markers(text[1:]))
            elif source == "call_shape":
                out.extend(self._shape_markers(text, defined, godot3=godot3))
        return out

    # -- with project context: each name read on its receiver ------------------------------------------

    def _received_markers(self, cue, defined: set[str], item_cues=(), godot3: bool = False) -> list[Marker]:
        """A cue whose receiver is known: the project's names are never evidence; an engine class's
        members are looked up through its ancestors in both references; an unknown receiver gives
        strong evidence only for a distinctive name."""
        text, source, receiver = cue.cue, cue.source, cue.receiver
        if source == "signal_clash":
            return [Marker("3", text, f"the project's signal `{text}` shares its name with a function of its script "
                                      "(Godot 4 refuses the pair): the signal is renamed project-wide", 0.9)]
        if source == "coroutine_call":
            return [Marker("3", text, f"`{text}()` is a project coroutine (it yields) whose value is used: Godot 4 "
                                      "needs `await` there (a parse error without)", 0.85)]
        if source == "random_seed":  # the script that runs first in a project that never seeds its numbers
            return [Marker("3", text, "the game draws random numbers and never calls randomize(): Godot 3 gave it "
                                      "the same numbers at every run, Godot 4 randomizes them at start (the "
                                      "script that runs first seeds them as Godot 3 did)", 0.8)] if godot3 else []
        if source == "shim":  # a script using Godot 3's interactive loading
            return [Marker("3", text, f"the script uses Godot 3's `{text}`, which Godot 4 removed (the script gets "
                                      "a class of that name over Godot 4's threaded loading)", 0.85)] if godot3 else []
        if source == "emulated_signal":  # a dialog script using its own `popup_hide`
            return [Marker("3", text, f"the script's dialog uses its own `{text}` signal: Godot 3's dialogs were "
                                      "Popups, Godot 4's are Windows without it (the script declares it and emits "
                                      "it when hidden, as Godot 3 did)", 0.85)] if godot3 else []
        if source == "parent_callback":  # the parent script's `_ready` too: Godot 4 calls only this one
            return [Marker("3", text, f"`{text}()` overrides the parent script's: Godot 3 called both, Godot 4 only "
                                      "this one unless it calls super()", 0.85)] if godot3 else []
        if receiver.startswith(("project", "other:")) and not (  # a module's class still connects as an Object
                receiver.startswith("other:") and source == "call_shape" and text.split("(", 1)[0] in _OBJECT_SIGNAL_CALLS):
            return []  # the project's own name, or a module's class neither reference documents
        engine = receiver if receiver != "?" else None
        if source == "declared_member":
            return self._declared_member_markers(text, receiver)
        if source == "native_class_shadow" and receiver != text:
            return [Marker("3", text, f"the project's variable `{text}` is named after Godot 4's `{receiver}.{text}` "
                                      "(\"Member redefined\" there, a parse error): renamed project-wide", 0.9)]
        if source == "native_class_shadow":
            return [Marker("3", text, f"the project's `{text}` is named after Godot 4's class `{text}` (it shadows a "
                                      "native class there, a parse error): renamed project-wide", 0.9)]
        if source == "virtual_renamed":
            return [self._virtual_marker(text, receiver)]
        if source == "virtual_gone":
            return [Marker("3", text, f"`{text}()` overrides Godot 3's virtual `{receiver}.{text}`, which Godot 4 no "
                                      "longer has: Godot 4 never calls it (by hand)", 0.85)]
        if source == "platform_name":
            return [platform_marker(text)]
        if source == "native_override":
            if receiver == "?":  # a call whose receiver is unknown, of a name a project script renames
                return [Marker("3", text, f"`{text}()` may reach a project method Godot 4 renames (it overrides a "
                                          "native method there): check its receiver", 0.85)]
            return [Marker("3", text, f"the project's `{text}()` overrides Godot 4's native `{receiver}.{text}` "
                                      "(a compile error there): renamed project-wide", 0.9)]
        if source == "type" and text == "Popup" and godot3:
            return [Marker("3", text, "a value typed `Popup` in a Godot 3 project: Godot 3's dialogs were Popups, "
                                      "Godot 4's are Windows (a dialog passed there fails to compile)", 0.75)]
        if source in ("type", "extends") and text in WHOLE_RENAMED and godot3:
            return [Marker("3", text, f"a value typed `{text}` in a Godot 3 project: Godot 4 kept the name for a wider "
                                      f"base without its members; Godot 3's `{text}` is Godot 4's "
                                      f"`{self.surface.class4(text) or text}`", 0.8)]
        if source == "extends" and text == "Viewport" and godot3:
            return [Marker("3", text, "`extends Viewport` in a Godot 3 project: the script goes with its scene's "
                                      "Viewport node, a SubViewport in Godot 4 (whose `size` the script sets)", 0.8)]
        if source == "identifier" and engine is not None and godot3 and text.isupper():
            found = self._inherited_constant_markers(engine, text)
            if found:
                return found
        if source == "extends" and text == "Tween" and godot3:
            return [Marker("3", text, "`extends Tween` in a Godot 3 project: Godot 3's Tween was a node; Godot 4's is "
                                      "made by `create_tween()`, no node (a script cannot run on it)", 0.85)]
        if source in ("extends", "type", "identifier") and text[:1].isupper():
            return self._name_markers(text, source)
        if source == "node_path":
            if text[:1] in "$%\"":
                return []
            if engine == text or not engine:  # named after its class (the editor's default): ports rename both
                return self._name_markers(text, source)
            return self._node_type_markers(text, engine)
        if source == "call" and text[:1].isupper():  # a constructor: `PoolStringArray([])`; or `ColorN()`
            return self._name_markers(text, "type") or self._global_call_markers(text)
        if source == "call_shape":
            return self._shape_markers(text, defined, receiver, godot3)
        if source == "attribute" and text == "Tween.new":  # an error in Godot 4 too ("created directly")
            return [Marker("3", "Tween", "`Tween.new()`: a Godot 3 Tween node (Godot 4: `create_tween()`)", 0.9)]
        if source == "attribute":
            return []  # decided by its `call` or `property` cue
        if source == "named_member":  # `connect("text_entered", …)`: only on a known engine receiver
            kind, _, member = text.partition(":")
            found = self._member_markers(engine, member, (kind,), godot3) if engine else None
            return found or []
        member = text.lstrip(".").rsplit(".", 1)[-1] if source in ("call", "property") else text
        if engine is not None and godot3 and source in ("property", "name") and (engine, member) in _MEANING_CHANGED:
            return [Marker("3", member, f"`{engine}.{member}`: {_MEANING_CHANGED[engine, member]}", 0.8)]
        renamed = self._kept_but_renamed(engine, member) if engine is not None and godot3 and \
            source in ("property", "name", "call") else None
        if renamed is not None:
            return [Marker("3", member, f"`{engine}.{member}` is `{renamed}` in Godot 4, where the old name means "
                                        "something else or takes other arguments (curated answer)", 0.8)]
        if engine is not None and godot3 and source == "call" and (engine, member) in _RESULT_CHANGED:
            was, now, new = _RESULT_CHANGED[engine, member]
            return [Marker("3", member, f"`{engine}.{member}()` returned {was} in Godot 3 and returns {now} in "
                                        f"Godot 4 (Godot 4: `{new}`)", 0.85)]
        if engine is not None:
            kinds = ("property", "constant", "enum") if source in ("property", "name") else None
            found = self._member_markers(engine, member, kinds, godot3)
            if found == [] and source == "call" and _on_an_instance(item_cues, text, engine):
                found = self._static_markers(engine, member)
            if found is not None:
                return found
            if source == "call" and not text.startswith("."):
                return self._global_call_markers(text)
            if source == "identifier":
                return self._name_markers(text, source)
            return []
        # An unknown receiver: a renamed name is still telling; a generic one is only a hint.
        found = []
        if source == "call" and not text.startswith("."):
            found = self._global_call_markers(text) or self._method_markers(text, implicit=True)
        elif source == "call":
            found = self._method_markers(member)
        elif source in ("name", "property"):
            found = self._bare_name_markers(member) or self._unknown_member_markers(member)
        elif source == "identifier":
            found = self._name_markers(text, source)
        # In a Godot 3 project, a method no Godot 4 class has, called on a receiver no project script
        # answers to (`?`: no script defines the name), cannot be Godot 4 code either: strong evidence.
        gone = godot3 and receiver == "?" and source == "call" and text.startswith(".")
        return [m if self._distinctive(member) or (gone and m.side == "3")
                else Marker(m.side, m.name, m.reason + " (receiver unknown)", HINT) for m in found]

    def _inherited_constant_markers(self, cls: str, name: str) -> list[Marker]:
        """`FOCUS_ALL` in a PopupPanel script: Godot 3's class had Control's constants, Godot 4's (a Window)
        does not; the rewrite reads it on the class that still documents it (`Control.FOCUS_ALL`)."""
        s = self.surface
        owner3 = s.owner_of("3", cls, name, ("constant", "enum"))
        cls4, holder = s.class4(cls), s.class4(owner3) if owner3 else None
        if owner3 is None or cls4 is None or holder is None or s.owner_of("4", cls4, name, ("constant", "enum")):
            return []
        if s.owner_of("4", holder, name, ("constant", "enum")) != holder:
            return []
        return [Marker("3", name, f"`{name}` is {owner3}'s constant, which Godot 3's {cls} inherited; Godot 4's "
                                  f"{cls4} is no {holder} (`{holder}.{name}` there)", 0.85)]

    def _static_markers(self, cls: str, member: str) -> list[Marker]:
        """`image.create(w, h, …)`: a method Godot 4 made static, called on an instance (Godot 4 code
        writes `Image.create(...)` and keeps what it returns)."""
        s = self.surface
        c3, c4 = self._versions_of(cls)
        o3 = s.owner_of("3", c3, member, ("method",)) if c3 else None
        o4 = s.owner_of("4", c4, member, ("method",)) if c4 else None
        if o3 and o4 and ("4", o4, member) in s.static and ("3", o3, member) not in s.static:
            return [Marker("3", member, f"`{o4}.{member}()` is static in Godot 4: called on an instance it changes "
                                        f"nothing (Godot 4: `x = {o4}.{member}(...)`)", 0.85)]
        return []

    def _distinctive(self, name: str) -> bool:
        s = self.surface
        renamed = any(name in s.renames.get(c, {}) for c in ("function", "property", "signal", "enum"))
        return renamed or "_" in name.strip("_")

    def _unknown_member_markers(self, name: str) -> list[Marker]:
        """`e.scancode`: a member only one reference documents, on a receiver nothing resolves."""
        s = self.surface
        if s.any_member("3", name) and not s.any_member("4", name):
            new = s.renames.get("property", {}).get(name) or s.renames.get("function", {}).get(name)
            if new:
                return [Marker("3", name, f"`{name}` exists only in Godot 3 (Godot 4: `{new}`)", 0.8)]
        return []

    def _declared_member_markers(self, name: str, cls: str) -> list[Marker]:
        """`var velocity` in a KinematicBody2D script: Godot 4's class has that property, Godot 3's did not,
        so in Godot 4 the member is a redefinition (a compile error)."""
        s = self.surface
        c3, c4 = self._versions_of(cls)
        o4 = s.owner_of("4", c4, name, ("property",)) if c4 else None
        if not (c3 and o4) or s.owner_of("3", c3, name):
            return []
        return [Marker("3", name, f"`var {name}` redefines Godot 4's `{o4}.{name}` (a compile error there)", 0.8)]

    def _kept_but_renamed(self, cls: str, member: str) -> str | None:
        """The curated Godot 4 name of `cls.member` (or an ancestor's) when Godot 4 still has the old name on
        the class, for something else (a name Godot 4 dropped is judged as gone already)."""
        s = self.surface
        found = next((s.curated_renames[c, member] for c in s.ancestors("3", cls) or [cls]
                      if (c, member) in s.curated_renames), None)
        c4 = self._versions_of(cls)[1]
        return found if found is not None and c4 and s.owner_of("4", c4, member) else None

    def _why_gone(self, c3: str, c4: str, o3: str, member: str) -> str:
        """What else the reason must say when Godot 4 still has a `member` of some kind: on the Godot 3 owner
        (Godot 4's `c4` no longer inherits from it: a PopupPanel is a Window, not a Control), or on the
        class as another kind (BaseButton's `pressed` is a signal, which a condition reads as true)."""
        s = self.surface
        if o3 != c3 and s.owner_of("4", o3, member) and o3 not in s.ancestors("4", c4):
            base = next((a for a in s.ancestors("4", c4) if a not in s.ancestors("3", c3)), c4)
            return f": on a `{c3}`, which Godot 4 no longer derives from `{o3}` (it is a `{base}` there)"
        scripted = ("method", "property", "signal", "constant", "enum")   # not a theme item: no `.name` reads it
        o4 = s.owner_of("4", c4, member, scripted)
        kinds = sorted(s.kinds.get(("4", o4, member), set()) & set(scripted)) if o4 else []
        if kinds:
            read = ", which reads as true in a condition" if kinds == ["signal"] else ""
            return f"; Godot 4's `{o4}.{member}` is a {' and a '.join(kinds)}{read}"
        return ""

    def _versions_of(self, cls: str) -> tuple[str | None, str | None]:
        """The class's Godot 3 and Godot 4 names (a renamed class has two)."""
        s = self.surface
        builtin = s.renames.get("builtin_type", {})  # PoolStringArray -> PackedStringArray
        c3 = cls if s.has_class("3", cls) else next(
            (old for old, new in itertools.chain(s.class_renames.items(), builtin.items()) if new == cls), None)
        c4 = cls if s.has_class("4", cls) and cls not in WHOLE_RENAMED else \
            s.class_renames.get(cls) or builtin.get(cls) or s.scene_classes.get(cls)  # a Texture is a Texture2D
        return (c3 if c3 and s.has_class("3", c3) else None), (c4 if c4 and s.has_class("4", c4) else None)

    def _member_markers(self, cls: str, member: str, kinds: tuple[str, ...] | None = None,
                        godot3: bool = False) -> list[Marker] | None:
        """`member` on engine class `cls`, looked up through the ancestors in each version (as a property
        when `kinds` says so); None when neither reference documents it there (not that class's name)."""
        s = self.surface
        c3, c4 = self._versions_of(cls)
        o3 = s.owner_of("3", c3, member, kinds) if c3 else None
        o4 = s.owner_of("4", c4, member, kinds) if c4 else None
        if kinds is None and o3 and o4 and s.kinds.get(("4", o4, member)) == {"signal"} and \
                "method" in s.kinds.get(("3", o3, member), set()):
            o4 = None  # `minimum_size_changed()`: a method and a signal in Godot 3, only the signal in Godot 4
        if o3 is None and o4 is None:
            return None
        if o3 and c4 and not o4:
            new = s.renames.get("property", {}).get(member) or s.renames.get("function", {}).get(member) or \
                s.renames.get("signal", {}).get(member) or s.ambiguous_renames.get(member)
            hint = f" (Godot 4: `{new}`)" if new else " (gone from Godot 4)"
            reason = f"`{o3}.{member}` exists only in Godot 3{hint}" + self._why_gone(c3, c4, o3, member)
            if cls != c3:  # the receiver is named the Godot 4 way: a member kept for compatibility, or a slip
                return [Marker("3", member, reason + f", on a `{cls}` (a Godot 4 class)", HINT)]
            # `get_viewport().size`: often a subclass in Godot 4 code; in a Godot 3 project it is Godot 3's member
            if c3 == c4 and not godot3 and s.in_descendant("4", c4, member):
                return [Marker("3", member, reason + f" (Godot 4 subclasses of `{c4}` have it)", HINT)]
            return [Marker("3", member, reason, 0.9 if new else 0.85)]
        if o3 and c3 == cls and c4 is None:  # a class Godot 4 removed: its members went with it
            return [Marker("3", member, f"`{o3}.{member}` of a class Godot 4 removed", 0.85)]
        if o4 and c3 and not o3:
            reason = f"`{o4}.{member}` exists only in Godot 4"
            if cls != c4 or s.in_descendant("3", c3, member):
                return [Marker("4", member, reason + f" (on a `{cls}`)", HINT)]
            return [Marker("4", member, reason, 0.85)]
        return []

    def _node_type_markers(self, node: str, type_: str) -> list[Marker]:
        """A node whose scene type is a class only Godot 3 has (`$AnimatedSprite` is an AnimatedSprite)."""
        s = self.surface
        if s.has_class("3", type_) and not s.has_class("4", type_):
            new = s.class_renames.get(type_)
            hint = f" (Godot 4: `{new}`)" if new else " (removed in Godot 4)"
            # The scene says the version; the script runs once the scene is converted: not a migration of this code.
            return [Marker("3", type_, f"node `{node}` is a `{type_}` in the project's scenes, a class only Godot 3 "
                                       f"has{hint}", SIGNAL_ONLY)]
        return []

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
        if re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+", name) or re.fullmatch(r"[A-Z][A-Z0-9]{3,}", name) and \
                s.is_global_constant("3", name):  # `SPKEY`: a global constant without an underscore
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
        if name[:1].isupper() and (s.has_class("3", name) or s.has_class("4", name)):
            return []  # a constructor; `ColorN()` is a function
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

    def _shape_markers(self, shape: str, defined: set[str], receiver: str | None = None,
                       godot3: bool = False) -> list[Marker]:
        s = self.surface
        match = re.fullmatch(r"(\w+)\((.*)\)", shape)
        if match is None:
            return []
        name, args = match.groups()
        engine = receiver not in (None, "?") and not receiver.startswith(("project", "other:"))
        if name in defined and not engine or (receiver or "").startswith("project") or (
                (receiver or "").startswith("other:") and name not in _OBJECT_SIGNAL_CALLS):
            return []
        count = 0 if not args.strip() else len(split_args(args))
        if name in ("disconnect", "is_connected") and count >= 3 and args.strip() != "…":
            return [Marker("3", name, f"`{name}(signal, target, method)` (Godot 4: `signal.{name}(callable)`)", 0.9)]
        if name in ("connect", "disconnect", "is_connected") and count >= 3 and args.strip().startswith('"'):
            third = split_args(args)[2].strip()
            if third.startswith('"'):
                return [Marker("3", name, f'`{name}("signal", target, "method")` (Godot 4: `signal.{name}(callable)`)',
                               0.9)]
        parts = [p.strip() for p in split_args(args)]
        if name == "draw_string" and godot3 and len(parts) in (4, 5) and \
                (receiver in (None, "?") or "CanvasItem" in s.ancestors("3", receiver or "")) \
                and not re.match(r"(HORIZONTAL_ALIGNMENT_|\d)", parts[3]):
            # Godot 3's fourth argument was the color; Godot 4's is the alignment (then width, font size, color)
            return [Marker("3", name, f"`{shape}`: the color is Godot 4's seventh argument (after alignment, width "
                                      "and font size)", 0.8)]
        if name == "draw_char" and len(parts) in (4, 5) and parts[3][:1] in "\"'":
            return [Marker("3", name, f"`{shape}`: Godot 3's fourth argument was the next character (Godot 4's is "
                                      "the font size)", 0.85)]
        if name == "set_drag_forwarding" and len(parts) == 1:
            return [Marker("3", name, f"`{shape}`: Godot 3 forwarded to a target's `*_fw` methods (Godot 4 takes the "
                                      "three callables)", 0.85)]
        if name == "connect" and godot3 and len(parts) >= 3 and parts[0].startswith('"') and \
                re.fullmatch(r"[a-z_]\w*", parts[2]) and not parts[2].startswith(("connect_", "flag")):
            # Godot 3's `connect("signal", target, method_name)`; Godot 4's third argument is the flags
            return [Marker("3", name, f'`{shape}`: a target and a method name (Godot 4: `signal.connect(callable)`)',
                           0.85)]
        if name == "sort_custom" and len(parts) == 2 and parts[1].startswith('"'):  # Godot 4's takes one Callable
            return [Marker("3", name, f'`{name}(object, "method")` (Godot 4: `{name}(callable)`)', 0.85)]
        if name in _CALLBACK_PAIRS and len(parts) >= 2 and parts[0] == "self" and parts[1].startswith('"'):
            return [Marker("3", name, f'`{name}(self, "method")` passes a method by name (Godot 4: a Callable)', 0.85)]
        if (name in _UNDO_REDO_CALLS and (godot3 and receiver in (None, "?") or receiver == "UndoRedo")
                and len(parts) >= 2 and parts[1].startswith('"')):
            # Only UndoRedo has these in Godot 3; Godot 4's takes one Callable (its editor manager, which
            # Godot 3 lacks, still takes an object and a name: hence only in a Godot 3 project).
            return [Marker("3", name, f'`{name}(object, "method", …)` (Godot 4: `{name}(callable)`)', 0.85)]
        pair = next((p for (_, n), p in s.callable_pairs.items() if n == name and len(parts) > p.index + 1 and
                     parts[p.index + 1][:1] in "\"'"), None) if name not in _UNDO_REDO_CALLS | _CALLBACK_PAIRS else None
        if pair is not None:  # a method name where Godot 4's signature takes a Callable (the class references;
            # not UndoRedo's, above: Godot 4's EditorUndoRedoManager takes an object and a name; nor `start()` and
            # the other _CALLBACK_PAIRS, whose marker wants `self`: a project's `start("intro", "x")` is common)
            return [Marker("3", name, f"`{shape}`: a target and a method name (Godot 4: one Callable)", 0.85)]
        if name == "save" and receiver == "ResourceSaver" and (godot3 or parts[:1] and parts[0].startswith('"')):
            return [Marker("3", name, "`ResourceSaver.save(path, resource)` (Godot 4: `save(resource, path)`)", 0.85)]
        if godot3 and name in _SILENT_CHANGES:
            found = self._silent_change_markers(name, shape, parts, receiver)
            if found:
                return found
        if args.strip() == "…":
            return []
        if name in _TILEMAP_CELL_CALLS and godot3 and receiver in (None, "?", "TileMap"):
            # both engines' arities fit; Godot 3 takes the cell as `x, y` (or one id), Godot 4 a layer first
            layered = len(parts) > 1 and parts[1].startswith(("Vector2i(", "Vector2("))
            if name == "get_used_cells_by_id" and len(parts) == 1 or \
                    name != "get_used_cells_by_id" and len(parts) >= _TILEMAP_CELL_CALLS[name] and not layered:
                return [Marker("3", name, f"`{shape}`: Godot 3's TileMap cell arguments (Godot 4: a layer, then "
                                          "the cell as a Vector2i)", 0.8)]
        if receiver and receiver != "?":
            return self._class_shape_markers(receiver, name, shape, count)
        fit3, fit4 = s.arity_fits("3", name, count), s.arity_fits("4", name, count)
        if fit3 and fit4 is False and s.member_classes("3", "method", name) and name in _SHAPE_WATCHED:
            return [Marker("3", name, f"`{shape}`: Godot 4's `{name}` takes another number of arguments", 0.85)]
        if fit4 and fit3 is False and name in _SHAPE_WATCHED:
            return [Marker("4", name, f"`{shape}`: the Godot 4 call shape of `{name}`", 0.75)]
        return []

    def _silent_change_markers(self, name: str, shape: str, parts: list[str], receiver: str | None) -> list[Marker]:
        """A Godot 3 call Godot 4 still compiles but runs otherwise (in a Godot 3 project only: Godot 4 code
        means Godot 4's behaviour), on the Godot 3 class that has it or on a receiver nothing resolves."""
        classes, counts, what = _SILENT_CHANGES[name]
        lineage = set(self.surface.ancestors("3", receiver)) if receiver and receiver != "?" else set()
        if receiver not in (None, "?") and not lineage & set(classes) or len([p for p in parts if p]) not in counts:
            return []
        if name == "to_html" and parts == ["false"]:
            return []
        return [Marker("3", name, f"`{shape}`: {what}", 0.8)]

    def _class_shape_markers(self, cls: str, name: str, shape: str, count: int) -> list[Marker]:
        """A call on an engine receiver whose argument count fits that class's method in one version only."""
        s = self.surface
        c3, c4 = self._versions_of(cls)
        o3 = s.owner_of("3", c3, name, ("method",)) if c3 else None
        o4 = s.owner_of("4", c4, name, ("method",)) if c4 else None
        if not (o3 and o4):
            return []
        lo3, hi3 = s.class_arity.get(("3", o3, name), (0, 99))
        lo4, hi4 = s.class_arity.get(("4", o4, name), (0, 99))
        fit3, fit4 = lo3 <= count <= hi3, lo4 <= count <= hi4
        if fit3 and not fit4:
            return [Marker("3", name, f"`{shape}`: Godot 4's `{o4}.{name}` takes {_count(lo4, hi4)}", 0.85)]
        if fit4 and not fit3:
            return [Marker("4", name, f"`{shape}`: the Godot 4 call shape of `{o4}.{name}`", 0.75)]
        return []

    def _virtual_marker(self, name: str, cls3: str) -> Marker:
        """A project method overriding Godot 3's virtual `cls3.name`, which Godot 4 calls by another name."""
        found = self.surface.virtual_renamed(cls3, name)
        new = f"`{found.owner4}.{found.new}()`" if found is not None else "a virtual of another name"
        if found is not None and not found.fits:
            return Marker("3", name, f"`{name}()` overrides Godot 3's virtual `{cls3}.{name}`: Godot 4 calls {new} "
                                     "instead, with other parameters, and never this one (by hand)", 0.85)
        return Marker("3", name, f"`{name}()` overrides Godot 3's virtual `{cls3}.{name}`: Godot 4 calls {new} "
                                 "instead and never this one: renamed project-wide", 0.9)

    def _scene_markers(self, item: JudgeInput) -> list[Marker]:
        out = []
        # Godot 4 loads a Godot 3 text-format file as it is and re-saves it in its own format: in a
        # Godot 4 project the old format alone is no migration need, only a hint. A property Godot 4
        # drops is a need either way: nothing re-saves it.
        godot4_project = any(c.source == "project_context" and c.cue == "config_version=5" for c in item.cues)
        old_format, in_project = (HINT, " in a Godot 4 project, which loads it as it is") if godot4_project else \
            (None, "")
        typed = next((c.cue for c in item.cues if c.source in ("node_type", "resource_type")), None)
        for cue in item.cues:
            text = cue.cue
            if cue.source == "native_override":
                out.append(Marker("3", text, f"the connection calls the project's `{text}()`, which overrides Godot 4's "
                                             f"native `{cue.receiver}.{text}` (a compile error there): renamed", 0.9))
            elif cue.source == "virtual_renamed":
                out.append(self._virtual_marker(text, cue.receiver))
            elif cue.source == "signal_clash":
                out.append(Marker("3", text, f"the connection's signal `{text}` is renamed with its script (a function "
                                             "there has its name, which Godot 4 refuses)", 0.9))
            elif text == "format=2" or text == "format=1":
                out.append(Marker("3", "format", f"scene/resource `{text}` (Godot 3 text format){in_project}",
                                  old_format or 0.95))
            elif text == "format=3" or text == "format=4":
                out.append(Marker("4", "format", f"scene/resource `{text}` (Godot 4 text format)", 0.95))
            elif text in ("ExtResource( … )", "SubResource( … )", "id=integer"):
                out.append(Marker("3", "ExtResource", f"`ExtResource( 1 )` integer id (Godot 3 scene syntax){in_project}",
                                  old_format or 0.8))
            elif text == ".shader" and cue.source == "scene_header":
                out.append(Marker("3", "shader", "a `.shader` file: Godot 4 loads shaders only as `.gdshader`", 0.9))
            elif cue.source == "connection" and text in _TWEEN3_SIGNALS:
                out.append(Marker("3", text, f"`{text}`: a Godot 3 Tween node's signal (Godot 4's Tween, made by "
                                             "`create_tween()`, emits `finished`)", 0.85))
            elif cue.source == "connection" and cue.receiver:
                out.extend(self._signal_markers(cue.receiver, text))
            elif cue.source in ("node_type", "resource_type", "value_type"):
                out.extend(m for m in self._name_markers(text, "type"))
                if text == "Tween" and cue.source == "node_type":
                    out.append(Marker("3", "Tween", "a Tween node: Godot 4's Tween is not a Node (`create_tween()`)", 0.9))
            elif cue.source == "property":
                cls = cue.receiver or typed
                found = properties.status(self.surface, cls, text)
                changed = self.surface.value_change(cls, text) if cls and not godot4_project else None
                if found.state == "godot3":
                    out.append(Marker("3", text.split("/", 1)[0], f"property {found.reason}", 0.85))
                elif changed:
                    out.append(Marker("3", text, f"`{cls}.{text}`: Godot 4 reads its value differently ({changed})", 0.8))
            elif cue.source == "animation_track":
                out.append(Marker("3", "transform", "a Godot 3 `transform` animation track (Godot 4 has position, "
                                  "rotation and scale tracks, and loads no track of an animation holding one)", 0.9))
            elif cue.source == "input_event_key" and text in ("scancode", "physical_scancode"):
                out.append(Marker("3", "scancode", f"input event `{text}` (Godot 4: `keycode`)", 0.85))
        if any(c.source == "shader_word" for c in item.cues):
            out.extend(self._shader_markers(item))
        return out

    def _signal_markers(self, cls: str, name: str) -> list[Marker]:
        """A scene connection to signal `name` of a node of engine class `cls`: which reference has it."""
        s = self.surface
        c3, c4 = self._versions_of(cls)
        in3 = bool(c3 and s.owner_of("3", c3, name, ("signal",)))
        in4 = bool(c4 and s.owner_of("4", c4, name, ("signal",)))
        if in3 and not in4:
            return [Marker("3", name, f"a connection to `{c3}`'s signal `{name}`, which Godot 4's `{c4 or c3}` does "
                                      "not have (the connection fails when the scene loads)", 0.85)]
        if in4 and not in3:
            return [Marker("4", name, f"a connection to `{c4}`'s Godot 4 signal `{name}`", 0.75)]
        return []

    def _shader_markers(self, item: JudgeInput) -> list[Marker]:
        renames = self.surface.renames.get("shader", {})
        out = []
        for cue in item.cues:
            if cue.cue in renames:
                out.append(Marker("3", cue.cue, f"shader `{cue.cue}` (Godot 4: `{renames[cue.cue]}`)", 0.85))
            elif cue.cue in SCREEN_TEXTURES:
                out.append(Marker("3", cue.cue, f"shader `{cue.cue}` (Godot 4 reads it through a uniform with "
                                  f"`hint_{cue.cue.lower()}`)", 0.85))
            elif cue.cue in renames.values() and cue.cue not in renames:
                out.append(Marker("4", cue.cue, f"shader `{cue.cue}` (Godot 4 name)", 0.75))
            elif cue.cue in ("hint_screen_texture", "hint_depth_texture", "hint_normal_roughness_texture"):
                out.append(Marker("4", cue.cue, f"shader `{cue.cue}` (Godot 4)", 0.8))
        return out

    def _project_markers(self, item: JudgeInput) -> list[Marker]:
        """project.godot: the format markers, and in a Godot 3 project the settings the rename map
        renames, the Godot 3 renderer, the global class list and the joypad layout of the input map."""
        out = _project_markers(item)
        godot3_project = any(c.source == "project_context" and c.cue in ("config_version=3", "config_version=4")
                             for c in item.cues)
        sections = {c.cue for c in item.cues if c.source == "section"}
        keys = {c.cue for c in item.cues if c.source == "key"}
        section = next(iter(sections)) if len(sections) == 1 else ""
        renamed = self.surface.renames.get("project_godot", {})
        for key in sorted(keys):   # one order in every process (a set of strings iterates by hash seed)
            if key in ("_global_script_classes", "_global_script_class_icons"):
                out.append(Marker("3", key, f"`{key}` (Godot 4 keeps the class list in `.godot/`)", 0.85))
            elif godot3_project and key in renamed:
                out.append(Marker("3", key, f"setting `{key}` (Godot 4: `{renamed[key]}`)", 0.8))
            elif godot3_project and key == "quality/driver/driver_name":
                out.append(Marker("3", key, "the Godot 3 renderer setting (Godot 4: `renderer/rendering_method`)", 0.8))
            elif godot3_project and (answer := self.surface.setting_answer(f"{section}/{key}" if section else key)):
                new, why = answer
                out.append(Marker("3", key, f"setting `{key}`: Godot 4 reads it as `{new}`" if new else
                                  f"setting `{key}`: Godot 4 has no such setting ({why.rstrip('.')})", 0.8))
        if godot3_project and "application" in sections and "config/features" not in keys:
            out.append(Marker("3", "config/features", "a Godot 3 project's `[application]`: Godot 4 records its "
                              "release in `config/features`", 0.7))
        fields = {c.cue for c in item.cues if c.source == "input_event_key"}
        if godot3_project and "InputEventJoypadButton" in {c.cue for c in item.cues if c.source == "input_event"}:
            out.append(Marker("3", "button_index", "joypad buttons of a Godot 3 input map (Godot 4 renumbered "
                              "them and made the triggers axes)", 0.7))
        for old in sorted(fields & {"alt", "shift", "control", "meta", "command", "doubleclick"}):
            out.append(Marker("3", old, f"input event field `{old}` (Godot 4 renamed it)", 0.7))
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


# TileMap calls whose Godot 3 shape fits Godot 4's arity: the least Godot 3 arguments holding `x, y`
_TILEMAP_CELL_CALLS = {"set_cell": 3, "get_used_cells_by_id": 1, "is_cell_x_flipped": 2, "is_cell_y_flipped": 2,
                       "is_cell_transposed": 2, "get_cell_autotile_coord": 2}
# properties that kept their name and changed their meaning (a Godot 3 project's reads and writes need it kept)
_MEANING_CHANGED = {
    ("Camera2D", "zoom"): "inverted in Godot 4 (Godot 3's 2 showed twice as much, Godot 4's 0.5)",
    # a name Godot 4 kept on an ancestor, for something else: Node's pause handling, Window's mode
    **{(cls, "process_mode"): f"Godot 4's `process_mode` is Node's (pausing); {cls}'s own is `{new}` there"
       for cls, new in (("Timer", "process_callback"), ("Camera2D", "process_callback"),
                        ("AnimationTree", "callback_mode_process"))},
    **{(cls, "mode"): "Godot 4's `mode` is the Window's (windowed, fullscreen); the dialog's is `file_mode` there"
       for cls in ("FileDialog", "EditorFileDialog")},
    ("Viewport", "size"): "a Vector2i of pixels in Godot 4 (Godot 3's Vector2 arithmetic, `size / 2`, divides as "
                          "integers there)",
}
_TWEEN3_SIGNALS = ("tween_completed", "tween_all_completed", "tween_started", "tween_step")
_UNDO_REDO_CALLS = {"add_do_method", "add_undo_method"}
# Godot 3 calls that Godot 4 still compiles but runs otherwise: name -> (Godot 3 classes, argument counts, why)
_SILENT_CHANGES = {
    "slice": (("Array",), (2, 3, 4), "Godot 3's end was inclusive, Godot 4's is exclusive"),
    "right": (("String",), (1,), "Godot 3 returned the string from that position, Godot 4 that many last characters"),
    "erase": (("String",), (2,), "Godot 3 erased in place, Godot 4 returns the new string"),
    "angle_to_point": (("Vector2",), (1,), "Godot 4 measures the angle the opposite way"),
    "translated": (("Transform", "Transform2D"), (1,), "Godot 3 moved along the transform's own axes, Godot 4 "
                                                       "in the parent's frame (`translated_local`)"),
    **{name: (("SceneTree",), tuple(range(2, 9)), "Godot 3 made group calls on idle, Godot 4 at once")
       for name in ("call_group", "set_group", "notify_group")},
    **{name: (("SceneTree",), tuple(range(3, 10)), "Godot 3's flags without GROUP_CALL_REALTIME waited for idle")
       for name in ("call_group_flags", "set_group_flags", "notify_group_flags")},
    "move_and_collide": (("KinematicBody2D", "KinematicBody"), (2, 3, 4), "Godot 4's second argument is test_only "
                                                                         "(Godot 3's infinite_inertia)"),
    "to_html": (("Color",), (0, 1), "Godot 3 wrote ARGB, Godot 4 writes RGBA"),
}
_OBJECT_SIGNAL_CALLS = {"connect", "disconnect", "is_connected"}
# Methods both references document whose Godot 3 result Godot 4 returns as another type (the api_diff
# "signature changed" row): in a Godot 3 project, a call of one on its class is written for the old result.
_RESULT_CHANGED = {("TreeItem", "get_children"): ("the first child", "an Array of them", "get_first_child()"),
                   ("Viewport", "get_size"): ("a Vector2", "a Vector2i", "Vector2(get_size())"),
                   ("Image", "get_size"): ("a Vector2", "a Vector2i", "Vector2(get_size())"),
                   ("BitMap", "get_size"): ("a Vector2", "a Vector2i", "Vector2(get_size())"),
                   ("Image", "get_used_rect"): ("a Rect2", "a Rect2i", "Rect2(get_used_rect())")}


def _in_godot3_project(cues) -> bool:
    """Whether the fragment's project reads as a Godot 3 one (`config_version` 3 or 4)."""
    return any(c.source == "project_context" and c.cue in ("config_version=3", "config_version=4") for c in cues)


def _on_an_instance(cues, call: str, receiver: str) -> bool:
    """Whether the call cue `call` (`.create` or bare `create`) is made on an object, not on its class."""
    if not call.startswith("."):
        return True  # a bare call: on `self`
    member = call[1:]
    bases = [c.cue.rsplit(".", 1)[0] for c in cues
             if c.source == "attribute" and c.receiver == receiver and c.cue.endswith("." + member)]
    return any(b != receiver for b in bases)


def _count(lo: int, hi: int) -> str:
    return f"{lo} argument{'s' if lo != 1 else ''}" if lo == hi else f"{lo} to {hi} arguments"


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
            # Godot 4 still reads Godot 3's array names in a settings file: it tells the version, needs nothing
            out.append(Marker("3", text, f"`{text}` (Godot 4 writes `Packed...Array`, and reads this)", SIGNAL_ONLY))
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


def platform_marker(test: str) -> Marker:
    """`has_feature("HTML5")` or `get_name("X11")` (a comparison of OS.get_name() with it): Godot 4 never says so."""
    method, _, rest = test.partition("(")
    old = rest.strip('")')
    new = (FEATURE_TAGS if method == "has_feature" else OS_NAMES).get(old)
    what = f'`OS.has_feature("{old}")`' if method == "has_feature" else f'`OS.get_name()` tested against "{old}"'
    if new is None:
        return Marker("3", test, f"{what}: never true in Godot 4 ({GONE[old]})", 0.8)
    return Marker("3", test, f'{what}: never true in Godot 4, which names that platform "{new}" '
                             "(the script would silently take the other branch)", 0.85)
