"""The text of one `.tscn`/`.tres` block: its header and attributes, and its properties, whose values
run over lines (strings, arrays, dictionaries) until the next property."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADER = re.compile(r"^\[(\w+)(.*)\]\s*$")
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\w+\(\s*[^)]*\)|[^\s\]]+)')
_PROPERTY = re.compile(r"([A-Za-z_][\w/:.\-]*) = ")


@dataclass
class Entry:
    name: str
    start: int          # offset of the name
    value_start: int
    end: int            # offset after the value (the end of its last line)


@dataclass
class Block:
    text: str
    tag: str | None = None
    header: tuple[int, int] | None = None
    attrs: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # name -> (raw value, start, end)
    entries: list[Entry] = field(default_factory=list)

    def value(self, entry: Entry) -> str:
        return self.text[entry.value_start:entry.end]

    def attr(self, name: str) -> str | None:
        found = self.attrs.get(name)
        return found[0].strip('"') if found else None

    def entry(self, name: str) -> Entry | None:
        return next((e for e in self.entries if e.name == name), None)

    @property
    def node_path(self) -> str | None:
        if self.tag != "node":
            return None
        parent, name = self.attr("parent"), self.attr("name") or ""
        return "." if parent is None else name if parent == "." else f"{parent}/{name}"


def parse_block(text: str) -> Block:
    """The header and the properties of one block; a value runs over lines (strings included) until
    the next property."""
    block = Block(text)
    offset, in_string = 0, False
    for line in text.split("\n"):
        if in_string:
            if block.entries:
                block.entries[-1].end = offset + len(line)
        elif (head := _HEADER.match(line)) and block.header is None and not block.entries:
            block.tag, block.header = head.group(1), (offset, offset + len(line))
            base = offset + head.start(2)
            for m in _ATTR.finditer(head.group(2)):
                block.attrs[m.group(1)] = (m.group(2), base + m.start(2), base + m.end(2))
        elif prop := _PROPERTY.match(line):
            block.entries.append(Entry(prop.group(1), offset, offset + prop.end(), offset + len(line)))
        elif line.strip() and block.entries:
            block.entries[-1].end = offset + len(line)  # a bracketed value's next line
        in_string = _ends_in_string(line, in_string)
        offset += len(line) + 1
    return block


def scan(text: str, start: int, end: int, in_string: bool = False):
    """(offset, char, inside a string literal) of each character of text[start:end], escapes skipped;
    a quote reads as outside the literal it opens or closes."""
    escaped = False
    for i in range(start, end):
        ch = text[i]
        if escaped:
            escaped = False
            continue
        if in_string and ch == "\\":
            escaped = True
            continue
        if ch == '"':
            in_string = not in_string
            yield i, ch, False
            continue
        yield i, ch, in_string


def bracket_scan(text: str, start: int, end: int):
    """(offset, char, bracket depth) of each character of text[start:end] outside string literals,
    the depth counted from `start` after the character (an opening bracket reads one deeper)."""
    depth = 0
    for i, ch, inside in scan(text, start, end):
        if inside or ch == '"':
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        yield i, ch, depth


def _ends_in_string(line: str, in_string: bool) -> bool:
    for _, ch, _ in scan(line, 0, len(line), in_string):
        if ch == '"':
            in_string = not in_string
    return in_string


def code_spans(text: str, start: int, end: int):
    """(a, b) offsets of the parts of text[start:end] outside string literals."""
    a, in_string = start, False
    for i, ch, inside in scan(text, start, end):
        if ch == '"' and not inside:
            if not in_string and i > a:
                yield a, i
            in_string = not in_string
            a = i + 1
    if not in_string and a < end:
        yield a, end


@dataclass
class Located(Block):
    line: int = 1   # the file line of the block's first line


def blocks(text: str) -> list[Located]:
    """A whole `.tscn`/`.tres` file, block by block (a header line starts a block outside strings)."""
    out, in_string = [], False
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if not in_string and _HEADER.match(line) and number > 0:
            out.append(number)
        in_string = _ends_in_string(line, in_string)
    edges = [0, *out, len(lines)]
    found = []
    for a, b in zip(edges, edges[1:]):
        block = parse_block("\n".join(lines[a:b]))
        found.append(Located(block.text, block.tag, block.header, block.attrs, block.entries, line=a + 1))
    return found
