"""What the corpora say exists in each version: classes, members, globals, renames and call shapes.

The evidence judge asks this, never a hand-written list of names: a name that only the 3.x class
reference documents is Godot 3 evidence; one only the 4.x reference documents is Godot 4 evidence.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path

from gd_assets.core import duck, heap

GLOBAL_CLASSES = ("@GDScript", "@GlobalScope")
# Godot 3 classes whose members Godot 4 moved to classes of other names (no rename row pairs them)
MOVED_CLASSES = {"Geometry": ("Geometry2D", "Geometry3D"), "JavaScript": ("JavaScriptBridge",)}


@dataclass(frozen=True)
class CallablePair:
    """Where a Godot 3 method took a target and a method name that Godot 4 takes as one Callable."""

    row: str              # the api_diff row (both signatures)
    index: int            # the position of the target among the arguments (the name follows it)
    after3: tuple[str, ...]  # Godot 3's parameters after the pair, by name
    after4: tuple[str, ...]  # Godot 4's parameters after the Callable, by name


def callable_pair(row: str, old: str, new: str) -> CallablePair | None:
    """The CallablePair of two signatures (`void f(a: RID, receiver: Object, method: String)` and `void
    f(a: RID, callback: Callable)`), or None where the pair and the Callable do not line up."""
    def params(signature: str) -> list[tuple[str, str]]:
        inner = signature[signature.find("(") + 1:signature.rfind(")")]
        return [(p.split(":")[0].strip(), p.split(":")[1].split("=")[0].strip()) for p in split_args(inner) if ":" in p]
    p3, p4 = params(old), params(new)
    for i in range(len(p3) - 1):
        if p3[i][1] == "Object" and p3[i + 1][1] == "String" and i < len(p4) and p4[i][1] == "Callable" and \
                [t for _, t in p3[:i]] == [t for _, t in p4[:i]]:
            return CallablePair(row, i, tuple(n for n, _ in p3[i + 2:]), tuple(n for n, _ in p4[i + 1:]))
    return None


@dataclass(frozen=True)
class VirtualRename:
    """A Godot 3 virtual method Godot 4 calls by another name (`Control.get_drag_data` -> `_get_drag_data`):
    Godot 4 never calls a script's method of the old name. `added` are the parameters Godot 4 passes after
    Godot 3's (a script's method must take them all); `fits` is False where Godot 4 changed the others."""

    owner3: str
    owner4: str
    new: str
    added: tuple[str, ...]
    fits: bool


@dataclass
class Surface:
    classes: dict[str, set[str]] = field(default_factory=lambda: {"3": set(), "4": set()})
    # member name -> classes having it, per version and kind (method|property|signal|constant|enum)
    members: dict[tuple[str, str], dict[str, set[str]]] = field(default_factory=dict)
    # (version, method name) -> list of (min args, max args) over classes
    arity: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    class_arity: dict[tuple[str, str, str], tuple[int, int]] = field(default_factory=dict)  # (v, class, method)
    static: set[tuple[str, str, str]] = field(default_factory=set)  # (version, class, method) of static methods
    void: set[tuple[str, str, str]] = field(default_factory=set)  # (version, class, method) of methods returning nothing
    # (version, class, method) of a virtual method -> its parameters, (name, type) each, and its return type
    virtuals: dict[tuple[str, str, str], tuple[tuple[tuple[str, str], ...], str]] = field(default_factory=dict)
    class_renames: dict[str, str] = field(default_factory=dict)
    renames: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # category -> old -> new
    class_members: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    annotations4: set[str] = field(default_factory=set)
    parents: dict[tuple[str, str], str] = field(default_factory=dict)        # (version, class) -> parent
    types: dict[tuple[str, str, str], str] = field(default_factory=dict)     # (version, class, member) -> type
    ambiguous_renames: dict[str, str] = field(default_factory=dict)  # member renames the converter leaves off
    kinds: dict[tuple[str, str, str], set[str]] = field(default_factory=lambda: defaultdict(set))  # (v, class, member)
    theme_items: dict[tuple[str, str], dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # -> kind
    constants: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (v, class, constant) -> value
    defaults: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (v, class, property) -> its default
    # scene-property rows: (Godot 3 class, property) -> (Godot 4 property, value rule)
    scene_properties: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    scene_classes: dict[str, str] = field(default_factory=dict)  # a scene's Godot 3 class -> its Godot 4 class
    # a curated answer for a project setting: pattern (`rendering/batching/*`) -> (Godot 4 key or "", why)
    setting_answers: dict[str, tuple[str, str]] = field(default_factory=dict)
    # (Godot 3 class, member) -> its Godot 4 name, for a curated rename of a name Godot 4 kept with another
    # meaning (`Timer.process_mode` is Node's in Godot 4; Timer's is `process_callback`)
    curated_renames: dict[tuple[str, str], str] = field(default_factory=dict)
    # (version, class, property) -> (setter, getter) as the reference documents them
    accessors: dict[tuple[str, str, str], tuple[str, str]] = field(default_factory=dict)
    # (Godot 3 class, method) -> where its (Object, method name) pair of parameters became one Callable in Godot 4
    # (`bsearch_custom(value, obj, "f", before)` -> `bsearch_custom(value, obj.f, before)`), from the api_diff rows
    callable_pairs: dict[tuple[str, str], CallablePair] = field(default_factory=dict)
    _accessor_index: dict[tuple[str, str, str], tuple[str, str, int]] = field(default_factory=dict, repr=False)

    def ancestors(self, version: str, cls: str) -> list[str]:
        """`cls` and the classes it inherits from, nearest first."""
        out = []
        while cls and cls not in out:
            out.append(cls)
            cls = self.parents.get((version, cls), "")
        return out

    def owner_of(self, version: str, cls: str, name: str, kinds: tuple[str, ...] | None = None) -> str | None:
        """The class in `cls`'s ancestry that documents member `name` in `version` (as one of `kinds`,
        when given: a property read is not a signal of the same name), if any."""
        return next((c for c in self.ancestors(version, cls) if name in self.class_members.get((version, c), ())
                     and (kinds is None or self.kinds.get((version, c, name), set()) & set(kinds))), None)

    def returns_nothing(self, cls3: str, name: str) -> bool:
        """Whether the method `name` of the Godot 3 class `cls3` returns nothing in both versions (under its Godot 4
        class and method name): Godot 3 gave null for `return node.accept_event()`, Godot 4 refuses the value."""
        owner3 = self.owner_of("3", cls3, name, ("method",))
        cls4 = cls3 if cls3 in self.classes["4"] else self.class_renames.get(cls3, "")
        new = name if self.owner_of("4", cls4, name, ("method",)) else self.renames.get("method", {}).get(name, "")
        owner4 = self.owner_of("4", cls4, new, ("method",)) if cls4 and new else None
        return owner3 is not None and owner4 is not None and ("3", owner3, name) in self.void and \
            ("4", owner4, new) in self.void

    def virtual_renamed(self, cls3: str, name: str) -> VirtualRename | None:
        """How Godot 4 calls the virtual method `name` a script of the Godot 3 class `cls3` overrides, where it
        calls it by another name: `_` before it (`EditorPlugin.handles` -> `_handles`), `spatial` said `3d`
        (`forward_spatial_gui_input` -> `_forward_3d_gui_input`), or the rename map's name for it."""
        if name.startswith("_"):
            return None
        owner3 = self.owner_of("3", cls3, name, ("method",))
        if owner3 is None or ("3", owner3, name) not in self.virtuals:
            return None
        cls4 = self.class4(cls3) or ""
        kept = self.owner_of("4", cls4, name, ("method",))
        if kept is not None and ("4", kept, name) in self.virtuals:
            return None   # still a virtual of that name
        for new in ("_" + name, "_" + name.replace("spatial", "3d"), self.renames.get("method", {}).get(name, "")):
            owner4 = self.owner_of("4", cls4, new, ("method",)) if new.startswith("_") else None
            if owner4 is not None and ("4", owner4, new) in self.virtuals:
                old, now = self.virtuals["3", owner3, name][0], self.virtuals["4", owner4, new][0]
                fits = len(now) >= len(old) and all(_same_type(a, b) or self.class4(a) == b
                                                    for (_, a), (_, b) in zip(old, now))
                return VirtualRename(owner3, owner4, new, tuple(n for n, _ in now[len(old):]) if fits else (), fits)
        return None

    def virtual_gone(self, cls3: str, name: str) -> str | None:
        """The Godot 3 class whose virtual method `name` a script of `cls3` overrides, where Godot 4 has no virtual
        of that name nor one it renamed it to (`Node._get_configuration_warning`): Godot 4 never calls it."""
        owner3 = self.owner_of("3", cls3, name, ("method",))
        if owner3 is None or ("3", owner3, name) not in self.virtuals or self.virtual_renamed(cls3, name) is not None:
            return None
        owner4 = self.owner_of("4", self.class4(cls3) or "", name, ("method",))
        return owner3 if owner4 is None else None

    def in_descendant(self, version: str, cls: str, name: str) -> bool:
        """Whether some class deriving from `cls` documents member `name` in `version`."""
        return any(name in self.class_members.get((version, c), ()) and cls in self.ancestors(version, c)[1:]
                   for c in self.members_index(version, name))

    def only_subclass(self, cls: str, name: str) -> str | None:
        """The one Godot 3 subclass of `cls` documenting member `name`, when neither reference documents it on `cls`
        and no Godot 4 subclass of Godot 4's `cls` does: a Control's `pressed` is a BaseButton's (an InputEvent's
        is no Control's); a Node's may be a TouchScreenButton's too (None)."""
        if self.owner_of("3", cls, name) is not None or self.owner_of("4", cls, name) is not None:
            return None
        read = {"method", "property", "constant", "enum"}   # not a signal: Godot 4's `pressed` signal is no value

        def having(version: str, base: str) -> set[str]:
            return {c for c in self.members_index(version, name) if base in self.ancestors(version, c)[1:]
                    and self.kinds.get((version, c, name), set()) & read}

        below = having("3", cls)
        if len(below) != 1 or having("4", self.class_renames.get(cls, cls)):
            return None
        return below.pop()

    def members_index(self, version: str, name: str) -> set[str]:
        return set().union(*(self.members.get((version, k), {}).get(name, set())
                             for k in ("method", "property", "signal", "constant", "enum")))

    # EngineTypes (receivers.py): either version's reference, Godot 3's first.
    def is_class(self, name: str) -> bool:
        return name in self.classes["3"] or name in self.classes["4"]

    def parent_class(self, name: str) -> str | None:
        return self.parents.get(("3", name)) or self.parents.get(("4", name))

    def member_type(self, cls: str, name: str) -> str | None:
        for version in ("3", "4"):
            owner = self.owner_of(version, cls, name)
            if owner is not None:
                return self.types.get((version, owner, name))
        return None

    def scene_class(self, cls: str) -> str:
        """The Godot 4 class of a scene's node or resource of Godot 3 class `cls`."""
        return self.scene_classes.get(cls) or self.class_renames.get(cls, cls)

    def still_stored(self, cls: str, name: str) -> bool:
        """Whether Godot 4 still stores property `name` of a Godot 3 `cls` undocumented (a scene-property row)."""
        return any(self.scene_properties.get((c, name)) == (name, "stored") for c in self.ancestors("3", cls))

    def value_change(self, cls: str, name: str) -> str | None:
        """The value rule of a scene property Godot 4 kept under its name but reads differently
        (`Camera2D.zoom`: reciprocal), on `cls` or a Godot 3 ancestor."""
        for c in self.ancestors("3", cls):
            new, rule = self.scene_properties.get((c, name), ("", ""))
            if new == name and rule and rule != "stored":
                return rule
        return None

    def has_class(self, version: str, name: str) -> bool:
        return name in self.classes[version]

    def setting_answer(self, key: str) -> tuple[str, str] | None:
        """(the Godot 4 key, why) for a project setting Godot 4 reads elsewhere or dropped ("" as the key), from
        the curated answers (the most specific pattern), else from the references (a setting only 3.x has)."""
        found = [p for p in self.setting_answers if fnmatchcase(key, p)]
        if found:
            return self.setting_answers[max(found, key=lambda p: ("*" not in p, len(p)))]
        if self.owner_of("3", "ProjectSettings", key) and not self.owner_of("4", "ProjectSettings", key):
            return "", "gone from Godot 4's project settings"
        return None

    def class4(self, cls: str) -> str | None:
        """The Godot 4 class a Godot 3 class became (its own name, a scene row's or the map's), None if removed."""
        cls4 = self.scene_classes.get(cls) or self.class_renames.get(cls) or \
            self.renames.get("builtin_type", {}).get(cls, cls)  # PoolStringArray -> PackedStringArray
        return cls4 if cls4 in self.classes["4"] else None

    def kept(self, cls4: str, name: str, kind: str) -> bool:
        """Whether Godot 4's class `cls4` (or an ancestor) has `name` as a member of the same kind (a method:
        also a property's accessor; a constant: also an enum)."""
        owner = self.owner_of("4", cls4, name)
        if owner is None:
            return False
        kinds = self.kinds.get(("4", owner, name), set())
        if kind == "method":
            return not kinds or "method" in kinds
        if kind == "constant":
            return bool(kinds & {"constant", "enum"})
        return kind in kinds

    def gone(self, cls: str, name: str, kind: str) -> str | None:
        """The Godot 3 class documenting member `name` of `kind` that `cls` reads, when Godot 4's class lacks
        it under that name (else None): the name needs an answer."""
        kinds = ("constant", "enum") if kind == "constant" else (kind,)
        owner = self.owner_of("3", cls, name, kinds)
        if owner is None or owner in GLOBAL_CLASSES:
            return None
        cls4 = self.class4(cls) or self.class4(owner)
        return owner if cls4 is not None and not self.kept(cls4, name, kind) else None

    def accessor_of(self, cls: str, name: str) -> tuple[str, str, int] | None:
        """(owner, property, 0 setter / 1 getter) when `name` is an accessor of a Godot 3 property of `cls` or
        an ancestor (`set_target_fps` of `Engine.target_fps`)."""
        if not self._accessor_index:
            for (ver, owner, prop), pair in self.accessors.items():
                for place, accessor in enumerate(pair):
                    if accessor:
                        self._accessor_index.setdefault((ver, owner, accessor), (owner, prop, place))
        return next((self._accessor_index[("3", c, name)] for c in self.ancestors("3", cls)
                     if ("3", c, name) in self._accessor_index), None)

    def property_by_accessor(self, cls4: str, getter: str) -> str | None:
        """The one Godot 4 property of `cls4` (or an ancestor) whose getter is `getter` (None when several
        share it: an indexed accessor such as `get_param(PARAM_X)`)."""
        found = {name for c in self.ancestors("4", cls4) for name in self.class_members.get(("4", c), ())
                 if self.accessors.get(("4", c, name), ("", ""))[1] == getter}
        return found.pop() if len(found) == 1 else None

    def member_classes(self, version: str, kind: str, name: str) -> set[str]:
        return self.members.get((version, kind), {}).get(name, set())

    def any_member(self, version: str, name: str) -> bool:
        return any(name in self.members.get((version, k), {}) for k in ("method", "property", "signal", "constant",
                                                                         "enum"))

    def is_global_function(self, version: str, name: str) -> bool:
        return bool(self.member_classes(version, "method", name) & set(GLOBAL_CLASSES))

    def is_global_constant(self, version: str, name: str) -> bool:
        return bool(self.member_classes(version, "constant", name) & set(GLOBAL_CLASSES))

    def class_member(self, version: str, cls: str, name: str) -> bool:
        """Whether class `cls` documents member `name` in `version`."""
        return name in self.class_members.get((version, cls), ())

    def arity_fits(self, version: str, name: str, count: int) -> bool | None:
        """Whether some class of `version` has a method `name` taking `count` arguments; None if no such method."""
        ranges = self.arity.get((version, name))
        if not ranges:
            return None
        return any(lo <= count <= hi for lo, hi in ranges)


