"""api_mapping: every known Godot 3 -> 4 change, one searchable row each.

Four origins, one table: (a) the official rename map of the project converter, including the pairs
it leaves commented out (flagged ambiguous with the reason); (b) the diff of the 3.x and 4.x API
surfaces, with class renames resolved so KinematicBody2D members compare against CharacterBody2D;
(c) the converter's own before/after syntax rules (yield -> await, export -> @export, ...);
(d) the curated scene-property table (`scene_properties.yaml`): what a property Godot 4 no longer
reads in a scene becomes, and how its value changes; (e) the curated answers (`api_answers.yaml`): what
a Godot 3 name that Godot 4 lacks becomes (a rename, a move to another class) or what to do by hand.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from corpora_build.schema import content_hash, unique_id
from corpora_build.sources import Source
from corpora_build.sources.classref import ClassDoc, Member, read_classes
from corpora_build.sources.files import iter_files

CATEGORIES = {
    "enum_renames": "enum", "gdscript_function_renames": "function", "csharp_function_renames": "csharp_function",
    "gdscript_properties_renames": "property", "csharp_properties_renames": "csharp_property",
    "gdscript_signals_renames": "signal", "csharp_signals_renames": "csharp_signal",
    "project_settings_renames": "project_setting", "project_godot_renames": "project_godot",
    "input_map_renames": "input_map", "builtin_types_renames": "builtin_type", "shaders_renames": "shader",
    "class_renames": "class", "color_renames": "color", "theme_override_renames": "theme_override",
}
NOUNS = {
    "enum": "constant", "function": "method", "csharp_function": "C# method", "property": "property",
    "csharp_property": "C# property", "signal": "signal", "csharp_signal": "C# signal",
    "project_setting": "project setting", "project_godot": "project.godot key", "input_map": "input action",
    "builtin_type": "built-in type", "shader": "shader keyword", "class": "class", "color": "color constant",
    "theme_override": "theme override",
}
# Which rename table renames which member kind of the class reference (used by the surface diff).
MEMBER_RENAMES = {"method": "function", "property": "property", "signal": "signal", "constant": "enum"}
DIFF_KINDS = ("method", "property", "signal", "constant")

_TABLE = re.compile(r"RenamesMap3To4::(\w+)\[\]\[2\]\s*=\s*\{(.*?)\n\};", re.S)
_PAIR = re.compile(r'\{\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*\}')
_CLASSES = re.compile(r"^[A-Z@][\w@]*(?:\s*,\s*[A-Z@][\w@]*)*$")


@dataclass(frozen=True)
class Rename:
    table: str
    old: str
    new: str
    comment: str       # trailing comment, e.g. 'XRPositionalTracker -- Breaks OS, Node'
    commented_out: bool


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)


def parse_rename_map(text: str) -> list[Rename]:
    """Every `{ "old", "new" }` pair of renames_map_3_to_4.cpp, live or commented out, in file order."""
    pairs = []
    for table, body in _TABLE.findall(text):
        for line in body.splitlines():
            line = line.strip()
            commented = line.startswith("//")
            code = line[2:].strip() if commented else line
            match = _PAIR.match(code)
            if not match:
                continue
            comment = code[match.end():].lstrip(", ").removeprefix("//").strip()
            pairs.append(Rename(table, _unescape(match.group(1)), _unescape(match.group(2)), comment, commented))
    return pairs


def _unique(rid: str, seen: set[str], alt: str) -> str:
    """A later collision adds `>new` (or `>removed`...), then `#n`."""
    return unique_id(rid, seen, f"{rid}>{alt}")


def _row(**row) -> dict:
    row.setdefault("old_signature", None)
    row.setdefault("new_signature", None)
    row.setdefault("ambiguous_reason", None)
    row["content_hash"] = content_hash(*(row.get(k) for k in sorted(row) if k != "id"))
    return row


def rename_rows(pairs: list[Rename]) -> list[dict]:
    rows, seen = [], set()
    for p in sorted(pairs, key=lambda p: p.commented_out):  # live pairs keep the plain ids
        category = CATEGORIES.get(p.table, p.table)
        noun = NOUNS.get(category, category)
        context, _, detail = p.comment.partition(" -- ")
        context = context.strip() if _CLASSES.match(context.strip()) else None
        detail = detail.strip() or (p.comment if not context else "")
        on = f" (on {context})" if context else ""
        suffix = "()" if category in ("function", "csharp_function") else ""
        title = f"{p.old} -> {p.new} ({noun} rename{', not automatic' if p.commented_out else ''})"
        if p.commented_out:
            reason = ("the official converter leaves this rename commented out: it renames by name only and "
                      "cannot know the receiver type" + (f" ({detail.rstrip('.')})" if detail else ""))
            text = (f"Godot 3 {noun} {p.old}{suffix}{on} may correspond to {p.new}{suffix} in Godot 4, but "
                    f"{reason}. Check the receiver's class before renaming.")
        else:
            reason = None
            text = f"Godot 3 {noun} {p.old}{suffix} is renamed {p.new}{suffix} in Godot 4{on}."
            if detail:
                text += f" Note: {detail}"
        rows.append(_row(
            id=_unique(f"map:rename:{category}:{p.old}", seen, p.new), old_name=p.old, new_name=p.new,
            change_kind="renamed", category=category, class_context=context, source="rename_map",
            ambiguous=p.commented_out, ambiguous_reason=reason, title=title,
            text=f"{text.rstrip('.')} (official 3->4 rename map, {p.table}).",
        ))
    return rows


def _normalise(types: tuple[str, ...] | str | None, type_renames: dict[str, str]) -> tuple[str, ...]:
    if types is None:
        return ()
    types = (types,) if isinstance(types, str) else types
    return tuple(type_renames.get(t, t) for t in types)


def _shape(m: Member, type_renames: dict[str, str]) -> tuple:
    """What must stay equal for a member to keep its signature (3.x types mapped to their 4.x names)."""
    if m.kind == "property":
        return _normalise(m.signature.split(":", 1)[1].split(" = ")[0].split("  #")[0].strip(), type_renames)
    if m.kind == "constant":
        return ()
    returns = _normalise(m.returns or "void", type_renames) if m.kind == "method" else ()
    return returns + ("|",) + _normalise(m.params, type_renames)


def diff_rows(old: dict[str, ClassDoc], new: dict[str, ClassDoc], pairs: list[Rename]) -> list[dict]:
    """Members removed, added and with changed signatures, per class, class renames resolved."""
    live = [p for p in pairs if not p.commented_out]
    class_renames = {p.old: p.new for p in live if p.table == "class_renames"}
    type_renames = class_renames | {p.old: p.new for p in live if p.table == "builtin_types_renames"}
    member_renames = {kind: {p.old: p.new for p in live if CATEGORIES[p.table] == cat}
                      for kind, cat in MEMBER_RENAMES.items()}
    rows, seen = [], set()
    matched: dict[tuple[str, str], set[str]] = {}  # (4.x class, kind) -> names reached from 3.x
    for c3 in sorted(old):
        c4 = class_renames.get(c3, c3)
        if c4 not in new:
            rows.append(_row(
                id=_unique(f"map:diff:class:{c3}", seen, "removed"), old_name=c3, new_name=None,
                change_kind="removed", category="class", class_context=c3, source="api_diff", ambiguous=False,
                old_signature=f"class {c3}", title=f"{c3} removed in Godot 4 (class)",
                text=f"Godot 3 class {c3} has no Godot 4 counterpart: no class of that name and no official "
                     f"rename in Godot 4. Code using {c3} must be rewritten for Godot 4.",
            ))
            continue
        renamed = f" (class {c3} is {c4} in Godot 4)" if c4 != c3 else ""
        for kind in DIFF_KINDS:
            new_members = {m.name: m for m in new[c4].members if m.kind == kind}
            reached = matched.setdefault((c4, kind), set())
            # 3.x lists constructors as methods named after the class; 4.x has real constructors.
            members = (m for m in old[c3].members if m.kind == kind and m.name != c3)
            for m3 in sorted(members, key=lambda m: m.name):
                name = m3.name
                target = name if name in new_members else member_renames[kind].get(name)
                m4 = new_members.get(target) if target else None
                if m4 is None:
                    rows.append(_row(
                        id=_unique(f"map:diff:{kind}:{c3}.{name}", seen, "removed"), old_name=name,
                        new_name=None, change_kind="removed", category=kind, class_context=c3,
                        source="api_diff", ambiguous=False, old_signature=m3.signature,
                        title=f"{c3}.{name} removed in Godot 4 ({kind})",
                        text=f"Godot 3 {kind} {c3}.{name} (`{m3.signature}`) no longer exists on {c4} in "
                             f"Godot 4{renamed}.",
                    ))
                    continue
                reached.add(m4.name)
                if _shape(m3, type_renames) != _shape(m4, type_renames):
                    rows.append(_row(
                        id=_unique(f"map:diff:{kind}:{c3}.{name}", seen, "changed"), old_name=name,
                        new_name=m4.name, change_kind="signature_changed", category=kind, class_context=c4,
                        source="api_diff", ambiguous=False, old_signature=m3.signature,
                        new_signature=m4.signature,
                        title=f"{c3}.{name} -> {c4}.{m4.name} (signature changed, {kind})",
                        text=f"The {kind} {c3}.{name} changed its signature in Godot 4{renamed}: Godot 3 "
                             f"`{m3.signature}`, Godot 4 `{m4.signature}`. Calls written for Godot 3 must "
                             f"be adapted.",
                    ))
    for (c4, kind), reached in sorted(matched.items()):
        for m4 in sorted((m for m in new[c4].members if m.kind == kind), key=lambda m: m.name):
            if m4.name not in reached:
                rows.append(_row(
                    id=_unique(f"map:diff:{kind}:{c4}.{m4.name}", seen, "added"), old_name=None,
                    new_name=m4.name, change_kind="added", category=kind, class_context=c4, source="api_diff",
                    ambiguous=False, new_signature=m4.signature, title=f"{c4}.{m4.name} added in Godot 4 ({kind})",
                    text=f"Godot 4 {kind} {c4}.{m4.name} (`{m4.signature}`) is new: it does not exist in "
                         f"Godot 3. Code using it is Godot 4 code.",
                ))
    targets = set(class_renames.values())
    for c4 in sorted(set(new) - set(old) - targets):
        rows.append(_row(
            id=_unique(f"map:diff:class:{c4}", seen, "added"), old_name=None, new_name=c4, change_kind="added",
            category="class", class_context=c4, source="api_diff", ambiguous=False,
            new_signature=f"class {c4}", title=f"{c4} added in Godot 4 (class)",
            text=f"Godot 4 class {c4} is new: Godot 3 has no class of that name and none is renamed to it. "
                 f"Code using {c4} is Godot 4 code.",
        ))
    return rows


_CALL = re.compile(
    r'test_conversion_(gdscript_builtin|with_regex)\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+),\s*((?:"(?:[^"\\]|\\.)*"\s*)+),'
    r'\s*&ProjectConverter3To4::(\w+)\s*,\s*"([^"]*)"'
)


def _c_string(literals: str) -> str:
    return "".join(_unescape(s) for s in re.findall(r'"((?:[^"\\]|\\.)*)"', literals))


def converter_vectors(source: Source) -> list[dict]:
    """The converter's before/after test vectors, from the extracted JSON or from the converter's .cpp."""
    (_, data), = list(iter_files(source.location, ("*",)))
    if source.location.endswith(".json"):
        return json.loads(data)["test_vectors"]
    return [{"godot3": _c_string(a), "godot4": _c_string(b), "rule": rule, "category": cat, "kind": kind}
            for kind, a, b, rule, cat in _CALL.findall(data.decode())]


def _short(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def syntax_rows(vectors: list[dict]) -> list[dict]:
    """One row per distinct before/after rewrite; vectors where the converter leaves code as is are skipped."""
    rows, seen, pairs = [], set(), set()
    for v in vectors:
        old, new = v["godot3"].replace('\\"', '"').strip(), v["godot4"].replace('\\"', '"').strip()
        if old == new or (old, new) in pairs:
            continue
        pairs.add((old, new))
        todo = "TODOConverter" in new or "not officially supported" in new
        slug = re.sub(r"[^A-Za-z0-9_@.]+", "_", old).strip("_")[:48] or "blank"
        rows.append(_row(
            id=_unique(f"map:syntax:{v['rule']}:{slug}", seen, content_hash(old, new)[:8]), old_name=old,
            new_name=new, change_kind="syntax_changed", category="syntax", class_context=None,
            source="converter_rule", ambiguous=todo,
            ambiguous_reason="the converter's output needs manual review (it leaves a TODO or a note)" if todo else None,
            title=f"{_short(old)} -> {_short(new)} (converter rule {v['rule']})",
            text=f"Godot 3 code `{old}` is written `{new}` in Godot 4: a rewrite of the official project "
                 f"converter (rule {v['rule']}, {v['category']}).",
        ))
    return rows


SCENE_PROPERTIES = Path(__file__).resolve().parent / "scene_properties.yaml"


def scene_property_rows(path: Path = SCENE_PROPERTIES) -> list[dict]:
    """One row per curated scene property: `old` of Godot 3 class `class` becomes `new` by rule `value`."""
    rows, seen = [], set()
    for entry in yaml.safe_load(path.read_text(encoding="utf-8")):
        if "becomes" in entry:  # a class a scene's node or resource becomes
            rows.append(_row(
                id=_unique(f"map:scene:{entry['class']}", seen, entry["becomes"]), old_name=entry["class"],
                new_name=entry["becomes"], change_kind="renamed", category="class", class_context=None,
                source="scene_property", ambiguous=False,
                title=f"{entry['class']} -> {entry['becomes']} (scene node or resource class)",
                text=f"In a Godot 3 scene or resource, a {entry['class']} becomes a {entry['becomes']} in Godot 4: "
                     f"{entry['why']}"))
            continue
        cls, old, new, rule = entry["class"], entry["old"], entry.get("new") or "", entry.get("value", "")
        becomes = f"`{new}`" if new else "nothing"
        how = f" (value: {rule})" if rule else ""
        rows.append(_row(
            id=_unique(f"map:scene:{cls}.{old}", seen, new or "none"), old_name=old, new_name=new or None,
            change_kind="renamed" if new and new != old else "value_changed" if new else "removed",
            category="property", class_context=cls,
            new_signature=f"value={rule}" if rule else "stored" if entry.get("stored") else None,
            source="scene_property", ambiguous=False,
            title=f"{cls}.{old} -> {new or 'removed'}{how} (scene property)",
            text=f"In a Godot 3 scene or resource, `{old}` of a {cls} becomes {becomes} in Godot 4{how}: "
                 f"{entry['why']}",
        ))
    return rows


API_ANSWERS = Path(__file__).resolve().parent / "api_answers.yaml"


def answer_rows(path: Path = API_ANSWERS) -> list[dict]:
    """One row per curated answer and name: `rename` (same class), `moved` (`Class.member`) or `answer` (by hand)."""
    rows, seen = [], set()
    for entry in yaml.safe_load(path.read_text(encoding="utf-8")):
        cls = entry["class"]
        for name in entry["names"]:
            new = entry.get("rename") or entry.get("moved")
            kind = "renamed" if "rename" in entry else "moved" if "moved" in entry else "removed"
            what = (f"renamed {new}" if kind == "renamed" else f"moved to {new}" if kind == "moved" else "by hand")
            text = entry.get("answer") or (f"Godot 3 {cls}.{name} is {new} in Godot 4." if kind == "renamed" else
                                           f"Godot 3 {cls}.{name} is {new} in Godot 4 (another class).")
            member = name if name != cls else None
            rows.append(_row(
                id=_unique(f"map:answer:{cls}.{name}", seen, "2"), old_name=member or cls, new_name=new,
                new_signature=entry.get("value"),
                change_kind=kind, category="answer", class_context=cls, source="curated_answer", ambiguous=False,
                title=f"{cls}.{name} in Godot 4: {what} (curated answer)" if member else
                      f"{cls} in Godot 4: {what} (curated answer)",
                text=text))
    return rows


def build_api_mapping(sources: dict[str, Source]) -> list[dict]:
    """All api_mapping rows: rename map, API surface diff, converter syntax rules (when present)."""
    (_, data), = list(iter_files(sources["rename_map"].location, ("*",)))
    pairs = parse_rename_map(data.decode())
    rows = rename_rows(pairs)
    rows += diff_rows(read_classes(sources["godot3_classes"]), read_classes(sources["godot4_classes"]), pairs)
    if "converter_rules" in sources:
        rows += syntax_rows(converter_vectors(sources["converter_rules"]))
    rows += scene_property_rows()
    rows += answer_rows()
    return rows
