"""bridges: links between rows that describe the same entity in different tables.

An api_mapping row links to the docs of its old name (3.x, `old_doc`) and new name (4.x, `new_doc`);
a label prototype links to the mappings it illustrates (`illustrates`). One retrieval hit then leads
to the others. Links are derived from names only, so they are rebuilt whole on every refresh.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable, Mapping

MAX_LINKS = 8
# api_mapping category -> docs member kind(s) that document it.
DOC_KINDS = {
    "function": ("method",), "csharp_function": ("method",), "method": ("method",),
    "property": ("property", "theme_item"), "csharp_property": ("property",), "signal": ("signal",),
    "csharp_signal": ("signal",), "enum": ("constant", "enum"), "constant": ("constant",),
    "theme_override": ("theme_item",), "color": ("constant",), "project_setting": ("property",),
    "class": ("class",), "builtin_type": ("class",),
}
FIXED_CLASS = {"color": "Color", "project_setting": "ProjectSettings"}
GLOBAL_CLASSES = ("@GDScript", "@GlobalScope", "Object", "Node")
_WORD = re.compile(r"@?[A-Za-z_][A-Za-z0-9_]*")
_SKIP = {"var", "func", "pass", "if", "not", "and", "or", "self", "return", "extends", "true", "false", "null"}


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


_ACCESSORS = re.compile(r"# setter/getter: (.*)$")


class DocsIndex:
    """Docs rows by (version, class, kind, member) and by (version, kind, member).

    A property's setter and getter (`set_valign`) count as methods documented by the property row,
    because the class reference documents them there and renames name them.
    """

    def __init__(self, docs: Iterable[Mapping], class_renames: dict[str, str]):
        self.ids: dict[tuple, str] = {}
        self.classes: dict[tuple, list[str]] = defaultdict(list)
        accessors = []
        for d in docs:
            v, cls, kind, member = d["godot_version"], d["class_name"], d["member_kind"], d["member_name"]
            if cls is None:
                continue
            self._add((v, cls, kind, member if kind != "class" else None), d["id"])
            found = _ACCESSORS.search(d.get("signature") or "") if kind == "property" else None
            if found:
                accessors += [((v, cls, "method", a.strip()), d["id"]) for a in found.group(1).split(" / ")]
        for key, rid in accessors:
            self._add(key, rid)
        self.renames = class_renames
        self.back: dict[str, list[str]] = defaultdict(list)
        for old, new in class_renames.items():
            self.back[new].append(old)

    def _add(self, key: tuple, rid: str) -> None:
        if key not in self.ids:
            self.ids[key] = rid
            if key[2] != "class":
                self.classes[(key[0], key[2], key[3])].append(key[1])

    def has_class(self, version: str, cls: str) -> bool:
        return (version, cls, "class", None) in self.ids

    def resolve_class(self, version: str, cls: str) -> list[str]:
        """A class name as it is called in `version` (class renames applied either way)."""
        if self.has_class(version, cls):
            return [cls]
        names = [self.renames[cls]] if version == "4" and cls in self.renames else self.back.get(cls, [])
        return [c for c in names if self.has_class(version, c)]

    def member(self, version: str, cls: str, kinds: tuple[str, ...], name: str) -> list[str]:
        return [self.ids[(version, cls, k, name)] for k in kinds if (version, cls, k, name) in self.ids]

    def exists(self, version: str, kinds: tuple[str, ...], name: str | None) -> bool:
        if kinds == ("class",):
            return self.has_class(version, name)
        return any((version, k, name) in self.classes for k in kinds)

    def holders(self, version: str, kinds: tuple[str, ...], name: str) -> list[str]:
        return sorted({c for k in kinds for c in self.classes.get((version, k, name), [])})


def _name(category: str, name: str | None) -> str | None:
    if name is None:
        return None
    if category.startswith("csharp_"):
        return _snake(name)
    if category == "theme_override":
        return name.rsplit("/", 1)[-1] or None
    return name


def mapping_links(row: Mapping, index: DocsIndex) -> list[tuple[str, str]]:
    """(relation, docs id) pairs for one api_mapping row."""
    category = row["category"]
    if category == "syntax":
        return _syntax_links(row, index)
    kinds = DOC_KINDS.get(category)
    if not kinds:
        return []
    old, new = _name(category, row["old_name"]), _name(category, row["new_name"])
    if kinds == ("class",):
        return ([("old_doc", f"docs:3:{c}.class") for c in index.resolve_class("3", old)] if old else []) + \
               ([("new_doc", f"docs:4:{c}.class") for c in index.resolve_class("4", new)] if new else [])
    context = FIXED_CLASS.get(category) or row.get("class_context")
    if context:
        contexts = [c.strip() for c in context.split(",")]
        old_classes = [c for ctx in contexts for c in index.resolve_class("3", ctx)]
        new_classes = [c for ctx in contexts for c in index.resolve_class("4", ctx)]
    else:
        old_classes = index.holders("3", kinds, old) if old else []
        new_classes = index.holders("4", kinds, new) if new else []
        consistent = [c for c in old_classes if index.renames.get(c, c) in new_classes]
        if consistent:  # classes that have the old name in 3.x and the new name in 4.x
            old_classes, new_classes = consistent, [index.renames.get(c, c) for c in consistent]
    links = [("old_doc", i) for c in old_classes[:MAX_LINKS] for i in index.member("3", c, kinds, old)] if old else []
    links += [("new_doc", i) for c in new_classes[:MAX_LINKS] for i in index.member("4", c, kinds, new)] if new else []
    return links


def _syntax_links(row: Mapping, index: DocsIndex) -> list[tuple[str, str]]:
    """Globals named in a converter rule: 3.x `yield` -> @GDScript.yield, 4.x `@export` -> the annotation."""
    links = []
    for relation, version, form in (("old_doc", "3", row["old_name"]), ("new_doc", "4", row["new_name"])):
        found: list[str] = []
        for word in dict.fromkeys(_WORD.findall(form or "")):
            if word in _SKIP or len(word) < 3:
                continue
            if index.has_class(version, word):
                found.append(f"docs:{version}:{word}.class")
                continue
            for cls in GLOBAL_CLASSES:
                hits = index.member(version, cls, ("annotation", "method"), word)
                if hits:
                    found.append(hits[0])
                    break
        links += [(relation, i) for i in found[:3]]
    return links


def _cue_words(cue: str) -> list[str]:
    return [w for w in _WORD.findall(cue) if w not in _SKIP]


def prototype_links(proto: Mapping, by_name: dict[tuple[str, str], list[str]],
                    by_old: dict[str, list[tuple[str, str]]], ids: set[str],
                    syntax_words: dict[str, list[str]] | None = None) -> list[str]:
    """api_mapping ids a prototype illustrates: its `category:old_name` references, then its cues.

    `syntax:<keyword>` names a converter rule by a word of its forms (`syntax:yield`, `syntax:setget`).
    """
    syntax_words = syntax_words or {}
    found: list[str] = []
    for ref in proto.get("mappings") or []:
        if ref in ids:
            found.append(ref)
            continue
        category, _, old = ref.partition(":")
        found += by_name.get((category, old), [])
        if category == "syntax":
            found += syntax_words.get(old, [])[:MAX_LINKS]
    for cue in proto.get("cues") or []:
        for word in _cue_words(cue):
            hits = by_old.get(word, [])
            renames = [i for i, src in hits if src in ("rename_map", "converter_rule")]
            diffs = [i for i, src in hits if src == "api_diff"]
            found += renames[:MAX_LINKS] + (diffs if len(diffs) <= 3 else []) + syntax_words.get(word, [])[:3]
    return list(dict.fromkeys(found))


def build_bridges(docs: Iterable[Mapping], mappings: list[Mapping], prototypes: list[Mapping]) -> list[dict]:
    """All bridge rows (deduplicated, sorted) for the current tables."""
    class_renames = {m["old_name"]: m["new_name"] for m in mappings
                     if m["source"] == "rename_map" and m["category"] == "class" and not m["ambiguous"]}
    index = DocsIndex(docs, class_renames)
    rows = {}
    for m in mappings:
        for relation, to_id in mapping_links(m, index):
            rows[(m["id"], relation, to_id)] = ("api_mapping", "docs_chunks")
    by_name: dict[tuple[str, str], list[str]] = defaultdict(list)
    by_old: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for m in mappings:
        if m["old_name"] is None or m["category"].startswith("csharp_"):
            continue
        by_name[(m["category"], m["old_name"])].append(m["id"])
        first = _WORD.match(m["old_name"]) if m["category"] == "syntax" else None
        key = first.group(0) if first else m["old_name"]
        if m["change_kind"] != "added":
            by_old[key].append((m["id"], m["source"]))
    syntax_words: dict[str, list[str]] = defaultdict(list)
    for m in mappings:
        if m["category"] == "syntax":
            for word in dict.fromkeys(_WORD.findall(f"{m['old_name']} {m['new_name']}")):
                if len(word) >= 3 and word not in _SKIP:
                    syntax_words[word.lstrip("@")].append(m["id"])
    ids = {m["id"] for m in mappings}
    for p in prototypes:
        for to_id in prototype_links(p, by_name, by_old, ids, syntax_words):
            rows[(p["id"], "illustrates", to_id)] = ("label_prototypes", "api_mapping")
    return [
        {"from_table": t[0], "from_id": f, "relation": r, "to_table": t[1], "to_id": to}
        for (f, r, to), t in sorted(rows.items())
    ]


def bridge_shares(con) -> dict[str, float]:
    """Share of rows of each table that take part in at least one bridge."""
    shares = {}
    for table, column in (("api_mapping", "from_id"), ("label_prototypes", "from_id"), ("docs_chunks", "to_id")):
        total, linked = con.execute(
            f"SELECT count(*), count(*) FILTER (WHERE id IN (SELECT {column} FROM bridges)) FROM {table}"
        ).fetchone()
        shares[table] = round(linked / total, 4) if total else 0.0
    return shares