_PARAMS = re.compile(r"\((.*)\)")
_INHERITS = re.compile(r"\binherits\s+(\w+)")
_METHOD_RETURN = re.compile(r"^(\w+)\s+\w+\(")
_PROPERTY_TYPE = re.compile(r"^var\s+\w+\s*:\s*(\w+)")
_THEME_ITEM = re.compile(r"^theme (\w+) (\w+):")
_CONSTANT = re.compile(r"^const \w+ = (-?\d+)\b")


def _member_type(kind: str, signature: str | None) -> str | None:
    """`SceneTree get_tree() const` -> SceneTree; `var name: String` -> String (class-like types only)."""
    match = (_METHOD_RETURN if kind == "method" else _PROPERTY_TYPE if kind == "property" else None)
    found = match.match(signature or "") if match is not None else None
    name = found.group(1) if found else None
    return name if name and name[:1].isupper() else None
_ACCESSORS = re.compile(r"\b((?:set|get|is)_\w+)")
_DEFAULT = re.compile(r"var \w+: \w+ = (-?\d+|true|false)\s*(?:#|$)")  # a number or flag default (`= 1`)
_SETTER_GETTER = re.compile(r"setter/getter:\s*(\w*)\s*(?:/\s*(\w*))?")


def split_args(args: str) -> list[str]:
    """Top-level comma-separated parts of an argument list (brackets and quotes respected)."""
    depth, parts, cur, quote = 0, [], "", None
    for ch in args:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


