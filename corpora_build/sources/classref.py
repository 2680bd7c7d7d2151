"""The class reference XML as plain records: classes with their members and signatures.

Both the docs chunks and the API surface diff read it, so it is parsed once per source version.
3.x writes `<argument>`, 4.x `<param>`; 4.x adds annotations, operators and constructors.
"""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from corpora_build.sources.base import CLASS_PATTERNS, Source
from corpora_build.sources.files import iter_files

SECTIONS = {
    "methods": "method", "members": "property", "signals": "signal", "constants": "constant",
    "annotations": "annotation", "theme_items": "theme_item", "operators": "operator",
    "constructors": "constructor",
}


@dataclass(frozen=True)
class Member:
    kind: str                           # method|property|signal|constant|enum|annotation|theme_item|...
    name: str
    signature: str
    description: str                    # raw BBCode
    params: tuple[str, ...] = ()        # parameter types, in order
    returns: str | None = None
    extra: str | None = None            # enum of a constant, setter/getter of a property


@dataclass
class ClassDoc:
    name: str
    inherits: str | None
    brief: str
    description: str
    path: str                           # e.g. doc/classes/Node.xml
    members: list[Member] = field(default_factory=list)

    def names(self, kind: str) -> set[str]:
        return {m.name for m in self.members if m.kind == kind}


def _text(node: ET.Element | None) -> str:
    return (node.text or "").strip() if node is not None else ""


def _params(node: ET.Element) -> list[ET.Element]:
    params = node.findall("param") + node.findall("argument")
    return sorted(params, key=lambda p: int(p.get("index", 0)))


def _arg(p: ET.Element) -> str:
    text = f"{p.get('name')}: {p.get('type')}"
    return text + (f" = {p.get('default')}" if p.get("default") is not None else "")


def _member(kind: str, node: ET.Element) -> Member:
    name = node.get("name", "")
    params = _params(node)
    args = ", ".join(_arg(p) for p in params)
    ret = node.find("return")
    returns = ret.get("type") if ret is not None else None
    extra = None
    if kind in ("method", "operator"):
        quals = f" {node.get('qualifiers')}" if node.get("qualifiers") else ""
        signature = f"{returns or 'void'} {name}({args}){quals}"
    elif kind == "constructor":
        signature = f"{name}({args})"
    elif kind == "annotation":
        signature = f"{name}({args})"
    elif kind == "signal":
        signature = f"signal {name}({args})"
    elif kind == "property":
        default = f" = {node.get('default')}" if node.get("default") is not None else ""
        signature = f"var {name}: {node.get('type')}{default}"
        accessors = [a for a in (node.get("setter"), node.get("getter")) if a]
        extra = " / ".join(accessors) or None
        if extra:
            signature += f"  # setter/getter: {extra}"
    elif kind == "constant":
        extra = node.get("enum")
        signature = f"const {name} = {node.get('value')}" + (f"  # enum {extra}" if extra else "")
    else:  # theme_item
        default = f" = {node.get('default')}" if node.get("default") is not None else ""
        signature = f"theme {node.get('data_type')} {name}: {node.get('type')}{default}"
    types = tuple(p.get("type", "") for p in params)
    return Member(kind, name, signature, _text(node.find("description")) or _text(node), types, returns, extra)


def _enums(constants: list[Member]) -> list[Member]:
    groups: dict[str, list[Member]] = {}
    for c in constants:
        if c.extra:
            groups.setdefault(c.extra, []).append(c)
    enums = []
    for enum, values in groups.items():
        listing = ", ".join(f"{v.name} = {v.signature.split(' = ', 1)[1].split('  #')[0]}" for v in values)
        lines = "\n".join(f"{v.name}: {v.description}" for v in values if v.description)
        enums.append(Member("enum", enum, f"enum {enum} {{{listing}}}", lines))
    return enums


def parse_class(path: str, data: bytes) -> ClassDoc:
    root = ET.fromstring(data)
    doc = ClassDoc(root.get("name", ""), root.get("inherits"), _text(root.find("brief_description")),
                   _text(root.find("description")), path)
    for section, kind in SECTIONS.items():
        holder = root.find(section)
        if holder is not None:
            doc.members.extend(_member(kind, node) for node in holder if node.tag == kind.replace("property", "member"))
    doc.members.extend(_enums([m for m in doc.members if m.kind == "constant"]))
    return doc


@functools.lru_cache(maxsize=4)
def _read(location: str, content_hash: str) -> dict[str, ClassDoc]:
    classes = {}
    for path, data in iter_files(location, CLASS_PATTERNS):
        doc = parse_class(path, data)
        classes.setdefault(doc.name, doc)
    return classes


def read_classes(source: Source) -> dict[str, ClassDoc]:
    """Class name -> ClassDoc for a `godot3_classes` or `godot4_classes` source (cached per hash)."""
    return _read(source.location, source.content_hash)