_NUMBERS = {"int", "float", "real"}


def _same_type(old: str, new: str) -> bool:
    """Whether a Godot 3 parameter means what the Godot 4 one does: the same type (Pool arrays renamed, arrays
    typed, String for StringName, Vector2 for Vector2i, an Object Godot 4 types), a number and an enum or bitfield
    (`int` -> `PropertyHint`), or either untyped (Variant). A script's parameters are mostly untyped."""
    new = re.sub(r"^(Array|Dictionary)\[.*\]$|^\w+\[\]$", lambda m: m.group(1) or "Array", new)  # typed arrays
    if "Variant" in (old, new) or old == new or {old, new} == {"String", "StringName"} or new == old + "i":
        return True   # untyped, the same, a String for a StringName, a Vector2 for a Vector2i
    if old == "Object" and new[:1].isupper():
        return True   # Godot 4 names the class it passes
    if _enum_like(old) and _enum_like(new):
        return True
    return new in (old.replace("Pool", "Packed"), old.replace("Spatial", "Node3D"), old.replace("real", "float"))


def _enum_like(type_: str) -> bool:
    """A number, or an enum or bitfield type (`Variant.Type`, `BitField[...]`, `PropertyHint`)."""
    return type_ in _NUMBERS or "." in type_ or type_.startswith("BitField") or \
        (type_[:1].isupper() and type_.endswith(("Flags", "Mode", "Type", "Hint")))


def _parameters(signature: str) -> tuple[tuple[str, str], ...]:
    """A signature's parameters as (name, type): `(a: int, b: String = "")` -> (("a", "int"), ("b", "String"))."""
    match = _PARAMS.search(signature or "")
    inner = match.group(1).strip() if match else ""
    return tuple((p.split(":")[0].strip(), p.split(":", 1)[1].split("=")[0].strip() if ":" in p else "Variant")
                 for p in split_args(inner)) if inner else ()


def _arity(signature: str) -> tuple[int, int] | None:
    match = _PARAMS.search(signature or "")
    if match is None:
        return None
    inner = match.group(1).strip()
    if not inner:
        return (0, 0)
    parts = [p.strip() for p in split_args(inner)]
    if any(p.startswith("...") for p in parts):
        return (sum(1 for p in parts if "=" not in p and not p.startswith("...")), 99)
    required = sum(1 for p in parts if "=" not in p)
    return (required, len(parts))


def load_surface(corpus_db: str) -> Surface:
    """The surface of a corpus DuckDB file, read once per process and state of the file: the evidence step,
    the judge and the rewrite share one copy (about half a second to read), and a rebuilt file is read again."""
    stat = os.stat(corpus_db)
    return _read_surface(corpus_db, (stat.st_ino, stat.st_size, stat.st_mtime_ns))


@lru_cache(maxsize=4)
def _read_surface(corpus_db: str, _state: tuple[int, int, int]) -> Surface:
    surface = Surface()
    members: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    with duck.connect(Path(corpus_db), read_only=True) as con:
        rows = con.execute(
            "SELECT godot_version, class_name, member_kind, member_name, signature FROM docs_chunks "
            "WHERE class_name IS NOT NULL").fetchall()
        maps = con.execute(
            "SELECT category, old_name, new_name FROM api_mapping WHERE source = 'rename_map' AND NOT ambiguous"
        ).fetchall()
        scene = con.execute("SELECT class_context, old_name, new_name, new_signature FROM api_mapping "
                            "WHERE source = 'scene_property' AND category = 'property'").fetchall()
        scene_classes = con.execute("SELECT old_name, new_name FROM api_mapping WHERE source = 'scene_property' "
                                    "AND category = 'class'").fetchall()
        settings = con.execute("SELECT old_name, coalesce(new_name, ''), text FROM api_mapping WHERE source = "
                               "'curated_answer' AND class_context = 'ProjectSettings'").fetchall()
        curated = con.execute("SELECT class_context, old_name, new_name FROM api_mapping WHERE source = "
                              "'curated_answer' AND change_kind = 'renamed' AND class_context <> 'ProjectSettings' "
                              "AND strpos(class_context, '*') = 0 AND strpos(old_name, '*') = 0").fetchall()
        callables = con.execute("SELECT id, old_signature, new_signature FROM api_mapping WHERE source = 'api_diff' "
                                "AND category = 'method' AND old_signature LIKE '%: Object%' AND new_signature LIKE "
                                "'%: Callable%' ORDER BY id").fetchall()
        ambiguous = con.execute(
            "SELECT old_name, new_name FROM api_mapping WHERE source = 'rename_map' AND ambiguous "
            "AND old_name IS NOT NULL AND new_name IS NOT NULL").fetchall()
    for row_id, old, new in callables:
        found = callable_pair(row_id, old, new)
        if found is not None:
            cls, _, name = row_id.removeprefix("map:diff:method:").rpartition(".")
            surface.callable_pairs[(cls, name)] = found
    methods = {(v, cls, name): sig for v, cls, kind, name, sig in rows if kind == "method" and sig}
    for (v, cls3, name), sig3 in methods.items():  # a class moved to another name: the two references' signatures
        target = next((t for t in MOVED_CLASSES.get(cls3, ()) if ("4", t, name) in methods), None) if v == "3" else None
        found = callable_pair(f"docs:4:{target}.method.{name}", sig3, methods["4", target, name]) if target else None
        if found is not None and (cls3, name) not in surface.callable_pairs:
            surface.callable_pairs[(cls3, name)] = found
    for ver, cls, kind, name, signature in rows:
        if kind == "class":
            surface.classes[ver].add(cls)
            inherits = _INHERITS.search(signature or "")
            if inherits:
                surface.parents[(ver, cls)] = inherits.group(1)
        elif kind == "annotation":
            surface.annotations4.add(name)
        elif name:
            members[(ver, kind)][name].add(cls)
            surface.class_members[(ver, cls)].add(name)
            surface.kinds[(ver, cls, name)].add(kind)
            if kind == "property":  # setters and getters are callable methods in both versions
                for accessor in _ACCESSORS.findall(signature or ""):
                    members[(ver, "method")][accessor].add(cls)
                    surface.class_members[(ver, cls)].add(accessor)
                if pair := _SETTER_GETTER.search(signature or ""):  # `set_x / get_x`, or one of them alone
                    first, second = pair.group(1), pair.group(2)
                    if second is None:
                        first, second = (first, "") if first.startswith("set_") else ("", first)
                    surface.accessors[(ver, cls, name)] = (first, second)
            if kind == "theme_item" and (item := _THEME_ITEM.match(signature or "")):
                surface.theme_items[(ver, cls)][item.group(2)] = item.group(1)
            if kind == "property" and (default := _DEFAULT.match(signature or "")):
                surface.defaults[(ver, cls, name)] = default.group(1)
            if kind == "constant" and (value := _CONSTANT.match(signature or "")):
                surface.constants[(ver, cls, name)] = int(value.group(1))
            returned = _member_type(kind, signature)
            if returned:
                surface.types[(ver, cls, name)] = returned
                getter = surface.accessors.get((ver, cls, name), ("", ""))[1] if kind == "property" else ""
                if getter:   # `get_tree().get_root()`: the getter returns what the property holds
                    surface.types.setdefault((ver, cls, getter), returned)
            if kind == "method":
                fit = _arity(signature)
                if fit is not None:
                    surface.arity[(ver, name)].append(fit)
                    surface.class_arity[(ver, cls, name)] = fit
                if (signature or "").rstrip().endswith(" static"):
                    surface.static.add((ver, cls, name))
                if (signature or "").startswith("void "):
                    surface.void.add((ver, cls, name))
                if re.search(r"\)[^(]*\bvirtual\b", signature or ""):
                    returns = _METHOD_RETURN.match(signature)
                    surface.virtuals[(ver, cls, name)] = (_parameters(signature), returns.group(1) if returns else "")
    surface.members = {k: dict(v) for k, v in members.items()}
    surface.theme_items = dict(surface.theme_items)
    surface.ambiguous_renames = dict(ambiguous)
    surface.scene_properties = {(c, old): (new or "", (rule or "").removeprefix("value=")) for c, old, new, rule in scene}
    surface.scene_classes = dict(scene_classes)
    surface.setting_answers = {key: (new, why) for key, new, why in settings}
    surface.curated_renames = {(cls, name): new for cls, name, new in curated}
    for category, old, new in maps:
        surface.renames[category][old] = new
        if category == "class":
            surface.class_renames[old] = new
    heap.settle()   # the surface lives as long as the process: later collections pass it over
    return surface
